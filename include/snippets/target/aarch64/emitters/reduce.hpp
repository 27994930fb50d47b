// SPDX-License-Identifier: Apache-2.0
// snippets/target/aarch64/emitters/reduce.hpp: the vector side of ReduceSum / ReduceMax over the
// innermost dimension (ir/lowered_ops.hpp: ReduceInit, ReduceAccumulate, HorizonReduce).
// FMAX propagates NaN as the reference does; max_ignore_nan is FMAXNM, which returns the number
// when one operand is a (quiet) NaN. A tail's ReduceAccumulate first sets the lanes past its
// count to the neutral element (0 or -inf) in a scratch copy: NEON has no masked arithmetic
// (a dynamic tail's run-time count of lanes is copied behind a compare and branch per lane).
// HorizonReduce folds neighbouring pairs twice (FADDP / FMAXP / FMAXNMP of the register with
// itself), which leaves the result in every lane.
#pragma once

#include <limits>

#include "snippets/ir/lowered_ops.hpp"
#include "snippets/target/aarch64/emitters/emitter.hpp"

namespace snippets::aarch64 {

template <> struct Emitter<ir::ReduceInit> {
  static constexpr int scratch = 0;
  static void emit(EmitContext& c, const ir::ReduceInit& op, Vec dst, std::span<const Vec>) {
    if (op.kind == ir::ReduceKind::sum)
      c.a.movi(dst.s4(), 0);
    else
      c.consts.load_value(dst, -std::numeric_limits<float>::infinity());
  }
};

namespace detail {
inline void fold(EmitContext& c, ir::ReduceKind kind, Vec acc, Vec x) {
  switch (kind) {
  case ir::ReduceKind::sum: c.a.fadd(acc.s4(), acc.s4(), x.s4()); return;
  case ir::ReduceKind::max: c.a.fmax(acc.s4(), acc.s4(), x.s4()); return;
  case ir::ReduceKind::max_ignore_nan: c.a.fmaxnm(acc.s4(), acc.s4(), x.s4()); return;
  }
}
} // namespace detail

namespace detail {
/// t = the neutral element of `kind` in every lane.
inline void neutral(EmitContext& c, ir::ReduceKind kind, Vec t) {
  if (kind == ir::ReduceKind::sum)
    c.a.movi(t.s4(), 0);
  else
    c.consts.load_value(t, -std::numeric_limits<float>::infinity());
}
} // namespace detail

/// ReduceAccumulate: acc (+ or max)= x over the first `count` lanes (scratch[0] for a tail).
inline void accumulate(EmitContext& c, const ir::ReduceAccumulate& op, Vec acc, Vec x) {
  if (op.count == 4) return detail::fold(c, op.kind, acc, x);
  const Vec t = c.scratch[0];
  detail::neutral(c, op.kind, t);
  for (std::uint32_t i = 0; i < static_cast<std::uint32_t>(op.count); ++i) c.a.mov(t.s(i), x.s(i));
  detail::fold(c, op.kind, acc, t);
}

/// The same for the tail of a dynamic loop: `count` lanes given at run time (1 to 3, in the
/// register `count`), copied behind a compare and branch each.
inline void accumulate(EmitContext& c, const ir::ReduceAccumulate& op, Vec acc, Vec x,
                       const asmjit::a64::GpX& count) {
  const Vec t = c.scratch[0];
  detail::neutral(c, op.kind, t);
  const asmjit::Label done = c.a.newLabel();
  c.a.mov(t.s(0), x.s(0));
  for (std::uint32_t i = 1; i < 3; ++i) {
    c.a.cmp(count, i);
    c.a.b_le(done);
    c.a.mov(t.s(i), x.s(i));
  }
  c.a.bind(done);
  detail::fold(c, op.kind, acc, t);
}

template <> struct Emitter<ir::HorizonReduce> {
  static constexpr int scratch = 1;
  static void emit(EmitContext& c, const ir::HorizonReduce& op, Vec dst, std::span<const Vec> in) {
    const Vec t = c.scratch[0];
    for (int step = 0; step < 2; ++step) {
      const Vec from = step == 0 ? in[0] : t;
      switch (op.kind) {
      case ir::ReduceKind::sum: c.a.faddp(t.s4(), from.s4(), from.s4()); break;
      case ir::ReduceKind::max: c.a.fmaxp(t.s4(), from.s4(), from.s4()); break;
      case ir::ReduceKind::max_ignore_nan: c.a.fmaxnmp(t.s4(), from.s4(), from.s4()); break;
      }
    }
    c.a.mov(dst.b16(), t.b16());
  }
};

} // namespace snippets::aarch64
