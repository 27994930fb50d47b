// snippets-run: load an ONNX model, tokenize, compile, run, check, and time it. See --help and
// docs/onnx.md.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

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
  --threads N                  threads per kernel run (default: OpenMP's choice)
  --isa avx2|avx512            kernel ISA (default: the best of this host)
  --repeat N                   timed runs of each variant (default 10; 0: run once, no timing)
  --reference-only             run every step through the reference interpreter
  --rtol X, --atol X           tolerance of the checks (default 1e-4 and 1e-5:
                               |got - want| <= atol + rtol * |want|)

what to print and dump:
  --print-graph                the tokenized model, every op
  --dot FILE                   the tokenized model as Graphviz DOT
  --dump-lir SPEC              Linear IR dumps, as SNIPPETS_DUMP_LIR (docs/debugging.md), e.g.
                               "passes=InsertLoops,AssignRegisters dir=/tmp/x formats=text,dot"
  --jit-dump DIR               each kernel's machine code and disassembly (SNIPPETS_JIT_DUMP)
  -q, --quiet                  no progress lines on stderr
  -h, --help                   this text

exit status: 0 all checks passed; 1 an output differs from the reference or the expected
output; 2 usage error or unreadable file; 3 the model cannot be imported or compiled; 4 the
model loads but has ops that snippets cannot run (listed; they become Opaque nodes).
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

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::pair<std::string, fs::path> named_file(const std::string& arg) {
  const auto eq = arg.find('=');
  if (eq == std::string::npos) return {"", arg};
  return {arg.substr(0, eq), arg.substr(eq + 1)};
}

Shape parse_shape(const std::string& s) {
  std::vector<Dim> dims;
  std::size_t at = 0;
  while (at < s.size()) {
    const auto x = std::min(s.find('x', at), s.size());
    dims.push_back(std::stoll(s.substr(at, x - at)));
    at = x + 1;
  }
  return Shape(std::move(dims));
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw UsageError(a + " needs a value");
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
      if (!fs::is_directory(dir)) throw UsageError("--data: '" + dir.string() + "' is no folder");
      for (const auto& f : tools::numbered_files(dir, "input_")) o.inputs.push_back({"", f});
      for (const auto& f : tools::numbered_files(dir, "output_")) o.expected.push_back({"", f});
    } else if (a == "--shape") {
      const auto [name, spec] = named_file(value());
      if (name.empty()) throw UsageError("--shape takes NAME=AxBxC");
      try {
        o.shapes[name] = parse_shape(spec.string());
      } catch (const std::exception&) {
        throw UsageError("--shape " + name + ": '" + spec.string() + "' is not AxBxC");
      }
    } else if (a == "--seed") {
      o.seed = static_cast<unsigned>(std::stoul(value()));
    } else if (a == "--save-outputs") {
      o.save_outputs = value();
    } else if (a == "--threads") {
      o.threads = std::stoi(value());
    } else if (a == "--isa") {
      const std::string v = value();
      o.isa = x64::isa_from_string(v);
      if (!o.isa) throw UsageError("--isa takes avx2 or avx512, not " + v);
    } else if (a == "--repeat") {
      o.repeat = std::max(0, std::stoi(value()));
    } else if (a == "--reference-only") {
      o.reference_only = true;
    } else if (a == "--rtol") {
      o.tol.rtol = std::stod(value());
    } else if (a == "--atol") {
      o.tol.atol = std::stod(value());
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
      throw UsageError("unknown option " + a);
    } else if (o.model.empty()) {
      o.model = a;
    } else {
      throw UsageError("more than one model given ('" + o.model.string() + "', '" + a + "')");
    }
  }
  if (o.model.empty()) throw UsageError("no model given");
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

/// Best and median of `repeat` runs of `f`, in milliseconds.
template <class F> std::pair<double, double> time_ms(int repeat, F f) {
  std::vector<double> ms;
  for (int r = 0; r < repeat; ++r) {
    const auto start = std::chrono::steady_clock::now();
    f();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                     .count());
  }
  std::sort(ms.begin(), ms.end());
  return {ms.front(), ms[ms.size() / 2]};
}

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
          throw UsageError("input file " + std::to_string(i) + " is one more than the model's " +
                           std::to_string(names.size()) + " inputs");
        name = names[i];
      }
      if (!declared.count(name)) throw UsageError("the model has no input named '" + name + "'");
      const auto t = tools::as_declared(ox::read_tensor(o_.inputs[i].second), declared[name]);
      lo.input_shapes[name] = t.shape();
      lo.input_values[name] = t;
      given_[name] = t;
    }
    const auto model = ox::import_model(proto, lo);
    describe(model);
    if (!model.opaque.empty()) return cannot_run(model);

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
    ok = check_expected(model, out) && ok;
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
      std::ofstream(*o_.dot) << debug::to_dot(p.graph());
      std::cout << "wrote " << o_.dot->string() << '\n';
    }
  }

  bool check(const std::string& against, const ox::Model<>& m,
             const std::vector<reference::Tensor>& out,
             const std::vector<reference::Tensor>& want) {
    bool ok = true;
    for (std::size_t i = 0; i < out.size(); ++i) {
      const auto r = tools::check_tensor(out[i], want[i], o_.tol);
      std::cout << "output '" << m.outputs[i] << "' vs " << against << ": "
                << (r.ok ? "ok" : "MISMATCH, " + r.message) << " (max abs error " << r.max_abs_error
                << ")\n";
      ok = ok && r.ok;
    }
    return ok;
  }

  bool check_expected(const ox::Model<>& m, const std::vector<reference::Tensor>& out) {
    bool ok = true;
    for (std::size_t i = 0; i < o_.expected.size(); ++i) {
      std::string name = o_.expected[i].first.empty() && i < m.outputs.size()
                             ? m.outputs[i]
                             : o_.expected[i].first;
      const auto at = std::find(m.outputs.begin(), m.outputs.end(), name) - m.outputs.begin();
      if (std::size_t(at) >= m.outputs.size())
        throw UsageError("expected output '" + name + "' is not an output of the model");
      const auto declared = ox::data_type_of(out[std::size_t(at)].type());
      const auto want = tools::as_declared(ox::read_tensor(o_.expected[i].second), declared);
      const auto r = tools::check_tensor(out[std::size_t(at)], want, o_.tol);
      std::cout << "output '" << name << "' vs " << o_.expected[i].second.string() << ": "
                << (r.ok ? "ok" : "MISMATCH, " + r.message) << " (max abs error " << r.max_abs_error
                << ")\n";
      ok = ok && r.ok;
    }
    return ok;
  }

  void save(const ox::Model<>& m, const std::vector<reference::Tensor>& out) const {
    fs::create_directories(*o_.save_outputs);
    for (std::size_t i = 0; i < out.size(); ++i) {
      const fs::path f = *o_.save_outputs / ("output_" + std::to_string(i) + ".pb");
      ox::write_tensor(f, out[i], m.outputs[i]);
      std::cout << "wrote " << f.string() << '\n';
    }
  }

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
    auto time_program = [&](const Program<>& p, const char* what) {
      progress(std::string("timing ") + what + " (" + std::to_string(o_.repeat) + " runs)");
      ExecutionContext ctx = p.make_context();
      p.run(ctx, views, out_views, ro); // warm-up
      return time_ms(o_.repeat, [&] { p.run(ctx, views, out_views, ro); });
    };
    const auto f = time_program(fused, "fused");
    ProgramOptions<x64::Traits> unfused_opt;
    unfused_opt.compile.isa = o_.isa;
    unfused_opt.tokenize.fuse = false;
    const Program<> unfused(m.graph, unfused_opt);
    const auto u = time_program(unfused, "unfused");
    const int ref_runs = std::max(1, std::min(o_.repeat, 3));
    progress("timing the reference interpreter (" + std::to_string(ref_runs) + " runs)");
    const auto r = time_ms(ref_runs, [&] { (void)reference::evaluate(m.graph, in); });
    const auto fk = kernel_ms(fused, ro), uk = kernel_ms(unfused, ro);
    std::cout.setf(std::ios::fixed);
    std::cout.precision(3);
    std::cout << "JIT kernels alone (best of " << o_.repeat << " each, summed): fused " << fk.first
              << " ms in " << fk.second << " kernel(s), unfused " << uk.first << " ms in "
              << uk.second << " kernel(s)";
    if (fk.first > 0) std::cout << std::setprecision(2) << ", " << uk.first / fk.first << "x";
    std::cout << std::setprecision(3) << '\n';
    std::cout << "time (best / median of " << o_.repeat << " runs): fused " << f.first << " / "
              << f.second << " ms, unfused (one kernel per op) " << u.first << " / " << u.second
              << " ms, reference interpreter " << r.first << " ms (best of " << ref_runs << ")\n";
    std::cout.precision(2);
    std::cout << "fused is " << u.first / f.first << "x the speed of unfused, " << r.first / f.first
              << "x the speed of the reference interpreter\n";
    std::cout.unsetf(std::ios::fixed);
    std::cout.precision(6);
  }

  /// The kernel steps of `p` timed one by one on buffers of 0.5 (the reference steps, such as
  /// MatMul, are the same in every variant): {summed best times in ms, kernel count}.
  std::pair<double, int> kernel_ms(const Program<>& p, const RunOptions& ro) const {
    double total = 0;
    int count = 0;
    for (const auto& step : p.steps()) {
      if (!step.kernel) continue;
      const KernelSignature& sig = step.kernel->signature();
      std::vector<reference::Tensor> bufs;
      std::vector<ConstTensorView> in;
      std::vector<TensorView> out;
      for (const auto* list : {&sig.inputs, &sig.outputs})
        for (const auto& t : *list)
          bufs.push_back(reference::Tensor::from_values(t.type, t.shape, {0.5}));
      for (std::size_t i = 0; i < bufs.size(); ++i) {
        auto& b = bufs[i];
        if (i < sig.inputs.size())
          in.push_back({b.type(), b.shape(), b.data()});
        else
          out.push_back({b.type(), b.shape(), b.data()});
      }
      step.kernel->run(in, out, ro); // warm-up
      total += time_ms(o_.repeat, [&] { step.kernel->run(in, out, ro); }).first;
      ++count;
    }
    return {total, count};
  }

  Options o_;
  std::map<std::string, ox::HostTensor> given_;
};

} // namespace

int main(int argc, char** argv) {
  Options o;
  try {
    o = parse(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "snippets-run: " << e.what() << "\n(see snippets-run --help)\n";
    return 2;
  }
  try {
    return Run(o).main();
  } catch (const UsageError& e) {
    std::cerr << "snippets-run: " << e.what() << '\n';
    return 2;
  } catch (const Error& e) {
    std::cerr << "snippets-run: " << e.what() << '\n';
    return e.id() == "snippets.onnx.file" ? 2 : 3;
  } catch (const std::exception& e) {
    std::cerr << "snippets-run: " << e.what() << '\n';
    return 3;
  }
}
