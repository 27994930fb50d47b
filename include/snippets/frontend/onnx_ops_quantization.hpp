// SPDX-License-Identifier: Apache-2.0
// snippets/frontend/onnx_ops_quantization.hpp: ONNX QuantizeLinear, DequantizeLinear and
// MatMulInteger (convert_matmul_integer).
//
//  - QuantizeLinear(x, y_scale, y_zero_point) becomes ir::Quantize: saturate(round(x / y_scale)
//    + y_zero_point) as the zero point's type (u8 or i8; u8 without one), with the quotient in
//    f32 and rounded half to even, as ONNX's reference computes it (reference/quantization.hpp);
//    an int32 x is converted to the scale's type first;
//  - DequantizeLinear(x, x_scale, x_zero_point) becomes (Convert(x) - zero_point) * scale in
//    the scale's type: exact on 8-bit x but for the one rounding of the product, as ONNX's.
//    When all its inputs are known (quantized weights) it is computed while loading, so a QDQ
//    MatMul gets a constant B, which its kernel packs.
// Scales and zero points are per tensor (one value) or, from opset 13, per axis: a vector of
// x's extent along `axis` (default 1), reshaped to [C, 1, ..., 1] so that it broadcasts along
// that axis; a known one is reshaped while loading. What else they hold is refused with
// [snippets.onnx.bad_quantization]: another shape, a zero point whose shape is not the
// scale's, a scale known at load time that is 0 or not finite. The ops then fuse with their
// neighbours: DecomposeQuantization makes a Quantize kernel ops, and a dequantization is
// elementwise ops on the u8 or i8 values the kernel loads.
#pragma once

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <vector>

#include "snippets/frontend/onnx_ops_host.hpp"
#include "snippets/frontend/onnx_ops_tensor.hpp"
#include "snippets/passes/fold_dequantize_into_matmul.hpp"
#include "snippets/reference/quantization.hpp"
#include "snippets/target/codegen.hpp"

namespace snippets::onnx::detail {

/// How a scale and its zero point line up with x: one value, or one per index of `axis`.
struct QuantizationAxis {
  bool per_axis = false;
  std::size_t axis = 0;
  std::vector<Dim> dims; // per axis: [C, 1, ..., 1], the scale's shape against x
};

template <class T> Shape operand_shape(NodeContext<T>& c, std::size_t i) {
  if (const HostTensor* h = c.host(i)) return h->shape();
  return static_shape(c, c.in(i));
}

/// Checks the scale (input 1) and zero point (input 2, optional) of a node quantizing `x`.
template <class T> QuantizationAxis quantization_axis(NodeContext<T>& c, const Shape& x) {
  auto bad = [&](const std::string& what) {
    raise("snippets.onnx.bad_quantization", c.who() + ": " + what);
  };
  const Shape s = operand_shape(c, 1);
  QuantizationAxis q;
  const std::int64_t axis = c.opset() >= 13 ? c.attr_int("axis", 1) : 1;
  if (s.rank() == 1 && s[0] != 1) {
    if (c.opset() < 13)
      bad("the scale " + s.to_string() + " is not one value (per-axis scales: opset 13)");
    q.axis = normalize_axis(axis, x.rank(), c.who());
    if (s[0] != x[q.axis])
      bad("the scale " + s.to_string() + " does not hold one value per index of axis " +
          std::to_string(q.axis) + " of x " + x.to_string());
    q.per_axis = true;
    q.dims.assign(x.rank() - q.axis, 1);
    q.dims[0] = s[0];
  } else if (s.element_count() != 1 || s.rank() > 1) {
    bad("the scale " + s.to_string() + " is neither one value nor a vector along an axis");
  }
  if (c.has_in(2) && operand_shape(c, 2) != s)
    bad("the zero point " + operand_shape(c, 2).to_string() + " does not have the scale's shape " +
        s.to_string());
  if (const HostTensor* h = c.host(1))
    for (double v : h->values)
      if (v == 0 || !std::isfinite(v))
        bad("a scale of " + std::to_string(v) + "; a quantization step is finite and not 0");
  return q;
}

/// Input `i` (a scale or zero point) as a graph value of `type`, shaped to broadcast against x.
template <class T>
ir::Value quantization_operand(NodeContext<T>& c, std::size_t i, const QuantizationAxis& q,
                               ElementType type) {
  if (const HostTensor* h = c.host(i)) {
    const Shape s = q.per_axis ? Shape(q.dims) : Shape{};
    return c.g().constant(type, s, h->values, c.node().input(int(i)));
  }
  ir::Value v = c.in(i);
  if (c.type(v).type != type) v = c.op(ir::Convert{type}, {v});
  return q.per_axis ? reshape_to<T>(c, v, q.dims) : v;
}

/// The element type of the zero point's values (input 2), u8 without one.
template <class T> ElementType zero_point_type(NodeContext<T>& c) {
  if (!c.has_in(2)) return ElementType::u8;
  const HostTensor* h = c.host(2);
  const ElementType t =
      h ? require_element_type(h->dtype, c.who() + ": the zero point") : c.type(c.in(2)).type;
  return t;
}

/// The element type of input `i`, known or not.
template <class T> ElementType operand_type(NodeContext<T>& c, std::size_t i) {
  const HostTensor* h = c.host(i);
  return h ? require_element_type(h->dtype, c.who() + ": input " + std::to_string(i))
           : c.type(c.in(i)).type;
}

template <class T> ElementType scale_type(NodeContext<T>& c) {
  const HostTensor* h = c.host(1);
  const ElementType t =
      h ? require_element_type(h->dtype, c.who() + ": the scale") : c.type(c.in(1)).type;
  if (!is_float(t))
    raise("snippets.onnx.bad_quantization",
          c.who() + ": the scale is " + std::string(to_string(t)) + "; it is a float");
  return t;
}

template <class T> void convert_quantize_linear(NodeContext<T>& c) {
  ir::Value x = c.in(0);
  const QuantizationAxis q = quantization_axis(c, static_shape(c, x));
  const ElementType to = zero_point_type(c), f = scale_type(c);
  if (to != ElementType::u8 && to != ElementType::i8)
    raise("snippets.onnx.unsupported_type", c.who() + " quantizes to " +
                                                std::string(to_string(to)) +
                                                "; snippets quantizes to "
                                                "uint8 or int8");
  if (c.type(x).type != f) x = c.op(ir::Convert{f}, {x});
  const ir::Value zero = c.has_in(2) ? quantization_operand(c, 2, q, f) : c.scalar(x, 0);
  c.set_out(0, c.op(ir::Quantize{to}, {x, quantization_operand(c, 1, q, f), zero}));
}

template <class T> void convert_dequantize_linear(NodeContext<T>& c) {
  const ir::Value x = c.in(0);
  const QuantizationAxis q = quantization_axis(c, static_shape(c, x));
  const ElementType f = scale_type(c);
  ir::Value y = c.op(ir::Convert{f}, {x});
  const HostTensor* zero = c.host(2);
  const bool zero_is_0 = zero && std::all_of(zero->values.begin(), zero->values.end(),
                                             [](double v) { return v == 0; });
  if (c.has_in(2) && !zero_is_0) y = c.op(ir::Subtract{}, {y, quantization_operand(c, 2, q, f)});
  c.set_out(0, c.op(ir::Multiply{}, {y, quantization_operand(c, 1, q, f)}));
}

/// MatMulInteger(A, B, a_zero_point, b_zero_point): (A - a_zero_point)(B - b_zero_point) summed
/// exactly into int32, A and B u8 or i8. When A's zero point is one known value and B's is
/// zero, or B and its zero point (per tensor or per column) are known and B less it fits int8,
/// it is the IR's integer MatMul, which kernels compute (u8/i8 A by i8 B): A's zero point is
/// MatMul::a_zero_point, B's is subtracted while loading. Otherwise (zero points computed at
/// run time, per row of A, B's on a run-time B) the same exact value is a MatMul of i32
/// operands less their zero points, which the reference interpreter computes. A zero point
/// shaped neither as one value nor as one per row (A) or column (B):
/// [snippets.onnx.bad_quantization].
template <class T> void convert_matmul_integer(NodeContext<T>& c) {
  const ir::Value a = c.in(0);
  const ElementType a_type = c.type(a).type, b_type = operand_type(c, 1);
  for (const ElementType t : {a_type, b_type})
    if (!is_byte_integer(t))
      raise("snippets.onnx.unsupported_type", c.who() + " multiplies " + std::string(to_string(t)) +
                                                  "; MatMulInteger takes uint8 or int8");
  const Shape sa = static_shape(c, a), sb = operand_shape(c, 1);
  const Dim m = sa.rank() >= 2 ? sa[sa.rank() - 2] : 1, n = sb.rank() >= 2 ? sb[sb.rank() - 1] : 1;
  // zero points: one value, or (a 1-D vector) one per row of A / column of B
  auto zero_count = [&](std::size_t i, Dim per, const char* which) -> Dim {
    if (!c.has_in(i)) return 0;
    const Shape z = operand_shape(c, i);
    if (z.element_count() == 1) return 1;
    if (z.rank() == 1 && z[0] == per) return per;
    raise("snippets.onnx.bad_quantization",
          c.who() + ": " + which + " " + z.to_string() + " is neither one value nor one per " +
              (i == 2 ? "row of A " : "column of B ") + (i == 2 ? sa : sb).to_string());
  };
  const Dim za_count = zero_count(2, m, "a_zero_point"),
            zb_count = zero_count(3, n, "b_zero_point");
  const HostTensor *za = c.host(2), *zb = c.host(3), *hb = c.host(1);
  auto all_equal = [](const HostTensor* h, double v) {
    return std::all_of(h->values.begin(), h->values.end(), [&](double x) { return x == v; });
  };
  const bool za_one = !c.has_in(2) || (za && (za->values.empty() || all_equal(za, za->values[0])));
  const bool zb_zero = !c.has_in(3) || (zb && all_equal(zb, 0));
  std::optional<std::vector<double>> b_less; // known B less its zero point, when it fits i8
  if (hb && (zb_zero || zb)) {
    std::vector<double> v = hb->values.empty() ? std::vector<double>{0} : hb->values;
    for (std::size_t i = 0; i < v.size() && !zb_zero; ++i)
      v[i] -= zb->values[zb_count == 1 ? 0 : i % std::size_t(n)];
    if (std::all_of(v.begin(), v.end(), [](double x) { return round_to(ElementType::i8, x) == x; }))
      b_less = std::move(v);
  }
  if (za_one && (b_less || (zb_zero && b_type == ElementType::i8))) { // the integer MatMul
    const auto a_zero = static_cast<std::int32_t>(za && !za->values.empty() ? za->values[0] : 0);
    const ir::Value b =
        b_less ? c.g().constant(ElementType::i8, sb, std::move(*b_less), c.node().input(1))
               : c.in(1);
    c.set_out(0, c.op(ir::MatMul{false, false, a_zero}, {a, b}));
    return;
  }
  // otherwise exactly, in i32 (the reference's)
  constexpr ElementType i32 = ElementType::i32;
  auto less_zero = [&](ir::Value x, std::size_t i, Dim count) {
    x = c.op(ir::Convert{i32}, {x});
    if (!c.has_in(i)) return x;
    ir::Value z = c.op(ir::Convert{i32}, {c.in(i)});
    const Dim rows[] = {count, 1};
    if (i == 2 && count > 1) z = reshape_to<T>(c, z, rows); // one per row
    return c.op(ir::Subtract{}, {x, z});
  };
  c.set_out(0, c.op(ir::MatMul{}, {less_zero(a, 2, za_count), less_zero(c.in(1), 3, zb_count)}));
}

/// Whether models for T fold QDQ MatMuls when they load: T's code generator multiplies bytes.
template <class T> bool folds_int8_products() {
  if constexpr (CodeGenerator<T>)
    return backend_int8_products<T>(T::default_variant());
  else
    return false;
}

/// (Convert_f32(x) - zero) * scale in the graph, the form FoldDequantizeIntoMatMul matches; the
/// scale and zero point one value or a vector along x's last axis (per column).
template <class T>
ir::Value dequantized_value(NodeContext<T>& c, ir::Value x, const HostTensor& scale,
                            const std::optional<HostTensor>& zero) {
  ir::Graph<T>& g = c.g();
  auto operand = [&](const HostTensor& h) {
    return h.values.size() == 1
               ? g.scalar(ElementType::f32, h.values[0])
               : g.constant(ElementType::f32, Shape{Dim(h.values.size())}, h.values);
  };
  ir::Value d = c.op(ir::Convert{ElementType::f32}, {x});
  if (zero && std::any_of(zero->values.begin(), zero->values.end(), [](double v) { return v; }))
    d = c.op(ir::Subtract{}, {d, operand(*zero)});
  return c.op(ir::Multiply{}, {d, operand(scale)});
}

/// MatMul(A, DequantizeLinear(W)) with A a dequantized u8/i8 value and W known u8/i8 weights
/// (a QDQ MatMul): the int8 product of passes::fold_dequantized_product when it applies and T
/// multiplies bytes, else the f32 MatMul of the dequantized weights.
template <class T> void convert_matmul_dequantized(NodeContext<T>& c) {
  const Dequantization* w = c.dequantized(1);
  if (w && !c.host(0) && folds_int8_products<T>()) {
    const ir::Value a = c.in(0);
    const Shape sb = w->x.shape();
    // B's ops are built only where the fold takes them (else they would stay, dead, in the
    // model): A dequantized, weights less their zero points within i8, per tensor or column
    bool fits = sb.rank() >= 2 && (!w->axis || *w->axis == sb.rank() - 1) &&
                passes::detail::match_dequantized(c.g(), a, std::nullopt).has_value();
    const std::size_t n = sb.rank() >= 1 ? std::size_t(sb[sb.rank() - 1]) : 1;
    for (std::size_t i = 0; fits && i < w->x.values.size(); ++i)
      fits = passes::detail::holds_integer(
          ElementType::i8,
          w->x.values[i] -
              (w->zero ? w->zero->values[w->zero->values.size() == 1 ? 0 : i % n] : 0));
    if (fits) {
      const ir::Value q = c.g().constant(require_element_type(w->x.dtype, c.who() + ": B"), sb,
                                         w->x.values, c.node().input(1) + "/quantized");
      const ir::Value b = dequantized_value(c, q, w->scale, w->zero);
      if (const auto y = passes::fold_dequantized_product(c.g(), ir::MatMul{}, a, b, c.name()))
        return c.set_out(0, *y); // the unused dequantization of B is dead
    }
  }
  convert_matmul(c);
}

/// QLinearMatMul(a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point):
/// QuantizeLinear(MatMul(DequantizeLinear(a), DequantizeLinear(b)), y_scale, y_zero_point), built
/// as those ops are. With known scales and zero points (per tensor; b's may be per column) and b
/// i8 or known, the product is the int8 one (fold_dequantized_product) and the requantization
/// runs on its accumulators; otherwise the dequantized values are multiplied in f32.
template <class T> void convert_qlinear_matmul(NodeContext<T>& c) {
  const ElementType f32 = ElementType::f32;
  auto operand = [&](std::size_t i) {
    if (const HostTensor* h = c.host(i);
        h && h->values.size() > 1) // per column: along the last axis
      return c.g().constant(f32, Shape{Dim(h->values.size())}, h->values, c.node().input(int(i)));
    if (const HostTensor* h = c.host(i)) return c.g().scalar(f32, h->values.at(0));
    ir::Value v = c.in(i);
    return c.type(v).type == f32 ? v : c.op(ir::Convert{f32}, {v});
  };
  auto dequantized = [&](std::size_t x) {
    const ElementType t = operand_type(c, x);
    if (!is_byte_integer(t))
      raise("snippets.onnx.unsupported_type", c.who() + " multiplies " + std::string(to_string(t)) +
                                                  "; QLinearMatMul takes uint8 or int8");
    const HostTensor* zero = c.host(x + 2);
    ir::Value d = c.op(ir::Convert{f32}, {c.in(x)});
    if (!zero || std::any_of(zero->values.begin(), zero->values.end(), [](double v) { return v; }))
      d = c.op(ir::Subtract{}, {d, operand(x + 2)});
    return c.op(ir::Multiply{}, {d, operand(x + 1)});
  };
  for (const std::size_t i : {1, 4, 6}) {
    const HostTensor* h = c.host(i);
    for (double v : h ? h->values : std::vector<double>{})
      if (v == 0 || !std::isfinite(v))
        raise("snippets.onnx.bad_quantization", c.who() + ": a scale of " + std::to_string(v) +
                                                    "; a quantization step is finite and not 0");
  }
  const ir::Value a = dequantized(0), b = dequantized(3);
  std::optional<ir::Value> y;
  if (folds_int8_products<T>())
    y = passes::fold_dequantized_product(c.g(), ir::MatMul{}, a, b, c.name());
  if (!y) y = c.op(ir::MatMul{}, {a, b});
  const ElementType to = operand_type(c, 7);
  const HostTensor* zero = c.host(7);
  const ir::Value z = zero ? c.g().scalar(f32, zero->values.at(0)) : operand(7);
  c.set_out(0, c.op(ir::Quantize{to}, {*y, operand(6), z}));
}

namespace host {

/// DequantizeLinear of known values (weights): the graph's arithmetic, in f32 steps.
template <class T> void dequantize_linear(NodeContext<T>& c) {
  const HostTensor& x = known(c, 0);
  const QuantizationAxis q = quantization_axis(c, x.shape());
  const HostTensor& s = known(c, 1);
  const std::vector<double> zero = c.has_in(2) ? known(c, 2).values : std::vector<double>(1, 0);
  require_element_type(s.dtype, c.who() + ": the scale");
  std::int64_t inner = 1; // elements per index of the axis
  for (std::size_t a = q.axis + 1; q.per_axis && a < x.dims.size(); ++a) inner *= x.dims[a];
  HostTensor y{s.dtype, x.dims, std::vector<double>(x.values.size())};
  for (std::size_t i = 0; i < y.values.size(); ++i) {
    const std::size_t k = q.per_axis ? std::size_t(std::int64_t(i) / inner % q.dims[0]) : 0;
    // an omitted zero point is one 0 whatever the scale's extent
    const double d = reference::quantization::f32(x.values[i] - zero[zero.size() == 1 ? 0 : k]);
    y.values[i] = round_host(s.dtype, d * s.values[k]);
  }
  std::shared_ptr<const Dequantization> from;
  if (is_byte_integer(require_element_type(x.dtype, c.who() + ": x")) &&
      s.dtype == pb::TensorProto::FLOAT)
    from = std::make_shared<const Dequantization>(
        Dequantization{x, s, c.has_in(2) ? std::optional{known(c, 2)} : std::nullopt,
                       q.per_axis ? std::optional{q.axis} : std::nullopt});
  c.set_out_host(0, std::move(y), std::move(from));
}

} // namespace host

} // namespace snippets::onnx::detail
