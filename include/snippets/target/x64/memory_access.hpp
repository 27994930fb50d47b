// SPDX-License-Identifier: Apache-2.0
// snippets/target/x64/memory_access.hpp: loads and stores of kernel arguments whose element
// type is not f32, and the partial-vector f32 pieces the kernel and Brgemm emitters share
// (tail masks, masked loads and stores, gathers).
//
// Registers always hold f32. Loads convert exactly: bf16 is shifted into the top half of a
// dword, f16 goes through VCVTPH2PS (F16C), i8/u8 are sign/zero-extended and i32 is converted
// with VCVTDQ2PS (round to nearest); a boolean byte is zero-extended and clamped to 1 (VPMINUD),
// so any non-zero byte reads as 1.0f, as the reference interpreter decodes it
// (element_type.hpp), and the logical ops, which expect 0.0f / 1.0f, see only those. Stores
// convert as Convert does (ir/op_tags.hpp): f16 with VCVTPS2PH (round to nearest even), bf16
// with VCVTNEPS2BF16 when the LIR allows it (LinearIR::native_bf16; that instruction flushes
// subnormals, so subnormal lanes are redone with integers) or with integer round-to-nearest-even,
// NaN staying a quiet NaN; i32/i8/u8 truncate toward zero, saturate, and write 0 for NaN;
// boolean writes the byte 1 where the value != 0 (NaN included) and 0 elsewhere.
// Partial vectors never touch memory past the tensor:
//  - AVX-512: the caller's opmask k1 masks every access (fault suppression), whatever the
//    element size;
//  - AVX2, 4-byte elements: VMASKMOVPS with the caller's mask register;
//  - AVX2, 1- and 2-byte elements: a known count moves in 8/4/2/1-byte pieces (VMOVQ, VPINSRx,
//    VPEXTRx); a count known only at run time moves element by element, each one guarded by
//    its lane of the tail mask the kernel keeps in its frame.
// One element (count 1), and the bf16 store's subnormal test, go through eax. Stores need
// converting_store_scratch vector registers (the first is the AVX2 mask register, used only after
// the conversion) and k2.
#pragma once

#include <cstdint>
#include <span>

#include <xbyak/xbyak.h>

#include "snippets/ir/element_type.hpp"
#include "snippets/ir/lowered_ops.hpp"
#include "snippets/target/x64/constant_table.hpp"

namespace snippets::x64 {

/// Enables the first `count` lanes: k1 on AVX-512 (through eax), `avx2_mask` loaded from the
/// constant table on AVX2. Returns the AVX2 mask register (unused on AVX-512).
template <class Vmm>
Vmm set_tail_mask(Xbyak::CodeGenerator& h, ConstantTable& consts, Vmm avx2_mask,
                  std::int64_t count) {
  if constexpr (std::is_same_v<Vmm, Xbyak::Zmm>) {
    h.mov(h.eax, static_cast<std::uint32_t>((1u << count) - 1));
    h.kmovw(Xbyak::Opmask(1), h.eax);
  } else {
    h.vmovups(avx2_mask, consts.tail_mask(static_cast<int>(count)));
  }
  return avx2_mask;
}

/// f32 lanes under `mask` (k1 on AVX-512, the mask register on AVX2): a load zeroes the others,
/// a store leaves their memory untouched.
template <class Vmm>
void masked_load(Xbyak::CodeGenerator& h, Vmm dst, Xbyak::Address at, Vmm mask) {
  if constexpr (std::is_same_v<Vmm, Xbyak::Zmm>)
    h.vmovups(dst | Xbyak::Opmask(1) | Xbyak::util::T_z, at);
  else
    h.vmaskmovps(dst, mask, at);
}
template <class Vmm>
void masked_store(Xbyak::CodeGenerator& h, Xbyak::Address at, Vmm src, Vmm mask) {
  if constexpr (std::is_same_v<Vmm, Xbyak::Zmm>)
    h.vmovups(at | Xbyak::Opmask(1), src);
  else
    h.vmaskmovps(at, mask, src);
}

/// `count` f32 elements from memory, the other lanes zero: one vector load, or a masked one
/// (set_tail_mask with `avx2_mask`).
template <class Vmm>
void load_elements(Xbyak::CodeGenerator& h, ConstantTable& consts, Vmm dst, Xbyak::Address at,
                   std::int64_t count, Vmm avx2_mask) {
  if (count == (std::is_same_v<Vmm, Xbyak::Zmm> ? 16 : 8)) return h.vmovups(dst, at);
  masked_load(h, dst, at, set_tail_mask(h, consts, avx2_mask, count));
}
/// The first `count` lanes of src to memory (the rest untouched), as load_elements.
template <class Vmm>
void store_elements(Xbyak::CodeGenerator& h, ConstantTable& consts, Xbyak::Address at, Vmm src,
                    std::int64_t count, Vmm avx2_mask) {
  if (count == (std::is_same_v<Vmm, Xbyak::Zmm> ? 16 : 8)) return h.vmovups(at, src);
  masked_store(h, at, src, set_tail_mask(h, consts, avx2_mask, count));
}

/// dst = `count` f32 elements `stride` apart from `at` (the other lanes 0), with VGATHERDPS.
/// `index` receives the lane offsets; `mask` is the AVX2 gather mask (it also holds the tail
/// mask there), AVX-512 uses k1.
template <class Vmm>
void gather(Xbyak::CodeGenerator& h, ConstantTable& consts, Vmm dst, Xbyak::RegExp at,
            std::int64_t stride, std::int64_t count, Vmm index, Vmm mask) {
  constexpr int lanes = std::is_same_v<Vmm, Xbyak::Zmm> ? 16 : 8;
  h.vmovups(index, consts.lane_offsets(static_cast<std::int32_t>(stride)));
  if (count != lanes) h.vxorps(dst, dst, dst); // lanes the mask skips keep dst
  if constexpr (std::is_same_v<Vmm, Xbyak::Zmm>) {
    if (count == lanes)
      h.kxnorw(Xbyak::Opmask(1), Xbyak::Opmask(1), Xbyak::Opmask(1));
    else
      set_tail_mask(h, consts, mask, count);
    h.vgatherdps(dst | Xbyak::Opmask(1), h.ptr[at + index * 4]);
  } else {
    if (count == lanes)
      h.vpcmpeqd(mask, mask, mask);
    else
      set_tail_mask(h, consts, mask, count);
    h.vgatherdps(dst, h.ptr[at + index * 4], mask);
  }
}

/// Vector scratch registers a converting store uses.
inline constexpr int converting_store_scratch = 2;

template <class Vmm> class MemoryAccess {
public:
  static constexpr bool avx512 = std::is_same_v<Vmm, Xbyak::Zmm>;
  static constexpr int lanes = avx512 ? 16 : 8;

  /// `scratch`: at least converting_store_scratch registers (stores only). `mask_lane(i)`:
  /// AVX2 dynamic tails, the frame dword that is nonzero when lane i is active.
  MemoryAccess(Xbyak::CodeGenerator& h, ConstantTable& consts, std::span<const Vmm> scratch,
               bool native_bf16, Xbyak::RegExp runtime_mask)
      : h_(h), consts_(consts), scratch_(scratch), native_bf16_(native_bf16),
        runtime_mask_(runtime_mask) {}

  /// dst = `count` elements of type `t` at `at`, as f32 (lanes past `count` are unspecified).
  /// `mask()` sets k1 (AVX-512) or returns the AVX2 mask register for a partial vector.
  template <class MaskFn>
  void load(Vmm dst, Xbyak::RegExp at, ElementType t, std::int64_t count, MaskFn&& mask) {
    if (count == 1) return load_one(dst, at, t);
    const Xbyak::Xmm x(dst.getIdx());
    if (count == lanes) {
      load_full(dst, h_.ptr[at], t);
    } else if constexpr (avx512) {
      mask();
      load_full(dst | Xbyak::Opmask(1) | Xbyak::util::T_z, h_.ptr[at], t);
    } else if (t == ElementType::i32) {
      h_.vmaskmovps(dst, mask(), h_.ptr[at]);
      h_.vcvtdq2ps(dst, dst);
    } else {
      gather_bytes(x, at, t, count);
      widen(dst, x, t);
    }
  }

  /// dst = `count` elements of type `t` (narrower than 4 bytes) `stride` elements apart from
  /// `at`, as f32 (the other lanes 0). One element at a time into packed words or bytes in
  /// scratch 0 (past 8 words, AVX-512, the rest in the low half of dst), then widened as a
  /// contiguous load is: it reads the elements alone, never past them (a dword gather would).
  void gather_narrow(Vmm dst, Xbyak::RegExp at, ElementType t, std::int64_t stride,
                     std::int64_t count) {
    const int size = static_cast<int>(size_of(t)), per_xmm = 16 / size;
    const Xbyak::Xmm lo(scratch_[0].getIdx()), hi(dst.getIdx());
    h_.vxorps(lo, lo, lo);
    if (count > per_xmm) h_.vxorps(hi, hi, hi);
    for (int i = 0; i < count; ++i)
      insert(i < per_xmm ? lo : hi, h_.ptr[at + static_cast<int>(i * stride * size)], size,
             i % per_xmm);
    const Xbyak::Ymm words(lo.getIdx());
    if (count > per_xmm) h_.vinserti32x4(words, words, hi, 1);
    if (avx512 && size == 2) return convert_in(dst, words, t); // 16 words: a ymm
    convert_in(dst, lo, t);
  }

  /// dst = the element of type `t` at `at`, as f32 in every lane.
  void broadcast_load(Vmm dst, Xbyak::RegExp at, ElementType t) {
    load_one(dst, at, t);
    h_.vbroadcastss(dst, Xbyak::Xmm(dst.getIdx()));
  }

  /// Writes `count` lanes of `src` (f32) to `at` as type `t`.
  template <class MaskFn>
  void store(Xbyak::RegExp at, Vmm src, ElementType t, std::int64_t count, MaskFn&& mask) {
    using Xbyak::Opmask;
    const Vmm s0 = scratch_[0], s1 = scratch_[1];
    const Xbyak::Xmm x0(s0.getIdx()), x1(s1.getIdx());
    const bool full = count == lanes, one = count == 1;
    switch (t) {
    case ElementType::f16:
      if (avx512 && !one) { // AVX-512: masked by k1 straight to memory
        if (!full) mask();
        h_.vcvtps2ph(full ? h_.ptr[at] : h_.ptr[at] | Opmask(1), src, 0x00); // nearest even
        return;
      }
      if (full) return h_.vcvtps2ph(h_.ptr[at], src, 0x00);
      if (one)
        h_.vcvtps2ph(x1, Xbyak::Xmm(src.getIdx()), 0x00);
      else
        h_.vcvtps2ph(x1, src, 0x00); // AVX2: 8 lanes -> 8 words
      return scatter_bytes(at, x1, t, count);
    case ElementType::bf16:
      if constexpr (avx512) {
        const Xbyak::Ymm y1(s1.getIdx());
        to_bf16_words(src);
        if (one) return h_.vpextrw(h_.ptr[at], x1, 0);
        if (!full) mask();
        h_.vmovdqu16(full ? h_.ptr[at] : h_.ptr[at] | Opmask(1), y1);
      } else {
        to_bf16_words(src);
        if (one) return h_.vpextrw(h_.ptr[at], x1, 1);
        // the top words of each lane's dwords into its low qword, then the two qwords together
        h_.vpshufb(s1, s1, consts_.bits64(0x0f0e0b0a07060302u));
        h_.vpermq(s1, s1, 0x08);
        if (full) return h_.vmovdqu(h_.ptr[at], x1);
        scatter_bytes(at, x1, t, count);
      }
      return;
    case ElementType::i32:
      to_i32(src);
      if (one) return h_.vmovss(h_.ptr[at], x1);
      if (full) return h_.vmovups(h_.ptr[at], s1);
      if constexpr (avx512) {
        mask();
        h_.vmovups(h_.ptr[at] | Opmask(1), s1);
      } else {
        h_.vmaskmovps(h_.ptr[at], mask(), s1);
      }
      return;
    case ElementType::boolean:
      if constexpr (avx512) { // 1 in the lanes != 0 (unordered: NaN too), then bytes
        const Xbyak::Opmask k2(2);
        h_.vcmpps(k2, src, consts_.value(0.0f), cmp_neq_uq);
        h_.vmovdqu32(s1 | k2 | Xbyak::util::T_z, consts_.bits(1));
        if (one) {
          h_.vpmovdb(x0, s1);
          return h_.vpextrb(h_.ptr[at], x0, 0);
        }
        if (!full) mask();
        h_.vpmovdb(full ? h_.ptr[at] : h_.ptr[at] | Opmask(1), s1);
      } else { // all ones in the lanes != 0, shifted down to 1, then packed as u8 is
        h_.vcmpps(s1, src, consts_.value(0.0f), cmp_neq_uq);
        h_.vpsrld(s1, s1, 31);
        pack_bytes(x0, x1, s1, true);
        if (full) return h_.vmovq(h_.ptr[at], x1);
        scatter_bytes(at, x1, t, count);
      }
      return;
    case ElementType::i8:
    case ElementType::u8: {
      const bool u8 = t == ElementType::u8;
      to_byte_range(src, u8);
      if constexpr (avx512) {
        if (one) {
          u8 ? h_.vpmovusdb(x0, s1) : h_.vpmovsdb(x0, s1);
          return h_.vpextrb(h_.ptr[at], x0, 0);
        }
        if (!full) mask();
        const Xbyak::Address m = full ? h_.ptr[at] : h_.ptr[at] | Opmask(1);
        u8 ? h_.vpmovusdb(m, s1) : h_.vpmovsdb(m, s1);
      } else {
        pack_bytes(x0, x1, s1, u8);
        if (full) return h_.vmovq(h_.ptr[at], x1);
        scatter_bytes(at, x1, t, count);
      }
      return;
    }
    default: SNIPPETS_ASSERT(false) << "no converting store to " << to_string(t);
    }
  }

private:
  /// Compare predicates of VCMPPS.
  static constexpr std::uint8_t cmp_neq_uq = 0x04;

  /// AVX2: the low 8 bytes of x1 = the 8 int32 lanes of s1 (x1's full register), saturated to
  /// u8 or i8; x0 is scratch.
  void pack_bytes(Xbyak::Xmm x0, Xbyak::Xmm x1, Vmm s1, bool u8) {
    h_.vextracti128(x0, s1, 1);
    h_.vpackssdw(x1, x1, x0);                                 // i32 -> i16, saturating
    u8 ? h_.vpackuswb(x1, x1, x1) : h_.vpacksswb(x1, x1, x1); // -> u8 / i8, saturating
  }

  /// A full-width converting load from memory (Dst: a plain or masked register).
  template <class Dst> void load_full(const Dst& dst, const Xbyak::Address& m, ElementType t) {
    if (t == ElementType::i32) return h_.vcvtdq2ps(dst, m);
    convert_in(dst, m, t);
  }

  /// dst = the packed elements in x (the low bytes), as f32.
  void widen(Vmm dst, Xbyak::Xmm x, ElementType t) { convert_in(dst, x, t); }

  /// dst = the narrow elements of `src` (memory or the low bytes of a register) as f32.
  template <class Dst, class Src> void convert_in(const Dst& dst, const Src& src, ElementType t) {
    const Vmm v(dst.getIdx());
    switch (t) {
    case ElementType::bf16:
      h_.vpmovzxwd(dst, src);
      h_.vpslld(v, v, 16);
      return;
    case ElementType::f16: h_.vcvtph2ps(dst, src); return;
    case ElementType::i8:
      h_.vpmovsxbd(dst, src);
      h_.vcvtdq2ps(v, v);
      return;
    case ElementType::u8:
      h_.vpmovzxbd(dst, src);
      h_.vcvtdq2ps(v, v);
      return;
    case ElementType::boolean: // any non-zero byte is true: 1.0f
      h_.vpmovzxbd(dst, src);
      h_.vpminud(v, v, consts_.bits(1));
      h_.vcvtdq2ps(v, v);
      return;
    default: SNIPPETS_ASSERT(false) << "no widening of " << to_string(t);
    }
  }

  /// Lane 0 of dst = the element at `at` as f32, through eax (sign or zero extension there).
  void load_one(Vmm dst, Xbyak::RegExp at, ElementType t) {
    using Xbyak::util::eax;
    const Xbyak::Xmm x(dst.getIdx());
    switch (t) {
    case ElementType::f32: h_.vmovss(x, h_.dword[at]); return;
    case ElementType::bf16:
      h_.movzx(eax, h_.word[at]);
      h_.shl(eax, 16);
      h_.vmovd(x, eax);
      return;
    case ElementType::f16:
      h_.movzx(eax, h_.word[at]);
      h_.vmovd(x, eax);
      h_.vcvtph2ps(x, x);
      return;
    case ElementType::i8: h_.movsx(eax, h_.byte[at]); break;
    case ElementType::u8: h_.movzx(eax, h_.byte[at]); break;
    case ElementType::boolean: // any non-zero byte is true
      h_.cmp(h_.byte[at], 0);
      h_.setne(h_.al);
      h_.movzx(eax, h_.al);
      break;
    case ElementType::i32: h_.mov(eax, h_.dword[at]); break;
    default: SNIPPETS_ASSERT(false) << "no load of " << to_string(t);
    }
    h_.vmovd(x, eax);
    h_.vcvtdq2ps(x, x);
  }

  /// s1 = src truncated to int32, saturated (CVTTPS2DQ gives 0x80000000 out of range and for
  /// NaN: the lanes >= 2^31 become 0x7fffffff, NaN lanes 0).
  void to_i32(Vmm src) {
    const Vmm s0 = scratch_[0], s1 = scratch_[1];
    constexpr int ge_oq = 0x1d, unord_q = 0x03, ord_q = 0x07;
    h_.vcvttps2dq(s1, src);
    if constexpr (avx512) {
      const Xbyak::Opmask k2(2);
      h_.vcmpps(k2, src, consts_.value(2147483648.0f), ge_oq);
      h_.vmovups(s1 | k2, consts_.bits(0x7fffffffu));
      h_.vcmpps(k2, src, src, unord_q);
      h_.vpxord(s1 | k2, s1, s1);
    } else {
      h_.vcmpps(s0, src, consts_.value(2147483648.0f), ge_oq);
      h_.vpxor(s1, s1, s0); // 0x80000000 ^ ~0 = 0x7fffffff
      h_.vcmpps(s0, src, src, ord_q);
      h_.vpand(s1, s1, s0);
    }
  }

  /// s1 = src truncated to int32 within u8's or i8's range, NaN -> 0: clamped as f32 first
  /// (the bounds are integers, so clamping and truncating commute), which leaves CVTTPS2DQ no
  /// lane out of its range (u8 on AVX-512: no upper bound, the store saturates). MAXPS returns
  /// its second operand for NaN: u8's lower bound 0.
  void to_byte_range(Vmm src, bool u8) {
    const Vmm s0 = scratch_[0], s1 = scratch_[1];
    constexpr int unord_q = 0x03, ord_q = 0x07;
    if (u8) {
      h_.vmaxps(s1, src, consts_.value(0.0f));
      // VPMOVUSDB saturates what is above 255, CVTTPS2DQ's 0x80000000 for 2^31 and more too;
      // AVX2's signed VPACKSSDW would not
      if constexpr (!avx512) h_.vminps(s1, s1, consts_.value(255.0f));
      return h_.vcvttps2dq(s1, s1);
    }
    h_.vmaxps(s1, src, consts_.value(-128.0f));
    h_.vminps(s1, s1, consts_.value(127.0f));
    if constexpr (avx512) {
      const Xbyak::Opmask k2(2);
      h_.vcmpps(k2, src, src, unord_q);
      h_.vxorps(s1 | k2, s1, s1);
    } else {
      h_.vcmpps(s0, src, src, ord_q);
      h_.vandps(s1, s1, s0);
    }
    h_.vcvttps2dq(s1, s1);
  }

  /// bf16 bits of src, rounded to nearest even. AVX-512: in the low words of ymm(s1) (16
  /// words); AVX2: in the top half of each dword of s1 (NaN lanes all ones: 0xffff is a NaN).
  void to_bf16_words(Vmm src) {
    const Vmm s0 = scratch_[0], s1 = scratch_[1];
    constexpr int unord_q = 0x03;
    if constexpr (avx512) {
      const Xbyak::Opmask k2(2);
      if (native_bf16_) {
        Xbyak::Label done;
        h_.vcvtneps2bf16(Xbyak::Ymm(s1.getIdx()), src);
        h_.vfpclassps(k2, src, 0x20); // subnormals: the instruction flushed them to zero
        h_.kmovw(h_.eax, k2);         // half the cost of KORTESTW on Zen 5
        h_.test(h_.eax, h_.eax);
        h_.jz(done);
        round_bf16(s0, src);
        h_.vpsrld(s0, s0, 16);
        h_.vpmovdw(Xbyak::Ymm(s0.getIdx()), s0);
        h_.vmovdqu16(Xbyak::Ymm(s1.getIdx()) | k2, Xbyak::Ymm(s0.getIdx()));
        h_.L(done);
        return;
      }
      round_bf16(s1, src, s0);
      h_.vcmpps(k2, src, src, unord_q); // NaN: keep the top bits, quieted
      h_.vpord(s1 | k2, src, consts_.bits(0x00400000u));
      h_.vpsrld(s1, s1, 16);
      h_.vpmovdw(Xbyak::Ymm(s1.getIdx()), s1);
    } else {
      round_bf16(s1, src, s0);
      h_.vcmpps(s0, src, src, unord_q);
      h_.vpor(s1, s1, s0);
    }
  }

  /// r = src + 0x7fff + (bit 16 of src): the top half is src rounded to nearest even (NaN
  /// lanes are garbage; the caller fixes them). With `tmp`, src + 0x7fff goes there beside the
  /// bit's shift and mask: one step less on the chain.
  void round_bf16(Vmm r, Vmm src, std::optional<Vmm> tmp = std::nullopt) {
    if (tmp) h_.vpaddd(*tmp, src, consts_.bits(0x7fff));
    h_.vpsrld(r, src, 16);
    if constexpr (avx512)
      h_.vpandd(r, r, consts_.bits(1));
    else
      h_.vpand(r, r, consts_.bits(1));
    h_.vpaddd(r, r, tmp ? *tmp : src);
    if (!tmp) h_.vpaddd(r, r, consts_.bits(0x7fff));
  }

  /// AVX2: x = `count` packed elements at `at` (count < lanes; see for_each_piece).
  void gather_bytes(Xbyak::Xmm x, Xbyak::RegExp at, ElementType t, std::int64_t count) {
    h_.vpxor(x, x, x);
    for_each_piece(at, t, count, [&](Xbyak::RegExp where, int bytes, int index) {
      if (bytes == 8)
        h_.vmovq(x, h_.qword[where]);
      else
        insert(x, h_.ptr[where], bytes, index);
    });
  }

  /// AVX2: writes the first `count` packed elements of x to `at` (see for_each_piece).
  void scatter_bytes(Xbyak::RegExp at, Xbyak::Xmm x, ElementType t, std::int64_t count) {
    for_each_piece(at, t, count, [&](Xbyak::RegExp where, int bytes, int index) {
      if (bytes == 8)
        h_.vmovq(h_.qword[where], x);
      else
        extract(h_.ptr[where], x, bytes, index);
    });
  }

  /// Calls f(address, bytes, index in units of `bytes`) for the pieces that cover `count`
  /// packed elements at `at`: 8/4/2/1-byte pieces when the count is known, or one element per
  /// active lane (guarded by the stored tail mask) when it is known only at run time.
  template <class F> void for_each_piece(Xbyak::RegExp at, ElementType t, std::int64_t count, F f) {
    const int size = static_cast<int>(size_of(t));
    if (count == ir::runtime_count) {
      Xbyak::Label done;
      for (int i = 0; i < lanes; ++i) {
        if (i) guard_lane(i, done);
        f(at + i * size, size, i);
      }
      h_.L(done);
      return;
    }
    const int bytes = static_cast<int>(count) * size;
    for (int piece = 8, pos = 0; piece >= 1; piece /= 2)
      if (bytes - pos >= piece) {
        f(at + pos, piece, pos / piece);
        pos += piece;
      }
  }

  /// Jumps to `done` when lane i of the run-time tail mask is off.
  void guard_lane(int i, Xbyak::Label& done) {
    h_.cmp(h_.dword[runtime_mask_ + 4 * i], 0);
    h_.je(done, Xbyak::CodeGenerator::T_NEAR);
  }

  void insert(Xbyak::Xmm x, const Xbyak::Address& m, int bytes, int index) {
    const auto i = static_cast<std::uint8_t>(index);
    if (bytes == 4) h_.vpinsrd(x, x, m, i);
    if (bytes == 2) h_.vpinsrw(x, x, m, i);
    if (bytes == 1) h_.vpinsrb(x, x, m, i);
  }
  void extract(const Xbyak::Address& m, Xbyak::Xmm x, int bytes, int index) {
    const auto i = static_cast<std::uint8_t>(index);
    if (bytes == 4) h_.vpextrd(m, x, i);
    if (bytes == 2) h_.vpextrw(m, x, i);
    if (bytes == 1) h_.vpextrb(m, x, i);
  }

  Xbyak::CodeGenerator& h_;
  ConstantTable& consts_;
  std::span<const Vmm> scratch_;
  bool native_bf16_;
  Xbyak::RegExp runtime_mask_;
};

} // namespace snippets::x64
