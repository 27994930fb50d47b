// SPDX-License-Identifier: Apache-2.0
// snippets/target/x64/emitters/brgemm_copy_b.hpp: the code of BrgemmCopyB, B copied into the
// panel order the Brgemm reads (brgemm.hpp; the layout is ir::BrgemmShape's).
//
// Rows of each panel contiguous, zero past N: a bf16 B widened to f32, or interleaved into
// pairs (VPMOVZXWD of two rows, the second shifted up); a B whose columns are contiguous is
// transposed in registers (pairs: as dwords), other strides are gathered (f32 only). Quads:
// four rows of an i8 B along its rows are read as int32s, masked to their bytes and shifted
// into the dwords of a panel row; their sums make the compensation row. An i8 B read along its
// columns (K in attention) has a column's four bytes together: gathered as dwords (the last
// K % 4 bytes, and words, byte by byte). With BrgemmCopyB::column_range a call packs only its
// panels. Copy-B runs alone: every vector register is free.
#pragma once

#include "snippets/ir/linear_ir.hpp"
#include "snippets/target/x64/emitters/brgemm_frame.hpp"

namespace snippets::x64 {

template <class T, class Vmm> class BrgemmCopyBEmitter : BrgemmFrame<Vmm> {
  using Base = BrgemmFrame<Vmm>;
  using Base::avx512, Base::lanes, Base::h_, Base::consts_, Base::data_, Base::t_;
  using Base::bitwise_and, Base::bitwise_or, Base::bitwise_xor, Base::frame;
  using Base::dot_bytes;
  using Base::take_temps, Base::release_temps, Base::each_panel, Base::repeat, Base::load;

public:
  BrgemmCopyBEmitter(Xbyak::CodeGenerator& h, ConstantTable& consts, std::span<const Vmm> scratch,
                     std::span<const Xbyak::Reg64> data, std::span<const Xbyak::Reg64> pool,
                     bool native_bf16)
      : Base(h, consts, scratch, data, pool, native_bf16) {}

  void emit(const ir::Expression<T>& e, const ir::BrgemmCopyB& c) {
    const ir::BrgemmShape& s = c.shape;
    if (s.k == 0) return; // depth 0: B is never read (see emit)
    const Xbyak::Reg64 src = data_[e.input_expr(0).data_index], dst = data_[c.b_pointer];
    take_temps({src, dst});
    const Xbyak::Reg64 from = t_[0], to = t_[2];
    h_.mov(from, src);
    h_.lea(to, h_.ptr[dst + static_cast<int>(c.b_offset * 4)]);
    const std::int64_t w = s.panel_width();
    each_panel(s, c.column_range, [&](std::int64_t width) {
      if ((s.quads || s.words) && s.b_depth == 1 && s.b_col != 1)
        transposed_integer_panel(s, width);
      else if (s.quads || s.words)
        integer_panel(s, width);
      else if (s.b_depth == 1 && s.b_col != 1)
        transposed_panel(s, width);
      else
        row_panel(s, width);
      h_.add(to, static_cast<int>(s.panel_rows() * w * 4));
      h_.add(from, static_cast<int>(w * s.b_col * std::int64_t(size_of(s.b_type))));
    });
    release_temps();
  }

private:
  /// One panel of `width` columns of B read depth after depth (or pair after pair). Registers:
  /// t_[0] B at the panel, t_[1] its depth, t_[2] the panel, t_[3] the panel row, t_[4] the
  /// counter; copy-B runs alone, so every vector register is free.
  void row_panel(const ir::BrgemmShape& s, std::int64_t width) {
    const Xbyak::Reg64 from = t_[0], row = t_[1], to = t_[2], dst = t_[3], depth = t_[4];
    const std::int64_t bytes = std::int64_t(size_of(s.b_type)), step = s.pairs ? 2 : 1;
    h_.mov(row, from);
    h_.mov(dst, to);
    auto panel_row = [&](bool two) { // two: a second depth (pairs)
      for (int j = 0; j < s.n_r; ++j) {
        const Vmm regs[2] = {Vmm(j), Vmm(s.n_r + j)};
        const std::int64_t valid = std::clamp<std::int64_t>(width - j * lanes, 0, lanes);
        const Xbyak::RegExp at = row + static_cast<int>(j * lanes * s.b_col * bytes);
        if (valid == 0)
          h_.vxorps(regs[0], regs[0], regs[0]);
        else if (s.pairs)
          load_pair(regs[0], regs[1], at, two ? s.b_depth * bytes : 0, valid);
        else if (s.b_col == 1)
          load(regs[0], at, valid, s.b_type);
        else // f32 (LowerBrgemm)
          gather(h_, consts_, regs[0], at, s.b_col, valid, Vmm(avx512 ? 31 : 15),
                 Vmm(avx512 ? 30 : 14));
        h_.vmovups(h_.ptr[dst + static_cast<int>(j * lanes * 4)], regs[0]);
      }
      h_.add(dst, static_cast<int>(s.panel_width() * 4));
      h_.add(row, static_cast<int>(step * s.b_depth * bytes));
    };
    repeat(depth, s.k / step, [&] { panel_row(true); });
    if (s.k % step) panel_row(false);
  }

  /// One panel of `width` columns of an i8 B read along its rows (b_col 1), in quads (words):
  /// each panel row is four (two) depths of B as the bytes (16-bit words) of its dwords, zero
  /// past K and past `width`, and with compensated() a last row holds -a_offset() x each
  /// column's sum. Registers as row_panel; vectors: v0.. the panel row, v4.. the sums, v8 a row
  /// of B as int32.
  void integer_panel(const ir::BrgemmShape& s, std::int64_t width) {
    const int per_row = s.depths_per_row(), bits = 32 / per_row;
    const Xbyak::Reg64 from = t_[0], row = t_[1], to = t_[2], dst = t_[3], depth = t_[4];
    const Vmm tmp(8);
    h_.mov(row, from);
    h_.mov(dst, to);
    for (int j = 0; j < s.n_r; ++j) bitwise_xor(Vmm(4 + j), Vmm(4 + j), Vmm(4 + j));
    auto panel_row = [&](int depths) { // the next `depths` (1 to per_row) rows of B
      for (int j = 0; j < s.n_r; ++j) {
        const Vmm acc(j), sum(4 + j);
        const std::int64_t valid = std::clamp<std::int64_t>(width - j * lanes, 0, lanes);
        bitwise_xor(acc, acc, acc);
        for (int i = 0; i < depths && valid; ++i) {
          load(tmp, row + static_cast<int>(i * s.b_depth + j * lanes), valid, s.b_type);
          h_.vcvtps2dq(tmp, tmp); // the bytes' values, exact in f32
          if (s.compensated()) h_.vpaddd(sum, sum, tmp);
          bitwise_and(tmp, tmp, consts_.bits(per_row == 4 ? 0xffu : 0xffffu));
          if (i) h_.vpslld(tmp, tmp, bits * i);
          bitwise_or(acc, acc, tmp);
        }
        h_.vmovups(h_.ptr[dst + static_cast<int>(j * lanes * 4)], acc);
      }
      h_.add(dst, static_cast<int>(s.panel_width() * 4));
      h_.add(row, static_cast<int>(per_row * s.b_depth));
    };
    repeat(depth, s.k / per_row, [&] { panel_row(per_row); });
    if (s.k % per_row) panel_row(static_cast<int>(s.k % per_row));
    if (!s.compensated()) return;
    for (int j = 0; j < s.n_r; ++j) { // dst is at the compensation row: -a_offset x sum
      const Vmm sum(4 + j);
      h_.vpmulld(sum, sum, consts_.bits(0u - static_cast<std::uint32_t>(s.a_offset())));
      h_.vmovups(h_.ptr[dst + static_cast<int>(j * lanes * 4)], sum);
    }
  }
  /// One panel of `width` columns of an i8 B whose depths are contiguous (a transposed B: K
  /// in attention), in quads (words): the four (two) bytes of a column that make a dword of a
  /// panel row lie together, so quads gather them as dwords (VPGATHERDD, the columns' byte
  /// offsets); the last K % 4 depths, and words (sign-extended), move byte by byte through eax,
  /// never past B. Then the compensation row, from the packed panel. Registers as row_panel
  /// but t_[4] assembles a dword (the depth counter is on the stack).
  void transposed_integer_panel(const ir::BrgemmShape& s, std::int64_t width) {
    const int per_row = s.depths_per_row(), bits = 32 / per_row;
    const Xbyak::Reg64 from = t_[0], row = t_[1], to = t_[2], dst = t_[3];
    const Xbyak::Reg32 word = t_[4].cvt32();
    const std::int64_t w = s.panel_width(), full = s.k / per_row, rest = s.k % per_row;
    const Vmm index(8), mask(9);
    h_.mov(row, from);
    h_.mov(dst, to);
    auto bytes_row = [&](int depths) { // one panel row, byte by byte
      for (std::int64_t l = 0; l < w; ++l) {
        h_.xor_(word, word);
        for (int d = 0; d < depths && l < width; ++d) {
          const Xbyak::Address at = h_.byte[row + static_cast<int>(l * s.b_col + d)];
          if (per_row == 4) {
            h_.movzx(h_.eax, at);
          } else {
            h_.movsx(h_.eax, at);
            h_.and_(h_.eax, 0xffff);
          }
          if (d) h_.shl(h_.eax, bits * d);
          h_.or_(word, h_.eax);
        }
        h_.mov(h_.dword[dst + static_cast<int>(l * 4)], word);
      }
    };
    auto gather_row = [&] { // quads: each column's four bytes as a dword
      for (int j = 0; j < s.n_r; ++j) {
        const Vmm v(j);
        const std::int64_t valid = std::clamp<std::int64_t>(width - j * lanes, 0, lanes);
        bitwise_xor(v, v, v);
        if (valid == 0) {
          h_.vmovups(h_.ptr[dst + static_cast<int>(j * lanes * 4)], v);
          continue;
        }
        h_.vmovups(index, consts_.lane_offsets(static_cast<std::int32_t>(s.b_col)));
        const Xbyak::RegExp at = row + static_cast<int>(j * lanes * s.b_col);
        if constexpr (avx512) {
          if (valid == lanes)
            h_.kxnorw(Xbyak::Opmask(1), Xbyak::Opmask(1), Xbyak::Opmask(1));
          else
            set_tail_mask(h_, consts_, mask, valid);
          h_.vpgatherdd(v | Xbyak::Opmask(1), h_.ptr[at + index]);
        } else {
          if (valid == lanes)
            h_.vpcmpeqd(mask, mask, mask);
          else
            set_tail_mask(h_, consts_, mask, valid);
          h_.vpgatherdd(v, h_.ptr[at + index], mask);
        }
        h_.vmovups(h_.ptr[dst + static_cast<int>(j * lanes * 4)], v);
      }
    };
    repeat_on_stack(full, [&] {
      if (per_row == 4)
        gather_row();
      else
        bytes_row(per_row);
      h_.add(dst, static_cast<int>(w * 4));
      h_.add(row, per_row);
    });
    if (rest) {
      bytes_row(static_cast<int>(rest));
      h_.add(dst, static_cast<int>(w * 4));
    }
    if (!s.compensated()) return;
    // the column sums of the packed rows: each dword's bytes (words) times 1, added up
    const Vmm x(8), ones(9);
    for (int j = 0; j < s.n_r; ++j) bitwise_xor(Vmm(4 + j), Vmm(4 + j), Vmm(4 + j));
    h_.vmovups(ones, consts_.bits(per_row == 4 ? 0x01010101u : 0x00010001u));
    h_.mov(row, to);
    repeat_on_stack(s.depth_rows(), [&] {
      for (int j = 0; j < s.n_r; ++j) {
        h_.vmovups(x, h_.ptr[row + static_cast<int>(j * lanes * 4)]);
        if (per_row == 4) {
          dot_bytes(Vmm(4 + j), ones, x);
        } else {
          h_.vpmaddwd(x, x, ones);
          h_.vpaddd(Vmm(4 + j), Vmm(4 + j), x);
        }
      }
      h_.add(row, static_cast<int>(w * 4));
    });
    for (int j = 0; j < s.n_r; ++j) { // dst is at the compensation row: -a_offset x sum
      const Vmm sum(4 + j);
      h_.vpmulld(sum, sum, consts_.bits(0u - static_cast<std::uint32_t>(s.a_offset())));
      h_.vmovups(h_.ptr[dst + static_cast<int>(j * lanes * 4)], sum);
    }
  }
  /// Emits `body` `count` times, counted down in the frame's second slot (copy-B has no tile).
  template <class F> void repeat_on_stack(std::int64_t count, F&& body) {
    if (count == 0) return;
    h_.mov(h_.qword[h_.rsp + 8], static_cast<std::uint32_t>(count));
    Xbyak::Label next;
    h_.L(next);
    body();
    h_.dec(h_.qword[h_.rsp + 8]);
    h_.jnz(next, Xbyak::CodeGenerator::T_NEAR);
  }

  /// v = `count` dwords (zero past them), each the bf16 at `at` in its low half and (second >
  /// 0) the one `second` bytes on in its high half. AVX-512 only (pairs need AVX512_BF16).
  void load_pair([[maybe_unused]] Vmm v, [[maybe_unused]] Vmm high,
                 [[maybe_unused]] Xbyak::RegExp at, [[maybe_unused]] std::int64_t second,
                 [[maybe_unused]] std::int64_t count) {
    if constexpr (avx512) {
      using Xbyak::Opmask;
      if (count < lanes) set_tail_mask(h_, consts_, v, count);
      auto widen = [&](Vmm d, Xbyak::RegExp where) {
        if (count == lanes)
          h_.vpmovzxwd(d, h_.ptr[where]);
        else
          h_.vpmovzxwd(d | Opmask(1) | Xbyak::util::T_z, h_.ptr[where]);
      };
      widen(v, at);
      if (second == 0) return;
      widen(high, at + static_cast<int>(second));
      h_.vpslld(high, high, 16);
      h_.vpord(v, v, high);
    } else {
      SNIPPETS_ASSERT(false) << "bf16 pairs on AVX2";
    }
  }

  /// One panel of a B whose columns are contiguous along the depth (a transposed B, such as
  /// K in attention): blocks of `lanes` columns x `lanes` depths (pairs: dwords of two depths)
  /// are loaded as rows, transposed in registers and stored as panel rows. Registers: t_[0] B
  /// at the panel, t_[1] the block's rows, t_[2] the panel, t_[3] the block's destination,
  /// t_[4] the depth counter.
  void transposed_panel(const ir::BrgemmShape& s, std::int64_t width) {
    const Xbyak::Reg64 from = t_[0], row = t_[1], to = t_[2], dst = t_[3], depth = t_[4];
    const ElementType t = s.pairs ? ElementType::f32 : s.b_type; // pairs move as 4-byte bits
    const std::int64_t column = s.b_col * std::int64_t(size_of(s.b_type));
    const std::int64_t w = s.panel_width(), rows = s.panel_rows(), blocks = rows / lanes,
                       rest = rows % lanes, unit = std::int64_t(size_of(t));
    for (int g = 0; g < s.n_r; ++g) {
      const std::int64_t valid = std::clamp<std::int64_t>(width - g * lanes, 0, lanes);
      h_.lea(row, h_.ptr[from + static_cast<int>(g * lanes * column)]);
      h_.lea(dst, h_.ptr[to + static_cast<int>(g * lanes * 4)]);
      repeat(depth, blocks, [&] {
        transpose_block(column, t, valid, lanes, w);
        h_.add(row, static_cast<int>(lanes * unit));
        h_.add(dst, static_cast<int>(lanes * w * 4));
      });
      if (rest) transpose_block(column, t, valid, rest, w);
    }
  }

  /// `columns` columns (`column` bytes apart; the rest zero) x `depths` elements of type `t`
  /// at t_[1], transposed into `depths` panel rows at t_[3] (`w` floats apart). AVX-512: a
  /// 16 x 16 transpose in v0..31 (unpack ps, unpack pd, two 128-bit shuffles); AVX2: 8 x 8 in
  /// v0..15 (unpack ps, unpack pd, 128-bit permute).
  void transpose_block(std::int64_t column, ElementType t, std::int64_t columns,
                       std::int64_t depths, std::int64_t w) {
    Vmm r[lanes], tmp[lanes];
    for (int i = 0; i < lanes; ++i) r[i] = Vmm(i), tmp[i] = Vmm(lanes + i);
    for (int i = 0; i < lanes; ++i) {
      const Xbyak::RegExp at = t_[1] + static_cast<int>(i * column);
      if (i >= columns)
        h_.vxorps(r[i], r[i], r[i]);
      else
        load(r[i], at, depths, t, tmp[0]);
    }
    const Vmm* out = transpose(r, tmp);
    for (int j = 0; j < static_cast<int>(depths); ++j)
      h_.vmovups(h_.ptr[t_[3] + static_cast<int>(j * w * 4)], out[j]);
  }

  /// Transposes the lanes x lanes block in r (tmp: as many temporaries); returns where the
  /// rows of the result are.
  const Vmm* transpose(Vmm* r, Vmm* t) {
    for (int i = 0; i < lanes / 2; ++i) {
      h_.vunpcklps(t[2 * i], r[2 * i], r[2 * i + 1]);
      h_.vunpckhps(t[2 * i + 1], r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < lanes / 4; ++i) {
      h_.vunpcklpd(r[4 * i], t[4 * i], t[4 * i + 2]);
      h_.vunpckhpd(r[4 * i + 1], t[4 * i], t[4 * i + 2]);
      h_.vunpcklpd(r[4 * i + 2], t[4 * i + 1], t[4 * i + 3]);
      h_.vunpckhpd(r[4 * i + 3], t[4 * i + 1], t[4 * i + 3]);
    }
    if constexpr (avx512) {
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 4; ++j) {
          h_.vshuff32x4(t[8 * i + j], r[8 * i + j], r[8 * i + j + 4], 0x88);
          h_.vshuff32x4(t[8 * i + j + 4], r[8 * i + j], r[8 * i + j + 4], 0xdd);
        }
      for (int j = 0; j < 8; ++j) {
        h_.vshuff32x4(r[j], t[j], t[j + 8], 0x88);
        h_.vshuff32x4(r[j + 8], t[j], t[j + 8], 0xdd);
      }
      return r;
    } else {
      for (int j = 0; j < 4; ++j) {
        h_.vperm2f128(t[j], r[j], r[j + 4], 0x20);
        h_.vperm2f128(t[j + 4], r[j], r[j + 4], 0x31);
      }
      return t;
    }
  }
};

} // namespace snippets::x64
