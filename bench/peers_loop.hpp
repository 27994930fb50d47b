// SPDX-License-Identifier: Apache-2.0
// bench/peers_loop.hpp: the hand-written fused loop ("what the compiler makes of it").
//
// One loop per workload computing every output in one pass, compiled with -O3 -march=native
// and split over threads by `#pragma omp parallel for schedule(static)`. The activations call
// std::tanh / std::exp: GCC 12 does not vectorise those calls without -ffast-math (glibc's
// vector variants need -fno-math-errno), so those loops are scalar around the libm call; the
// arithmetic workloads vectorise (AVX-512). docs/benchmarks.md records what the binary holds.
// Softmax goes row by row (as bench_softmax's loop): the maximum, exp(x - max) into the output
// with its sum, then the row scaled by 1 / sum while it is in cache. bf16 is converted by hand:
// in by shifting the 16 bits up, out rounded to nearest even on the f32 bits.
// Header-only and tied to bench_peers.cpp; not part of the library.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

#include "peers_case.hpp"

namespace snippets::bench::peers {

inline float from_bf16(std::uint16_t b) { return std::bit_cast<float>(std::uint32_t{b} << 16); }
/// Round to nearest even: add 0x7fff plus the lowest bit kept, drop the 16 low bits (finite
/// values only, which is all the workloads produce).
inline std::uint16_t to_bf16(float f) {
  const auto u = std::bit_cast<std::uint32_t>(f);
  return std::uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

inline Runner make_loop(const Case& c) {
  const Case* cp = &c;
  const std::size_t n = c.n, C = std::size_t(c.cols);
  switch (c.w) {
  case Workload::chain:
    return [cp, n](int t) {
      const float *a = cp->input(0), *b = cp->input(1), *x = cp->input(2);
      float* y = cp->output(0);
#pragma omp parallel for num_threads(t) schedule(static)
      for (std::size_t i = 0; i < n; ++i) y[i] = std::max(a[i] * b[i] + x[i], 0.0f);
    };
  case Workload::bias_sigmoid:
    return [cp, n, C](int t) {
      const float *x = cp->input(0), *bias = cp->input(1);
      float* y = cp->output(0);
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
      const float* x = cp->input(0);
      float* y = cp->output(0);
#pragma omp parallel for num_threads(t) schedule(static)
      for (std::size_t i = 0; i < n; ++i) {
        const float v = x[i];
        y[i] = 0.5f * v * (1.0f + std::tanh(gelu_k * (v + gelu_c * v * v * v)));
      }
    };
  case Workload::swish:
    return [cp, n](int t) {
      const float* x = cp->input(0);
      float* y = cp->output(0);
#pragma omp parallel for num_threads(t) schedule(static)
      for (std::size_t i = 0; i < n; ++i) y[i] = x[i] / (1.0f + std::exp(-x[i]));
    };
  case Workload::two_outputs:
    return [cp, n](int t) {
      const float *a = cp->input(0), *b = cp->input(1), *x = cp->input(2);
      float *y1 = cp->output(0), *y2 = cp->output(1);
#pragma omp parallel for num_threads(t) schedule(static)
      for (std::size_t i = 0; i < n; ++i) {
        const float s = a[i] + b[i];
        y1[i] = s;
        y2[i] = s * x[i];
      }
    };
  case Workload::softmax1024:
  case Workload::softmax37:
    return [cp, n, C](int t) {
      const float* x = cp->input(0);
      float* y = cp->output(0);
      const std::size_t rows = n / C;
#pragma omp parallel for num_threads(t) schedule(static)
      for (std::size_t r = 0; r < rows; ++r) {
        const float* in = x + r * C;
        float* out = y + r * C;
        float m = in[0];
        for (std::size_t j = 1; j < C; ++j) m = std::max(m, in[j]);
        float sum = 0;
        for (std::size_t j = 0; j < C; ++j) sum += (out[j] = std::exp(in[j] - m));
        const float inv = 1.0f / sum;
        for (std::size_t j = 0; j < C; ++j) out[j] *= inv;
      }
    };
  case Workload::bias_sigmoid_bf16:
    return [cp, n, C](int t) {
      const std::uint16_t *x = cp->input<std::uint16_t>(0), *bias = cp->input<std::uint16_t>(1);
      std::uint16_t* y = cp->output<std::uint16_t>(0);
      const std::size_t rows = n / C;
#pragma omp parallel for num_threads(t) schedule(static)
      for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t j = 0; j < C; ++j) {
          const float v = (from_bf16(x[r * C + j]) + from_bf16(bias[j])) * bias_scale;
          y[r * C + j] = to_bf16(1.0f / (1.0f + std::exp(-v)));
        }
    };
  }
  return {};
}

} // namespace snippets::bench::peers
