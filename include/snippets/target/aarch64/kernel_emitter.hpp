// SPDX-License-Identifier: Apache-2.0
// snippets/target/aarch64/kernel_emitter.hpp: turns a prepared Linear IR into AArch64 code
// (NEON, 4 f32 lanes) with AsmJit's a64::Assembler.
//
// ABI (abi.hpp): `void kernel(const CallArgs*)`, the pointer in x0 for the whole kernel. Data
// pointers (inputs, outputs, then Buffers, whose scratch memory the runtime passes after the
// kernel arguments) take the first registers of the pool, loop counters the next ones; a
// counter without a register lives in an 8-byte stack slot. Vector value i lives in v<i>; the
// top lir.reserved_vector_registers registers are emitter scratch, and the ones between hold
// the constants the emitters read (constant_pool.hpp: loaded once, in a block after the return
// that the prologue jumps to and back from). The prologue saves the callee-saved x19-x28 it
// uses and, when values use any of v8-v15, d8-d15 (the constants' block saves them when only
// constants do).
// Stack frame, from sp up: 16-byte spill slots, 8-byte counter slots, the fixed-register
// emitters' slots (only when the kernel has such emitters), the saved registers.
// FusedMulAdd whose result got a multiplicand's register accumulates into the addend's
// register when the addend dies there (FMLA writes its destination).
// Loops follow the LIR's LoopInfo: the parallel loop reads its work amount from
// CallArgs::work, a remainder block (evaluate_once, tail_of) runs iff its main loop left work,
// and after each step and after the loop the data pointers move by their ports' increments
// and finalization offsets.
// Dynamic kernels (LinearIR::dynamic) read every loop's work amount from CallArgs::work, add
// the pointer increments of run-time ports from the configuration table (CallArgs::config),
// run a one-vector loop that continues the main loop's counter, and move the tail's
// run-time count of elements (the counter's remainder, 1 to 3) lane by lane; after that tail,
// pointers a later loop of the row reads again move back by what the loop walked.
// Tails: memory_access.hpp moves exactly `count` elements (no masks on NEON). A strided Load
// (a transposed input) reads its lanes one by one and widens them as a contiguous load does.
// A Brgemm emits its epilogue and Stores (the expressions after it) itself; it, its
// BrgemmCopyB and SoftmaxRows work in fixed registers (emitters/brgemm.hpp, softmax_rows.hpp):
// in a kernel that has them no constant is pinned, d8-d15 are saved, and they get the pool
// registers left after the data pointers and loop counters, and 16 stack slots after the
// counters' (emitters/fixed_register_context.hpp).
// Not supported, raised as [snippets.compile.codegen] so that a Program runs the Subgraph on
// the reference path: a Brgemm without the general-purpose registers it needs, strided reads
// of a run-time count. Debug instrumentation (code maps, cycle counters, fault slots) is not
// emitted, and streaming requests get ordinary stores.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <map>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include <asmjit/arm/a64assembler.h>

#include "snippets/error.hpp"
#include "snippets/ir/linear_ir.hpp"
#include "snippets/passes/lir_queries.hpp"
#include "snippets/runtime/kernel_abi.hpp"
#include "snippets/target/aarch64/abi.hpp"
#include "snippets/target/aarch64/constant_pool.hpp"
#include "snippets/target/aarch64/emitters/brgemm.hpp"
#include "snippets/target/aarch64/emitters/convert.hpp"
#include "snippets/target/aarch64/emitters/emitter.hpp"
#include "snippets/target/aarch64/emitters/reduce.hpp"
#include "snippets/target/aarch64/emitters/softmax_rows.hpp"
#include "snippets/target/aarch64/memory_access.hpp"

namespace snippets::aarch64 {

[[noreturn]] inline void unsupported(const std::string& what) {
  raise("snippets.compile.codegen", "the AArch64 backend does not support " + what);
}

template <class T> class KernelEmitter {
  using E = ir::Expression<T>;
  using GpX = asmjit::a64::GpX;

public:
  KernelEmitter(asmjit::a64::Assembler& a, ir::LinearIR<T>& lir)
      : a_(a), lir_(lir), consts_(a), mem_(a) {
    const std::size_t n_data = lir.num_inputs + lir.num_outputs + lir.buffer_pointers;
    if (n_data > gpr_pool.size()) unsupported("more than 25 data pointers");
    for (std::size_t i = 0; i < gpr_pool.size(); ++i)
      (i < n_data ? data_ : counters_).push_back(asmjit::a64::x(gpr_pool[i]));
    for (int k = 0; k < lir.reserved_vector_registers; ++k)
      scratch_.push_back(asmjit::a64::v(static_cast<std::uint32_t>(vector_registers - 1 - k)));
    // free for constants: caller-saved registers first, d8-d15 last (saving them costs the
    // kernel 16 instructions per call)
    std::vector<Vec> free, last;
    const int first = fixed_registers() ? vector_registers : first_unused_vec();
    for (int r = first; r < vector_registers - lir.reserved_vector_registers; ++r)
      (callee_saved_vec(static_cast<std::uint32_t>(r)) ? last : free)
          .push_back(asmjit::a64::v(static_cast<std::uint32_t>(r)));
    free.insert(free.end(), last.begin(), last.end());
    consts_.pin_registers(std::move(free));
  }

  void emit() {
    lir_.renumber(); // dies_here() compares positions
    plan_frame();
    prologue();
    // the pinned constants are known once the body is emitted: their loads follow the return
    const asmjit::Label load_constants = a_.newLabel(), body = a_.newLabel();
    if (consts_.pinning()) {
      a_.b(load_constants);
      a_.bind(body);
    }
    for (auto& e : lir_) {
      if (skip_ > 0) { // emitted by the Brgemm before it
        --skip_;
        continue;
      }
      emit_op(*e);
    }
    epilogue();
    if (consts_.pinning()) {
      a_.bind(load_constants);
      if (!values_high_ && consts_.pins_callee_saved()) save_vecs(true);
      consts_.load_pinned();
      a_.b(body);
    }
    text_bytes_ = static_cast<std::uint32_t>(a_.offset());
    consts_.emit();
  }

  std::uint32_t text_bytes() const { return text_bytes_; }

private:
  /// Whether an emitter of the kernel works in fixed registers (Brgemm, its copy, SoftmaxRows):
  /// then no register holds a pinned constant, and d8-d15 are saved.
  bool fixed_registers() const {
    for (const auto& e : lir_)
      if (std::holds_alternative<ir::Brgemm>(e->op) ||
          std::holds_alternative<ir::BrgemmCopyB>(e->op) ||
          std::holds_alternative<ir::SoftmaxRows>(e->op))
        return true;
    return false;
  }

  /// The lowest vector register above every value's: registers from it up to the scratch ones
  /// hold pinned constants.
  int first_unused_vec() const {
    int first = 0;
    for (const auto& e : lir_)
      for (std::size_t i = 0; i < e->num_outputs(); ++i)
        if (const ir::Reg& r = e->out_desc(i).reg; r.kind == ir::RegKind::vec)
          first = std::max(first, r.index + 1);
    return first;
  }

  // ---- frame ----

  void plan_frame() {
    std::size_t counters_used = 0;
    bool high_vec = lir_.reserved_vector_registers > vector_registers - 16;
    for (const auto& e : lir_) {
      if (std::holds_alternative<ir::LoopBegin>(e->op) &&
          e->out_desc(0).reg.kind == ir::RegKind::gpr)
        counters_used = std::max(counters_used, std::size_t(e->out_desc(0).reg.index) + 1);
      for (std::size_t i = 0; i < e->num_outputs(); ++i)
        if (const ir::Reg& r = e->out_desc(i).reg; r.kind == ir::RegKind::vec && r.index >= 8)
          high_vec = true;
    }
    std::vector<GpX> used(data_);
    used.insert(used.end(), counters_.begin(),
                counters_.begin() +
                    static_cast<std::ptrdiff_t>(std::min(counters_used, counters_.size())));
    // the emitters that work in fixed registers take the pool registers left after the data
    // pointers and the loop counters, and stack slots after the counters' (emitters/brgemm.hpp)
    const bool fixed = fixed_registers();
    if (fixed)
      for (std::size_t i = std::min(counters_used, counters_.size());
           i < counters_.size() && emitter_gprs_.size() < std::size_t{fixed_gp_temps}; ++i)
        emitter_gprs_.push_back(counters_[i]);
    used.insert(used.end(), emitter_gprs_.begin(), emitter_gprs_.end());
    for (const GpX& r : used)
      if (callee_saved_gpr(r.id())) saved_gprs_.push_back(r);
    // scratch registers may be any of v16-v31 and values any from v0: v8-v15 are in use as
    // soon as the values reach them (or the scratch reaches down to them); pinned constants
    // take them last, and are known only after the body (the frame keeps room for them)
    values_high_ = high_vec || fixed;
    const std::size_t saved = 8 * saved_gprs_.size() + 64;
    emitter_slots_at_ = spill_bytes() + 8 * lir_.counter_slots;
    saved_at_ = emitter_slots_at_ + (fixed ? 8 * FixedRegisterContext::slot_count : 0);
    frame_ = (saved_at_ + saved + 15) / 16 * 16;
  }

  std::size_t spill_bytes() const { return lir_.spill_slots * 16; }

  void adjust_sp(bool down) {
    if (frame_ == 0) return;
    const GpX sp = asmjit::a64::sp;
    if (frame_ < 4096) {
      if (down)
        a_.sub(sp, sp, frame_);
      else
        a_.add(sp, sp, frame_);
      return;
    }
    const GpX t = asmjit::a64::x(scratch_gpr);
    mem_.move_imm(t, frame_);
    if (down)
      a_.sub(sp, sp, t);
    else
      a_.add(sp, sp, t);
  }

  /// ptr [sp + bytes] for an 8-byte access (frames past 32 KiB go through x17).
  asmjit::a64::Mem sp_slot(std::size_t bytes) {
    if (bytes < 32760) return asmjit::a64::ptr(asmjit::a64::sp, static_cast<std::int32_t>(bytes));
    const GpX t = asmjit::a64::x(scratch2_gpr);
    mem_.move_imm(t, bytes);
    a_.add(t, asmjit::a64::sp, t);
    return asmjit::a64::ptr(t);
  }

  void save_gprs(bool save) {
    std::size_t at = saved_at_;
    for (const GpX& r : saved_gprs_) {
      if (save)
        a_.str(r, sp_slot(at));
      else
        a_.ldr(r, sp_slot(at));
      at += 8;
    }
  }
  /// d8-d15, the callee-saved halves of v8-v15, after the saved GPRs.
  void save_vecs(bool save) {
    std::size_t at = saved_at_ + 8 * saved_gprs_.size();
    for (std::uint32_t d = 8; d < 16; ++d, at += 8) {
      if (save)
        a_.str(asmjit::a64::d(d), sp_slot(at));
      else
        a_.ldr(asmjit::a64::d(d), sp_slot(at));
    }
  }

  void prologue() {
    adjust_sp(true);
    save_gprs(true);
    if (values_high_) save_vecs(true);
    const GpX args = asmjit::a64::x(args_gpr);
    for (std::size_t i = 0; i < data_.size(); ++i)
      a_.ldr(data_[i], asmjit::a64::ptr(args, static_cast<std::int32_t>(i * sizeof(void*))));
  }

  void epilogue() {
    save_gprs(false);
    if (values_high_ || consts_.pins_callee_saved()) save_vecs(false);
    adjust_sp(false);
    a_.ret(asmjit::a64::x30);
  }

  // ---- registers ----

  static Vec vec(const ir::Reg& r) {
    SNIPPETS_ASSERT(r.kind == ir::RegKind::vec && r.index >= 0)
        << "value without a vector register";
    return asmjit::a64::v(static_cast<std::uint32_t>(r.index));
  }
  /// The loop counter's register; a counter kept on the stack is loaded into x17 (`store_back`
  /// writes x17 back after f).
  template <class F> void with_counter(const ir::Reg& r, bool store_back, F f) {
    if (r.kind == ir::RegKind::stack) {
      const std::size_t at = spill_bytes() + 8 * static_cast<std::size_t>(r.index);
      const GpX t = asmjit::a64::x(scratch2_gpr);
      a_.ldr(t, asmjit::a64::ptr(asmjit::a64::sp, static_cast<std::int32_t>(at)));
      f(t);
      if (store_back) a_.str(t, asmjit::a64::ptr(asmjit::a64::sp, static_cast<std::int32_t>(at)));
      return;
    }
    SNIPPETS_ASSERT(r.kind == ir::RegKind::gpr && std::size_t(r.index) < counters_.size())
        << "loop counter without a register";
    f(counters_[static_cast<std::size_t>(r.index)]);
  }
  const GpX& data(const E& e) const { return data_.at(e.data_index); }
  static std::int64_t bytes_of(const E& e, std::int64_t elements) {
    return elements * static_cast<std::int64_t>(size_of(passes::memory_type(e)));
  }

  // ---- memory ----

  void emit_load(const E& e, const ir::Load& op) {
    const Vec dst = vec(e.out_desc(0).reg);
    if (op.stride != 1 && op.count != 1) return emit_strided_load(e, op);
    if (op.count == ir::runtime_count)
      return with_counter(tail_counter(), false, [&](const GpX& n) {
        mem_.load(dst, data(e), bytes_of(e, op.offset), op.type, n);
      });
    mem_.load(dst, data(e), bytes_of(e, op.offset), op.type, op.count);
  }

  /// `count` elements `stride` apart, one LD1 lane each (of the element's size), the rest
  /// zero, then widened to f32 as a contiguous load is.
  void emit_strided_load(const E& e, const ir::Load& op) {
    if (op.count == ir::runtime_count) unsupported("strided reads of a run-time count");
    const Vec dst = vec(e.out_desc(0).reg);
    a_.movi(dst.s4(), 0);
    for (std::int64_t i = 0; i < op.count; ++i) {
      const auto lane = static_cast<std::uint32_t>(i);
      const asmjit::a64::Mem at =
          asmjit::a64::ptr(mem_.address(data(e), bytes_of(e, op.offset + i * op.stride)));
      switch (size_of(op.type)) {
      case 1: a_.ld1(dst.b(lane), at); break;
      case 2: a_.ld1(dst.h(lane), at); break;
      default: a_.ld1(dst.s(lane), at); break;
      }
    }
    mem_.widen(dst, op.type);
  }

  void emit_store(const E& e, const ir::Store& op) {
    SNIPPETS_ASSERT(!scratch_.empty()) << "a Store needs a scratch register";
    SNIPPETS_ASSERT(op.type != ElementType::bf16 || scratch_.size() >= 3)
        << "a bf16 Store needs three scratch registers";
    EmitContext c = context();
    const Vec v = vec(e.in_desc(0).reg);
    const std::int64_t bytes = bytes_of(e, op.offset);
    if (op.count != ir::runtime_count)
      return store_converted(c, mem_, v, data(e), bytes, op.type, op.count);
    with_counter(tail_counter(), false,
                 [&](const GpX& n) { store_converted(c, mem_, v, data(e), bytes, op.type, n); });
  }

  /// The counter whose remainder is the run-time count of the tail being emitted.
  const ir::Reg& tail_counter() const {
    SNIPPETS_ASSERT(tail_counter_.kind != ir::RegKind::none)
        << "a run-time count outside a dynamic tail";
    return tail_counter_;
  }

  void emit_broadcast_load(const E& e, const ir::BroadcastLoad& op) {
    const Vec dst = vec(e.out_desc(0).reg);
    if (op.type == ElementType::f32) {
      a_.ld1r(dst.s4(), asmjit::a64::ptr(mem_.address(data(e), bytes_of(e, op.offset))));
      return;
    }
    mem_.load(dst, data(e), bytes_of(e, op.offset), op.type, 1);
    a_.dup(dst.s4(), dst.s(0));
  }

  // ---- loops ----

  void shift_pointers(const ir::LoopInfo& info, bool finalization) {
    bool table = false; // x16 holds CallArgs::config
    for (const auto& p : info.ports) {
      if (p.runtime) {
        if (finalization) continue; // the configurator folds it into the parent's increment
        const GpX t = asmjit::a64::x(scratch_gpr), inc = asmjit::a64::x(scratch2_gpr);
        if (!table)
          a_.ldr(t, asmjit::a64::ptr(asmjit::a64::x(args_gpr),
                                     static_cast<std::int32_t>(offsetof(CallArgs, config))));
        const std::size_t n_args = lir_.num_inputs + lir_.num_outputs;
        const std::size_t at = 8 * (info.dim * n_args + p.data_index);
        if (at < 32760) {
          a_.ldr(inc, asmjit::a64::ptr(t, static_cast<std::int32_t>(at)));
          table = true;
        } else { // x16 moves past the table's start
          a_.ldr(inc, asmjit::a64::ptr(mem_.address(t, static_cast<std::int64_t>(at))));
          table = false;
        }
        a_.add(data_.at(p.data_index), data_.at(p.data_index), inc);
        continue;
      }
      const std::int64_t bytes =
          (finalization ? p.finalization_offset : p.ptr_increment) * p.element_size;
      if (bytes == 0) continue;
      const GpX& r = data_.at(p.data_index);
      if (bytes > 0 && bytes < 4096) {
        a_.add(r, r, bytes);
      } else if (bytes < 0 && bytes > -4096) {
        a_.sub(r, r, -bytes);
      } else {
        const GpX t = asmjit::a64::x(scratch_gpr);
        mem_.move_imm(t, static_cast<std::uint64_t>(bytes));
        a_.add(r, r, t);
        table = false;
      }
    }
  }

  void emit_loop_begin(const E& e, std::size_t id) {
    const ir::LoopInfo& info = lir_.loops().at(id);
    Labels& l = labels(id);
    if (info.evaluate_once) {
      if (info.tail_of >= 0) { // the remainder of the main loop runs iff work is left
        const ir::Reg& main = counter_.at(static_cast<std::size_t>(info.tail_of));
        with_counter(main, false, [&](const GpX& cnt) { a_.cbz(cnt, l.end); });
        tail_counter_ = main; // its value is the tail's run-time count
      }
      return;
    }
    if (info.tail_of >= 0) { // a dynamic one-vector loop continues the main loop's counter
      const ir::Reg main = counter_.at(static_cast<std::size_t>(info.tail_of));
      counter_[id] = main;
      with_counter(main, false, [&](const GpX& cnt) {
        compare(cnt, info.increment);
        a_.b_lt(l.end);
      });
      a_.bind(l.begin);
      return;
    }
    const ir::Reg reg = e.out_desc(0).reg;
    counter_[id] = reg;
    with_counter(reg, true, [&](const GpX& cnt) {
      if (info.runtime_work_amount) {
        a_.ldr(cnt, asmjit::a64::ptr(
                        asmjit::a64::x(args_gpr),
                        static_cast<std::int32_t>(offsetof(CallArgs, work) + 8 * info.dim)));
      } else {
        mem_.move_imm(cnt, static_cast<std::uint64_t>(info.work_amount));
      }
    });
    if (info.runtime_work_amount) // no full step: skip the loop
      with_counter(reg, false, [&](const GpX& cnt) {
        compare(cnt, info.increment);
        a_.b_lt(l.end);
      });
    a_.bind(l.begin);
  }

  void compare(const GpX& cnt, std::int64_t value) {
    if (value < 4096) {
      a_.cmp(cnt, value);
    } else {
      const GpX t = asmjit::a64::x(scratch_gpr);
      mem_.move_imm(t, static_cast<std::uint64_t>(value));
      a_.cmp(cnt, t);
    }
  }

  void emit_loop_end(std::size_t id) {
    const ir::LoopInfo& info = lir_.loops().at(id);
    Labels& l = labels(id);
    if (!info.evaluate_once) {
      shift_pointers(info, false);
      with_counter(counter_.at(id), true, [&](const GpX& cnt) {
        if (info.increment < 4096) {
          a_.sub(cnt, cnt, info.increment);
        } else {
          const GpX t = asmjit::a64::x(scratch_gpr);
          mem_.move_imm(t, static_cast<std::uint64_t>(info.increment));
          a_.sub(cnt, cnt, t);
        }
        compare(cnt, info.increment);
      });
      a_.b_ge(l.begin);
    }
    shift_pointers(info, true);
    a_.bind(l.end);
    rewind_pointers(info);
  }

  /// After the run-time tail of a dynamic innermost loop: pointers move back by what the loop
  /// walked (LoopPort::rewind bytes per element), x16 = the work amount - the main counter.
  void rewind_pointers(const ir::LoopInfo& info) {
    const GpX walked = asmjit::a64::x(scratch_gpr);
    bool known = false;
    for (const auto& p : info.ports) {
      if (p.rewind == 0) continue;
      if (!known) {
        a_.ldr(walked, asmjit::a64::ptr(
                           asmjit::a64::x(args_gpr),
                           static_cast<std::int32_t>(offsetof(CallArgs, work) + 8 * info.dim)));
        with_counter(counter_.at(static_cast<std::size_t>(info.tail_of)), false,
                     [&](const GpX& cnt) { a_.sub(walked, walked, cnt); });
        known = true;
      }
      SNIPPETS_ASSERT(p.rewind == 1 || p.rewind == 2 || p.rewind == 4 || p.rewind == 8)
          << "rewind of " << p.rewind << " bytes per element";
      const GpX& r = data_.at(p.data_index);
      a_.sub(r, r, walked,
             asmjit::arm::lsl(static_cast<std::uint32_t>(
                 std::countr_zero(static_cast<std::uint64_t>(p.rewind)))));
    }
  }

  // ---- expressions ----

  void emit_op(E& e) {
    std::visit(
        [&](const auto& tag) {
          using Tag = std::decay_t<decltype(tag)>;
          if constexpr (std::is_same_v<Tag, ir::Parameter> || std::is_same_v<Tag, ir::Result> ||
                        std::is_same_v<Tag, ir::Buffer> || std::is_same_v<Tag, ir::Constant>) {
            // arguments are loaded by the prologue; Buffers are memory their accesses use; a
            // Constant left in the LIR is a MatMul's B, packed into its Brgemm
          } else if constexpr (std::is_same_v<Tag, ir::Scalar>) {
            consts_.load_value(vec(e.out_desc(0).reg), to_f32(tag.value));
          } else if constexpr (std::is_same_v<Tag, ir::Load>) {
            emit_load(e, tag);
          } else if constexpr (std::is_same_v<Tag, ir::Store>) {
            emit_store(e, tag);
          } else if constexpr (std::is_same_v<Tag, ir::BroadcastLoad>) {
            emit_broadcast_load(e, tag);
          } else if constexpr (std::is_same_v<Tag, ir::BroadcastMove>) {
            a_.dup(vec(e.out_desc(0).reg).s4(), vec(e.in_desc(0).reg).s(0));
          } else if constexpr (std::is_same_v<Tag, ir::Spill>) {
            a_.str(vec(e.in_desc(0).reg).q(), sp_slot_q(tag.slot));
          } else if constexpr (std::is_same_v<Tag, ir::Reload>) {
            a_.ldr(vec(e.out_desc(0).reg).q(), sp_slot_q(tag.slot));
          } else if constexpr (std::is_same_v<Tag, ir::LoopBegin>) {
            emit_loop_begin(e, tag.loop_id);
          } else if constexpr (std::is_same_v<Tag, ir::LoopEnd>) {
            emit_loop_end(tag.loop_id);
          } else if constexpr (std::is_same_v<Tag, ir::ReduceAccumulate>) {
            EmitContext c = context();
            const Vec acc = vec(e.in_desc(0).reg), x = vec(e.in_desc(1).reg);
            if (tag.count == ir::runtime_count)
              with_counter(tail_counter(), false,
                           [&](const GpX& n) { accumulate(c, tag, acc, x, n); });
            else
              accumulate(c, tag, acc, x);
          } else if constexpr (std::is_same_v<Tag, ir::FusedMulAdd>) {
            if (!emit_fma_into_dead_addend(e)) emit_with_emitter(e, tag);
          } else if constexpr (std::is_same_v<Tag, ir::Brgemm>) {
            std::vector<E*> epilogue;
            auto it = lir_.find(e);
            for (std::size_t i = 0; i < tag.epilogue; ++i) epilogue.push_back((++it)->get());
            const FixedRegisterContext c = fixed_context();
            BrgemmEmitter<T>(c).emit(e, tag, epilogue);
            skip_ = tag.epilogue;
          } else if constexpr (std::is_same_v<Tag, ir::BrgemmCopyB>) {
            const FixedRegisterContext c = fixed_context();
            BrgemmEmitter<T>(c).emit_copy_b(e, tag);
          } else if constexpr (std::is_same_v<Tag, ir::SoftmaxRows>) {
            const FixedRegisterContext c = fixed_context();
            SoftmaxRowsEmitter(c).emit(data(e), tag);
          } else if constexpr (HasEmitter<Tag>) {
            emit_with_emitter(e, tag);
          } else {
            static_assert(!T::template fusable<Tag> || ir::reduction<Tag> ||
                              std::is_same_v<Tag, ir::Softmax> || std::is_same_v<Tag, ir::MatMul> ||
                              std::is_same_v<Tag, ir::Slice> ||
                              std::is_same_v<Tag, ir::FakeQuantize> ||
                              std::is_same_v<Tag, ir::Quantize>,
                          "snippets::aarch64: the traits call this op fusable but it has no "
                          "emitter: specialise snippets::aarch64::Emitter<Op> or make "
                          "fusable<Op> false");
            unsupported(std::string("the op ") + std::string(Tag::name) + " (" + e.name + ")");
          }
        },
        e.op);
  }

  template <class Tag> void emit_with_emitter(E& e, const Tag& tag) {
    Vec in[4];
    SNIPPETS_ASSERT(e.num_inputs() <= 4) << e.name;
    SNIPPETS_ASSERT(scratch_.size() >= std::size_t{Emitter<Tag>::scratch})
        << Tag::name << " needs more scratch registers than the kernel kept";
    for (std::size_t i = 0; i < e.num_inputs(); ++i) in[i] = vec(e.in_desc(i).reg);
    EmitContext c = context();
    Emitter<Tag>::emit(c, tag, vec(e.out_desc(0).reg), std::span<const Vec>(in, e.num_inputs()));
  }

  /// Whether input i's value is read by no expression after `e` and is computed in the same
  /// loops (a value from outside the loop lives on into the next iteration).
  static bool dies_here(const E& e, std::size_t i) {
    const ir::PortConnector<T>& c = e.input_connector(i);
    if (c.source_expr().loop_ids != e.loop_ids) return false;
    for (const auto& use : c.consumers())
      if (use.owner().order > e.order) return false;
    return true;
  }

  /// a * b + c where the allocator gave the result a's or b's register: FMLA accumulates into
  /// its destination, so the emitter copies c to scratch and the result back (3 instructions);
  /// when c dies here, FMLA into c's register and one copy do it. Returns false otherwise.
  bool emit_fma_into_dead_addend(const E& e) {
    const Vec dst = vec(e.out_desc(0).reg), a = vec(e.in_desc(0).reg), b = vec(e.in_desc(1).reg),
              acc = vec(e.in_desc(2).reg);
    if (dst.id() == acc.id() || (dst.id() != a.id() && dst.id() != b.id()) || acc.id() == a.id() ||
        acc.id() == b.id() || !dies_here(e, 2))
      return false;
    a_.fmla(acc.s4(), a.s4(), b.s4());
    a_.mov(dst.b16(), acc.b16());
    return true;
  }

  asmjit::a64::Mem sp_slot_q(std::size_t slot) {
    const std::size_t bytes = slot * 16;
    if (bytes < 65520) return asmjit::a64::ptr(asmjit::a64::sp, static_cast<std::int32_t>(bytes));
    return sp_slot(bytes); // an 8-byte offset check is stricter; x17 then holds the address
  }

  EmitContext context() { return {a_, consts_, scratch_}; }
  FixedRegisterContext fixed_context() {
    SNIPPETS_ASSERT(emitter_slots_at_ + 8 * FixedRegisterContext::slot_count < 32760)
        << "the emitters' stack slots are out of an LDR's reach";
    return {a_,    consts_,       mem_,           scratch_,
            data_, emitter_gprs_, lir_.arg_types, static_cast<std::int32_t>(emitter_slots_at_)};
  }

  struct Labels {
    asmjit::Label begin, end;
  };
  Labels& labels(std::size_t id) {
    auto it = labels_.find(id);
    if (it == labels_.end()) it = labels_.emplace(id, Labels{a_.newLabel(), a_.newLabel()}).first;
    return it->second;
  }

  asmjit::a64::Assembler& a_;
  ir::LinearIR<T>& lir_;
  ConstantPool consts_;
  MemoryAccess mem_;
  std::vector<Vec> scratch_;
  std::vector<GpX> data_, counters_, saved_gprs_;
  std::vector<GpX> emitter_gprs_; // free for the emitters of fixed registers (fixed_context)
  static constexpr int fixed_gp_temps =
      std::max({BrgemmEmitter<T>::max_gp_temps, BrgemmEmitter<T>::copy_gp_temps,
                SoftmaxRowsEmitter::gp_temps});
  bool values_high_ = false; // values live in v8-v15: the prologue saves d8-d15
  std::size_t saved_at_ = 0, frame_ = 0, emitter_slots_at_ = 0;
  std::size_t skip_ = 0; // expressions left of the Brgemm epilogue just emitted
  std::map<std::size_t, Labels> labels_;
  std::map<std::size_t, ir::Reg>
      counter_;          // each loop's counter (a remainder reads its main loop's)
  ir::Reg tail_counter_; // the counter of the innermost dynamic tail begun so far
  std::uint32_t text_bytes_ = 0;
};

} // namespace snippets::aarch64
