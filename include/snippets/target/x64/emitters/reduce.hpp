// SPDX-License-Identifier: Apache-2.0
// snippets/target/x64/emitters/reduce.hpp: the vector side of ReduceSum, ReduceMax, ReduceMin
// and ReduceProd over the innermost dimension (ir/lowered_ops.hpp: ReduceInit,
// ReduceAccumulate, HorizonReduce).
// Max and min propagate NaN like the reference: VMAXPS / VMINPS return their second source
// when either is NaN, so the accumulator goes second (a NaN in it stays) and a NaN in the new
// value is copied in explicitly. max_ignore_nan is the VMAXPS alone: a NaN value leaves the
// accumulator as it was (and the accumulator never holds NaN). Sum and product are VADDPS and
// VMULPS, which propagate NaN themselves.
#pragma once

#include <limits>

#include "snippets/ir/lowered_ops.hpp"
#include "snippets/target/x64/emitters/eltwise.hpp"

namespace snippets::x64 {

template <> struct Emitter<ir::ReduceInit> {
  static constexpr int scratch = 0;
  template <class Vmm>
  static void emit(EmitContext<Vmm>& c, const ir::ReduceInit& op, Vmm dst, std::span<const Vmm>) {
    if (op.kind == ir::ReduceKind::sum)
      c.h.vxorps(dst, dst, dst);
    else
      c.h.vmovups(dst, c.consts.value(neutral(op.kind)));
  }
  /// The value that leaves an accumulator of `kind` as it is.
  static float neutral(ir::ReduceKind kind) {
    switch (kind) {
    case ir::ReduceKind::sum: return 0.0f;
    case ir::ReduceKind::prod: return 1.0f;
    case ir::ReduceKind::min: return std::numeric_limits<float>::infinity();
    case ir::ReduceKind::max:
    case ir::ReduceKind::max_ignore_nan: break;
    }
    return -std::numeric_limits<float>::infinity();
  }
};

namespace detail {
/// acc = acc (+, *, max or min) x, NaN-propagating but for max_ignore_nan; AVX-512 lanes
/// outside `mask` (k1, when `masked`) keep acc. Needs no vector scratch on AVX-512 and
/// c.scratch[from] on AVX2 (for a NaN-propagating max or min).
template <class Vmm>
void fold(EmitContext<Vmm>& c, ir::ReduceKind kind, Vmm acc, Vmm x, bool masked, int from = 0) {
  const Xbyak::Opmask k1(1);
  if (kind == ir::ReduceKind::sum || kind == ir::ReduceKind::prod) {
    const auto op = [&](const auto& d) {
      if (kind == ir::ReduceKind::sum)
        c.h.vaddps(d, acc, x);
      else
        c.h.vmulps(d, acc, x);
    };
    if constexpr (EmitContext<Vmm>::avx512)
      op(masked ? acc | k1 : acc);
    else
      op(acc);
    return;
  }
  const bool propagate_nan = kind != ir::ReduceKind::max_ignore_nan;
  const auto extreme = [&](const auto& d) { // the second source wins when either is NaN
    if (kind == ir::ReduceKind::min)
      c.h.vminps(d, x, acc);
    else
      c.h.vmaxps(d, x, acc);
  };
  if constexpr (EmitContext<Vmm>::avx512) {
    if (propagate_nan) c.h.vcmpps(masked ? c.kscratch | k1 : c.kscratch, x, x, cmp_unord_q);
    extreme(masked ? acc | k1 : acc);
    if (propagate_nan) c.h.vmovaps(acc | c.kscratch, x);
  } else {
    const Vmm nan = c.scratch[static_cast<std::size_t>(from)];
    if (propagate_nan) c.h.vcmpps(nan, x, x, cmp_unord_q);
    extreme(acc);
    if (propagate_nan) c.h.vblendvps(acc, acc, x, nan);
  }
}
} // namespace detail

/// The lanes of the accumulator reduced, in every lane: a butterfly of 4 (AVX-512) or 3 (AVX2)
/// permute-and-fold steps; the accumulator itself where its lanes are columns.
template <> struct Emitter<ir::HorizonReduce> {
  static constexpr int scratch = 2;
  template <class Vmm>
  static void emit(EmitContext<Vmm>& c, const ir::HorizonReduce& op, Vmm dst,
                   std::span<const Vmm> in) {
    if (op.columns) { // a value per lane (passes/tile_columns.hpp)
      if (in[0].getIdx() != dst.getIdx()) c.h.vmovaps(dst, in[0]);
      return;
    }
    const Vmm t = c.scratch[0];
    Vmm from = in[0];
    auto step = [&](auto permute) {
      permute(t, from);
      if (from.getIdx() != dst.getIdx()) c.h.vmovaps(dst, from);
      detail::fold(c, op.kind, dst, t, false, 1);
      from = dst;
    };
    if constexpr (EmitContext<Vmm>::avx512) {
      step([&](Vmm o, Vmm i) { c.h.vshuff32x4(o, i, i, 0x4e); }); // swap 256-bit halves
      step([&](Vmm o, Vmm i) { c.h.vshuff32x4(o, i, i, 0xb1); }); // swap 128-bit quarters
    } else {
      step([&](Vmm o, Vmm i) { c.h.vperm2f128(o, i, i, 0x01); });
    }
    step([&](Vmm o, Vmm i) { c.h.vpermilps(o, i, 0x4e); }); // swap 64-bit pairs
    step([&](Vmm o, Vmm i) { c.h.vpermilps(o, i, 0xb1); }); // swap neighbours
  }
};

} // namespace snippets::x64
