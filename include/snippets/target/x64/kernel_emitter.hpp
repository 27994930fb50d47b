// SPDX-License-Identifier: Apache-2.0
// snippets/target/x64/kernel_emitter.hpp: turns a prepared Linear IR into machine code.
//
// The kernel emitter owns the ABI (SysV x86-64): the kernel is `void kernel(const CallArgs*)`
// with the arguments pointer in rdi. It maps abstract registers to physical ones (vector
// value i -> vmm i; the top lir.reserved_vector_registers vmms are emitter scratch; GPR counter i
// -> a pool register after the data pointers), saves the callee-saved GPRs it uses, loads the data
// pointers, emits every expression in order, and appends the constant table. Vector registers
// between the values' and the scratch ones hold the first constants the code asks for
// (ConstantTable::pin_registers); their loads are emitted after the return, once known, and
// the prologue jumps there and back.
// Tails: AVX-512 loads/stores use opmask k1 (zeroing loads, fault-suppressed), AVX2 uses
// VMASKMOVPS with a mask from the constant table; neither touches memory past a tensor.
// Arguments of other element types than f32 are converted as they are loaded and stored
// (memory_access.hpp); registers always hold f32.
// A Load with a stride (a transposed input read along a strided dimension) is a VGATHERDPS
// with lane offsets from the constant table, masked the same way for tails.
// Dynamic kernels (LinearIR::dynamic) read each loop's work amount from CallArgs::work, add
// outer-loop pointer increments from the run-time configuration (CallArgs::config), and build
// the masked tail's mask from the remaining count at run time (kept in a stack slot); after
// that tail, pointers a later loop of the row reads again move back to the row's start.
// Buffers (LinearIR::buffer_pointers) are data pointers after the kernel arguments: the runtime
// passes each thread's scratch memory there.
// A Brgemm emits its epilogue and Stores (the expressions after it) itself
// (emitters/brgemm.hpp).
// A streaming variant writes full vectors with non-temporal stores (for outputs far larger
// than the caches: no read-for-ownership, about 1.4x the store bandwidth here).
// Instrumentation (debug builds of a kernel, off unless CompileOptions::debug asks): a code
// map (which bytes each expression produced; changes no instruction), cycle counters around
// counter regions (RDTSC), and a store of the expression's LIR order into the call frame before
// each memory access (the segfault detector). Without an Instrumentation the emitted code is
// exactly the uninstrumented kernel.
#pragma once

#include <limits>
#include <map>
#include <memory>
#include <sstream>
#include <vector>

#include "snippets/ir/linear_ir.hpp"
#include "snippets/ir/lir_printer.hpp"
#include "snippets/passes/lir_queries.hpp"
#include "snippets/passes/pass.hpp"
#include "snippets/runtime/kernel_debug_info.hpp"
#include "snippets/target/codegen.hpp"
#include "snippets/target/x64/abi.hpp"
#include "snippets/target/x64/code_buffer.hpp"
#include "snippets/target/x64/constant_table.hpp"
#include "snippets/target/x64/emitters/brgemm.hpp"
#include "snippets/target/x64/emitters/brgemm_copy_b.hpp"
#include "snippets/target/x64/emitters/emitter.hpp"
#include "snippets/target/x64/emitters/reduce.hpp"
#include "snippets/target/x64/emitters/softmax_rows.hpp"
#include "snippets/target/x64/isa.hpp"
#include "snippets/target/x64/memory_access.hpp"

namespace snippets::x64 {

template <class T, class Vmm> class KernelEmitter {
  using E = ir::Expression<T>;

public:
  /// `streaming`: full-vector stores to outputs are non-temporal (VMOVNTPS); the caller
  /// guarantees vector-aligned output addresses, and the kernel ends with SFENCE. `instr`:
  /// debug instrumentation (nullptr: none).
  KernelEmitter(CodeBuffer& h, ir::LinearIR<T>& lir, bool streaming = false,
                const Instrumentation<T>* instr = nullptr)
      : h_(h), lir_(lir), consts_(sizeof(float) * lanes_), streaming_(streaming), instr_(instr) {
    static const Xbyak::Reg64 pool[usable_gprs] = {
        Xbyak::util::rbx, Xbyak::util::rbp, Xbyak::util::r12, Xbyak::util::r13, Xbyak::util::r14,
        Xbyak::util::r15, Xbyak::util::rsi, Xbyak::util::rdx, Xbyak::util::rcx, Xbyak::util::r8,
        Xbyak::util::r9,  Xbyak::util::r10, Xbyak::util::r11};
    const std::size_t n_data = lir.num_inputs + lir.num_outputs + lir.buffer_pointers;
    for (std::size_t i = 0; i < usable_gprs; ++i) {
      (i < n_data ? data_ : counters_).push_back(pool[i]);
      pool_.push_back(pool[i]);
    }
    for (int k = 0; k < lir.reserved_vector_registers; ++k)
      scratch_.push_back(Vmm(total_vmm - 1 - k));
    for (auto& e : lir)
      if (std::holds_alternative<ir::LoopBegin>(e->op) && e->out_desc(0).reg.index >= 0)
        counters_used_ = std::max(counters_used_, std::size_t(e->out_desc(0).reg.index) + 1);
    if (const int first = first_unused_vmm(); first >= 0)
      consts_.pin_registers(first, total_vmm - lir.reserved_vector_registers - first);
  }

  void emit() {
    using namespace Xbyak::util;
    if (instr_) begin_instrumentation();
    const std::vector<Xbyak::Reg64> saved = callee_saved_used();
    for (const auto& r : saved) h_.push(r);
    if (stack_bytes()) h_.sub(Xbyak::util::rsp, static_cast<int>(stack_bytes()));
    for (std::size_t i = 0; i < data_.size(); ++i)
      h_.mov(data_[i], h_.ptr[rdi + static_cast<int>(i * sizeof(void*))]);
    // the pinned constants are known once the body is emitted: their loads follow the return
    Xbyak::Label load_constants, body;
    if (consts_.pinning()) {
      h_.jmp(load_constants, Xbyak::CodeGenerator::T_NEAR);
      h_.L(body);
    }
    record("prologue", "kernel entry: save registers, load data pointers");
    for (auto& e : lir_) {
      if (skip_ > 0) { // emitted by the Brgemm before it
        --skip_;
        continue;
      }
      if (instr_)
        emit_instrumented(*e);
      else
        emit_expr(*e);
    }
    SNIPPETS_ASSERT(!instr_ || counter_brackets_ == 2 * instr_->counter_regions.size())
        << "a counter region names an expression that is no longer in the LIR; run "
           "InsertPerfCounters after every pass that moves or erases expressions";
    if (streaming_) h_.sfence(); // order the streaming stores before the caller reads them
    if (stack_bytes()) h_.add(Xbyak::util::rsp, static_cast<int>(stack_bytes()));
    h_.vzeroupper();
    for (auto it = saved.rbegin(); it != saved.rend(); ++it) h_.pop(*it);
    h_.ret();
    record("epilogue", "kernel exit: restore registers, return");
    if (consts_.pinning()) {
      h_.L(load_constants);
      consts_.load_pinned(h_);
      h_.jmp(body, Xbyak::CodeGenerator::T_NEAR);
      record("constants", "kernel entry: load the constants kept in registers");
    }
    text_bytes_ = static_cast<std::uint32_t>(h_.getSize());
    consts_.emit(h_);
    if (map_) map_->text_bytes = text_bytes_;
  }

  /// Bytes of instructions (the constant table follows them).
  std::uint32_t text_bytes() const { return text_bytes_; }
  /// Bytes of code per vector in the innermost loops that store a full vector of an output
  /// (the largest such loop; 0 when none): the expressions' code, without the loop's own
  /// counter and pointer code or any instrumentation. compile() weighs it against streaming
  /// stores.
  double store_loop_bytes_per_vector() const { return store_loop_bytes_; }
  /// The code map, when the Instrumentation asked for one (else nullptr).
  std::shared_ptr<debug::CodeMap> code_map() const { return map_; }

private:
  static constexpr bool avx512 = std::is_same_v<Vmm, Xbyak::Zmm>;
  static constexpr int lanes_ = avx512 ? 16 : 8;
  static constexpr int total_vmm = avx512 ? 32 : 16;

  /// The lowest vector register above every value's, when no emitter of the kernel works in
  /// fixed registers (Brgemm, its CopyB and SoftmaxRows do); -1 otherwise. Registers from it
  /// up to the scratch ones hold constants.
  int first_unused_vmm() const {
    int first = 0;
    for (const auto& e : lir_) {
      if (std::holds_alternative<ir::Brgemm>(e->op) ||
          std::holds_alternative<ir::BrgemmCopyB>(e->op) ||
          std::holds_alternative<ir::SoftmaxRows>(e->op))
        return -1;
      for (std::size_t i = 0; i < e->num_outputs(); ++i)
        if (const ir::Reg& r = e->out_desc(i).reg; r.kind == ir::RegKind::vec)
          first = std::max(first, r.index + 1);
    }
    return first;
  }

  std::vector<Xbyak::Reg64> callee_saved_used() const {
    std::vector<Xbyak::Reg64> out;
    auto used = [&](const Xbyak::Reg64& r) {
      for (const auto& d : data_)
        if (d.getIdx() == r.getIdx()) return true;
      for (std::size_t i = 0; i < counters_.size() && i < counters_used_; ++i)
        if (counters_[i].getIdx() == r.getIdx()) return true;
      return false;
    };
    for (const auto& r : {Xbyak::util::rbx, Xbyak::util::rbp, Xbyak::util::r12, Xbyak::util::r13,
                          Xbyak::util::r14, Xbyak::util::r15})
      if (used(r)) out.push_back(r);
    return out;
  }

  // stack frame: vector spill slots, 8-byte loop counter slots, the dynamic tail's mask
  std::size_t spill_bytes() const { return lir_.spill_slots * sizeof(float) * lanes_; }
  std::size_t mask_slot() const { return spill_bytes() + 8 * lir_.counter_slots; }
  std::size_t stack_bytes() const {
    return mask_slot() + (lir_.dynamic ? sizeof(float) * lanes_ : 0);
  }
  Xbyak::Address spill_slot(std::size_t slot) const {
    return h_.ptr[Xbyak::util::rsp + static_cast<int>(slot * sizeof(float) * lanes_)];
  }

  Vmm vmm(const ir::Reg& r) const {
    SNIPPETS_ASSERT(r.kind == ir::RegKind::vec && r.index >= 0)
        << "value without a vector register";
    return Vmm(r.index);
  }
  /// Calls f with a loop counter: a register, or a stack slot when the registers ran out.
  template <class F> void with_counter(const ir::Reg& r, F f) const {
    if (r.kind == ir::RegKind::stack) return f(h_.qword[counter_slot(r)]);
    SNIPPETS_ASSERT(r.kind == ir::RegKind::gpr && std::size_t(r.index) < counters_.size())
        << "loop counter without a register";
    f(counters_[static_cast<std::size_t>(r.index)]);
  }
  Xbyak::RegExp counter_slot(const ir::Reg& r) const {
    return Xbyak::util::rsp + static_cast<int>(spill_bytes() + 8 * std::size_t(r.index));
  }
  /// The memory `e` accesses: its argument's pointer plus the access's element offset.
  Xbyak::Address data_ptr(const E& e, std::int64_t offset) const {
    return h_.ptr[data_at(e, offset)];
  }
  Xbyak::RegExp data_at(const E& e, std::int64_t offset) const {
    const auto bytes = static_cast<std::int64_t>(size_of(passes::memory_type(e)));
    return data_.at(e.data_index) + static_cast<int>(offset * bytes);
  }
  /// Loads and stores of other element types than f32.
  MemoryAccess<Vmm> converting() {
    return MemoryAccess<Vmm>(h_, consts_, scratch_, lir_.native_bf16,
                             Xbyak::util::rsp + static_cast<int>(mask_slot()));
  }

  /// k1 (AVX-512) or the AVX2 mask register enables the first `count` lanes. k1 is set only
  /// if it does not hold that mask already (k1_lanes_).
  Vmm set_tail_mask(std::int64_t count) {
    if constexpr (avx512) {
      if (k1_lanes_ == count) return Vmm(0);
      k1_lanes_ = count;
    }
    return x64::set_tail_mask(h_, consts_, avx512 ? Vmm(0) : scratch_.at(0), count);
  }

  /// A dynamic tail's mask (lanes below the counter's value), computed at the tail's start and
  /// kept in the frame: emitters may use the scratch register in between, and an expression
  /// that does not keep k1 may change it (on AVX-512 the tail's accesses use k1 as it is until
  /// then: k1_lanes_ == runtime_k1).
  void store_runtime_mask(const ir::Reg& counter) {
    const Vmm v = scratch_.at(0);
    const Xbyak::Xmm x(v.getIdx());
    if (counter.kind == ir::RegKind::stack)
      h_.vmovd(x, h_.dword[counter_slot(counter)]);
    else
      h_.vmovd(x, counters_.at(static_cast<std::size_t>(counter.index)).cvt32());
    h_.vpbroadcastd(v, x);
    const Xbyak::Address slot = h_.ptr[Xbyak::util::rsp + static_cast<int>(mask_slot())];
    k1_lanes_ = -1;
    if constexpr (avx512) {
      h_.vpcmpgtd(Xbyak::Opmask(1), v, consts_.iota());
      h_.kmovw(slot, Xbyak::Opmask(1));
      runtime_k1_set_ = true; // k1 holds it after the LoopBegin (emit_expr)
    } else {
      h_.vpcmpgtd(v, v, consts_.iota());
      h_.vmovups(slot, v);
    }
  }
  /// k1 (AVX-512) or the AVX2 mask register from the dynamic tail's stored mask.
  Vmm load_runtime_mask() {
    const Xbyak::Address slot = h_.ptr[Xbyak::util::rsp + static_cast<int>(mask_slot())];
    if constexpr (avx512) {
      if (k1_lanes_ != runtime_k1) h_.kmovw(Xbyak::Opmask(1), slot);
      k1_lanes_ = runtime_k1;
      return Vmm(0);
    } else {
      h_.vmovups(scratch_.at(0), slot);
      return scratch_.at(0);
    }
  }
  Vmm tail_mask(std::int64_t count) {
    return count == ir::runtime_count ? load_runtime_mask() : set_tail_mask(count);
  }

  void emit_load(const E& e, std::int64_t count, std::int64_t offset, ElementType type,
                 std::int64_t stride) {
    const Vmm dst = vmm(e.out_desc(0).reg);
    if (stride != 1 && count != 1) return emit_gather(e, count, offset, type, stride);
    if (type != ElementType::f32)
      return converting().load(dst, data_at(e, offset), type, count,
                               [&] { return tail_mask(count); });
    if (count == lanes_)
      h_.vmovups(dst, data_ptr(e, offset));
    else if (count == 1)
      h_.vmovss(Xbyak::Xmm(dst.getIdx()), data_ptr(e, offset));
    else
      masked_load(h_, dst, data_ptr(e, offset), tail_mask(count));
  }

  /// Load::prefetch: PREFETCHT0 of the same place that many bytes on, once per 64 bytes of the
  /// row: by the loads whose offset from the first (a part's start, for a folded Slice) is a
  /// multiple of 64 bytes (every f32 load of 16 lanes, every other one of 8 lanes or of bf16).
  /// ir::runtime_prefetch: the row stride from the call's configuration, through rax.
  void emit_prefetch(const E& e, const ir::Load& op) {
    using Xbyak::util::rax;
    const auto bytes = static_cast<std::int64_t>(size_of(op.type));
    if (op.prefetch == 0 || ((op.offset - e.in_desc(0).offset) * bytes) % 64 != 0) return;
    if (op.prefetch != ir::runtime_prefetch)
      return h_.prefetcht0(h_.ptr[data_at(e, op.offset) + static_cast<int>(op.prefetch)]);
    const std::size_t n_args = lir_.num_inputs + lir_.num_outputs;
    const std::size_t slot = (lir_.domain.size() - 1) * n_args + e.data_index;
    h_.mov(rax, h_.ptr[Xbyak::util::rdi + static_cast<int>(offsetof(CallArgs, config))]);
    h_.mov(rax, h_.qword[rax + static_cast<int>(8 * slot)]);
    h_.prefetcht0(h_.ptr[data_at(e, op.offset) + rax]);
  }

  /// `count` elements of `type` `stride` apart, as f32; lanes past `count` are zero. Dwords (f32,
  /// i32) by VGATHERDPS, whose lane offsets count elements (scratch: the offsets, and on AVX2
  /// the mask, which VGATHERDPS clears); narrower elements one by one at byte displacements
  /// (MemoryAccess::gather_narrow).
  void emit_gather(const E& e, std::int64_t count, std::int64_t offset, ElementType type,
                   std::int64_t stride) {
    SNIPPETS_ASSERT(count != ir::runtime_count) << "gather of a run-time count";
    const bool dwords = size_of(type) == 4;
    const auto unit = static_cast<std::int64_t>(dwords ? 1 : size_of(type));
    if (stride * lanes_ * unit > std::numeric_limits<std::int32_t>::max())
      raise("snippets.compile.offset_too_large",
            e.name + " is read with a stride of " + std::to_string(stride) +
                " elements along its innermost axis, too far apart for the 32-bit offsets of "
                "its lanes; transpose it outside the subgraph");
    const Vmm dst = vmm(e.out_desc(0).reg);
    if (!dwords) return converting().gather_narrow(dst, data_at(e, offset), type, stride, count);
    const Vmm index = scratch_.at(avx512 ? 0 : 1);
    gather(h_, consts_, dst, data_.at(e.data_index) + static_cast<int>(offset * sizeof(float)),
           stride, count, index, scratch_.at(0));
    k1_lanes_ = -1; // the gather's mask (VGATHERDPS clears it)
    if (type == ElementType::i32) h_.vcvtdq2ps(dst, dst);
  }

  /// Whether the Store `e` writes a kernel output (not a Buffer).
  bool writes_output(const E& e) const { return e.data_index < lir_.num_inputs + lir_.num_outputs; }
  /// Whether the Store `e` is non-temporal.
  bool streamed(const E& e) const { return streaming_ && writes_output(e); }

  void emit_store(const E& e, std::int64_t count, std::int64_t offset, ElementType type) {
    const Vmm src = vmm(e.in_desc(0).reg);
    if (writes_output(e) && count == lanes_ && !open_loops_.empty())
      open_loops_.back().stores_output = true;
    if (type != ElementType::f32)
      return converting().store(data_at(e, offset), src, type, count,
                                [&] { return tail_mask(count); });
    if (count == lanes_ && streamed(e))
      h_.vmovntps(data_ptr(e, offset), src);
    else if (count == lanes_)
      h_.vmovups(data_ptr(e, offset), src);
    else if (count == 1)
      h_.vmovss(data_ptr(e, offset), Xbyak::Xmm(src.getIdx()));
    else
      masked_store(h_, data_ptr(e, offset), src, tail_mask(count));
  }

  /// ReduceAccumulate: acc (+, *, max or min)= x over the first `count` lanes.
  void emit_accumulate(const E& e, const ir::ReduceAccumulate& op) {
    const Vmm acc = vmm(e.in_desc(0).reg), x = vmm(e.in_desc(1).reg);
    EmitContext<Vmm> ctx{h_, consts_, scratch_};
    if (op.count == lanes_) return detail::fold(ctx, op.kind, acc, x, false);
    const Vmm mask = tail_mask(op.count);
    if constexpr (avx512) {
      detail::fold(ctx, op.kind, acc, x, true);
    } else { // lanes past the count become the neutral element
      const Vmm t = scratch_.at(1);
      if (op.kind == ir::ReduceKind::sum) {
        h_.vandps(t, x, mask);
      } else {
        h_.vmovups(t, consts_.value(Emitter<ir::ReduceInit>::neutral(op.kind)));
        h_.vblendvps(t, t, x, mask);
      }
      detail::fold(ctx, op.kind, acc, t, false, 0);
    }
  }

  BrgemmEmitter<T, Vmm> brgemm() {
    return BrgemmEmitter<T, Vmm>(h_, consts_, scratch_, data_, pool_, lir_.arg_types,
                                 lir_.native_bf16);
  }

  void shift_pointers(const ir::LoopInfo& info, bool finalization) {
    using Xbyak::util::rax;
    using Xbyak::util::rdi;
    bool table = false; // rax holds CallArgs::config
    for (const auto& p : info.ports) {
      if (p.runtime) {
        if (finalization) continue; // the configurator folds it into the parent's increment
        if (!table) h_.mov(rax, h_.ptr[rdi + static_cast<int>(offsetof(CallArgs, config))]);
        table = true;
        const std::size_t n_args = lir_.num_inputs + lir_.num_outputs;
        h_.add(data_.at(p.data_index),
               h_.qword[rax + static_cast<int>(8 * (info.dim * n_args + p.data_index))]);
        continue;
      }
      const std::int64_t bytes =
          (finalization ? p.finalization_offset : p.ptr_increment) * p.element_size;
      if (bytes == static_cast<std::int32_t>(bytes)) {
        if (bytes != 0) h_.add(data_.at(p.data_index), static_cast<int>(bytes));
        continue;
      }
      h_.mov(rax, bytes); // past 2 GiB: no 32-bit immediate
      h_.add(data_.at(p.data_index), rax);
      table = false;
    }
  }

  void emit_loop_begin(const E& e, std::size_t id) {
    const ir::LoopInfo& info = lir_.loops().at(id);
    Labels& l = labels_[id];
    if (!open_loops_.empty()) open_loops_.back().innermost = false;
    open_loops_.push_back({id});
    if (info.evaluate_once) {
      if (info.tail_of >= 0) { // the remainder of the run-time loop runs iff work is left
        const ir::Reg main = loop_begin_reg_.at(static_cast<std::size_t>(info.tail_of));
        with_counter(main, [&](const auto& cnt) {
          h_.cmp(cnt, 0);
          h_.je(l.end, Xbyak::CodeGenerator::T_NEAR);
        });
        if (lir_.dynamic) store_runtime_mask(main);
      }
      return;
    }
    if (info.tail_of >= 0) { // a dynamic one-vector loop continues the main loop's counter
      const ir::Reg main = loop_begin_reg_.at(static_cast<std::size_t>(info.tail_of));
      loop_begin_reg_[id] = main;
      with_counter(main, [&](const auto& cnt) {
        h_.cmp(cnt, static_cast<int>(info.increment));
        h_.jl(l.end, Xbyak::CodeGenerator::T_NEAR);
      });
      h_.L(l.begin);
      return;
    }
    const ir::Reg reg = e.out_desc(0).reg;
    loop_begin_reg_[id] = reg;
    with_counter(reg, [&](const auto& cnt) {
      if (info.runtime_work_amount) {
        h_.mov(
            Xbyak::util::rax,
            h_.ptr[Xbyak::util::rdi + static_cast<int>(offsetof(CallArgs, work) + 8 * info.dim)]);
        h_.mov(cnt, Xbyak::util::rax);
        h_.cmp(cnt, static_cast<int>(info.increment));
        h_.jl(l.end, Xbyak::CodeGenerator::T_NEAR);
      } else if (info.work_amount <= std::numeric_limits<std::int32_t>::max()) {
        h_.mov(cnt, static_cast<std::uint32_t>(info.work_amount));
      } else { // a dimension of 2^31 elements or more
        h_.mov(Xbyak::util::rax, info.work_amount);
        h_.mov(cnt, Xbyak::util::rax);
      }
    });
    h_.L(l.begin);
  }

  void emit_loop_end(std::size_t id) {
    const ir::LoopInfo& info = lir_.loops().at(id);
    Labels& l = labels_[id];
    SNIPPETS_ASSERT(!open_loops_.empty() && open_loops_.back().id == id) << "loop " << id;
    const OpenLoop& o = open_loops_.back();
    if (o.innermost && o.stores_output && !info.evaluate_once && info.increment >= lanes_)
      store_loop_bytes_ = std::max(store_loop_bytes_, static_cast<double>(o.bytes) * lanes_ /
                                                          static_cast<double>(info.increment));
    open_loops_.pop_back();
    if (!info.evaluate_once) {
      shift_pointers(info, false);
      with_counter(loop_begin_reg_.at(id), [&](const auto& cnt) {
        h_.sub(cnt, static_cast<int>(info.increment));
        h_.cmp(cnt, static_cast<int>(info.increment));
      });
      h_.jge(l.begin, Xbyak::CodeGenerator::T_NEAR);
    }
    shift_pointers(info, true);
    h_.L(l.end);
    rewind_pointers(info);
  }

  /// After the masked tail of a dynamic innermost loop: pointers move back by what the loop
  /// walked (LoopPort::rewind bytes per element), rax = the main counter - the work amount.
  void rewind_pointers(const ir::LoopInfo& info) {
    using Xbyak::util::rax;
    bool walked = false;
    for (const auto& p : info.ports) {
      if (p.rewind == 0) continue;
      if (!walked) {
        const ir::Reg main = loop_begin_reg_.at(static_cast<std::size_t>(info.tail_of));
        with_counter(main, [&](const auto& cnt) { h_.mov(rax, cnt); });
        h_.sub(
            rax,
            h_.ptr[Xbyak::util::rdi + static_cast<int>(offsetof(CallArgs, work) + 8 * info.dim)]);
        walked = true;
      }
      SNIPPETS_ASSERT(p.rewind == 1 || p.rewind == 2 || p.rewind == 4 || p.rewind == 8)
          << "rewind of " << p.rewind << " bytes per element";
      const Xbyak::Reg64 ptr = data_.at(p.data_index);
      h_.lea(ptr, h_.ptr[ptr + rax * static_cast<int>(p.rewind)]);
    }
  }

  void emit_expr(E& e) {
    // k1 stays known only through straight-line element code: loops have jump targets, and
    // Brgemm, its copy and SoftmaxRows set k1 themselves
    const bool keeps_k1 = std::visit(
        [](const auto& tag) {
          using Tag = std::decay_t<decltype(tag)>;
          return HasEmitter<Tag> || std::is_same_v<Tag, ir::Load> ||
                 std::is_same_v<Tag, ir::Store> || std::is_same_v<Tag, ir::BroadcastLoad> ||
                 std::is_same_v<Tag, ir::BroadcastMove> || std::is_same_v<Tag, ir::Scalar> ||
                 std::is_same_v<Tag, ir::ReduceAccumulate> || std::is_same_v<Tag, ir::Spill> ||
                 std::is_same_v<Tag, ir::Reload>;
        },
        e.op);
    if (!keeps_k1) k1_lanes_ = -1;
    const std::size_t before = h_.getSize();
    emit_op(e);
    if (!keeps_k1) k1_lanes_ = -1;
    if (runtime_k1_set_) k1_lanes_ = runtime_k1; // a dynamic tail's LoopBegin set k1
    runtime_k1_set_ = false;
    const bool loop_marker =
        std::holds_alternative<ir::LoopBegin>(e.op) || std::holds_alternative<ir::LoopEnd>(e.op);
    if (!open_loops_.empty() && !loop_marker) open_loops_.back().bytes += h_.getSize() - before;
  }

  /// The significand bits e's consumers keep (EmitContext::result_bits): 8 when each one
  /// stores the value as bf16 or converts it to bf16, 11 when each keeps it as f16 or bf16,
  /// else 24; at most what the accuracy tier asks (LinearIR::kept_bits).
  int kept_bits(const E& e) const {
    const auto users = e.output(0).consumers();
    if (users.empty()) return lir_.kept_bits;
    int bits = 0;
    for (const auto& use : users) {
      const auto& op = use.owner().op;
      const auto* store = std::get_if<ir::Store>(&op);
      const auto* convert = std::get_if<ir::Convert>(&op);
      const ElementType to = store ? store->type : convert ? convert->to : ElementType::f32;
      bits = std::max(bits, to == ElementType::bf16 ? 8 : to == ElementType::f16 ? 11 : 24);
    }
    return std::min(bits, lir_.kept_bits);
  }

  void emit_op(E& e) {
    std::visit(
        [&](const auto& tag) {
          using Tag = std::decay_t<decltype(tag)>;
          if constexpr (std::is_same_v<Tag, ir::Parameter> || std::is_same_v<Tag, ir::Result> ||
                        std::is_same_v<Tag, ir::Constant>) { // Constant: packed MatMul weights
          } else if constexpr (std::is_same_v<Tag, ir::Scalar>) {
            h_.vmovups(vmm(e.out_desc(0).reg), consts_.value(to_f32(tag.value)));
          } else if constexpr (std::is_same_v<Tag, ir::Load>) {
            emit_load(e, tag.count, tag.offset, tag.type, tag.stride);
            emit_prefetch(e, tag);
          } else if constexpr (std::is_same_v<Tag, ir::Store>) {
            emit_store(e, tag.count, tag.offset, tag.type);
          } else if constexpr (std::is_same_v<Tag, ir::BroadcastLoad>) {
            if (tag.type == ElementType::f32)
              h_.vbroadcastss(vmm(e.out_desc(0).reg), data_ptr(e, tag.offset));
            else
              converting().broadcast_load(vmm(e.out_desc(0).reg), data_at(e, tag.offset), tag.type);
          } else if constexpr (std::is_same_v<Tag, ir::BroadcastMove>) {
            h_.vbroadcastss(vmm(e.out_desc(0).reg), Xbyak::Xmm(vmm(e.in_desc(0).reg).getIdx()));
          } else if constexpr (std::is_same_v<Tag, ir::Spill>) {
            h_.vmovups(spill_slot(tag.slot), vmm(e.in_desc(0).reg));
          } else if constexpr (std::is_same_v<Tag, ir::Reload>) {
            h_.vmovups(vmm(e.out_desc(0).reg), spill_slot(tag.slot));
          } else if constexpr (std::is_same_v<Tag, ir::LoopBegin>) {
            emit_loop_begin(e, tag.loop_id);
          } else if constexpr (std::is_same_v<Tag, ir::LoopEnd>) {
            emit_loop_end(tag.loop_id);
          } else if constexpr (std::is_same_v<Tag, ir::ReduceAccumulate>) {
            emit_accumulate(e, tag);
          } else if constexpr (std::is_same_v<Tag, ir::Brgemm>) {
            std::vector<E*> epilogue;
            auto it = lir_.find(e);
            for (std::size_t i = 0; i < tag.epilogue; ++i) epilogue.push_back((++it)->get());
            brgemm().emit(e, tag, epilogue);
            skip_ = tag.epilogue;
          } else if constexpr (std::is_same_v<Tag, ir::BrgemmCopyB>) {
            BrgemmCopyBEmitter<T, Vmm>(h_, consts_, scratch_, data_, pool_, lir_.native_bf16)
                .emit(e, tag);
          } else if constexpr (std::is_same_v<Tag, ir::SoftmaxRows>) {
            SoftmaxRowsEmitter<Vmm>(h_, consts_, scratch_, pool_).emit(data_.at(e.data_index), tag);
          } else if constexpr (std::is_same_v<Tag, ir::Buffer>) {
            // memory only: its Loads and Stores do the work
          } else if constexpr (ir::reduction<Tag> || std::is_same_v<Tag, ir::Softmax> ||
                               std::is_same_v<Tag, ir::FakeQuantize> ||
                               std::is_same_v<Tag, ir::Quantize> ||
                               std::is_same_v<Tag, ir::MatMul>) {
            SNIPPETS_ASSERT(false) << Tag::name << " reached emission undecomposed (run "
                                   << "DecomposeCompositeReductions, DecomposeSoftmax, "
                                   << "DecomposeQuantization and DecomposeReductions, or "
                                   << "LowerBrgemm)";
          } else if constexpr (std::is_same_v<Tag, ir::Slice>) {
            SNIPPETS_ASSERT(false) << "a Slice reached emission: the LIR reads it as a part of "
                                   << "its input (passes/slice_reads.hpp)";
          } else if constexpr (T::template fusable<Tag> && !HasEmitter<Tag>) {
            static_assert(HasEmitter<Tag>,
                          "snippets::x64: the backend traits call this op fusable but it has no "
                          "emitter. Specialise snippets::x64::Emitter<Op> (scratch + emit), "
                          "decompose the op in a pass, or make fusable<Op> false");
          } else if constexpr (T::template fusable<Tag>) {
            Vmm in[4];
            SNIPPETS_ASSERT(e.num_inputs() <= 4) << e.name;
            for (std::size_t i = 0; i < e.num_inputs(); ++i) in[i] = vmm(e.in_desc(i).reg);
            EmitContext<Vmm> ctx{
                .h = h_, .consts = consts_, .scratch = scratch_, .result_bits = kept_bits(e)};
            Emitter<Tag>::emit(ctx, tag, vmm(e.out_desc(0).reg),
                               std::span<const Vmm>(in, e.num_inputs()));
          } else {
            SNIPPETS_ASSERT(false) << "op " << Tag::name << " reached emission without an emitter";
          }
        },
        e.op);
  }

  // ---- instrumentation (debug) ----

  void begin_instrumentation() {
    lir_.renumber(); // records and fault slots name expressions by their LIR order
    if (instr_->code_map) map_ = std::make_shared<debug::CodeMap>();
    const auto& regions = instr_->counter_regions;
    for (std::size_t r = 0; r < regions.size(); ++r) {
      SNIPPETS_ASSERT(regions[r].first && regions[r].last) << "counter region " << r;
      starts_[regions[r].first].push_back(r);
      stops_[regions[r].last].insert(stops_[regions[r].last].begin(), r); // inner ones first
    }
  }

  /// Appends a record for the code emitted since the previous record.
  void record(std::string text, std::string emitter,
              std::size_t order = debug::CodeRecord::not_an_expression) {
    if (!map_) return;
    const auto at = static_cast<std::uint32_t>(h_.getSize());
    const std::uint32_t from = map_->records.empty() ? 0 : map_->records.back().end;
    map_->records.push_back({order, std::move(text), std::move(emitter), from, at});
  }

  void emit_instrumented(E& e) {
    using Xbyak::util::rdi;
    if (const auto it = starts_.find(&e); it != starts_.end())
      for (std::size_t r : it->second) {
        read_tsc();
        h_.mov(h_.qword[rdi + DebugFrame::start(r)], Xbyak::util::rax);
        ++counter_brackets_;
        record(std::string("counter start: ") + instr_->counter_regions[r].name,
               "rdtsc (cycles mode)");
      }
    if (instr_->fault_slots && passes::is_memory_access(e))
      h_.mov(h_.qword[rdi + DebugFrame::expr_slot], static_cast<std::uint32_t>(e.order));
    emit_expr(e);
    if (map_) {
      std::ostringstream line;
      ir::detail::print_expression(line, e, {});
      record(line.str(), emitter_name(e), e.order);
    }
    if (const auto it = stops_.find(&e); it != stops_.end())
      for (std::size_t r : it->second) {
        read_tsc();
        h_.sub(Xbyak::util::rax, h_.qword[rdi + DebugFrame::start(r)]);
        h_.add(h_.qword[rdi + DebugFrame::ticks(r)], Xbyak::util::rax);
        h_.add(h_.qword[rdi + DebugFrame::entries(r)], 1);
        ++counter_brackets_;
        record(std::string("counter stop: ") + instr_->counter_regions[r].name,
               "rdtsc (cycles mode)");
      }
  }

  /// rax = the time-stamp counter. LFENCE keeps earlier instructions from drifting past the
  /// read; rdx (a data pointer or counter) is parked in the frame meanwhile.
  void read_tsc() {
    using namespace Xbyak::util;
    h_.mov(h_.qword[rdi + DebugFrame::scratch_slot], rdx);
    h_.lfence();
    h_.rdtsc();
    h_.shl(rdx, 32);
    h_.or_(rax, rdx);
    h_.mov(rdx, h_.qword[rdi + DebugFrame::scratch_slot]);
  }

  /// Which emitter produced `e`'s code, and the variant it chose (for dumps and fault reports).
  std::string emitter_name(const E& e) const {
    std::ostringstream os;
    auto access = [&](std::int64_t count, bool store) {
      if (count == lanes_)
        os << (store && streamed(e) ? "vmovntps (non-temporal)" : "vmovups") << ", full vector";
      else if (count == ir::runtime_count)
        os << (avx512 ? "vmovups masked by k1" : "vmaskmovps") << ", remaining lanes (run time)";
      else if (count == 1)
        os << "vmovss, 1 lane";
      else
        os << (avx512 ? "vmovups masked by k1, " : "vmaskmovps, ") << count << " lanes";
    };
    std::visit(
        [&](const auto& tag) {
          using Tag = std::decay_t<decltype(tag)>;
          if constexpr (std::is_same_v<Tag, ir::Parameter> || std::is_same_v<Tag, ir::Result>)
            os << "kernel argument (no code)";
          else if constexpr (std::is_same_v<Tag, ir::Scalar>)
            os << "scalar: vmovups from the constant table";
          else if constexpr (std::is_same_v<Tag, ir::Load> || std::is_same_v<Tag, ir::Store>) {
            constexpr bool store = std::is_same_v<Tag, ir::Store>;
            os << (store ? "store: " : "load: ");
            if (tag.type == ElementType::f32) {
              if constexpr (!store) {
                if (tag.stride != 1 && tag.count != 1) {
                  os << "vgatherdps, " << tag.count << " lanes, stride " << tag.stride;
                  return;
                }
              }
              access(tag.count, store);
            } else {
              if constexpr (!store)
                if (tag.stride != 1 && tag.count != 1) {
                  os << snippets::to_string(tag.type) << " -> f32, " << tag.count
                     << (size_of(tag.type) < 4 ? " element loads" : " lanes of vgatherdps")
                     << ", stride " << tag.stride;
                  return;
                }
              os << (store ? "f32 -> " : "") << snippets::to_string(tag.type)
                 << (store ? "" : " -> f32") << ", "
                 << (tag.count == ir::runtime_count ? std::string("remaining")
                                                    : std::to_string(tag.count))
                 << " lanes (memory_access.hpp)";
            }
          } else if constexpr (std::is_same_v<Tag, ir::BroadcastLoad>)
            os << "broadcast load: "
               << (tag.type == ElementType::f32
                       ? "vbroadcastss from memory"
                       : std::string(snippets::to_string(tag.type)) + " -> f32, vbroadcastss");
          else if constexpr (std::is_same_v<Tag, ir::BroadcastMove>)
            os << "broadcast move: vbroadcastss from lane 0";
          else if constexpr (std::is_same_v<Tag, ir::Spill> || std::is_same_v<Tag, ir::Reload>)
            os << Tag::name << ": vmovups, stack slot " << tag.slot;
          else if constexpr (std::is_same_v<Tag, ir::LoopBegin> || std::is_same_v<Tag, ir::LoopEnd>)
            os << Tag::name << " #" << tag.loop_id << ": counter and pointer arithmetic";
          else {
            os << "x64::Emitter<" << Tag::name << ">";
            if (e.num_outputs() == 1 && kept_bits(e) < 24)
              os << ", result needs " << kept_bits(e) << " bits";
          }
        },
        e.op);
    return os.str();
  }

  struct Labels {
    Xbyak::Label begin, end;
  };
  /// A loop being emitted: its expressions' code so far (store_loop_bytes_per_vector).
  struct OpenLoop {
    std::size_t id = 0;
    std::size_t bytes = 0;
    bool innermost = true, stores_output = false;
  };

  CodeBuffer& h_;
  ir::LinearIR<T>& lir_;
  ConstantTable consts_;
  bool streaming_;
  std::vector<Vmm> scratch_;
  std::vector<Xbyak::Reg64> data_, counters_, pool_;
  std::size_t skip_ = 0; // expressions left of the Brgemm epilogue just emitted
  std::size_t counters_used_ = 0;
  std::map<std::size_t, Labels> labels_;
  std::map<std::size_t, ir::Reg> loop_begin_reg_;
  const Instrumentation<T>* instr_ = nullptr;
  std::shared_ptr<debug::CodeMap> map_;
  std::map<const E*, std::vector<std::size_t>> starts_, stops_; // counter regions by expression
  std::size_t counter_brackets_ = 0;                            // counter starts and stops emitted
  std::uint32_t text_bytes_ = 0;
  std::vector<OpenLoop> open_loops_;
  std::int64_t k1_lanes_ = -1; // the lanes k1 enables here, -1: unknown (set_tail_mask)
  static constexpr std::int64_t runtime_k1 = -2; // k1_lanes_: the dynamic tail's mask
  bool runtime_k1_set_ = false;                  // store_runtime_mask just set k1
  double store_loop_bytes_ = 0;
};

} // namespace snippets::x64
