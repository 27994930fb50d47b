// SPDX-License-Identifier: Apache-2.0
// snippets/target/aarch64/emitters/arith.hpp: NEON emitters of the general Power (a tensor
// exponent), Mod and FloorMod. Contracts in emitter.hpp; semantics in ir/op_tags.hpp. The
// algorithms are the x64 target's (x64/emitters/arith.hpp), on NEON's instructions:
//  - Power follows C's pow (the reference's std::pow): the value 2^(y log2|x|) is computed on
//    f64 lanes (NEON has them: two per register, FCVTL/FCVTN widen and narrow each half) with
//    2^-38 relative error before the one final rounding, so the f32 result is within 1 ulp,
//    subnormals included; then the sign for a negative base with an odd integer exponent, NaN
//    for a non-integer one, and the cases C defines as 1 (pow(x, +-0), pow(1, y),
//    pow(-1, +-inf)). Oddness is read from y / 2 (exact), not from an integer conversion,
//    which saturates on NEON.
//  - Mod (C fmod) is exact: a truncated quotient below 2^23 (one FDIV, FRINTZ, one FMLS, one
//    correction), huge quotients reduced 22 bits at a time modulo |b| 2^k while any lane needs
//    another pass (UMAXV and a branch). FMAXNM/FMINNM keep the divisor finite and nonzero in
//    lanes outside the domain (a NaN operand gives the number, as x86's MAXPS does).
//    FloorMod adds b to a nonzero remainder of the other sign (one rounding, as the
//    reference) and gives zeros b's sign.
#pragma once

#include <bit>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>

#include "snippets/ir/op_tags.hpp"
#include "snippets/target/aarch64/emitters/emitter.hpp"
#include "snippets/target/math_coefficients.hpp"

namespace snippets::aarch64 {

namespace detail {
inline constexpr std::uint32_t sign_bit = 0x80000000u, inf_bits = 0x7f800000u;

/// k(x) on f64 lanes by Horner, alternating between acc and tmp as math::horner does; returns
/// the register that holds the result. acc, tmp and x distinct.
inline Vec horner64(EmitContext& c, Vec acc, Vec tmp, Vec x, std::span<const std::uint64_t> k) {
  c.consts.load_bits64(acc, k.back());
  for (std::size_t i = k.size() - 1; i-- > 0;) {
    c.consts.load_bits64(tmp, k[i]);
    c.a.fmla(tmp.d2(), acc.d2(), x.d2());
    std::swap(acc, tmp);
  }
  return acc;
}

/// out = |x|^y on the f64 lanes of half `half` (0: lanes 0-1, 1: lanes 2-3) of the f32
/// vectors x and y, narrowed into that half of `out` (half 0 clears the other): log2|x| from
/// the exponent field and log2(1 + f) = f p(f) for the mantissa in [sqrt(1/2), sqrt(2)), 0
/// and inf (log2 -1023 and 1024) scaled to -+1e303 so that any nonzero y takes the limit,
/// the product clamped to [-1000, 1000], 2^w = 2^n (1 + r p(r)). NaN inputs give garbage the
/// caller replaces. Temps xd, t, u, k; out differs from them.
inline void pow_half(EmitContext& c, Vec out, Vec x, Vec y, int half, Vec xd, Vec t, Vec u, Vec k) {
  using namespace math_coefficients;
  auto& a = c.a;
  auto k64 = [&](std::uint64_t bits, Vec tmp) { return c.consts.bits64_in(bits, tmp).d2(); };
  auto widen = [&](Vec dst, Vec src) {
    if (half == 0)
      a.fcvtl(dst.d2(), src.s2());
    else
      a.fcvtl2(dst.d2(), src.s4());
  };
  widen(xd, x);
  a.fabs(xd.d2(), xd.d2());
  // bits(|x|) + bits(1) - bits(sqrt(1/2)): exponent field k + 1023, mantissa field m's
  a.add(xd.d2(), xd.d2(), k64(0x00095f619980c433, k));
  a.ushr(t.d2(), xd.d2(), 52);
  a.orr(t.b16(), t.b16(), c.consts.bits64_in(0x4330000000000000, k).b16());         // 2^52 + field
  a.fsub(t.d2(), t.d2(), k64(std::bit_cast<std::uint64_t>(4503599627371519.0), k)); // k
  a.and_(xd.b16(), xd.b16(), c.consts.bits64_in(0x000fffffffffffff, k).b16());
  a.add(xd.d2(), xd.d2(), k64(0x3fe6a09e667f3bcd, k));                 // m
  a.fsub(xd.d2(), xd.d2(), k64(std::bit_cast<std::uint64_t>(1.0), k)); // f, exact
  const Vec p = horner64(c, u, k, xd, log2_p_f64);
  a.fmla(t.d2(), p.d2(), xd.d2()); // log2|x| = k + f p(f)
  // |log2| >= 1000 only for 0 and inf: times 1e300
  a.fabs(u.d2(), t.d2());
  a.fcmge(u.d2(), u.d2(), k64(std::bit_cast<std::uint64_t>(1000.0), k));
  a.and_(u.b16(), u.b16(), c.consts.value64_in(1e300 - 1, k).b16());
  a.fadd(u.d2(), u.d2(), k64(std::bit_cast<std::uint64_t>(1.0), k));
  a.fmul(t.d2(), t.d2(), u.d2());
  widen(xd, y);
  a.fmul(t.d2(), t.d2(), xd.d2()); // w
  a.fmax(t.d2(), t.d2(), k64(std::bit_cast<std::uint64_t>(-1000.0), k));
  a.fmin(t.d2(), t.d2(), k64(std::bit_cast<std::uint64_t>(1000.0), k));
  a.frintn(u.d2(), t.d2());        // n
  a.fsub(xd.d2(), t.d2(), u.d2()); // r = w - n, exact
  const Vec q = horner64(c, t, k, xd, exp2_p_f64);
  const Vec free = q.id() == t.id() ? k : t;
  c.consts.load_bits64(free, std::bit_cast<std::uint64_t>(1.0));
  a.fmla(free.d2(), q.d2(), xd.d2()); // 2^r = 1 + r p(r)
  a.fcvtzs(u.d2(), u.d2());           // 2^n from the bits of n (|n| <= 1000: normal)
  a.add(u.d2(), u.d2(), k64(1023, q));
  a.shl(u.d2(), u.d2(), 52);
  a.fmul(free.d2(), free.d2(), u.d2());
  if (half == 0)
    a.fcvtn(out.s2(), free.d2());
  else
    a.fcvtn2(out.s4(), free.d2());
}

/// acc = fmod(acc, |b|) for acc = |a| finite and 0 < |b| < inf (other lanes hold acc = 0,
/// which no pass changes), exactly: each pass takes k = max(0, ilogb acc - ilogb b - 22) per
/// lane, B = |b| 2^k (two normal factors 2^(k/2) and 2^(k - k/2)), q = trunc(fl(acc / B))
/// (the true quotient or one more), acc - q B exactly with FMLS, B added back once if that
/// went negative, and repeats while some lane had k > 0. eb holds the biased exponent of |b|
/// + 22 (an integer); t0, t1 and k are temps.
inline void fmod_loop(EmitContext& c, Vec acc, Vec eb, Vec b, Vec t0, Vec t1, Vec k) {
  auto& a = c.a;
  const asmjit::a64::GpW more = asmjit::a64::w(scratch_gpr);
  const asmjit::Label again = a.newLabel();
  a.bind(again);
  a.ushr(t0.s4(), acc.s4(), 23); // the exponent field (a subnormal acc only meets k = 0)
  a.sub(t0.s4(), t0.s4(), eb.s4());
  a.smax(t0.s4(), t0.s4(), c.consts.bits_in(0, k).s4());
  a.umaxv(k.s(), t0.s4()); // nonzero: some lane needs another pass
  a.fmov(more, k.s());
  a.ushr(t1.s4(), t0.s4(), 1);
  a.sub(t0.s4(), t0.s4(), t1.s4());
  a.add(t1.s4(), t1.s4(), c.consts.bits_in(127, k).s4());
  a.shl(t1.s4(), t1.s4(), 23);
  a.fmul(t1.s4(), t1.s4(), b.s4());
  a.add(t0.s4(), t0.s4(), c.consts.bits_in(127, k).s4());
  a.shl(t0.s4(), t0.s4(), 23);
  a.fmul(t1.s4(), t1.s4(), t0.s4());
  a.fabs(t1.s4(), t1.s4());
  a.fmaxnm(t1.s4(), t1.s4(), c.consts.bits_in(1, k).s4()); // lanes outside: finite, nonzero
  a.fminnm(t1.s4(), t1.s4(), c.consts.value_in(std::numeric_limits<float>::max(), k).s4());
  a.fdiv(t0.s4(), acc.s4(), t1.s4());
  a.frintz(t0.s4(), t0.s4());
  a.fmls(acc.s4(), t0.s4(), t1.s4()); // acc - q B, exact
  a.fadd(t0.s4(), acc.s4(), t1.s4());
  a.sshr(t1.s4(), acc.s4(), 31); // went negative
  a.bit(acc.b16(), t0.b16(), t1.b16());
  a.cbnz(more, again);
}

/// out = fmod(a, b) as C computes it (exact; NaN for a = +-inf, b = 0 or NaN; a for
/// b = +-inf and finite a). out, t0, t1, t2, k distinct temps; a and b only read.
inline void fmod(EmitContext& c, Vec out, Vec a_in, Vec b, Vec t0, Vec t1, Vec t2, Vec k) {
  auto& a = c.a;
  const auto inf = [&] { return c.consts.bits_in(inf_bits, k).s4(); };
  // out = |a| where |a| < inf and 0 < |b| < inf, else 0 (the loop leaves those lanes alone)
  a.fabs(out.s4(), a_in.s4());
  a.fabs(t0.s4(), b.s4());
  a.fcmgt(t1.s4(), inf(), out.s4());
  a.and_(out.b16(), out.b16(), t1.b16());
  a.fcmgt(t1.s4(), inf(), t0.s4());
  a.and_(out.b16(), out.b16(), t1.b16());
  a.fcmgt(t1.s4(), t0.s4(), 0);
  a.and_(out.b16(), out.b16(), t1.b16());
  // t1 = the biased exponent of |b| + 22, a subnormal |b| scaled by 2^24 first
  a.fcmgt(t2.s4(), c.consts.bits_in(0x00800000, k).s4(), t0.s4());
  a.fmul(t1.s4(), t0.s4(), c.consts.value_in(16777216.0f, k).s4());
  a.bif(t1.b16(), t0.b16(), t2.b16());
  a.ushr(t1.s4(), t1.s4(), 23);
  a.and_(t2.b16(), t2.b16(), c.consts.bits_in(24, k).b16());
  a.sub(t1.s4(), t1.s4(), t2.s4());
  a.add(t1.s4(), t1.s4(), c.consts.bits_in(22, k).s4());
  a.smax(t1.s4(), t1.s4(), c.consts.bits_in(0, k).s4()); // b = 0 gives -2: k = 0 there
  fmod_loop(c, out, t1, b, t0, t2, k);
  a.and_(t0.b16(), a_in.b16(), c.consts.bits_in(sign_bit, k).b16());
  a.orr(out.b16(), out.b16(), t0.b16()); // the sign of a (fmod(-0, b) = -0)
  // b = +-inf and finite a: a; NaN where the domain ends (all ones)
  a.fabs(t0.s4(), b.s4());
  a.fabs(t1.s4(), a_in.s4());
  a.fcmeq(t2.s4(), t0.s4(), inf());
  a.fcmeq(t0.s4(), t0.s4(), 0);
  a.fcmgt(t1.s4(), inf(), t1.s4());
  a.mvn(t1.b16(), t1.b16());           // a inf or NaN
  a.bic(t2.b16(), t2.b16(), t1.b16()); // b inf, a finite
  a.bit(out.b16(), a_in.b16(), t2.b16());
  a.orr(t0.b16(), t0.b16(), t1.b16());
  a.fcmeq(t1.s4(), b.s4(), b.s4());
  a.orn(t0.b16(), t0.b16(), t1.b16()); // or b NaN
  a.orr(out.b16(), out.b16(), t0.b16());
}
} // namespace detail

/// x ** y for tensors x and y (see the file comment).
template <> struct Emitter<ir::Power> {
  static constexpr int scratch = 5;
  static void emit(EmitContext& c, const ir::Power&, Vec dst, std::span<const Vec> in) {
    auto& a = c.a;
    const Vec x = in[0], y = in[1], s0 = c.scratch[0], s1 = c.scratch[1], s2 = c.scratch[2],
              r = c.scratch[3], k = c.scratch[4];
    for (int half = 0; half < 2; ++half) detail::pow_half(c, r, x, y, half, s0, s1, s2, k);
    // a negative base: an odd integer exponent negates the result (zeros and infinities
    // included), any other non-integer one gives NaN (not for -0 and -inf, which pow treats
    // like a limit)
    a.frintz(s0.s4(), y.s4());
    a.fcmeq(s0.s4(), s0.s4(), y.s4()); // y is an integer (or +-inf)
    a.fmul(s1.s4(), y.s4(), c.consts.value_in(0.5f, k).s4());
    a.frintz(s2.s4(), s1.s4());
    a.fcmeq(s2.s4(), s2.s4(), s1.s4());  // y / 2 is an integer: y even
    a.bic(s1.b16(), s0.b16(), s2.b16()); // y odd
    a.and_(s1.b16(), s1.b16(), x.b16());
    a.and_(s1.b16(), s1.b16(), c.consts.bits_in(detail::sign_bit, k).b16());
    a.eor(r.b16(), r.b16(), s1.b16());
    a.fcmlt(s1.s4(), x.s4(), 0);
    a.bic(s1.b16(), s1.b16(), s0.b16()); // x < 0 and y not an integer
    a.fcmeq(s2.s4(), x.s4(), c.consts.bits_in(0xff800000u, k).s4());
    a.bic(s1.b16(), s1.b16(), s2.b16()); // and x != -inf
    a.orr(r.b16(), r.b16(), s1.b16());   // all ones: NaN
    // NaN in either input: NaN (x + y), unless one of the rules below gives 1
    a.fcmeq(s0.s4(), x.s4(), x.s4());
    a.fcmeq(s1.s4(), y.s4(), y.s4());
    a.and_(s0.b16(), s0.b16(), s1.b16());
    a.fadd(s1.s4(), x.s4(), y.s4());
    a.bif(r.b16(), s1.b16(), s0.b16());
    // pow(x, +-0) = pow(1, y) = pow(-1, +-inf) = 1
    const Vec one = c.consts.value_in(1.0f, k);
    a.fcmeq(s0.s4(), y.s4(), 0);
    a.fcmeq(s1.s4(), x.s4(), one.s4());
    a.orr(s0.b16(), s0.b16(), s1.b16());
    a.fabs(s1.s4(), y.s4());
    a.fcmeq(s1.s4(), s1.s4(), c.consts.bits_in(detail::inf_bits, s2).s4());
    a.fcmeq(s2.s4(), x.s4(), c.consts.value_in(-1.0f, s2).s4());
    a.and_(s1.b16(), s1.b16(), s2.b16());
    a.orr(s0.b16(), s0.b16(), s1.b16());
    a.bit(r.b16(), c.consts.value_in(1.0f, k).b16(), s0.b16());
    a.mov(dst.b16(), r.b16());
  }
};

/// Truncated remainder, the sign of a (C fmod); exact.
template <> struct Emitter<ir::Mod> {
  static constexpr int scratch = 5;
  static void emit(EmitContext& c, const ir::Mod&, Vec dst, std::span<const Vec> in) {
    const std::span<const Vec> s = c.scratch;
    detail::fmod(c, s[0], in[0], in[1], s[1], s[2], s[3], s[4]);
    c.a.mov(dst.b16(), s[0].b16());
  }
};

/// Floored remainder, the sign of b: fmod(a, b) + b where that is nonzero and of the other
/// sign (rounded once), copysign(0, b) where it is zero.
template <> struct Emitter<ir::FloorMod> {
  static constexpr int scratch = 5;
  static void emit(EmitContext& c, const ir::FloorMod&, Vec dst, std::span<const Vec> in) {
    auto& a = c.a;
    const Vec b = in[1], r = c.scratch[0], t0 = c.scratch[1], t1 = c.scratch[2];
    detail::fmod(c, r, in[0], b, t0, t1, c.scratch[3], c.scratch[4]);
    a.fcmeq(t0.s4(), r.s4(), 0);
    a.and_(t1.b16(), b.b16(), c.consts.bits_in(detail::sign_bit, c.scratch[3]).b16());
    a.bit(r.b16(), t1.b16(), t0.b16());
    a.eor(t0.b16(), r.b16(), b.b16());
    a.sshr(t0.s4(), t0.s4(), 31); // the signs differ
    a.fadd(t1.s4(), r.s4(), b.s4());
    a.bit(r.b16(), t1.b16(), t0.b16());
    a.mov(dst.b16(), r.b16());
  }
};

} // namespace snippets::aarch64
