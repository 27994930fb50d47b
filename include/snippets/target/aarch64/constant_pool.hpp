// SPDX-License-Identifier: Apache-2.0
// snippets/target/aarch64/constant_pool.hpp: the vector constants of one AArch64 kernel.
//
// NEON arithmetic has no memory operands, so a constant is loaded into a register first: one
// PC-relative `ldr q` from a 16-byte entry of this pool, which the kernel emitter places after
// the code (a literal load reaches +-1 MiB). Each distinct 16-byte pattern is stored once;
// `value(f)` and `bits(u)` broadcast one 32-bit word to the 4 lanes, `value64(d)` and `bits64(u)`
// one 64-bit word to the 2 f64 lanes (the general Power works on f64).
// Pinned constants: the vector registers no value and no emitter scratch uses (given by the
// kernel emitter, pin_registers) hold the first constants the emitters read as operands
// (`value_in`, `bits_in`), loaded once before the body (load_pinned, emitted after the return
// once they are known; the prologue jumps there and back), so a loop reads them for free.
// An emitter that overwrites its constant (an FMLA accumulator) loads its own copy (`load`).
// Local pins: an emitter that works in fixed registers (SoftmaxRows) pins the constants of its
// own code in the registers it leaves free (begin_local_pins), and places their loads ahead of
// that code once they are known (end_local_pins); the kernel's pins are set aside meanwhile.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include <asmjit/arm/a64assembler.h>

namespace snippets::aarch64 {

class ConstantPool {
public:
  using Entry = std::array<std::uint32_t, 4>;

  explicit ConstantPool(asmjit::a64::Assembler& a) : a_(a) {}

  asmjit::Label bits(std::uint32_t u) { return entry({u, u, u, u}); }
  asmjit::Label value(float f) { return bits(std::bit_cast<std::uint32_t>(f)); }
  static Entry entry64(std::uint64_t u) {
    const auto lo = static_cast<std::uint32_t>(u), hi = static_cast<std::uint32_t>(u >> 32);
    return {lo, hi, lo, hi};
  }
  asmjit::Label entry(const Entry& e) {
    auto it = labels_.find(e);
    if (it == labels_.end()) it = labels_.emplace(e, a_.newLabel()).first;
    return it->second;
  }
  /// dst = the 4 lanes of the constant (one PC-relative load).
  void load(const asmjit::a64::Vec& dst, const asmjit::Label& l) {
    a_.ldr(dst.q(), asmjit::a64::ptr(l));
  }
  void load_value(const asmjit::a64::Vec& dst, float f) { load(dst, value(f)); }
  void load_bits(const asmjit::a64::Vec& dst, std::uint32_t u) { load(dst, bits(u)); }
  void load_bits64(const asmjit::a64::Vec& dst, std::uint64_t u) { load(dst, entry(entry64(u))); }

  /// Registers free for pinned constants for the whole kernel.
  void pin_registers(std::vector<asmjit::a64::Vec> free) { free_ = std::move(free); }
  bool pinning() const { return !free_.empty(); }
  /// The constant as a read-only operand: its pinned register (pinned now if one is free), or
  /// `tmp` loaded with it.
  asmjit::a64::Vec bits_in(std::uint32_t u, const asmjit::a64::Vec& tmp) {
    return entry_in({u, u, u, u}, tmp);
  }
  asmjit::a64::Vec value_in(float f, const asmjit::a64::Vec& tmp) {
    return bits_in(std::bit_cast<std::uint32_t>(f), tmp);
  }
  asmjit::a64::Vec bits64_in(std::uint64_t u, const asmjit::a64::Vec& tmp) {
    return entry_in(entry64(u), tmp);
  }
  asmjit::a64::Vec value64_in(double d, const asmjit::a64::Vec& tmp) {
    return bits64_in(std::bit_cast<std::uint64_t>(d), tmp);
  }
  asmjit::a64::Vec entry_in(const Entry& e, const asmjit::a64::Vec& tmp) {
    if (const auto it = pinned_.find(e); it != pinned_.end()) return it->second;
    if (pinned_.size() < free_.size()) {
      const asmjit::a64::Vec r = free_[pinned_.size()];
      pinned_.emplace(e, r);
      return r;
    }
    load(tmp, entry(e));
    return tmp;
  }
  /// Whether a pinned constant lives in v8-v15 (whose low halves are callee-saved).
  bool pins_callee_saved() const {
    for (const auto& [e, r] : pinned_)
      if (r.id() >= 8 && r.id() <= 15) return true;
    return false;
  }
  /// The loads of the pinned constants (run once, before the body).
  void load_pinned() {
    for (const auto& [e, r] : pinned_) load(r, entry(e));
  }

  /// From here the constants asked for are pinned in `free` (and no others), until
  /// end_local_pins.
  void begin_local_pins(std::vector<asmjit::a64::Vec> free) {
    outer_free_ = std::exchange(free_, std::move(free));
    outer_pinned_ = std::exchange(pinned_, {});
  }
  /// The loads of the constants pinned since begin_local_pins (for code that runs before the
  /// code that reads them), then the kernel's pins again.
  void end_local_pins() {
    load_pinned();
    free_ = std::move(outer_free_);
    pinned_ = std::move(outer_pinned_);
  }

  /// Appends the pool (16-byte aligned) at the current position: after the kernel's return.
  void emit() {
    if (labels_.empty()) return;
    a_.align(asmjit::AlignMode::kData, 16);
    for (const auto& [e, l] : labels_) {
      a_.bind(l);
      for (const std::uint32_t w : e) a_.embedUInt32(w);
    }
  }

private:
  asmjit::a64::Assembler& a_;
  std::map<Entry, asmjit::Label> labels_;
  std::vector<asmjit::a64::Vec> free_, outer_free_;
  std::map<Entry, asmjit::a64::Vec> pinned_, outer_pinned_;
};

} // namespace snippets::aarch64
