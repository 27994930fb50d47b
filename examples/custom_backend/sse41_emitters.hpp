// SPDX-License-Identifier: Apache-2.0
// examples/custom_backend/sse41_emitters.hpp: the emitter table of the SSE4.1 backend, one
// small stateless emitter per op on 4-lane xmm registers.
//
// Emitter<Op> gives `scratch` (xmm registers it needs, kept from the register allocator) and
// `emit(ctx, op, dst, inputs)`. `dst` may be one of the inputs (the allocator reuses the
// register of a value this op reads last), and SSE instructions overwrite their first
// operand, so an emitter reads every input before it writes dst, or works in scratch.
// Constants come from the x64 ConstantTable built for 16-byte vectors: its entries are 16-byte
// aligned, as the memory operands of legacy SSE arithmetic must be.
// No BLENDVPS: its mask is the fixed register xmm0, which may hold a value; selects are
// AND/ANDN/OR. Semantics follow ir/op_tags.hpp and the formulas of reference/eltwise.hpp.
#pragma once

#include <cstdint>
#include <span>

#include <xbyak/xbyak.h>

#include "snippets/ir/lowered_ops.hpp"
#include "snippets/ir/op_tags.hpp"
#include "snippets/target/x64/constant_table.hpp"

namespace sse41 {

using Xbyak::Xmm;

struct EmitContext {
  Xbyak::CodeGenerator& h;
  snippets::x64::ConstantTable& consts;
  std::span<const Xmm> scratch; // reserved by the kernel for the emitter being run
};

/// The primary template marks "no emitter"; specializations replace it.
template <class Op> struct Emitter { using no_emitter = void; };

template <class Op>
concept HasEmitter = !requires {
  typename Emitter<Op>::no_emitter;
};

namespace detail {
inline constexpr std::uint8_t round_nearest = 0x08, round_trunc = 0x0b; // ROUNDPS, no #P
inline constexpr std::uint32_t abs_mask = 0x7fffffffu, sign_mask = 0x80000000u;

inline bool same(const Xmm& a, const Xmm& b) { return a.getIdx() == b.getIdx(); }

/// dst = a <insn> b for a two-operand SSE instruction (dst = dst <insn> src), whichever of a
/// and b dst is. scratch[0]: a's copy when dst is b (the operands may not commute: NaN,
/// signed zeros).
template <class Insn> void two_operand(EmitContext& c, Xmm dst, Xmm a, Xmm b, Insn insn) {
  if (same(dst, a)) return insn(dst, b);
  if (!same(dst, b)) {
    c.h.movaps(dst, a);
    return insn(dst, b);
  }
  c.h.movaps(c.scratch[0], a);
  insn(c.scratch[0], b);
  c.h.movaps(dst, c.scratch[0]);
}

inline void move(EmitContext& c, Xmm dst, Xmm x) {
  if (!same(dst, x)) c.h.movaps(dst, x);
}

/// out = e^x for every lane; out and t0..t2 distinct scratch. x may be out (it is read once,
/// before out is written), otherwise it is only read.
/// x is clamped to [-104, 89] (NaN passes: the constant is the first operand of MINPS/MAXPS,
/// which return their second on NaN); beyond it e^x rounds to 0 or overflows to inf anyway.
/// n = round(x log2 e), r = x - n ln2 in two steps (Cody-Waite: n * ln2_hi is exact),
/// e^r = 1 + r + r^2 P(r) with the degree-5 minimax P of Cephes' expf on |r| <= ln2 / 2, and
/// the result scaled by 2^n as 2^(n/2) 2^(n - n/2): both factors are normal floats for every
/// n in [-150, 128], and the second product rounds once into the subnormals or to inf.
inline void exp(EmitContext& c, Xmm out, Xmm x, Xmm t0, Xmm t1, Xmm t2) {
  auto& h = c.h;
  auto& k = c.consts;
  h.movups(t0, k.value(89.0f));
  h.minps(t0, x);
  h.movups(t1, k.value(-104.0f));
  h.maxps(t1, t0); // x clamped (t1)
  h.movaps(t0, t1);
  h.mulps(t0, k.value(1.44269504088896341f));
  h.roundps(t0, t0, round_nearest); // n (t0)
  h.movaps(t2, t0);
  h.mulps(t2, k.value(0.693359375f));
  h.subps(t1, t2);
  h.movaps(t2, t0);
  h.mulps(t2, k.value(-2.12194440e-4f));
  h.subps(t1, t2); // r (t1)
  h.movups(out, k.value(1.9875691500e-4f));
  for (const float p :
       {1.3981999507e-3f, 8.3334519073e-3f, 4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f}) {
    h.mulps(out, t1);
    h.addps(out, k.value(p));
  }
  h.movaps(t2, t1);
  h.mulps(t2, t1);
  h.mulps(out, t2);
  h.addps(out, t1);
  h.addps(out, k.value(1.0f)); // e^r
  h.cvtps2dq(t0, t0);          // n, exact
  h.movaps(t2, t0);
  h.psrad(t2, 1);
  h.psubd(t0, t2);
  h.paddd(t2, k.bits(127));
  h.pslld(t2, 23);
  h.paddd(t0, k.bits(127));
  h.pslld(t0, 23);
  h.mulps(out, t2);
  h.mulps(out, t0);
}
} // namespace detail

#define SSE41_BINARY(Tag, insn)                                                                    \
  template <> struct Emitter<snippets::ir::Tag> {                                                  \
    static constexpr int scratch = 1;                                                              \
    static void emit(EmitContext& c, const snippets::ir::Tag&, Xmm dst, std::span<const Xmm> in) { \
      detail::two_operand(c, dst, in[0], in[1], [&](Xmm d, Xmm s) { c.h.insn(d, s); });            \
    }                                                                                              \
  }
SSE41_BINARY(Add, addps);
SSE41_BINARY(Subtract, subps);
SSE41_BINARY(Multiply, mulps);
SSE41_BINARY(Divide, divps);
#undef SSE41_BINARY

/// MAXPS/MINPS give a > b ? a : b (a < b ? a : b), as the reference does for numbers and
/// signed zeros, and their second operand b when either is NaN; a NaN a is patched in.
#define SSE41_MINMAX(Tag, insn)                                                                    \
  template <> struct Emitter<snippets::ir::Tag> {                                                  \
    static constexpr int scratch = 2;                                                              \
    static void emit(EmitContext& c, const snippets::ir::Tag&, Xmm dst, std::span<const Xmm> in) { \
      const Xmm a_nan = c.scratch[1];                                                              \
      c.h.movaps(a_nan, in[0]);                                                                    \
      c.h.cmpunordps(a_nan, in[0]);                                                                \
      detail::two_operand(c, dst, in[0], in[1], [&](Xmm d, Xmm s) { c.h.insn(d, s); });            \
      c.h.orps(dst, a_nan); /* all ones: a NaN */                                                  \
    }                                                                                              \
  }
SSE41_MINMAX(Maximum, maxps);
SSE41_MINMAX(Minimum, minps);
#undef SSE41_MINMAX

template <> struct Emitter<snippets::ir::Abs> {
  static constexpr int scratch = 0;
  static void emit(EmitContext& c, const snippets::ir::Abs&, Xmm dst, std::span<const Xmm> in) {
    detail::move(c, dst, in[0]);
    c.h.andps(dst, c.consts.bits(detail::abs_mask));
  }
};

template <> struct Emitter<snippets::ir::Negative> {
  static constexpr int scratch = 0;
  static void emit(EmitContext& c, const snippets::ir::Negative&, Xmm dst,
                   std::span<const Xmm> in) {
    detail::move(c, dst, in[0]);
    c.h.xorps(dst, c.consts.bits(detail::sign_mask));
  }
};

template <> struct Emitter<snippets::ir::Sqrt> {
  static constexpr int scratch = 0;
  static void emit(EmitContext& c, const snippets::ir::Sqrt&, Xmm dst, std::span<const Xmm> in) {
    c.h.sqrtps(dst, in[0]);
  }
};

/// max(0, x) with x second (a NaN x comes through), then + 0: relu(-0) is +0.
template <> struct Emitter<snippets::ir::Relu> {
  static constexpr int scratch = 1;
  static void emit(EmitContext& c, const snippets::ir::Relu&, Xmm dst, std::span<const Xmm> in) {
    const Xmm v = c.scratch[0];
    c.h.xorps(v, v);
    c.h.maxps(v, in[0]);
    c.h.addps(v, c.consts.value(0.0f));
    c.h.movaps(dst, v);
  }
};

/// min(hi, max(lo, x)), x second each time (NaN comes through); at a zero bound a -0 x
/// becomes +0, as in the reference, by adding +0.
template <> struct Emitter<snippets::ir::Clamp> {
  static constexpr int scratch = 2;
  static void emit(EmitContext& c, const snippets::ir::Clamp& op, Xmm dst,
                   std::span<const Xmm> in) {
    const Xmm lo = c.scratch[0], hi = c.scratch[1];
    c.h.movups(lo, c.consts.value(static_cast<float>(op.lo)));
    c.h.maxps(lo, in[0]);
    c.h.movups(hi, c.consts.value(static_cast<float>(op.hi)));
    c.h.minps(hi, lo);
    if (op.lo == 0 || op.hi == 0) c.h.addps(hi, c.consts.value(0.0f));
    c.h.movaps(dst, hi);
  }
};

/// To f32: a move. To i32, the value kept as an f32: truncated, -0 -> +0, NaN -> 0, saturated
/// to [-2^31, 2^31] (2^31 - 1 is held as 2^31, the f32 it converts back to). Other types are
/// refused (supports()).
template <> struct Emitter<snippets::ir::Convert> {
  static constexpr int scratch = 2;
  static bool supports(const snippets::ir::Convert& op) {
    return op.to == snippets::ElementType::f32 || op.to == snippets::ElementType::i32;
  }
  static void emit(EmitContext& c, const snippets::ir::Convert& op, Xmm dst,
                   std::span<const Xmm> in) {
    if (op.to == snippets::ElementType::f32) return detail::move(c, dst, in[0]);
    const Xmm t = c.scratch[0], ordered = c.scratch[1];
    c.h.roundps(t, in[0], detail::round_trunc);
    c.h.addps(t, c.consts.value(0.0f));
    c.h.movaps(ordered, in[0]);
    c.h.cmpordps(ordered, in[0]);
    c.h.andps(t, ordered);
    c.h.maxps(t, c.consts.value(-2147483648.0f));
    c.h.minps(t, c.consts.value(2147483648.0f));
    c.h.movaps(dst, t);
  }
};

template <> struct Emitter<snippets::ir::Exp> {
  static constexpr int scratch = 4;
  static void emit(EmitContext& c, const snippets::ir::Exp&, Xmm dst, std::span<const Xmm> in) {
    detail::exp(c, c.scratch[0], in[0], c.scratch[1], c.scratch[2], c.scratch[3]);
    c.h.movaps(dst, c.scratch[0]);
  }
};

/// e = e^-|x|, then 1 / (1 + e) for x >= 0 and e / (1 + e) for x < 0: neither overflows, and
/// sigmoid of a large negative x keeps its subnormal result.
template <> struct Emitter<snippets::ir::Sigmoid> {
  static constexpr int scratch = 4;
  static void emit(EmitContext& c, const snippets::ir::Sigmoid&, Xmm dst, std::span<const Xmm> in) {
    const Xmm x = in[0], e = c.scratch[0], negative = c.scratch[1], den = c.scratch[2];
    c.h.movaps(e, x);
    c.h.orps(e, c.consts.bits(detail::sign_mask)); // -|x|
    detail::exp(c, e, e, c.scratch[1], c.scratch[2], c.scratch[3]);
    c.h.movups(den, c.consts.value(1.0f));
    c.h.addps(den, e);
    c.h.movaps(negative, x);
    c.h.psrad(negative, 31); // all ones where the sign bit is set
    c.h.andps(e, negative);
    c.h.andnps(negative, c.consts.value(1.0f));
    c.h.orps(e, negative); // the numerator: e or 1
    c.h.divps(e, den);
    c.h.movaps(dst, e);
  }
};

/// a * b + c as the reference computes it: on f64 lanes the product is exact and the sum
/// rounds once, then the f32 rounding. Without FMA instructions this is one rounding to f32 of
/// the f64 result, the reference's own double rounding, so it matches it bit for bit.
template <> struct Emitter<snippets::ir::FusedMulAdd> {
  static constexpr int scratch = 3;
  static void emit(EmitContext& c, const snippets::ir::FusedMulAdd&, Xmm dst,
                   std::span<const Xmm> in) {
    const Xmm lo = c.scratch[0], hi = c.scratch[1], t = c.scratch[2];
    auto half = [&](Xmm out, bool upper) {
      auto widen = [&](Xmm to, Xmm from) { // two lanes of `from` as f64
        if (upper) {
          c.h.movhlps(to, from);
          c.h.cvtps2pd(to, to);
        } else {
          c.h.cvtps2pd(to, from);
        }
      };
      widen(out, in[0]);
      widen(t, in[1]);
      c.h.mulpd(out, t);
      widen(t, in[2]);
      c.h.addpd(out, t);
      c.h.cvtpd2ps(out, out);
    };
    half(lo, false);
    half(hi, true);
    c.h.movlhps(lo, hi);
    c.h.movaps(dst, lo);
  }
};

} // namespace sse41
