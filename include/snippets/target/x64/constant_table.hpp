// SPDX-License-Identifier: Apache-2.0
// snippets/target/x64/constant_table.hpp: the kernel's constants, placed after its code and
// read RIP-relative. Each broadcast constant is stored replicated to the vector width, so any
// instruction can take it as a full-width memory operand; 64-bit constants (the f64 lanes of
// the general Power) are replicated the same way; raw blocks (the AVX2 tail-mask table, the
// lane offsets of gathers) are stored as given. Keys are enums or bit patterns, never strings.
// Identical constants are stored once.
// Pinned constants: a kernel with vector registers nobody else uses hands them to the table
// (pin_registers); the first broadcast constants asked for then live in those registers, loaded
// once per call (load_pinned), and their operand is the register, not memory. A polynomial
// reads a constant per FMA: from memory, those 64-byte loads, not the FMAs, bound the
// throughput of a transcendental op (exp: 1.3x faster from registers on the machine here).
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include <xbyak/xbyak.h>

namespace snippets::x64 {

/// Constants the emitters need by name.
enum class Const : std::uint32_t {
  abs_mask = 0x7fffffffu,
  sign_mask = 0x80000000u,
  one = 0x3f800000u,   // 1.0f
  half = 0x3f000000u,  // 0.5f
  three = 0x40400000u, // 3.0f
  six = 0x40c00000u,   // 6.0f
};

class ConstantTable {
public:
  explicit ConstantTable(int vector_bytes) : vector_bytes_(vector_bytes) {}

  /// The broadcast constant as an operand: its pinned register or its table entry. The
  /// reference stays valid as long as the table.
  const Xbyak::Operand& operator[](Const c) { return bits(static_cast<std::uint32_t>(c)); }
  const Xbyak::Operand& value(float v) { return bits(std::bit_cast<std::uint32_t>(v)); }
  const Xbyak::Operand& bits(std::uint32_t pattern) {
    auto it = broadcast_.find(pattern);
    if (it == broadcast_.end()) {
      it = broadcast_.emplace(pattern, Entry{at(words_.size() * 4), std::nullopt}).first;
      words_.insert(words_.end(), static_cast<std::size_t>(vector_bytes_ / 4), pattern);
      if (pinned_.size() < static_cast<std::size_t>(pin_count_)) {
        const int idx = pin_first_ + static_cast<int>(pinned_.size());
        it->second.reg = vector_bytes_ == 64 ? Xbyak::Xmm(Xbyak::Zmm(idx)) : Xbyak::Ymm(idx);
        pinned_.push_back(&it->second);
      }
    }
    const Entry& e = it->second;
    if (e.reg) return *e.reg;
    return e.address;
  }

  /// Vector registers first, first + 1, ... (count of them) hold the first broadcast
  /// constants asked for from now on. Their owner must leave them alone and call load_pinned
  /// before the code that reads them runs.
  void pin_registers(int first, int count) {
    pin_first_ = first;
    pin_count_ = std::max(count, 0);
  }
  /// Loads every pinned constant into its register.
  void load_pinned(Xbyak::CodeGenerator& h) const {
    for (const Entry* e : pinned_) h.vmovups(*e->reg, e->address);
  }
  /// How many constants live in registers.
  std::size_t pinned() const { return pinned_.size(); }
  /// Whether pin_registers gave the table any register.
  bool pinning() const { return pin_count_ > 0; }
  /// A 64-bit pattern replicated to the vector width (f64 or i64 lanes).
  Xbyak::Address bits64(std::uint64_t pattern) {
    auto it = broadcast64_.find(pattern);
    if (it == broadcast64_.end()) {
      it = broadcast64_.emplace(pattern, words_.size() * 4).first;
      for (int i = 0; i < vector_bytes_ / 8; ++i) {
        words_.push_back(static_cast<std::uint32_t>(pattern));
        words_.push_back(static_cast<std::uint32_t>(pattern >> 32));
      }
    }
    return at(it->second);
  }
  Xbyak::Address value64(double v) { return bits64(std::bit_cast<std::uint64_t>(v)); }

  /// The AVX2 tail-mask table: 8 all-ones words then 8 zero words. The 32 bytes at
  /// `tail_mask(n)` enable exactly the first n lanes.
  Xbyak::Address tail_mask(int n) {
    if (mask_offset_ < 0) {
      mask_offset_ = static_cast<std::int64_t>(words_.size() * 4);
      words_.insert(words_.end(), 8, 0xffffffffu);
      words_.insert(words_.end(), 8, 0u);
    }
    return at(static_cast<std::size_t>(mask_offset_ + (8 - n) * 4));
  }

  /// The int32 lane indices 0, 1, ..., 15 (a dynamic tail's mask is `count > iota`).
  Xbyak::Address iota() {
    if (iota_offset_ < 0) {
      iota_offset_ = static_cast<std::int64_t>(words_.size() * 4);
      for (std::uint32_t i = 0; i < 16; ++i) words_.push_back(i);
    }
    return at(static_cast<std::size_t>(iota_offset_));
  }

  /// The int32 element offsets 0, stride, 2 * stride, ... (15 * stride): a gather's indices.
  Xbyak::Address lane_offsets(std::int32_t stride) {
    auto it = lane_offsets_.find(stride);
    if (it == lane_offsets_.end()) {
      it = lane_offsets_.emplace(stride, words_.size() * 4).first;
      for (std::int32_t i = 0; i < 16; ++i)
        words_.push_back(static_cast<std::uint32_t>(i * stride));
    }
    return at(it->second);
  }

  /// Emits the table (64-byte aligned) at the current position; call once, after the code.
  void emit(Xbyak::CodeGenerator& h) {
    h.align(64);
    h.L(label_);
    for (std::uint32_t w : words_) h.dd(w);
  }

private:
  Xbyak::Address at(std::size_t offset) {
    return Xbyak::util::ptr[Xbyak::util::rip + label_ + static_cast<std::int64_t>(offset)];
  }
  struct Entry {
    Xbyak::Address address;
    std::optional<Xbyak::Xmm> reg; // pinned: a ymm or zmm (its kind and width are kept)
  };
  int vector_bytes_;
  std::vector<std::uint32_t> words_;
  std::map<std::uint32_t, Entry> broadcast_; // node-based: operands handed out stay valid
  std::vector<const Entry*> pinned_;
  int pin_first_ = 0, pin_count_ = 0;
  std::map<std::uint64_t, std::size_t> broadcast64_;
  std::map<std::int32_t, std::size_t> lane_offsets_;
  std::int64_t mask_offset_ = -1;
  std::int64_t iota_offset_ = -1;
  Xbyak::Label label_;
};

} // namespace snippets::x64
