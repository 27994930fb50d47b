// SPDX-License-Identifier: Apache-2.0
// snippets/target/aarch64/emitters/eltwise.hpp: NEON emitters of the elementwise ops that need
// no transcendental approximation. Contracts in emitter.hpp; semantics from ir/op_tags.hpp and
// reference/eltwise.hpp:
//  - FMAX/FMIN return NaN when either operand is NaN, as Relu and Clamp want. They also order
//    the zeros (max(-0, +0) = +0), which Relu wants too; Maximum and Minimum return b when
//    a == b (the reference's `a > b ? a : b`), so they compare and select instead, and patch a
//    NaN a in. A Clamp at a zero bound adds +0, so -0 becomes +0 as in the reference.
//  - comparisons and logical ops produce 1.0f / 0.0f (an all-ones mask ANDed with 1.0f).
#pragma once

#include <cmath>
#include <cstdint>

#include "snippets/ir/lowered_ops.hpp"
#include "snippets/ir/op_tags.hpp"
#include "snippets/target/aarch64/emitters/emitter.hpp"

namespace snippets::aarch64 {

namespace detail {
inline constexpr std::uint32_t one_bits = 0x3f800000u, abs_mask = 0x7fffffffu;

inline void move(EmitContext& c, Vec dst, Vec x) {
  if (dst.id() != x.id()) c.a.mov(dst.b16(), x.b16());
}
/// dst = mask & 1.0f (mask: all ones or zero per lane); mask may be dst.
inline void mask_to_one(EmitContext& c, Vec dst, Vec mask, Vec one) {
  const Vec k = c.consts.bits_in(one_bits, one);
  c.a.and_(dst.b16(), mask.b16(), k.b16());
}
} // namespace detail

#define SNIPPETS_A64_BINARY(Tag, insn)                                                             \
  template <> struct Emitter<ir::Tag> {                                                            \
    static constexpr int scratch = 0;                                                              \
    static void emit(EmitContext& c, const ir::Tag&, Vec dst, std::span<const Vec> in) {           \
      c.a.insn(dst.s4(), in[0].s4(), in[1].s4());                                                  \
    }                                                                                              \
  }
SNIPPETS_A64_BINARY(Add, fadd);
SNIPPETS_A64_BINARY(Subtract, fsub);
SNIPPETS_A64_BINARY(Multiply, fmul);
SNIPPETS_A64_BINARY(Divide, fdiv);
#undef SNIPPETS_A64_BINARY

/// a (> or <) b ? a : b, then a NaN a or b patched in (NaN compares false, so b came through).
#define SNIPPETS_A64_MINMAX(Tag, is_max)                                                           \
  template <> struct Emitter<ir::Tag> {                                                            \
    static constexpr int scratch = 2;                                                              \
    static void emit(EmitContext& c, const ir::Tag&, Vec dst, std::span<const Vec> in) {           \
      const Vec m = c.scratch[0], ordered = c.scratch[1], a = in[0], b = in[1];                    \
      if (is_max)                                                                                  \
        c.a.fcmgt(m.s4(), a.s4(), b.s4());                                                         \
      else                                                                                         \
        c.a.fcmgt(m.s4(), b.s4(), a.s4());                                                         \
      c.a.fcmeq(ordered.s4(), a.s4(), a.s4()); /* false where a is NaN */                          \
      c.a.bsl(m.b16(), a.b16(), b.b16());                                                          \
      c.a.bif(m.b16(), a.b16(), ordered.b16());                                                    \
      c.a.mov(dst.b16(), m.b16());                                                                 \
    }                                                                                              \
  }
SNIPPETS_A64_MINMAX(Maximum, true);
SNIPPETS_A64_MINMAX(Minimum, false);
#undef SNIPPETS_A64_MINMAX

#define SNIPPETS_A64_UNARY(Tag, insn)                                                              \
  template <> struct Emitter<ir::Tag> {                                                            \
    static constexpr int scratch = 0;                                                              \
    static void emit(EmitContext& c, const ir::Tag&, Vec dst, std::span<const Vec> in) {           \
      c.a.insn(dst.s4(), in[0].s4());                                                              \
    }                                                                                              \
  }
SNIPPETS_A64_UNARY(Abs, fabs);
SNIPPETS_A64_UNARY(Negative, fneg);
SNIPPETS_A64_UNARY(Sqrt, fsqrt);
SNIPPETS_A64_UNARY(Floor, frintm);
SNIPPETS_A64_UNARY(Ceiling, frintp);
#undef SNIPPETS_A64_UNARY

template <> struct Emitter<ir::Round> {
  static constexpr int scratch = 0;
  static void emit(EmitContext& c, const ir::Round& op, Vec dst, std::span<const Vec> in) {
    if (op.mode == ir::RoundMode::half_to_even)
      c.a.frintn(dst.s4(), in[0].s4());
    else
      c.a.frinta(dst.s4(), in[0].s4());
  }
};

/// (a - b)^2
template <> struct Emitter<ir::SquaredDifference> {
  static constexpr int scratch = 0;
  static void emit(EmitContext& c, const ir::SquaredDifference&, Vec dst, std::span<const Vec> in) {
    c.a.fsub(dst.s4(), in[0].s4(), in[1].s4());
    c.a.fmul(dst.s4(), dst.s4(), dst.s4());
  }
};

/// a * b + c with one rounding (FMLA accumulates into its destination).
template <> struct Emitter<ir::FusedMulAdd> {
  static constexpr int scratch = 1;
  static void emit(EmitContext& c, const ir::FusedMulAdd&, Vec dst, std::span<const Vec> in) {
    const Vec a = in[0], b = in[1], acc = in[2];
    if (dst.id() == acc.id()) return c.a.fmla(dst.s4(), a.s4(), b.s4()), void();
    if (dst.id() != a.id() && dst.id() != b.id()) {
      c.a.mov(dst.b16(), acc.b16());
      c.a.fmla(dst.s4(), a.s4(), b.s4());
      return;
    }
    const Vec t = c.scratch[0];
    c.a.mov(t.b16(), acc.b16());
    c.a.fmla(t.s4(), a.s4(), b.s4());
    c.a.mov(dst.b16(), t.b16());
  }
};

/// max(x, 0): FMAX gives +0 for -0 and NaN for NaN, as the reference does.
template <> struct Emitter<ir::Relu> {
  static constexpr int scratch = 1;
  static void emit(EmitContext& c, const ir::Relu&, Vec dst, std::span<const Vec> in) {
    const Vec zero = c.consts.bits_in(0, c.scratch[0]);
    c.a.fmax(dst.s4(), in[0].s4(), zero.s4());
  }
};

template <> struct Emitter<ir::Clamp> {
  static constexpr int scratch = 2;
  static void emit(EmitContext& c, const ir::Clamp& op, Vec dst, std::span<const Vec> in) {
    const Vec v = c.scratch[0], bound = c.scratch[1];
    c.a.fmax(v.s4(), in[0].s4(), c.consts.value_in(to_f32(op.lo + 0.0), bound).s4());
    c.a.fmin(v.s4(), v.s4(), c.consts.value_in(to_f32(op.hi + 0.0), bound).s4());
    if (op.lo == 0 || op.hi == 0) // -0 at a zero bound: +0, as in the reference
      c.a.fadd(v.s4(), v.s4(), c.consts.bits_in(0, bound).s4());
    detail::move(c, dst, v);
  }
};

#define SNIPPETS_A64_COMPARISON(Tag, insn, swap, invert)                                           \
  template <> struct Emitter<ir::Tag> {                                                            \
    static constexpr int scratch = 1;                                                              \
    static void emit(EmitContext& c, const ir::Tag&, Vec dst, std::span<const Vec> in) {           \
      const Vec m = c.scratch[0];                                                                  \
      c.a.insn(m.s4(), in[swap ? 1 : 0].s4(), in[swap ? 0 : 1].s4());                              \
      if (invert) c.a.mvn(m.b16(), m.b16());                                                       \
      detail::mask_to_one(c, dst, m, dst.id() == m.id() ? c.scratch[0] : dst);                     \
    }                                                                                              \
  }
SNIPPETS_A64_COMPARISON(Equal, fcmeq, false, false);
SNIPPETS_A64_COMPARISON(NotEqual, fcmeq, false, true); // NaN: not equal
SNIPPETS_A64_COMPARISON(Greater, fcmgt, false, false);
SNIPPETS_A64_COMPARISON(GreaterEqual, fcmge, false, false);
SNIPPETS_A64_COMPARISON(Less, fcmgt, true, false);
SNIPPETS_A64_COMPARISON(LessEqual, fcmge, true, false);
#undef SNIPPETS_A64_COMPARISON

/// cond != 0 ? a : b (a NaN cond is true).
template <> struct Emitter<ir::Select> {
  static constexpr int scratch = 1;
  static void emit(EmitContext& c, const ir::Select&, Vec dst, std::span<const Vec> in) {
    const Vec m = c.scratch[0];
    c.a.fcmeq(m.s4(), in[0].s4(), 0);
    c.a.bsl(m.b16(), in[2].b16(), in[1].b16());
    c.a.mov(dst.b16(), m.b16());
  }
};

// Logical ops on 1.0f / 0.0f values.
template <> struct Emitter<ir::LogicalAnd> {
  static constexpr int scratch = 0;
  static void emit(EmitContext& c, const ir::LogicalAnd&, Vec dst, std::span<const Vec> in) {
    c.a.fmin(dst.s4(), in[0].s4(), in[1].s4());
  }
};
template <> struct Emitter<ir::LogicalOr> {
  static constexpr int scratch = 0;
  static void emit(EmitContext& c, const ir::LogicalOr&, Vec dst, std::span<const Vec> in) {
    c.a.fmax(dst.s4(), in[0].s4(), in[1].s4());
  }
};
template <> struct Emitter<ir::LogicalXor> {
  static constexpr int scratch = 0;
  static void emit(EmitContext& c, const ir::LogicalXor&, Vec dst, std::span<const Vec> in) {
    c.a.fabd(dst.s4(), in[0].s4(), in[1].s4());
  }
};
template <> struct Emitter<ir::LogicalNot> {
  static constexpr int scratch = 1;
  static void emit(EmitContext& c, const ir::LogicalNot&, Vec dst, std::span<const Vec> in) {
    c.a.fsub(dst.s4(), c.consts.value_in(1.0f, c.scratch[0]).s4(), in[0].s4());
  }
};

/// x < 0 ? alpha * x : x (NaN comes through: the comparison is false)
template <> struct Emitter<ir::LeakyRelu> {
  static constexpr int scratch = 2;
  static void emit(EmitContext& c, const ir::LeakyRelu& op, Vec dst, std::span<const Vec> in) {
    const Vec m = c.scratch[0], t = c.scratch[1];
    c.a.fmul(t.s4(), c.consts.value_in(to_f32(op.alpha), t).s4(), in[0].s4());
    c.a.fcmlt(m.s4(), in[0].s4(), 0);
    c.a.bsl(m.b16(), t.b16(), in[0].b16());
    c.a.mov(dst.b16(), m.b16());
  }
};
template <> struct Emitter<ir::PRelu> {
  static constexpr int scratch = 2;
  static void emit(EmitContext& c, const ir::PRelu&, Vec dst, std::span<const Vec> in) {
    const Vec m = c.scratch[0], t = c.scratch[1];
    c.a.fmul(t.s4(), in[1].s4(), in[0].s4());
    c.a.fcmlt(m.s4(), in[0].s4(), 0);
    c.a.bsl(m.b16(), t.b16(), in[0].b16());
    c.a.mov(dst.b16(), m.b16());
  }
};

/// min(max(x + 3, 0), 6) / 6, NaN-propagating; HSwish multiplies by x after the division, so
/// that x near FLT_MAX does not overflow.
template <> struct Emitter<ir::HSigmoid> {
  static constexpr int scratch = 2;
  static void core(EmitContext& c, Vec x) { // scratch[0] = hsigmoid(x)
    const Vec v = c.scratch[0], k = c.scratch[1];
    c.a.fadd(v.s4(), x.s4(), c.consts.value_in(3.0f, k).s4());
    c.a.fmax(v.s4(), v.s4(), c.consts.bits_in(0, k).s4());
    const Vec six = c.consts.value_in(6.0f, k);
    c.a.fmin(v.s4(), v.s4(), six.s4());
    c.a.fdiv(v.s4(), v.s4(), six.s4());
  }
  static void emit(EmitContext& c, const ir::HSigmoid&, Vec dst, std::span<const Vec> in) {
    core(c, in[0]);
    detail::move(c, dst, c.scratch[0]);
  }
};
template <> struct Emitter<ir::HSwish> {
  static constexpr int scratch = 2;
  static void emit(EmitContext& c, const ir::HSwish&, Vec dst, std::span<const Vec> in) {
    Emitter<ir::HSigmoid>::core(c, in[0]);
    c.a.fmul(dst.s4(), c.scratch[0].s4(), in[0].s4());
  }
};
/// x / (1 + |x|)
template <> struct Emitter<ir::SoftSign> {
  static constexpr int scratch = 2;
  static void emit(EmitContext& c, const ir::SoftSign&, Vec dst, std::span<const Vec> in) {
    const Vec d = c.scratch[0], one = c.scratch[1];
    c.a.fabs(d.s4(), in[0].s4());
    c.a.fadd(d.s4(), d.s4(), c.consts.value_in(1.0f, one).s4());
    c.a.fdiv(dst.s4(), in[0].s4(), d.s4());
  }
};

/// x ** e for integer e (|e| <= 64) by repeated squaring, half-integers with a square root,
/// negative e with one division at the end (as x64's emitter).
template <> struct Emitter<ir::PowerStatic> {
  static constexpr int scratch = 3;
  static bool supports(const ir::PowerStatic& op) {
    const double twice = op.exponent * 2;
    return std::fabs(op.exponent) <= 64 && twice == std::nearbyint(twice);
  }
  static void emit(EmitContext& c, const ir::PowerStatic& op, Vec dst, std::span<const Vec> in) {
    auto& a = c.a;
    const Vec x = in[0], base = c.scratch[0], acc = c.scratch[1];
    const double e = std::fabs(op.exponent);
    auto n = static_cast<long>(std::floor(e));
    const bool half = e != std::floor(e);
    bool have = false;
    // with a half exponent pow is NaN for x < 0 anyway (the square root says so), and |x|
    // gives pow's +0 at -0 and +inf at -inf
    if (n > 0 && half)
      a.fabs(base.s4(), x.s4());
    else if (n > 0)
      a.mov(base.b16(), x.b16());
    while (n > 0) {
      if (n & 1) {
        if (have)
          a.fmul(acc.s4(), acc.s4(), base.s4());
        else
          a.mov(acc.b16(), base.b16());
        have = true;
      }
      n >>= 1;
      if (n) a.fmul(base.s4(), base.s4(), base.s4());
    }
    if (half) { // sqrt(x) x^k, but pow gives +0 at -0 and +inf at -inf
      const Vec m = c.scratch[2];
      a.fsqrt(base.s4(), x.s4());
      a.fabs(base.s4(), base.s4());
      a.fcmeq(m.s4(), x.s4(), c.consts.bits_in(0xff800000u, m).s4()); // x = -inf
      // x is read for the last time above: dst (which may be x) can hold the constant
      a.bsl(m.b16(), c.consts.bits_in(0x7f800000u, dst).b16(), base.b16());
      if (have)
        a.fmul(acc.s4(), acc.s4(), m.s4());
      else
        a.mov(acc.b16(), m.b16());
      have = true;
    }
    if (!have) c.consts.load_value(acc, 1.0f); // x ** 0 == 1, even for NaN
    if (op.exponent < 0)
      a.fdiv(dst.s4(), c.consts.value_in(1.0f, dst).s4(), acc.s4());
    else
      a.mov(dst.b16(), acc.b16());
  }
};

} // namespace snippets::aarch64
