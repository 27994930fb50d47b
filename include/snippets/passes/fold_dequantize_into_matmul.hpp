// SPDX-License-Identifier: Apache-2.0
// snippets/passes/fold_dequantize_into_matmul.hpp: FoldDequantizeIntoMatMul (data flow), the
// QDQ MatMul of quantization tools as the int8 product.
//
// The pattern (a DequantizeLinear on each operand of an f32 MatMul, as the ONNX importer and the
// builder spell it):
//   A = (Convert_f32(xq) [- zx]) * sx        xq u8 or i8, zx and sx one value each
//   B = (Convert_f32(wq) [- zw]) * sw        sw one value, or one per column of B (per output
//                                            channel); zw likewise
//   y = MatMul(A, B)                          f32, A not transposed
// becomes
//   y = Convert_f32(MatMul{.a_zero_point = zx}(xq, wq')) * s,    s = f32(sx * sw) (per column)
// the integer product of the raw bytes (i32, exact: docs/matmul.md#int8) with the scales applied
// on the accumulators by the epilogue every int8 product has (Convert, Multiply), so whatever
// follows the MatMul (bias, activation, QuantizeLinear) joins that epilogue as before. wq' is
// wq when it is i8 and zw is 0; when wq is a Constant, wq - zw if every value fits i8 (a u8
// weight with zero point 128, a per-column zero point). Otherwise the pass leaves the MatMul
// alone and it stays an f32 product of the dequantized values: a nonzero weight zero point on a
// B computed at run time, values of wq - zw outside i8, scales or zero points computed at run
// time or per row, a zero point that is not an integer of its operand's range, a transposed A,
// constant weights with batches, a depth of 0 or past MatMulForm::max_integer_depth. (A B input
// read along its columns, K in attention, is packed by the kernel like one read along its rows.)
// An operand may also be a Transpose of a dequantization with one scale and zero point (the
// bytes dequantized before attention's transposes of Q, K and V): that is the dequantization
// of the transposed bytes, and the Transpose moves onto them (not onto constant weights).
//
// Exactness: the i32 sums are exact; the f32 result differs from the dequantized f32 product
// (whose reference is computed in double) by the roundings of s, of the sum to f32 (past 2^24)
// and of the final product: a few units in the last place of the result, however much the
// terms of the sum cancel (tests/test_fold_dequantize_into_matmul.cpp).
// It runs first in DefaultDataFlow (a body compiled directly), and a Program runs it on the
// whole model before the tokenizer when its backend multiplies int8, since the tokenizer takes
// a MatMul's operands from outside its Subgraph; the ONNX importer folds its QDQ MatMuls and
// QLinearMatMul with fold_dequantized_product when it loads them.
#pragma once

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "snippets/passes/data_flow.hpp"
#include "snippets/passes/matmul_form.hpp"
#include "snippets/passes/properties.hpp"

namespace snippets::passes {

namespace detail {

/// A dequantized operand: (Convert_f32(q) - zero) * scale, the zero point and scale one value
/// (size 1) or one per column of B.
struct Dequantized {
  ir::Value q;
  std::vector<double> zeros{0.0}, scales{1.0};
};

/// The values of a Scalar or Constant `v` (f32, or of q's type for a zero point): one, or one
/// per index of `axis` of a value of rank `rank` (every other extent 1), in that axis' order.
template <class T>
std::optional<std::vector<double>> per_axis_values(const ir::Graph<T>& g, ir::Value v,
                                                   std::size_t rank,
                                                   std::optional<std::size_t> axis) {
  const ir::Node<T>& n = g.node(v.output.node);
  if (const auto u = uniform_value<T>(n.op)) return std::vector<double>{*u};
  const auto* c = std::get_if<ir::Constant>(&n.op);
  if (!c || !axis) return std::nullopt;
  const Shape& s = c->output.shape;
  if (s.rank() > rank) return std::nullopt;
  for (std::size_t i = 0; i < s.rank(); ++i)
    if (s[i] != 1 && i + (rank - s.rank()) != *axis) return std::nullopt;
  return c->values; // one non-1 extent: the values are in its order
}

/// Whether `v` (of `from`'s values) is an integer `type` holds.
inline bool holds_integer(ElementType type, double v) {
  return v == std::nearbyint(v) && round_to(type, v) == v;
}

/// `v` as a dequantized u8/i8 operand of rank `rank`, or nothing. `axis`: the axis per-column
/// scales and zero points may run along (B's columns), none for per-tensor only (A).
template <class T>
std::optional<Dequantized> match_dequantized(const ir::Graph<T>& g, ir::Value v,
                                             std::optional<std::size_t> axis) {
  const ir::Node<T>& mul = g.node(v.output.node);
  if (!ir::is<ir::Multiply>(mul.op) || g.type(v).type != ElementType::f32) return std::nullopt;
  const std::size_t rank = g.type(v).shape.rank();
  for (int side = 0; side < 2; ++side) {
    const ir::Value scale{g.id(), mul.inputs[std::size_t(side)]};
    ir::Value d{g.id(), mul.inputs[std::size_t(1 - side)]};
    auto scales = per_axis_values(g, scale, rank, axis);
    if (!scales || g.type(scale).type != ElementType::f32) continue;
    Dequantized r;
    r.scales = std::move(*scales);
    if (const ir::Node<T>& sub = g.node(d.output.node); ir::is<ir::Subtract>(sub.op)) {
      const ir::Value zero{g.id(), sub.inputs[1]};
      auto zeros = per_axis_values(g, zero, rank, axis);
      if (!zeros) continue;
      r.zeros = std::move(*zeros);
      d = ir::Value{g.id(), sub.inputs[0]};
    }
    const ir::Node<T>& cvt = g.node(d.output.node);
    const auto* c = std::get_if<ir::Convert>(&cvt.op);
    if (!c || c->to != ElementType::f32) continue;
    r.q = ir::Value{g.id(), cvt.inputs[0]};
    const ElementType qt = g.type(r.q).type;
    if (!is_byte_integer(qt) || g.type(r.q).shape != g.type(v).shape) continue;
    bool ok = true;
    for (double z : r.zeros) ok = ok && holds_integer(qt, z);
    for (double s : r.scales) ok = ok && std::isfinite(s);
    if (ok) return r;
  }
  return std::nullopt;
}

/// An operand of the MatMul: a dequantized value, or a Transpose of one with a single scale
/// and zero point (the dequantization of the transposed bytes: `order` transposes q).
struct DequantizedOperand {
  Dequantized d;
  std::optional<std::vector<std::size_t>> order;
};

template <class T>
std::optional<DequantizedOperand> match_operand(const ir::Graph<T>& g, ir::Value v,
                                                std::optional<std::size_t> axis) {
  if (auto d = match_dequantized(g, v, axis)) return DequantizedOperand{std::move(*d), {}};
  const ir::Node<T>& n = g.node(v.output.node);
  const auto* t = std::get_if<ir::Transpose>(&n.op);
  if (!t) return std::nullopt;
  auto d = match_dequantized(g, ir::Value{g.id(), n.inputs[0]}, std::nullopt);
  if (!d || ir::is<ir::Constant>(g.node(d->q.output.node).op)) return std::nullopt;
  return DequantizedOperand{std::move(*d), t->order};
}

} // namespace detail

/// Builds in `g` the int8 product of `mm` (an f32 MatMul) on `a` and `b` of `g` when both are
/// dequantized u8/i8 values (the file comment's pattern and conditions), and returns its f32
/// value; nothing when the pattern does not apply (then `g` is unchanged). `name` names the
/// product's nodes; the dequantizations stay in `g` for other users (dead nodes otherwise).
template <class T>
std::optional<ir::Value> fold_dequantized_product(ir::Graph<T>& g, const ir::MatMul& mm,
                                                  ir::Value a, ir::Value b,
                                                  const std::string& name) {
  if (mm.transpose_a || mm.a_zero_point != 0) return std::nullopt;
  const Shape& sb = g.type(b).shape;
  if (sb.rank() < 2 || g.type(a).shape.rank() < 2) return std::nullopt;
  const std::size_t col_axis = sb.rank() - (mm.transpose_b ? 2 : 1);
  const Dim k = sb[sb.rank() - (mm.transpose_b ? 1 : 2)], n = sb[col_axis];
  if (k == dynamic || k < 1 || k > MatMulForm::max_integer_depth || n == dynamic)
    return std::nullopt;
  const auto xo = detail::match_operand(g, a, std::nullopt);
  const auto wo = detail::match_operand(g, b, col_axis);
  if (!xo || !wo) return std::nullopt;
  const detail::Dequantized *x = &xo->d, *w = &wo->d;
  // constant weights are packed once, for one batch (LowerBrgemm)
  if (ir::is<ir::Constant>(g.node(w->q.output.node).op))
    for (std::size_t i = 0; i + 2 < sb.rank(); ++i)
      if (sb[i] != 1) return std::nullopt;
  auto column = [&](const std::vector<double>& v, Dim j) {
    return v.size() == 1 ? v[0] : v[std::size_t(j)];
  };
  // B as i8: as it is, or a Constant less its zero points
  ir::Value wq = w->q;
  const bool zero_w =
      std::all_of(w->zeros.begin(), w->zeros.end(), [](double z) { return z == 0; });
  if (!zero_w || g.type(wq).type != ElementType::i8) {
    const auto* c = std::get_if<ir::Constant>(&g.node(wq.output.node).op);
    if (!c) return std::nullopt;
    std::vector<double> values(c->values);
    const Shape& s = c->output.shape;
    std::int64_t inner = 1; // elements per index of the column axis
    for (std::size_t i = col_axis + 1; i < s.rank(); ++i) inner *= s[i];
    for (std::size_t i = 0; i < values.size(); ++i) {
      values[i] -= column(w->zeros, Dim(std::int64_t(i) / inner % n));
      if (!detail::holds_integer(ElementType::i8, values[i])) return std::nullopt;
    }
    wq = g.constant(ElementType::i8, s, std::move(values), name + "/weights");
  }
  std::vector<double> scales;
  for (Dim j = 0; j < (x->scales.size() == 1 && w->scales.size() == 1 ? 1 : n); ++j)
    scales.push_back(round_to(ElementType::f32, x->scales[0] * column(w->scales, j)));
  for (double s : scales)
    if (!std::isfinite(s)) return std::nullopt;
  ir::Value xq = x->q;
  if (xo->order) xq = g.make(ir::Transpose{*xo->order}, {xq}, name + "/a")[0];
  if (wo->order) wq = g.make(ir::Transpose{*wo->order}, {wq}, name + "/b")[0];
  const auto zx = static_cast<std::int32_t>(x->zeros[0]);
  const ir::Value acc = g.make(ir::MatMul{false, mm.transpose_b, zx}, {xq, wq}, name + "/int8")[0];
  const ir::Value sums = g.make(ir::Convert{ElementType::f32}, {acc}, name + "/f32")[0];
  const ir::Value s = scales.size() == 1
                          ? g.scalar(ElementType::f32, scales[0], {}, name + "/scale")
                          : g.constant(ElementType::f32, Shape{n}, scales, name + "/scale");
  return g.make(ir::Multiply{}, {sums, s}, name)[0];
}

struct FoldDequantizeIntoMatMul {
  using pass_tag = data_flow_pass_tag;
  static constexpr std::string_view name = "FoldDequantizeIntoMatMul";
  using before = Properties<property::RanksAligned>;

  /// Whether `g` has a MatMul whose operands are both dequantized bytes (the pass may change
  /// it; a graph without one it only copies, less its dead nodes).
  template <class T> static bool finds_candidates(const ir::Graph<T>& g) {
    for (ir::NodeId id = 0; id < g.size(); ++id) {
      const ir::Node<T>& n = g.node(id);
      if (!ir::is<ir::MatMul>(n.op) || n.outputs[0].type != ElementType::f32) continue;
      const ir::Value a{g.id(), n.inputs[0]}, b{g.id(), n.inputs[1]};
      const Shape& sb = g.type(b).shape;
      if (sb.rank() >= 2 && detail::match_operand(g, a, std::nullopt) &&
          detail::match_operand(g, b, std::optional{sb.rank() - 1}))
        return true;
    }
    return false;
  }

  template <class T> ir::Graph<T> run(const ir::Graph<T>& body) const {
    return rebuild(body,
                   [&](ir::Graph<T>& out, const ir::Node<T>& n,
                       std::span<const ir::Value> in) -> std::optional<std::vector<ir::Value>> {
                     const auto* mm = std::get_if<ir::MatMul>(&n.op);
                     if (!mm || n.outputs[0].type != ElementType::f32) return std::nullopt;
                     const auto y = fold_dequantized_product(out, *mm, in[0], in[1], n.name);
                     if (!y || out.type(*y).shape != n.outputs[0].shape) return std::nullopt;
                     return std::vector{*y};
                   });
  }
};

} // namespace snippets::passes
