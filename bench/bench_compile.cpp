// SPDX-License-Identifier: Apache-2.0
// bench/bench_compile.cpp: what a kernel costs before and around its work.
//
//  compile/<n>ops    compile() of an n-op elementwise chain (1, 5, 10, 20 ops), no cache:
//                    every data-flow and lowering pass and the emission, best ISA of the host
//  cache_hit/<n>ops  compile_cached() of the same body when the cache holds it (key + lookup)
//  call/...          one call on a 16-element tensor, one thread: run() (checks the buffers),
//                    run_unchecked(), and a plain out-of-line function doing the same work;
//                    a dynamic kernel's run() (configures every call) and run_configured()
// It then prints the median compile latency per size and, for the 10-op chain, where the time
// goes stage by stage (CompileOptions::timings, median of 101 compiles), and how a whole
// model's tokenizing and compiling scale with its size: a chain of 2,500 to 20,000 Relus
// (passes::tokenize, then a Program with no kernel cache, which compiles every Subgraph; the
// time per node should not grow with the model). Usage:
//   ./build/bench/bench_compile [--benchmark_filter=...]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "bench_util.hpp"
#include "snippets/program/kernel_cache.hpp"

namespace {

using namespace snippets;
using namespace snippets::bench;

/// An n-op chain over x [256, 1024] and a bias [1024] that cycles through cheap and
/// transcendental ops, as a tokenized model tail would.
G chain(int n) {
  G g;
  const auto x = g.parameter(f32, {256, 1024}, "x");
  const auto bias = g.parameter(f32, {1024}, "bias");
  ir::Value v = x;
  for (int i = 0; i < n; ++i) switch (i % 5) {
    case 0: v = g.add(v, bias); break;
    case 1: v = g.multiply(v, g.scalar(f32, 0.5 + i)); break;
    case 2: v = g.sigmoid(v); break;
    case 3: v = g.maximum(v, x); break;
    default: v = g.gelu(v, ir::GeluApproximation::tanh); break;
    }
  g.result(v, "y");
  return g;
}

constexpr int sizes[] = {1, 5, 10, 20};

/// A model of n Relus in a chain over x [256, 1024] (what a model runner loads and compiles).
G relu_chain(int n) {
  G g;
  ir::Value v = g.parameter(f32, {256, 1024}, "x");
  for (int i = 0; i < n; ++i) v = g.relu(v);
  g.result(v, "y");
  return g;
}

constexpr int model_sizes[] = {2500, 5000, 10000, 20000};

/// The out-of-line baseline for a call: relu over 16 floats.
[[gnu::noinline]] void relu16(const float* x, float* y) {
  for (int i = 0; i < 16; ++i) y[i] = x[i] > 0 ? x[i] : 0.0f;
  benchmark::ClobberMemory();
}

void register_all() {
  for (int n : sizes) {
    auto body = std::make_shared<G>(chain(n));
    register_benchmark("compile/" + std::to_string(n) + "ops",
                       [body] { benchmark::DoNotOptimize(compile(*body).code().data()); });
    auto cache = std::make_shared<KernelCache>();
    compile_cached(*body, {}, cache.get());
    register_benchmark("cache_hit/" + std::to_string(n) + "ops", [body, cache] {
      benchmark::DoNotOptimize(compile_cached(*body, {}, cache.get()).code().data());
    });
  }
  static G tiny;
  const auto x = tiny.parameter(f32, {16}, "x");
  tiny.result(tiny.relu(x), "y");
  static const CompiledKernel k = compile(tiny);
  static std::vector<float> in(16, -0.5f), out(16);
  register_benchmark("call/run_checked", [] {
    const ConstTensorView a[] = {{f32, {16}, in.data()}};
    const TensorView b[] = {{f32, {16}, out.data()}};
    k.run(a, b, {.threads = 1});
  });
  register_benchmark("call/run_unchecked", [] {
    const void* a[] = {in.data()};
    void* b[] = {out.data()};
    k.run_unchecked(a, b, {.threads = 1});
  });
  register_benchmark("call/plain_function", [] { relu16(in.data(), out.data()); });
  static G tiny_dyn;
  tiny_dyn.result(tiny_dyn.relu(tiny_dyn.parameter(f32, {dynamic}, "x")), "y");
  static const CompiledKernel kd = compile(tiny_dyn);
  static const RuntimeConfig cfg = kd.configure(std::vector<Shape>{Shape{16}});
  register_benchmark("call/dynamic_run", [] {
    const ConstTensorView a[] = {{f32, {16}, in.data()}};
    const TensorView b[] = {{f32, {16}, out.data()}};
    kd.run(a, b, {.threads = 1});
  });
  register_benchmark("call/dynamic_run_configured", [] {
    const void* a[] = {in.data()};
    void* b[] = {out.data()};
    kd.run_configured(cfg, a, b, {.threads = 1});
  });
}

/// Median time per stage over `runs` compiles of `body`, in compile order.
std::vector<std::pair<std::string, double>> stage_medians(const G& body, int runs) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<double>> us;
  for (int r = 0; r < runs; ++r) {
    std::vector<CompileTiming> t;
    compile(body, {.timings = &t});
    for (const CompileTiming& s : t) {
      const std::string name(s.stage);
      if (r == 0) order.push_back(name);
      us[name].push_back(double(s.time.count()) * 1e-3);
    }
  }
  std::vector<std::pair<std::string, double>> out;
  for (const std::string& name : order) {
    auto& v = us[name];
    std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(v.size() / 2), v.end());
    out.emplace_back(name, v[v.size() / 2]);
  }
  return out;
}

/// Tokenizing, and tokenizing + compiling (a Program without a kernel cache, so equal
/// Subgraphs are compiled again), of Relu chains of each model size, once each.
void print_model_scaling() {
  std::printf("\n| Relu chain, nodes | Subgraphs | tokenize (ms) | Program, no cache (ms) | "
              "per node (us) | per node / previous |\n|---|---|---|---|---|---|\n");
  double previous = 0; // us per node at the previous size
  for (int n : model_sizes) {
    const G model = relu_chain(n);
    using Clock = std::chrono::steady_clock;
    const auto t0 = Clock::now();
    const G tokenized = passes::tokenize(model);
    const auto t1 = Clock::now();
    const Program<> program(model, {.cache = nullptr});
    const auto t2 = Clock::now();
    std::size_t kernels = 0;
    for (const auto& step : program.steps())
      kernels += step.kind == Program<>::StepKind::kernel ? 1 : 0;
    const double tokenize_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
    const double program_ms = std::chrono::duration<double, std::milli>(t2 - t1).count();
    const double per_node_us = program_ms * 1e3 / n;
    std::printf("| %d | %zu | %.1f | %.1f | %.1f | ", n, kernels, tokenize_ms, program_ms,
                per_node_us);
    if (previous > 0)
      std::printf("%.2f |\n", per_node_us / previous);
    else
      std::printf("|\n");
    previous = per_node_us;
    benchmark::DoNotOptimize(tokenized.size());
  }
}

void print_tables(const MedianReporter& rep) {
  std::printf("\n| ops | compile (us) | cache hit (us) |\n|---|---|---|\n");
  for (int n : sizes)
    std::printf("| %d | %.0f | %.2f |\n", n,
                rep.seconds("compile/" + std::to_string(n) + "ops") * 1e6,
                rep.seconds("cache_hit/" + std::to_string(n) + "ops") * 1e6);
  std::printf("\n| call on 16 elements, 1 thread | ns |\n|---|---|\n");
  for (const char* c :
       {"run_checked", "run_unchecked", "dynamic_run", "dynamic_run_configured", "plain_function"})
    std::printf("| %s | %.1f |\n", c, rep.seconds(std::string("call/") + c) * 1e9);
  std::printf(
      "\n10-op chain, median per stage over 101 compiles:\n\n| stage | us | %% |\n|---|---|---|\n");
  const auto stages = stage_medians(chain(10), 101);
  double total = 0;
  for (const auto& [name, us] : stages) total += us;
  for (const auto& [name, us] : stages)
    std::printf("| %s | %.1f | %.0f%% |\n", name.c_str(), us, 100.0 * us / total);
  std::printf("| (sum) | %.1f | |\n", total);
  print_model_scaling();
}

} // namespace

int main(int argc, char** argv) { return run_benchmarks(argc, argv, register_all, print_tables); }
