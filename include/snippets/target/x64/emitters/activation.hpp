// SPDX-License-Identifier: Apache-2.0
// snippets/target/x64/emitters/activation.hpp: emitters of the transcendental and activation
// ops: Exp, Log, Sigmoid, Tanh, Erf, Gelu (erf and tanh forms), Swish, Mish, Elu, SoftPlus,
// LeakyRelu and PRelu. Contracts in emitter.hpp; the approximations in math.hpp.
//
// Special values follow the reference (reference/eltwise.hpp, i.e. libm in double): NaN in,
// NaN out; infinities and overflow saturate as the math does (exp(-inf) = 0, exp(89) = inf,
// log(0) = -inf, log(x < 0) = NaN, sigmoid and tanh exactly 0 and +-1 far out, tanh(-0) = -0);
// subnormal inputs and results are computed, not flushed. The accuracy each op reaches, and
// the bound its test asserts, are in docs/math_accuracy.md. The logistic functions are
// evaluated as 1 / (1 + e) or e / (1 + e) with e = exp(-|v|) <= 1 so that neither side
// overflows or cancels; tanh goes through expm1 so that small arguments keep their relative
// accuracy. The logistic quotients are one VDIVPS; tanh's uses RCP14PS / RCPPS with Newton and
// a residual against the exact denominator (math.hpp).
#pragma once

#include <cmath>
#include <limits>

#include "snippets/target/x64/emitters/math.hpp"

namespace snippets::x64 {

namespace detail {
/// Whether an f64 attribute is usable as an f32 constant (finite after rounding).
inline bool finite_f32(double v) {
  return std::isfinite(v) && std::fabs(v) <= std::numeric_limits<float>::max();
}
/// v = hi + lo with hi = v rounded toward zero to f32 and lo = f32(v - hi): x * v to within
/// 2^-47 relative. hi and lo have one sign, so x = +-inf gives +-inf, not inf - inf.
struct SplitConstant {
  float hi, lo;
  explicit SplitConstant(double v) : hi(static_cast<float>(v)) {
    if (std::fabs(double(hi)) > std::fabs(v)) hi = std::nextafter(hi, 0.0f);
    lo = static_cast<float>(v - double(hi));
  }
};
/// dst = x * v (v given in double): one FMA over the split when v is not an f32, so the
/// product is that of the double attribute rounded once. dst != x.
template <class Vmm> void multiply_by(EmitContext<Vmm>& c, Vmm dst, Vmm x, double v) {
  const SplitConstant k(v);
  if (k.lo == 0) {
    c.h.vmulps(dst, x, c.consts.value(k.hi));
  } else {
    c.h.vmulps(dst, x, c.consts.value(k.lo));
    c.h.vfmadd231ps(dst, x, c.consts.value(k.hi));
  }
}
} // namespace detail

/// exp(x): Cody-Waite reduction, degree-6 polynomial, scaling with one rounding.
template <> struct Emitter<ir::Exp> {
  static constexpr int scratch = 2;
  template <class Vmm>
  static void emit(EmitContext<Vmm>& c, const ir::Exp& op, Vmm dst, std::span<const Vmm> in) {
    math::exp(c, dst, in[0], c.scratch[0], c.scratch[1], op.nonpositive);
  }
};

/// log(x) = k ln2 + log1p(m - 1), m in [3/4, 3/2).
template <> struct Emitter<ir::Log> {
  static constexpr int scratch = 3;
  template <class Vmm>
  static void emit(EmitContext<Vmm>& c, const ir::Log&, Vmm dst, std::span<const Vmm> in) {
    math::log(c, c.scratch[2], in[0], c.scratch[0], c.scratch[1]);
    c.h.vmovaps(dst, c.scratch[2]);
  }
};

/// 1 / (1 + exp(-x)) as 1 / (1 + e) or e / (1 + e), e = exp(-|x|) (see math::logistic).
template <> struct Emitter<ir::Sigmoid> {
  static constexpr int scratch = 4;
  template <class Vmm>
  static void emit(EmitContext<Vmm>& c, const ir::Sigmoid&, Vmm dst, std::span<const Vmm> in) {
    math::logistic(c, in[0], in[0], c.scratch[0], c.scratch[1], c.scratch[2], c.scratch[3]);
    c.h.vmovaps(dst, c.scratch[0]);
  }
};

/// tanh(x) = copysign(-m / (m + 2), x) with m = expm1(-2|x|) in (-1, 0]: no cancellation at
/// small |x|, exactly +-1 from |x| = 9.01 on. The quotient is corrected against the exact
/// m + 2: the residual m - 2q - q m is exact (2q is within a factor 2 of m).
template <> struct Emitter<ir::Tanh> {
  static constexpr int scratch = 4;
  template <class Vmm>
  static void emit(EmitContext<Vmm>& c, const ir::Tanh&, Vmm dst, std::span<const Vmm> in) {
    const Vmm x = in[0], t0 = c.scratch[0], t1 = c.scratch[1], m = c.scratch[2], r = c.scratch[3];
    c.h.vorps(t0, x, c.consts.bits(math::sign)); // -|x|
    c.h.vaddps(t0, t0, t0);                      // -2|x|, exact
    math::expm1_nonpositive(c, m, t0, t0, t1, r);
    c.h.vaddps(t0, m, c.consts.value(2.0f));
    c.h.vmovaps(r, m);
    math::divide(c, r, t0, t1, 0.5f, 1.0f, [&](Vmm rr, Vmm q) {
      c.h.vfnmadd231ps(rr, q, c.consts.value(2.0f)); // m - 2q, exact (|m| / 2 <= |q| <= |m|)
      // - q m with m rounded to a multiple of 2^-53 (a change under 2^-54 relative): tiny m
      // gives 0, not a subnormal product (an assist)
      c.h.vaddps(m, m, c.consts.bits(math::tiny_shifter));
      c.h.vsubps(m, m, c.consts.bits(math::tiny_shifter));
      c.h.vfnmadd231ps(rr, q, m);
    });
    math::copy_sign(c, t1, t1, x, t0); // -tanh|x| with the sign of x
    c.h.vmovaps(dst, t1);
  }
};

/// erf(x): x + x p(x^2) for |x| < 0.875, 1 - exp(q(|x|)) above (see math::erf).
template <> struct Emitter<ir::Erf> {
  static constexpr int scratch = 3;
  template <class Vmm>
  static void emit(EmitContext<Vmm>& c, const ir::Erf&, Vmm dst, std::span<const Vmm> in) {
    math::erf(c, c.scratch[2], in[0], c.scratch[0], c.scratch[1], math::erf_tables);
    c.h.vmovaps(dst, c.scratch[2]);
  }
};

/// erf form: x/2 (1 + erf(x / sqrt 2)), 1 + erf from erfc in the tails (math::erf, one_plus),
/// the 1/sqrt 2 folded into the coefficients.
/// tanh form: 0.5 x (1 + tanh(u)) = x * sigmoid(2u), 2u = x (c1 + c2 x^2), the sigmoid as for
/// Sigmoid (2u has the sign of x).
template <> struct Emitter<ir::Gelu> {
  static constexpr int scratch = 4;
  template <class Vmm>
  static void emit(EmitContext<Vmm>& c, const ir::Gelu& op, Vmm dst, std::span<const Vmm> in) {
    const Vmm x = in[0], s0 = c.scratch[0], s1 = c.scratch[1], s2 = c.scratch[2], s3 = c.scratch[3];
    if (op.approximation == ir::GeluApproximation::erf) {
      math::erf(c, s2, x, s0, s1, math::gelu_erf_tables, true); // 1 + erf(x / sqrt 2)
      c.h.vmulps(s0, x, c.consts.value(0.5f));
      c.h.vmulps(dst, s2, s0); // a product, so that x << 0 gives -0 like the reference
      return;
    }
    // 2u = x (c1 + c2 x^2), c1 = 2 sqrt(2/pi), c2 = 2 * 0.044715 * sqrt(2/pi); x^2 from
    // max(|x|, 2^-40) (no subnormal product for tiny x)
    if constexpr (EmitContext<Vmm>::avx512) {
      c.h.vrangeps(s0, x, c.consts.bits(math::square_floor), 0x0b); // max(|x|, 2^-40)
      c.h.vmulps(s0, s0, s0);
      c.h.vmovups(s2, c.consts.bits(0x3fcc422a));
      c.h.vfmadd231ps(s2, s0, c.consts.bits(0x3d922279));
      c.h.vmulps(s2, s2, x);
      // |2u| above 87 counts as 87 (a subnormal e would cost an assist) and the result is
      // x * 0 below x = -10 (2u < -87.3: |x sigmoid(2u)| < 2e-36, and the reference's 1 + tanh
      // is already 0 there: -0, NaN for -inf); x's NaN comes through the numerator x or x e
      math::logistic(c, s2, x, s0, s1, s2, s3, {.lo = -87.0f, .nan_elsewhere = true}, x);
      c.h.vcmpps(c.kscratch, x, c.consts.value(-10.0f), detail::cmp_lt_oq);
      c.h.vmulps(s0 | c.kscratch, x, c.consts.bits(0));
    } else {
      // -|2u| = |x| * -(c1 + c2 x^2), what the logistic needs; e = exp(-|2u|) reaches 0 at
      // -|2u| = -104 (|x| > 10.7): x e is -0 there, NaN for -inf, and subnormal (computed,
      // not an error) for x in [-10.7, -9.9]; x's NaN comes through |x|
      c.h.vandps(s0, x, c.consts.bits(math::abs_mask));
      c.h.vmaxps(s1, s0, c.consts.bits(math::square_floor));
      c.h.vmulps(s1, s1, s1);
      c.h.vmovups(s2, c.consts.bits(0xbfcc422a));
      c.h.vfmadd231ps(s2, s1, c.consts.bits(0xbd922279));
      c.h.vmulps(s2, s2, s0);
      math::logistic(c, s2, x, s0, s1, s2, s3, {.negative_abs = true}, x);
    }
    c.h.vmovaps(dst, s0);
  }
};

/// x * sigmoid(beta x) as x / (1 + e) or x e / (1 + e), e = exp(-|beta x|) (math::logistic);
/// beta * x with beta split into two f32 when it is not one. x = +inf gives inf (e is
/// bounded below, 1 + e is 1).
template <> struct Emitter<ir::Swish> {
  static constexpr int scratch = 4;
  static bool supports(const ir::Swish& op) { return detail::finite_f32(op.beta); }
  template <class Vmm>
  static void emit(EmitContext<Vmm>& c, const ir::Swish& op, Vmm dst, std::span<const Vmm> in) {
    const Vmm x = in[0], s0 = c.scratch[0], s1 = c.scratch[1], s2 = c.scratch[2], s3 = c.scratch[3];
    Vmm v = x;
    if (op.beta != 1.0) {
      detail::multiply_by(c, s2, x, op.beta);
      v = s2;
    }
    // beta * x has the sign of x, or the opposite one for a negative beta
    math::logistic(c, v, x, s0, s1, s2, s3, {.invert = op.beta < 0}, x);
    c.h.vmovaps(dst, s0);
  }
};

/// x tanh(softplus(x)) = x E(E + 2) / (E(E + 2) + 2), E = e^x = p 2^n, evaluated as
/// scale(x p (E + 2) / (E (E + 2) + 2), n): the 2^n comes last, so that the tail x e^x
/// (x < -87, where E is subnormal) keeps full precision. x is raised to -110 (below, the
/// result is -0) and E uses min(x, 20) (above, the ratio is 1/E and the result x).
template <> struct Emitter<ir::Mish> {
  static constexpr int scratch = 4;
  template <class Vmm>
  static void emit(EmitContext<Vmm>& c, const ir::Mish&, Vmm dst, std::span<const Vmm> in) {
    const Vmm x = in[0], s0 = c.scratch[0], s1 = c.scratch[1], s2 = c.scratch[2], s3 = c.scratch[3];
    // xm = max(x, -110), NaN for NaN and for -inf (-inf * tanh(softplus(-inf)) = -inf * 0)
    c.h.vmovups(s1, c.consts.value(-110.0f));
    c.h.vmaxps(s0, s1, x);
    if constexpr (EmitContext<Vmm>::avx512) {
      c.h.vcmpps(c.kscratch, x, c.consts.bits(math::neg_inf), detail::cmp_eq_oq);
      c.h.vmovups(s0 | c.kscratch, c.consts.bits(math::qnan));
    } else {
      c.h.vcmpps(s1, x, c.consts.bits(math::neg_inf), detail::cmp_eq_oq);
      c.h.vorps(s0, s0, s1);
    }
    // x is not read again: dst is free from here on
    c.h.vminps(s1, s0, c.consts.value(20.0f));
    math::round_times_log2e(c, s2, s1);
    c.h.vfnmadd231ps(s1, s2, c.consts.bits(math::ln2_hi));
    c.h.vfnmadd231ps(s1, s2, c.consts.bits(math::ln2_lo));
    math::exp_poly(c, s3, s1); // p; E = p 2^n
    Vmm e = s1, n1 = s1, n2 = s2;
    if constexpr (EmitContext<Vmm>::avx512) {
      c.h.vscalefps(e, s3, s2);
    } else { // keep 2^(n/2) and 2^(n - n/2) for the two scalings
      e = dst;
      c.h.vcvtps2dq(s2, s2);
      c.h.vpsrad(n1, s2, 1);
      c.h.vpsubd(n2, s2, n1);
      c.h.vpslld(n1, n1, 23);
      c.h.vpaddd(n1, n1, c.consts.bits(math::one));
      c.h.vpslld(n2, n2, 23);
      c.h.vpaddd(n2, n2, c.consts.bits(math::one));
      c.h.vmulps(e, s3, n1);
      c.h.vmulps(e, e, n2);
    }
    // ratio u / (E u + 2) with u = E + 2: u's rounding moves both sides (and counts 2/den)
    const Vmm u = EmitContext<Vmm>::avx512 ? dst : s0;
    c.h.vmulps(s3, s3, s0); // x p
    c.h.vaddps(u, e, c.consts.value(2.0f));
    c.h.vfmadd213ps(e, u, c.consts.value(2.0f)); // E u + 2
    c.h.vdivps(u, u, e);
    c.h.vmulps(s3, s3, u);
    if constexpr (EmitContext<Vmm>::avx512) {
      c.h.vscalefps(dst, s3, s2);
    } else {
      c.h.vmulps(dst, s3, n1);
      c.h.vmulps(dst, dst, n2);
    }
  }
};

/// x > 0 ? x : alpha * expm1(x). The sign of a zero result is that of alpha * x's zero.
template <> struct Emitter<ir::Elu> {
  static constexpr int scratch = 4;
  static bool supports(const ir::Elu& op) { return detail::finite_f32(op.alpha); }
  template <class Vmm>
  static void emit(EmitContext<Vmm>& c, const ir::Elu& op, Vmm dst, std::span<const Vmm> in) {
    const Vmm x = in[0], t0 = c.scratch[0], t1 = c.scratch[1], m = c.scratch[2];
    math::expm1_nonpositive(c, m, x, t0, t1, c.scratch[3], true); // x > 0 lanes: replaced
    Vmm r = m;
    if (op.alpha != 1.0) {
      detail::multiply_by(c, t0, m, op.alpha);
      r = t0;
    }
    // for x <= 0 the result's sign is sign(x) xor sign(alpha), zeros included
    math::copy_sign(c, r, r, x, t1, op.alpha < 0);
    if constexpr (EmitContext<Vmm>::avx512) {
      c.h.vcmpps(c.kscratch, x, c.consts.value(0.0f), detail::cmp_gt_oq);
      c.h.vblendmps(dst | c.kscratch, r, x);
    } else {
      c.h.vcmpps(t1, x, c.consts.value(0.0f), detail::cmp_gt_oq);
      c.h.vblendvps(dst, r, x, t1);
    }
  }
};

/// log(1 + e^x) = max(x, 0) + log1p(e), e = exp(-|x|) in (0, 1]: log1p(e) is log1p(e) for
/// e < 1/2 and ln2 + log1p((e - 1) / 2) above (both arguments exact, in [-1/4, 1/2)).
template <> struct Emitter<ir::SoftPlus> {
  static constexpr int scratch = 4;
  template <class Vmm>
  static void emit(EmitContext<Vmm>& c, const ir::SoftPlus&, Vmm dst, std::span<const Vmm> in) {
    const Vmm x = in[0], t0 = c.scratch[0], t1 = c.scratch[1], e = c.scratch[2];
    math::exp_neg_abs(c, e, x, t0, t1);
    if constexpr (EmitContext<Vmm>::avx512) {
      c.h.vcmpps(c.kscratch, e, c.consts.value(0.5f), detail::cmp_ge_oq);
      c.h.vsubps(e | c.kscratch, e, c.consts.bits(math::one));
      c.h.vmulps(e | c.kscratch, e, c.consts.value(0.5f));
      math::log1p_poly(c, t0, e, c.scratch[3]);
      c.h.vaddps(t0 | c.kscratch, t0, c.consts.bits(math::ln2_hi));
    } else {
      c.h.vcmpps(t1, e, c.consts.value(0.5f), detail::cmp_ge_oq);
      c.h.vsubps(t0, e, c.consts.bits(math::one));
      c.h.vmulps(t0, t0, c.consts.value(0.5f));
      c.h.vblendvps(e, e, t0, t1);
      math::log1p_poly(c, t0, e, c.scratch[3]);
      c.h.vandps(t1, t1, c.consts.bits(math::ln2_hi));
      c.h.vaddps(t0, t0, t1);
    }
    c.h.vmaxps(t1, x, c.consts.value(0.0f)); // NaN: 0 here, but log1p(e) is NaN
    c.h.vaddps(dst, t1, t0);
  }
};

namespace detail {
/// dst = x < 0 ? negative : x (NaN and -0 keep x), the blend of LeakyRelu and PRelu. `m` is
/// a scratch register (AVX2 only).
template <class Vmm> void blend_negative(EmitContext<Vmm>& c, Vmm dst, Vmm x, Vmm negative, Vmm m) {
  if constexpr (EmitContext<Vmm>::avx512) {
    c.h.vcmpps(c.kscratch, x, c.consts.value(0.0f), cmp_lt_oq);
    c.h.vblendmps(dst | c.kscratch, x, negative);
  } else {
    c.h.vcmpps(m, x, c.consts.value(0.0f), cmp_lt_oq);
    c.h.vblendvps(dst, x, negative, m);
  }
}
} // namespace detail

/// x >= 0 || isnan(x) ? x : alpha * x, the product rounded once from the double alpha.
template <> struct Emitter<ir::LeakyRelu> {
  static constexpr int scratch = 2;
  static bool supports(const ir::LeakyRelu& op) { return detail::finite_f32(op.alpha); }
  template <class Vmm>
  static void emit(EmitContext<Vmm>& c, const ir::LeakyRelu& op, Vmm dst, std::span<const Vmm> in) {
    detail::multiply_by(c, c.scratch[0], in[0], op.alpha);
    detail::blend_negative(c, dst, in[0], c.scratch[0], c.scratch[1]);
  }
};

/// x >= 0 || isnan(x) ? x : slope * x with a tensor slope (a scalar, or per channel: the
/// data-flow pass Canonicalize makes a [C] slope broadcast as [C,1,...,1]). The f32 product
/// is rounded once, as the reference's, so the result is bit-exact.
template <> struct Emitter<ir::PRelu> {
  static constexpr int scratch = 2;
  template <class Vmm>
  static void emit(EmitContext<Vmm>& c, const ir::PRelu&, Vmm dst, std::span<const Vmm> in) {
    c.h.vmulps(c.scratch[0], in[0], in[1]);
    detail::blend_negative(c, dst, in[0], c.scratch[0], c.scratch[1]);
  }
};

} // namespace snippets::x64
