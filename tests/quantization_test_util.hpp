// SPDX-License-Identifier: Apache-2.0
// tests/quantization_test_util.hpp: what the quantization tests share (tests/test_quantization.cpp,
// tests/aarch64/test_aarch64_quantization.cpp): inputs around a range, where quantization is
// decided, and per-tensor FakeQuantize ranges that reach every form of the decomposition.
#pragma once

#include <array>
#include <limits>
#include <sstream>
#include <string>

#include "jit_test_util.hpp"

namespace snippets::quantization_test {

using namespace jit_test;

inline constexpr ElementType u8 = ElementType::u8, i8 = ElementType::i8, f16 = ElementType::f16,
                             bf16 = ElementType::bf16;

inline double next_up(double v) {
  return std::nextafter(float(v), std::numeric_limits<float>::max());
}
inline double next_down(double v) {
  return std::nextafter(float(v), -std::numeric_limits<float>::max());
}

/// `n` values around [lo, hi]: random ones inside and beyond it, and every 3rd a value where
/// quantization is decided: the ends and their f32 neighbours, `lo + (k + 1/2) * step` (a tie
/// when step is the exact width of a level), signed zeros, NaN, infinities, huge values.
inline std::vector<double> around(std::size_t n, std::uint64_t seed, double lo, double hi,
                                  double step) {
  Rng rng(seed);
  const double pad = (hi - lo) / 4 + 1;
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (i % 3 != 0) {
      v[i] = rng.uniform(std::min(lo, hi) - pad, std::max(lo, hi) + pad);
      continue;
    }
    switch (rng.integer(0, 9)) {
    case 0: v[i] = lo; break;
    case 1: v[i] = hi; break;
    case 2: v[i] = rng.integer(0, 1) ? next_up(lo) : next_down(lo); break;
    case 3: v[i] = rng.integer(0, 1) ? next_up(hi) : next_down(hi); break;
    case 4: v[i] = rng.integer(0, 1) ? 0.0 : -0.0; break;
    case 5: v[i] = std::array{qnan, inf, -inf}[std::size_t(rng.integer(0, 2))]; break;
    case 6: v[i] = rng.integer(0, 1) ? 1e30 : -1e30; break;
    default: v[i] = lo + (double(rng.integer(-2, 40)) + 0.5) * step; break;
    }
  }
  return v;
}

inline Tensor around_tensor(const Shape& s, std::uint64_t seed, double lo, double hi, double step,
                            ElementType t = f32) {
  return Tensor::from_values(t, s, around(std::size_t(s.element_count()), seed, lo, hi, step));
}

/// Ranges of a FakeQuantize: input [il, ih], output [ol, oh], `levels`.
struct Ranges {
  double il, ih, ol, oh;
  std::int64_t levels;
  /// The width of a level of the input range (ties lie half a width from a level).
  double step() const { return (ih - il) / double(levels - 1); }
  std::string describe() const {
    std::ostringstream os;
    os << "[" << il << ", " << ih << "] -> [" << ol << ", " << oh << "], " << levels << " levels";
    return os.str();
  }
};

/// Per-tensor ranges that the decomposition computes in each of its forms: ordinary 8-bit
/// ranges (lean), a zero and a -0 at the ends, a step that changes nothing, inverted and empty
/// input ranges, an inverted output range, two levels (Select form), huge levels.
inline constexpr Ranges per_tensor[] = {
    {0, 255, 0, 255, 256}, {-1, 1, -1, 1, 255},       {-8, 8, 0, 32, 33},  {-8, 8, -0.0, 32, 33},
    {0.1, 2.3, -4, 7, 7},  {-3, 5, 5, -3, 17},        {2, -2, -1, 1, 9},   {1.5, 1.5, -2, 2, 5},
    {-1, 1, 0, 1, 2},      {-100, 100, -1, 1, 65536}, {0, 1e-40, 0, 1, 3},
};

inline Graph fake_quantize_graph(const Shape& s, const Ranges& r, ElementType out = f32,
                                 ElementType in = f32) {
  Graph g;
  const auto x = g.parameter(in, s, "x");
  auto c = [&](double v) { return g.scalar(in, v); };
  const auto y = g.fake_quantize(x, c(r.il), c(r.ih), c(r.ol), c(r.oh), r.levels);
  g.result(out == in ? y : g.convert(y, out), "y");
  return g;
}

} // namespace snippets::quantization_test
