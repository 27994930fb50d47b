// bench/peers_loop.hpp: the hand-written fused loop ("what the compiler makes of it").
//
// One loop per workload computing every output in one pass, compiled with -O3 -march=native
// and split over threads by `#pragma omp parallel for schedule(static)`. The activations call
// std::tanh / std::exp: GCC 12 does not vectorise those calls without -ffast-math (glibc's
// vector variants need -fno-math-errno), so those loops are scalar around the libm call; the
// arithmetic workloads vectorise (AVX-512). docs/benchmarks.md records what the binary holds.
// Header-only and tied to bench_peers.cpp; not part of the library.
#pragma once

#include <algorithm>
#include <cmath>

#include "peers_case.hpp"

namespace snippets::bench::peers {

inline Runner make_loop(const Case& c) {
  const Case* cp = &c;
  const std::size_t n = c.n, C = std::size_t(channels);
  switch (c.w) {
  case Workload::chain:
    return [cp, n](int t) {
      const float *a = cp->in_ptrs[0], *b = cp->in_ptrs[1], *x = cp->in_ptrs[2];
      float* y = cp->out_ptrs[0];
#pragma omp parallel for num_threads(t) schedule(static)
      for (std::size_t i = 0; i < n; ++i) y[i] = std::max(a[i] * b[i] + x[i], 0.0f);
    };
  case Workload::bias_sigmoid:
    return [cp, n, C](int t) {
      const float *x = cp->in_ptrs[0], *bias = cp->in_ptrs[1];
      float* y = cp->out_ptrs[0];
      const std::size_t rows = n / C;
#pragma omp parallel for num_threads(t) schedule(static)
      for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t j = 0; j < C; ++j) {
          const float v = (x[r * C + j] + bias[j]) * bias_scale;
          y[r * C + j] = 1.0f / (1.0f + std::exp(-v));
        }
    };
  case Workload::gelu_tanh:
    return [cp, n](int t) {
      const float* x = cp->in_ptrs[0];
      float* y = cp->out_ptrs[0];
#pragma omp parallel for num_threads(t) schedule(static)
      for (std::size_t i = 0; i < n; ++i) {
        const float v = x[i];
        y[i] = 0.5f * v * (1.0f + std::tanh(gelu_k * (v + gelu_c * v * v * v)));
      }
    };
  case Workload::swish:
    return [cp, n](int t) {
      const float* x = cp->in_ptrs[0];
      float* y = cp->out_ptrs[0];
#pragma omp parallel for num_threads(t) schedule(static)
      for (std::size_t i = 0; i < n; ++i) y[i] = x[i] / (1.0f + std::exp(-x[i]));
    };
  case Workload::two_outputs:
    return [cp, n](int t) {
      const float *a = cp->in_ptrs[0], *b = cp->in_ptrs[1], *x = cp->in_ptrs[2];
      float *y1 = cp->out_ptrs[0], *y2 = cp->out_ptrs[1];
#pragma omp parallel for num_threads(t) schedule(static)
      for (std::size_t i = 0; i < n; ++i) {
        const float s = a[i] + b[i];
        y1[i] = s;
        y2[i] = s * x[i];
      }
    };
  }
  return {};
}

} // namespace snippets::bench::peers
