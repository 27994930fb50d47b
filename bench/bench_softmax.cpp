// SPDX-License-Identifier: Apache-2.0
// bench/bench_softmax.cpp: Softmax over the last axis, fused, against the alternatives, in one
// run.
//
// Shapes: rows of 1024 ([32768, 1024], 128 MiB, and [64, 1024], 256 KiB in L2) and rows of 37
// ([906876, 37], 128 MiB, and [1771, 37], 256 KiB), 1 and 2 threads. It times:
//   jit      Softmax as one JIT kernel (row by row: max, exp and sum, scale; one row of
//            exponentials in per-thread scratch)
//   dyn      the same body with both dimensions dynamic (one kernel for any rows of any
//            length), run with a configuration computed once
//   unfused  the decomposition (ReduceMax, Subtract, Exp, ReduceSum, Divide) one JIT kernel per
//            op, intermediates in memory
//   loop     a hand-written two-pass loop (max, then exp and sum into the output, then scale the
//            row while it is in cache), -O3 -march=native, OpenMP over rows
//   copy     the bandwidth ceiling of the same traffic (one read and one write of the tensor)
// and prints a table of medians: GB/s of useful traffic (the tensor read once and written once),
// % of the copy ceiling measured in the same run, and the ratios (dynamic / static: the static
// kernel's time over the dynamic one's). Inputs are spread over
// [-8, 8). Usage:
//   ./build/bench/bench_softmax [--benchmark_repetitions=N] [--benchmark_filter=...]
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench_util.hpp"

namespace {

using namespace snippets;
using namespace snippets::bench;

struct Size {
  Dim rows, cols;
  const char* label;
};
constexpr Size sizes[] = {{64, 1024, "[64,1024] 256 KiB"},
                          {32768, 1024, "[32768,1024] 128 MiB"},
                          {1771, 37, "[1771,37] 256 KiB"},
                          {906876, 37, "[906876,37] 128 MiB"}};

std::string name_of(const Size& s, int t) {
  return "softmax/" + std::to_string(s.rows) + "x" + std::to_string(s.cols) + "/" +
         std::to_string(t) + "t/";
}

/// Row by row: the maximum, exp(x - max) into the output with its sum, then the scaling.
void softmax_loop(const float* x, float* y, Dim rows, Dim cols, int t) {
#pragma omp parallel for num_threads(t) schedule(static)
  for (Dim r = 0; r < rows; ++r) {
    const float* in = x + r * cols;
    float* out = y + r * cols;
    float m = in[0];
    for (Dim c = 1; c < cols; ++c) m = std::max(m, in[c]);
    float sum = 0;
    for (Dim c = 0; c < cols; ++c) sum += (out[c] = std::exp(in[c] - m));
    const float inv = 1.0f / sum;
    for (Dim c = 0; c < cols; ++c) out[c] *= inv;
  }
}

struct Case {
  std::unique_ptr<Buffer> in, out;
  std::optional<CompiledKernel> jit, dyn;
  std::optional<RuntimeConfig> dyn_config;
  std::unique_ptr<Unfused> unfused;
};

void register_all() {
  for (const Size& s : sizes) {
    const auto n = static_cast<std::size_t>(s.rows * s.cols);
    auto c = std::make_shared<Case>();
    c->in = std::make_unique<Buffer>(n, -8.0f, 8.0f);
    c->out = std::make_unique<Buffer>(n);
    for (const bool dyn : {false, true}) {
      G g;
      g.result(g.softmax(g.parameter(f32, {dyn ? dynamic : s.rows, dyn ? dynamic : s.cols}), -1));
      (dyn ? c->dyn : c->jit).emplace(compile(g));
    }
    c->dyn_config.emplace(c->dyn->configure(std::vector<Shape>{Shape{s.rows, s.cols}}));
    {
      G g;
      const auto x = g.parameter(f32, {s.rows, s.cols});
      const auto e = g.exp(g.subtract(x, g.reduce_max(x, {-1})));
      g.result(g.divide(e, g.reduce_sum(e, {-1})));
      c->unfused = std::make_unique<Unfused>(g);
    }
    for (int t : {1, 2}) {
      const std::string base = name_of(s, t);
      register_benchmark(base + "jit", [c, t] {
        const void* in[] = {c->in->p};
        void* out[] = {c->out->p};
        c->jit->run_unchecked(in, out, {.threads = t});
      });
      register_benchmark(base + "dyn", [c, t] {
        const void* in[] = {c->in->p};
        void* out[] = {c->out->p};
        c->dyn->run_configured(*c->dyn_config, in, out, {.threads = t});
      });
      register_benchmark(base + "unfused", [c, t] { c->unfused->run({c->in->p}, {c->out->p}, t); });
      register_benchmark(base + "loop",
                         [c, s, t] { softmax_loop(c->in->p, c->out->p, s.rows, s.cols, t); });
      register_benchmark(base + "copy",
                         [c, t] { copy_streams({c->in->p}, c->out->p, c->in->n, t, false); });
    }
  }
}

void print_table(const MedianReporter& rep) {
  std::printf("\n| shape | threads | jit GB/s | unfused GB/s | loop GB/s | copy GB/s | jit %% of "
              "copy | jit / unfused | jit / loop | dynamic / static |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  for (const Size& s : sizes)
    for (int t : {1, 2}) {
      const std::string base = name_of(s, t);
      auto sec = [&](const char* v) { return rep.seconds(base + v); };
      if (sec("jit") == 0) continue;
      const double bytes = 8.0 * double(s.rows * s.cols); // read once, written once
      auto gbs = [&](const char* v) { return sec(v) > 0 ? bytes / sec(v) * 1e-9 : 0.0; };
      std::printf("| %s | %d | %.1f | %.1f | %.1f | %.1f | %.0f%% | %.2fx | %.2fx | %.2f |\n",
                  s.label, t, gbs("jit"), gbs("unfused"), gbs("loop"), gbs("copy"),
                  gbs("copy") > 0 ? 100.0 * gbs("jit") / gbs("copy") : 0.0,
                  sec("unfused") > 0 ? sec("unfused") / sec("jit") : 0.0,
                  sec("loop") > 0 ? sec("loop") / sec("jit") : 0.0,
                  sec("dyn") > 0 ? sec("jit") / sec("dyn") : 0.0);
    }
}

} // namespace

int main(int argc, char** argv) { return run_benchmarks(argc, argv, register_all, print_table); }
