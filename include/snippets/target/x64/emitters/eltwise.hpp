// SPDX-License-Identifier: Apache-2.0
// snippets/target/x64/emitters/eltwise.hpp: emitters of the elementwise ops that need no
// transcendental approximation. Contracts in emitter.hpp. Semantics follow ir/op_tags.hpp:
// Maximum, Minimum, Relu and Clamp propagate NaN (VMAXPS/VMINPS return their second source
// when either is NaN, so the value that may be NaN goes second or is patched); comparisons
// and logical ops produce 1.0f / 0.0f.
#pragma once

#include <cmath>

#include "snippets/ir/lowered_ops.hpp"
#include "snippets/ir/op_tags.hpp"
#include "snippets/target/x64/emitters/emitter.hpp"

namespace snippets::x64 {

namespace detail {
// SSE/AVX comparison predicates
inline constexpr std::uint8_t cmp_eq_oq = 0x00, cmp_unord_q = 0x03, cmp_neq_uq = 0x04,
                              cmp_ord_q = 0x07, cmp_neq_oq = 0x0c, cmp_lt_oq = 0x11,
                              cmp_le_oq = 0x12, cmp_nlt_uq = 0x15, cmp_nge_uq = 0x19,
                              cmp_ge_oq = 0x1d, cmp_gt_oq = 0x1e;
// VROUNDPS / VRNDSCALEPS immediates (bit 3 suppresses the precision exception)
inline constexpr std::uint8_t round_nearest = 0x08, round_floor = 0x09, round_ceil = 0x0a,
                              round_trunc = 0x0b;

template <class Vmm> void round(EmitContext<Vmm>& c, Vmm dst, Vmm x, std::uint8_t mode) {
  if constexpr (EmitContext<Vmm>::avx512)
    c.h.vrndscaleps(dst, x, mode);
  else
    c.h.vroundps(dst, x, mode);
}

/// dst = (a <pred> b) ? 1.0f : 0.0f
template <class Vmm> void compare(EmitContext<Vmm>& c, Vmm dst, Vmm a, Vmm b, std::uint8_t pred) {
  if constexpr (EmitContext<Vmm>::avx512) {
    c.h.vcmpps(c.kscratch, a, b, pred);
    c.h.vmovups(dst | c.kscratch | Xbyak::util::T_z, c.consts[Const::one]);
  } else {
    c.h.vcmpps(dst, a, b, pred);
    c.h.vandps(dst, dst, c.consts[Const::one]);
  }
}

/// dst = max/min(a, b), NaN if either is NaN.
template <class Vmm> void minmax(EmitContext<Vmm>& c, Vmm dst, Vmm a, Vmm b, bool is_max) {
  const Vmm s = c.scratch[0];
  if (is_max)
    c.h.vmaxps(s, a, b); // NaN in b: b; NaN in a: b (patched below)
  else
    c.h.vminps(s, a, b);
  if constexpr (EmitContext<Vmm>::avx512) {
    c.h.vcmpps(c.kscratch, a, a, cmp_unord_q);
    c.h.vmovaps(s | c.kscratch, a);
  } else {
    const Vmm m = c.scratch[1];
    c.h.vcmpps(m, a, a, cmp_unord_q);
    c.h.vblendvps(s, s, a, m);
  }
  c.h.vmovaps(dst, s);
}
} // namespace detail

#define SNIPPETS_X64_SIMPLE_BINARY(Tag, insn)                                                      \
  template <> struct Emitter<ir::Tag> {                                                            \
    static constexpr int scratch = 0;                                                              \
    template <class Vmm>                                                                           \
    static void emit(EmitContext<Vmm>& c, const ir::Tag&, Vmm dst, std::span<const Vmm> in) {      \
      c.h.insn(dst, in[0], in[1]);                                                                 \
    }                                                                                              \
  }
SNIPPETS_X64_SIMPLE_BINARY(Add, vaddps);
SNIPPETS_X64_SIMPLE_BINARY(Subtract, vsubps);
SNIPPETS_X64_SIMPLE_BINARY(Multiply, vmulps);
SNIPPETS_X64_SIMPLE_BINARY(Divide, vdivps);
#undef SNIPPETS_X64_SIMPLE_BINARY

#define SNIPPETS_X64_COMPARISON(Tag, pred)                                                         \
  template <> struct Emitter<ir::Tag> {                                                            \
    static constexpr int scratch = 0;                                                              \
    template <class Vmm>                                                                           \
    static void emit(EmitContext<Vmm>& c, const ir::Tag&, Vmm dst, std::span<const Vmm> in) {      \
      detail::compare(c, dst, in[0], in[1], pred);                                                 \
    }                                                                                              \
  }
SNIPPETS_X64_COMPARISON(Equal, detail::cmp_eq_oq);
SNIPPETS_X64_COMPARISON(NotEqual, detail::cmp_neq_uq);
SNIPPETS_X64_COMPARISON(Greater, detail::cmp_gt_oq);
SNIPPETS_X64_COMPARISON(GreaterEqual, detail::cmp_ge_oq);
SNIPPETS_X64_COMPARISON(Less, detail::cmp_lt_oq);
SNIPPETS_X64_COMPARISON(LessEqual, detail::cmp_le_oq);
#undef SNIPPETS_X64_COMPARISON

#define SNIPPETS_X64_ROUNDING(Tag, mode)                                                           \
  template <> struct Emitter<ir::Tag> {                                                            \
    static constexpr int scratch = 0;                                                              \
    template <class Vmm>                                                                           \
    static void emit(EmitContext<Vmm>& c, const ir::Tag&, Vmm dst, std::span<const Vmm> in) {      \
      detail::round(c, dst, in[0], mode);                                                          \
    }                                                                                              \
  }
SNIPPETS_X64_ROUNDING(Floor, detail::round_floor);
SNIPPETS_X64_ROUNDING(Ceiling, detail::round_ceil);
#undef SNIPPETS_X64_ROUNDING

template <> struct Emitter<ir::Maximum> {
  static constexpr int scratch = 2;
  template <class Vmm>
  static void emit(EmitContext<Vmm>& c, const ir::Maximum&, Vmm dst, std::span<const Vmm> in) {
    detail::minmax(c, dst, in[0], in[1], true);
  }
};
template <> struct Emitter<ir::Minimum> {
  static constexpr int scratch = 2;
  template <class Vmm>
  static void emit(EmitContext<Vmm>& c, const ir::Minimum&, Vmm dst, std::span<const Vmm> in) {
    detail::minmax(c, dst, in[0], in[1], false);
  }
};

template <> struct Emitter<ir::SquaredDifference> {
  static constexpr int scratch = 0;
  template <class Vmm>
  static void emit(EmitContext<Vmm>& c, const ir::SquaredDifference&, Vmm dst,
                   std::span<const Vmm> in) {
    c.h.vsubps(dst, in[0], in[1]);
    c.h.vmulps(dst, dst, dst);
  }
};

template <> struct Emitter<ir::FusedMulAdd> {
  static constexpr int scratch = 0;
  template <class Vmm>
  static void emit(EmitContext<Vmm>& c, const ir::FusedMulAdd&, Vmm dst, std::span<const Vmm> in) {
    const Vmm a = in[0], b = in[1], acc = in[2];
    if (dst.getIdx() == acc.getIdx())
      c.h.vfmadd231ps(dst, a, b); // dst = a*b + dst
    else if (dst.getIdx() == a.getIdx())
      c.h.vfmadd213ps(dst, b, acc); // dst = dst*b + acc
    else if (dst.getIdx() == b.getIdx())
      c.h.vfmadd213ps(dst, a, acc);
    else {
      c.h.vmovaps(dst, acc);
      c.h.vfmadd231ps(dst, a, b);
    }
  }
};

template <> struct Emitter<ir::Abs> {
  static constexpr int scratch = 0;
  template <class Vmm>
  static void emit(EmitContext<Vmm>& c, const ir::Abs&, Vmm dst, std::span<const Vmm> in) {
    c.h.vandps(dst, in[0], c.consts[Const::abs_mask]);
  }
};
template <> struct Emitter<ir::Negative> {
  static constexpr int scratch = 0;
  template <class Vmm>
  static void emit(EmitContext<Vmm>& c, const ir::Negative&, Vmm dst, std::span<const Vmm> in) {
    c.h.vxorps(dst, in[0], c.consts[Const::sign_mask]);
  }
};
template <> struct Emitter<ir::Sqrt> {
  static constexpr int scratch = 0;
  template <class Vmm>
  static void emit(EmitContext<Vmm>& c, const ir::Sqrt&, Vmm dst, std::span<const Vmm> in) {
    c.h.vsqrtps(dst, in[0]);
  }
};
template <> struct Emitter<ir::Relu> {
  static constexpr int scratch = 1;
  template <class Vmm>
  static void emit(EmitContext<Vmm>& c, const ir::Relu&, Vmm dst, std::span<const Vmm> in) {
    const Vmm zero = c.scratch[0];
    c.h.vxorps(zero, zero, zero);
    c.h.vmaxps(dst, zero, in[0]); // x second: a NaN x comes through
    c.h.vaddps(dst, dst, zero);   // -0 + +0 = +0: relu(-0) is +0, as in the reference
  }
};
template <> struct Emitter<ir::Clamp> {
  static constexpr int scratch = 2;
  template <class Vmm>
  static void emit(EmitContext<Vmm>& c, const ir::Clamp& op, Vmm dst, std::span<const Vmm> in) {
    const Vmm v = c.scratch[0], bound = c.scratch[1];
    c.h.vmovups(bound, c.consts.value(to_f32(op.lo)));
    c.h.vmaxps(v, bound, in[0]); // x second: a NaN x comes through
    c.h.vmovups(bound, c.consts.value(to_f32(op.hi)));
    c.h.vminps(dst, bound, v);
    if (op.lo == 0 ||
        op.hi == 0) { // x = -0 at a zero bound: the bound (+0) wins, as in the reference
      c.h.vxorps(bound, bound, bound);
      c.h.vaddps(dst, dst, bound);
    }
  }
};
template <> struct Emitter<ir::Round> {
  static constexpr int scratch = 3;
  template <class Vmm>
  static void emit(EmitContext<Vmm>& c, const ir::Round& op, Vmm dst, std::span<const Vmm> in) {
    const Vmm x = in[0];
    if (op.mode == ir::RoundMode::half_to_even)
      return detail::round(c, dst, x, detail::round_nearest);
    // half away from zero: t = trunc(x); t += copysign(1, x) where |x - t| >= 0.5
    const Vmm t = c.scratch[0], f = c.scratch[1], s = c.scratch[2];
    detail::round(c, t, x, detail::round_trunc);
    c.h.vsubps(f, x, t);
    c.h.vandps(f, f, c.consts[Const::abs_mask]);
    c.h.vandps(s, x, c.consts[Const::sign_mask]);
    c.h.vorps(s, s, c.consts[Const::one]);
    if constexpr (EmitContext<Vmm>::avx512) {
      c.h.vcmpps(c.kscratch, f, c.consts[Const::half], detail::cmp_ge_oq);
      c.h.vaddps(t | c.kscratch, t, s);
    } else { // a blend, not an add of +0, so that a -0 result stays -0
      c.h.vcmpps(f, f, c.consts[Const::half], detail::cmp_ge_oq);
      c.h.vaddps(s, t, s);
      c.h.vblendvps(t, t, s, f);
    }
    c.h.vmovaps(dst, t);
  }
};

/// x ** e for integer e (|e| <= 64) by repeated squaring, half-integers with a square root,
/// negative e with one division at the end.
template <> struct Emitter<ir::PowerStatic> {
  static constexpr int scratch = 3;
  static bool supports(const ir::PowerStatic& op) {
    const double twice = op.exponent * 2;
    return std::fabs(op.exponent) <= 64 && twice == std::nearbyint(twice);
  }
  template <class Vmm>
  static void emit(EmitContext<Vmm>& c, const ir::PowerStatic& op, Vmm dst,
                   std::span<const Vmm> in) {
    const Vmm x = in[0], base = c.scratch[0], acc = c.scratch[1];
    const double e = std::fabs(op.exponent);
    auto n = static_cast<long>(std::floor(e));
    const bool half = e != std::floor(e);
    bool have = false;
    // with a half exponent pow is NaN for x < 0 anyway (the square root says so), and |x|
    // gives pow's +0 at -0 and +inf at -inf
    if (n > 0 && half)
      c.h.vandps(base, x, c.consts[Const::abs_mask]);
    else if (n > 0)
      c.h.vmovaps(base, x);
    while (n > 0) {
      if (n & 1) {
        if (have)
          c.h.vmulps(acc, acc, base);
        else
          c.h.vmovaps(acc, base);
        have = true;
      }
      n >>= 1;
      if (n) c.h.vmulps(base, base, base);
    }
    if (half) {
      // pow(x, k + 0.5) is sqrt(x) * x^k except that pow gives +0 at -0 and +inf at -inf
      c.h.vsqrtps(base, x);
      c.h.vandps(base, base, c.consts[Const::abs_mask]);
      if constexpr (EmitContext<Vmm>::avx512) {
        c.h.vcmpps(c.kscratch, x, c.consts.bits(0xff800000u), detail::cmp_eq_oq);
        c.h.vmovups(base | c.kscratch, c.consts.bits(0x7f800000u));
      } else {
        const Vmm m = c.scratch[2];
        c.h.vcmpps(m, x, c.consts.bits(0xff800000u), detail::cmp_eq_oq);
        c.h.vblendvps(base, base, c.consts.bits(0x7f800000u), m);
      }
      if (have)
        c.h.vmulps(acc, acc, base);
      else
        c.h.vmovaps(acc, base);
      have = true;
    }
    if (!have) c.h.vmovups(acc, c.consts[Const::one]); // x ** 0 == 1, even for NaN
    if (op.exponent < 0) {
      c.h.vmovups(dst, c.consts[Const::one]);
      c.h.vdivps(dst, dst, acc);
    } else {
      c.h.vmovaps(dst, acc);
    }
  }
};

template <> struct Emitter<ir::Select> {
  static constexpr int scratch = 1;
  template <class Vmm>
  static void emit(EmitContext<Vmm>& c, const ir::Select&, Vmm dst, std::span<const Vmm> in) {
    const Vmm zero = c.scratch[0];
    c.h.vxorps(zero, zero, zero);
    if constexpr (EmitContext<Vmm>::avx512) {
      c.h.vcmpps(c.kscratch, in[0], zero, detail::cmp_neq_uq);
      c.h.vblendmps(dst | c.kscratch, in[2], in[1]);
    } else {
      c.h.vcmpps(zero, in[0], zero, detail::cmp_neq_uq);
      c.h.vblendvps(dst, in[2], in[1], zero);
    }
  }
};

// Logical ops on 1.0f / 0.0f values.
template <> struct Emitter<ir::LogicalAnd> {
  static constexpr int scratch = 0;
  template <class Vmm>
  static void emit(EmitContext<Vmm>& c, const ir::LogicalAnd&, Vmm dst, std::span<const Vmm> in) {
    c.h.vminps(dst, in[0], in[1]);
  }
};
template <> struct Emitter<ir::LogicalOr> {
  static constexpr int scratch = 0;
  template <class Vmm>
  static void emit(EmitContext<Vmm>& c, const ir::LogicalOr&, Vmm dst, std::span<const Vmm> in) {
    c.h.vmaxps(dst, in[0], in[1]);
  }
};
template <> struct Emitter<ir::LogicalXor> {
  static constexpr int scratch = 0;
  template <class Vmm>
  static void emit(EmitContext<Vmm>& c, const ir::LogicalXor&, Vmm dst, std::span<const Vmm> in) {
    c.h.vsubps(dst, in[0], in[1]);
    c.h.vandps(dst, dst, c.consts[Const::abs_mask]);
  }
};
template <> struct Emitter<ir::LogicalNot> {
  static constexpr int scratch = 1;
  template <class Vmm>
  static void emit(EmitContext<Vmm>& c, const ir::LogicalNot&, Vmm dst, std::span<const Vmm> in) {
    c.h.vmovups(c.scratch[0], c.consts[Const::one]);
    c.h.vsubps(dst, c.scratch[0], in[0]);
  }
};

/// min(max(x + 3, 0), 6) / 6, NaN-propagating
template <> struct Emitter<ir::HSigmoid> {
  static constexpr int scratch = 2;
  template <class Vmm> static void core(EmitContext<Vmm>& c, Vmm x) { // -> scratch[0] = 6*hsigmoid
    const Vmm v = c.scratch[0], k = c.scratch[1];
    c.h.vaddps(v, x, c.consts[Const::three]);
    c.h.vxorps(k, k, k);
    c.h.vmaxps(v, k, v);
    c.h.vmovups(k, c.consts[Const::six]);
    c.h.vminps(v, k, v);
  }
  template <class Vmm>
  static void emit(EmitContext<Vmm>& c, const ir::HSigmoid&, Vmm dst, std::span<const Vmm> in) {
    core(c, in[0]);
    c.h.vdivps(dst, c.scratch[0], c.consts[Const::six]);
  }
};
/// x * (min(max(x + 3, 0), 6) / 6): divided first, so that x near FLT_MAX does not overflow
template <> struct Emitter<ir::HSwish> {
  static constexpr int scratch = 2;
  template <class Vmm>
  static void emit(EmitContext<Vmm>& c, const ir::HSwish&, Vmm dst, std::span<const Vmm> in) {
    Emitter<ir::HSigmoid>::core(c, in[0]);
    c.h.vdivps(c.scratch[0], c.scratch[0], c.consts[Const::six]);
    c.h.vmulps(dst, c.scratch[0], in[0]);
  }
};
/// x / (1 + |x|)
template <> struct Emitter<ir::SoftSign> {
  static constexpr int scratch = 1;
  template <class Vmm>
  static void emit(EmitContext<Vmm>& c, const ir::SoftSign&, Vmm dst, std::span<const Vmm> in) {
    const Vmm d = c.scratch[0];
    c.h.vandps(d, in[0], c.consts[Const::abs_mask]);
    c.h.vaddps(d, d, c.consts[Const::one]);
    c.h.vdivps(dst, in[0], d);
  }
};

} // namespace snippets::x64
