// SPDX-License-Identifier: Apache-2.0
// bench/bench_eltwise.cpp: fused JIT kernels against the alternatives, in one run.
//
// For each workload, size and thread count it times:
//   jit      the fused kernel from snippets::compile (best ISA of the host)
//   dyn      the same body compiled with every dimension dynamic (one shape-agnostic kernel),
//            run with a configuration computed once for these shapes (run_configured)
//   unfused  the same graph one op at a time (one JIT kernel per op, intermediates in memory)
//   loop     a hand-written fused loop, compiled with -O3 -march=native, OpenMP threads
//   copy     the bandwidth ceiling for the same streams (R reads + 1 write), ordinary stores
//   copy_nt  the same with non-temporal (streaming) stores
// and prints a table of medians: GB/s of useful traffic (each tensor read or written once),
// % of the best same-stream ceiling, and the ratios. Usage:
//   ./build/bench/bench_eltwise [--benchmark_repetitions=N] [--benchmark_filter=...]
#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench_util.hpp"

namespace {

using namespace snippets;
using namespace snippets::bench;

using LoopFn = std::function<void(const std::vector<const float*>&, float*, std::size_t, int)>;

struct Workload {
  std::string name;
  std::function<std::vector<Shape>(Dim)> inputs; // input shapes for an n-element output
  std::function<ir::Value(G&, const std::vector<ir::Value>&)> build;
  LoopFn loop; // hand-written fused loop over n output elements with `threads` threads
};

Shape flat(Dim n) { return Shape{n}; }
constexpr Dim channels = 64;

std::vector<Workload> workloads() {
  return {
      {"relu(a*b+c)",
       [](Dim n) {
         return std::vector{flat(n), flat(n), flat(n)};
       },
       [](G& g, const std::vector<ir::Value>& in) {
         return g.relu(g.add(g.multiply(in[0], in[1]), in[2]));
       },
       [](const std::vector<const float*>& in, float* y, std::size_t n, int t) {
         const float *a = in[0], *b = in[1], *c = in[2];
#pragma omp parallel for num_threads(t) schedule(static)
         for (std::size_t i = 0; i < n; ++i) y[i] = std::max(a[i] * b[i] + c[i], 0.0f);
       }},
      {"(a+bias[C,1])*s",
       [](Dim n) {
         return std::vector{Shape{channels, n / channels}, Shape{channels, 1}};
       },
       [](G& g, const std::vector<ir::Value>& in) {
         return g.multiply(g.add(in[0], in[1]), g.scalar(f32, 0.5));
       },
       [](const std::vector<const float*>& in, float* y, std::size_t n, int t) {
         const float *a = in[0], *bias = in[1];
         const std::size_t m = n / channels;
#pragma omp parallel for num_threads(t) schedule(static)
         for (std::size_t r = 0; r < std::size_t(channels); ++r)
           for (std::size_t i = r * m; i < (r + 1) * m; ++i) y[i] = (a[i] + bias[r]) * 0.5f;
       }},
      {"4-op chain", [](Dim n) { return std::vector{flat(n)}; },
       [](G& g, const std::vector<ir::Value>& in) {
         auto t = g.add(g.multiply(in[0], g.scalar(f32, 2.0)), g.scalar(f32, 1.0));
         auto r = g.relu(t);
         return g.multiply(r, r);
       },
       [](const std::vector<const float*>& in, float* y, std::size_t n, int t) {
         const float* x = in[0];
#pragma omp parallel for num_threads(t) schedule(static)
         for (std::size_t i = 0; i < n; ++i) {
           const float r = std::max(x[i] * 2.0f + 1.0f, 0.0f);
           y[i] = r * r;
         }
       }},
  };
}

struct Case {
  std::vector<std::unique_ptr<Buffer>> in;
  std::unique_ptr<Buffer> out;
  std::vector<const float*> ptrs;
  std::size_t n = 0;
  double bytes = 0; // useful traffic per run
  std::optional<CompiledKernel> jit, dyn;
  std::optional<RuntimeConfig> dyn_config;
  std::unique_ptr<Unfused> unfused;
};

std::shared_ptr<Case> make_case(const Workload& w, Dim n) {
  auto c = std::make_shared<Case>();
  c->n = static_cast<std::size_t>(n);
  G g, gd;
  std::vector<ir::Value> params, dyn_params;
  const std::vector<Shape> shapes = w.inputs(n);
  for (const Shape& s : shapes) {
    c->in.push_back(std::make_unique<Buffer>(static_cast<std::size_t>(s.element_count())));
    c->ptrs.push_back(c->in.back()->p);
    c->bytes += 4.0 * double(s.element_count());
    params.push_back(g.parameter(f32, s));
    dyn_params.push_back(gd.parameter(f32, Shape(std::vector<Dim>(s.rank(), dynamic))));
  }
  c->out = std::make_unique<Buffer>(c->n);
  c->bytes += 4.0 * double(n);
  g.result(w.build(g, params));
  gd.result(w.build(gd, dyn_params));
  c->jit.emplace(compile(g));
  c->dyn.emplace(compile(gd));
  c->dyn_config.emplace(c->dyn->configure(shapes));
  c->unfused = std::make_unique<Unfused>(g);
  return c;
}

struct Row {
  std::string workload;
  Dim n;
  int threads;
  double bytes;
};
std::vector<Row> g_rows;

void register_all() {
  static const std::vector<Workload> ws = workloads();
  for (const Workload& w : ws)
    for (Dim n : {small, large}) {
      auto c = make_case(w, n);
      for (int t : {1, 2}) {
        const std::string base = base_name(w.name, n, t);
        g_rows.push_back({w.name, n, t, c->bytes});
        register_benchmark(base + "jit", [c, t] {
          void* out[] = {c->out->p};
          c->jit->run_unchecked(reinterpret_cast<const void* const*>(c->ptrs.data()), out,
                                {.threads = t});
        });
        register_benchmark(base + "dyn", [c, t] {
          void* out[] = {c->out->p};
          c->dyn->run_configured(*c->dyn_config,
                                 reinterpret_cast<const void* const*>(c->ptrs.data()), out,
                                 {.threads = t});
        });
        register_benchmark(base + "unfused", [c, t] { c->unfused->run(c->ptrs, {c->out->p}, t); });
        const LoopFn loop = w.loop;
        register_benchmark(base + "loop", [c, loop, t] { loop(c->ptrs, c->out->p, c->n, t); });
        // the ceiling streams the full-size inputs only (a bias is tiny and stays in cache)
        auto full = std::make_shared<std::vector<const float*>>();
        for (std::size_t k = 0; k < c->in.size(); ++k)
          if (c->in[k]->n == c->n) full->push_back(c->ptrs[k]);
        register_benchmark(base + "copy",
                           [c, full, t] { copy_streams(*full, c->out->p, c->n, t, false); });
        register_benchmark(base + "copy_nt",
                           [c, full, t] { copy_streams(*full, c->out->p, c->n, t, true); });
      }
    }
}

void print_table(const MedianReporter& rep) {
  std::printf(
      "\n| workload | size/tensor | threads | jit GB/s | unfused GB/s | loop GB/s | ceiling GB/s "
      "(store / nt) | jit %% of best ceiling | jit / unfused | jit / loop | dynamic / static "
      "|\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const Row& r : g_rows) {
    const std::string base = base_name(r.workload, r.n, r.threads);
    auto t = [&](const char* v) { return rep.seconds(base + v); };
    if (t("jit") == 0) continue;
    auto gbs = [&](const char* v) { return t(v) > 0 ? r.bytes / t(v) * 1e-9 : 0.0; };
    const double best = std::max(gbs("copy"), gbs("copy_nt"));
    std::printf("| %s | %s | %d | %.1f | %.1f | %.1f | %.1f / %.1f | %.0f%% | %.2fx | %.2fx | "
                "%.2f |\n",
                r.workload.c_str(), r.n == small ? "256 KiB" : "64 MiB", r.threads, gbs("jit"),
                gbs("unfused"), gbs("loop"), gbs("copy"), gbs("copy_nt"),
                best > 0 ? 100.0 * gbs("jit") / best : 0.0,
                t("unfused") > 0 ? t("unfused") / t("jit") : 0.0,
                t("loop") > 0 ? t("loop") / t("jit") : 0.0,
                t("dyn") > 0 ? t("jit") / t("dyn") : 0.0);
  }
}

} // namespace

int main(int argc, char** argv) { return run_benchmarks(argc, argv, register_all, print_table); }
