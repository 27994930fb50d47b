// SPDX-License-Identifier: Apache-2.0
// snippets/target/aarch64/emitters/softmax_rows.hpp: the NEON code of SoftmaxRows
// (ir/lowered_ops.hpp), the Softmax between the two Brgemms of an attention kernel (or after the
// one of a MatMul -> Softmax kernel). The x86-64 emitter is target/x64/emitters/softmax_rows.hpp.
//
// Per row, up to three sweeps over the row in memory (a block of the scores, in cache), four
// vectors per step with one accumulator each, the last partial vector read and written exactly
// (memory_access.hpp, or lane by lane where the lanes past it must hold -inf):
//   1. max  = the row's maximum (FMAXNM);
//   2. e    = exp(x - max), stored back, and sum += e (the lanes past a partial vector are
//      cleared by a mask before they are added);
//   3. x    = e * (1 / sum), or, with SoftmaxRows::scales, 1 / sum stored for the Brgemm that
//      reads the rows (it scales its accumulators: one sweep less), or, with
//      SoftmaxRows::quantized, p = e * (1 / sum) quantized on the registers as the Quantize
//      decomposition computes it, FDIV by the scale, FRINTN (round half to even), FADD of the
//      zero point, then the converting store's FCVTZS/FCVTZU (NaN -> 0) and saturating
//      narrowing (SQXTN/UQXTN), and written as bytes to the A rows of an integer second
//      product (quantized attention); the f32 rows keep e.
// The same decomposition as DecomposeSoftmax. NaN: a NaN in the row reaches the sum through
// exp(NaN - max) whatever max is, so the row is NaN as in the reference without a
// NaN-propagating max. It runs between two Brgemms, so every vector register is free: v0-v12
// hold its values, and the constants of exp are pinned in v13-v31 for its rows
// (ConstantPool::begin_local_pins; their loads come after its code, which jumps there first and
// back). It takes six of the general-purpose registers the kernel emitter hands over.
#pragma once

#include <limits>
#include <vector>

#include "snippets/ir/lowered_ops.hpp"
#include "snippets/target/aarch64/emitters/fixed_register_context.hpp"
#include "snippets/target/aarch64/emitters/math.hpp"
#include "snippets/target/aarch64/emitters/reduce.hpp"

namespace snippets::aarch64 {

class SoftmaxRowsEmitter {
  using GpX = asmjit::a64::GpX;
  static constexpr int unroll = 4;

public:
  static constexpr int gp_temps = 6;

  explicit SoftmaxRowsEmitter(const FixedRegisterContext& c) : c_(c), a_(c.a) {}

  /// The rows of `s` at `base` (plus its offset), in place.
  void emit(const GpX& base, const ir::SoftmaxRows& s) {
    if (static_cast<int>(c_.temps.size()) < gp_temps)
      raise("snippets.compile.codegen", "the AArch64 SoftmaxRows needs " +
                                            std::to_string(gp_temps) +
                                            " free general-purpose registers");
    if (s.rows == 0) return;
    n_ = s.n;
    scales_ = s.scales >= 0;
    quantized_ = s.quantized >= 0;
    q_ = s;
    std::vector<Vec> free;
    for (int r = 2 * unroll + 5; r < vector_registers; ++r)
      free.push_back(asmjit::a64::v(static_cast<std::uint32_t>(r)));
    c_.consts.begin_local_pins(std::move(free));
    const asmjit::Label load = a_.newLabel(), body = a_.newLabel(), done = a_.newLabel();
    a_.b(load);
    a_.bind(body);
    c_.add_offset(row(), base, s.offset * 4);
    if (scales_ || quantized_) // (the byte rows: 4 x quantized bytes on)
      c_.add_offset(scale_at(), base, (scales_ ? s.scales : s.quantized) * 4);
    c_.set(rows(), s.rows);
    const asmjit::Label next = a_.newLabel();
    a_.bind(next);
    emit_row();
    c_.add_offset(row(), row(), s.row_stride * 4);
    if (scales_) a_.add(scale_at(), scale_at(), 4);
    if (quantized_) c_.add_offset(scale_at(), scale_at(), s.n); // byte rows, n bytes each
    a_.subs(rows(), rows(), 1);
    a_.b_ne(next);
    a_.b(done);
    a_.bind(load); // the pinned constants, once the rows' code has asked for them
    c_.consts.end_local_pins();
    a_.b(body);
    a_.bind(done);
  }

private:
  // general-purpose: the row, the sweep's position, the row counter, where the row's scale
  // (or its quantized bytes) goes, the sweep's counter, the sweep's position in the bytes
  GpX row() const { return c_.temps[0]; }
  GpX col() const { return c_.temps[1]; }
  GpX rows() const { return c_.temps[2]; }
  GpX scale_at() const { return c_.temps[3]; }
  GpX counter() const { return c_.temps[4]; }
  GpX byte_col() const { return c_.temps[5]; }
  // vector: v0..3 accumulators, v4..7 values, v8 the row's max, then 1 / sum, v9..12 temps
  static Vec acc(int k) { return asmjit::a64::v(static_cast<std::uint32_t>(k)); }
  static Vec val(int k) { return asmjit::a64::v(static_cast<std::uint32_t>(unroll + k)); }
  static Vec bcast() { return asmjit::a64::v(2 * unroll); }
  static Vec tmp(int k) { return asmjit::a64::v(static_cast<std::uint32_t>(2 * unroll + 1 + k)); }

  void emit_row() {
    const Vec scratch[1] = {tmp(3)};
    EmitContext c{a_, c_.consts, std::span<const Vec>(scratch, 1)};
    const float neg_inf = -std::numeric_limits<float>::infinity();
    // 1. max
    c_.consts.load_value(acc(0), neg_inf);
    for (int k = 1; k < unroll; ++k) a_.mov(acc(k).b16(), acc(0).b16());
    sweep([&](int k, std::int64_t at, std::int64_t count) {
      if (count == lanes) {
        a_.ldr(val(k).q(), asmjit::a64::ptr(col(), static_cast<std::int32_t>(at)));
      } else { // the lanes past the row hold -inf
        c_.consts.load_value(val(k), neg_inf);
        for (std::int64_t i = 0; i < count; ++i)
          a_.ld1(val(k).s(static_cast<std::uint32_t>(i)),
                 asmjit::a64::ptr(c_.mem.address(col(), at + 4 * i)));
      }
      a_.fmaxnm(acc(k).s4(), acc(k).s4(), val(k).s4());
    });
    horizon(c, ir::ReduceKind::max_ignore_nan);
    // 2. exp(x - max), stored; its sum
    for (int k = 0; k < unroll; ++k) a_.movi(acc(k).s4(), 0);
    sweep([&](int k, std::int64_t at, std::int64_t count) {
      c_.mem.load(val(k), col(), at, ElementType::f32, count);
      a_.fsub(val(k).s4(), val(k).s4(), bcast().s4());
      math::exp(c, val(k), val(k), tmp(0), tmp(1), tmp(2)); // x - max <= 0
      c_.mem.store_raw(val(k), col(), at, 4, static_cast<int>(count));
      if (count < lanes) { // the lanes past the row: exp(0 - max), not part of the sum
        ConstantPool::Entry mask{};
        for (std::int64_t i = 0; i < count; ++i) mask[static_cast<std::size_t>(i)] = ~0u;
        c_.consts.load(tmp(0), c_.consts.entry(mask));
        a_.and_(val(k).b16(), val(k).b16(), tmp(0).b16());
      }
      a_.fadd(acc(k).s4(), acc(k).s4(), val(k).s4());
    });
    horizon(c, ir::ReduceKind::sum);
    // 3. 1 / sum: stored for the next Brgemm, or applied here
    c_.consts.load_value(val(0), 1.0f);
    a_.fdiv(bcast().s4(), val(0).s4(), bcast().s4());
    if (scales_) {
      a_.str(bcast().s(), asmjit::a64::ptr(scale_at()));
      return;
    }
    if (quantized_) return quantize_row();
    sweep([&](int k, std::int64_t at, std::int64_t count) {
      c_.mem.load(val(k), col(), at, ElementType::f32, count);
      a_.fmul(val(k).s4(), val(k).s4(), bcast().s4());
      c_.mem.store_raw(val(k), col(), at, 4, static_cast<int>(count));
    });
  }

  /// The byte row at scale_at(): Convert_to(Round(e * (1 / sum) / scale) + zero) per element,
  /// operation by operation as the reference computes them (a division, not a product by the
  /// reciprocal of the scale).
  void quantize_row() {
    a_.mov(byte_col(), scale_at());
    sweep(
        [&](int k, std::int64_t at, std::int64_t count) {
          c_.mem.load(val(k), col(), at, ElementType::f32, count);
          a_.fmul(val(k).s4(), val(k).s4(), bcast().s4());
          a_.fdiv(val(k).s4(), val(k).s4(), c_.consts.value_in(q_.q_scale, tmp(0)).s4());
          a_.frintn(val(k).s4(), val(k).s4()); // half to even
          if (q_.q_zero != 0)
            a_.fadd(val(k).s4(), val(k).s4(), c_.consts.value_in(q_.q_zero, tmp(0)).s4());
          const Vec bytes = c_.mem.narrow(val(k), q_.q_type, tmp(1));
          c_.mem.store_raw(bytes, byte_col(), k * lanes, 1, static_cast<int>(count));
        },
        lanes);
  }

  /// bcast() = the accumulators folded together, reduced across lanes, in every lane.
  void horizon(EmitContext& c, ir::ReduceKind kind) {
    for (int k = 1; k < unroll; ++k) detail::fold(c, kind, acc(0), acc(k));
    const Vec in[1] = {acc(0)};
    Emitter<ir::HorizonReduce>::emit(c, ir::HorizonReduce{kind}, bcast(),
                                     std::span<const Vec>(in, 1));
  }

  /// body(k, bytes from col(), count) for each vector of the row: `unroll` at a time in a
  /// loop, then the whole vectors left, then the partial one (count < lanes). `bytes_step`:
  /// byte_col() also moves that many bytes per vector (the byte rows of quantize_row).
  template <class Body> void sweep(const Body& body, int bytes_step = 0) {
    const std::int64_t full = n_ / lanes, groups = full / unroll, rest = full % unroll;
    const std::int64_t tail = n_ % lanes;
    a_.mov(col(), row());
    if (groups) {
      c_.set(counter(), groups);
      const asmjit::Label loop = a_.newLabel();
      a_.bind(loop);
      for (int k = 0; k < unroll; ++k) body(k, k * lanes * 4, lanes);
      a_.add(col(), col(), unroll * lanes * 4);
      if (bytes_step) a_.add(byte_col(), byte_col(), unroll * bytes_step);
      a_.subs(counter(), counter(), 1);
      a_.b_ne(loop);
    }
    for (int k = 0; k < static_cast<int>(rest); ++k) body(k, k * lanes * 4, lanes);
    if (tail) body(static_cast<int>(rest), rest * lanes * 4, tail);
  }

  const FixedRegisterContext& c_;
  asmjit::a64::Assembler& a_;
  std::int64_t n_ = 0;
  bool scales_ = false;
  bool quantized_ = false;
  ir::SoftmaxRows q_;
};

} // namespace snippets::aarch64
