// SPDX-License-Identifier: Apache-2.0
// bench/bench_util.hpp: what the Google Benchmark programs in bench/ share.
//
//  - Buffer: a 64-byte aligned f32 array, first touched by the OpenMP threads that use it;
//  - copy_streams: the bandwidth ceiling of R read streams and W written streams (ordinary
//    or non-temporal stores), AVX-512 (AVX2 on a host without it) with a scalar remainder;
//  - Unfused: a graph run one op at a time (one JIT kernel per op, intermediates in memory,
//    the Results written into the caller's buffers);
//  - small, large, base_name: the tensor sizes of the tables and the benchmark names;
//  - MedianReporter: the console reporter that also records the median of every benchmark
//    (real time, seconds) for the summary table a program prints at the end;
//  - run_benchmarks: a program's main(): Google Benchmark with 5 repetitions and aggregates
//    only unless the command line says otherwise, then the program's summary tables.
// Header-only and tied to these programs; not part of the library.
#pragma once

#include <benchmark/benchmark.h>
#include <immintrin.h>
#include <omp.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "snippets/snippets.hpp"

namespace snippets::bench {

using G = ir::Graph<x64::Traits>;
inline constexpr auto f32 = ElementType::f32;

struct Buffer {
  float* p = nullptr;
  std::size_t n = 0;
  /// `count` values spread over [lo, hi) in a repeating ramp of 1000 steps.
  explicit Buffer(std::size_t count, float lo = -0.3f, float hi = 0.7f) : n(count) {
    p = static_cast<float*>(std::aligned_alloc(64, (count * 4 + 63) / 64 * 64 + 64));
    const float step = (hi - lo) / 1000.0f;
#pragma omp parallel for schedule(static) // first touch by the threads that will use it
    for (std::size_t i = 0; i < count; ++i) p[i] = lo + step * float(i % 1000);
  }
  ~Buffer() { std::free(p); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
};

/// Every `out` array = sum of the `in` arrays: the bandwidth ceiling for that many read streams
/// and written streams.
inline void copy_streams(const std::vector<const float*>& in, const std::vector<float*>& out,
                         std::size_t n, int t, bool nt) {
#pragma omp parallel num_threads(t)
  {
    const int id = omp_get_thread_num(), nth = omp_get_num_threads();
    std::size_t lo = n * std::size_t(id) / std::size_t(nth) / 16 * 16;
    std::size_t hi = id + 1 == nth ? n : n * std::size_t(id + 1) / std::size_t(nth) / 16 * 16;
    std::size_t i = lo;
#ifdef __AVX512F__
    constexpr std::size_t lanes = 16;
    auto load = [](const float* p) { return _mm512_loadu_ps(p); };
    auto add = [](__m512 a, __m512 b) { return _mm512_add_ps(a, b); };
    auto store = [nt](float* p, __m512 v) { nt ? _mm512_stream_ps(p, v) : _mm512_storeu_ps(p, v); };
#else // an AVX2 host (-march=native without AVX-512): the same with ymm
    constexpr std::size_t lanes = 8;
    auto load = [](const float* p) { return _mm256_loadu_ps(p); };
    auto add = [](__m256 a, __m256 b) { return _mm256_add_ps(a, b); };
    auto store = [nt](float* p, __m256 v) { nt ? _mm256_stream_ps(p, v) : _mm256_storeu_ps(p, v); };
#endif
    for (; i + lanes <= hi; i += lanes) {
      auto v = load(in[0] + i);
      for (std::size_t k = 1; k < in.size(); ++k) v = add(v, load(in[k] + i));
      for (float* y : out) store(y + i, v);
    }
    for (; i < hi; ++i) {
      float v = in[0][i];
      for (std::size_t k = 1; k < in.size(); ++k) v += in[k][i];
      for (float* y : out) y[i] = v;
    }
    if (nt) _mm_sfence();
  }
}
/// y = sum of the `in` arrays: the ceiling for that many read streams and one write.
inline void copy_streams(const std::vector<const float*>& in, float* y, std::size_t n, int t,
                         bool nt) {
  copy_streams(in, std::vector<float*>{y}, n, t, nt);
}

/// A graph as one kernel per op, intermediates in memory; the op producing a Result writes
/// straight into that output's buffer. Scalars feed their consumers' kernels; every other
/// input of an op is a buffer.
class Unfused {
public:
  explicit Unfused(const G& whole) {
    std::map<ir::NodeId, Arg> arg_of;
    const auto& params = whole.parameters();
    for (std::size_t k = 0; k < params.size(); ++k) arg_of[params[k]] = {Arg::input, k};
    const auto& results = whole.results();
    for (std::size_t r = 0; r < results.size(); ++r)
      arg_of[whole.node(results[r]).inputs[0].node] = {Arg::output, r};
    for (ir::NodeId id : whole.topological_order()) {
      const auto& node = whole.node(id);
      if (ir::is<ir::Parameter>(node.op) || ir::is<ir::Result>(node.op) ||
          ir::is<ir::Scalar>(node.op))
        continue;
      G one;
      std::vector<ir::Value> ins;
      Step step;
      for (const ir::Output& o : node.inputs) {
        const auto& src = whole.node(o.node);
        if (const auto* s = std::get_if<ir::Scalar>(&src.op)) {
          ins.push_back(one.scalar(f32, s->value));
        } else {
          ins.push_back(one.parameter(whole.type(o).type, whole.type(o).shape));
          step.args.push_back(arg_of.at(o.node));
        }
      }
      one.result(one.make(node.op, ins)[0]);
      step.kernel = std::make_unique<CompiledKernel>(compile(one));
      if (!arg_of.contains(id)) {
        temps_.push_back(std::make_unique<Buffer>(
            static_cast<std::size_t>(node.outputs[0].shape.element_count())));
        arg_of[id] = {Arg::temp, temps_.size() - 1};
      }
      step.args.push_back(arg_of.at(id));
      steps_.push_back(std::move(step));
    }
  }

  /// `in` in the order of the graph's Parameters, `out` of its Results.
  void run(const std::vector<const float*>& in, const std::vector<float*>& out, int t) const {
    for (const Step& s : steps_) {
      const void* ins[snippets::max_kernel_args];
      for (std::size_t a = 0; a + 1 < s.args.size(); ++a) ins[a] = pointer(s.args[a], in, out);
      void* outs[] = {const_cast<void*>(pointer(s.args.back(), in, out))};
      s.kernel->run_unchecked(ins, outs, {.threads = t});
    }
  }
  std::size_t kernel_count() const { return steps_.size(); }

private:
  struct Arg {
    enum Kind { input, output, temp } kind;
    std::size_t index;
  };
  struct Step {
    std::unique_ptr<CompiledKernel> kernel;
    std::vector<Arg> args; // inputs..., output
  };
  const void* pointer(Arg a, const std::vector<const float*>& in,
                      const std::vector<float*>& out) const {
    switch (a.kind) {
    case Arg::input: return in[a.index];
    case Arg::output: return out[a.index];
    case Arg::temp: break;
    }
    return temps_[a.index]->p;
  }
  std::vector<Step> steps_;
  std::vector<std::unique_ptr<Buffer>> temps_;
};

/// The two tensor sizes every throughput table uses: in L2, and far beyond the caches.
inline constexpr Dim small = 64 * 1024, large = 16 * 1024 * 1024; // 256 KiB, 64 MiB of f32

/// "<workload>/<L2|64MiB>/<threads>t/", the prefix of a benchmark's name.
inline std::string base_name(const std::string& workload, Dim n, int threads) {
  return workload + "/" + (n == small ? "L2" : "64MiB") + "/" + std::to_string(threads) + "t/";
}

/// Console output as usual; the median real time of every benchmark (seconds) by name.
class MedianReporter : public benchmark::ConsoleReporter {
public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs)
      if (r.run_type == Run::RT_Aggregate && r.aggregate_name == "median")
        median_seconds[r.run_name.function_name] =
            r.GetAdjustedRealTime() * 1e-6; // benchmarks report microseconds
  }
  /// 0 when the benchmark did not run (filtered out).
  double seconds(const std::string& name) const {
    const auto it = median_seconds.find(name);
    return it == median_seconds.end() ? 0.0 : it->second;
  }
  std::map<std::string, double> median_seconds;
};

/// Registers `fn` as a benchmark timed in real time, microseconds.
inline void register_benchmark(const std::string& name, std::function<void()> fn) {
  benchmark::RegisterBenchmark(name.c_str(),
                               [fn](benchmark::State& st) {
                                 for (auto _ : st) fn();
                               })
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
}

/// Initializes Google Benchmark with 5 repetitions and aggregates only (unless the command
/// line sets them), runs `register_all`, runs the benchmarks, then `print_tables(reporter)`
/// (the program's summary from the medians). A bench program's whole main().
template <class Register, class Tables>
int run_benchmarks(int argc, char** argv, Register register_all, Tables print_tables) {
  MedianReporter reporter;
  std::vector<char*> args(argv, argv + argc);
  std::string reps = "--benchmark_repetitions=5";
  std::string agg = "--benchmark_report_aggregates_only=true";
  bool has_reps = false;
  for (int i = 1; i < argc; ++i)
    has_reps |= std::string(argv[i]).rfind("--benchmark_repetitions", 0) == 0;
  if (!has_reps) args.push_back(reps.data());
  args.push_back(agg.data());
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  std::printf("snippets %d.%d.%d, ISA %s, %d OpenMP threads max\n", version_major, version_minor,
              version_patch, std::string(x64::to_string(x64::best_host_isa())).c_str(),
              omp_get_max_threads());
  register_all();
  benchmark::RunSpecifiedBenchmarks(&reporter);
  print_tables(reporter);
  benchmark::Shutdown();
  return 0;
}

} // namespace snippets::bench
