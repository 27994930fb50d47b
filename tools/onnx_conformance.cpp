// SPDX-License-Identifier: Apache-2.0
// snippets-onnx-conformance: runs ONNX node test cases through snippets (import, tokenize, JIT,
// run) and compares with the stored outputs. See --help and docs/onnx.md.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "command_line.hpp"
#include "snippets/frontend/onnx.hpp"
#include "snippets/snippets.hpp"
#include "tensor_check.hpp"
#include "test_case.hpp"

namespace {

namespace fs = std::filesystem;
using namespace snippets;
namespace ox = snippets::onnx;

constexpr const char* default_dir = "/usr/share/libonnx-testdata/data/node";

const char* usage = R"(usage: snippets-onnx-conformance [options] [DIR...]

Runs every case under DIR (default /usr/share/libonnx-testdata/data/node, the ONNX node tests
of Debian's libonnx-testdata). A case is a folder with model.onnx and test_data_set_*/ holding
input_<n>.pb and output_<n>.pb (TensorProto files); a DIR that itself holds model.onnx is one
case, and a folder under DIR without model.onnx fails as a malformed case. Each case is
imported, tokenized, compiled with JIT and run on the stored inputs, and its outputs are
compared with the stored ones: |got - expected| <= atol + rtol * |expected| for floats,
equality for integers and booleans, NaN matching NaN.

One line per case:
  passed       NAME  [k kernel(s), r reference step(s)]
  failed       NAME  what went wrong (the max error for wrong outputs)
  unsupported  NAME  the ops, types or attributes snippets does not have
then a summary and the line "N passed, N failed, N unsupported".

options:
  --rtol X          relative tolerance (default 1e-5)
  --atol X          absolute tolerance (default 1e-6)
  --isa avx2|avx512 kernel ISA (default: the best of this host)
  --threads N       threads per kernel run (default 1; 0: OpenMP's choice)
  --filter TEXT     only cases whose name contains TEXT (repeatable: any of them)
  --failed-only     print only failed cases (the summary is always printed)
  --reference-only  run every step through the reference interpreter (no JIT)
  --min-passed N    fail unless at least N cases pass (pins the count: a case that falls
                    from passed to unsupported fails the run)
  --max-unsupported N  fail when more than N cases are unsupported
  --list-ops        print the ONNX ops the importer maps and exit
  -h, --help        this text

exit status: 0 when no case failed (and the pinned counts hold), 1 when any case failed or a
pinned count does not hold, 2 for a usage error ([snippets.tool.usage]).
)";

struct Options {
  tools::Tolerance tol;
  std::optional<x64::Isa> isa;
  int threads = 1;
  std::vector<std::string> filters;
  bool failed_only = false, reference_only = false;
  std::optional<long long> min_passed, max_unsupported;
  std::vector<fs::path> dirs;
};

enum class Verdict { passed, failed, unsupported };

struct Outcome {
  Verdict verdict = Verdict::passed;
  std::string detail;
  int kernels = 0, reference_steps = 0, fused_subgraphs = 0; // fused: Subgraphs of >= 2 ops
  std::vector<std::string> missing_ops;
};

bool unsupported_id(const std::string& id) {
  static const std::set<std::string> ids{
      "snippets.onnx.unsupported_op",        "snippets.onnx.unsupported_type",
      "snippets.onnx.unsupported_attribute", "snippets.onnx.not_constant",
      "snippets.onnx.dynamic_shape",         "snippets.graph.unsupported_type",
      "snippets.onnx.unsupported_version"};
  return ids.count(id) > 0;
}

bool is_case(const fs::path& p) { return fs::exists(p / "model.onnx"); }

Outcome run_case(const fs::path& dir, const Options& opt) {
  Outcome o;
  auto fail = [&](std::string why) {
    o.verdict = Verdict::failed;
    o.detail = std::move(why);
    return o;
  };
  if (!is_case(dir))
    return fail("no model.onnx: not a test case (each folder under DIR must hold model.onnx and "
                "test_data_set_*/)");
  try {
    ox::pb::ModelProto proto = ox::read_model(dir / "model.onnx");
    o.missing_ops = ox::unsupported_ops(proto);
    if (!o.missing_ops.empty()) {
      o.verdict = Verdict::unsupported;
      for (const auto& op : o.missing_ops) o.detail += (o.detail.empty() ? "ops: " : " ") + op;
      return o;
    }
    for (const auto* list : {&proto.graph().input(), &proto.graph().output()})
      for (const auto& v : *list)
        if (!v.type().has_tensor_type()) {
          o.verdict = Verdict::unsupported;
          o.detail = "graph input or output '" + v.name() +
                     "' is not a tensor (sequence, map or "
                     "optional)";
          return o;
        }
    const auto sets = tools::read_data_sets(dir);
    if (sets.empty()) return fail("no test_data_set_* folder");
    const auto names = tools::runtime_inputs(proto);
    std::map<std::string, ox::pb::ValueInfoProto*> graph_inputs;
    for (auto& in : *proto.mutable_graph()->mutable_input()) graph_inputs[in.name()] = &in;
    for (const auto& raw : sets) {
      if (raw.inputs.size() != names.size())
        return fail("the data set has " + std::to_string(raw.inputs.size()) +
                    " inputs but the model " + std::to_string(names.size()));
      if (raw.outputs.size() != std::size_t(proto.graph().output_size()))
        return fail("the data set has " + std::to_string(raw.outputs.size()) +
                    " outputs but the model " + std::to_string(proto.graph().output_size()));
      tools::DataSet set;
      ox::LoadOptions lo;
      lo.allow_opaque = false;
      for (std::size_t i = 0; i < names.size(); ++i) {
        ox::pb::ValueInfoProto& declared = *graph_inputs.at(names[i]);
        set.inputs.push_back(tools::as_declared(raw.inputs[i], tools::declared_type(declared)));
        // the stored inputs fix the shapes: the expected outputs were computed from them (a few
        // cases declare other static shapes than their data has)
        auto* shape = declared.mutable_type()->mutable_tensor_type()->mutable_shape();
        shape->clear_dim();
        for (auto d : set.inputs[i].dims) shape->add_dim()->set_dim_value(d);
        lo.input_values[names[i]] = set.inputs[i];
      }
      for (int i = 0; i < proto.graph().output_size(); ++i)
        set.outputs.push_back(tools::as_declared(raw.outputs[std::size_t(i)],
                                                 tools::declared_type(proto.graph().output(i))));
      auto model = ox::import_model(proto, lo);
      ProgramOptions<x64::Traits> po;
      po.compile.isa = opt.isa;
      po.reference_only = opt.reference_only;
      const Program<> program(model.graph, po);
      o.kernels = o.reference_steps = o.fused_subgraphs = 0;
      for (const auto& step : program.steps()) {
        if (step.kind == Program<>::StepKind::kernel) ++o.kernels;
        if (step.kind == Program<>::StepKind::reference) ++o.reference_steps;
        const auto* sg =
            std::get_if<ir::Subgraph<x64::Traits>>(&program.graph().node(step.node).op);
        if (sg && sg->absorbed.size() >= 2) ++o.fused_subgraphs;
      }
      std::vector<reference::Tensor> in;
      for (const auto& name : model.inputs) {
        const auto at = std::find(names.begin(), names.end(), name) - names.begin();
        in.push_back(set.inputs[std::size_t(at)].to_tensor("input '" + name + "'"));
      }
      const auto out = program.run(in, RunOptions{.threads = opt.threads});
      for (std::size_t i = 0; i < out.size(); ++i) {
        const auto r = tools::check_tensor(out[i], set.outputs[i], opt.tol);
        if (!r.ok) return fail("output '" + model.outputs[i] + "': " + r.message);
      }
    }
  } catch (const Error& e) {
    if (unsupported_id(e.id())) {
      o.verdict = Verdict::unsupported;
      o.detail = e.what();
      return o;
    }
    return fail(e.what());
  } catch (const std::exception& e) {
    return fail(std::string("exception: ") + e.what());
  }
  return o;
}

bool parse(int argc, char** argv, Options& opt) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) raise("snippets.tool.usage", a + " needs a value");
      return argv[++i];
    };
    if (a == "-h" || a == "--help") {
      std::cout << usage;
      std::exit(0);
    } else if (a == "--list-ops") {
      for (const auto& op : ox::supported_ops()) std::cout << op << '\n';
      std::exit(0);
    } else if (a == "--rtol") {
      opt.tol.rtol = tools::tolerance(a, value());
    } else if (a == "--atol") {
      opt.tol.atol = tools::tolerance(a, value());
    } else if (a == "--isa") {
      const std::string v = value();
      opt.isa = x64::isa_from_string(v);
      if (!opt.isa) raise("snippets.tool.usage", "--isa takes avx2 or avx512, not " + v);
    } else if (a == "--threads") {
      opt.threads = static_cast<int>(tools::whole_number(a, value(), 0));
    } else if (a == "--filter") {
      opt.filters.push_back(value());
    } else if (a == "--min-passed") {
      opt.min_passed = tools::whole_number(a, value(), 0);
    } else if (a == "--max-unsupported") {
      opt.max_unsupported = tools::whole_number(a, value(), 0);
    } else if (a == "--failed-only") {
      opt.failed_only = true;
    } else if (a == "--reference-only") {
      opt.reference_only = true;
    } else if (!a.empty() && a[0] == '-') {
      raise("snippets.tool.usage", "unknown option " + a);
    } else {
      opt.dirs.emplace_back(a);
    }
  }
  if (opt.dirs.empty()) opt.dirs.emplace_back(default_dir);
  return true;
}

} // namespace

int main(int argc, char** argv) {
  Options opt;
  try {
    parse(argc, argv, opt);
    for (const auto& d : opt.dirs)
      if (!fs::is_directory(d)) raise("snippets.tool.usage", "'" + d.string() + "' is no folder");
  } catch (const Error& e) {
    std::cerr << "snippets-onnx-conformance: " << e.what() << "\n(see --help)\n";
    return 2;
  }
  // every folder under DIR is a case; one without model.onnx fails as malformed (a DIR with no
  // folders at all is such a case itself), so a broken copy of the suite cannot pass by
  // running fewer cases
  std::vector<fs::path> cases;
  for (const auto& d : opt.dirs) {
    const std::size_t before = cases.size();
    if (!is_case(d))
      for (const auto& e : fs::directory_iterator(d))
        if (e.is_directory()) cases.push_back(e.path());
    if (cases.size() == before) cases.push_back(d);
  }
  std::sort(cases.begin(), cases.end());
  std::erase_if(cases, [&](const fs::path& p) {
    if (opt.filters.empty()) return false;
    const std::string name = p.filename().string();
    for (const auto& f : opt.filters)
      if (name.find(f) != std::string::npos) return false;
    return true;
  });

  const auto start = std::chrono::steady_clock::now();
  int passed = 0, failed = 0, unsupported = 0, jit_only = 0, mixed = 0, reference_only = 0;
  int expanded = 0, expanded_fused = 0;
  std::map<std::string, int> missing; // op -> cases
  std::map<std::string, int> other_reasons;
  for (const auto& c : cases) {
    const std::string name = c.filename().string();
    const Outcome o = run_case(c, opt);
    const bool print = !opt.failed_only || o.verdict == Verdict::failed;
    switch (o.verdict) {
    case Verdict::passed: {
      ++passed;
      if (o.kernels > 0 && o.reference_steps == 0)
        ++jit_only;
      else if (o.kernels > 0)
        ++mixed;
      else
        ++reference_only;
      if (name.ends_with("_expanded")) {
        ++expanded;
        if (o.fused_subgraphs > 0) ++expanded_fused;
      }
      if (print)
        std::cout << "passed       " << name << "  [" << o.kernels << " kernel(s), "
                  << o.reference_steps << " reference step(s)]\n";
      break;
    }
    case Verdict::failed:
      ++failed;
      if (print) std::cout << "failed       " << name << "  " << o.detail << '\n';
      break;
    case Verdict::unsupported:
      ++unsupported;
      for (const auto& op : o.missing_ops) ++missing[op];
      if (const auto at = o.detail.find("ONNX op ");
          o.missing_ops.empty() && at != std::string::npos) {
        const auto from = at + 8;
        ++missing[o.detail.substr(from, o.detail.find(' ', from) - from) + " (run-time inputs)"];
      } else if (o.missing_ops.empty()) {
        // the id names the reason: unsupported_type, unsupported_attribute, ...
        const auto close = o.detail.find(']');
        ++other_reasons[o.detail.starts_with("[") ? o.detail.substr(1, close - 1)
                                                  : "sequence or optional graph values"];
      }
      if (print) std::cout << "unsupported  " << name << "  " << o.detail << '\n';
      break;
    }
    std::cout.flush();
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::cout << "\n" << cases.size() << " cases in " << std::fixed;
  std::cout.precision(1);
  std::cout << seconds << " s\n";
  std::cout << "passed cases: " << jit_only << " ran only JIT kernels, " << mixed
            << " JIT kernels and reference steps, " << reference_only
            << " reference steps only (no fusable op, or kernels declined for this type)\n";
  std::cout << "_expanded cases passed: " << expanded << ", " << expanded_fused
            << " of them with a fused Subgraph of 2 or more ops\n";
  if (!other_reasons.empty()) {
    std::cout << "unsupported for other reasons than ops:";
    for (const auto& [id, n] : other_reasons) std::cout << ' ' << id << " (" << n << ")";
    std::cout << '\n';
  }
  if (!missing.empty()) {
    std::cout << "ops missing (cases):";
    for (const auto& [op, n] : missing) std::cout << ' ' << op << " (" << n << ")";
    std::cout << '\n';
  }
  std::cout << passed << " passed, " << failed << " failed, " << unsupported << " unsupported\n";
  bool pins_hold = true;
  if (opt.min_passed && passed < *opt.min_passed) {
    std::cout << "PINNED COUNT BROKEN: " << passed << " cases passed, fewer than the "
              << *opt.min_passed << " pinned (--min-passed)\n";
    pins_hold = false;
  } else if (opt.min_passed && passed > *opt.min_passed) {
    std::cout << "note: " << passed - *opt.min_passed
              << " more case(s) passed than pinned; raise the pin (--min-passed) to " << passed
              << '\n';
  }
  if (opt.max_unsupported && unsupported > *opt.max_unsupported) {
    std::cout << "PINNED COUNT BROKEN: " << unsupported << " cases unsupported, more than the "
              << *opt.max_unsupported << " pinned (--max-unsupported)\n";
    pins_hold = false;
  }
  if (pins_hold && (opt.min_passed || opt.max_unsupported))
    std::cout << "pinned counts hold (--min-passed, --max-unsupported)\n";
  return failed || !pins_hold ? 1 : 0;
}
