// SPDX-License-Identifier: Apache-2.0
// snippets/reference/quantization.hpp: the defining formulas of FakeQuantize and Quantize.
//
// Both ops are defined in f32 arithmetic (ir/op_tags.hpp): every step is rounded to f32, as a
// kernel computes it, so the reference and a kernel agree bit for bit where a rounding decides
// the quantized value (a tie of round half to even, a value at a range's end). A step is
// computed in double and rounded to f32 once: for +, -, * and / of f32 values that is the f32
// result (double has more than twice f32's precision, so the double rounding is innocuous),
// and each step is a statement of its own, rounded before the next, so nothing is contracted
// into a fused multiply-add. The inputs are taken as f32 values (the values a kernel holds).
// passes/decompose_quantization.hpp builds the same steps out of kernel ops, and folds the
// per-tensor constants (FakeQuantizeRanges) with these functions.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "snippets/ir/op_tags.hpp"

namespace snippets::reference {

namespace quantization {
/// `x` rounded to f32 (kept in a double).
inline double f32(double x) { return static_cast<double>(to_f32(x)); }
} // namespace quantization

/// What a FakeQuantize computes from its four ranges, in f32: the ranges, their order and the
/// two scales.
struct FakeQuantizeRanges {
  double il = 0, ih = 0, ol = 0, oh = 0;
  double lo = 0, hi = 0;   // min(il, ih) and max(il, ih); NaN when either is NaN
  double isc = 0, osc = 0; // (levels - 1) / (ih - il) and (oh - ol) / (levels - 1)
};

inline FakeQuantizeRanges fake_quantize_ranges(double il, double ih, double ol, double oh,
                                               std::int64_t levels) {
  using quantization::f32;
  FakeQuantizeRanges r;
  r.il = f32(il);
  r.ih = f32(ih);
  r.ol = f32(ol);
  r.oh = f32(oh);
  // as Minimum and Maximum compute them (reference/eltwise.hpp)
  const bool nan = std::isnan(r.il) || std::isnan(r.ih);
  constexpr double qnan = std::numeric_limits<double>::quiet_NaN();
  r.lo = nan ? qnan : (r.il < r.ih ? r.il : r.ih);
  r.hi = nan ? qnan : (r.il > r.ih ? r.il : r.ih);
  const double steps = static_cast<double>(levels - 1); // exact in f32 (levels <= 2^24)
  r.isc = f32(steps / f32(r.ih - r.il));
  r.osc = f32(f32(r.oh - r.ol) / steps);
  return r;
}

/// The value between the ends: round((x - il) * isc) * osc + ol, each step in f32.
inline double fake_quantize_middle(double x, const FakeQuantizeRanges& r) {
  using quantization::f32;
  const double t = f32(f32(f32(x) - r.il) * r.isc);
  const double q = std::nearbyint(t); // half to even; an integer f32 holds
  const double m = f32(q * r.osc);
  return f32(m + r.ol);
}

/// FakeQuantize of one element (before the result is rounded to x's type).
inline double fake_quantize(double x, const FakeQuantizeRanges& r) {
  x = quantization::f32(x);
  if (x <= r.lo) return r.ol;
  if (x > r.hi) return r.oh;
  return fake_quantize_middle(x, r); // NaN x (or NaN ranges) gives NaN here
}

inline double formula(const ir::FakeQuantize& fq, double x, double il, double ih, double ol,
                      double oh) {
  return fake_quantize(x, fake_quantize_ranges(il, ih, ol, oh, fq.levels));
}

/// Quantize of one element: saturate(round(x / scale) + zero_point) as `q.to`.
inline double formula(const ir::Quantize& q, double x, double scale, double zero_point) {
  using quantization::f32;
  const double r = std::nearbyint(f32(f32(x) / f32(scale)));
  return round_to(q.to, f32(r + f32(zero_point))) + 0.0; // an integer 0 has no sign
}

} // namespace snippets::reference
