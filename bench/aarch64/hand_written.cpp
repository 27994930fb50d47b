// SPDX-License-Identifier: Apache-2.0
// bench/aarch64/hand_written.cpp: the workloads of kernel_loops.cpp written by hand in C++, as
// a programmer would without a JIT, for `aarch64-linux-gnu-g++ -O3` to vectorize: the same
// algorithms as the AArch64 emitters (the exp of emitters/math.hpp: Cody-Waite, the degree-6
// table of target/math_coefficients.hpp, 2^n from the bits of n), so that the instruction
// counts of scripts/aarch64-loop-counts compare code generation, not methods. The MatMul is
// the loop order g++ vectorizes (i, k, j: a row of C accumulates a row of B times a[i][k]).
// Only compiled (-O3 -c) and disassembled, never run.
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace {

/// Written for the vectorizer: the Horner steps spelled out, n rounded by adding and
/// subtracting 1.5 * 2^23 (nearbyint does not vectorize at -O3), no branches.
inline float exp_approx(float x) {
  const float xc = std::fmax(x, -104.0f);
  const float n = (std::fmin(xc, 88.8f) * 1.44269504f + 12582912.0f) - 12582912.0f;
  float r = std::fma(-n, std::bit_cast<float>(0x3f317218u), xc);
  r = std::fma(-n, std::bit_cast<float>(0xb102e308u), r);
  float p = std::fma(std::bit_cast<float>(0x3ab511eau), r, std::bit_cast<float>(0x3c091ce5u));
  p = std::fma(p, r, std::bit_cast<float>(0x3d2aac69u));
  p = std::fma(p, r, std::bit_cast<float>(0x3e2aaa49u));
  p = std::fma(p, r, std::bit_cast<float>(0x3efffffeu));
  p = std::fma(std::fma(p, r, 1.0f), r, 1.0f);
  const auto ni = static_cast<std::int32_t>(n);
  const std::int32_t h = ni >> 1;
  return p * std::bit_cast<float>((h + 127) << 23) * std::bit_cast<float>((ni - h + 127) << 23);
}

} // namespace

extern "C" {

void relu_fma(const float* a, const float* b, const float* c, float* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] = std::fmax(std::fma(a[i], b[i], c[i]), 0.0f);
}

/// x sigmoid(2u), 2u = x (c1 + c2 x^2), as x / (1 + e) or x e / (1 + e), e = exp(-|2u|).
void gelu_tanh(const float* x, float* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const float v = x[i];
    const float u2 = v * std::fma(v * v, 0.0713548162f, 1.59576912f);
    const float e = exp_approx(-std::fabs(u2));
    y[i] = (u2 < 0 ? v * e : v) / (1.0f + e);
  }
}

/// Each row: m = max, e = exp(x - m) (kept), s = sum e, y = e * (1 / s).
void softmax_rows(const float* x, float* y, std::size_t rows, std::size_t n) {
  for (std::size_t r = 0; r < rows; ++r) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    float m = -INFINITY;
    for (std::size_t i = 0; i < n; ++i) m = std::fmax(m, xr[i]);
    float s = 0;
    for (std::size_t i = 0; i < n; ++i) {
      yr[i] = exp_approx(xr[i] - m);
      s += yr[i];
    }
    const float inv = 1.0f / s;
    for (std::size_t i = 0; i < n; ++i) yr[i] *= inv;
  }
}

/// C [m, n] = A [m, k] B [k, n], row-major.
void matmul(const float* __restrict a, const float* __restrict b, float* __restrict c,
            std::size_t m, std::size_t n, std::size_t k) {
  for (std::size_t i = 0; i < m; ++i) {
    float* ci = c + i * n;
    for (std::size_t j = 0; j < n; ++j) ci[j] = 0;
    for (std::size_t d = 0; d < k; ++d) {
      const float x = a[i * k + d];
      const float* bd = b + d * n;
      for (std::size_t j = 0; j < n; ++j) ci[j] += x * bd[j];
    }
  }
}
}
