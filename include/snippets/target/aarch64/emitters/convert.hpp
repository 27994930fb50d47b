// SPDX-License-Identifier: Apache-2.0
// snippets/target/aarch64/emitters/convert.hpp: Convert to any element type, the value kept as
// an f32 (registers always hold f32; ir/op_tags.hpp gives the rules).
//  - f16: FCVTN then FCVTL, the hardware's round to nearest even both ways;
//  - bf16: round to nearest even on the top 16 bits in integer arithmetic; NaN stays NaN;
//  - i32, i8, u8: FCVTZS / FCVTZU truncate, saturate and turn NaN into 0; SQXTN / UQXTN
//    saturate to the narrow range; back to f32 by SCVTF / UCVTF (2^31 - 1 is held as 2^31);
//  - boolean: x != 0 (NaN included) as 1.0f / 0.0f.
#pragma once

#include "snippets/ir/op_tags.hpp"
#include "snippets/target/aarch64/emitters/eltwise.hpp"

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

} // namespace snippets::aarch64
