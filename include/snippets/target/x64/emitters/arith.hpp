// SPDX-License-Identifier: Apache-2.0
// snippets/target/x64/emitters/arith.hpp: emitters of the general Power (a tensor exponent),
// Mod, FloorMod and Convert. Contracts in emitter.hpp; semantics in ir/op_tags.hpp.
//
//  - Power follows C's pow (what the reference's std::pow does): pow(x, +-0) = 1 and
//    pow(1, y) = 1 even for NaN, a negative base needs an integer exponent (NaN otherwise) and
//    gives a negative result for odd ones, pow(-1, +-inf) = 1, zeros and infinities as in C.
//    The value is computed on f64 lanes (2^(y log2|x|) with 2^-38 relative error before the
//    final rounding), so the f32 result is within 1 ulp everywhere, subnormals included.
//  - Mod (C fmod) is exact: the remainder of a floating-point division is representable, and
//    the emitter computes it with a truncated quotient below 2^23 (one FMA, one correction),
//    reducing huge quotients 22 bits at a time modulo b 2^k. FloorMod adds b to a nonzero
//    remainder of the other sign (one rounding, as the reference) and gives zeros b's sign.
//  - Convert keeps every value as an f32 in a register: integer types hold their truncated,
//    saturated value (NaN -> 0; the i32 maximum 2^31 - 1 is held as 2^31, the f32 it converts
//    back to), boolean 0 or 1, f16 and bf16 their rounded value. Kernel inputs and outputs
//    stay f32 (compile.hpp); a Convert chain inside a kernel matches the reference.
#pragma once

#include <limits>

#include "snippets/target/x64/emitters/math.hpp"

namespace snippets::x64 {

/// x ** y for tensors x and y (see the file comment).
template <> struct Emitter<ir::Power> {
  static constexpr int scratch = 4;
  template <class Vmm>
  static void emit(EmitContext<Vmm>& c, const ir::Power&, Vmm dst, std::span<const Vmm> in) {
    constexpr bool avx512 = EmitContext<Vmm>::avx512;
    const Vmm x = in[0], y = in[1], s0 = c.scratch[0], s1 = c.scratch[1], s2 = c.scratch[2],
              s3 = c.scratch[3];
    for (int half = 0; half < 2; ++half) {
      math::widen_half(c, s0, x, half);
      c.h.vandpd(s0, s0, c.consts.bits64(0x7fffffffffffffff)); // |x|
      math::pow_pd(c, s2, s0, s1, y, half);
      math::narrow_into_half(c, s3, s2, half);
    }
    // a negative base: an odd integer exponent negates the result (zeros and infinities
    // included), any other non-integer one gives NaN (not for -0 and -inf, which pow treats
    // like a limit)
    detail::round(c, s0, y, detail::round_trunc); // y is an integer (or +-inf): k2 / s0
    if constexpr (avx512)
      c.h.vcmpps(c.kscratch, s0, y, detail::cmp_eq_oq);
    else
      c.h.vcmpps(s0, s0, y, detail::cmp_eq_oq);
    c.h.vcvttps2dq(s1, y);
    c.h.vpslld(s1, s1, 31); // the low bit: odd (|y| >= 2^31 converts to 0x80000000: even)
    if constexpr (avx512) {
      c.h.vpandd(s1, s1, x);
      c.h.vpxord(s3 | c.kscratch, s3, s1);
      c.h.knotw(c.kscratch, c.kscratch);
      c.h.vcmpps(c.kscratch | c.kscratch, x, c.consts.value(0.0f), detail::cmp_lt_oq);
      c.h.vcmpps(c.kscratch | c.kscratch, x, c.consts.bits(math::neg_inf), detail::cmp_neq_oq);
      c.h.vmovups(s3 | c.kscratch, c.consts.bits(math::qnan));
      // NaN in either input: NaN, unless one of the rules below gives 1
      c.h.vcmpps(c.kscratch, x, y, detail::cmp_unord_q);
      c.h.vaddps(s3 | c.kscratch, x, y);
      c.h.vcmpps(c.kscratch, y, c.consts.value(0.0f), detail::cmp_eq_oq);
      c.h.vmovups(s3 | c.kscratch, c.consts.bits(math::one));
      c.h.vcmpps(c.kscratch, x, c.consts.bits(math::one), detail::cmp_eq_oq);
      c.h.vmovups(s3 | c.kscratch, c.consts.bits(math::one));
      c.h.vandps(s0, y, c.consts.bits(math::abs_mask));
      c.h.vcmpps(c.kscratch, s0, c.consts.bits(math::pos_inf), detail::cmp_eq_oq);
      c.h.vcmpps(c.kscratch | c.kscratch, x, c.consts.value(-1.0f), detail::cmp_eq_oq);
      c.h.vmovups(s3 | c.kscratch, c.consts.bits(math::one));
    } else {
      c.h.vandps(s1, s1, x);
      c.h.vandps(s1, s1, s0);
      c.h.vxorps(s3, s3, s1);
      c.h.vcmpps(s1, x, c.consts.value(0.0f), detail::cmp_lt_oq);
      c.h.vandnps(s0, s0, s1); // not an integer and x < 0
      c.h.vcmpps(s1, x, c.consts.bits(math::neg_inf), detail::cmp_neq_oq);
      c.h.vandps(s0, s0, s1);
      c.h.vorps(s3, s3, s0); // all ones: NaN
      c.h.vcmpps(s0, x, y, detail::cmp_unord_q);
      c.h.vaddps(s1, x, y);
      c.h.vblendvps(s3, s3, s1, s0);
      c.h.vcmpps(s0, y, c.consts.value(0.0f), detail::cmp_eq_oq);
      c.h.vcmpps(s1, x, c.consts.bits(math::one), detail::cmp_eq_oq);
      c.h.vorps(s0, s0, s1);
      c.h.vandps(s1, y, c.consts.bits(math::abs_mask));
      c.h.vcmpps(s1, s1, c.consts.bits(math::pos_inf), detail::cmp_eq_oq);
      c.h.vcmpps(s2, x, c.consts.value(-1.0f), detail::cmp_eq_oq);
      c.h.vandps(s1, s1, s2);
      c.h.vorps(s0, s0, s1);
      c.h.vblendvps(s3, s3, c.consts.bits(math::one), s0);
    }
    c.h.vmovaps(dst, s3);
  }
};

namespace detail {
/// r = fmod(|a|, |b|) for a, b with |a| finite and 0 < |b| < inf (other lanes must hold
/// a = 0 there, see fmod below), exactly: each pass picks k >= 0 so that |a| / (|b| 2^k) <
/// 2^23 (k = max(0, ilogb a - ilogb b - 22)), takes q = trunc(fl(A / B)) (which is the true
/// quotient or one more, because round-to-nearest cannot go below an integer below 2^24),
/// A - q B exactly with an FMA, adds B back once if that went negative, and repeats while
/// some lane had k > 0. `b` is the original divisor (|b| 2^k is rebuilt each pass).
/// Registers: acc holds A on entry and the remainder on exit; eb holds the biased
/// exponent of |b| + 22 (AVX2: an integer; AVX-512: a float); t0, t1 are temps.
template <class Vmm> void fmod_loop(EmitContext<Vmm>& c, Vmm acc, Vmm eb, Vmm b, Vmm t0, Vmm t1) {
  Xbyak::Label again;
  c.h.L(again);
  if constexpr (EmitContext<Vmm>::avx512) {
    c.h.vgetexpps(t0, acc); // -inf for A = 0: k = 0
    c.h.vsubps(t0, t0, eb);
    c.h.vmaxps(t0, t0, c.consts.value(0.0f));
    c.h.vcmpps(c.kscratch, t0, c.consts.value(0.0f), cmp_gt_oq);
    c.h.kortestw(c.kscratch, c.kscratch); // ZF: no lane needs another pass
    c.h.vandps(t1, b, c.consts.bits(math::abs_mask));
    c.h.vmaxps(t1, t1, c.consts.bits(1)); // lanes outside the domain: finite, nonzero
    c.h.vminps(t1, t1, c.consts.value(std::numeric_limits<float>::max()));
    c.h.vscalefps(t1, t1, t0); // B = |b| 2^k
  } else {
    // the exponent field of A; a subnormal A (field 0) only meets k = 0 anyway
    c.h.vpsrld(t0, acc, 23);
    c.h.vpsubd(t0, t0, eb);
    c.h.vpmaxsd(t0, t0, c.consts.bits(0));
    c.h.vptest(t0, t0); // ZF: no lane needs another pass
    // |b| 2^k as |b| 2^(k/2) 2^(k - k/2): k reaches 254, each factor stays an f32
    c.h.vpsrld(t1, t0, 1);
    c.h.vpsubd(t0, t0, t1);
    c.h.vpaddd(t1, t1, c.consts.bits(127));
    c.h.vpslld(t1, t1, 23);
    c.h.vmulps(t1, t1, b);
    c.h.vpaddd(t0, t0, c.consts.bits(127));
    c.h.vpslld(t0, t0, 23);
    c.h.vmulps(t1, t1, t0);
    c.h.vandps(t1, t1, c.consts.bits(math::abs_mask));
    c.h.vmaxps(t1, t1, c.consts.bits(1));
    c.h.vminps(t1, t1, c.consts.value(std::numeric_limits<float>::max()));
  }
  c.h.vdivps(t0, acc, t1);
  round(c, t0, t0, round_trunc);
  c.h.vfnmadd231ps(acc, t0, t1); // A - q B, exact
  if constexpr (EmitContext<Vmm>::avx512) {
    c.h.vpmovd2m(c.kscratch, acc);
    c.h.vaddps(acc | c.kscratch, acc, t1);
  } else {
    c.h.vaddps(t0, acc, t1);
    c.h.vblendvps(acc, acc, t0, acc); // by the sign bit of A - q B
  }
  c.h.jnz(again, Xbyak::CodeGenerator::T_NEAR);
}

/// out = fmod(a, b) as C computes it (exact; NaN for a = +-inf, b = 0 or NaN; a for
/// b = +-inf and finite a). out, t0, t1, t2 distinct scratch; a and b only read.
template <class Vmm> void fmod(EmitContext<Vmm>& c, Vmm out, Vmm a, Vmm b, Vmm t0, Vmm t1, Vmm t2) {
  constexpr bool avx512 = EmitContext<Vmm>::avx512;
  // A = |a| where |a| < inf and 0 < |b| < inf, else 0 (the loop leaves those lanes alone)
  c.h.vandps(out, a, c.consts.bits(math::abs_mask));
  c.h.vandps(t0, b, c.consts.bits(math::abs_mask));
  if constexpr (avx512) {
    c.h.vcmpps(c.kscratch, out, c.consts.bits(math::pos_inf), cmp_lt_oq);
    c.h.vcmpps(c.kscratch | c.kscratch, t0, c.consts.bits(math::pos_inf), cmp_lt_oq);
    c.h.vcmpps(c.kscratch | c.kscratch, t0, c.consts.value(0.0f), cmp_gt_oq);
    c.h.vmovaps(out | c.kscratch | Xbyak::util::T_z, out);
    // eb = ilogb|b| + 22 (|b| 0 or non-finite: harmless, A is 0 there)
    c.h.vgetexpps(t1, t0);
    c.h.vaddps(t1, t1, c.consts.value(22.0f));
  } else {
    c.h.vcmpps(t1, out, c.consts.bits(math::pos_inf), cmp_lt_oq);
    c.h.vandps(out, out, t1);
    c.h.vcmpps(t1, t0, c.consts.bits(math::pos_inf), cmp_lt_oq);
    c.h.vandps(out, out, t1);
    c.h.vcmpps(t1, t0, c.consts.value(0.0f), cmp_gt_oq);
    c.h.vandps(out, out, t1);
    // eb = biased exponent of |b| + 22, subnormal |b| scaled by 2^24 first
    c.h.vcmpps(t2, t0, c.consts.bits(math::flt_min), cmp_lt_oq);
    c.h.vmulps(t1, t0, c.consts.value(16777216.0f));
    c.h.vblendvps(t1, t0, t1, t2);
    c.h.vpsrld(t1, t1, 23);
    c.h.vpand(t2, t2, c.consts.bits(24));
    c.h.vpsubd(t1, t1, t2);
    c.h.vpaddd(t1, t1, c.consts.bits(22));
    c.h.vpmaxsd(t1, t1, c.consts.bits(0)); // b = 0 gives -2: A = 0 there must meet k = 0
  }
  fmod_loop(c, out, t1, b, t0, t2);
  math::or_sign(c, out, out, a, t0); // the sign of a (fmod(-0, b) = -0)
  // b = +-inf, finite a: a; NaN where the domain ends
  c.h.vandps(t0, b, c.consts.bits(math::abs_mask));
  c.h.vandps(t1, a, c.consts.bits(math::abs_mask));
  if constexpr (avx512) {
    c.h.vcmpps(c.kscratch, t0, c.consts.bits(math::pos_inf), cmp_eq_oq);
    c.h.vcmpps(c.kscratch | c.kscratch, t1, c.consts.bits(math::pos_inf), cmp_lt_oq);
    c.h.vmovaps(out | c.kscratch, a);
    c.h.vcmpps(c.kscratch, t1, c.consts.bits(math::pos_inf), cmp_nlt_uq); // a inf or NaN
    c.h.vmovups(out | c.kscratch, c.consts.bits(math::qnan));
    c.h.vcmpps(c.kscratch, t0, c.consts.value(0.0f), cmp_eq_oq);
    c.h.vmovups(out | c.kscratch, c.consts.bits(math::qnan));
    c.h.vcmpps(c.kscratch, b, b, cmp_unord_q);
    c.h.vmovups(out | c.kscratch, c.consts.bits(math::qnan));
  } else {
    c.h.vcmpps(t2, t0, c.consts.bits(math::pos_inf), cmp_eq_oq);
    c.h.vcmpps(t0, t0, c.consts.value(0.0f), cmp_eq_oq);
    c.h.vcmpps(t1, t1, c.consts.bits(math::pos_inf), cmp_nlt_uq); // a inf or NaN
    c.h.vandnps(t2, t1, t2);                                      // b inf, a finite
    c.h.vblendvps(out, out, a, t2);
    c.h.vorps(t0, t0, t1);
    c.h.vcmpps(t1, b, b, cmp_unord_q);
    c.h.vorps(t0, t0, t1);
    c.h.vorps(out, out, t0); // all ones: NaN
  }
}
} // namespace detail

/// Truncated remainder, the sign of a (C fmod); exact.
template <> struct Emitter<ir::Mod> {
  static constexpr int scratch = 4;
  template <class Vmm>
  static void emit(EmitContext<Vmm>& c, const ir::Mod&, Vmm dst, std::span<const Vmm> in) {
    detail::fmod(c, c.scratch[0], in[0], in[1], c.scratch[1], c.scratch[2], c.scratch[3]);
    c.h.vmovaps(dst, c.scratch[0]);
  }
};

/// Floored remainder, the sign of b: fmod(a, b) + b where that is nonzero and of the other
/// sign (rounded once), copysign(0, b) where it is zero.
template <> struct Emitter<ir::FloorMod> {
  static constexpr int scratch = 4;
  template <class Vmm>
  static void emit(EmitContext<Vmm>& c, const ir::FloorMod&, Vmm dst, std::span<const Vmm> in) {
    const Vmm b = in[1], r = c.scratch[0], t0 = c.scratch[1], t1 = c.scratch[2];
    detail::fmod(c, r, in[0], b, t0, t1, c.scratch[3]);
    if constexpr (EmitContext<Vmm>::avx512) {
      c.h.vcmpps(c.kscratch, r, c.consts.value(0.0f), detail::cmp_eq_oq);
      c.h.vandps(r | c.kscratch, b, c.consts.bits(math::sign));
      c.h.vxorps(t0, r, b);
      c.h.vpmovd2m(c.kscratch, t0);
      c.h.vaddps(r | c.kscratch, r, b);
    } else {
      c.h.vcmpps(t0, r, c.consts.value(0.0f), detail::cmp_eq_oq);
      c.h.vandps(t1, b, c.consts.bits(math::sign));
      c.h.vblendvps(r, r, t1, t0);
      c.h.vxorps(t0, r, b);
      c.h.vaddps(t1, r, b);
      c.h.vblendvps(r, r, t1, t0);
    }
    c.h.vmovaps(dst, r);
  }
};

/// Convert to any element type, the value kept as an f32 (see the file comment).
template <> struct Emitter<ir::Convert> {
  static constexpr int scratch = 2;
  template <class Vmm>
  static void emit(EmitContext<Vmm>& c, const ir::Convert& op, Vmm dst, std::span<const Vmm> in) {
    constexpr bool avx512 = EmitContext<Vmm>::avx512;
    const Vmm x = in[0], t = c.scratch[0], m = c.scratch[1];
    switch (op.to) {
    case ElementType::f32:
      if (dst.getIdx() != x.getIdx()) c.h.vmovaps(dst, x);
      return;
    case ElementType::boolean: // x != 0, NaN included
      if constexpr (avx512) {
        c.h.vcmpps(c.kscratch, x, c.consts.value(0.0f), detail::cmp_neq_uq);
        c.h.vmovups(dst | c.kscratch | Xbyak::util::T_z, c.consts.bits(math::one));
      } else {
        c.h.vcmpps(dst, x, c.consts.value(0.0f), detail::cmp_neq_uq);
        c.h.vandps(dst, dst, c.consts.bits(math::one));
      }
      return;
    case ElementType::f16:
      if constexpr (avx512) {
        c.h.vcvtps2ph(Xbyak::Ymm(t.getIdx()), x, 0x00); // round to nearest even
        c.h.vcvtph2ps(dst, Xbyak::Ymm(t.getIdx()));
      } else {
        c.h.vcvtps2ph(Xbyak::Xmm(t.getIdx()), x, 0x00);
        c.h.vcvtph2ps(dst, Xbyak::Xmm(t.getIdx()));
      }
      return;
    case ElementType::bf16: // round to nearest even on the top 16 bits; NaN stays NaN
      c.h.vpsrld(t, x, 16);
      if constexpr (avx512) {
        c.h.vpandd(t, t, c.consts.bits(1));
        c.h.vpaddd(t, t, x);
        c.h.vpaddd(t, t, c.consts.bits(0x7fff));
        c.h.vpandd(t, t, c.consts.bits(0xffff0000));
        c.h.vcmpps(c.kscratch, x, x, detail::cmp_unord_q);
        c.h.vblendmps(dst | c.kscratch, t, x);
      } else {
        c.h.vpand(t, t, c.consts.bits(1));
        c.h.vpaddd(t, t, x);
        c.h.vpaddd(t, t, c.consts.bits(0x7fff));
        c.h.vpand(t, t, c.consts.bits(0xffff0000));
        c.h.vcmpps(m, x, x, detail::cmp_unord_q);
        c.h.vblendvps(dst, t, x, m);
      }
      return;
    case ElementType::i32:
    case ElementType::i8:
    case ElementType::u8: {
      // truncate, +0 for -0 (an integer has no sign of zero), NaN -> 0, saturate
      float lo = -2147483648.0f, hi = 2147483648.0f; // 2^31 - 1 is held as its f32, 2^31
      if (op.to == ElementType::i8) lo = -128, hi = 127;
      if (op.to == ElementType::u8) lo = 0, hi = 255;
      detail::round(c, t, x, detail::round_trunc);
      c.h.vaddps(t, t, c.consts.value(0.0f));
      if constexpr (avx512) {
        c.h.vcmpps(c.kscratch, x, x, detail::cmp_unord_q);
        c.h.vxorps(t | c.kscratch, t, t);
      } else {
        c.h.vcmpps(m, x, x, detail::cmp_ord_q);
        c.h.vandps(t, t, m);
      }
      c.h.vmaxps(t, t, c.consts.value(lo));
      c.h.vminps(dst, t, c.consts.value(hi));
      return;
    }
    }
  }
};

} // namespace snippets::x64
