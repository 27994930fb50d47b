// SPDX-License-Identifier: Apache-2.0
// snippets/target/aarch64/constant_pool.hpp: the vector constants of one AArch64 kernel.
//
// NEON arithmetic has no memory operands, so a constant is loaded into a register first: one
// PC-relative `ldr q` from a 16-byte entry of this pool, which the kernel emitter places after
// the code (a literal load reaches +-1 MiB). Each distinct 16-byte pattern is stored once;
// `value(f)` and `bits(u)` broadcast one 32-bit word to the 4 lanes.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <map>

#include <asmjit/arm/a64assembler.h>

namespace snippets::aarch64 {

class ConstantPool {
public:
  using Entry = std::array<std::uint32_t, 4>;

  explicit ConstantPool(asmjit::a64::Assembler& a) : a_(a) {}

  asmjit::Label bits(std::uint32_t u) { return entry({u, u, u, u}); }
  asmjit::Label value(float f) { return bits(std::bit_cast<std::uint32_t>(f)); }
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
};

} // namespace snippets::aarch64
