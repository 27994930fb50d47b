// bench/bench_util.hpp: what the Google Benchmark programs in bench/ share.
//
//  - Buffer: a 64-byte aligned f32 array, first touched by the OpenMP threads that use it;
//  - copy_streams: the bandwidth ceiling of R read streams and one written stream (ordinary
//    or non-temporal stores), AVX-512 with a scalar remainder;
//  - Unfused: a graph run one op at a time (one JIT kernel per op, intermediates in memory);
//  - small, large, base_name: the tensor sizes of the tables and the benchmark names;
//  - MedianReporter: the console reporter that also records the median of every benchmark
//    (real time, seconds) for the summary table a program prints at the end;
//  - run_benchmarks: Google Benchmark's main with 5 repetitions and aggregates only unless the
//    command line says otherwise.
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

/// y = sum of the `in` arrays: the bandwidth ceiling for that many read streams and one write.
inline void copy_streams(const std::vector<const float*>& in, float* y, std::size_t n, int t,
                         bool nt) {
#pragma omp parallel num_threads(t)
  {
    const int id = omp_get_thread_num(), nth = omp_get_num_threads();
    std::size_t lo = n * std::size_t(id) / std::size_t(nth) / 16 * 16;
    std::size_t hi = id + 1 == nth ? n : n * std::size_t(id + 1) / std::size_t(nth) / 16 * 16;
    std::size_t i = lo;
    for (; i + 16 <= hi; i += 16) {
      __m512 v = _mm512_loadu_ps(in[0] + i);
      for (std::size_t k = 1; k < in.size(); ++k) v = _mm512_add_ps(v, _mm512_loadu_ps(in[k] + i));
      if (nt)
        _mm512_stream_ps(y + i, v);
      else
        _mm512_storeu_ps(y + i, v);
    }
    for (; i < hi; ++i) {
      float v = in[0][i];
      for (std::size_t k = 1; k < in.size(); ++k) v += in[k][i];
      y[i] = v;
    }
    if (nt) _mm_sfence();
  }
}

/// A graph as one kernel per op, intermediates in memory. Scalars feed their consumers'
/// kernels; every other input of an op is a buffer.
class Unfused {
public:
  /// `whole` has the Parameters `params` (in the order of the buffers passed to run).
  Unfused(const G& whole, const std::vector<ir::Value>& params) {
    std::map<ir::NodeId, int> buffer_of; // node -> temp index, or -(k+1) for input k
    for (std::size_t k = 0; k < params.size(); ++k) buffer_of[params[k].output.node] = -int(k) - 1;
    for (ir::NodeId id : whole.topological_order()) {
      const auto& node = whole.node(id);
      if (ir::is<ir::Parameter>(node.op) || ir::is<ir::Result>(node.op) ||
          ir::is<ir::Scalar>(node.op))
        continue;
      G one;
      std::vector<ir::Value> ins;
      std::vector<int> ids;
      for (const ir::Output& o : node.inputs) {
        const auto& src = whole.node(o.node);
        if (const auto* s = std::get_if<ir::Scalar>(&src.op)) {
          ins.push_back(one.scalar(f32, s->value));
        } else {
          ins.push_back(one.parameter(f32, whole.type(o).shape));
          ids.push_back(buffer_of.at(o.node));
        }
      }
      one.result(one.make(node.op, ins)[0]);
      kernels_.push_back(compile(one));
      temps_.push_back(std::make_unique<Buffer>(
          static_cast<std::size_t>(node.outputs[0].shape.element_count())));
      ids.push_back(int(temps_.size()) - 1);
      buffer_of[id] = ids.back();
      args_.push_back(ids);
    }
  }

  void run(const std::vector<const float*>& inputs, int threads) const {
    for (std::size_t k = 0; k < kernels_.size(); ++k) {
      std::vector<const void*> in;
      const auto& ids = args_[k];
      for (std::size_t a = 0; a + 1 < ids.size(); ++a)
        in.push_back(ids[a] < 0 ? inputs[std::size_t(-ids[a] - 1)]
                                : temps_[std::size_t(ids[a])]->p);
      void* out[] = {temps_[std::size_t(ids.back())]->p};
      kernels_[k].run_unchecked(in.data(), out, {.threads = threads});
    }
  }
  std::size_t kernel_count() const { return kernels_.size(); }

private:
  std::vector<CompiledKernel> kernels_;
  std::vector<std::vector<int>> args_; // per kernel: buffer ids (inputs..., output)
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
/// line sets them), runs `register_all`, runs the benchmarks through `reporter`.
template <class Register>
void run_benchmarks(int argc, char** argv, MedianReporter& reporter, Register register_all) {
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
}

} // namespace snippets::bench
