// SPDX-License-Identifier: Apache-2.0
// snippets/target/aarch64/memory_access.hpp: loads and stores of `count` (1-4) elements between
// memory and the low lanes of a NEON register, converting to and from f32.
//
// NEON has no masked loads, so a partial vector is moved in at most two pieces that cover
// exactly its bytes: the largest power of two with one LDR/STR of a B, H, S, D or Q register
// (a load clears the lanes above it), then the rest, a power of two too, with one LD1/ST1 of
// a single lane (3 f32 = 8 + 4 bytes, 3 f16 = 4 + 2, 3 u8 = 2 + 1). No byte outside
// `count` elements is read or written, so a tail never touches memory past a tensor. Lanes of
// a loaded register past `count` hold zero (before conversion; a conversion keeps them zero).
// A run-time count (the tail of a dynamic kernel, 1 to 3 elements, in a register) moves lane 0
// and then each further lane behind a compare and branch on the count.
// Conversions (registers hold f32): f16 by FCVTL/FCVTN (round to nearest even, the FPCR
// default); i32 by SCVTF (nearest) and FCVTZS (truncate, saturate, NaN -> 0); i8/u8 widened
// by SSHLL/USHLL and narrowed by SQXTN/UQXTN, which saturate as Convert does; bf16 widened
// by SHLL (exact); a bf16 store is rounded by the kernel emitter (Emitter<Convert>) first;
// a boolean byte is made 0 or 1 first (CMTST, USHR: any non-zero byte is true, as the
// reference interpreter decodes it) and widened as u8, so the logical ops see 0.0f or 1.0f;
// a boolean store writes 1 where the value != 0 (FCMEQ is false for NaN: NaN is true) and
// 0 elsewhere, as Convert to boolean does.
#pragma once

#include <cstdint>

#include <asmjit/arm/a64assembler.h>

#include "snippets/error.hpp"
#include "snippets/ir/element_type.hpp"
#include "snippets/target/aarch64/abi.hpp"

namespace snippets::aarch64 {

class MemoryAccess {
  using Vec = asmjit::a64::Vec;
  using GpX = asmjit::a64::GpX;

public:
  explicit MemoryAccess(asmjit::a64::Assembler& a) : a_(a) {}

  /// x = base + bytes, in x16 unless bytes is 0 (then base itself).
  GpX address(const GpX& base, std::int64_t bytes) {
    if (bytes == 0) return base;
    const GpX t = asmjit::a64::x(scratch_gpr);
    if (bytes > 0 && bytes < 4096) {
      a_.add(t, base, bytes);
    } else if (bytes < 0 && bytes > -4096) {
      a_.sub(t, base, -bytes);
    } else {
      move_imm(t, static_cast<std::uint64_t>(bytes));
      a_.add(t, base, t);
    }
    return t;
  }

  /// x = imm (MOVZ and up to three MOVK).
  void move_imm(const GpX& x, std::uint64_t imm) {
    a_.movz(x, imm & 0xffff);
    for (std::uint32_t shift = 16; shift < 64; shift += 16)
      if (const std::uint64_t part = (imm >> shift) & 0xffff; part != 0)
        a_.movk(x, part, asmjit::arm::lsl(shift));
  }

  /// v = `count` elements of `type` at base + bytes, as f32; lanes past count are zero.
  void load(const Vec& v, const GpX& base, std::int64_t bytes, ElementType type,
            std::int64_t count) {
    load_raw(v, base, bytes, static_cast<int>(size_of(type)), static_cast<int>(count));
    widen(v, type);
  }

  /// The same for `count` elements given at run time (1 to 3, in the register `count`).
  void load(const Vec& v, const GpX& base, std::int64_t bytes, ElementType type, const GpX& count) {
    lanes_raw(v, base, bytes, static_cast<int>(size_of(type)), count, false);
    widen(v, type);
  }

  /// `count` elements of `type` at base + bytes = the low lanes of v, converted; v is kept (the
  /// conversion works in t, which may not be v).
  void store(const Vec& v, const GpX& base, std::int64_t bytes, ElementType type,
             std::int64_t count, const Vec& t) {
    const Vec src = narrow(v, type, t);
    store_raw(src, base, bytes, static_cast<int>(size_of(type)), static_cast<int>(count));
  }
  /// The same for `count` elements given at run time (1 to 3, in the register `count`).
  void store(const Vec& v, const GpX& base, std::int64_t bytes, ElementType type, const GpX& count,
             const Vec& t) {
    lanes_raw(narrow(v, type, t), base, bytes, static_cast<int>(size_of(type)), count, true);
  }

  /// Registers hold f32: converts the low lanes of raw `type` elements in v to f32 in place.
  void widen(const Vec& v, ElementType type) {
    switch (type) {
    case ElementType::f32: return;
    case ElementType::i32: a_.scvtf(v.s4(), v.s4()); return;
    case ElementType::f16: a_.fcvtl(v.s4(), v.h4()); return;
    case ElementType::bf16: a_.shll(v.s4(), v.h4(), 16); return; // SHLL: by the element size
    case ElementType::i8:
      a_.sshll(v.h8(), v.b8(), 0);
      a_.sshll(v.s4(), v.h4(), 0);
      a_.scvtf(v.s4(), v.s4());
      return;
    case ElementType::boolean:
      a_.cmtst(v.b8(), v.b8(), v.b8()); // 0xff where non-zero
      a_.ushr(v.b8(), v.b8(), 7);
      [[fallthrough]];
    case ElementType::u8:
      a_.ushll(v.h8(), v.b8(), 0);
      a_.ushll(v.s4(), v.h4(), 0);
      a_.ucvtf(v.s4(), v.s4());
      return;
    }
  }

  /// The low lanes of v as `type` elements: v itself for f32, else t.
  Vec narrow(const Vec& v, ElementType type, const Vec& t) {
    switch (type) {
    case ElementType::f32: return v;
    case ElementType::i32: a_.fcvtzs(t.s4(), v.s4()); return t;
    case ElementType::f16: a_.fcvtn(t.h4(), v.s4()); return t;
    case ElementType::i8:
      a_.fcvtzs(t.s4(), v.s4());
      a_.sqxtn(t.h4(), t.s4());
      a_.sqxtn(t.b8(), t.h8());
      return t;
    case ElementType::u8:
      a_.fcvtzu(t.s4(), v.s4());
      a_.uqxtn(t.h4(), t.s4());
      a_.uqxtn(t.b8(), t.h8());
      return t;
    case ElementType::boolean:
      a_.fcmeq(t.s4(), v.s4(), 0); // all ones where == 0 (not for NaN)
      a_.mvn(t.b16(), t.b16());
      a_.ushr(t.s4(), t.s4(), 31);
      a_.xtn(t.h4(), t.s4());
      a_.xtn(t.b8(), t.h8());
      return t;
    case ElementType::bf16: break; // rounded by the kernel emitter (Emitter<Convert>), not here
    }
    raise("snippets.compile.codegen",
          std::string("the AArch64 backend does not store ") + to_string(type).data());
  }

  /// The raw bytes of `count` elements of `size` bytes into the low lanes of v, the rest zero.
  void load_raw(const Vec& v, const GpX& base, std::int64_t bytes, int size, int count) {
    const int total = size * count, first = largest_power_of_two(total), rest = total - first;
    a_.ldr(scalar(v, first), operand(base, bytes, first));
    if (rest) a_.ld1(lane(v, rest, first / rest), asmjit::a64::ptr(address(base, bytes + first)));
  }
  void store_raw(const Vec& v, const GpX& base, std::int64_t bytes, int size, int count) {
    const int total = size * count, first = largest_power_of_two(total), rest = total - first;
    a_.str(scalar(v, first), operand(base, bytes, first));
    if (rest) a_.st1(lane(v, rest, first / rest), asmjit::a64::ptr(address(base, bytes + first)));
  }

  /// The `count` (1 to 16) bytes at base + bytes into the low bytes of v, the rest zero: the
  /// largest power of two by one LDR, then each smaller power of two the rest holds as one
  /// lane (13 = 8 + 4 + 1), so no byte past them is read.
  void load_bytes(const Vec& v, const GpX& base, std::int64_t bytes, int count) {
    int done = largest_power_of_two(count);
    a_.ldr(scalar(v, done), operand(base, bytes, done));
    for (int piece = done / 2; piece >= 1; piece /= 2)
      if (count - done >= piece) {
        a_.ld1(lane(v, piece, done / piece), asmjit::a64::ptr(address(base, bytes + done)));
        done += piece;
      }
  }

  /// Loads (or stores) the raw bytes of `count` elements of `size` bytes, `count` in a
  /// register (1 to 3): lane 0 (an LDR clears the lanes above), then lane i while count > i.
  void lanes_raw(const Vec& v, const GpX& base, std::int64_t bytes, int size, const GpX& count,
                 bool store) {
    if (store)
      a_.str(scalar(v, size), operand(base, bytes, size));
    else
      a_.ldr(scalar(v, size), operand(base, bytes, size));
    const asmjit::Label done = a_.newLabel();
    for (int i = 1; i < lanes - 1; ++i) {
      a_.cmp(count, i);
      a_.b_le(done);
      const asmjit::a64::Mem at = asmjit::a64::ptr(address(base, bytes + std::int64_t{i} * size));
      if (store)
        a_.st1(lane(v, size, i), at);
      else
        a_.ld1(lane(v, size, i), at);
    }
    a_.bind(done);
  }

private:
  static int largest_power_of_two(int n) {
    int p = 1;
    while (p * 2 <= n) p *= 2;
    return p;
  }
  /// The B/H/S/D/Q view of v for an access of `bytes`.
  static Vec scalar(const Vec& v, int bytes) {
    switch (bytes) {
    case 1: return v.b();
    case 2: return v.h();
    case 4: return v.s();
    case 8: return v.d();
    default: return v.q();
    }
  }
  /// Lane `index` of v in elements of `bytes`.
  static Vec lane(const Vec& v, int bytes, int index) {
    const auto i = static_cast<std::uint32_t>(index);
    switch (bytes) {
    case 1: return v.b(i);
    case 2: return v.h(i);
    case 4: return v.s(i);
    default: return v.d(i);
    }
  }
  /// [base + bytes] for an LDR/STR of `size` bytes: the scaled 12-bit immediate when it
  /// reaches, else the address in x16.
  asmjit::a64::Mem operand(const GpX& base, std::int64_t bytes, int size) {
    if (bytes >= 0 && bytes % size == 0 && bytes / size < 4096)
      return asmjit::a64::ptr(base, static_cast<std::int32_t>(bytes));
    return asmjit::a64::ptr(address(base, bytes));
  }

  asmjit::a64::Assembler& a_;
};

} // namespace snippets::aarch64
