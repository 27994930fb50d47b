// snippets/target/x64/emitters/brgemm.hpp: the code of Brgemm and BrgemmCopyB (the blocking
// and the packed layout of B are in passes/lower_brgemm.hpp and ir::BrgemmShape).
//
// Brgemm: for each panel of B (n_r vectors of columns), for each tile of m_r rows of the block,
// the micro-kernel keeps m_r x n_r accumulators in vector registers v0.. and walks the depth:
// it loads the panel's n_r vectors of that depth, broadcasts one element of A per row and
// issues m_r x n_r FMAs. Then the epilogue runs on each accumulator in turn (the ops' emitters
// on vector temporaries above the tile, as EpiloguePlan assigns them; inputs and scalars are
// read for each accumulator) and the Stores write the results. Columns past N in the last
// panel are masked (k1 on AVX-512; VMASKMOVPS with a mask in the first scratch register on
// AVX2; memory_access.hpp), so no byte past a tensor is touched.
// General-purpose registers: the emitter pushes the five it works with and every output and
// input pointer it moves, and pops them at the end; its two loop counters live on the stack.
// BrgemmCopyB: copies B into panel order, rows of each panel contiguous, zero past N; a
// transposed B is gathered (VGATHERDPS with lanes K apart).
#pragma once

#include <algorithm>
#include <vector>

#include "snippets/ir/linear_ir.hpp"
#include "snippets/passes/brgemm_blocking.hpp"
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
  BrgemmEmitter(Xbyak::CodeGenerator& h, ConstantTable& consts, std::span<const Vmm> scratch,
                std::span<const Xbyak::Reg64> data, std::span<const Xbyak::Reg64> pool)
      : h_(h), consts_(consts), scratch_(scratch), data_(data), pool_(pool) {}

  void emit(const E& e, const ir::Brgemm& b, std::span<E* const> epilogue) {
    const ir::BrgemmShape& s = b.shape;
    a_ = data_[e.input_expr(0).data_index];
    moved_.clear();
    std::vector<Xbyak::Reg64> operands{a_};
    if (!b.b_packed) operands.push_back(data_[b.b_pointer]);
    for (const E* x : epilogue) {
      if (std::holds_alternative<ir::Store>(x->op))
        add_moved(data_[x->data_index], passes::ProductStrides(x->out_desc(0)));
      for (std::size_t i = 0; i < x->num_inputs(); ++i)
        if (const E& in = x->input_expr(i); std::holds_alternative<ir::Parameter>(in.op))
          add_moved(data_[in.data_index], passes::ProductStrides(x->in_desc(i)));
    }
    if (b.row_scales >= 0) moved_.push_back({a_, 1, 0}); // the scale of each row, next to A
    for (const auto& m : moved_) operands.push_back(m.reg);
    take_temps(operands);
    plan_ = std::make_unique<passes::EpiloguePlan<T>>(e, epilogue);
    brgemm_ = &e;
    epilogue_ = epilogue;
    a_offset_ = static_cast<int>(b.a_offset * 4);
    row_scales_ = b.row_scales;

    if (b.b_packed)
      h_.mov(b_panel(), reinterpret_cast<std::uint64_t>(b.b_packed->data()));
    else
      h_.lea(b_panel(), h_.ptr[data_[b.b_pointer] + static_cast<int>(b.b_offset * 4)]);
    const std::int64_t w = s.panel_width(), full = s.n / w, tail = s.n % w;
    if (full) {
      h_.mov(h_.qword[h_.rsp], static_cast<std::uint32_t>(full));
      Xbyak::Label panel;
      h_.L(panel);
      emit_panel(b, s.n_r, w);
      h_.add(b_panel(), static_cast<int>(s.k * w * 4));
      for (const auto& m : moved_)
        if (m.col) h_.add(m.reg, static_cast<int>(w * m.col * 4));
      h_.dec(h_.qword[h_.rsp]);
      h_.jnz(panel, Xbyak::CodeGenerator::T_NEAR);
    }
    if (tail) emit_panel(b, static_cast<int>((tail + lanes - 1) / lanes), tail);
    release_temps();
  }

  void emit_copy_b(const E& e, const ir::BrgemmCopyB& c) {
    const ir::BrgemmShape& s = c.shape;
    const Xbyak::Reg64 src = data_[e.input_expr(0).data_index], dst = data_[c.b_pointer];
    take_temps({src, dst});
    const Xbyak::Reg64 from = t_[0], row = t_[1], to = t_[2], depth = t_[3];
    h_.mov(from, src);
    h_.lea(to, h_.ptr[dst + static_cast<int>(c.b_offset * 4)]);
    const std::int64_t w = s.panel_width(), full = s.n / w, tail = s.n % w;
    auto panel = [&](std::int64_t width) {
      if (s.b_depth == 1 && s.b_col != 1) return transposed_panel(s, width);
      h_.mov(row, from);
      h_.mov(depth, static_cast<std::uint32_t>(s.k));
      Xbyak::Label next;
      h_.L(next);
      for (int j = 0; j < s.n_r; ++j) {
        const Vmm v(j);
        const std::int64_t valid = std::clamp<std::int64_t>(width - j * lanes, 0, lanes);
        if (valid == 0)
          h_.vxorps(v, v, v);
        else if (s.b_col == 1)
          load(v, h_.ptr[row + static_cast<int>(j * lanes * 4)], valid);
        else // copy-B runs alone: the top registers are free
          gather(h_, consts_, v, row + static_cast<int>(j * lanes * s.b_col * 4), s.b_col, valid,
                 Vmm(avx512 ? 31 : 15), Vmm(avx512 ? 30 : 14));
        h_.vmovups(h_.ptr[to + static_cast<int>(j * lanes * 4)], v);
      }
      h_.add(to, static_cast<int>(w * 4));
      h_.add(row, static_cast<int>(s.b_depth * 4));
      h_.dec(depth);
      h_.jnz(next, Xbyak::CodeGenerator::T_NEAR);
      h_.add(from, static_cast<int>(w * s.b_col * 4));
    };
    if (full) {
      h_.mov(h_.qword[h_.rsp], static_cast<std::uint32_t>(full));
      Xbyak::Label loop;
      h_.L(loop);
      panel(w);
      h_.dec(h_.qword[h_.rsp]);
      h_.jnz(loop, Xbyak::CodeGenerator::T_NEAR);
    }
    if (tail) panel(tail);
    release_temps();
  }

private:
  /// One panel of a B whose columns are contiguous along the depth (a transposed B, such as
  /// K in attention): blocks of `lanes` columns x `lanes` depths are loaded as rows, transposed
  /// in registers and stored as panel rows. Registers: t_[0] B at the panel, t_[1] the
  /// block's rows, t_[2] the panel, t_[3] the block's destination, t_[4] the depth counter.
  void transposed_panel(const ir::BrgemmShape& s, std::int64_t width) {
    const Xbyak::Reg64 from = t_[0], row = t_[1], to = t_[2], dst = t_[3], depth = t_[4];
    const std::int64_t w = s.panel_width(), blocks = s.k / lanes, rest = s.k % lanes;
    for (int g = 0; g < s.n_r; ++g) {
      const std::int64_t valid = std::clamp<std::int64_t>(width - g * lanes, 0, lanes);
      const int column = static_cast<int>(g * lanes * 4);
      h_.lea(row, h_.ptr[from + static_cast<int>(g * lanes * s.b_col * 4)]);
      h_.lea(dst, h_.ptr[to + column]);
      if (blocks) {
        h_.mov(depth, static_cast<std::uint32_t>(blocks));
        Xbyak::Label next;
        h_.L(next);
        transpose_block(s, valid, lanes, w);
        h_.add(row, lanes * 4);
        h_.add(dst, static_cast<int>(lanes * w * 4));
        h_.dec(depth);
        h_.jnz(next, Xbyak::CodeGenerator::T_NEAR);
      }
      if (rest) transpose_block(s, valid, rest, w);
    }
    h_.add(to, static_cast<int>(s.k * w * 4));
    h_.add(from, static_cast<int>(w * s.b_col * 4));
  }

  /// `columns` columns (the rest zero) x `depths` depths of B at t_[1], transposed into
  /// `depths` panel rows at t_[3] (`w` floats apart). AVX-512: a 16 x 16 transpose in v0..31
  /// (unpack ps, unpack pd, two 128-bit shuffles); AVX2: 8 x 8 in v0..15 (unpack ps, unpack
  /// pd, 128-bit permute).
  void transpose_block(const ir::BrgemmShape& s, std::int64_t columns, std::int64_t depths,
                       std::int64_t w) {
    Vmm r[lanes], t[lanes];
    for (int i = 0; i < lanes; ++i) r[i] = Vmm(i), t[i] = Vmm(lanes + i);
    if (depths < lanes) set_tail_mask(h_, consts_, t[0], depths);
    for (int i = 0; i < lanes; ++i) {
      const Xbyak::Address at = h_.ptr[t_[1] + static_cast<int>(i * s.b_col * 4)];
      if (i >= columns)
        h_.vxorps(r[i], r[i], r[i]);
      else if (depths == lanes)
        h_.vmovups(r[i], at);
      else
        masked_load(h_, r[i], at, t[0]);
    }
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
    const Vmm* out = t;
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
      out = r;
    } else {
      for (int j = 0; j < 4; ++j) {
        h_.vperm2f128(t[j], r[j], r[j + 4], 0x20);
        h_.vperm2f128(t[j + 4], r[j], r[j + 4], 0x31);
      }
    }
    for (int j = 0; j < static_cast<int>(depths); ++j)
      h_.vmovups(h_.ptr[t_[3] + static_cast<int>(j * w * 4)], out[j]);
  }

  struct Moved {
    Xbyak::Reg64 reg;
    std::int64_t row, col; // elements per row and per column of the product
  };
  void add_moved(Xbyak::Reg64 r, passes::ProductStrides st) {
    for (const auto& m : moved_)
      if (m.reg.getIdx() == r.getIdx()) return;
    moved_.push_back({r, st.row, st.col});
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
    h_.sub(h_.rsp, 16);
  }
  void release_temps() {
    h_.add(h_.rsp, 16);
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) h_.pop(*it);
    moved_.clear();
  }

  /// One panel of `width` columns (n_v vectors) for all rows of the block.
  void emit_panel(const ir::Brgemm& b, int n_v, std::int64_t width) {
    const ir::BrgemmShape& s = b.shape;
    h_.lea(t_[0], h_.ptr[a_ + a_offset_]);
    const std::int64_t tiles = b.m / s.m_r, rest = b.m % s.m_r;
    if (tiles) {
      h_.mov(h_.qword[h_.rsp + 8], static_cast<std::uint32_t>(tiles));
      Xbyak::Label tile;
      h_.L(tile);
      emit_tile(s, s.m_r, n_v, width);
      h_.add(t_[0], static_cast<int>(s.m_r * s.a_row * 4));
      for (const auto& m : moved_)
        if (m.row) h_.add(m.reg, static_cast<int>(s.m_r * m.row * 4));
      h_.dec(h_.qword[h_.rsp + 8]);
      h_.jnz(tile, Xbyak::CodeGenerator::T_NEAR);
    }
    if (rest) emit_tile(s, static_cast<int>(rest), n_v, width);
    for (const auto& m : moved_)
      if (m.row && tiles) h_.sub(m.reg, static_cast<int>(tiles * s.m_r * m.row * 4));
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
    for (int i = 0; i < rows * n_v; ++i) h_.vxorps(accs[i], accs[i], accs[i]);
    const Xbyak::Reg64 a = t_[1], bk = t_[3], depth = t_[4];
    h_.mov(a, t_[0]);
    h_.mov(bk, b_panel());
    h_.mov(depth, static_cast<std::uint32_t>(s.k));
    Xbyak::Label loop;
    h_.L(loop);
    for (int j = 0; j < n_v; ++j) h_.vmovups(b[j], h_.ptr[bk + j * lanes * 4]);
    for (int r = 0; r < rows; ++r) {
      h_.vbroadcastss(bcast, h_.ptr[a + static_cast<int>(r * s.a_row * 4)]);
      for (int j = 0; j < n_v; ++j) h_.vfmadd231ps(accs[r * n_v + j], b[j], bcast);
    }
    h_.add(a, static_cast<int>(s.a_depth * 4));
    h_.add(bk, static_cast<int>(s.panel_width() * 4));
    h_.dec(depth);
    h_.jnz(loop, Xbyak::CodeGenerator::T_NEAR);
    if (row_scales_ >= 0) // A's rows were left unnormalised: the scale of each row, once
      for (int r = 0; r < rows; ++r) {
        h_.vbroadcastss(bcast, h_.ptr[a_ + static_cast<int>((row_scales_ + r) * 4)]);
        for (int j = 0; j < n_v; ++j) h_.vmulps(accs[r * n_v + j], accs[r * n_v + j], bcast);
      }
    for (int r = 0; r < rows; ++r)
      for (int j = 0; j < n_v; ++j) {
        const std::int64_t count = std::min<std::int64_t>(lanes, width - j * lanes);
        emit_epilogue(accs[r * n_v + j], r, j, count, rows * n_v);
      }
  }

  /// The epilogue on one accumulator: row r of the tile, vector j of the panel.
  void emit_epilogue(Vmm accumulator, int r, int j, std::int64_t count, int first_temp) {
    auto temp = [&](int t) { return Vmm(first_temp + t); };
    for (const E* x : epilogue_) {
      auto value = [&](std::size_t i) {
        const E* src = &x->input_expr(i);
        return src == brgemm_ ? accumulator : temp(plan_->temp.at(src));
      };
      if (const auto* st = std::get_if<ir::Store>(&x->op)) {
        const std::int64_t row = passes::ProductStrides(x->out_desc(0)).row;
        const Xbyak::Address at =
            h_.ptr[data_[x->data_index] + static_cast<int>((st->offset + r * row + j * lanes) * 4)];
        store(at, value(0), count);
        continue;
      }
      Vmm in[4];
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

  /// A Scalar, or the input's elements at row r, vector j of the tile.
  void read_operand(Vmm dst, const E& x, std::size_t i, int r, int j, std::int64_t count) {
    const E& src = x.input_expr(i);
    if (const auto* sc = std::get_if<ir::Scalar>(&src.op)) {
      h_.vmovups(dst, consts_.value(static_cast<float>(sc->value)));
      return;
    }
    const passes::ProductStrides st(x.in_desc(i));
    const Xbyak::Address at =
        h_.ptr[data_[src.data_index] + static_cast<int>((r * st.row + j * lanes * st.col) * 4)];
    if (st.col == 0)
      h_.vbroadcastss(dst, at);
    else
      load(dst, at, count);
  }

  /// `count` elements (the rest zero) from memory; the AVX2 mask goes to the first scratch
  /// register (AVX-512 uses k1, and its scratch list may be empty).
  void load(Vmm dst, const Xbyak::Address& at, std::int64_t count) {
    load_elements(h_, consts_, dst, at, count, avx512 ? Vmm(0) : scratch_[0]);
  }
  void store(const Xbyak::Address& at, Vmm src, std::int64_t count) {
    store_elements(h_, consts_, at, src, count, avx512 ? Vmm(0) : scratch_[0]);
  }

  Xbyak::CodeGenerator& h_;
  ConstantTable& consts_;
  std::span<const Vmm> scratch_;
  std::span<const Xbyak::Reg64> data_, pool_;
  Xbyak::Reg64 a_;
  std::vector<Xbyak::Reg64> t_, saved_;
  std::vector<Moved> moved_;
  std::unique_ptr<passes::EpiloguePlan<T>> plan_;
  const E* brgemm_ = nullptr;
  std::span<E* const> epilogue_;
  int a_offset_ = 0;             // bytes from A's data pointer
  std::int64_t row_scales_ = -1; // Brgemm::row_scales
};

} // namespace snippets::x64
