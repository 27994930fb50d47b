// SPDX-License-Identifier: Apache-2.0
// snippets/target/x64/emitters/math.hpp: the approximation routines the transcendental
// emitters share (exp, expm1, log, erf, and the f64 log2/exp2 of the general Power).
//
// Every routine works on caller-given registers: inputs are read-only unless the contract
// says otherwise, temporaries are named, and the result register may alias an input only
// where stated. All constants come from the kernel's ConstantTable (RIP-relative, one load
// per use). The same code serves AVX2 (Ymm) and AVX-512 (Zmm); where the ISAs differ the
// AVX-512 branch uses VSCALEFPS (one rounding into the subnormal range), VGETMANTPS /
// VGETEXPPS (subnormal inputs without rescaling) and VFIXUPIMMPS (special inputs in one op).
//
// The polynomials were fitted for this project by scripts/fit-math-coefficients.py (weighted
// Remez exchange, then rounding to f32 with a greedy +-ulp search); each table says what it
// approximates and its approximation error. Evaluation adds at most a few roundings; the
// end-to-end accuracy is measured by tests/test_jit_math_accuracy.cpp and written down in
// docs/math_accuracy.md.
#pragma once

#include <array>
#include <cstdint>
#include <iterator>
#include <optional>
#include <span>
#include <type_traits>

#include "snippets/target/math_coefficients.hpp"
#include "snippets/target/x64/emitters/eltwise.hpp"

namespace snippets::x64::math {

// ---- coefficient tables (ascending powers, f32 bit patterns unless stated) ----
// The tables every target shares (f32, and the f64 ones of the general Power) are in
// target/math_coefficients.hpp.
using namespace snippets::math_coefficients;

/// The same of degree 4, for results that need 17 significand bits or fewer (kept as bf16 or
/// f16, or the relaxed accuracy tier: EmitContext::result_bits): relative error 5.3e-6
/// (2^-17.5), 1/700 of the smallest bf16 rounding step (2^-8 relative) and 1/90 of f16's.
/// Two FMAs fewer on the critical path (docs/benchmarks.md).
inline constexpr std::uint32_t exp_q_short[] = {0x3f00035b, 0x3e2b8e76, 0x3d2912ca};

// ---- constants ----
// Cody-Waite split of ln2: ln2_hi = f32(ln2) is a multiple of 2^-24, so with an FMA
// x - n * ln2_hi is exact for |n| <= 2^8 (the difference is a multiple of 2^-25 below 1/2);
// ln2_lo = f32(ln2 - ln2_hi) carries the rest.
inline constexpr std::uint32_t ln2_hi = 0x3f317218, ln2_lo = 0xb102e308, log2e = 0x3fb8aa3b,
                               one = 0x3f800000, sign = 0x80000000, abs_mask = 0x7fffffff,
                               pos_inf = 0x7f800000, neg_inf = 0xff800000, qnan = 0x7fc00000,
                               flt_min = 0x00800000, shifter = 0x4b400000, // 1.5 * 2^23
    tiny_shifter = 0x30800000, // 2^-30: rounds to 2^-53 multiples
    square_floor = 0x2b800000; // 2^-40: x^2 stays normal
/// exp(x) rounds to 0 below -103.98 and overflows above 88.73; -104 keeps n >= -150 and
/// 88.8 gives n = 128 (the reduced argument carries the rest, see exp_reduce).
inline constexpr float exp_lo = -104.0f, exp_hi = 88.8f;

// ---- helpers ----

/// acc = k[n-1]; acc = acc * x + k[i] for i = n-2 .. 0 (Horner with FMA). acc != x.
template <class Vmm>
void horner(EmitContext<Vmm>& c, Vmm acc, Vmm x, std::span<const std::uint32_t> k) {
  c.h.vmovups(acc, c.consts.bits(k.back()));
  for (std::size_t i = k.size() - 1; i-- > 0;) c.h.vfmadd213ps(acc, x, c.consts.bits(k[i]));
}
/// The same on f64 lanes.
template <class Vmm>
void horner_pd(EmitContext<Vmm>& c, Vmm acc, Vmm x, std::span<const std::uint64_t> k) {
  c.h.vmovupd(acc, c.consts.bits64(k.back()));
  for (std::size_t i = k.size() - 1; i-- > 0;) c.h.vfmadd213pd(acc, x, c.consts.bits64(k[i]));
}

/// dst = src with the sign bit of `sign_src` or-ed in (|src| | sign for a non-negative
/// src). AVX2 uses `tmp` (!= dst); dst may be src.
template <class Vmm> void or_sign(EmitContext<Vmm>& c, Vmm dst, Vmm src, Vmm sign_src, Vmm tmp) {
  if constexpr (EmitContext<Vmm>::avx512) {
    if (dst.getIdx() != src.getIdx()) c.h.vmovaps(dst, src);
    c.h.vpternlogd(dst, sign_src, c.consts.bits(sign), 0xf8); // a | (b & c)
  } else {
    c.h.vandps(tmp, sign_src, c.consts.bits(sign));
    c.h.vorps(dst, src, tmp);
  }
}

/// dst = |src| with the sign bit of `sign_src` (copysign). AVX2 uses `tmp` (!= dst, src).
template <class Vmm>
void copy_sign(EmitContext<Vmm>& c, Vmm dst, Vmm src, Vmm sign_src, Vmm tmp, bool invert = false) {
  if constexpr (EmitContext<Vmm>::avx512) {
    if (dst.getIdx() != src.getIdx()) c.h.vmovaps(dst, src);
    // c ? b : a, or c ? ~b : a
    c.h.vpternlogd(dst, sign_src, c.consts.bits(sign), invert ? 0x72 : 0xd8);
  } else {
    c.h.vandps(tmp, sign_src, c.consts.bits(sign));
    if (invert) c.h.vxorps(tmp, tmp, c.consts.bits(sign));
    c.h.vandps(dst, src, c.consts.bits(abs_mask));
    c.h.vorps(dst, dst, tmp);
  }
}

// ---- exp ----

/// n = round(v * log2e) for |v * log2e| < 2^22, by adding and subtracting 1.5 * 2^23 (the
/// sum rounds to an integer, ties to even; cheaper than VROUNDPS / VRNDSCALEPS). n != v.
template <class Vmm> void round_times_log2e(EmitContext<Vmm>& c, Vmm n, Vmm v) {
  c.h.vmovups(n, c.consts.bits(shifter));
  c.h.vfmadd231ps(n, v, c.consts.bits(log2e));
  c.h.vsubps(n, n, c.consts.bits(shifter));
}

/// Cody-Waite reduction: n = round(x' * log2e) and r = x' - n * ln2 with x' = max(x, lo)
/// (NaN stays NaN; no lo: x' = x, for callers that bound x themselves); when `hi` is given, n
/// is computed from min(x', hi) while r keeps x', so that x above hi (+inf included) gives a
/// large r and an overflowing polynomial rather than a wrong finite value. r may be x; n must
/// differ from both.
template <class Vmm>
void exp_reduce(EmitContext<Vmm>& c, Vmm r, Vmm n, Vmm x, std::optional<float> lo,
                std::optional<float> hi = std::nullopt) {
  if (lo) {
    c.h.vmovups(n, c.consts.value(*lo));
    c.h.vmaxps(r, n, x); // x second: NaN comes through
  } else if (r.getIdx() != x.getIdx()) {
    c.h.vmovaps(r, x);
  }
  if (hi) {
    c.h.vminps(n, r, c.consts.value(*hi));
    c.h.vmulps(n, n, c.consts.bits(log2e));
    c.h.vaddps(n, n, c.consts.bits(shifter)); // rounds to an integer
    c.h.vsubps(n, n, c.consts.bits(shifter));
  } else {
    round_times_log2e(c, n, r);
  }
  c.h.vfnmadd231ps(r, n, c.consts.bits(ln2_hi)); // exact (see ln2_hi)
  c.h.vfnmadd231ps(r, n, c.consts.bits(ln2_lo));
}

/// A coefficient table times 2^-24 (exact: the exponent field minus 24).
template <std::size_t N>
constexpr std::array<std::uint32_t, N> times_two_m24(const std::uint32_t (&q)[N]) {
  std::array<std::uint32_t, N> k{};
  for (std::size_t i = 0; i < N; ++i) k[i] = q[i] - (24u << 23);
  return k;
}
inline constexpr auto exp_q_scaled = times_two_m24(exp_q);
inline constexpr auto exp_q_short_scaled = times_two_m24(exp_q_short);

/// Whether the result needs few enough bits for the short forms (exp_q_short, 2^-17.5).
template <class Vmm> bool short_forms(const EmitContext<Vmm>& c) { return c.result_bits <= 17; }

/// exp_q, or exp_q_short where the result needs 17 bits or fewer; `scaled`: times 2^-24.
template <class Vmm>
std::span<const std::uint32_t> exp_q_for(const EmitContext<Vmm>& c, bool scaled = false) {
  if (short_forms(c))
    return scaled ? std::span<const std::uint32_t>(exp_q_short_scaled) : exp_q_short;
  return scaled ? std::span<const std::uint32_t>(exp_q_scaled) : exp_q;
}

/// p = exp(r) for the reduced r: 1 + r (1 + r q(r)). p != r.
template <class Vmm> void exp_poly(EmitContext<Vmm>& c, Vmm p, Vmm r) {
  horner(c, p, r, exp_q_for(c));
  c.h.vfmadd213ps(p, r, c.consts.bits(one));
  c.h.vfmadd213ps(p, r, c.consts.bits(one));
}

/// AVX2: dst = v * 2^n with bits = shifter + n (the rounding sum of round_times_log2e, n in
/// [-252, 254]) as 2^(n/2) * 2^(n - n/2), both factors normal, so only the second product
/// rounds. bits >> 1 is bits(shifter) / 2 + floor(n / 2); shifted into the exponent field,
/// both bits(shifter) terms drop out (multiples of 2^9). Destroys bits; tmp != v; dst may be v.
template <class Vmm> void scale_bits(EmitContext<Vmm>& c, Vmm dst, Vmm v, Vmm bits, Vmm tmp) {
  c.h.vpsrld(tmp, bits, 1);
  c.h.vpslld(tmp, tmp, 23); // n / 2
  c.h.vpslld(bits, bits, 23);
  c.h.vpsubd(bits, bits, tmp); // n - n / 2
  c.h.vpaddd(tmp, tmp, c.consts.bits(one));
  c.h.vpaddd(bits, bits, c.consts.bits(one));
  c.h.vmulps(dst, v, tmp); // exact: 2^(n/2) and the product are normal
  c.h.vmulps(dst, dst, bits);
}

/// dst = v * 2^n for integral n in [-252, 254] (f32), with one rounding: subnormal results
/// are rounded once, overflow gives inf. AVX-512: VSCALEFPS; AVX2: scale_bits. Destroys n;
/// AVX2 uses tmp (!= v). dst may be v.
template <class Vmm> void scale(EmitContext<Vmm>& c, Vmm dst, Vmm v, Vmm n, Vmm tmp) {
  if constexpr (EmitContext<Vmm>::avx512) {
    c.h.vscalefps(dst, v, n);
  } else {
    c.h.vaddps(n, n, c.consts.bits(shifter)); // exact: shifter + n
    scale_bits(c, dst, v, n, tmp);
  }
}

/// The constant `k` as a register operand: its pinned register, or `tmp` loaded with it (for
/// the operands that must be a register: a VMAXPS whose NaN must come from the other source,
/// an FMA accumulator, VBLENDVPS' first source).
template <class Vmm> Vmm in_register(EmitContext<Vmm>& c, const Xbyak::Operand& k, Vmm tmp) {
  if (!k.isMEM()) return Vmm(k.getIdx());
  c.h.vmovups(tmp, k);
  return tmp;
}

inline constexpr std::uint32_t two_m24 = 0x33800000, two_24 = 0x4b800000;

/// AVX2 range reduction without VCVTPS2DQ: bits = shifter + n with n = round(m log2e), an
/// integer whose bit pattern holds n (mod 2^9 in the bits the exponent field takes after a
/// shift by 23), nreg = n, and a -= n ln2 (a becomes r). With `split`, a becomes
/// r_hi = a - n ln2_hi and nreg becomes r = r_hi - n ln2_lo, so that a polynomial can start on
/// r_hi while the last step runs (exp_split_poly). m may be a or nreg; a, bits and nreg
/// distinct.
template <class Vmm>
void exp_reduce_bits(EmitContext<Vmm>& c, Vmm a, Vmm m, Vmm bits, Vmm nreg, bool split = false) {
  c.h.vmovups(bits, c.consts.bits(shifter));
  c.h.vfmadd231ps(bits, m, c.consts.bits(log2e));
  c.h.vsubps(nreg, bits, c.consts.bits(shifter));
  c.h.vfnmadd231ps(a, nreg, c.consts.bits(ln2_hi));
  if (split)
    c.h.vfnmadd132ps(nreg, a, c.consts.bits(ln2_lo)); // nreg = a - n ln2_lo
  else
    c.h.vfnmadd231ps(a, nreg, c.consts.bits(ln2_lo));
}

/// AVX2, for n in [-150, 0] (exp of x <= 0): p = 2^-24 exp(r) (exp_poly with every coefficient
/// scaled, so it rounds as exp_poly does) and bits (from exp_reduce_bits) becomes 2^(n + 24),
/// always normal: exp = p * bits rounds once, into the subnormals too. q takes r_hi (r before
/// its ln2_lo step, exp_reduce_bits' split; or r itself): that moves r^2 q(r) by at most
/// r^2 q'(r) |n ln2_lo| < 2^-27 relative for |n| <= 150, and takes 4 cycles off the chain
/// (Sigmoid, 64 Ki f32 on Zen 3: 29.1 -> 28.2 us). p differs from r_hi and r.
template <class Vmm> void exp_split_poly(EmitContext<Vmm>& c, Vmm p, Vmm bits, Vmm r_hi, Vmm r) {
  horner(c, p, r_hi, exp_q_for(c, true));
  c.h.vfmadd213ps(p, r, c.consts.bits(two_m24));
  c.h.vfmadd213ps(p, r, c.consts.bits(two_m24));
  c.h.vpslld(bits, bits, 23); // n mod 2^9 in the exponent field; + bits(2^24): 2^(n + 24)
  c.h.vpaddd(bits, bits, c.consts.bits(two_24));
}

/// dst = exp(x): NaN -> NaN, -inf -> 0, +inf and x > 88.72 -> inf, subnormal results for
/// x in [-103.97, -87.34]. With `nonpositive` the caller guarantees x <= 0 or NaN (x - max in
/// a Softmax): no overflow clamp. AVX2 takes n from the bits of the rounding sum shifter + n
/// (no VCVTPS2DQ): 2^(n/2) and 2^(n - n/2) by shifts, or, for x <= 0, one factor 2^(n + 24)
/// times the polynomial scaled by 2^-24 (exp_split_poly). Temps t0, t1; dst may be x.
template <class Vmm>
void exp(EmitContext<Vmm>& c, Vmm dst, Vmm x, Vmm t0, Vmm t1, bool nonpositive = false) {
  if constexpr (EmitContext<Vmm>::avx512) {
    exp_reduce(c, t0, t1, x, exp_lo, nonpositive ? std::nullopt : std::optional(exp_hi));
    exp_poly(c, dst, t0);
    scale(c, dst, dst, t1, t0);
  } else {
    c.h.vmaxps(t0, in_register(c, c.consts.value(exp_lo), t0), x); // x second: NaN comes through
    Vmm m = t0;
    if (!nonpositive) { // n from min(x, hi), r from x: x > hi overflows in the polynomial
      c.h.vminps(dst, t0, c.consts.value(exp_hi));
      m = dst;
    }
    exp_reduce_bits(c, t0, m, t1, dst);
    if (nonpositive) {
      exp_split_poly(c, dst, t1, t0, t0);
      c.h.vmulps(dst, dst, t1);
      return;
    }
    exp_poly(c, dst, t0);
    scale_bits(c, dst, dst, t1, t0);
  }
}

/// out = exp(-|v|) in (0, 1] (NaN for NaN): the building block of the logistic functions.
/// v above 87 counts as 87 (callers add e to 1 or to v there, so a subnormal e, which would
/// cost a microcode assist per element, changes nothing); -|v| below `lo` counts as lo. With
/// `nan_elsewhere` (the caller's result carries v's NaN through another operand), NaN may give
/// any value, and AVX-512 bounds |v| by -lo in one VRANGEPS. Temps t0, t1; out differs from
/// all; v is read first.
template <class Vmm>
void exp_neg_abs(EmitContext<Vmm>& c, Vmm out, Vmm v, Vmm t0, Vmm t1, float lo = exp_lo,
                 bool nan_elsewhere = false) {
  if (EmitContext<Vmm>::avx512 && nan_elsewhere) {
    c.h.vrangeps(t0, v, c.consts.value(-lo), 0x0e); // -min(|v|, -lo)
    exp_reduce(c, t0, t1, t0, std::nullopt);
  } else {
    c.h.vmovups(t0, c.consts.value(87.0f));
    c.h.vminps(t0, t0, v);                  // v second: NaN comes through
    c.h.vorps(t0, t0, c.consts.bits(sign)); // -|v|
    exp_reduce(c, t0, t1, t0, lo);
  }
  exp_poly(c, out, t0);
  scale(c, out, out, t1, t0);
}

/// AVX2: exp(-|v|) as an unrounded product p * s (exp_reduce_bits, exp_split_poly): e = p * s
/// rounds once, into the subnormals too, and 1 + e = fma(p, s, 1) rounds once.
/// -|v| is clamped to lo in [exp_lo, 0) and, for v > 0, to -87 (1 + e does not need e below
/// e^-87, and a subnormal e would cost a microcode assist); NaN stays NaN. With
/// `negative_abs`, v already holds -|v| and only lo bounds it. p, s, t, u distinct; v is read
/// first (it may be p or s).
template <class Vmm>
void exp_neg_abs_split(EmitContext<Vmm>& c, Vmm p, Vmm s, Vmm v, Vmm t, Vmm u, float lo,
                       bool negative_abs = false) {
  static_assert(!EmitContext<Vmm>::avx512);
  // the second source of VMINPS / VMAXPS is the one a NaN comes through
  Vmm a = v;
  if (!negative_abs) {
    if (lo < -87.0f) {
      c.h.vminps(t, in_register(c, c.consts.value(87.0f), t), v);
      a = t;
    }
    c.h.vorps(t, a, c.consts.bits(sign));
    a = t;
  }
  c.h.vmaxps(t, in_register(c, c.consts.value(lo), s), a); // n >= -150: s stays normal
  exp_reduce_bits(c, t, t, s, u, true);
  exp_split_poly(c, p, s, t, u);
}

/// t = n / d to within about half an ulp, without a division: c = 1/d from RCP14PS (2^-14)
/// or RCPPS (2^-11.5) refined by one Newton step, q = n c, then q + r c with the residual
/// r = n - q d_exact, which the caller forms exactly: `residual(n, q)` overwrites n with it
/// (the rounded d may differ from the exact denominator; correcting against the exact one
/// removes that rounding too). On AVX2 c is clamped to [c_min, c_max], the range 1/d has, so
/// that q keeps the ratio to n the residual's exactness relies on (RCPPS(2) is below 1/2).
/// n and d are destroyed. (VDIVPS rounds once too, but cannot see the exact denominator.)
template <class Vmm, class Residual>
void divide(EmitContext<Vmm>& c, Vmm n, Vmm d, Vmm t, float c_min, float c_max, Residual residual) {
  if constexpr (EmitContext<Vmm>::avx512)
    c.h.vrcp14ps(t, d);
  else
    c.h.vrcpps(t, d);
  c.h.vfnmadd213ps(d, t, c.consts.bits(one)); // 1 - d c0
  c.h.vfmadd213ps(d, t, t);                   // c = c0 + c0 (1 - d c0)
  if constexpr (!EmitContext<Vmm>::avx512) {  // RCP14PS + Newton: within 2^-28, rounds inside
    c.h.vmaxps(d, d, c.consts.value(c_min));
    c.h.vminps(d, d, c.consts.value(c_max));
  }
  c.h.vmulps(t, n, d); // q
  residual(n, t);
  c.h.vfmadd231ps(t, n, d); // q + r c
}

/// s0 = f logistic(v) = f / (1 + exp(-v)), as f / (1 + e) for v >= 0 and f e / (1 + e)
/// below, with e = exp(-|v|) <= 1: neither side overflows or cancels, and one VDIVPS rounds
/// the quotient (it is 2.5 cycles per zmm here, beside the FMAs; a reciprocal with Newton and
/// a correction against the exact 1 + e took six FMA-port instructions). f is `factor`, or 1
/// without one. Errors: e (1 ulp), the rounding of 1 + e (half an ulp of the quotient), the
/// quotient (half), and f e (half). Exactly f for v >= 16.7 (1 + e rounds to 1), f e
/// (subnormals included) far below 0, NaN for NaN v (or, with nan_elsewhere, NaN f). The sign
/// is read from `sign_src` (see LogisticOptions::invert), which must otherwise have v's sign.
/// AVX2 forms e as p * s (exp_neg_abs_split): about 20 instructions per vector instead of 30,
/// and 1 + e from the unrounded product; a core holds only so many FP instructions waiting on
/// a long chain, so the count sets the speed (Sigmoid on 64 Ki f32, Zen 3: 36.5 -> 29.0 us).
/// s0..s3 distinct (AVX-512 leaves s3 alone); v, sign_src and factor are only read, v before
/// s0..s3 are written (it may be s2), factor and sign_src may be any register but s0..s3.
struct LogisticOptions {
  bool invert = false;        // v has the opposite sign of sign_src
  float lo = exp_lo;          // -|v| below counts as lo (see exp_neg_abs)
  bool nan_elsewhere = false; // see exp_neg_abs
  bool negative_abs = false;  // AVX2: v holds -|v| already (see exp_neg_abs_split)
};
template <class Vmm>
void logistic(EmitContext<Vmm>& c, Vmm v, Vmm sign_src, Vmm s0, Vmm s1, Vmm s2, Vmm s3,
              const LogisticOptions& o = {},
              std::type_identity_t<std::optional<Vmm>> factor = std::nullopt) {
  if constexpr (!EmitContext<Vmm>::avx512) {
    // e = p s and 1 + e = fma(p, s, 1), each rounded once; the numerator f where v >= 0,
    // f e below (VBLENDVPS takes its second source where the mask's sign bit is set)
    const Vmm p = s2, s = s1;
    exp_neg_abs_split(c, p, s, v, s0, s3, o.lo, o.negative_abs);
    c.h.vmulps(s0, p, s);
    c.h.vfmadd213ps(p, s, c.consts.bits(one));
    if (factor) {
      c.h.vmulps(s1, *factor, s0);
      if (o.invert)
        c.h.vblendvps(s0, s1, *factor, sign_src);
      else
        c.h.vblendvps(s0, *factor, s1, sign_src);
    } else if (o.invert) {
      c.h.vblendvps(s0, s0, c.consts.bits(one), sign_src);
    } else {
      c.h.vblendvps(s0, in_register(c, c.consts.bits(one), s1), s0, sign_src);
    }
    c.h.vdivps(s0, s0, p);
    return;
  }
  const Vmm e = s2;
  exp_neg_abs(c, e, v, s1, s0, o.lo, o.nan_elsewhere);
  // numerator: f where v >= 0, f e below
  if constexpr (EmitContext<Vmm>::avx512) {
    c.h.vpmovd2m(c.kscratch, sign_src);
    if (o.invert) c.h.knotw(c.kscratch, c.kscratch);
    if (factor) {
      c.h.vmovaps(s0, *factor);
      c.h.vmulps(s0 | c.kscratch, *factor, e);
    } else {
      c.h.vmovups(s0, c.consts.bits(one));
      c.h.vmovaps(s0 | c.kscratch, e);
    }
  } else { // VBLENDVPS takes its third operand where the mask's sign bit is set
    if (factor)
      c.h.vmulps(s1, *factor, e);
    else
      c.h.vmovups(s1, c.consts.bits(one));
    const Vmm f = factor ? *factor : s1, fe = factor ? s1 : e;
    if (o.invert)
      c.h.vblendvps(s0, fe, f, sign_src);
    else
      c.h.vblendvps(s0, f, fe, sign_src);
  }
  c.h.vaddps(s1, e, c.consts.bits(one));
  c.h.vdivps(s0, s0, s1);
}

// ---- expm1 ----

/// out = expm1(y) for y <= 0 (y below -20 is raised to -20, where expm1 is -1 in f32; NaN
/// stays NaN). n = round(y / ln2) in [-29, 0], r = y - n ln2, and with s = 2^n
///   expm1(y) = (s - 1) + s r + s r^2 q(r)      (expm1(r) = r + r^2 q(r)),
/// where s - 1 and s r are exact and (s - 1) + s r is added exactly (Fast2Sum: |s - 1| >=
/// |s r| when n < 0, and s - 1 = 0 when n = 0), so only the final sum rounds. Any sign of a
/// zero result is possible: callers fix it. With `clamp_above`, y > 0 counts as 0 (for
/// callers that discard those lanes: large y would make a subnormal or infinite mess that
/// costs microcode assists). Temps t0, t1, t2; out differs from them; y is read first.
template <class Vmm>
void expm1_nonpositive(EmitContext<Vmm>& c, Vmm out, Vmm y, Vmm t0, Vmm t1, Vmm t2,
                       bool clamp_above = false) {
  if (clamp_above) {
    c.h.vxorps(t1, t1, t1);
    c.h.vminps(t0, t1, y); // y second: NaN comes through
    y = t0;
  }
  c.h.vmovups(t1, c.consts.value(-20.0f));
  c.h.vmaxps(t0, t1, y); // y second: NaN comes through
  round_times_log2e(c, t1, t0);
  c.h.vfnmadd231ps(t0, t1, c.consts.bits(ln2_hi));
  c.h.vfnmadd231ps(t0, t1, c.consts.bits(ln2_lo)); // r
  horner(c, out, t0, expm1_q);
  // r q(r) with r rounded to a multiple of 2^-53: the r^2 term below changes by under 2^-54
  // relative, and for |r| < 2^-54 it is 0 instead of a subnormal product (an assist)
  c.h.vaddps(t2, t0, c.consts.bits(tiny_shifter));
  c.h.vsubps(t2, t2, c.consts.bits(tiny_shifter));
  c.h.vmulps(out, out, t2);
  c.h.vcvtps2dq(t1, t1);
  c.h.vpslld(t1, t1, 23);
  c.h.vpaddd(t1, t1, c.consts.bits(one)); // s = 2^n
  c.h.vmulps(t0, t0, t1);                 // s r, exact
  c.h.vsubps(t1, t1, c.consts.bits(one)); // s - 1, exact
  c.h.vaddps(t2, t1, t0);                 // hi = (s - 1) + s r
  c.h.vsubps(t1, t2, t1);
  c.h.vsubps(t1, t0, t1);       // lo, its rounding error
  c.h.vfmadd213ps(out, t0, t1); // s r * r q(r) + lo
  c.h.vaddps(out, out, t2);
}

// ---- log ----

/// out = log1p(f) = f + f^2 s(f) for f in [-1/4, 1/2]. out != f. With a temp `tiny`, the
/// f^2 term uses f rounded to a multiple of 2^-53 (a change under 2^-53 relative), so that f
/// far below 2^-63 gives no subnormal product (a microcode assist per element).
template <class Vmm>
void log1p_poly(EmitContext<Vmm>& c, Vmm out, Vmm f,
                std::optional<std::type_identity_t<Vmm>> tiny = std::nullopt) {
  horner(c, out, f, log1p_s);
  Vmm g = f;
  if (tiny) {
    g = *tiny;
    c.h.vaddps(g, f, c.consts.bits(tiny_shifter));
    c.h.vsubps(g, g, c.consts.bits(tiny_shifter));
  }
  c.h.vmulps(out, out, g);
  c.h.vfmadd213ps(out, g, f);
}

/// out = log(x), with log(+-0) = -inf, log(x < 0) = NaN, log(+inf) = +inf, NaN -> NaN,
/// subnormal x exact in its exponent. x = 2^k m with m in [3/4, 3/2), log x = k ln2 +
/// log1p(m - 1) (m - 1 is exact), k ln2 added with the hi/lo split. Temps t0, t1; out
/// differs from x, t0, t1.
template <class Vmm> void log(EmitContext<Vmm>& c, Vmm out, Vmm x, Vmm t0, Vmm t1) {
  if constexpr (EmitContext<Vmm>::avx512) {
    c.h.vgetmantps(t0, x, 0x03); // m in [3/4, 3/2), sign of x (negative x is fixed below)
    c.h.vgetexpps(t1, x);        // floor(log2 |x|), subnormals included
    c.h.vcmpps(c.kscratch, t0, c.consts.bits(one), detail::cmp_lt_oq);
    c.h.vaddps(t1 | c.kscratch, t1, c.consts.bits(one)); // m < 1: x = m 2^(e+1)
  } else {
    // subnormal x: scale by 2^23 first and take 23 off the exponent
    c.h.vcmpps(t1, x, c.consts.bits(flt_min), detail::cmp_lt_oq);
    c.h.vmulps(t0, x, c.consts.value(8388608.0f));
    c.h.vblendvps(t0, x, t0, t1);
    c.h.vandps(t1, t1, c.consts.value(23.0f));
    // bits - bits(3/4): the exponent field is k, the mantissa field that of m - 3/4
    c.h.vpsubd(out, t0, c.consts.bits(0x3f400000));
    c.h.vpand(t0, out, c.consts.bits(0x007fffff));
    c.h.vpaddd(t0, t0, c.consts.bits(0x3f400000)); // m
    c.h.vpsrad(out, out, 23);
    c.h.vcvtdq2ps(out, out);
    c.h.vsubps(t1, out, t1); // k
  }
  c.h.vsubps(t0, t0, c.consts.bits(one)); // f = m - 1, exact
  log1p_poly(c, out, t0);
  c.h.vfmadd231ps(out, t1, c.consts.bits(ln2_lo));
  c.h.vfmadd231ps(out, t1, c.consts.bits(ln2_hi));
  if constexpr (EmitContext<Vmm>::avx512) {
    // by the class of x: QNaN -> x, SNaN -> quiet x, +-0 -> -inf, 1 -> +0, -inf -> NaN,
    // +inf -> +inf, negative -> NaN, positive -> keep
    c.h.vfixupimmps(out, x, c.consts.bits(0x03538421), 0);
  } else {
    c.h.vcmpps(t0, x, c.consts.bits(pos_inf), detail::cmp_eq_oq);
    c.h.vblendvps(out, out, c.consts.bits(pos_inf), t0);
    c.h.vcmpps(t0, x, c.consts.value(0.0f), detail::cmp_eq_oq);
    c.h.vblendvps(out, out, c.consts.bits(neg_inf), t0);
    c.h.vcmpps(t0, x, c.consts.value(0.0f), detail::cmp_nge_uq); // x < 0 or NaN
    c.h.vorps(out, out, t0);                                     // all ones: NaN
  }
}

// ---- erf ----

/// out = erf(x) with erf_tables: |x| < split: x + x p(x^2) (NaN takes this branch); else
/// copysign(1 - exp(q(min(|x|, clamp))), x). With `one_plus` (gelu_erf_tables): out =
/// 1 + erf(x / sqrt 2), the large branch exp(q) for x < 0 (0 below -clamp) and 2 - exp(q)
/// for x > 0. Temps t0, t1; out differs from x, t0, t1; x is only read.
template <class Vmm>
void erf(EmitContext<Vmm>& c, Vmm out, Vmm x, Vmm t0, Vmm t1, const ErfTables& tb,
         bool one_plus = false) {
  // large branch: q in [-21, -1] (both tables), so exp needs no clamping
  c.h.vandps(t0, x, c.consts.bits(abs_mask));
  c.h.vminps(t0, t0, c.consts.value(tb.clamp));
  horner(c, t1, t0, tb.large_q);
  round_times_log2e(c, t0, t1);
  c.h.vfnmadd231ps(t1, t0, c.consts.bits(ln2_hi));
  c.h.vfnmadd231ps(t1, t0, c.consts.bits(ln2_lo));
  exp_poly(c, out, t1);
  scale(c, out, out, t0, t1); // erfc
  if (one_plus) {
    c.h.vmovups(t0, c.consts.value(2.0f));
    c.h.vsubps(t0, t0, out);
    if constexpr (EmitContext<Vmm>::avx512) {
      c.h.vpmovd2m(c.kscratch, x);
      c.h.vmovaps(t0 | c.kscratch, out); // x < 0: erfc
      c.h.vcmpps(c.kscratch, x, c.consts.value(-tb.clamp), detail::cmp_lt_oq);
      c.h.vxorps(t0 | c.kscratch, t0, t0); // beyond the fit: 0
      c.h.vmovaps(out, t0);
    } else {
      c.h.vblendvps(out, t0, out, x); // x < 0: erfc
      c.h.vcmpps(t0, x, c.consts.value(-tb.clamp), detail::cmp_nlt_uq);
      c.h.vandps(out, out, t0); // beyond the fit: 0
    }
  } else {
    c.h.vmovups(t0, c.consts.bits(one));
    c.h.vsubps(out, t0, out);
    or_sign(c, out, out, x, t0);
  }
  // small branch; x^2 from max(|x|, 2^-40), where p(x^2) = p(0) anyway, so that tiny x gives
  // no subnormal product (a microcode assist)
  c.h.vandps(t0, x, c.consts.bits(abs_mask));
  c.h.vmaxps(t0, t0, c.consts.bits(square_floor));
  c.h.vmulps(t0, t0, t0);
  horner(c, t1, t0, tb.small_p);
  c.h.vfmadd213ps(t1, x, x);
  if (one_plus) c.h.vaddps(t1, t1, c.consts.bits(one));
  c.h.vandps(t0, x, c.consts.bits(abs_mask));
  if constexpr (EmitContext<Vmm>::avx512) {
    c.h.vcmpps(c.kscratch, t0, c.consts.value(tb.split), detail::cmp_nge_uq);
    c.h.vmovaps(out | c.kscratch, t1);
  } else {
    c.h.vcmpps(t0, t0, c.consts.value(tb.split), detail::cmp_nge_uq);
    c.h.vblendvps(out, out, t1, t0);
  }
}

// ---- f64 lanes (general Power) ----

/// The f64 half `half` (0: low lanes, 1: high lanes) of the f32 vector `v`, widened into
/// `dst` (the same register index, full width).
template <class Vmm> void widen_half(EmitContext<Vmm>& c, Vmm dst, Vmm v, int half) {
  if constexpr (EmitContext<Vmm>::avx512) {
    if (half == 0) {
      c.h.vcvtps2pd(dst, Xbyak::Ymm(v.getIdx()));
    } else {
      c.h.vextractf32x8(Xbyak::Ymm(dst.getIdx()), v, 1);
      c.h.vcvtps2pd(dst, Xbyak::Ymm(dst.getIdx()));
    }
  } else {
    if (half == 0) {
      c.h.vcvtps2pd(dst, Xbyak::Xmm(v.getIdx()));
    } else {
      c.h.vextractf128(Xbyak::Xmm(dst.getIdx()), v, 1);
      c.h.vcvtps2pd(dst, Xbyak::Xmm(dst.getIdx()));
    }
  }
}

/// Narrows the f64 vector `src` to f32 (one rounding: subnormals and overflow as IEEE) into
/// half `half` of `dst`; half 0 zeroes the other half. src is destroyed.
template <class Vmm> void narrow_into_half(EmitContext<Vmm>& c, Vmm dst, Vmm src, int half) {
  if constexpr (EmitContext<Vmm>::avx512) {
    if (half == 0) {
      c.h.vcvtpd2ps(Xbyak::Ymm(dst.getIdx()), src);
    } else {
      c.h.vcvtpd2ps(Xbyak::Ymm(src.getIdx()), src);
      c.h.vinsertf32x8(dst, dst, Xbyak::Ymm(src.getIdx()), 1);
    }
  } else {
    if (half == 0) {
      c.h.vcvtpd2ps(Xbyak::Xmm(dst.getIdx()), src);
    } else {
      c.h.vcvtpd2ps(Xbyak::Xmm(src.getIdx()), src);
      c.h.vinsertf128(dst, dst, Xbyak::Xmm(src.getIdx()), 1);
    }
  }
}

/// On f64 lanes: out = |x|^y approximated as 2^(y log2|x|) for x from an f32 (so normal,
/// zero, inf or NaN as a double): log2 by the exponent field and log2(1 + f) = f p(f) for
/// the mantissa in [sqrt(1/2), sqrt(2)), the product clamped to [-1000, 1000], exp2 by
/// 2^n (1 + r p(r)). Zero and inf (log2 -1023 and 1024 from the fields) have log2 scaled to
/// +-1e303, so that any nonzero y takes the limit; NaN inputs give garbage that the caller
/// replaces. xd holds |x| widened (destroyed); the
/// f32 exponents `y` are widened (half `half`) into xd once that is free. out, xd, t distinct.
template <class Vmm> void pow_pd(EmitContext<Vmm>& c, Vmm out, Vmm xd, Vmm t, Vmm y, int half) {
  constexpr bool avx512 = EmitContext<Vmm>::avx512;
  // i = bits(x) + bits(1) - bits(sqrt(1/2)): exponent field k + 1023, mantissa field m's
  c.h.vpaddq(xd, xd, c.consts.bits64(0x00095f619980c433));
  c.h.vpsrlq(t, xd, 52);
  if constexpr (avx512)
    c.h.vporq(t, t, c.consts.bits64(0x4330000000000000)); // 2^52 + field
  else
    c.h.vpor(t, t, c.consts.bits64(0x4330000000000000));
  c.h.vsubpd(t, t, c.consts.value64(4503599627371519.0)); // - (2^52 + 1023): k
  if constexpr (avx512)
    c.h.vpandq(xd, xd, c.consts.bits64(0x000fffffffffffff));
  else
    c.h.vpand(xd, xd, c.consts.bits64(0x000fffffffffffff));
  c.h.vpaddq(xd, xd, c.consts.bits64(0x3fe6a09e667f3bcd)); // m
  c.h.vsubpd(xd, xd, c.consts.value64(1.0));               // f, exact
  horner_pd(c, out, xd, log2_p_f64);
  c.h.vfmadd213pd(out, xd, t); // log2|x| = k + f p(f)
  // |log2| >= 1000 only for 0 and inf: make it -+1e303
  if constexpr (avx512) {
    c.h.vandpd(t, out, c.consts.bits64(0x7fffffffffffffff));
    c.h.vcmppd(c.kscratch, t, c.consts.value64(1000.0), detail::cmp_ge_oq);
    c.h.vmulpd(out | c.kscratch, out, c.consts.value64(1e300));
  } else {
    c.h.vandpd(t, out, c.consts.bits64(0x7fffffffffffffff));
    c.h.vcmppd(t, t, c.consts.value64(1000.0), detail::cmp_ge_oq);
    c.h.vandpd(t, t, c.consts.value64(1e300 - 1));
    c.h.vaddpd(t, t, c.consts.value64(1.0));
    c.h.vmulpd(out, out, t);
  }
  widen_half(c, xd, y, half);
  c.h.vmulpd(out, out, xd); // w
  c.h.vmaxpd(out, out, c.consts.value64(-1000.0));
  c.h.vminpd(out, out, c.consts.value64(1000.0));
  if constexpr (avx512)
    c.h.vrndscalepd(t, out, detail::round_nearest);
  else
    c.h.vroundpd(t, out, detail::round_nearest);
  c.h.vsubpd(xd, out, t); // r = w - n, exact
  horner_pd(c, out, xd, exp2_p_f64);
  c.h.vfmadd213pd(out, xd, c.consts.value64(1.0));
  if constexpr (avx512) {
    c.h.vscalefpd(out, out, t);
  } else {
    c.h.vcvtpd2dq(Xbyak::Xmm(t.getIdx()), t);
    c.h.vpmovsxdq(t, Xbyak::Xmm(t.getIdx()));
    c.h.vpaddq(t, t, c.consts.bits64(1023));
    c.h.vpsllq(t, t, 52);
    c.h.vmulpd(out, out, t);
  }
}

} // namespace snippets::x64::math
