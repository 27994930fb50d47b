// SPDX-License-Identifier: Apache-2.0
// examples/custom_backend/sse41_codegen.hpp: the SSE4.1 kernel code generator behind
// sse41::Traits::emit, written against the library's public seam only.
//
// The kernel is `void kernel(const snippets::CallArgs*)` (SysV: the pointer in rdi, kept
// there). rax is the emitter's own scratch; the other 13 general-purpose registers hold the
// data pointers first, then loop counters (a counter without a register lives in an 8-byte
// stack slot); the callee-saved ones in use are pushed. The stack frame holds the 16-byte
// spill slots, then the counter slots. Vector value i lives in xmm i; the top
// lir.reserved_vector_registers xmms are emitter scratch.
// Loops follow the LIR's LoopInfo as the x64 kernel emitter does: the parallel loop reads its
// work amount from CallArgs::work, a remainder block (evaluate_once, tail_of) runs iff its
// main loop left work, and after each step and after the loop the data pointers move by their
// ports' increments and finalization offsets.
// Tails without masks: a Load or Store of 1, 2 or 3 elements touches exactly those elements
// (MOVSS; MOVQ; MOVQ + INSERTPS/EXTRACTPS), never a byte outside the tensor.
// Not supported, raised as [snippets.compile.codegen] so a Program runs the Subgraph on the
// reference path: dynamic shapes, strided reads (folded Transposes), element types other than
// f32 in memory, Buffers, reductions, MatMul. Debug instrumentation (code maps, counters,
// fault slots) is not emitted, and streaming requests get ordinary stores.
#pragma once

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "custom_backend/sse41_emitters.hpp"
#include "snippets/error.hpp"
#include "snippets/ir/linear_ir.hpp"
#include "snippets/target/codegen.hpp"
#include "snippets/target/x64/code_buffer.hpp"
#include "snippets/target/x64/constant_table.hpp"

namespace sse41 {

inline constexpr int lanes = 4;
inline constexpr int vector_registers = 16;
inline constexpr int usable_gprs = 13; // all but rsp, rdi (the arguments) and rax (scratch)

/// Vector registers kept from the allocator: the most scratch any emitter in `lir` needs.
/// compile() asks before the lowering passes run, so a Multiply and an Add count as the
/// FusedMulAdd FuseMultiplyAdd may make of them.
template <class T> int scratch_registers(const snippets::ir::LinearIR<T>& lir) {
  namespace ir = snippets::ir;
  int n = 0;
  bool multiply = false, add = false;
  for (const auto& e : lir)
    std::visit(
        [&](const auto& tag) {
          using Tag = std::decay_t<decltype(tag)>;
          if constexpr (HasEmitter<Tag>) n = std::max(n, Emitter<Tag>::scratch);
          multiply = multiply || std::is_same_v<Tag, ir::Multiply>;
          add = add || std::is_same_v<Tag, ir::Add>;
        },
        e->op);
  return multiply && add ? std::max(n, Emitter<ir::FusedMulAdd>::scratch) : n;
}

[[noreturn]] inline void unsupported(const std::string& what) {
  snippets::raise("snippets.compile.codegen", "the SSE4.1 backend does not support " + what);
}

template <class T> class KernelEmitter {
  using E = snippets::ir::Expression<T>;
  using Reg = snippets::ir::Reg;
  using RegKind = snippets::ir::RegKind;

public:
  KernelEmitter(snippets::x64::CodeBuffer& h, snippets::ir::LinearIR<T>& lir)
      : h_(h), lir_(lir), consts_(lanes * sizeof(float)) {
    using namespace Xbyak::util;
    static const Xbyak::Reg64 pool[usable_gprs] = {rbx, rbp, r12, r13, r14, r15, rsi,
                                                   rdx, rcx, r8,  r9,  r10, r11};
    const std::size_t n_data = lir.num_inputs + lir.num_outputs;
    for (std::size_t i = 0; i < usable_gprs; ++i)
      (i < n_data ? data_ : counters_).push_back(pool[i]);
    for (int k = 0; k < lir.reserved_vector_registers; ++k)
      scratch_.push_back(Xmm(vector_registers - 1 - k));
  }

  void emit() {
    check_kernel();
    const std::vector<Xbyak::Reg64> saved = callee_saved_used();
    for (const auto& r : saved) h_.push(r);
    if (stack_bytes()) h_.sub(Xbyak::util::rsp, static_cast<int>(stack_bytes()));
    for (std::size_t i = 0; i < data_.size(); ++i)
      h_.mov(data_[i], h_.ptr[Xbyak::util::rdi + static_cast<int>(i * sizeof(void*))]);
    for (auto& e : lir_) emit_op(*e);
    if (stack_bytes()) h_.add(Xbyak::util::rsp, static_cast<int>(stack_bytes()));
    for (auto it = saved.rbegin(); it != saved.rend(); ++it) h_.pop(*it);
    h_.ret();
    text_bytes_ = static_cast<std::uint32_t>(h_.getSize());
    consts_.emit(h_);
  }

  std::uint32_t text_bytes() const { return text_bytes_; }

private:
  void check_kernel() const {
    if (lir_.dynamic) unsupported("dynamic shapes (compile it with static shapes)");
    if (lir_.buffer_pointers) unsupported("Buffers (reductions, Softmax or MatMul in a kernel)");
    for (const snippets::ElementType t : lir_.arg_types)
      if (t != snippets::ElementType::f32)
        unsupported(std::string("kernel arguments of type ") + snippets::to_string(t).data());
  }

  std::vector<Xbyak::Reg64> callee_saved_used() const {
    std::size_t counters_used = 0;
    for (const auto& e : lir_)
      if (std::holds_alternative<snippets::ir::LoopBegin>(e->op) &&
          e->out_desc(0).reg.kind == RegKind::gpr)
        counters_used = std::max(counters_used, std::size_t(e->out_desc(0).reg.index) + 1);
    std::vector<Xbyak::Reg64> used(data_);
    used.insert(used.end(), counters_.begin(),
                counters_.begin() +
                    static_cast<std::ptrdiff_t>(std::min(counters_used, counters_.size())));
    std::vector<Xbyak::Reg64> out;
    using namespace Xbyak::util;
    for (const auto& r : {rbx, rbp, r12, r13, r14, r15})
      if (std::any_of(used.begin(), used.end(),
                      [&](const auto& u) { return u.getIdx() == r.getIdx(); }))
        out.push_back(r);
    return out;
  }

  // the stack frame: vector spill slots, then 8-byte loop counter slots
  std::size_t spill_bytes() const { return lir_.spill_slots * lanes * sizeof(float); }
  std::size_t stack_bytes() const { return spill_bytes() + 8 * lir_.counter_slots; }
  Xbyak::Address spill_slot(std::size_t slot) const {
    return h_.ptr[Xbyak::util::rsp + static_cast<int>(slot * lanes * sizeof(float))];
  }

  static Xmm xmm(const Reg& r) {
    SNIPPETS_ASSERT(r.kind == RegKind::vec && r.index >= 0) << "value without a vector register";
    return Xmm(r.index);
  }
  /// Calls f with a loop counter: its register, or its stack slot when the registers ran out.
  template <class F> void with_counter(const Reg& r, F f) const {
    if (r.kind == RegKind::stack)
      return f(
          h_.qword[Xbyak::util::rsp + static_cast<int>(spill_bytes() + 8 * std::size_t(r.index))]);
    SNIPPETS_ASSERT(r.kind == RegKind::gpr && std::size_t(r.index) < counters_.size())
        << "loop counter without a register";
    f(counters_[static_cast<std::size_t>(r.index)]);
  }
  /// The address of element `offset` (f32) of `e`'s argument, `extra` bytes on.
  Xbyak::Address data_ptr(const E& e, std::int64_t offset, int extra = 0) const {
    return h_.ptr[data_.at(e.data_index) + static_cast<int>(offset * 4 + extra)];
  }

  void emit_load(const E& e, const snippets::ir::Load& op) {
    if (op.stride != 1) unsupported("strided reads (a Transpose folded into an input)");
    if (op.type != snippets::ElementType::f32) unsupported("loads of other types than f32");
    const Xmm dst = xmm(e.out_desc(0).reg);
    switch (op.count) {
    case 1: h_.movss(dst, data_ptr(e, op.offset)); break;
    case 2: h_.movq(dst, data_ptr(e, op.offset)); break;
    case 3:
      h_.movq(dst, data_ptr(e, op.offset));
      h_.insertps(dst, data_ptr(e, op.offset, 8), 0x20); // element 2 into lane 2
      break;
    case lanes: h_.movups(dst, data_ptr(e, op.offset)); break;
    default: unsupported("a load of " + std::to_string(op.count) + " elements");
    }
  }

  void emit_store(const E& e, const snippets::ir::Store& op) {
    if (op.type != snippets::ElementType::f32) unsupported("stores of other types than f32");
    const Xmm src = xmm(e.in_desc(0).reg);
    switch (op.count) {
    case 1: h_.movss(data_ptr(e, op.offset), src); break;
    case 2: h_.movq(data_ptr(e, op.offset), src); break;
    case 3:
      h_.movq(data_ptr(e, op.offset), src);
      h_.extractps(data_ptr(e, op.offset, 8), src, 2);
      break;
    case lanes: h_.movups(data_ptr(e, op.offset), src); break;
    default: unsupported("a store of " + std::to_string(op.count) + " elements");
    }
  }

  void shift_pointers(const snippets::ir::LoopInfo& info, bool finalization) {
    for (const auto& p : info.ports) {
      const std::int64_t bytes =
          (finalization ? p.finalization_offset : p.ptr_increment) * p.element_size;
      if (bytes == 0) continue;
      if (bytes == static_cast<std::int32_t>(bytes)) {
        h_.add(data_.at(p.data_index), static_cast<int>(bytes));
      } else { // past 2 GiB: no 32-bit immediate
        h_.mov(Xbyak::util::rax, bytes);
        h_.add(data_.at(p.data_index), Xbyak::util::rax);
      }
    }
  }

  void emit_loop_begin(const E& e, std::size_t id) {
    const snippets::ir::LoopInfo& info = lir_.loops().at(id);
    Labels& l = labels_[id];
    if (info.evaluate_once) {
      if (info.tail_of >= 0) // the remainder of the parallel loop runs iff work is left
        with_counter(counter_.at(static_cast<std::size_t>(info.tail_of)), [&](const auto& cnt) {
          h_.cmp(cnt, 0);
          h_.je(l.end, Xbyak::CodeGenerator::T_NEAR);
        });
      return;
    }
    const Reg reg = e.out_desc(0).reg;
    counter_[id] = reg;
    with_counter(reg, [&](const auto& cnt) {
      if (info.runtime_work_amount) {
        h_.mov(Xbyak::util::rax,
               h_.ptr[Xbyak::util::rdi +
                      static_cast<int>(offsetof(snippets::CallArgs, work) + 8 * info.dim)]);
        h_.mov(cnt, Xbyak::util::rax);
        h_.cmp(cnt, static_cast<int>(info.increment));
        h_.jl(l.end, Xbyak::CodeGenerator::T_NEAR);
      } else if (info.work_amount <= std::numeric_limits<std::int32_t>::max()) {
        h_.mov(cnt, static_cast<std::uint32_t>(info.work_amount));
      } else {
        h_.mov(Xbyak::util::rax, info.work_amount);
        h_.mov(cnt, Xbyak::util::rax);
      }
    });
    h_.L(l.begin);
  }

  void emit_loop_end(std::size_t id) {
    const snippets::ir::LoopInfo& info = lir_.loops().at(id);
    Labels& l = labels_[id];
    if (!info.evaluate_once) {
      shift_pointers(info, false);
      with_counter(counter_.at(id), [&](const auto& cnt) {
        h_.sub(cnt, static_cast<int>(info.increment));
        h_.cmp(cnt, static_cast<int>(info.increment));
      });
      h_.jge(l.begin, Xbyak::CodeGenerator::T_NEAR);
    }
    shift_pointers(info, true);
    h_.L(l.end);
  }

  void emit_op(E& e) {
    namespace ir = snippets::ir;
    std::visit(
        [&](const auto& tag) {
          using Tag = std::decay_t<decltype(tag)>;
          if constexpr (std::is_same_v<Tag, ir::Parameter> || std::is_same_v<Tag, ir::Result>) {
            // arguments: loaded by the prologue, written by Stores
          } else if constexpr (std::is_same_v<Tag, ir::Scalar>) {
            h_.movups(xmm(e.out_desc(0).reg), consts_.value(static_cast<float>(tag.value)));
          } else if constexpr (std::is_same_v<Tag, ir::Load>) {
            emit_load(e, tag);
          } else if constexpr (std::is_same_v<Tag, ir::Store>) {
            emit_store(e, tag);
          } else if constexpr (std::is_same_v<Tag, ir::BroadcastLoad>) {
            if (tag.type != snippets::ElementType::f32)
              unsupported("loads of other types than f32");
            const Xmm dst = xmm(e.out_desc(0).reg);
            h_.movss(dst, data_ptr(e, tag.offset));
            h_.shufps(dst, dst, 0);
          } else if constexpr (std::is_same_v<Tag, ir::BroadcastMove>) {
            const Xmm dst = xmm(e.out_desc(0).reg), src = xmm(e.in_desc(0).reg);
            if (!detail::same(dst, src)) h_.movaps(dst, src);
            h_.shufps(dst, dst, 0);
          } else if constexpr (std::is_same_v<Tag, ir::Spill>) {
            h_.movups(spill_slot(tag.slot), xmm(e.in_desc(0).reg));
          } else if constexpr (std::is_same_v<Tag, ir::Reload>) {
            h_.movups(xmm(e.out_desc(0).reg), spill_slot(tag.slot));
          } else if constexpr (std::is_same_v<Tag, ir::LoopBegin>) {
            emit_loop_begin(e, tag.loop_id);
          } else if constexpr (std::is_same_v<Tag, ir::LoopEnd>) {
            emit_loop_end(tag.loop_id);
          } else if constexpr (HasEmitter<Tag>) {
            Xmm in[3];
            SNIPPETS_ASSERT(e.num_inputs() <= 3) << e.name;
            SNIPPETS_ASSERT(scratch_.size() >= std::size_t{Emitter<Tag>::scratch})
                << Tag::name << " needs more scratch registers than the kernel kept";
            for (std::size_t i = 0; i < e.num_inputs(); ++i) in[i] = xmm(e.in_desc(i).reg);
            EmitContext c = context();
            Emitter<Tag>::emit(c, tag, xmm(e.out_desc(0).reg),
                               std::span<const Xmm>(in, e.num_inputs()));
          } else {
            static_assert(!T::template fusable<Tag>,
                          "sse41: the traits call this op fusable but it has no emitter: "
                          "specialise sse41::Emitter<Op> or make fusable<Op> false");
            unsupported(std::string("the op ") + std::string(Tag::name) + " (" + e.name + ")");
          }
        },
        e.op);
  }

  EmitContext context() { return {h_, consts_, scratch_}; }

  struct Labels {
    Xbyak::Label begin, end;
  };

  snippets::x64::CodeBuffer& h_;
  snippets::ir::LinearIR<T>& lir_;
  snippets::x64::ConstantTable consts_;
  std::vector<Xmm> scratch_;
  std::vector<Xbyak::Reg64> data_, counters_;
  std::map<std::size_t, Labels> labels_;
  std::map<std::size_t, Reg> counter_; // each loop's counter (a remainder reads its main loop's)
  std::uint32_t text_bytes_ = 0;
};

/// Writes `lir` into a CodeBuffer, which is then made read+execute (W^X), growing the buffer
/// when the code does not fit.
template <class T> snippets::KernelCode emit_kernel(snippets::ir::LinearIR<T>& lir) {
  std::size_t bytes = 16384 + 512 * lir.size();
  for (;;) {
    auto buf = std::make_shared<snippets::x64::CodeBuffer>(bytes);
    snippets::KernelCode code;
    try {
      KernelEmitter<T> emitter(*buf, lir);
      emitter.emit();
      code.text_bytes = emitter.text_bytes();
    } catch (const Xbyak::Error& err) {
      if (static_cast<int>(err) == Xbyak::ERR_CODE_IS_TOO_BIG && bytes < (1u << 26)) {
        bytes *= 4;
        continue;
      }
      snippets::raise("snippets.compile.codegen",
                      std::string("SSE4.1 code generation failed: ") + err.what());
    }
    code.fn = buf->template finalize<snippets::KernelFn>();
    code.bytes = {buf->getCode(), buf->getSize()};
    code.owner = std::move(buf);
    return code;
  }
}

} // namespace sse41
