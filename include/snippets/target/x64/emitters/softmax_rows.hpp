// SPDX-License-Identifier: Apache-2.0
// snippets/target/x64/emitters/softmax_rows.hpp: the code of SoftmaxRows (ir/lowered_ops.hpp),
// the Softmax between the two Brgemms of an attention kernel.
//
// Per row, up to three sweeps over the row in memory (L1/L2: a block of the scores), four
// vectors per step with one accumulator each, the last partial vector masked:
//   1. max  = the row's maximum;
//   2. e    = exp(x - max), stored back, and sum += e;
//   3. x    = e * (1 / sum), or, with SoftmaxRows::scales, 1 / sum stored for the Brgemm that
//      reads the rows (it scales its accumulators: one sweep less), or, with
//      SoftmaxRows::quantized, p = e * (1 / sum) quantized on the registers as the
//      Quantize decomposition computes it (Round(p / scale) + zero, round half to even, then
//      the converting store's truncation, saturation and NaN -> 0) and written as bytes to
//      the A rows of an integer second product; the f32 rows keep e.
// The same decomposition as DecomposeSoftmax. NaN: a NaN in the row reaches the sum through
// exp(NaN - max) whatever max is, so the row is NaN as in the reference without a
// NaN-propagating max; x - max is <= 0 or NaN, so exp needs no overflow clamp.
// It runs between two Brgemms, so every vector register below the emitters' scratch is free;
// it saves the four general-purpose registers it takes.
#pragma once

#include <algorithm>
#include <limits>
#include <vector>

#include "snippets/ir/lowered_ops.hpp"
#include "snippets/target/x64/emitters/activation.hpp"
#include "snippets/target/x64/emitters/reduce.hpp"
#include "snippets/target/x64/memory_access.hpp"

namespace snippets::x64 {

template <class Vmm> class SoftmaxRowsEmitter {
  static constexpr bool avx512 = std::is_same_v<Vmm, Xbyak::Zmm>;
  static constexpr int lanes = avx512 ? 16 : 8;
  static constexpr int unroll = 4;

public:
  /// `scratch`: the emitters' scratch registers (at least two); `pool`: the general-purpose
  /// registers the kernel may use (the emitter saves the ones it takes).
  SoftmaxRowsEmitter(Xbyak::CodeGenerator& h, ConstantTable& consts, std::span<const Vmm> scratch,
                     std::span<const Xbyak::Reg64> pool)
      : h_(h), consts_(consts), scratch_(scratch), pool_(pool) {
    SNIPPETS_ASSERT(scratch.size() >= 2) << "SoftmaxRows needs two scratch vector registers";
    for (int i = 0; i < 2 * unroll + 2; ++i) v_[i] = Vmm(i);
  }

  /// The rows of `s` at `base` (plus its offset), in place.
  void emit(Xbyak::Reg64 base, const ir::SoftmaxRows& s) {
    for (const auto& r : pool_)
      if (r.getIdx() != base.getIdx() && t_.size() < 4) t_.push_back(r);
    SNIPPETS_ASSERT(t_.size() == 4) << "SoftmaxRows needs four general-purpose registers";
    quantized_ = s.quantized >= 0;
    if (quantized_) // the byte rows' pointer in the sweep
      for (const auto& r : pool_)
        if (r.getIdx() != base.getIdx() && t_.size() < 5 &&
            std::none_of(t_.begin(), t_.end(),
                         [&](const auto& u) { return u.getIdx() == r.getIdx(); }))
          t_.push_back(r);
    SNIPPETS_ASSERT(t_.size() == (quantized_ ? 5u : 4u))
        << "quantized SoftmaxRows needs five general-purpose registers";
    for (const auto& r : t_) h_.push(r);
    const Xbyak::Reg64 row = t_[0], rows = t_[2], scales = t_[3];
    n_ = s.n;
    scales_ = s.scales >= 0;
    q_ = s;
    h_.lea(row, h_.ptr[base + static_cast<int>(s.offset * 4)]);
    if (scales_ || quantized_) // (the byte rows: 4 x quantized bytes on)
      h_.lea(scales, h_.ptr[base + static_cast<int>((scales_ ? s.scales : s.quantized) * 4)]);
    h_.mov(rows, static_cast<std::uint32_t>(s.rows));
    Xbyak::Label next;
    h_.L(next);
    h_.push(rows); // the sweeps use it as their counter
    emit_row();
    h_.pop(rows);
    h_.add(row, static_cast<int>(s.row_stride * 4));
    if (scales_) h_.add(scales, 4);
    if (quantized_) h_.add(scales, static_cast<int>(s.n)); // byte rows, n bytes each
    h_.dec(rows);
    h_.jnz(next, Xbyak::CodeGenerator::T_NEAR);
    for (auto it = t_.rbegin(); it != t_.rend(); ++it) h_.pop(*it);
  }

private:
  // registers: v0..3 accumulators, v4..7 values, v8 the row's max, then 1/sum, v9 AVX2 mask
  // (array elements: GCC 12 -O3 reports false -Warray-bounds on lone Xbyak register temporaries)
  const Vmm& acc(int k) const { return v_[k]; }
  const Vmm& val(int k) const { return v_[unroll + k]; }
  const Vmm& bcast() const { return v_[2 * unroll]; }
  const Vmm& mask() const { return v_[2 * unroll + 1]; }

  void emit_row() {
    EmitContext<Vmm> c{h_, consts_, scratch_};
    const float neg_inf = -std::numeric_limits<float>::infinity();
    // 1. max
    for (int k = 0; k < unroll; ++k) h_.vmovups(acc(k), consts_.value(neg_inf));
    sweep([&](int k, const Xbyak::Address& at, std::int64_t count) {
      if (count == lanes) return h_.vmaxps(acc(k), acc(k), at);
      load(val(k), at, count);
      if constexpr (avx512) {
        h_.vmaxps(acc(k) | Xbyak::Opmask(1), acc(k), val(k));
      } else {
        h_.vblendvps(val(k), acc(k), val(k), mask()); // the lanes past the row: acc
        h_.vmaxps(acc(k), acc(k), val(k));
      }
    });
    horizon(c, ir::ReduceKind::max_ignore_nan);
    // 2. exp(x - max), stored; its sum
    for (int k = 0; k < unroll; ++k) h_.vxorps(acc(k), acc(k), acc(k));
    sweep([&](int k, const Xbyak::Address& at, std::int64_t count) {
      load(val(k), at, count);
      h_.vsubps(val(k), val(k), bcast());
      math::exp(c, val(k), val(k), scratch_[0], scratch_[1], true); // x - max <= 0
      store(at, val(k), count); // sets the mask again: exp uses its registers
      if (count < lanes && !avx512) h_.vandps(val(k), val(k), mask());
      detail::fold(c, ir::ReduceKind::sum, acc(k), val(k), avx512 && count < lanes);
    });
    horizon(c, ir::ReduceKind::sum);
    // 3. 1 / sum: stored for the next Brgemm, or applied here
    h_.vmovups(val(0), consts_.value(1.0f));
    h_.vdivps(bcast(), val(0), bcast());
    if (scales_) return h_.vmovss(h_.ptr[t_[3]], Xbyak::Xmm(bcast().getIdx()));
    if (quantized_) return quantize_row(c);
    sweep([&](int k, const Xbyak::Address& at, std::int64_t count) {
      load(val(k), at, count);
      h_.vmulps(val(k), val(k), bcast());
      store(at, val(k), count);
    });
  }

  /// The byte row at t_[3]: Convert_to(Round(e * (1 / sum) / scale) + zero) per element.
  void quantize_row(EmitContext<Vmm>& c) {
    MemoryAccess<Vmm> bytes(h_, consts_, scratch_, false, Xbyak::util::rsp);
    h_.mov(t_[4], t_[3]);
    sweep(
        [&](int k, const Xbyak::Address& at, std::int64_t count) {
          load(val(k), at, count);
          h_.vmulps(val(k), val(k), bcast());
          h_.vdivps(val(k), val(k), consts_.value(q_.q_scale));
          detail::round(c, val(k), val(k), detail::round_nearest); // half to even
          if (q_.q_zero != 0) h_.vaddps(val(k), val(k), consts_.value(q_.q_zero));
          bytes.store(t_[4] + k * lanes, val(k), q_.q_type, count,
                      [&] { return set_tail_mask(h_, consts_, scratch_[0], count); });
        },
        lanes);
  }

  /// bcast() = the accumulators folded together, reduced across lanes, in every lane.
  void horizon(EmitContext<Vmm>& c, ir::ReduceKind kind) {
    for (int k = 1; k < unroll; ++k) detail::fold(c, kind, acc(0), acc(k), false);
    const Vmm in[1] = {acc(0)};
    Emitter<ir::HorizonReduce>::emit(c, ir::HorizonReduce{kind}, bcast(),
                                     std::span<const Vmm>(in, 1));
  }

  /// body(k, address, count) for each vector of the row: `unroll` at a time in a loop, then
  /// the whole vectors left, then the partial one (count < lanes). `bytes_step`: t_[4] also
  /// moves that many bytes per vector (the byte rows of quantize_row).
  template <class Body> void sweep(const Body& body, int bytes_step = 0) {
    const Xbyak::Reg64 row = t_[0], col = t_[1], counter = t_[2];
    const std::int64_t full = n_ / lanes, groups = full / unroll, rest = full % unroll;
    const std::int64_t tail = n_ % lanes;
    auto at = [&](int k) { return h_.ptr[col + k * lanes * 4]; };
    h_.mov(col, row);
    if (groups) {
      h_.mov(counter, static_cast<std::uint32_t>(groups));
      Xbyak::Label loop;
      h_.L(loop);
      for (int k = 0; k < unroll; ++k) body(k, at(k), lanes);
      h_.add(col, unroll * lanes * 4);
      if (bytes_step) h_.add(t_[4], unroll * bytes_step);
      h_.dec(counter);
      h_.jnz(loop, Xbyak::CodeGenerator::T_NEAR);
    }
    for (int k = 0; k < static_cast<int>(rest); ++k) body(k, at(k), lanes);
    if (tail) body(static_cast<int>(rest), at(static_cast<int>(rest)), tail);
  }

  /// `count` elements (the rest zero); a partial vector sets the tail mask (k1 / mask()).
  void load(Vmm dst, const Xbyak::Address& at, std::int64_t count) {
    load_elements(h_, consts_, dst, at, count, mask());
  }
  void store(const Xbyak::Address& at, Vmm src, std::int64_t count) {
    store_elements(h_, consts_, at, src, count, mask());
  }

  Xbyak::CodeGenerator& h_;
  ConstantTable& consts_;
  std::span<const Vmm> scratch_;
  std::span<const Xbyak::Reg64> pool_;
  std::vector<Xbyak::Reg64> t_;
  Vmm v_[2 * unroll + 2];
  std::int64_t n_ = 0;
  bool scales_ = false;
  bool quantized_ = false;
  ir::SoftmaxRows q_;
};

} // namespace snippets::x64
