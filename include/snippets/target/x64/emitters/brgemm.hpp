// SPDX-License-Identifier: Apache-2.0
// snippets/target/x64/emitters/brgemm.hpp: the code of Brgemm (the blocking and the packed
// layout of B are in passes/lower_brgemm.hpp and ir::BrgemmShape; B is packed by BrgemmCopyB,
// brgemm_copy_b.hpp, or at compile time).
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
// read for each accumulator, but Scalars, held in registers for the tile where registers are
// free) and the Stores write the results. Columns past N in the last
// panel are masked (k1 on AVX-512; VMASKMOVPS with a mask in the first scratch register on
// AVX2; memory_access.hpp), so no byte past a tensor is touched. Inputs and outputs of other
// types than f32 convert as in element-wise kernels (MemoryAccess).
// General-purpose registers: the emitter pushes the five it works with and every output and
// input pointer it moves, and pops them at the end; its two loop counters live on the stack
// (brgemm_frame.hpp).
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <vector>

#include "snippets/ir/linear_ir.hpp"
#include "snippets/target/x64/emitters/brgemm_frame.hpp"

namespace snippets::x64 {

template <class T, class Vmm> class BrgemmEmitter : BrgemmFrame<Vmm> {
  using E = ir::Expression<T>;
  using Base = BrgemmFrame<Vmm>;
  using Base::avx512, Base::lanes, Base::h_, Base::consts_, Base::scratch_, Base::data_;
  using Base::bitwise_xor, Base::converting, Base::dot_bytes;
  using Base::release_temps, Base::each_panel, Base::repeat, Base::load, Base::store;
  using Base::t_, Base::moved_, Base::a_slot, Base::b_panel, Base::add_moved, Base::take_temps;

public:
  /// The frame's registers (BrgemmFrame), and `types`: the element type of each kernel
  /// argument.
  BrgemmEmitter(Xbyak::CodeGenerator& h, ConstantTable& consts, std::span<const Vmm> scratch,
                std::span<const Xbyak::Reg64> data, std::span<const Xbyak::Reg64> pool,
                std::span<const ElementType> types, bool native_bf16)
      : Base(h, consts, scratch, data, pool, native_bf16), types_(types) {}

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

private:
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
        if (passes::raw_i32_store(*x, *brgemm_))
          store(store_at(*x, std::get<ir::Store>(x->op)), accumulator, count,
                ElementType::f32); // (the bits as they are)
      h_.vcvtdq2ps(accumulator, accumulator);
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

  std::span<const ElementType> types_;
  Xbyak::Reg64 a_;
  std::unique_ptr<passes::EpiloguePlan<T>> plan_;
  const E* brgemm_ = nullptr;
  std::span<E* const> epilogue_;
  std::map<const E*, Vmm> hoisted_; // Scalars held in registers during a tile's epilogue
  int a_offset_ = 0;                // bytes from A's data pointer
  std::int64_t row_scales_ = -1;    // Brgemm::row_scales
  bool integer_ = false;            // int32 sums (BrgemmShape::quads or words)
};

} // namespace snippets::x64
