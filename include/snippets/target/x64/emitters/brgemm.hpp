// SPDX-License-Identifier: Apache-2.0
// snippets/target/x64/emitters/brgemm.hpp: the code of Brgemm and BrgemmCopyB (the blocking
// and the packed layout of B are in passes/lower_brgemm.hpp and ir::BrgemmShape).
//
// Brgemm: for each panel of B (n_r vectors of columns; with Brgemm::column_range only the
// call's, CallArgs::work[1] columns from CallArgs::inner_begin), for each tile of m_r rows of the
// block, the micro-kernel keeps m_r x n_r accumulators in vector registers v0.. and walks the
// depth: it loads the panel's n_r vectors of that depth, broadcasts one element of A per row and
// issues m_r x n_r FMAs. A bf16 A is widened as it is broadcast (VPBROADCASTW, shift). With
// bf16 pairs (BrgemmShape::pairs) a step covers two depths: A's pair is broadcast as a dword
// and VDPBF16PS adds both products to each f32 lane (it treats subnormal bf16 inputs and
// results as zero); an odd last depth is a pair with a zero second half, read through eax.
// With quads (BrgemmShape::quads, u8/i8 A times i8 B) a step covers four depths: A's four
// bytes are broadcast as a dword (the last K % 4 through eax, zero above them; an i8 A has
// its sign bits flipped, which adds 128) and VPDPBUSD (EVEX on AVX-512, VEX from AVX-VNNI on
// AVX2) adds the four products of each int32 lane; the sums start from zero or from the
// panel's compensation row (-BrgemmShape::a_offset() x B's column sums: the 128 added to an
// i8 A, and A's zero point). With words (BrgemmShape::words, no VNNI) a step covers two
// depths: A's two bytes widened to 16-bit words and broadcast as a dword, VPMADDWD into a
// temporary and VPADDD to the sums. Before the epilogue the int32 sums go to the Stores of i32
// outputs as they are (exact), then become f32 (VCVTDQ2PS, rounded to nearest even as the
// reference's Convert) for the other ops.
// Then the epilogue runs on each accumulator in turn (the ops' emitters
// on vector temporaries above the tile, as EpiloguePlan assigns them; inputs and scalars are
// read for each accumulator) and the Stores write the results. Columns past N in the last
// panel are masked (k1 on AVX-512; VMASKMOVPS with a mask in the first scratch register on
// AVX2; memory_access.hpp), so no byte past a tensor is touched. Inputs and outputs of other
// types than f32 convert as in element-wise kernels (MemoryAccess).
// General-purpose registers: the emitter pushes the five it works with and every output and
// input pointer it moves, and pops them at the end; its two loop counters live on the stack.
// BrgemmCopyB: copies B into panel order, rows of each panel contiguous, zero past N (a bf16
// B widened to f32, or interleaved into pairs: VPMOVZXWD of two rows, the second shifted up);
// a B whose columns are contiguous is transposed in registers (pairs: as dwords), other
// strides are gathered (f32 only). Quads: four rows of an i8 B along its rows are read as
// int32s, masked to their bytes and shifted into the dwords of a panel row; their sums make the
// compensation row. An i8 B read along its columns (K in attention) has a column's four bytes
// together: gathered as dwords (the last K % 4 bytes, and words, byte by byte).
#pragma once

#include <algorithm>
#include <map>
#include <vector>

#include "snippets/ir/linear_ir.hpp"
#include "snippets/passes/brgemm_blocking.hpp"
#include "snippets/runtime/kernel_abi.hpp"
#include "snippets/target/x64/emitters/emitter.hpp"
#include "snippets/target/x64/memory_access.hpp"

namespace snippets::x64 {

template <class T, class Vmm> class BrgemmEmitter {
  using E = ir::Expression<T>;
  static constexpr bool avx512 = std::is_same_v<Vmm, Xbyak::Zmm>;
  static constexpr int lanes = avx512 ? 16 : 8;

public:
  /// `data`: the data pointer of each argument and buffer; `pool`: every general-purpose
  /// register the kernel may use (the emitter saves what it takes); `scratch`: the emitters'
  /// scratch registers (the top ones).
  /// `types`: the element type of each kernel argument.
  BrgemmEmitter(Xbyak::CodeGenerator& h, ConstantTable& consts, std::span<const Vmm> scratch,
                std::span<const Xbyak::Reg64> data, std::span<const Xbyak::Reg64> pool,
                std::span<const ElementType> types, bool native_bf16)
      : h_(h), consts_(consts), scratch_(scratch), data_(data), pool_(pool), types_(types),
        native_bf16_(native_bf16) {}

  void emit(const E& e, const ir::Brgemm& b, std::span<E* const> epilogue) {
    const ir::BrgemmShape& s = b.shape;
    a_ = data_[e.input_expr(0).data_index];
    moved_.clear();
    std::vector<Xbyak::Reg64> operands{a_};
    // depth 0: B is never read, and its scratch (data pointer b_pointer) may not exist
    if (!b.b_packed && s.k != 0) operands.push_back(data_[b.b_pointer]);
    for (const E* x : epilogue) {
      if (const auto* st = std::get_if<ir::Store>(&x->op))
        add_moved(data_[x->data_index], passes::ProductStrides(x->out_desc(0)), st->type);
      for (std::size_t i = 0; i < x->num_inputs(); ++i)
        if (const E& in = x->input_expr(i); std::holds_alternative<ir::Parameter>(in.op))
          add_moved(data_[in.data_index], passes::ProductStrides(x->in_desc(i)),
                    types_[in.data_index]);
    }
    if (b.row_scales >= 0) moved_.push_back({a_, 1, 0, 4}); // the scale of each row, next to A
    for (const auto& m : moved_) operands.push_back(m.reg);
    take_temps(operands);
    // A where the block starts: a_ may also be the pointer of a Store (an MLP stage reading and
    // writing the scratch), which the panel loop moves along the columns
    h_.mov(h_.qword[h_.rsp + a_slot], a_);
    plan_ = std::make_unique<passes::EpiloguePlan<T>>(e, epilogue);
    brgemm_ = &e;
    epilogue_ = epilogue;
    a_offset_ = static_cast<int>(b.a_offset * std::int64_t(size_of(s.a_type)));
    row_scales_ = b.row_scales;
    integer_ = s.quads || s.words;

    if (s.k == 0) // depth 0: B is never read (its panels have no rows, and no scratch)
      h_.xor_(b_panel(), b_panel());
    else if (b.b_packed)
      h_.mov(b_panel(), reinterpret_cast<std::uint64_t>(b.b_packed->data()));
    else
      h_.lea(b_panel(), h_.ptr[data_[b.b_pointer] + static_cast<int>(b.b_offset * 4)]);
    const std::int64_t w = s.panel_width();
    if (b.column_range && b.b_packed && s.k != 0) { // the call's first panel: begin / w
      using Xbyak::util::rax;
      h_.mov(rax, h_.ptr[Xbyak::util::rdi + static_cast<int>(offsetof(CallArgs, inner_begin))]);
      h_.imul(rax, rax, static_cast<int>(s.panel_rows() * 4));
      h_.add(b_panel(), rax);
    }
    each_panel(s, b.column_range, [&](std::int64_t width) {
      if (width < w) return emit_panel(b, static_cast<int>((width + lanes - 1) / lanes), width);
      emit_panel(b, s.n_r, w);
      h_.add(b_panel(), static_cast<int>(s.panel_rows() * w * 4));
      for (const auto& m : moved_)
        if (m.col) h_.add(m.reg, static_cast<int>(w * m.col * m.bytes));
    });
    release_temps();
  }

  void emit_copy_b(const E& e, const ir::BrgemmCopyB& c) {
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

  /// One panel of `width` columns (n_v vectors) for all rows of the block.
  void emit_panel(const ir::Brgemm& b, int n_v, std::int64_t width) {
    const ir::BrgemmShape& s = b.shape;
    h_.mov(t_[0], h_.qword[h_.rsp + a_slot]);
    if (a_offset_) h_.add(t_[0], a_offset_);
    const std::int64_t a_bytes = std::int64_t(size_of(s.a_type));
    const std::int64_t tiles = b.m / s.m_r, rest = b.m % s.m_r;
    if (tiles) {
      h_.mov(h_.qword[h_.rsp + 8], static_cast<std::uint32_t>(tiles));
      Xbyak::Label tile;
      h_.L(tile);
      emit_tile(s, s.m_r, n_v, width);
      h_.add(t_[0], static_cast<int>(s.m_r * s.a_row * a_bytes));
      for (const auto& m : moved_)
        if (m.row) h_.add(m.reg, static_cast<int>(s.m_r * m.row * m.bytes));
      h_.dec(h_.qword[h_.rsp + 8]);
      h_.jnz(tile, Xbyak::CodeGenerator::T_NEAR);
    }
    if (rest) emit_tile(s, static_cast<int>(rest), n_v, width);
    for (const auto& m : moved_)
      if (m.row && tiles) h_.sub(m.reg, static_cast<int>(tiles * s.m_r * m.row * m.bytes));
  }

  /// The micro-kernel for rows x n_v vectors, then its epilogue.
  void emit_tile(const ir::BrgemmShape& s, int rows, int n_v, std::int64_t width) {
    // Registers as array elements, as the kernel emitter passes them: GCC 12 at -O3 follows
    // Xbyak's Operand -> Address cast and reports false -Warray-bounds on a lone register.
    SNIPPETS_ASSERT(n_v <= 4 && rows * n_v <= 32) << "tile " << rows << " x " << n_v;
    Vmm accs[32], b[5]; // b: the panel's vectors, then the broadcast of A
    for (int i = 0; i < rows * n_v; ++i) accs[i] = Vmm(i);
    for (int j = 0; j <= n_v; ++j) b[j] = Vmm(rows * n_v + j);
    const Vmm& bcast = b[n_v];
    for (int i = 0; i < rows * n_v; ++i) // the compensation row: the same for every row
      if (s.compensated())
        h_.vmovups(
            accs[i],
            h_.ptr[b_panel() +
                   static_cast<int>((s.depth_rows() * s.panel_width() + (i % n_v) * lanes) * 4)]);
      else
        h_.vxorps(accs[i], accs[i], accs[i]);
    const Xbyak::Reg64 a = t_[1], bk = t_[3], depth = t_[4];
    const std::int64_t a_bytes = std::int64_t(size_of(s.a_type));
    h_.mov(a, t_[0]);
    h_.mov(bk, b_panel());
    // one panel row: a depth, a pair of depths or a quad; `last`: the depths of a last pair or
    // quad that K leaves short (0: a whole one)
    const Vmm product(rows * n_v + n_v + 1); // words: VPMADDWD's, then added
    auto step = [&](int last) {
      for (int j = 0; j < n_v; ++j) h_.vmovups(b[j], h_.ptr[bk + j * lanes * 4]);
      for (int r = 0; r < rows; ++r) {
        broadcast_a(bcast, a + static_cast<int>(r * s.a_row * a_bytes), s, last);
        for (int j = 0; j < n_v; ++j)
          if (s.quads) {
            dot_bytes(accs[r * n_v + j], bcast, b[j]);
          } else if (s.words) {
            h_.vpmaddwd(product, bcast, b[j]);
            h_.vpaddd(accs[r * n_v + j], accs[r * n_v + j], product);
          } else if (s.pairs) {
            h_.vdpbf16ps(accs[r * n_v + j], b[j], bcast);
          } else {
            h_.vfmadd231ps(accs[r * n_v + j], b[j], bcast);
          }
      }
    };
    const int per_step = s.depths_per_row();
    repeat(depth, s.k / per_step, [&] {
      step(0);
      h_.add(a, static_cast<int>((per_step > 1 ? per_step : s.a_depth) * a_bytes));
      h_.add(bk, static_cast<int>(s.panel_width() * 4));
    });
    if (s.k % per_step) step(static_cast<int>(s.k % per_step));
    if (row_scales_ >= 0) // A's rows were left unnormalised: the scale of each row, once
      for (int r = 0; r < rows; ++r) {
        h_.vbroadcastss(bcast, h_.ptr[a_ + static_cast<int>((row_scales_ + r) * 4)]);
        for (int j = 0; j < n_v; ++j) h_.vmulps(accs[r * n_v + j], accs[r * n_v + j], bcast);
      }
    hoist_scalars(rows * n_v + plan_->peak);
    for (int r = 0; r < rows; ++r)
      for (int j = 0; j < n_v; ++j) {
        const std::int64_t count = std::min<std::int64_t>(lanes, width - j * lanes);
        emit_epilogue(accs[r * n_v + j], r, j, count, rows * n_v);
      }
  }

  /// acc += the four products of the bytes of a (unsigned) and b (signed) in each dword.
  void dot_bytes(Vmm acc, Vmm a, Vmm b) {
    h_.vpdpbusd(acc, a, b, avx512 ? Xbyak::EvexEncoding : Xbyak::VexEncoding);
  }

  /// dst = A's element at `at` as f32 in every lane; with pairs, A's two depths at `at` as a
  /// dword (`last` 1: the last depth alone, the high half zero, through eax); with quads, A's
  /// four bytes as a dword (`last` 1 to 3: only those, the rest zero), an i8 A plus 128.
  void broadcast_a(Vmm dst, Xbyak::RegExp at, const ir::BrgemmShape& s, int last) {
    const bool half = last != 0;
    if (s.words) { // A's two bytes (the last depth alone, the other zero) widened to words
      const Xbyak::Xmm low(dst.getIdx());
      if (last == 0)
        h_.movzx(h_.eax, h_.word[at]);
      else
        h_.movzx(h_.eax, h_.byte[at]);
      h_.vmovd(low, h_.eax);
      if (s.a_type == ElementType::i8)
        h_.vpmovsxbw(low, low);
      else
        h_.vpmovzxbw(low, low);
      h_.vpbroadcastd(dst, low);
      return;
    }
    if (s.quads) {
      const Xbyak::Xmm low(dst.getIdx());
      if (last == 0) {
        h_.vpbroadcastd(dst, h_.dword[at]);
      } else {
        if (last == 1)
          h_.movzx(h_.eax, h_.byte[at]);
        else
          h_.movzx(h_.eax, h_.word[at]);
        h_.vmovd(low, h_.eax);
        if (last == 3) h_.vpinsrb(low, low, h_.byte[at + 2], 2);
        h_.vpbroadcastd(dst, low);
      }
      if (s.a_type == ElementType::i8) { // the sign bit flipped: A + 128, as u8
        if (last == 0)
          bitwise_xor(dst, dst, consts_.bits(0x80808080u));
        else // the depths past K stay zero
          bitwise_xor(dst, dst, consts_.bits(0x80808080u >> (8 * (4 - last))));
      }
      return;
    }
    if (s.pairs && half) {
      h_.movzx(h_.eax, h_.word[at]);
      h_.vpbroadcastd(dst, h_.eax);
    } else if (s.pairs) {
      h_.vpbroadcastd(dst, h_.dword[at]);
    } else if (s.a_type == ElementType::bf16) {
      h_.vpbroadcastw(dst, h_.word[at]);
      h_.vpslld(dst, dst, 16);
    } else {
      h_.vbroadcastss(dst, h_.dword[at]);
    }
  }

  /// The epilogue's Scalars in the vector registers free above its temporaries (from `first`
  /// up to the scratch registers), as many as fit: loaded once for the tile's accumulators
  /// instead of once for each (the emitters only read their inputs).
  void hoist_scalars(int first) {
    hoisted_.clear();
    int end = avx512 ? 32 : 16;
    for (const Vmm& v : scratch_) end = std::min(end, v.getIdx());
    for (const E* x : epilogue_)
      for (std::size_t i = 0; i < x->num_inputs() && first < end; ++i) {
        const E& src = x->input_expr(i);
        const auto* sc = std::get_if<ir::Scalar>(&src.op);
        if (!sc || hoisted_.count(&src)) continue;
        hoisted_.emplace(&src, Vmm(first));
        h_.vmovups(Vmm(first++), consts_.value(to_f32(sc->value)));
      }
  }

  /// The epilogue on one accumulator: row r of the tile, vector j of the panel.
  void emit_epilogue(Vmm accumulator, int r, int j, std::int64_t count, int first_temp) {
    auto temp = [&](int t) { return Vmm(first_temp + t); };
    auto store_at = [&](const E& x, const ir::Store& st) -> Xbyak::RegExp {
      const std::int64_t row = passes::ProductStrides(x.out_desc(0)).row;
      return data_[x.data_index] +
             static_cast<int>((st.offset + r * row + j * lanes) * std::int64_t(size_of(st.type)));
    };
    if (integer_) { // int32 sums: stored as they are where an i32 output takes them, then f32
      for (const E* x : epilogue_)
        if (raw_store(*x))
          store(store_at(*x, std::get<ir::Store>(x->op)), accumulator, count,
                ElementType::f32); // (the bits as they are)
      h_.vcvtdq2ps(accumulator, accumulator);
    }
    for (const E* x : epilogue_) {
      auto value = [&](std::size_t i) {
        const E* src = &x->input_expr(i);
        const bool sums = src == brgemm_ || (integer_ && sums_as_i32(*src));
        return sums ? accumulator : temp(plan_->temp.at(src));
      };
      if (integer_ && (raw_store(*x) || sums_as_i32(*x))) continue;
      if (const auto* st = std::get_if<ir::Store>(&x->op)) {
        store(store_at(*x, *st), value(0), count, st->type);
        continue;
      }
      Vmm in[4];
      SNIPPETS_ASSERT(x->num_inputs() <= 4) << x->name;
      for (std::size_t i = 0; i < x->num_inputs(); ++i) {
        if (const auto h = hoisted_.find(&x->input_expr(i)); h != hoisted_.end()) {
          in[i] = h->second;
          continue;
        }
        const auto it = plan_->loaded.find({x, i});
        if (it == plan_->loaded.end()) {
          in[i] = value(i);
          continue;
        }
        in[i] = temp(it->second);
        read_operand(in[i], *x, i, r, j, count);
      }
      EmitContext<Vmm> ctx{h_, consts_, scratch_};
      const Vmm dst = temp(plan_->temp.at(x));
      std::visit(
          [&](const auto& tag) {
            using Tag = std::decay_t<decltype(tag)>;
            if constexpr (HasEmitter<Tag>)
              Emitter<Tag>::emit(ctx, tag, dst, std::span<const Vmm>(in, x->num_inputs()));
            else
              SNIPPETS_ASSERT(false) << Tag::name << " in a Brgemm epilogue has no emitter";
          },
          x->op);
    }
  }

  /// A Store of an i32 output of an integer product's sums, or of their Convert to i32 (which
  /// changes nothing): it takes the int32 accumulator as it is, exact beyond f32's 2^24.
  bool raw_store(const E& x) const {
    const auto* st = std::get_if<ir::Store>(&x.op);
    if (!st || st->type != ElementType::i32) return false;
    const E* src = &x.input_expr(0);
    return src == brgemm_ || sums_as_i32(*src);
  }

  /// The Convert(i32) of an integer product's sums (AlignElementTypes): their VCVTDQ2PS is
  /// already an integer within [-2^31, 2^31] and not NaN, what that Convert would make of it.
  bool sums_as_i32(const E& x) const {
    const auto* c = std::get_if<ir::Convert>(&x.op);
    return c && c->to == ElementType::i32 && &x.input_expr(0) == brgemm_;
  }

  /// A Scalar, or the input's elements at row r, vector j of the tile.
  void read_operand(Vmm dst, const E& x, std::size_t i, int r, int j, std::int64_t count) {
    const E& src = x.input_expr(i);
    if (const auto* sc = std::get_if<ir::Scalar>(&src.op)) {
      h_.vmovups(dst, consts_.value(to_f32(sc->value)));
      return;
    }
    const passes::ProductStrides st(x.in_desc(i));
    const ElementType t = types_[src.data_index];
    const Xbyak::RegExp at =
        data_[src.data_index] +
        static_cast<int>((r * st.row + j * lanes * st.col) * std::int64_t(size_of(t)));
    if (st.col != 0)
      load(dst, at, count, t);
    else if (t == ElementType::f32)
      h_.vbroadcastss(dst, h_.ptr[at]);
    else
      converting().broadcast_load(dst, at, t);
  }

  /// `count` elements of type `t` (the rest zero) from memory, as f32. AVX2 partial vectors
  /// use `mask`, by default the first scratch register (AVX-512 uses k1, and its scratch list
  /// may be empty).
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

  // the emitter's stack frame: [rsp] the panel counter, [rsp + 8] the tile counter,
  // [rsp + a_slot] A's data pointer as the Brgemm starts
  static constexpr int a_slot = 16, frame = 32;

  Xbyak::CodeGenerator& h_;
  ConstantTable& consts_;
  std::span<const Vmm> scratch_;
  std::span<const Xbyak::Reg64> data_, pool_;
  std::span<const ElementType> types_;
  bool native_bf16_;
  Xbyak::Reg64 a_;
  std::vector<Xbyak::Reg64> t_, saved_;
  std::vector<Moved> moved_;
  std::unique_ptr<passes::EpiloguePlan<T>> plan_;
  const E* brgemm_ = nullptr;
  std::span<E* const> epilogue_;
  std::map<const E*, Vmm> hoisted_; // Scalars held in registers during a tile's epilogue
  int a_offset_ = 0;                // bytes from A's data pointer
  std::int64_t row_scales_ = -1;    // Brgemm::row_scales
  bool integer_ = false;            // int32 sums (BrgemmShape::quads or words)
};

} // namespace snippets::x64
