// SPDX-License-Identifier: Apache-2.0
// bench/bench_math.cpp: the transcendental emitters against the alternatives, in one run.
//
// For Gelu (tanh form), Swish and Sigmoid, on a 256 KiB (L2) and a 64 MiB tensor, with 1 and
// 2 threads, it times:
//   jit        the op as one fused JIT kernel (snippets::compile, best ISA of the host)
//   jit_relaxed the same compiled with CompileOptions::accuracy = relaxed
//   jit_decomp the op written with primitive ops (Tanh, Exp, Multiply, ...), still one kernel
//   unfused    that decomposition one op at a time (one JIT kernel per op, as bench_eltwise)
//   loop       a hand-written loop calling std::tanh / std::exp, -O3 -march=native, OpenMP
//   copy       the bandwidth ceiling for the same streams (1 read + 1 write), ordinary stores
//   copy_nt    the same with non-temporal (streaming) stores
// and prints a table of medians: GB/s of useful traffic (the input read and the output
// written once), % of the best same-stream ceiling, and the ratios. Inputs are spread over
// [-8, 8). Usage:
//   ./build/bench/bench_math [--benchmark_repetitions=N] [--benchmark_filter=...]
#include <algorithm>
#include <cmath>
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

using Build = std::function<ir::Value(G&, ir::Value)>;
using LoopFn = std::function<void(const float*, float*, std::size_t, int)>;

struct Workload {
  std::string name;
  Build op;         // the dedicated op
  Build decomposed; // the same from primitive ops
  LoopFn loop;      // hand-written loop over n elements with `threads` threads
};

std::vector<Workload> workloads() {
  return {
      {"gelu_tanh", [](G& g, ir::Value x) { return g.gelu(x, ir::GeluApproximation::tanh); },
       [](G& g, ir::Value x) {
         auto inner =
             g.add(x, g.multiply(g.multiply(g.multiply(x, x), x), g.scalar(f32, 0.044715)));
         auto t = g.tanh(g.multiply(inner, g.scalar(f32, 0.7978845608028654)));
         return g.multiply(g.multiply(x, g.add(t, g.scalar(f32, 1.0))), g.scalar(f32, 0.5));
       },
       [](const float* x, float* y, std::size_t n, int t) {
#pragma omp parallel for num_threads(t) schedule(static)
         for (std::size_t i = 0; i < n; ++i) {
           const float v = x[i];
           y[i] = 0.5f * v * (1.0f + std::tanh(0.7978845608f * (v + 0.044715f * v * v * v)));
         }
       }},
      {"swish", [](G& g, ir::Value x) { return g.swish(x); },
       [](G& g, ir::Value x) { return g.multiply(x, g.sigmoid(x)); },
       [](const float* x, float* y, std::size_t n, int t) {
#pragma omp parallel for num_threads(t) schedule(static)
         for (std::size_t i = 0; i < n; ++i) y[i] = x[i] / (1.0f + std::exp(-x[i]));
       }},
      {"sigmoid", [](G& g, ir::Value x) { return g.sigmoid(x); },
       [](G& g, ir::Value x) {
         return g.divide(g.scalar(f32, 1.0), g.add(g.exp(g.negative(x)), g.scalar(f32, 1.0)));
       },
       [](const float* x, float* y, std::size_t n, int t) {
#pragma omp parallel for num_threads(t) schedule(static)
         for (std::size_t i = 0; i < n; ++i) y[i] = 1.0f / (1.0f + std::exp(-x[i]));
       }},
  };
}

struct Case {
  std::unique_ptr<Buffer> in, out;
  std::optional<CompiledKernel> jit, jit_relaxed, jit_decomposed;
  std::unique_ptr<Unfused> unfused;
};

void register_all() {
  static const std::vector<Workload> ws = workloads();
  for (const Workload& w : ws)
    for (Dim n : {small, large}) {
      auto c = std::make_shared<Case>();
      c->in = std::make_unique<Buffer>(std::size_t(n), -8.0f, 8.0f);
      c->out = std::make_unique<Buffer>(std::size_t(n));
      auto graph = [&](const Build& build) {
        G g;
        const auto x = g.parameter(f32, {n});
        g.result(build(g, x));
        return g;
      };
      c->jit.emplace(compile(graph(w.op)));
      c->jit_relaxed.emplace(compile(graph(w.op), {.accuracy = Accuracy::relaxed}));
      c->jit_decomposed.emplace(compile(graph(w.decomposed)));
      {
        G g;
        const auto x = g.parameter(f32, {n});
        g.result(w.decomposed(g, x));
        c->unfused = std::make_unique<Unfused>(g);
      }
      for (int t : {1, 2}) {
        const std::string base = base_name(w.name, n, t);
        register_benchmark(base + "jit", [c, t] {
          const void* in[] = {c->in->p};
          void* out[] = {c->out->p};
          c->jit->run_unchecked(in, out, {.threads = t});
        });
        register_benchmark(base + "jit_relaxed", [c, t] {
          const void* in[] = {c->in->p};
          void* out[] = {c->out->p};
          c->jit_relaxed->run_unchecked(in, out, {.threads = t});
        });
        register_benchmark(base + "jit_decomp", [c, t] {
          const void* in[] = {c->in->p};
          void* out[] = {c->out->p};
          c->jit_decomposed->run_unchecked(in, out, {.threads = t});
        });
        register_benchmark(base + "unfused",
                           [c, t] { c->unfused->run({c->in->p}, {c->out->p}, t); });
        const LoopFn loop = w.loop;
        register_benchmark(base + "loop", [c, loop, t] { loop(c->in->p, c->out->p, c->in->n, t); });
        register_benchmark(base + "copy",
                           [c, t] { copy_streams({c->in->p}, c->out->p, c->in->n, t, false); });
        register_benchmark(base + "copy_nt",
                           [c, t] { copy_streams({c->in->p}, c->out->p, c->in->n, t, true); });
      }
    }
}

void print_table(const MedianReporter& rep) {
  std::printf(
      "\n| workload | size/tensor | threads | jit GB/s | relaxed GB/s | jit (decomposed) "
      "GB/s | unfused GB/s | loop GB/s | ceiling GB/s (store / nt) | jit %% of best ceiling "
      "| relaxed / jit | jit / unfused | jit / loop |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const Workload& w : workloads())
    for (Dim n : {small, large})
      for (int t : {1, 2}) {
        const std::string base = base_name(w.name, n, t);
        auto sec = [&](const char* v) { return rep.seconds(base + v); };
        if (sec("jit") == 0) continue;
        const double bytes = 8.0 * double(n); // one input read, one output written
        auto gbs = [&](const char* v) { return sec(v) > 0 ? bytes / sec(v) * 1e-9 : 0.0; };
        const double best = std::max(gbs("copy"), gbs("copy_nt"));
        std::printf("| %s | %s | %d | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f / %.1f | %.0f%% | "
                    "%.2fx | %.2fx | %.2fx |\n",
                    w.name.c_str(), n == small ? "256 KiB" : "64 MiB", t, gbs("jit"),
                    gbs("jit_relaxed"), gbs("jit_decomp"), gbs("unfused"), gbs("loop"), gbs("copy"),
                    gbs("copy_nt"), best > 0 ? 100.0 * gbs("jit") / best : 0.0,
                    sec("jit_relaxed") > 0 ? sec("jit") / sec("jit_relaxed") : 0.0,
                    sec("unfused") > 0 ? sec("unfused") / sec("jit") : 0.0,
                    sec("loop") > 0 ? sec("loop") / sec("jit") : 0.0);
      }
}

} // namespace

int main(int argc, char** argv) { return run_benchmarks(argc, argv, register_all, print_table); }
