// SPDX-License-Identifier: Apache-2.0
// snippets-run: load an ONNX model, tokenize, compile, run, check, and time it. See --help and
// docs/onnx.md.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "command_line.hpp"
#include "snippets/debug.hpp"
#include "snippets/frontend/onnx.hpp"
#include "snippets/snippets.hpp"
#include "tensor_check.hpp"
#include "test_case.hpp"

namespace {

namespace fs = std::filesystem;
using namespace snippets;
namespace ox = snippets::onnx;

const char* usage = R"(usage: snippets-run MODEL.onnx [options]

Loads an ONNX model, tokenizes it into Subgraphs, compiles each Subgraph into a JIT kernel,
runs it on the given inputs (or generated ones), checks the outputs against the reference
interpreter (double precision) and, when given, against expected outputs, and prints the
Subgraphs, the memory-traffic statistics and the time of the fused run against the unfused
one (one kernel per op) and the reference interpreter.

inputs and outputs:
  -i, --input [NAME=]FILE.pb   an input as a TensorProto file; without NAME, in the order of
                               the model's inputs (repeatable)
  -e, --expected [NAME=]FILE.pb an expected output (repeatable), checked with --rtol/--atol
  --data DIR                   inputs and expected outputs from DIR/input_<n>.pb and
                               DIR/output_<n>.pb (an ONNX test_data_set_* folder)
  --shape NAME=AxBxC           fix the shape of an input (needed for symbolic dimensions
                               when the input is generated)
  --seed N                     seed of the generated inputs (default 1): floats uniform in
                               [-1, 1], integers in [0, 10), booleans half true
  --save-outputs DIR           write the outputs as DIR/output_<n>.pb

execution:
  --threads N                  threads per kernel run (default 0: OpenMP's choice)
  --isa avx2|avx512            kernel ISA (default: the best of this host)
  --repeat N                   timed runs of each variant, fused and unfused in turns after a
                               warm-up run each (default 10; 0: run once, no timing); medians
                               and bests are printed, and the kernels' part of those runs
  --reference-only             run every step through the reference interpreter
  --rtol X, --atol X           tolerance of the checks, finite and >= 0 (default 1e-4 and
                               1e-5: |got - want| <= atol + rtol * |want|)

what to print and dump:
  --print-graph                the tokenized model, every op
  --dot FILE                   the tokenized model as Graphviz DOT
  --dump-lir SPEC              Linear IR dumps, as SNIPPETS_DUMP_LIR (docs/debugging.md), e.g.
                               "passes=InsertLoops,AssignRegisters dir=/tmp/x formats=text,dot"
  --jit-dump DIR               each kernel's machine code and disassembly (SNIPPETS_JIT_DUMP)
  -q, --quiet                  no progress lines on stderr
  -h, --help                   this text

exit status: 0 all checks passed; 1 an output differs from the reference or the expected
output; 2 usage error, or a file that cannot be read or written; 3 the model cannot be
imported, compiled or run (also when a tensor needs more memory than this machine has); 4 the
model loads but has ops that snippets cannot run (listed; they become Opaque nodes). Errors
start with their id, e.g. [snippets.tool.usage] (docs/errors.md).
)";

struct Options {
  fs::path model;
  std::vector<std::pair<std::string, fs::path>> inputs, expected;
  std::map<std::string, Shape, std::less<>> shapes;
  unsigned seed = 1;
  std::optional<fs::path> save_outputs, dot;
  int threads = 0, repeat = 10;
  std::optional<x64::Isa> isa;
  bool reference_only = false, print_graph = false, quiet = false;
  std::optional<std::string> dump_lir, jit_dump;
  tools::Tolerance tol{1e-4, 1e-5};
};

[[noreturn]] void usage_error(const std::string& what) { raise("snippets.tool.usage", what); }

std::pair<std::string, fs::path> named_file(const std::string& arg) {
  const auto eq = arg.find('=');
  if (eq == std::string::npos) return {"", arg};
  return {arg.substr(0, eq), arg.substr(eq + 1)};
}

Shape parse_shape(const std::string& name, const std::string& s) {
  std::vector<Dim> dims;
  std::size_t at = 0;
  while (at < s.size()) {
    const auto x = std::min(s.find('x', at), s.size());
    dims.push_back(tools::whole_number("--shape " + name, std::string_view(s).substr(at, x - at), 0,
                                       std::numeric_limits<Dim>::max()));
    at = x + 1;
  }
  return Shape(std::move(dims));
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(a + " needs a value");
      return argv[++i];
    };
    if (a == "-h" || a == "--help") {
      std::cout << usage;
      std::exit(0);
    } else if (a == "-i" || a == "--input") {
      o.inputs.push_back(named_file(value()));
    } else if (a == "-e" || a == "--expected") {
      o.expected.push_back(named_file(value()));
    } else if (a == "--data") {
      const fs::path dir = value();
      if (!fs::is_directory(dir)) usage_error("--data: '" + dir.string() + "' is no folder");
      for (const auto& f : tools::numbered_files(dir, "input_")) o.inputs.push_back({"", f});
      for (const auto& f : tools::numbered_files(dir, "output_")) o.expected.push_back({"", f});
    } else if (a == "--shape") {
      const auto [name, spec] = named_file(value());
      if (name.empty()) usage_error("--shape takes NAME=AxBxC");
      o.shapes[name] = parse_shape(name, spec.string());
    } else if (a == "--seed") {
      o.seed = static_cast<unsigned>(
          tools::whole_number(a, value(), 0, std::numeric_limits<unsigned>::max()));
    } else if (a == "--save-outputs") {
      o.save_outputs = value();
    } else if (a == "--threads") {
      o.threads = static_cast<int>(tools::whole_number(a, value(), 0));
    } else if (a == "--isa") {
      const std::string v = value();
      o.isa = x64::isa_from_string(v);
      if (!o.isa) usage_error("--isa takes avx2 or avx512, not " + v);
    } else if (a == "--repeat") {
      o.repeat = static_cast<int>(tools::whole_number(a, value(), 0));
    } else if (a == "--reference-only") {
      o.reference_only = true;
    } else if (a == "--rtol") {
      o.tol.rtol = tools::tolerance(a, value());
    } else if (a == "--atol") {
      o.tol.atol = tools::tolerance(a, value());
    } else if (a == "--print-graph") {
      o.print_graph = true;
    } else if (a == "--dot") {
      o.dot = value();
    } else if (a == "--dump-lir") {
      o.dump_lir = value();
    } else if (a == "--jit-dump") {
      o.jit_dump = value();
    } else if (a == "-q" || a == "--quiet") {
      o.quiet = true;
    } else if (!a.empty() && a[0] == '-') {
      usage_error("unknown option " + a);
    } else if (o.model.empty()) {
      o.model = a;
    } else {
      usage_error("more than one model given ('" + o.model.string() + "', '" + a + "')");
    }
  }
  if (o.model.empty()) usage_error("no model given");
  return o;
}

reference::Tensor generated(const ir::TensorType& t, std::mt19937& rng) {
  std::vector<double> v(static_cast<std::size_t>(t.shape.element_count()));
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int> small(0, 9), coin(0, 1);
  for (double& x : v)
    x = is_float(t.type) ? real(rng) : t.type == ElementType::boolean ? coin(rng) : small(rng);
  return reference::Tensor::from_values(t.type, t.shape, v);
}

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

/// Order statistics of some run times, in milliseconds. The median of an even count is the
/// upper one, so each statistic is one of the times: when every run of one series took no
/// longer than the same run of another, so does each statistic.
struct Stats {
  double best = 0, median = 0, worst = 0;
  explicit Stats(std::vector<double> ms) {
    if (ms.empty()) return;
    std::sort(ms.begin(), ms.end());
    best = ms.front();
    median = ms[ms.size() / 2];
    worst = ms.back();
  }
};

/// `repeat` runs of `f`, in milliseconds.
template <class F> Stats time_ms(int repeat, F f) {
  std::vector<double> ms;
  for (int r = 0; r < repeat; ++r) {
    const auto start = Clock::now();
    f();
    ms.push_back(ms_since(start));
  }
  return Stats(std::move(ms));
}

/// Timed runs of one Program. Each run is timed whole and, inside it, its kernel launches:
/// RunOptions::parallel_for wraps the executor the run would use anyway (OpenMP, with the
/// same thread count) with a clock, so the kernels are timed in the run itself, on its inputs
/// and with its threads, and their time never exceeds the run's, run by run.
class TimedRuns {
public:
  TimedRuns(const Program<>& p, const RunOptions& ro)
      : program_(p), context_(p.make_context()), options_(ro) {
    options_.parallel_for = [this, inner = ro.parallel_for](int n,
                                                            const std::function<void(int)>& body) {
      const auto start = Clock::now();
      if (inner)
        inner(n, body);
      else
        openmp_parallel_for(n, body);
      kernel_ms_ += ms_since(start);
    };
    for (const auto& step : p.steps())
      if (step.kind == Program<>::StepKind::kernel) ++kernels;
  }
  TimedRuns(const TimedRuns&) = delete; // options_ points at this object
  TimedRuns& operator=(const TimedRuns&) = delete;

  /// One run; the warm-up (the first call of every kernel, thread start-up) is not recorded.
  void run(std::span<const ConstTensorView> in, std::span<const TensorView> out, bool record) {
    kernel_ms_ = 0;
    const auto start = Clock::now();
    program_.run(context_, in, out, options_);
    const double ms = ms_since(start);
    if (!record) return;
    total_ms_.push_back(ms);
    kernels_ms_.push_back(kernel_ms_);
  }
  Stats total() const { return Stats(total_ms_); }
  Stats kernels_alone() const { return Stats(kernels_ms_); }

  int kernels = 0; // kernel steps of the Program

private:
  const Program<>& program_;
  ExecutionContext context_;
  RunOptions options_;
  double kernel_ms_ = 0;
  std::vector<double> total_ms_, kernels_ms_;
};

class Run {
public:
  explicit Run(Options o) : o_(std::move(o)) {}

  int main() {
    progress("loading " + o_.model.string());
    const ox::pb::ModelProto proto = ox::read_model(o_.model);
    const auto names = tools::runtime_inputs(proto);
    std::map<std::string, int, std::less<>> declared;
    for (const auto& in : proto.graph().input()) declared[in.name()] = tools::declared_type(in);
    ox::LoadOptions lo;
    lo.input_shapes = o_.shapes;
    for (std::size_t i = 0; i < o_.inputs.size(); ++i) {
      std::string name = o_.inputs[i].first;
      if (name.empty()) {
        if (i >= names.size())
          usage_error("input file " + std::to_string(i + 1) + " ('" + o_.inputs[i].second.string() +
                      "') is one more than the model's " + std::to_string(names.size()) +
                      " input(s); name its input with -i NAME=FILE");
        name = names[i];
      }
      if (!declared.count(name)) usage_error("the model has no input named '" + name + "'");
      const auto t = tools::as_declared(ox::read_tensor(o_.inputs[i].second), declared[name]);
      lo.input_shapes[name] = t.shape();
      lo.input_values[name] = t;
      given_[name] = t;
    }
    const auto model = ox::import_model(proto, lo);
    describe(model);
    if (!model.opaque.empty()) return cannot_run(model);
    for (std::size_t p = 0; p < model.inputs.size(); ++p) // generated inputs need a shape
      if (const auto& t = model.graph.node(model.graph.parameters()[p]).outputs[0];
          !t.shape.is_static())
        raise("snippets.onnx.dynamic_shape",
              "graph input '" + model.inputs[p] + "' has shape " + t.shape.to_string() +
                  " with symbolic dimensions; give its shape (--shape " + model.inputs[p] +
                  "=...) or its values (-i " + model.inputs[p] + "=FILE)");
    check_memory(model);
    const auto expected = read_expected(model);

    ProgramOptions<x64::Traits> po;
    po.compile.isa = o_.isa;
    po.reference_only = o_.reference_only;
    if (o_.dump_lir) po.compile.debug.dump = debug::parse_dump_options(*o_.dump_lir, "--dump-lir");
    if (o_.jit_dump) po.compile.debug.jit_dump = *o_.jit_dump;
    progress("tokenizing and compiling");
    const Program<> program(model.graph, po);
    report_program(program);

    std::vector<reference::Tensor> in;
    std::mt19937 rng(o_.seed);
    for (std::size_t p = 0; p < model.inputs.size(); ++p) {
      const auto& name = model.inputs[p];
      if (const auto it = given_.find(name); it != given_.end()) {
        in.push_back(it->second.to_tensor("input '" + name + "'"));
      } else {
        in.push_back(generated(model.graph.node(model.graph.parameters()[p]).outputs[0], rng));
        std::cout << "input '" << name << "': generated " << in.back().shape().to_string()
                  << " (seed " << o_.seed << ")\n";
      }
    }
    const RunOptions ro{.threads = o_.threads};
    progress("running");
    const auto out = program.run(in, ro);
    progress("running the reference interpreter");
    const auto ref = reference::evaluate(model.graph, in);
    bool ok = check("reference", model, out, ref);
    ok = check_expected(model, out, expected) && ok;
    if (o_.save_outputs) save(model, out);
    if (o_.repeat > 0) timing(model, program, in, ro);
    std::cout << (ok ? "all checks passed\n" : "CHECK FAILED\n");
    return ok ? 0 : 1;
  }

private:
  void progress(const std::string& what) const {
    if (!o_.quiet) std::cerr << "snippets-run: " << what << "...\n";
  }

  void describe(const ox::Model<>& m) const {
    std::cout << "model " << o_.model.filename().string() << ": opset " << m.opset;
    if (!m.producer.empty()) std::cout << ", produced by " << m.producer;
    std::cout << ", " << m.graph.size() << " nodes after import\n";
    for (std::size_t i = 0; i < m.inputs.size(); ++i)
      std::cout << "  input  " << m.inputs[i] << ": "
                << m.graph.node(m.graph.parameters()[i]).outputs[0].to_string() << '\n';
    for (const auto& f : m.folded_inputs) std::cout << "  input  " << f << ": folded (a shape)\n";
    for (std::size_t i = 0; i < m.outputs.size(); ++i) {
      const auto& r = m.graph.node(m.graph.results()[i]);
      std::cout << "  output " << m.outputs[i] << ": " << m.graph.type(r.inputs[0]).to_string()
                << '\n';
    }
  }

  int cannot_run(const ox::Model<>& m) const {
    const auto tokenized = passes::tokenize(m.graph);
    print_subgraphs(tokenized);
    debug::print_statistics(std::cout, tokenized);
    std::cout << std::defaultfloat << std::setprecision(6);
    std::cout << "cannot run: " << m.opaque.size()
              << " node(s) are outside snippets' op set and became Opaque nodes:\n";
    for (const auto& op : m.opaque)
      std::cout << "  " << op.op_type << " '" << op.node << "': " << op.reason << '\n';
    std::cout << "(a program embedding snippets runs them through ProgramOptions::opaque)\n";
    return 4;
  }

  static void print_subgraphs(const ir::Graph<x64::Traits>& g) {
    for (ir::NodeId id : g.topological_order()) {
      const auto& n = g.node(id);
      if (const auto* sg = std::get_if<ir::Subgraph<x64::Traits>>(&n.op)) {
        std::cout << "Subgraph '" << n.name << "' (" << sg->body->parameters().size() << " in, "
                  << sg->body->results().size() << " out):";
        for (const auto& op : sg->absorbed) std::cout << ' ' << op;
        std::cout << '\n';
      }
    }
  }

  void report_program(const Program<>& p) const {
    print_subgraphs(p.graph());
    debug::print_statistics(std::cout, p.graph());
    std::cout << std::defaultfloat << std::setprecision(6); // print_statistics leaves it fixed
    int kernels = 0, reference = 0;
    for (const auto& step : p.steps()) {
      if (step.kind == Program<>::StepKind::kernel) ++kernels;
      if (step.kind == Program<>::StepKind::reference) {
        ++reference;
        const auto& n = p.graph().node(step.node);
        std::cout << "reference step: " << n.describe()
                  << (step.note.empty() ? "" : " (" + step.note + ")") << '\n';
      }
    }
    std::cout << p.steps().size() << " steps: " << kernels << " JIT kernel(s), " << reference
              << " on the reference path; intermediate memory " << p.arena_bytes() << " B\n";
    if (o_.print_graph) std::cout << ir::to_string(p.graph()) << '\n';
    if (o_.dot) {
      std::ofstream dot(*o_.dot);
      dot << debug::to_dot(p.graph());
      dot.close();
      if (!dot)
        raise("snippets.tool.write_failed", "--dot: cannot write '" + o_.dot->string() + "'");
      std::cout << "wrote " << o_.dot->string() << '\n';
    }
  }

  /// A mismatch's message says what differs (the shape, the type, or the largest error and
  /// where); an error figure is printed apart only for a match.
  static void print_check(const std::string& output, const std::string& against,
                          const tools::CheckResult& r) {
    std::cout << "output '" << output << "' vs " << against << ": ";
    if (r.ok)
      std::cout << "ok (max abs error " << r.max_abs_error << ")\n";
    else
      std::cout << "MISMATCH, " << r.message << '\n';
  }

  bool check(const std::string& against, const ox::Model<>& m,
             const std::vector<reference::Tensor>& out,
             const std::vector<reference::Tensor>& want) {
    bool ok = true;
    for (std::size_t i = 0; i < out.size(); ++i) {
      const auto r = tools::check_tensor(out[i], want[i], o_.tol);
      print_check(m.outputs[i], against, r);
      ok = ok && r.ok;
    }
    return ok;
  }

  /// An expected output: the index of the model output and the tensor.
  struct Expected {
    std::size_t output;
    fs::path file;
    ox::HostTensor tensor;
  };

  /// The -e files, matched to the model's outputs (by name, else in order) and read before
  /// anything is compiled.
  std::vector<Expected> read_expected(const ox::Model<>& m) const {
    std::vector<Expected> out;
    for (std::size_t i = 0; i < o_.expected.size(); ++i) {
      const auto& [given, file] = o_.expected[i];
      if (given.empty() && i >= m.outputs.size())
        usage_error("expected file " + std::to_string(i + 1) + " ('" + file.string() +
                    "') is one more than the model's " + std::to_string(m.outputs.size()) +
                    " output(s); name its output with -e NAME=FILE");
      const std::string name = given.empty() ? m.outputs[i] : given;
      const auto at =
          std::size_t(std::find(m.outputs.begin(), m.outputs.end(), name) - m.outputs.begin());
      if (at >= m.outputs.size()) {
        std::string names;
        for (const auto& o : m.outputs) names += (names.empty() ? "'" : ", '") + o + "'";
        usage_error("-e " + name + "=" + file.string() + ": the model has no output '" + name +
                    "' (its outputs: " + names + ")");
      }
      const auto& r = m.graph.node(m.graph.results()[at]);
      const int declared = ox::data_type_of(m.graph.type(r.inputs[0]).type);
      out.push_back({at, file, tools::as_declared(ox::read_tensor(file), declared)});
    }
    return out;
  }

  bool check_expected(const ox::Model<>& m, const std::vector<reference::Tensor>& out,
                      const std::vector<Expected>& expected) {
    bool ok = true;
    for (const auto& e : expected) {
      const auto r = tools::check_tensor(out[e.output], e.tensor, o_.tol);
      print_check(m.outputs[e.output], e.file.string(), r);
      ok = ok && r.ok;
    }
    return ok;
  }

  void save(const ox::Model<>& m, const std::vector<reference::Tensor>& out) const {
    std::error_code ec;
    fs::create_directories(*o_.save_outputs, ec);
    if (ec)
      raise("snippets.tool.write_failed", "--save-outputs: cannot create the folder '" +
                                              o_.save_outputs->string() + "': " + ec.message());
    for (std::size_t i = 0; i < out.size(); ++i) {
      const fs::path f = *o_.save_outputs / ("output_" + std::to_string(i) + ".pb");
      ox::write_tensor(f, out[i], m.outputs[i]);
      std::cout << "wrote " << f.string() << '\n';
    }
  }

  /// Refuses, before anything is allocated, a model with a tensor this machine cannot hold: the
  /// run would end in std::bad_alloc (or the kernel's OOM killer) after a long compile. The
  /// reference interpreter holds each value as doubles, and the inputs and outputs live
  /// together, so each value and their sum must fit in the physical memory, at 8 bytes an
  /// element.
  void check_memory(const ox::Model<>& m) const {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || page <= 0) return; // unknown: leave it to the allocator
    const std::uint64_t memory = std::uint64_t(pages) * std::uint64_t(page);
    const std::uint64_t elements = memory / sizeof(double);
    auto refuse = [&](const std::string& what, std::uint64_t n) {
      raise("snippets.tool.out_of_memory",
            what + " holds " + std::to_string(n) + " elements, " +
                std::to_string(n / (1u << 20) * sizeof(double)) +
                " MiB as the reference interpreter's doubles; this machine has " +
                std::to_string(memory >> 20) + " MiB of memory (give smaller shapes with --shape)");
    };
    std::uint64_t io = 0;
    for (ir::NodeId id : m.graph.topological_order()) {
      const auto& n = m.graph.node(id);
      const bool parameter = std::holds_alternative<ir::Parameter>(n.op);
      for (const auto& t : n.outputs) {
        const auto count = std::uint64_t(t.shape.element_count());
        if (count > elements) refuse("value '" + n.name + "' " + t.to_string(), count);
        if (parameter) io += count;
      }
      if (std::holds_alternative<ir::Result>(n.op))
        io += std::uint64_t(m.graph.type(n.inputs[0]).shape.element_count());
      if (io > elements) refuse("the inputs and outputs together", io);
    }
  }

  /// Times the fused Program against the unfused one (one kernel per op) and the reference
  /// interpreter. The fused and unfused runs take turns, so both see the same load on the
  /// machine; each run also times its kernels (TimedRuns), so "kernels alone" is a part of the
  /// run time it sits next to.
  void timing(const ox::Model<>& m, const Program<>& fused,
              const std::vector<reference::Tensor>& in, const RunOptions& ro) const {
    std::vector<ConstTensorView> views;
    for (const auto& t : in) views.push_back({t.type(), t.shape(), t.data()});
    std::vector<reference::Tensor> outs;
    std::vector<TensorView> out_views;
    for (ir::NodeId r : m.graph.results()) {
      const auto& t = m.graph.type(m.graph.node(r).inputs[0]);
      outs.emplace_back(t.type, t.shape);
    }
    for (auto& t : outs) out_views.push_back({t.type(), t.shape(), t.data()});
    ProgramOptions<x64::Traits> unfused_opt;
    unfused_opt.compile.isa = o_.isa;
    unfused_opt.tokenize.fuse = false;
    progress("compiling the unfused variant (one kernel per op)");
    const Program<> unfused(m.graph, unfused_opt);
    TimedRuns f(fused, ro), u(unfused, ro);
    progress("timing fused and unfused, in turns (" + std::to_string(o_.repeat) + " runs each)");
    f.run(views, out_views, false); // warm-up
    u.run(views, out_views, false);
    const long preempted_before = involuntary_switches();
    for (int r = 0; r < o_.repeat; ++r) {
      f.run(views, out_views, true);
      u.run(views, out_views, true);
    }
    const long preempted = involuntary_switches() - preempted_before;
    const int ref_runs = std::max(1, std::min(o_.repeat, 3));
    progress("timing the reference interpreter (" + std::to_string(ref_runs) + " runs)");
    const Stats ref = time_ms(ref_runs, [&] { (void)reference::evaluate(m.graph, in); });

    const Stats ft = f.total(), ut = u.total(), fk = f.kernels_alone(), uk = u.kernels_alone();
    std::cout.setf(std::ios::fixed);
    std::cout.precision(3);
    std::cout << "time (median / best of " << o_.repeat
              << " runs, fused and unfused in turns): fused " << ft.median << " / " << ft.best
              << " ms, unfused (one kernel per op) " << ut.median << " / " << ut.best
              << " ms, reference interpreter " << ref.median << " ms (median of " << ref_runs
              << ")\n";
    // per run, the kernels' time is part of the run's: so are their medians (Stats)
    auto share = [](const Stats& kernels, const Stats& total) {
      return total.median > 0
                 ? " (" + std::to_string(int(std::lround(100 * kernels.median / total.median))) +
                       "% of the run)"
                 : std::string();
    };
    std::cout << "JIT kernels alone, within those runs (median / best): fused " << fk.median
              << " / " << fk.best << " ms in " << f.kernels << " kernel(s)" << share(fk, ft)
              << ", unfused " << uk.median << " / " << uk.best << " ms in " << u.kernels
              << " kernel(s)" << share(uk, ut);
    if (fk.median > 0) std::cout << std::setprecision(2) << ", " << uk.median / fk.median << "x";
    std::cout << '\n';
    std::cout.precision(2);
    std::cout << "fused is " << ut.median / ft.median << "x the speed of unfused, "
              << ref.median / ft.median << "x the speed of the reference interpreter (medians)\n";
    std::cout.precision(3);
    explain_spread({{"fused", ft}, {"unfused", ut}}, preempted);
    std::cout.unsetf(std::ios::fixed);
    std::cout.precision(6);
  }

  /// Times this process's threads were preempted so far (involuntary context switches).
  static long involuntary_switches() {
    rusage u{};
    return getrusage(RUSAGE_SELF, &u) == 0 ? u.ru_nivcsw : 0;
  }

  /// Says why run times spread over milliseconds, when they do: on a machine whose processors
  /// other programs keep busy, a run with several OpenMP threads waits at each kernel's end for
  /// a thread the system has not scheduled, and the waiting threads spin (OMP_WAIT_POLICY), so
  /// the run loses whole time slices (a few ms each). Which runs it hits depends on where the
  /// system has put the threads at the time, so it comes and goes over seconds.
  static void explain_spread(std::initializer_list<std::pair<const char*, Stats>> series,
                             long preempted) {
    for (const auto& [what, s] : series) {
      const bool outliers = s.worst - s.best >= 1.0 && s.worst > 3 * s.best;
      const bool most_runs = s.median - s.best >= 1.0 && s.median > 2 * s.best;
      if (!outliers && !most_runs) continue;
      std::cout << "note: the " << what << " runs took from " << s.best << " to " << s.worst
                << " ms (median " << s.median << "), and the system preempted this program's "
                << "threads " << preempted << " time(s) while they ran. With other programs busy "
                << "on this machine's " << std::thread::hardware_concurrency()
                << " processor(s), a run whose OpenMP threads wait for a thread the system has "
                   "not scheduled loses whole time slices (OpenMP threads spin while they wait); "
                   "fused and unfused ran in turns, under the same load. --threads 1 or "
                   "OMP_WAIT_POLICY=passive give steadier times.\n";
      return;
    }
  }

  Options o_;
  std::map<std::string, ox::HostTensor> given_;
};

/// The exit status of an error (see the usage text): 2 for the command line and for files that
/// cannot be read or written, 3 for everything else.
int exit_status(const std::string& id) {
  for (const char* file_or_usage :
       {"snippets.tool.usage", "snippets.tool.write_failed", "snippets.onnx.file",
        "snippets.onnx.not_a_file", "snippets.onnx.file_too_large", "snippets.debug.dump_failed"})
    if (id == file_or_usage) return 2;
  return 3;
}

int report(const Error& e) {
  std::cerr << "snippets-run: " << e.what() << '\n';
  if (e.id() == "snippets.tool.usage") std::cerr << "(see snippets-run --help)\n";
  return exit_status(e.id());
}

} // namespace

int main(int argc, char** argv) {
  try {
    return Run(parse(argc, argv)).main();
  } catch (const Error& e) {
    return report(e);
  } catch (const std::bad_alloc&) {
    return report(Error("snippets.tool.out_of_memory",
                        "an allocation failed: the model's tensors do not fit in this machine's "
                        "memory (give smaller shapes with --shape)"));
  } catch (const std::exception& e) {
    std::cerr << "snippets-run: " << e.what() << '\n';
    return 3;
  }
}
