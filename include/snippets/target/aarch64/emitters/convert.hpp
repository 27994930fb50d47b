// SPDX-License-Identifier: Apache-2.0
// snippets/target/aarch64/emitters/convert.hpp: Convert to any element type, the value kept as
// an f32 (registers always hold f32; ir/op_tags.hpp gives the rules).
//  - f16: FCVTN then FCVTL, the hardware's round to nearest even both ways;
//  - bf16: round to nearest even on the top 16 bits in integer arithmetic; NaN stays NaN;
//  - i32, i8, u8: FCVTZS / FCVTZU truncate, saturate and turn NaN into 0; SQXTN / UQXTN
//    saturate to the narrow range; back to f32 by SCVTF / UCVTF (2^31 - 1 is held as 2^31);
//  - boolean: x != 0 (NaN included) as 1.0f / 0.0f.
// store_converted() writes a register as any stored type: a bf16 store rounds as Convert does
// (memory_access.hpp converts the other types itself).
#pragma once

#include "snippets/ir/op_tags.hpp"
#include "snippets/target/aarch64/emitters/eltwise.hpp"
#include "snippets/target/aarch64/memory_access.hpp"

namespace snippets::aarch64 {

template <> struct Emitter<ir::Convert> {
  static constexpr int scratch = 2;
  static void emit(EmitContext& c, const ir::Convert& op, Vec dst, std::span<const Vec> in) {
    const Vec x = in[0], t = c.scratch[0], m = c.scratch[1];
    auto& a = c.a;
    switch (op.to) {
    case ElementType::f32: return detail::move(c, dst, x);
    case ElementType::boolean:
      a.fcmeq(m.s4(), x.s4(), 0);
      a.mvn(m.b16(), m.b16());
      return detail::mask_to_one(c, dst, m, t);
    case ElementType::f16:
      a.fcvtn(t.h4(), x.s4());
      a.fcvtl(dst.s4(), t.h4());
      return;
    case ElementType::bf16:
      a.ushr(t.s4(), x.s4(), 16);
      a.shl(t.s4(), t.s4(), 31);
      a.ushr(t.s4(), t.s4(), 31); // the lowest bit kept
      a.add(t.s4(), t.s4(), x.s4());
      a.add(t.s4(), t.s4(), c.consts.bits_in(0x7fff, m).s4());
      a.ushr(t.s4(), t.s4(), 16);
      a.shl(t.s4(), t.s4(), 16);
      a.fcmeq(m.s4(), x.s4(), x.s4()); // false for NaN
      a.bsl(m.b16(), t.b16(), x.b16());
      return detail::move(c, dst, m);
    case ElementType::i32:
      a.fcvtzs(t.s4(), x.s4());
      a.scvtf(dst.s4(), t.s4());
      return;
    case ElementType::i8:
      a.fcvtzs(t.s4(), x.s4());
      a.sqxtn(t.h4(), t.s4());
      a.sqxtn(t.b8(), t.h8());
      a.sshll(t.h8(), t.b8(), 0);
      a.sshll(t.s4(), t.h4(), 0);
      a.scvtf(dst.s4(), t.s4());
      return;
    case ElementType::u8:
      a.fcvtzu(t.s4(), x.s4());
      a.uqxtn(t.h4(), t.s4());
      a.uqxtn(t.b8(), t.h8());
      a.ushll(t.h8(), t.b8(), 0);
      a.ushll(t.s4(), t.h4(), 0);
      a.ucvtf(dst.s4(), t.s4());
      return;
    }
  }
};

namespace detail {
/// The bf16 halves of v's lanes, rounded as Convert does, in the low half of c.scratch[0]
/// (scratch: c.scratch[0..2]).
inline Vec bf16_halves(EmitContext& c, Vec v) {
  const Vec t = c.scratch[0];
  EmitContext rest{c.a, c.consts, c.scratch.subspan(1)};
  Emitter<ir::Convert>::emit(rest, ir::Convert{ElementType::bf16}, t, std::span<const Vec>(&v, 1));
  c.a.shrn(t.h4(), t.s4(), 16);
  return t;
}
} // namespace detail

/// The first `count` lanes of v to base + bytes as `type`. Scratch: c.scratch[0] (any type but
/// f32), and for bf16 c.scratch[1..2] too (the rounding of Emitter<Convert>, then the top
/// halves).
inline void store_converted(EmitContext& c, MemoryAccess& mem, Vec v, const asmjit::a64::GpX& base,
                            std::int64_t bytes, ElementType type, std::int64_t count) {
  if (type != ElementType::bf16) return mem.store(v, base, bytes, type, count, c.scratch[0]);
  mem.store_raw(detail::bf16_halves(c, v), base, bytes, 2, static_cast<int>(count));
}
/// The same for a run-time count (1 to 3, in the register `count`).
inline void store_converted(EmitContext& c, MemoryAccess& mem, Vec v, const asmjit::a64::GpX& base,
                            std::int64_t bytes, ElementType type, const asmjit::a64::GpX& count) {
  if (type != ElementType::bf16) return mem.store(v, base, bytes, type, count, c.scratch[0]);
  mem.lanes_raw(detail::bf16_halves(c, v), base, bytes, 2, count, true);
}

} // namespace snippets::aarch64
