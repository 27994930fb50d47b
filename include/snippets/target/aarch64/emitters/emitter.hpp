// SPDX-License-Identifier: Apache-2.0
// snippets/target/aarch64/emitters/emitter.hpp: the emitter table of the AArch64 target.
//
// Emitter<Op> is the NEON code of one op on 4-lane vector registers. A specialization provides
//   static constexpr int scratch;   // vector scratch registers it needs (declared up front)
//   static void emit(EmitContext&, const Op&, Vec dst, std::span<const Vec> in);
//   static bool supports(const Op&);                     // optional: attribute check
// and nothing else: no state, no virtual functions. `dst` may be one of the inputs (the
// register allocator reuses a register whose last reader is this op); NEON instructions take
// three operands, so most emitters write dst last and need no copy. Registers are passed as
// a64::Vec; an emitter picks the arrangement it needs (.s4() for f32 lanes, .b16() for bits).
#pragma once

#include <span>

#include <asmjit/arm/a64assembler.h>

#include "snippets/target/aarch64/constant_pool.hpp"

namespace snippets::aarch64 {

using Vec = asmjit::a64::Vec;

struct EmitContext {
  asmjit::a64::Assembler& a;
  ConstantPool& consts;
  std::span<const Vec> scratch; // reserved by the kernel for the emitter being run
};

/// The primary template marks "no emitter"; specializations replace it.
template <class Op> struct Emitter { using no_emitter = void; };

template <class Op>
concept HasEmitter = !requires {
  typename Emitter<Op>::no_emitter;
};

/// Whether the emitter accepts these attributes.
template <class Op> bool emitter_supports(const Op& op) {
  if constexpr (requires { Emitter<Op>::supports(op); })
    return Emitter<Op>::supports(op);
  else
    return true;
}

} // namespace snippets::aarch64
