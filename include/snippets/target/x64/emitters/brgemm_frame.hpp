// SPDX-License-Identifier: Apache-2.0
// snippets/target/x64/emitters/brgemm_frame.hpp: what the Brgemm and BrgemmCopyB emitters
// (brgemm.hpp, brgemm_copy_b.hpp) share: five general-purpose temporaries taken from the
// kernel's pool and pushed with every pointer the emitter moves, a stack frame of two counters
// (the panel and the row tile) and A's pointer, the walk over B's panels, counted loops, and
// loads and stores of any element type with masked tails.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "snippets/passes/brgemm_blocking.hpp"
#include "snippets/runtime/kernel_abi.hpp"
#include "snippets/target/x64/emitters/emitter.hpp"
#include "snippets/target/x64/memory_access.hpp"

namespace snippets::x64 {

template <class Vmm> class BrgemmFrame {
protected:
  static constexpr bool avx512 = std::is_same_v<Vmm, Xbyak::Zmm>;
  static constexpr int lanes = avx512 ? 16 : 8;

  /// `data`: the data pointer of each argument and buffer; `pool`: every general-purpose
  /// register the kernel may use (the emitter saves what it takes); `scratch`: the emitters'
  /// scratch registers (the top ones).
  BrgemmFrame(Xbyak::CodeGenerator& h, ConstantTable& consts, std::span<const Vmm> scratch,
              std::span<const Xbyak::Reg64> data, std::span<const Xbyak::Reg64> pool,
              bool native_bf16)
      : h_(h), consts_(consts), scratch_(scratch), data_(data), pool_(pool),
        native_bf16_(native_bf16) {}

  struct Moved {
    Xbyak::Reg64 reg;
    std::int64_t row, col; // elements per row and per column of the product
    std::int64_t bytes;    // per element
  };
  void add_moved(Xbyak::Reg64 r, passes::ProductStrides st, ElementType t) {
    for (const auto& m : moved_)
      if (m.reg.getIdx() == r.getIdx()) return;
    moved_.push_back({r, st.row, st.col, std::int64_t(size_of(t))});
  }

  // temporaries: 0 A row tile, 1 A depth, 2 B panel, 3 B depth, 4 depth counter; stack: panel
  // and row-tile counters
  Xbyak::Reg64 b_panel() const { return t_[2]; }

  void take_temps(const std::vector<Xbyak::Reg64>& operands) {
    t_.clear();
    for (const auto& r : pool_) {
      const bool busy = std::any_of(operands.begin(), operands.end(),
                                    [&](const auto& o) { return o.getIdx() == r.getIdx(); });
      if (!busy && t_.size() < 5) t_.push_back(r);
    }
    SNIPPETS_ASSERT(t_.size() == 5) << "Brgemm needs five free general-purpose registers";
    saved_ = t_;
    for (const auto& m : moved_) saved_.push_back(m.reg);
    for (const auto& r : saved_) h_.push(r);
    h_.sub(h_.rsp, frame);
  }
  void release_temps() {
    h_.add(h_.rsp, frame);
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) h_.pop(*it);
    moved_.clear();
  }

  /// `panel(width)` for each panel of B: the N / w full ones (a loop counted at [rsp]), then
  /// the last N % w columns. `from_call` (column_range): the call's work[1] columns instead,
  /// whole panels from CallArgs::inner_begin, with the last columns if the range ends at N.
  template <class Panel> void each_panel(const ir::BrgemmShape& s, bool from_call, Panel&& panel) {
    const std::int64_t w = s.panel_width(), full = s.n / w, tail = s.n % w;
    const Xbyak::Address count = h_.qword[h_.rsp];
    Xbyak::Label loop, done;
    if (!from_call) {
      if (full) {
        h_.mov(count, static_cast<std::uint32_t>(full));
        h_.L(loop);
        panel(w);
        h_.dec(count);
        h_.jnz(loop, Xbyak::CodeGenerator::T_NEAR);
      }
      if (tail) panel(tail);
      return;
    }
    using Xbyak::util::rax;
    h_.mov(rax, h_.ptr[Xbyak::util::rdi + static_cast<int>(offsetof(CallArgs, work) + 8)]);
    h_.mov(count, rax);
    if (full) {
      h_.cmp(count, static_cast<int>(w));
      h_.jl(done, Xbyak::CodeGenerator::T_NEAR);
      h_.L(loop);
      panel(w);
      h_.sub(count, static_cast<int>(w));
      h_.cmp(count, static_cast<int>(w));
      h_.jge(loop, Xbyak::CodeGenerator::T_NEAR);
    }
    h_.L(done);
    if (!tail) return;
    Xbyak::Label end;
    h_.cmp(count, 0);
    h_.je(end, Xbyak::CodeGenerator::T_NEAR);
    panel(tail);
    h_.L(end);
  }

  /// Emits `body` `count` times as a loop counted down in `counter` (nothing for 0).
  template <class F> void repeat(Xbyak::Reg64 counter, std::int64_t count, F&& body) {
    if (count == 0) return;
    h_.mov(counter, static_cast<std::uint32_t>(count));
    Xbyak::Label next;
    h_.L(next);
    body();
    h_.dec(counter);
    h_.jnz(next, Xbyak::CodeGenerator::T_NEAR);
  }

  /// `count` elements of type `t` (the rest zero) from memory, as f32. AVX2 partial vectors
  /// use `mask`, by default the first scratch register (AVX-512 uses k1, and its scratch list
  /// may be empty).
  void load(Vmm dst, Xbyak::RegExp at, std::int64_t count, ElementType t) {
    load(dst, at, count, t, avx512 ? Vmm(0) : scratch_[0]);
  }
  void load(Vmm dst, Xbyak::RegExp at, std::int64_t count, ElementType t, Vmm mask) {
    if (t == ElementType::f32) return load_elements(h_, consts_, dst, h_.ptr[at], count, mask);
    converting().load(dst, at, t, count, [&] { return set_tail_mask(h_, consts_, mask, count); });
  }
  /// The first `count` lanes of src to memory as type `t` (other types: through the two scratch
  /// registers compile() reserves for converting stores).
  void store(Xbyak::RegExp at, Vmm src, std::int64_t count, ElementType t) {
    const Vmm mask = avx512 ? Vmm(0) : scratch_[0];
    if (t == ElementType::f32) return store_elements(h_, consts_, h_.ptr[at], src, count, mask);
    converting().store(at, src, t, count,
                       [&] { return set_tail_mask(h_, consts_, scratch_[0], count); });
  }
  /// Element types other than f32 (counts are known, so no run-time tail mask).
  MemoryAccess<Vmm> converting() {
    return MemoryAccess<Vmm>(h_, consts_, scratch_, native_bf16_, Xbyak::util::rsp);
  }

  void bitwise_and(Vmm d, Vmm a, const Xbyak::Operand& b) {
    if constexpr (avx512)
      h_.vpandd(d, a, b);
    else
      h_.vpand(d, a, b);
  }
  void bitwise_or(Vmm d, Vmm a, const Xbyak::Operand& b) {
    if constexpr (avx512)
      h_.vpord(d, a, b);
    else
      h_.vpor(d, a, b);
  }
  void bitwise_xor(Vmm d, Vmm a, const Xbyak::Operand& b) {
    if constexpr (avx512)
      h_.vpxord(d, a, b);
    else
      h_.vpxor(d, a, b);
  }

  /// acc += the four products of the bytes of a (unsigned) and b (signed) in each dword.
  void dot_bytes(Vmm acc, Vmm a, Vmm b) {
    h_.vpdpbusd(acc, a, b, avx512 ? Xbyak::EvexEncoding : Xbyak::VexEncoding);
  }

  // the stack frame: [rsp] the panel counter, [rsp + 8] the tile counter, [rsp + a_slot] A's
  // data pointer as the Brgemm starts
  static constexpr int a_slot = 16, frame = 32;

  Xbyak::CodeGenerator& h_;
  ConstantTable& consts_;
  std::span<const Vmm> scratch_;
  std::span<const Xbyak::Reg64> data_, pool_;
  bool native_bf16_;
  std::vector<Xbyak::Reg64> t_, saved_;
  std::vector<Moved> moved_;
};

} // namespace snippets::x64
