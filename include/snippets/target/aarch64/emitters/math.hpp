// SPDX-License-Identifier: Apache-2.0
// snippets/target/aarch64/emitters/math.hpp: the approximation routines of the AArch64
// transcendental emitters (exp, expm1, log, erf, the logistic quotient) and the emitters of
// Exp, Log, Sigmoid, Tanh, Erf, Gelu (both forms), Swish, Elu, SoftPlus and Mish.
//
// The polynomials are the project's fitted tables (target/math_coefficients.hpp), the same as
// the x64 target's; the reductions follow x64's AVX2 path where NEON has no counterpart of an
// AVX-512 instruction: 2^n is made from the bits of n as two normal factors 2^(n/2) and
// 2^(n - n/2), so that a subnormal result rounds once. NEON has FMA (FMLA/FMLS accumulate into
// their destination), FRINTN (round to nearest even) and an exact FDIV.
// Every routine works on caller-given registers: inputs are read-only unless stated, temps are
// named, the output differs from the temps. Special values follow the reference: NaN in, NaN
// out; exp(-inf) = 0 and overflow to inf; log(0) = -inf, log(x < 0) = NaN; sigmoid and tanh
// reach 0 and +-1 exactly far out; tanh(-0) = -0. The accuracy each emitter reaches is in
// docs/math_accuracy.md ("AArch64").
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <utility>

#include "snippets/ir/op_tags.hpp"
#include "snippets/target/aarch64/emitters/emitter.hpp"
#include "snippets/target/math_coefficients.hpp"

namespace snippets::aarch64 {

namespace math {

using namespace snippets::math_coefficients;

// Cody-Waite split of ln2 (ln2_hi is a multiple of 2^-24: x - n ln2_hi is exact with an FMA).
inline constexpr std::uint32_t ln2_hi = 0x3f317218, ln2_lo = 0xb102e308, log2e = 0x3fb8aa3b,
                               one = 0x3f800000, pos_inf = 0x7f800000, neg_inf = 0xff800000,
                               flt_min = 0x00800000;
/// exp(x) rounds to 0 below -103.98 and overflows above 88.73: -104 keeps n >= -150, 88.8
/// gives n = 128 (the reduced argument carries the rest).
inline constexpr float exp_lo = -104.0f, exp_hi = 88.8f;

/// k(x) by Horner with FMA, alternating between acc and tmp (each step loads the next
/// coefficient into the free one and accumulates into it). Returns the register that holds
/// the result (acc or tmp). acc, tmp and x distinct.
inline Vec horner(EmitContext& c, Vec acc, Vec tmp, Vec x, std::span<const std::uint32_t> k) {
  c.consts.load_bits(acc, k.back());
  for (std::size_t i = k.size() - 1; i-- > 0;) {
    c.consts.load_bits(tmp, k[i]);
    c.a.fmla(tmp.s4(), acc.s4(), x.s4());
    std::swap(acc, tmp);
  }
  return acc;
}

/// v *= 2^n for integral n (f32) in [-252, 254]: 2^(n/2) and 2^(n - n/2) from the bits of n
/// are both normal, so only the second product rounds (subnormal results once, overflow to
/// inf). Destroys n, t and u; v, n, t, u distinct.
inline void scale(EmitContext& c, Vec v, Vec n, Vec t, Vec u) {
  auto& a = c.a;
  a.fcvtzs(n.s4(), n.s4());  // exact: n is integral
  a.sshr(t.s4(), n.s4(), 1); // floor(n / 2)
  a.sub(n.s4(), n.s4(), t.s4());
  const Vec bias = c.consts.bits_in(127, u);
  a.add(t.s4(), t.s4(), bias.s4());
  a.add(n.s4(), n.s4(), bias.s4());
  a.shl(t.s4(), t.s4(), 23);
  a.shl(n.s4(), n.s4(), 23);
  a.fmul(v.s4(), v.s4(), t.s4()); // exact: 2^(n/2) and the product are normal
  a.fmul(v.s4(), v.s4(), n.s4());
}

/// n = round(m log2e), r -= n ln2 (two FMLS: Cody-Waite). r may be m; n, r, k distinct.
inline void reduce(EmitContext& c, Vec r, Vec n, Vec m, Vec k) {
  c.a.fmul(n.s4(), m.s4(), c.consts.bits_in(log2e, k).s4());
  c.a.frintn(n.s4(), n.s4());
  c.a.fmls(r.s4(), n.s4(), c.consts.bits_in(ln2_hi, k).s4()); // exact
  c.a.fmls(r.s4(), n.s4(), c.consts.bits_in(ln2_lo, k).s4());
}

/// dst = exp(x): NaN -> NaN, -inf -> 0, x > 88.72 -> inf, subnormal results for x in
/// [-103.97, -87.34] rounded once. x is clamped to [-104, 88.8] for n (FMAX/FMIN propagate
/// NaN), and r keeps x above 88.8 so that +inf overflows in the polynomial. exp(r) =
/// 1 + r (1 + r q(r)) with the degree-6 table. Temps t0, t1, t2; dst may be x.
inline void exp(EmitContext& c, Vec dst, Vec x, Vec t0, Vec t1, Vec t2) {
  auto& a = c.a;
  a.fmax(t0.s4(), x.s4(), c.consts.value_in(exp_lo, t2).s4());
  a.fmin(t1.s4(), t0.s4(), c.consts.value_in(exp_hi, t2).s4());
  reduce(c, t0, t1, t1, t2); // r (t0), n (t1)
  const Vec p = horner(c, dst, t2, t0, exp_q), other = p.id() == dst.id() ? t2 : dst;
  c.consts.load_value(other, 1.0f);
  a.fmla(other.s4(), p.s4(), t0.s4());
  c.consts.load_value(p, 1.0f);
  a.fmla(p.s4(), other.s4(), t0.s4());
  if (p.id() != dst.id()) a.mov(dst.b16(), p.b16());
  scale(c, dst, t1, t0, t2);
}

/// out = expm1(y) for y <= 0 (below -20 it counts as -20, where expm1 is -1 in f32; NaN stays
/// NaN): n = round(y / ln2) in [-29, 0], r = y - n ln2, s = 2^n and expm1(y) = (s - 1) + s r +
/// s r^2 q(r), where s - 1 and s r are exact and their sum is split into hi + lo exactly
/// (Fast2Sum), so only the last addition rounds. Temps t0, t1, t2; y is read first (y may be
/// t0, not t1 or t2).
inline void expm1_nonpositive(EmitContext& c, Vec out, Vec y, Vec t0, Vec t1, Vec t2) {
  auto& a = c.a;
  a.fmax(t0.s4(), y.s4(), c.consts.value_in(-20.0f, t1).s4());
  reduce(c, t0, t1, t0, t2); // r (t0), n (t1)
  const Vec q = horner(c, out, t2, t0, expm1_q);
  if (q.id() != out.id()) a.mov(out.b16(), q.b16());
  a.fmul(out.s4(), out.s4(), t0.s4()); // r q(r)
  a.fcvtzs(t1.s4(), t1.s4());
  a.shl(t1.s4(), t1.s4(), 23);
  const Vec one_r = c.consts.bits_in(one, t2);
  a.add(t1.s4(), t1.s4(), one_r.s4());  // s = 2^n
  a.fmul(t0.s4(), t0.s4(), t1.s4());    // s r, exact
  a.fsub(t1.s4(), t1.s4(), one_r.s4()); // s - 1, exact
  a.fadd(t2.s4(), t1.s4(), t0.s4());    // hi
  a.fsub(t1.s4(), t2.s4(), t1.s4());
  a.fsub(t1.s4(), t0.s4(), t1.s4());  // lo
  a.fmla(t1.s4(), out.s4(), t0.s4()); // lo + s r * r q(r)
  a.fadd(out.s4(), t1.s4(), t2.s4());
}

/// out = log(x): x = 2^k m with m in [3/4, 3/2) (subnormal x scaled by 2^23 first),
/// log x = k ln2 + log1p(m - 1), log1p(f) = f + f^2 s(f) (degree 8), k ln2 added with the
/// hi/lo split. log(+-0) = -inf, log(x < 0) = NaN, log(+inf) = +inf, NaN -> NaN. Temps
/// t0..t3; out differs from x and them.
inline void log(EmitContext& c, Vec out, Vec x, Vec t0, Vec t1, Vec t2, Vec t3) {
  auto& a = c.a;
  a.fcmgt(t1.s4(), c.consts.bits_in(flt_min, t0).s4(),
          x.s4()); // x < FLT_MIN: subnormal (or not positive: fixed below)
  a.fmul(t0.s4(), x.s4(), c.consts.value_in(8388608.0f, t0).s4());
  a.mov(t2.b16(), t1.b16());
  a.bsl(t2.b16(), t0.b16(), x.b16());                             // x, scaled when subnormal
  a.and_(t1.b16(), t1.b16(), c.consts.value_in(23.0f, t0).b16()); // 23 where scaled, else 0
  const Vec three_quarters = c.consts.bits_in(0x3f400000, t0);
  a.sub(out.s4(), t2.s4(), three_quarters.s4()); // bits - bits(3/4): the exponent field is k
  a.and_(t2.b16(), out.b16(), c.consts.bits_in(0x007fffff, t3).b16());
  a.add(t2.s4(), t2.s4(), three_quarters.s4()); // m
  a.sshr(out.s4(), out.s4(), 23);
  a.scvtf(out.s4(), out.s4());
  a.fsub(t1.s4(), out.s4(), t1.s4());                         // k
  a.fsub(t2.s4(), t2.s4(), c.consts.value_in(1.0f, t0).s4()); // f = m - 1, exact
  const Vec s = horner(c, t0, t3, t2, log1p_s), y = s.id() == t0.id() ? t3 : t0;
  a.fmul(s.s4(), s.s4(), t2.s4());
  a.mov(y.b16(), t2.b16());
  a.fmla(y.s4(), s.s4(), t2.s4()); // f + f^2 s(f)
  a.fmla(y.s4(), t1.s4(), c.consts.bits_in(ln2_lo, s).s4());
  a.fmla(y.s4(), t1.s4(), c.consts.bits_in(ln2_hi, s).s4());
  // +inf -> +inf, +-0 -> -inf, x < 0 or NaN -> NaN (all ones)
  const Vec inf = c.consts.bits_in(pos_inf, s);
  a.fcmeq(t1.s4(), x.s4(), inf.s4());
  a.bsl(t1.b16(), inf.b16(), y.b16());
  a.fcmeq(t2.s4(), x.s4(), 0);
  a.bsl(t2.b16(), c.consts.bits_in(neg_inf, s).b16(), t1.b16());
  a.fcmge(t1.s4(), x.s4(), 0);
  a.orn(out.b16(), t2.b16(), t1.b16());
}

/// out = erf(x) with `tb`: |x| < split: x + x p(x^2) (NaN takes this branch); else
/// copysign(1 - exp(q(min(|x|, clamp))), x). With `one_plus` (gelu_erf_tables): out =
/// 1 + erf(x / sqrt 2), the large branch exp(q) for x < 0 (0 below -clamp) and 2 - exp(q)
/// above. Temps t0..t3; out differs from x and them.
inline void erf(EmitContext& c, Vec out, Vec x, Vec t0, Vec t1, Vec t2, Vec t3, const ErfTables& tb,
                bool one_plus = false) {
  auto& a = c.a;
  a.fabs(t0.s4(), x.s4());
  a.fmin(t0.s4(), t0.s4(), c.consts.value_in(tb.clamp, t1).s4());
  const Vec q = horner(c, t1, t2, t0, tb.large_q), free = q.id() == t1.id() ? t2 : t1;
  exp(c, out, q, t0, free, t3); // erfc
  if (one_plus) {
    a.fsub(t0.s4(), c.consts.value_in(2.0f, t0).s4(), out.s4());
    a.fcmlt(t1.s4(), x.s4(), 0);
    a.bsl(t1.b16(), out.b16(), t0.b16());                            // x < 0: erfc
    a.fcmge(t0.s4(), x.s4(), c.consts.value_in(-tb.clamp, t0).s4()); // beyond the fit: 0
    a.and_(out.b16(), t1.b16(), t0.b16());
  } else {
    a.fsub(out.s4(), c.consts.value_in(1.0f, t0).s4(), out.s4());
    a.ushr(t0.s4(), x.s4(), 31);
    a.shl(t0.s4(), t0.s4(), 31);
    a.orr(out.b16(), out.b16(), t0.b16()); // the sign of x
  }
  // small branch
  a.fmul(t0.s4(), x.s4(), x.s4());
  const Vec p = horner(c, t1, t2, t0, tb.small_p);
  a.mov(t0.b16(), x.b16());
  a.fmla(t0.s4(), x.s4(), p.s4()); // x + x p(x^2)
  if (one_plus) {
    a.fadd(t0.s4(), t0.s4(), c.consts.value_in(1.0f, t1).s4());
  }
  a.fabs(t1.s4(), x.s4());
  a.fcmge(t1.s4(), t1.s4(), c.consts.value_in(tb.split, t2).s4()); // large (false for NaN)
  a.bif(out.b16(), t0.b16(), t1.b16());
}

/// How logistic() reads its arguments.
struct LogisticOptions {
  bool invert = false; // v has the opposite sign of sign_src
};

/// out = f logistic(v) = f / (1 + exp(-v)), as f / (1 + e) where v >= 0 and f e / (1 + e)
/// below, e = exp(-|v|) <= 1: neither side overflows or cancels, and one FDIV rounds the
/// quotient. f is `factor`, or 1 without one. Errors: e (1 ulp), the roundings of 1 + e, of
/// the quotient and of f e. The sign is read from sign_src (v's sign, or the opposite with
/// `invert`). Temps t0..t4; out differs from them; v, sign_src and factor are only read.
inline void logistic(EmitContext& c, Vec out, Vec v, Vec sign_src, Vec t0, Vec t1, Vec t2, Vec t3,
                     Vec t4, LogisticOptions o = {}, std::optional<Vec> factor = std::nullopt) {
  auto& a = c.a;
  a.fabs(t0.s4(), v.s4());
  a.fneg(t0.s4(), t0.s4());
  exp(c, t0, t0, t1, t2, t3); // e
  const Vec one_r = c.consts.value_in(1.0f, t1);
  a.fadd(t2.s4(), one_r.s4(), t0.s4()); // 1 + e
  Vec fe = t0, f = one_r;
  if (factor) {
    a.fmul(t3.s4(), factor->s4(), t0.s4());
    fe = t3;
    f = *factor;
  }
  a.fcmlt(t4.s4(), sign_src.s4(), 0);
  if (o.invert) a.mvn(t4.b16(), t4.b16());
  a.bsl(t4.b16(), fe.b16(), f.b16()); // the numerator
  a.fdiv(out.s4(), t4.s4(), t2.s4());
}

/// dst = x * v, v given in double: v split into hi + lo (hi rounded toward zero), one FMA over
/// the split when v is not an f32, so that the product is that of the double rounded once.
/// dst != x; t is a temp.
inline void multiply_by(EmitContext& c, Vec dst, Vec x, double v, Vec t) {
  float hi = static_cast<float>(v);
  if (std::fabs(double(hi)) > std::fabs(v)) hi = std::nextafter(hi, 0.0f);
  const auto lo = static_cast<float>(v - double(hi));
  c.a.fmul(dst.s4(), x.s4(), c.consts.value_in(lo == 0 ? hi : lo, t).s4());
  if (lo == 0) return;
  c.a.fmla(dst.s4(), x.s4(), c.consts.value_in(hi, t).s4());
}

} // namespace math

template <> struct Emitter<ir::Exp> {
  static constexpr int scratch = 3;
  static void emit(EmitContext& c, const ir::Exp&, Vec dst, std::span<const Vec> in) {
    math::exp(c, dst, in[0], c.scratch[0], c.scratch[1], c.scratch[2]);
  }
};

template <> struct Emitter<ir::Log> {
  static constexpr int scratch = 5;
  static void emit(EmitContext& c, const ir::Log&, Vec dst, std::span<const Vec> in) {
    const auto s = c.scratch;
    math::log(c, s[4], in[0], s[0], s[1], s[2], s[3]);
    c.a.mov(dst.b16(), s[4].b16());
  }
};

/// 1 / (1 + e) or e / (1 + e), e = exp(-|x|) (math::logistic).
template <> struct Emitter<ir::Sigmoid> {
  static constexpr int scratch = 5;
  static void emit(EmitContext& c, const ir::Sigmoid&, Vec dst, std::span<const Vec> in) {
    const auto s = c.scratch;
    math::logistic(c, dst, in[0], in[0], s[0], s[1], s[2], s[3], s[4]);
  }
};

/// tanh(x) = copysign(-m / (m + 2), x) with m = expm1(-2|x|) in (-1, 0]: no cancellation at
/// small |x|, exactly +-1 from |x| = 9.01 on; tanh(+-0) = +-0.
template <> struct Emitter<ir::Tanh> {
  static constexpr int scratch = 4;
  static void emit(EmitContext& c, const ir::Tanh&, Vec dst, std::span<const Vec> in) {
    const auto s = c.scratch;
    auto& a = c.a;
    const Vec x = in[0];
    a.fabs(s[0].s4(), x.s4());
    a.fneg(s[0].s4(), s[0].s4());
    a.fadd(s[0].s4(), s[0].s4(), s[0].s4()); // -2|x|, exact
    math::expm1_nonpositive(c, s[3], s[0], s[0], s[1], s[2]);
    a.fadd(s[0].s4(), s[3].s4(), c.consts.value_in(2.0f, s[1]).s4());
    a.fneg(s[2].s4(), s[3].s4());
    a.fdiv(s[2].s4(), s[2].s4(), s[0].s4());
    a.fabs(s[2].s4(), s[2].s4());
    a.ushr(s[1].s4(), x.s4(), 31);
    a.shl(s[1].s4(), s[1].s4(), 31);
    a.orr(dst.b16(), s[2].b16(), s[1].b16());
  }
};

template <> struct Emitter<ir::Erf> {
  static constexpr int scratch = 5;
  static void emit(EmitContext& c, const ir::Erf&, Vec dst, std::span<const Vec> in) {
    const auto s = c.scratch;
    math::erf(c, s[4], in[0], s[0], s[1], s[2], s[3], math::erf_tables);
    c.a.mov(dst.b16(), s[4].b16());
  }
};

/// erf form: x/2 (1 + erf(x / sqrt 2)), 1 + erf from erfc in the tails (math::erf, one_plus).
/// tanh form: 0.5 x (1 + tanh(u)) = x sigmoid(2u), 2u = x (c1 + c2 x^2), the sigmoid as for
/// Sigmoid with the numerator x (2u has the sign of x).
template <> struct Emitter<ir::Gelu> {
  static constexpr int scratch = 6;
  static void emit(EmitContext& c, const ir::Gelu& op, Vec dst, std::span<const Vec> in) {
    const auto s = c.scratch;
    auto& a = c.a;
    const Vec x = in[0];
    if (op.approximation == ir::GeluApproximation::erf) {
      math::erf(c, s[4], x, s[0], s[1], s[2], s[3], math::gelu_erf_tables, true);
      a.fmul(s[0].s4(), x.s4(), c.consts.value_in(0.5f, s[0]).s4());
      a.fmul(dst.s4(), s[4].s4(), s[0].s4()); // a product: x << 0 gives -0 as the reference
      return;
    }
    // c1 = 2 sqrt(2/pi), c2 = 2 * 0.044715 * sqrt(2/pi)
    a.fmul(s[0].s4(), x.s4(), x.s4());
    c.consts.load_bits(s[5], 0x3fcc422a);
    a.fmla(s[5].s4(), s[0].s4(), c.consts.bits_in(0x3d922279, s[1]).s4());
    a.fmul(s[5].s4(), s[5].s4(), x.s4()); // 2u
    math::logistic(c, dst, s[5], s[5], s[0], s[1], s[2], s[3], s[4], {}, x);
  }
};

/// x sigmoid(beta x) as x / (1 + e) or x e / (1 + e), e = exp(-|beta x|) (math::logistic);
/// beta x with beta split into two f32 when it is not one.
template <> struct Emitter<ir::Swish> {
  static constexpr int scratch = 6;
  static bool supports(const ir::Swish& op) {
    return std::isfinite(op.beta) && std::fabs(op.beta) <= std::numeric_limits<float>::max();
  }
  static void emit(EmitContext& c, const ir::Swish& op, Vec dst, std::span<const Vec> in) {
    const auto s = c.scratch;
    const Vec x = in[0];
    Vec v = x;
    if (op.beta != 1.0) {
      math::multiply_by(c, s[5], x, op.beta, s[0]);
      v = s[5];
    }
    math::logistic(c, dst, v, x, s[0], s[1], s[2], s[3], s[4], {.invert = op.beta < 0}, x);
  }
};

/// x > 0 ? x : alpha expm1(x), expm1 of min(x, 0) (math::expm1_nonpositive), alpha split into
/// two f32 when it is not one. For x <= 0 the result's sign is sign(x) xor sign(alpha), zeros
/// included, as the reference's alpha * expm1(x).
template <> struct Emitter<ir::Elu> {
  static constexpr int scratch = 4;
  static bool supports(const ir::Elu& op) {
    return std::isfinite(op.alpha) && std::fabs(op.alpha) <= std::numeric_limits<float>::max();
  }
  static void emit(EmitContext& c, const ir::Elu& op, Vec dst, std::span<const Vec> in) {
    const auto s = c.scratch;
    auto& a = c.a;
    const Vec x = in[0];
    a.fmin(s[0].s4(), x.s4(), c.consts.bits_in(0, s[1]).s4()); // NaN comes through
    math::expm1_nonpositive(c, s[3], s[0], s[0], s[1], s[2]);
    Vec r = s[3];
    if (op.alpha != 1.0) {
      math::multiply_by(c, s[0], s[3], op.alpha, s[1]);
      r = s[0];
    }
    a.ushr(s[1].s4(), x.s4(), 31);
    a.shl(s[1].s4(), s[1].s4(), 31); // the sign of x
    if (op.alpha < 0) a.eor(s[1].b16(), s[1].b16(), c.consts.bits_in(0x80000000u, s[2]).b16());
    a.fabs(r.s4(), r.s4());
    a.orr(r.b16(), r.b16(), s[1].b16());
    a.fcmgt(s[2].s4(), x.s4(), 0);
    a.bsl(s[2].b16(), x.b16(), r.b16());
    a.mov(dst.b16(), s[2].b16());
  }
};

/// log(1 + e^x) = max(x, 0) + log1p(e), e = exp(-|x|) in (0, 1]: log1p(e) for e < 1/2 and
/// ln2 + log1p((e - 1) / 2) above (both arguments exact, in [-1/4, 1/2)), log1p(f) = f +
/// f^2 s(f) with the degree-8 table.
template <> struct Emitter<ir::SoftPlus> {
  static constexpr int scratch = 4;
  static void emit(EmitContext& c, const ir::SoftPlus&, Vec dst, std::span<const Vec> in) {
    const auto s = c.scratch;
    auto& a = c.a;
    const Vec x = in[0];
    a.fabs(s[0].s4(), x.s4());
    a.fneg(s[0].s4(), s[0].s4());
    math::exp(c, s[0], s[0], s[1], s[2], s[3]); // e
    a.fcmge(s[1].s4(), s[0].s4(), c.consts.value_in(0.5f, s[1]).s4());
    a.fsub(s[2].s4(), s[0].s4(), c.consts.value_in(1.0f, s[2]).s4());
    a.fmul(s[2].s4(), s[2].s4(), c.consts.value_in(0.5f, s[3]).s4());
    a.mov(s[3].b16(), s[1].b16());
    a.bsl(s[3].b16(), s[2].b16(), s[0].b16()); // f
    const Vec p = math::horner(c, s[0], s[2], s[3], math::log1p_s),
              y = p.id() == s[0].id() ? s[2] : s[0];
    a.fmul(p.s4(), p.s4(), s[3].s4());
    a.mov(y.b16(), s[3].b16());
    a.fmla(y.s4(), p.s4(), s[3].s4()); // log1p(f)
    a.and_(s[1].b16(), s[1].b16(), c.consts.bits_in(math::ln2_hi, p).b16());
    a.fadd(y.s4(), y.s4(), s[1].s4());
    a.fmax(s[1].s4(), x.s4(), c.consts.bits_in(0, s[1]).s4());
    a.fadd(dst.s4(), s[1].s4(), y.s4());
  }
};

/// x tanh(softplus(x)) = x E(E + 2) / (E(E + 2) + 2), E = e^x = p 2^n, evaluated as
/// (x p) (u / (E u + 2)) 2^n with u = E + 2 (as x64's AVX2 path): 2^n comes last, so that the
/// tail x e^x (x < -87, where E is subnormal) keeps its precision. x is raised to -110 (the
/// result is -0 below) and E uses min(x, 20) (above, the ratio is 1/E and the result x);
/// -inf gives NaN as the reference's -inf * 0.
template <> struct Emitter<ir::Mish> {
  static constexpr int scratch = 5;
  static void emit(EmitContext& c, const ir::Mish&, Vec dst, std::span<const Vec> in) {
    const auto s = c.scratch;
    auto& a = c.a;
    const Vec x = in[0];
    a.fmax(s[0].s4(), x.s4(), c.consts.value_in(-110.0f, s[1]).s4());
    a.fcmeq(s[1].s4(), x.s4(), c.consts.bits_in(math::neg_inf, s[1]).s4());
    a.orr(s[0].b16(), s[0].b16(), s[1].b16()); // xm; all ones (NaN) for -inf
    // x is not read again: dst is free from here on
    a.fmin(s[1].s4(), s[0].s4(), c.consts.value_in(20.0f, s[1]).s4());
    math::reduce(c, s[1], s[2], s[1], s[3]); // r (s1), n (s2)
    const Vec p = math::horner(c, s[3], dst, s[1], math::exp_q),
              other = p.id() == s[3].id() ? dst : s[3];
    c.consts.load_value(other, 1.0f);
    a.fmla(other.s4(), p.s4(), s[1].s4());
    c.consts.load_value(p, 1.0f);
    a.fmla(p.s4(), other.s4(), s[1].s4());
    if (p.id() != s[3].id()) a.mov(s[3].b16(), p.b16()); // p (s3)
    // 2^(n/2) (s1) and 2^(n - n/2) (s2), both normal
    a.fcvtzs(s[2].s4(), s[2].s4());
    a.sshr(s[1].s4(), s[2].s4(), 1);
    a.sub(s[2].s4(), s[2].s4(), s[1].s4());
    const Vec one = c.consts.bits_in(math::one, dst);
    a.shl(s[1].s4(), s[1].s4(), 23);
    a.add(s[1].s4(), s[1].s4(), one.s4());
    a.shl(s[2].s4(), s[2].s4(), 23);
    a.add(s[2].s4(), s[2].s4(), one.s4());
    a.fmul(dst.s4(), s[3].s4(), s[1].s4());
    a.fmul(dst.s4(), dst.s4(), s[2].s4());   // E
    a.fmul(s[3].s4(), s[3].s4(), s[0].s4()); // x p
    const Vec two = c.consts.value_in(2.0f, s[4]);
    a.fadd(s[0].s4(), dst.s4(), two.s4()); // u = E + 2
    if (two.id() != s[4].id()) a.mov(s[4].b16(), two.b16());
    a.fmla(s[4].s4(), dst.s4(), s[0].s4()); // E u + 2
    a.fdiv(s[0].s4(), s[0].s4(), s[4].s4());
    a.fmul(s[3].s4(), s[3].s4(), s[0].s4());
    a.fmul(dst.s4(), s[3].s4(), s[1].s4());
    a.fmul(dst.s4(), dst.s4(), s[2].s4());
  }
};

} // namespace snippets::aarch64
