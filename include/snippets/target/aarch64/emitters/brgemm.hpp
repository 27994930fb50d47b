// SPDX-License-Identifier: Apache-2.0
// snippets/target/aarch64/emitters/brgemm.hpp: the NEON code of Brgemm and BrgemmCopyB (the
// blocking and the packed layout of B are in passes/lower_brgemm.hpp and ir::BrgemmShape; the
// x86-64 emitter is target/x64/emitters/brgemm.hpp).
//
// Brgemm: for each panel of B (n_r vectors of 4 columns), for each tile of m_r rows of the
// block, the micro-kernel keeps m_r x n_r accumulators in v0.. and walks the depth. A's rows
// have a pointer each. When A's depths are contiguous (a_depth == 1) a step covers four
// depths: one LDR per row brings four of them (a bf16 A: LDR d and SHLL), and for each depth d
// and each panel vector j, FMLA by element (`fmla acc.4s, b_j.4s, a_row.s[d]`) multiplies the
// panel row by row's element d: no broadcast. The depths left (K % 4) are read exactly
// (memory_access.hpp) and take the same FMLAs. A strided A (transposed) reads one element per
// row and depth. B's panel vectors come in pairs (LDP) into two registers. Registers of the K
// loop: m_r x n_r accumulators, m_r of A, 2 of B: at most 6 x 4 + 6 + 2 = 32.
// int8 (BrgemmShape::quads with signed_a: u8/i8 A times i8 B, FEAT_DotProd): B is packed in
// quads (a 16-byte panel vector is 4 columns x 4 depths), so the same loop takes sixteen depths
// a step: one LDR q per row of A (the last K % 16 bytes exactly, zero above), a u8 A's sign
// bits flipped (EOR with 0x80s: A - 128 as s8), and for each quad d
// `sdot acc.4s, b_j.16b, a_row.4b[d]`. The sums start from zero or from the panel's
// compensation row (-a_offset() x B's column sums: the 128 taken from a u8 A, and A's zero
// point). Before the epilogue the int32 sums go as they are to the Stores of i32 outputs, then
// become f32 (SCVTF, to nearest even as the reference's Convert) for the other ops.
// Then the epilogue runs on each accumulator in turn (the ops' emitters on vector temporaries
// above the tile, as EpiloguePlan assigns them; inputs and scalars are read for each
// accumulator) and the Stores write the results. Columns past N in the last panel and the last
// rows of the block are never read or written: every partial vector moves exactly its elements
// (memory_access.hpp), so no byte past a tensor is touched. Inputs and outputs of other types
// than f32 convert as in element-wise kernels.
// General-purpose registers: the kernel emitter hands over the pool registers no data pointer
// and no loop counter uses (gp_temps(m_r) of them); the data pointers the emitter moves along
// rows and panels (epilogue inputs and outputs) are saved to its stack slots and restored at
// the end, and its two loop counters live there too.
// BrgemmCopyB: copies B into panel order, rows of each panel contiguous, zero past N (a bf16 B
// widened to f32). A B whose columns are contiguous along the depth is transposed in
// registers, 4 x 4 at a time (TRN1/TRN2 on words, then on double words); other strides are
// read element by element. bf16 pairs (BrgemmShape::pairs, x86's VDPBF16PS) are not emitted
// here: LowerBrgemm asks for them only where the target converts to bf16 natively. Quads of an
// i8 B: along its rows, four rows interleaved (ZIP1 on bytes, then halfwords); along its
// columns, 4 columns x 16 bytes transposed as words; the compensation row sums the packed
// rows (SDOT with ones). 16-bit words (x86's VPMADDWD, CompileOptions::native_int8 = false)
// are refused: this target has SDOT only.
#pragma once

#include <algorithm>
#include <memory>
#include <span>
#include <vector>

#include <asmjit/arm/a64assembler.h>

#include "snippets/error.hpp"
#include "snippets/ir/linear_ir.hpp"
#include "snippets/passes/brgemm_blocking.hpp"
#include "snippets/target/aarch64/abi.hpp"
#include "snippets/target/aarch64/constant_pool.hpp"
#include "snippets/target/aarch64/emitters/convert.hpp"
#include "snippets/target/aarch64/emitters/emitter.hpp"
#include "snippets/target/aarch64/emitters/fixed_register_context.hpp"
#include "snippets/target/aarch64/memory_access.hpp"

namespace snippets::aarch64 {

template <class T> class BrgemmEmitter {
  using E = ir::Expression<T>;
  using GpX = asmjit::a64::GpX;

public:
  /// General-purpose registers a Brgemm of m_r rows per tile takes: B's panel, A's tile, B's
  /// depth, the depth counter and a pointer per row. BrgemmCopyB takes five.
  static constexpr int gp_temps(int m_r) { return 4 + m_r; }
  static constexpr int max_gp_temps = gp_temps(6);
  static constexpr int copy_gp_temps = 5;

  explicit BrgemmEmitter(const FixedRegisterContext& c) : c_(c), a_(c.a) {}

  void emit(const E& e, const ir::Brgemm& b, std::span<E* const> epilogue) {
    const ir::BrgemmShape& s = b.shape;
    SNIPPETS_ASSERT(s.lanes == lanes && !s.pairs && s.n_r >= 1 && s.n_r <= 4 && s.m_r >= 1 &&
                    s.m_r <= 6)
        << "a Brgemm blocked for another target: " << s.m_r << " x " << s.n_r << " vectors of "
        << s.lanes;
    if (static_cast<int>(c_.temps.size()) < gp_temps(s.m_r))
      raise("snippets.compile.codegen",
            "the AArch64 Brgemm of '" + e.name + "' needs " + std::to_string(gp_temps(s.m_r)) +
                " general-purpose registers beside the kernel's data pointers and loop "
                "counters, and " +
                std::to_string(c_.temps.size()) + " are left");
    refuse_words(e, s);
    SNIPPETS_ASSERT(!s.quads || s.signed_a) << "quads for a dot product that reads A unsigned";
    a_reg_ = c_.data[e.input_expr(0).data_index];
    moved_.clear();
    for (const E* x : epilogue) {
      if (const auto* st = std::get_if<ir::Store>(&x->op))
        add_moved(c_.data[x->data_index], passes::ProductStrides(x->out_desc(0)), st->type);
      for (std::size_t i = 0; i < x->num_inputs(); ++i)
        if (const E& in = x->input_expr(i); std::holds_alternative<ir::Parameter>(in.op))
          add_moved(c_.data[in.data_index], passes::ProductStrides(x->in_desc(i)),
                    c_.types[in.data_index]);
    }
    if (b.row_scales >= 0) moved_.push_back({a_reg_, 1, 0, 4}); // each row's scale, next to A
    SNIPPETS_ASSERT(moved_.size() + first_saved <= FixedRegisterContext::slot_count)
        << "Brgemm moves " << moved_.size() << " pointers";
    for (std::size_t i = 0; i < moved_.size(); ++i)
      a_.str(moved_[i].reg, c_.slot(first_saved + static_cast<int>(i)));
    // A where the block starts: A's pointer may also be a Store's (an MLP stage reading and
    // writing the scratch), which the panel loop moves along the columns
    a_.str(a_reg_, c_.slot(a_slot));
    plan_ = std::make_unique<passes::EpiloguePlan<T>>(e, epilogue);
    brgemm_ = &e;
    epilogue_ = epilogue;
    m_ = b.m;
    a_offset_ = b.a_offset * std::int64_t(size_of(s.a_type));
    row_scales_ = b.row_scales;
    integer_ = s.quads;

    if (s.k != 0) { // depth 0: B is never read (its panels have no rows, and no scratch)
      if (b.b_packed)
        c_.set(b_panel(),
               static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(b.b_packed->data())));
      else
        c_.add_offset(b_panel(), c_.data[b.b_pointer], b.b_offset * 4);
    }
    const std::int64_t w = s.panel_width(), full = s.n / w, tail = s.n % w;
    if (full) {
      c_.set_counter(panel_slot, full);
      const asmjit::Label panel = a_.newLabel();
      a_.bind(panel);
      emit_panel(s, s.n_r, w);
      if (s.k != 0) c_.add_offset(b_panel(), b_panel(), s.panel_rows() * w * 4);
      for (const auto& m : moved_)
        if (m.col) c_.add_offset(m.reg, m.reg, w * m.col * m.bytes);
      c_.count_down(panel_slot);
      a_.b_ne(panel);
    }
    if (tail) emit_panel(s, static_cast<int>((tail + lanes - 1) / lanes), tail);
    for (std::size_t i = 0; i < moved_.size(); ++i)
      a_.ldr(moved_[i].reg, c_.slot(first_saved + static_cast<int>(i)));
  }

  void emit_copy_b(const E& e, const ir::BrgemmCopyB& cp) {
    const ir::BrgemmShape& s = cp.shape;
    if (s.k == 0) return; // depth 0: B is never read (see emit)
    refuse_words(e, s);
    SNIPPETS_ASSERT(!s.pairs && s.lanes == lanes) << "BrgemmCopyB of another target's panels";
    if (static_cast<int>(c_.temps.size()) < copy_gp_temps)
      raise("snippets.compile.codegen", "the AArch64 BrgemmCopyB of '" + e.name + "' needs " +
                                            std::to_string(copy_gp_temps) +
                                            " free general-purpose registers");
    const GpX src = c_.data[e.input_expr(0).data_index], dst = c_.data[cp.b_pointer];
    const GpX from = c_.temps[0], to = c_.temps[2];
    a_.mov(from, src);
    c_.add_offset(to, dst, cp.b_offset * 4);
    const std::int64_t w = s.panel_width(), full = s.n / w, tail = s.n % w;
    const std::int64_t bytes = std::int64_t(size_of(s.b_type));
    auto panel = [&](std::int64_t width) {
      if (s.b_depth == 1 && s.b_col != 1)
        transposed_panel(s, width);
      else if (s.quads)
        integer_panel(s, width);
      else
        row_panel(s, width);
      c_.add_offset(to, to, s.panel_rows() * w * 4);
      c_.add_offset(from, from, w * s.b_col * bytes);
    };
    if (full) {
      c_.set_counter(panel_slot, full);
      const asmjit::Label loop = a_.newLabel();
      a_.bind(loop);
      panel(w);
      c_.count_down(panel_slot);
      a_.b_ne(loop);
    }
    if (tail) panel(tail);
  }

private:
  /// Integer products as 16-bit words are x86-64's VPMADDWD path; this target has SDOT only
  /// (aarch64::Traits::int8_words), which traits derived from it must keep (int8_dot).
  static void refuse_words(const E& e, const ir::BrgemmShape& s) {
    if (s.words)
      raise("snippets.compile.unsupported_matmul",
            "'" + e.name +
                "' multiplies u8/i8 operands as 16-bit words, which the AArch64 target does not "
                "have: keep the traits' int8_dot true (SDOT)");
  }

  // ---- BrgemmCopyB ----

  /// One panel of `width` columns of B read depth after depth. Registers: temps 0 B at the
  /// panel, 1 its depth, 2 the panel, 3 the panel row, 4 the depth counter; copy-B runs alone,
  /// so every vector register is free.
  void row_panel(const ir::BrgemmShape& s, std::int64_t width) {
    const GpX from = c_.temps[0], row = c_.temps[1], to = c_.temps[2], dst = c_.temps[3],
              depth = c_.temps[4];
    const std::int64_t bytes = std::int64_t(size_of(s.b_type));
    a_.mov(row, from);
    a_.mov(dst, to);
    c_.set(depth, s.k);
    const asmjit::Label next = a_.newLabel();
    a_.bind(next);
    for (int j = 0; j < s.n_r; ++j) {
      const Vec v = asmjit::a64::v(static_cast<std::uint32_t>(j));
      const std::int64_t valid = std::clamp<std::int64_t>(width - j * lanes, 0, lanes);
      const std::int64_t at = j * lanes * s.b_col * bytes;
      if (valid == 0)
        a_.movi(v.s4(), 0);
      else if (s.b_col == 1)
        c_.mem.load(v, row, at, s.b_type, valid);
      else
        gather(v, row, at, s.b_col * bytes, valid, s.b_type);
      a_.str(v.q(), asmjit::a64::ptr(dst, static_cast<std::int32_t>(j * lanes * 4)));
    }
    c_.add_offset(dst, dst, s.panel_width() * 4);
    c_.add_offset(row, row, s.b_depth * bytes);
    a_.subs(depth, depth, 1);
    a_.b_ne(next);
  }

  /// One panel of `width` columns of an i8 B read along its rows (b_col 1), in quads: each
  /// panel row is four depths of B as the bytes of its words, zero past K and past `width`
  /// (four rows of four columns' bytes interleaved by ZIP1 on bytes, then on halfwords), and
  /// with compensated() a last row holds -a_offset() x each column's sum (SDOT of the packed
  /// rows with ones). Registers as row_panel; vectors: v0.. the panel row, v4-v7 four rows of
  /// B, v8.. the sums, v12 ones.
  void integer_panel(const ir::BrgemmShape& s, std::int64_t width) {
    const GpX from = c_.temps[0], row = c_.temps[1], to = c_.temps[2], dst = c_.temps[3],
              depth = c_.temps[4];
    a_.mov(row, from);
    a_.mov(dst, to);
    start_sums(s);
    auto panel_row = [&](int depths) { // the next `depths` (1 to 4) rows of B
      for (int j = 0; j < s.n_r; ++j) {
        const std::int64_t valid = std::clamp<std::int64_t>(width - j * lanes, 0, lanes);
        for (int i = 0; i < 4; ++i)
          if (valid && i < depths)
            c_.mem.load_raw(v(4 + i), row, i * s.b_depth + j * lanes, 1, int(valid));
          else
            a_.movi(v(4 + i).s4(), 0);
        a_.zip1(v(4).b8(), v(4).b8(), v(5).b8()); // (r0 c0, r1 c0, r0 c1, r1 c1, ...)
        a_.zip1(v(6).b8(), v(6).b8(), v(7).b8());
        a_.zip1(v(j).h8(), v(4).h8(), v(6).h8()); // (r0 c0, r1 c0, r2 c0, r3 c0, r0 c1, ...)
        add_to_sum(s, j, v(j));
        a_.str(v(j).q(), asmjit::a64::ptr(dst, static_cast<std::int32_t>(j * lanes * 4)));
      }
      c_.add_offset(dst, dst, s.panel_width() * 4);
      c_.add_offset(row, row, 4 * s.b_depth);
    };
    if (s.k / 4) {
      c_.set(depth, s.k / 4);
      const asmjit::Label next = a_.newLabel();
      a_.bind(next);
      panel_row(4);
      a_.subs(depth, depth, 1);
      a_.b_ne(next);
    }
    if (s.k % 4) panel_row(static_cast<int>(s.k % 4));
    for (int j = 0; j < s.n_r; ++j) store_sum(s, j, dst, j * lanes * 4);
  }

  // The compensation row of quads (BrgemmShape::compensated()): v8 + j sums vector j's columns
  // of the packed rows, by SDOT with ones in v12; at the end it becomes -a_offset() x the sums.
  void start_sums(const ir::BrgemmShape& s) {
    if (!s.compensated()) return;
    for (int j = 0; j < s.n_r; ++j) a_.movi(v(8 + j).s4(), 0);
    a_.movi(v(12).b16(), 1);
  }
  void add_to_sum(const ir::BrgemmShape& s, int j, const Vec& packed) {
    if (s.compensated()) a_.sdot(v(8 + j).s4(), packed.b16(), v(12).b16());
  }
  /// Stores vector j's compensation at base + bytes (the row after the panel's depths).
  void store_sum(const ir::BrgemmShape& s, int j, const GpX& base, std::int64_t bytes) {
    if (!s.compensated()) return;
    const GpX factor = asmjit::a64::x(scratch2_gpr);
    c_.set(factor, std::int64_t{-s.a_offset()});
    a_.dup(v(13).s4(), factor.w());
    a_.mul(v(8 + j).s4(), v(8 + j).s4(), v(13).s4());
    a_.str(v(8 + j).q(), asmjit::a64::ptr(c_.mem.address(base, bytes)));
  }

  /// v = `count` elements of `type` at base + bytes, `stride` bytes apart, as f32 (the rest
  /// zero).
  void gather(const Vec& v, const GpX& base, std::int64_t bytes, std::int64_t stride,
              std::int64_t count, ElementType type) {
    a_.movi(v.s4(), 0);
    for (std::int64_t i = 0; i < count; ++i) {
      const auto lane = static_cast<std::uint32_t>(i);
      const GpX at = c_.mem.address(base, bytes + i * stride);
      if (type == ElementType::bf16)
        a_.ld1(v.h(lane), asmjit::a64::ptr(at));
      else
        a_.ld1(v.s(lane), asmjit::a64::ptr(at));
    }
    if (type == ElementType::bf16) c_.mem.widen(v, type);
  }

  /// One panel of a B whose columns are contiguous along the depth (a transposed B, such as K
  /// in attention): blocks of 4 columns x 4 depths (quads: 4 x 16 bytes, a column's quads
  /// being its words) are loaded as rows, transposed in registers and stored as panel rows;
  /// quads sum the packed rows into the compensation row as integer_panel does. Registers:
  /// temps 0 B at the panel, 1 the block's rows, 2 the panel, 3 the block's destination, 4 the
  /// depth counter.
  void transposed_panel(const ir::BrgemmShape& s, std::int64_t width) {
    const GpX from = c_.temps[0], row = c_.temps[1], to = c_.temps[2], dst = c_.temps[3],
              depth = c_.temps[4];
    const std::int64_t bytes = std::int64_t(size_of(s.b_type)), column = s.b_col * bytes;
    const std::int64_t w = s.panel_width(), step = lanes * s.depths_per_row();
    const std::int64_t blocks = s.k / step, rest = s.k % step;
    start_sums(s);
    for (int g = 0; g < s.n_r; ++g) {
      const std::int64_t valid = std::clamp<std::int64_t>(width - g * lanes, 0, lanes);
      c_.add_offset(row, from, g * lanes * column);
      c_.add_offset(dst, to, g * lanes * 4);
      if (blocks) {
        c_.set(depth, blocks);
        const asmjit::Label next = a_.newLabel();
        a_.bind(next);
        transpose_block(s, g, column, valid, step, w);
        c_.add_offset(row, row, step * bytes);
        c_.add_offset(dst, dst, lanes * w * 4);
        a_.subs(depth, depth, 1);
        a_.b_ne(next);
      }
      if (rest) transpose_block(s, g, column, valid, rest, w);
      store_sum(s, g, to, (s.depth_rows() * w + g * lanes) * 4);
    }
  }

  /// `columns` columns (`column` bytes apart; the rest zero) x `depths` elements of B at
  /// temps[1], transposed into panel rows at temps[3] (`w` words apart): one a depth, or with
  /// quads one per four depths (vector g of the panel, for its sums).
  void transpose_block(const ir::BrgemmShape& s, int g, std::int64_t column, std::int64_t columns,
                       std::int64_t depths, std::int64_t w) {
    auto v = [](int i) { return asmjit::a64::v(static_cast<std::uint32_t>(i)); };
    for (int i = 0; i < lanes; ++i)
      if (i >= columns)
        a_.movi(v(i).s4(), 0);
      else if (s.quads)
        c_.mem.load_bytes(v(i), c_.temps[1], i * column, static_cast<int>(depths));
      else
        c_.mem.load(v(i), c_.temps[1], i * column, s.b_type, depths);
    a_.trn1(v(4).s4(), v(0).s4(), v(1).s4()); // (c0[0], c1[0], c0[2], c1[2])
    a_.trn2(v(5).s4(), v(0).s4(), v(1).s4()); // (c0[1], c1[1], c0[3], c1[3])
    a_.trn1(v(6).s4(), v(2).s4(), v(3).s4());
    a_.trn2(v(7).s4(), v(2).s4(), v(3).s4());
    a_.trn1(v(0).d2(), v(4).d2(), v(6).d2()); // depth 0 of the four columns
    a_.trn1(v(1).d2(), v(5).d2(), v(7).d2()); // depth 1
    a_.trn2(v(2).d2(), v(4).d2(), v(6).d2()); // depth 2
    a_.trn2(v(3).d2(), v(5).d2(), v(7).d2()); // depth 3
    const std::int64_t rows = s.quads ? (depths + 3) / 4 : depths;
    for (int d = 0; d < static_cast<int>(rows); ++d) {
      add_to_sum(s, g, v(d));
      a_.str(v(d).q(), asmjit::a64::ptr(c_.temps[3], static_cast<std::int32_t>(d * w * 4)));
    }
  }

  // ---- Brgemm ----

  struct Moved {
    GpX reg;
    std::int64_t row, col; // elements per row and per column of the product
    std::int64_t bytes;    // per element
  };
  void add_moved(const GpX& r, passes::ProductStrides st, ElementType t) {
    for (const auto& m : moved_)
      if (m.reg.id() == r.id()) return;
    moved_.push_back({r, st.row, st.col, std::int64_t(size_of(t))});
  }

  // temporaries: 0 B panel, 1 A tile, 2 B depth, 3 depth counter, 4.. a pointer per row of A
  GpX b_panel() const { return c_.temps[0]; }
  GpX a_tile() const { return c_.temps[1]; }
  GpX b_depth() const { return c_.temps[2]; }
  GpX depth() const { return c_.temps[3]; }
  GpX a_row(int r) const { return c_.temps[4 + static_cast<std::size_t>(r)]; }
  static Vec v(int i) { return asmjit::a64::v(static_cast<std::uint32_t>(i)); }

  /// One panel of `width` columns (n_v vectors) for all rows of the block.
  void emit_panel(const ir::BrgemmShape& s, int n_v, std::int64_t width) {
    a_.ldr(a_tile(), c_.slot(a_slot));
    c_.add_offset(a_tile(), a_tile(), a_offset_);
    const std::int64_t a_bytes = std::int64_t(size_of(s.a_type));
    const std::int64_t tiles = m_ / s.m_r, rest = m_ % s.m_r;
    if (tiles) {
      c_.set_counter(tile_slot, tiles);
      const asmjit::Label tile = a_.newLabel();
      a_.bind(tile);
      emit_tile(s, s.m_r, n_v, width);
      c_.add_offset(a_tile(), a_tile(), s.m_r * s.a_row * a_bytes);
      for (const auto& m : moved_)
        if (m.row) c_.add_offset(m.reg, m.reg, s.m_r * m.row * m.bytes);
      c_.count_down(tile_slot);
      a_.b_ne(tile);
    }
    if (rest) emit_tile(s, static_cast<int>(rest), n_v, width);
    for (const auto& m : moved_)
      if (m.row && tiles) c_.add_offset(m.reg, m.reg, -tiles * s.m_r * m.row * m.bytes);
  }

  /// The micro-kernel for rows x n_v vectors, then its epilogue.
  void emit_tile(const ir::BrgemmShape& s, int rows, int n_v, std::int64_t width) {
    auto acc = [&](int r, int j) { return v(r * n_v + j); };
    if (s.compensated() && s.k != 0) { // the compensation row: the same for every row
      const GpX row = c_.mem.address(b_panel(), s.depth_rows() * s.panel_width() * 4);
      for (int j = 0; j < n_v; ++j)
        a_.ldr(acc(0, j).q(), asmjit::a64::ptr(row, static_cast<std::int32_t>(j * lanes * 4)));
      for (int r = 1; r < rows; ++r)
        for (int j = 0; j < n_v; ++j) a_.mov(acc(r, j).b16(), acc(0, j).b16());
    } else {
      for (int i = 0; i < rows * n_v; ++i) a_.movi(v(i).s4(), 0);
    }
    if (s.k != 0) {
      const std::int64_t a_bytes = std::int64_t(size_of(s.a_type));
      for (int r = 0; r < rows; ++r)
        c_.add_offset(a_row(r), r == 0 ? a_tile() : a_row(r - 1), r == 0 ? 0 : s.a_row * a_bytes);
      a_.mov(b_depth(), b_panel());
      if (s.a_depth == 1)
        depth_loop_rows(s, rows, n_v);
      else
        depth_loop_strided(s, rows, n_v);
    }
    if (row_scales_ >= 0) // A's rows were left unnormalised: the scale of each row, once
      for (int r = 0; r < rows; ++r) {
        const Vec scale = v(rows * n_v);
        a_.ld1r(scale.s4(),
                asmjit::a64::ptr(c_.mem.address(a_reg_, (row_scales_ + r) * std::int64_t{4})));
        for (int j = 0; j < n_v; ++j) a_.fmul(acc(r, j).s4(), acc(r, j).s4(), scale.s4());
      }
    for (int r = 0; r < rows; ++r)
      for (int j = 0; j < n_v; ++j) {
        const std::int64_t count = std::min<std::int64_t>(lanes, width - j * lanes);
        emit_epilogue(acc(r, j), r, j, count, rows * n_v);
      }
  }

  /// acc(r, j) += B's panel row at b_depth() + `offset` bytes, vector j, times lane `lane` of
  /// A's register of row r, for every row and vector. B's vectors come two at a time. `quads`:
  /// the lane is four bytes of A and each column's word four of B (SDOT).
  void panel_row(int rows, int n_v, std::int64_t offset, int lane, bool quads) {
    const Vec b[2] = {v(rows * n_v + rows), v(rows * n_v + rows + 1)};
    for (int j = 0; j < n_v; j += 2) {
      const auto at = static_cast<std::int32_t>(offset + j * lanes * 4);
      if (j + 1 < n_v)
        a_.ldp(b[0].q(), b[1].q(), asmjit::a64::ptr(b_depth(), at));
      else
        a_.ldr(b[0].q(), asmjit::a64::ptr(b_depth(), at));
      const auto at_lane = static_cast<std::uint32_t>(lane);
      for (int k = j; k < std::min(j + 2, n_v); ++k)
        for (int r = 0; r < rows; ++r)
          if (quads)
            a_.sdot(v(r * n_v + k).s4(), b[k - j].b16(), v(rows * n_v + r).b4(at_lane));
          else
            a_.fmla(v(r * n_v + k).s4(), b[k - j].s4(), v(rows * n_v + r).s(at_lane));
    }
  }

  /// A's depths contiguous: a step is four panel rows, one LDR per row of A (four depths, or
  /// sixteen bytes: four quads), then the rest read exactly.
  void depth_loop_rows(const ir::BrgemmShape& s, int rows, int n_v) {
    const std::int64_t row_bytes = s.panel_width() * 4, step = lanes * s.depths_per_row();
    const std::int64_t groups = s.k / step, rest = s.k % step;
    const bool bf16 = s.a_type == ElementType::bf16;
    auto a_reg = [&](int r) { return v(rows * n_v + r); };
    if (groups) {
      c_.set(depth(), groups);
      const asmjit::Label loop = a_.newLabel();
      a_.bind(loop);
      for (int r = 0; r < rows; ++r)
        if (bf16) {
          a_.ldr(a_reg(r).d(), asmjit::a64::ptr_post(a_row(r), 8));
          a_.shll(a_reg(r).s4(), a_reg(r).h4(), 16);
        } else {
          a_.ldr(a_reg(r).q(), asmjit::a64::ptr_post(a_row(r), 16));
        }
      flip_sign_bits(s, rows, n_v);
      for (int d = 0; d < lanes; ++d) panel_row(rows, n_v, d * row_bytes, d, s.quads);
      c_.add_offset(b_depth(), b_depth(), lanes * row_bytes);
      a_.subs(depth(), depth(), 1);
      a_.b_ne(loop);
    }
    if (rest && s.quads) { // bytes past K are zero, flipped or not, times B's zero bytes
      for (int r = 0; r < rows; ++r) c_.mem.load_bytes(a_reg(r), a_row(r), 0, int(rest));
      flip_sign_bits(s, rows, n_v);
      for (int d = 0; d < static_cast<int>((rest + 3) / 4); ++d)
        panel_row(rows, n_v, d * row_bytes, d, true);
    } else if (rest) {
      for (int r = 0; r < rows; ++r) c_.mem.load(a_reg(r), a_row(r), 0, s.a_type, rest);
      for (int d = 0; d < static_cast<int>(rest); ++d)
        panel_row(rows, n_v, d * row_bytes, d, false);
    }
  }

  /// A u8 A as SDOT reads it, A - 128 (BrgemmShape::signed_a; the compensation row adds the
  /// 128 back): the sign bits of A's registers flipped, by 0x80s in B's first register, which
  /// is free until the panel rows are loaded.
  void flip_sign_bits(const ir::BrgemmShape& s, int rows, int n_v) {
    if (!s.quads || s.a_type != ElementType::u8) return;
    const Vec bits = v(rows * n_v + rows);
    a_.movi(bits.b16(), 0x80);
    for (int r = 0; r < rows; ++r)
      a_.eor(v(rows * n_v + r).b16(), v(rows * n_v + r).b16(), bits.b16());
  }

  /// A read with a stride along the depth (a transposed A): one element per row and depth.
  void depth_loop_strided(const ir::BrgemmShape& s, int rows, int n_v) {
    const std::int64_t a_bytes = std::int64_t(size_of(s.a_type)), step = s.a_depth * a_bytes;
    auto a_reg = [&](int r) { return v(rows * n_v + r); };
    c_.set(depth(), s.k);
    const asmjit::Label loop = a_.newLabel();
    a_.bind(loop);
    for (int r = 0; r < rows; ++r) {
      const Vec x = a_reg(r);
      const bool post = step < 256;
      const asmjit::a64::Mem at = post ? asmjit::a64::ptr_post(a_row(r), static_cast<int>(step))
                                       : asmjit::a64::ptr(a_row(r));
      if (s.a_type == ElementType::bf16) {
        a_.ldr(x.h(), at);
        a_.shll(x.s4(), x.h4(), 16);
      } else {
        a_.ldr(x.s(), at);
      }
      if (!post) c_.add_offset(a_row(r), a_row(r), step);
    }
    panel_row(rows, n_v, 0, 0, false);
    c_.add_offset(b_depth(), b_depth(), s.panel_width() * 4);
    a_.subs(depth(), depth(), 1);
    a_.b_ne(loop);
  }

  /// The epilogue on one accumulator: row r of the tile, vector j of the panel, `count` valid
  /// columns.
  void emit_epilogue(Vec accumulator, int r, int j, std::int64_t count, int first_temp) {
    auto temp = [&](int t) { return v(first_temp + t); };
    EmitContext ctx{a_, c_.consts, c_.scratch};
    auto store = [&](const E& x, const ir::Store& st, Vec value, ElementType type) {
      const std::int64_t row = passes::ProductStrides(x.out_desc(0)).row;
      const std::int64_t bytes = (st.offset + r * row + j * lanes) * std::int64_t(size_of(st.type));
      store_converted(ctx, c_.mem, value, c_.data[x.data_index], bytes, type, count);
    };
    if (integer_) { // int32 sums: stored as they are where an i32 output takes them, then f32
      for (const E* x : epilogue_)
        if (passes::raw_i32_store(*x, *brgemm_))
          store(*x, std::get<ir::Store>(x->op), accumulator, ElementType::f32); // (the bits)
      a_.scvtf(accumulator.s4(), accumulator.s4());
    }
    for (const E* x : epilogue_) {
      auto value = [&](std::size_t i) {
        const E* src = &x->input_expr(i);
        const bool sums = src == brgemm_ || (integer_ && passes::sums_as_i32(*src, *brgemm_));
        return sums ? accumulator : temp(plan_->temp.at(src));
      };
      if (integer_ && (passes::raw_i32_store(*x, *brgemm_) || passes::sums_as_i32(*x, *brgemm_)))
        continue;
      if (const auto* st = std::get_if<ir::Store>(&x->op)) {
        store(*x, *st, value(0), st->type);
        continue;
      }
      Vec in[4];
      SNIPPETS_ASSERT(x->num_inputs() <= 4) << x->name;
      for (std::size_t i = 0; i < x->num_inputs(); ++i) {
        const auto it = plan_->loaded.find({x, i});
        if (it == plan_->loaded.end()) {
          in[i] = value(i);
          continue;
        }
        in[i] = temp(it->second);
        read_operand(in[i], *x, i, r, j, count);
      }
      const Vec dst = temp(plan_->temp.at(x));
      std::visit(
          [&](const auto& tag) {
            using Tag = std::decay_t<decltype(tag)>;
            if constexpr (HasEmitter<Tag>)
              Emitter<Tag>::emit(ctx, tag, dst, std::span<const Vec>(in, x->num_inputs()));
            else
              SNIPPETS_ASSERT(false) << Tag::name << " in a Brgemm epilogue has no emitter";
          },
          x->op);
    }
  }

  /// A Scalar, or the input's elements at row r, vector j of the tile (one element broadcast
  /// when the input is broadcast along the columns).
  void read_operand(Vec dst, const E& x, std::size_t i, int r, int j, std::int64_t count) {
    const E& src = x.input_expr(i);
    if (const auto* sc = std::get_if<ir::Scalar>(&src.op)) {
      c_.consts.load_value(dst, to_f32(sc->value));
      return;
    }
    const passes::ProductStrides st(x.in_desc(i));
    SNIPPETS_ASSERT(st.col == 0 || st.col == 1) << x.name << " reads its input with a stride";
    const ElementType t = c_.types[src.data_index];
    const std::int64_t bytes = (r * st.row + j * lanes * st.col) * std::int64_t(size_of(t));
    const GpX base = c_.data[src.data_index];
    if (st.col != 0) {
      c_.mem.load(dst, base, bytes, t, count);
    } else if (t == ElementType::f32) {
      a_.ld1r(dst.s4(), asmjit::a64::ptr(c_.mem.address(base, bytes)));
    } else {
      c_.mem.load(dst, base, bytes, t, 1);
      a_.dup(dst.s4(), dst.s(0));
    }
  }

  // the emitter's stack slots: the panel counter, the tile counter, A's data pointer as the
  // Brgemm starts, then the pointers it moves
  static constexpr int panel_slot = 0, tile_slot = 1, a_slot = 2, first_saved = 3;

  const FixedRegisterContext& c_;
  asmjit::a64::Assembler& a_;
  GpX a_reg_;
  std::vector<Moved> moved_;
  std::unique_ptr<passes::EpiloguePlan<T>> plan_;
  const E* brgemm_ = nullptr;
  std::span<E* const> epilogue_;
  std::int64_t m_ = 0;
  std::int64_t a_offset_ = 0;    // bytes from A's data pointer
  std::int64_t row_scales_ = -1; // Brgemm::row_scales
  bool integer_ = false;         // int32 sums (BrgemmShape::quads)
};

} // namespace snippets::aarch64
