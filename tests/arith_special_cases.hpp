// SPDX-License-Identifier: Apache-2.0
// tests/arith_special_cases.hpp: the special cases of the general Power, Mod and FloorMod that
// every target's emitters are checked against bit for bit (tests/test_jit_math_ops.cpp for
// x64, tests/aarch64/test_aarch64_math.cpp for AArch64).
#pragma once

#include <array>
#include <limits>
#include <utility>
#include <vector>

namespace snippets::arith_cases {

inline constexpr double fmax_ = std::numeric_limits<float>::max();
inline constexpr double fmin_ = std::numeric_limits<float>::min();
inline constexpr double dmin_ = std::numeric_limits<float>::denorm_min();
inline constexpr double qnan_ = std::numeric_limits<double>::quiet_NaN();
inline constexpr double inf_ = std::numeric_limits<double>::infinity();

/// {x, y, pow(x, y)}: C11 F.10.4.4 case by case, then the parity of huge exponents (an
/// integer conversion saturates or wraps there), subnormal and overflowing results.
inline std::vector<std::array<double, 3>> power_special_cases() {
  const double qnan = qnan_, inf = inf_;
  return {{2, 0.0, 1},
          {qnan, -0.0, 1},
          {1, qnan, 1},
          {1, inf, 1},
          {-1, inf, 1},
          {-1, -inf, 1},
          {0.0, -3, inf},
          {-0.0, -3, -inf},
          {0.0, -2, inf},
          {-0.0, -2, inf},
          {-0.0, -0.5, inf},
          {0.0, -inf, inf},
          {0.0, 3, 0.0},
          {-0.0, 3, -0.0},
          {-0.0, 2, 0.0},
          {-0.0, 0.5, 0.0},
          {0.5, -inf, inf},
          {2, -inf, 0.0},
          {0.5, inf, 0.0},
          {2, inf, inf},
          {-inf, -3, -0.0},
          {-inf, -2, 0.0},
          {-inf, -0.5, 0.0},
          {-inf, 3, -inf},
          {-inf, 2, inf},
          {-inf, 0.5, inf},
          {inf, -1, 0.0},
          {inf, 2, inf},
          {-2, 0.5, qnan},
          {-2, 3, -8},
          {-2, -3, -0.125},
          {-8, 1.0 / 3, qnan},
          {qnan, 1, qnan},
          {2, qnan, qnan},
          {0.0, dmin_, 0.0},
          {inf, dmin_, inf},
          {-2, 16777216, inf},
          {-0.5, 2147483648.0, 0.0},
          {-1, 16777215, -1},
          {-1, 3e9, 1},
          {-2, 2147483648.0, inf},
          {10, 38, 1e38},
          {2, -149, dmin_},
          {2, 128, inf},
          {2, -150, 0.0},
          {-3, 5, -243},
          {4, 0.5, 2}};
}

/// {a, b} pairs where fmod and the floored remainder are hard: signs, zeros, infinities,
/// NaN, quotients far past 2^24, subnormal divisors.
inline std::vector<std::pair<double, double>> mod_special_pairs() {
  const double qnan = qnan_, inf = inf_;
  return {{5.5, 2},       {-5.5, 2},      {5.5, -2},      {-5.5, -2},    {6, 3},
          {-6, 3},        {6, -3},        {-0.0, 3},      {0.0, -3},     {1, 0.0},
          {inf, 2},       {2, inf},       {-2, inf},      {qnan, 1},     {1, qnan},
          {fmax_, dmin_}, {fmax_, 3},     {-fmax_, 0.1},  {1e30, 7e-40}, {3e38, 1e-30},
          {dmin_, dmin_}, {fmin_, dmin_}, {7e-40, 3e-45}, {0.1, 0.01}};
}

} // namespace snippets::arith_cases
