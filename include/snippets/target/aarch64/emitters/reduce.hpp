// SPDX-License-Identifier: Apache-2.0
// snippets/target/aarch64/emitters/reduce.hpp: the vector side of ReduceSum, ReduceMax,
// ReduceMin and ReduceProd over the innermost dimension (ir/lowered_ops.hpp: ReduceInit,
// ReduceAccumulate, HorizonReduce).
// FMAX and FMIN propagate NaN as the reference does; max_ignore_nan is FMAXNM, which returns
// the number when one operand is a (quiet) NaN. A tail's ReduceAccumulate first sets the lanes
// past its count to the neutral element (0, -inf, +inf or 1) in a scratch copy: NEON has no
// masked arithmetic (a dynamic tail's run-time count of lanes is copied behind a compare and
// branch per lane). HorizonReduce folds neighbouring pairs twice (FADDP / FMAXP / FMINP /
// FMAXNMP of the register with itself), which leaves the result in every lane; NEON has no
// pairwise multiply, so a product folds the register with itself rotated by two lanes, then
// by one (EXT): every lane then holds the same four factors, multiplied in an order that
// gives the same value.
#pragma once

#include <limits>

#include "snippets/ir/lowered_ops.hpp"
#include "snippets/target/aarch64/emitters/emitter.hpp"

namespace snippets::aarch64 {

namespace detail {
/// t = the neutral element of `kind` in every lane.
inline void neutral(EmitContext& c, ir::ReduceKind kind, Vec t) {
  constexpr float inf = std::numeric_limits<float>::infinity();
  switch (kind) {
  case ir::ReduceKind::sum: c.a.movi(t.s4(), 0); return;
  case ir::ReduceKind::prod: c.consts.load_value(t, 1.0f); return;
  case ir::ReduceKind::min: c.consts.load_value(t, inf); return;
  case ir::ReduceKind::max:
  case ir::ReduceKind::max_ignore_nan: c.consts.load_value(t, -inf); return;
  }
}
} // namespace detail

template <> struct Emitter<ir::ReduceInit> {
  static constexpr int scratch = 0;
  static void emit(EmitContext& c, const ir::ReduceInit& op, Vec dst, std::span<const Vec>) {
    detail::neutral(c, op.kind, dst);
  }
};

namespace detail {
inline void fold(EmitContext& c, ir::ReduceKind kind, Vec acc, Vec x) {
  switch (kind) {
  case ir::ReduceKind::sum: c.a.fadd(acc.s4(), acc.s4(), x.s4()); return;
  case ir::ReduceKind::prod: c.a.fmul(acc.s4(), acc.s4(), x.s4()); return;
  case ir::ReduceKind::max: c.a.fmax(acc.s4(), acc.s4(), x.s4()); return;
  case ir::ReduceKind::min: c.a.fmin(acc.s4(), acc.s4(), x.s4()); return;
  case ir::ReduceKind::max_ignore_nan: c.a.fmaxnm(acc.s4(), acc.s4(), x.s4()); return;
  }
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
    if (op.columns) { // a value per lane (passes/tile_columns.hpp)
      if (in[0].id() != dst.id()) c.a.mov(dst.b16(), in[0].b16());
      return;
    }
    const Vec t = c.scratch[0];
    if (op.kind == ir::ReduceKind::prod) { // t = x * x rotated by two lanes, dst = t * t by one
      c.a.ext(t.b16(), in[0].b16(), in[0].b16(), 8);
      c.a.fmul(t.s4(), t.s4(), in[0].s4());
      c.a.ext(dst.b16(), t.b16(), t.b16(), 4);
      c.a.fmul(dst.s4(), dst.s4(), t.s4());
      return;
    }
    for (int step = 0; step < 2; ++step) {
      const Vec from = step == 0 ? in[0] : t;
      switch (op.kind) {
      case ir::ReduceKind::sum: c.a.faddp(t.s4(), from.s4(), from.s4()); break;
      case ir::ReduceKind::max: c.a.fmaxp(t.s4(), from.s4(), from.s4()); break;
      case ir::ReduceKind::min: c.a.fminp(t.s4(), from.s4(), from.s4()); break;
      case ir::ReduceKind::max_ignore_nan: c.a.fmaxnmp(t.s4(), from.s4(), from.s4()); break;
      case ir::ReduceKind::prod: break; // above
      }
    }
    c.a.mov(dst.b16(), t.b16());
  }
};

} // namespace snippets::aarch64
