// SPDX-License-Identifier: Apache-2.0
// bench/bench_peers.cpp: snippets against other ways to run the same graphs, in one run.
//
// For each workload (peers_case.hpp: relu(a*b+c), sigmoid((x+bias[C])*s), GELU tanh, Swish,
// two outputs y1 = a+b and y2 = (a+b)*c, on [rows, 256] f32; Softmax over the last axis on
// [rows, 1024] and [rows, 37] f32; sigmoid((x+bias[C])*s) on [rows, 256] bf16), on a 256 KiB
// (L2) and a 64 MiB tensor, with 1 and 2 threads, it times these peers:
//   snippets          the fused JIT kernel (compiled once, run_unchecked), best host ISA
//   snippets_avx2     the same kernel compiled for AVX2 (CompileOptions::isa)
//   snippets_relaxed  the same kernel in the relaxed accuracy tier (CompileOptions::accuracy;
//                     its gate allows the tier's 1.5e-5 relative where the workload says less)
//   snippets_unfused  the same graph one JIT kernel per op (Gelu/Swish/Softmax decomposed)
//   loop              a hand-written fused loop, -O3 -march=native, OpenMP (peers_loop.hpp)
//   eigen             Eigen 3 expression templates on Map<ArrayXf>, OpenMP over rows
//   onednn            oneDNN eltwise / binary primitives with post-ops, softmax_forward
//   halide            Halide 14 JIT (if the build found it), halide_exp: GELU on exp
// and the bandwidth ceiling of the same streams (R reads, W writes) with ordinary (copy) and
// non-temporal (copy_nt) stores. A peer that has no form of a workload (snippets_unfused runs
// f32 kernels only: not the bf16 one) is left out of its table, and a note says so. Before
// anything is timed every peer runs at both thread counts and is compared with the reference
// interpreter (peers_case.hpp's Gate); a wrong peer stops the program. Then Google Benchmark
// runs (medians of 5 repetitions, in random order unless
// --benchmark_enable_random_interleaving=false) and one markdown table per workload is
// printed, and the correctness table. "vs best peer" is a time over the fastest peer's;
// snippets_avx2 and snippets_relaxed get their ratios too but never count as the fastest: our own
// kernel on a narrower ISA, or in an opt-in tier, not a way to run the graph instead of snippets.
// Usage:
//   ./build/bench/bench_peers [--workloads=chain,softmax37,...] [--sizes=L2,64MiB]
//                             [--peers=snippets,eigen,...] [Google Benchmark flags]
// --workloads/--sizes/--peers limit what is set up (and checked); --benchmark_filter only
// limits what is timed.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench_util.hpp"
#include "peers_case.hpp"
#include "peers_eigen.hpp"
#include "peers_loop.hpp"
#include "peers_onednn.hpp"
#include "peers_snippets.hpp"
#if SNIPPETS_BENCH_WITH_HALIDE
#include "peers_halide.hpp"
#endif

namespace {

using namespace snippets;
using namespace snippets::bench;
using namespace snippets::bench::peers;

/// What --workloads, --sizes and --peers chose; empty means all.
struct Selection {
  std::vector<std::string> workloads, sizes, peers;
  static bool allows(const std::vector<std::string>& list, const std::string& name) {
    return list.empty() || std::find(list.begin(), list.end(), name) != list.end();
  }
};
Selection g_selection;

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    const std::size_t comma = std::min(s.find(',', start), s.size());
    if (comma > start) out.push_back(s.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

const std::vector<std::string> all_peers = {"snippets",         "snippets_avx2", "snippets_relaxed",
                                            "snippets_unfused", "loop",          "eigen",
                                            "onednn",           "halide",        "halide_exp"};
/// Peers whose time never sets "vs best peer" (see the file comment).
bool competes(const std::string& peer) {
  return peer != "snippets_avx2" && peer != "snippets_relaxed";
}

/// Exits with a message when `list` names something not in `known`.
void require_known(const char* flag, const std::vector<std::string>& list,
                   const std::vector<std::string>& known) {
  for (const std::string& name : list)
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      std::string all;
      for (const std::string& k : known) all += (all.empty() ? "" : ",") + k;
      std::fprintf(stderr, "bench_peers: --%s: unknown '%s' (known: %s)\n", flag, name.c_str(),
                   all.c_str());
      std::exit(2);
    }
}

/// Removes this program's own flags from argv (Google Benchmark sees the rest).
void parse_own_flags(int& argc, char** argv) {
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto take = [&](const char* flag, std::vector<std::string>& into) {
      const std::string prefix = std::string("--") + flag + "=";
      if (a.rfind(prefix, 0) != 0) return false;
      into = split(a.substr(prefix.size()));
      return true;
    };
    if (!take("workloads", g_selection.workloads) && !take("sizes", g_selection.sizes) &&
        !take("peers", g_selection.peers))
      argv[kept++] = argv[i];
  }
  argc = kept;
  std::vector<std::string> names;
  for (const WorkloadInfo& wi : workloads()) names.push_back(wi.name);
  require_known("workloads", g_selection.workloads, names);
  require_known("sizes", g_selection.sizes, {"L2", "64MiB"});
  require_known("peers", g_selection.peers, all_peers);
}

const char* size_label(Dim n) { return n == small ? "256 KiB" : "64 MiB"; }

/// One workload at one size: which peers were set up, for the tables.
struct Entry {
  Workload w;
  Dim n; // bench_util's small or large
  Dim rows;
  double bytes;
  std::vector<std::string> peers;
};
std::vector<Entry> g_entries;

/// Largest error of a peer against the reference, per thread count (Gate::check).
struct CheckRow {
  Workload w;
  Dim n;
  std::string peer;
  Gate::Result r[2]; // 1 and 2 threads
  std::size_t rows, of_rows;
};
std::vector<CheckRow> g_checks;
std::vector<std::string> g_notes; // what the setup learned (implementations, kernel counts)

void register_case(Workload w, Dim n) {
  auto c = std::make_shared<Case>(w, n);
  const WorkloadInfo& wi = info(w);
  const Gate gate(*c);
  std::vector<std::pair<std::string, Runner>> peers;
  auto want = [](const char* p) { return Selection::allows(g_selection.peers, p); };
  for (const char* name : {"snippets", "snippets_avx2", "snippets_relaxed"}) {
    if (!want(name)) continue;
    const bool avx2 = name == std::string("snippets_avx2");
    const Accuracy tier =
        name == std::string("snippets_relaxed") ? Accuracy::relaxed : Accuracy::standard;
    std::shared_ptr<CompiledKernel> k;
    peers.emplace_back(
        name, make_fused(*c, avx2 ? std::optional(x64::Isa::avx2) : std::nullopt, &k, tier));
    g_notes.push_back(std::string(wi.name) + " " + size_label(n) + ": " + name + " kernel ISA " +
                      k->signature().isa +
                      ", non-temporal variant: " + (k->has_streaming_variant() ? "yes" : "no"));
  }
  if (want("snippets_unfused")) {
    std::size_t kernels = 0;
    if (Runner run = make_unfused(*c, &kernels)) {
      peers.emplace_back("snippets_unfused", std::move(run));
      if (n == small)
        g_notes.push_back(std::string(wi.name) + ": unfused = " + std::to_string(kernels) +
                          " kernels");
    } else if (n == small) {
      g_notes.push_back(std::string(wi.name) +
                        ": no snippets_unfused (bench_util's Unfused compiles f32 kernels only)");
    }
  }
  if (want("loop")) peers.emplace_back("loop", make_loop(*c));
  if (want("eigen")) peers.emplace_back("eigen", make_eigen(*c));
  if (want("onednn")) {
    std::string impl;
    try {
      peers.emplace_back("onednn", make_onednn(*c, &impl));
      if (n == small) g_notes.push_back(std::string(wi.name) + ": oneDNN implementation " + impl);
    } catch (const dnnl::error& e) { // oneDNN 2.6 has no bf16 eltwise without AVX-512
      g_notes.push_back(std::string(wi.name) + " " + size_label(n) + ": no oneDNN peer (" +
                        e.what() + ")");
    }
  }
#if SNIPPETS_BENCH_WITH_HALIDE
  if (want("halide")) peers.emplace_back("halide", make_halide(*c));
  if (want("halide_exp") && w == Workload::gelu_tanh)
    peers.emplace_back("halide_exp", make_halide(*c, /*exp_form=*/true));
#endif

  // the gate: every peer at both thread counts before anything is timed
  for (const auto& [name, run] : peers) {
    CheckRow row{w, n, name, {}, gate.sampled_rows(), std::size_t(c->rows)};
    for (int t : {1, 2}) row.r[t - 1] = gate.check(name, run, t);
    g_checks.push_back(row);
  }

  Entry e{w, n, c->rows, c->bytes, {}};
  for (int t : {1, 2}) {
    const std::string base = base_name(wi.name, n, t);
    for (const auto& [name, run] : peers) {
      register_benchmark(base + name, [run, t] { run(t); });
      if (t == 1) e.peers.push_back(name);
    }
    for (bool nt : {false, true})
      register_benchmark(base + (nt ? "copy_nt" : "copy"), [c, t, nt] { c->copy(t, nt); });
  }
  g_entries.push_back(std::move(e));
}

void register_all() {
  for (const WorkloadInfo& wi : workloads()) {
    if (!Selection::allows(g_selection.workloads, wi.name)) continue;
    for (Dim n : {small, large}) {
      if (!Selection::allows(g_selection.sizes, n == small ? "L2" : "64MiB")) continue;
      std::fprintf(stderr, "bench_peers: setting up and checking %s at %s\n", wi.name,
                   size_label(n));
      register_case(wi.id, n);
    }
  }
  std::printf("Eigen %d.%d.%d (%s), %s", EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION,
              EIGEN_MINOR_VERSION, Eigen::SimdInstructionSetsInUse(), onednn_version().c_str());
#if SNIPPETS_BENCH_WITH_HALIDE
  std::printf(", %s", halide_version().c_str());
#else
  std::printf(", Halide not built (not found at configure time)");
#endif
  std::printf(", g++ %s\n", __VERSION__);
  for (const std::string& note : g_notes) std::printf("  %s\n", note.c_str());
  std::printf("All peers passed the reference check (table at the end).\n");
}

void print_tables(const MedianReporter& rep) {
  for (const WorkloadInfo& wi : workloads()) {
    std::vector<const Entry*> entries;
    for (const Entry& e : g_entries)
      if (e.w == wi.id) entries.push_back(&e);
    if (entries.empty()) continue;
    const int reads = wi.full_inputs;
    const std::string type(to_string(wi.type));
    std::string shapes;
    for (const Entry* e : entries)
      shapes += std::string(shapes.empty() ? "" : ", ") + "[" + std::to_string(e->rows) + ", " +
                std::to_string(wi.channels) + "] (" + size_label(e->n) + ")";
    std::printf("\n### %s: %s\n\n", wi.name, wi.formula);
    std::printf("Tensors %s %s. GB/s counts each input read once and each output written once "
                "(%d full input%s%s, %d output%s; %zu bytes per element); the ceiling reads %d "
                "stream%s and writes %d.\n\n",
                type.c_str(), shapes.c_str(), reads, reads > 1 ? "s" : "",
                wi.bias ? (" + bias[" + std::to_string(wi.channels) + "]").c_str() : "", wi.outputs,
                wi.outputs > 1 ? "s" : "", size_of(wi.type), reads, reads > 1 ? "s" : "",
                wi.outputs);
    std::printf("| peer | size/tensor | threads | median (us) | GB/s | %% of ceiling | vs "
                "best peer |\n|---|---|---|---|---|---|---|\n");
    for (const Entry* e : entries)
      for (int t : {1, 2}) {
        const std::string base = base_name(wi.name, e->n, t);
        auto sec = [&](const std::string& p) { return rep.seconds(base + p); };
        auto gbs = [&](const std::string& p) {
          return sec(p) > 0 ? e->bytes / sec(p) * 1e-9 : 0.0;
        };
        double best = 0;
        for (const std::string& p : e->peers)
          if (competes(p) && sec(p) > 0 && (best == 0 || sec(p) < best)) best = sec(p);
        const double ceiling = std::max(gbs("copy"), gbs("copy_nt"));
        auto row = [&](const std::string& p, bool peer) {
          if (sec(p) == 0) return;
          char ratio[32] = "-";
          if (peer && best > 0)
            std::snprintf(ratio, sizeof ratio, sec(p) == best ? "**1.00x**" : "%.2fx",
                          sec(p) / best);
          std::printf("| %s | %s | %d | %.1f | %.1f | %.0f%% | %s |\n", p.c_str(), size_label(e->n),
                      t, sec(p) * 1e6, gbs(p), ceiling > 0 ? 100.0 * gbs(p) / ceiling : 0.0, ratio);
        };
        for (const std::string& p : e->peers) row(p, true);
        row("copy", false);
        row("copy_nt", false);
      }
  }
  std::printf("\n### Correctness against the reference interpreter (before timing)\n\n"
              "error = largest |peer - ref| / max(|ref|, 1) over the checked rows (what the "
              "tolerance bounds; bf16 outputs against the reference before its rounding to "
              "bf16); ulp = largest distance in ulps of the output type (f32, or bf16 to the "
              "reference rounded to bf16) where |ref| >= 1e-4; at 1 / 2 threads.\n\n"
              "| workload | size/tensor | rows checked | peer | error | ulp | tolerance "
              "|\n|---|---|---|---|---|---|---|\n");
  for (const CheckRow& c : g_checks) {
    auto pair = [](double a, double b) {
      char s[64];
      if (a == b)
        std::snprintf(s, sizeof s, "%.2g", a);
      else
        std::snprintf(s, sizeof s, "%.2g / %.2g", a, b);
      return std::string(s);
    };
    const WorkloadInfo& wi = info(c.w);
    std::printf("| %s | %s | %zu of %zu | %s | %s | %s | %.0e%s |\n", wi.name, size_label(c.n),
                c.rows, c.of_rows, c.peer.c_str(), pair(c.r[0].err, c.r[1].err).c_str(),
                pair(double(c.r[0].ulp), double(c.r[1].ulp)).c_str(), wi.tolerance,
                wi.type == bf16 ? " + 2^-8" : "");
  }
}

} // namespace

int main(int argc, char** argv) {
  parse_own_flags(argc, argv);
  // Repetitions in random order (unless the command line decides): on a shared machine a
  // burst of foreign load then hits one repetition of many benchmarks, which the medians drop,
  // instead of every repetition of the few benchmarks that happened to run during it.
  std::vector<char*> args(argv, argv + argc);
  std::string interleave = "--benchmark_enable_random_interleaving=true";
  bool has_interleave = false;
  for (int i = 1; i < argc; ++i)
    has_interleave |= std::string(argv[i]).rfind("--benchmark_enable_random_interleaving", 0) == 0;
  if (!has_interleave) args.push_back(interleave.data());
  args.push_back(nullptr);
  argc = int(args.size()) - 1;
  return run_benchmarks(argc, args.data(), register_all, print_tables);
}
