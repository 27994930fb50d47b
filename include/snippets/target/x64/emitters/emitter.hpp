// SPDX-License-Identifier: Apache-2.0
// snippets/target/x64/emitters/emitter.hpp: the emitter table of the x64 target.
//
// Emitter<Op> is the code of one op on vector registers. A specialization provides
//   static constexpr int scratch;   // vector scratch registers it needs (declared up front)
//   template <class Vmm> static void emit(EmitContext<Vmm>&, const Op&, Vmm dst,
//                                         std::span<const Vmm> in);
//   static bool supports(const Op&);                     // optional: attribute check
// and nothing else: no state, no virtual functions. `dst` may be one of the inputs (the
// register allocator reuses a register whose last reader is this op), so an emitter either
// reads all inputs before writing dst or works in scratch. Vmm is Xbyak::Ymm (AVX2) or
// Xbyak::Zmm (AVX-512); finer ISA questions are answered at run time.
#pragma once

#include <span>
#include <type_traits>

#include <xbyak/xbyak.h>

#include "snippets/target/x64/constant_table.hpp"

namespace snippets::x64 {

template <class Vmm> struct EmitContext {
  static constexpr bool avx512 = std::is_same_v<Vmm, Xbyak::Zmm>;
  Xbyak::CodeGenerator& h;
  ConstantTable& consts;
  std::span<const Vmm> scratch; // reserved by the kernel for the emitter being run
  /// Significand bits the result needs: 24; 8 or 11 when every consumer stores or converts
  /// it to bf16 or f16; at most 17 in the relaxed accuracy tier (CompileOptions::accuracy).
  /// At 17 or fewer the exp-based emitters use a shorter polynomial (math::exp_q_short).
  int result_bits = 24;
  /// AVX-512 only. k1 is the tail mask, kept from one expression to the next (the kernel sets
  /// it once for a run of masked Loads and Stores): emitters may read k1, never write it.
  Xbyak::Opmask kscratch{2};
};

/// The primary template marks "no emitter"; specializations replace it.
template <class Op> struct Emitter { using no_emitter = void; };

template <class Op>
concept HasEmitter = !requires {
  typename Emitter<Op>::no_emitter;
};

/// Whether the emitter accepts these attributes (e.g. PowerStatic's exponent).
template <class Op> bool emitter_supports(const Op& op) {
  if constexpr (requires { Emitter<Op>::supports(op); })
    return Emitter<Op>::supports(op);
  else
    return true;
}

} // namespace snippets::x64
