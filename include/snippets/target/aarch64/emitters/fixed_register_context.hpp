// SPDX-License-Identifier: Apache-2.0
// snippets/target/aarch64/emitters/fixed_register_context.hpp: what the emitters that work in
// fixed registers (Brgemm, BrgemmCopyB, SoftmaxRows: emitters/brgemm.hpp, softmax_rows.hpp)
// get from the kernel emitter, and the few general-purpose moves they share.
//
// They run where no vector value of the LIR is live (the kernel emitter pins no constants in a
// kernel that has them, and saves d8-d15), so every vector register is theirs except the
// emitters' scratch, which their epilogues hand to the op emitters. General-purpose registers:
// the pool registers that are neither data pointers nor loop counters (`temps`; the kernel
// emitter saves the callee-saved ones), x16 for offsets past an immediate's reach (as
// memory_access.hpp), x17 for the counters they keep in their stack slots.
#pragma once

#include <cstdint>
#include <span>

#include <asmjit/arm/a64assembler.h>

#include "snippets/error.hpp"
#include "snippets/ir/element_type.hpp"
#include "snippets/target/aarch64/abi.hpp"
#include "snippets/target/aarch64/constant_pool.hpp"
#include "snippets/target/aarch64/emitters/emitter.hpp"
#include "snippets/target/aarch64/memory_access.hpp"

namespace snippets::aarch64 {

/// What the Brgemm, BrgemmCopyB and SoftmaxRows emitters get from the kernel emitter: the
/// assembler and its helpers, the emitters' vector scratch (the top registers), every data
/// pointer, the general-purpose registers free for them, and their stack slots (8 bytes each,
/// `slot_count` of them from sp + `slots`).
struct FixedRegisterContext {
  asmjit::a64::Assembler& a;
  ConstantPool& consts;
  MemoryAccess& mem;
  std::span<const Vec> scratch;
  std::span<const asmjit::a64::GpX> data;
  std::span<const asmjit::a64::GpX> temps;
  std::span<const ElementType> types;
  std::int32_t slots = 0;
  static constexpr int slot_count = 16;

  asmjit::a64::Mem slot(int i) const {
    SNIPPETS_ASSERT(i < slot_count) << "stack slot " << i;
    return asmjit::a64::ptr(asmjit::a64::sp, slots + 8 * i);
  }
  /// dst = src + bytes (x16 holds an offset past an immediate's reach).
  void add_offset(const asmjit::a64::GpX& dst, const asmjit::a64::GpX& src,
                  std::int64_t bytes) const {
    if (bytes > 0 && bytes < 4096) {
      a.add(dst, src, bytes);
    } else if (bytes < 0 && bytes > -4096) {
      a.sub(dst, src, -bytes);
    } else if (bytes != 0) {
      const asmjit::a64::GpX t = asmjit::a64::x(scratch_gpr);
      mem.move_imm(t, static_cast<std::uint64_t>(bytes));
      a.add(dst, src, t);
    } else if (dst.id() != src.id()) {
      a.mov(dst, src);
    }
  }
  /// A counter in stack slot i: set to n, or decremented (flags set: b.ne loops on).
  void set_counter(int i, std::int64_t n) const {
    const asmjit::a64::GpX t = asmjit::a64::x(scratch2_gpr);
    mem.move_imm(t, static_cast<std::uint64_t>(n));
    a.str(t, slot(i));
  }
  void count_down(int i) const {
    const asmjit::a64::GpX t = asmjit::a64::x(scratch2_gpr);
    a.ldr(t, slot(i));
    a.subs(t, t, 1);
    a.str(t, slot(i));
  }
  /// A counter in a register: set to n.
  void set(const asmjit::a64::GpX& r, std::int64_t n) const {
    mem.move_imm(r, static_cast<std::uint64_t>(n));
  }
};

} // namespace snippets::aarch64
