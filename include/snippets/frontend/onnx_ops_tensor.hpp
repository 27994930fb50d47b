// SPDX-License-Identifier: Apache-2.0
// snippets/frontend/onnx_ops_tensor.hpp: ONNX shape, layout, MatMul, reduction and Softmax ops.
//
// Shapes, axes and permutations must be known when the model loads (static shapes are what
// our kernels compile for), so Reshape's shape, Squeeze's axes, ... are read with
// NodeContext::constant. Reductions other than ReduceSum and ReduceMax are written with them
// (ReduceMean = ReduceSum / n, ReduceMin = -ReduceMax(-x), ReduceLogSumExp = m + log(sum(exp(x -
// m))) with m the max, ...). Softmax of opset < 13 flattens to 2-D around `axis`, as ONNX defined
// it then; LogSoftmax is x - m - log(sum(exp(x - m))). Split and Slice (step 1) of run-time
// tensors become ir::Slice ops, one per part and one per sliced axis.
#pragma once

#include "snippets/frontend/onnx_node_context.hpp"
#include "snippets/frontend/onnx_ops_host.hpp"

namespace snippets::onnx::detail {

template <class T> const Shape& static_shape(NodeContext<T>& c, ir::Value v) {
  const Shape& s = c.type(v).shape;
  if (!s.is_static())
    raise("snippets.onnx.dynamic_shape",
          c.who() + ": input shape " + s.to_string() +
              " is not static; fix the input shapes with LoadOptions::input_shapes");
  return s;
}

template <class T> ir::Value reshape_to(NodeContext<T>& c, ir::Value x, std::span<const Dim> dims) {
  if (std::equal(dims.begin(), dims.end(), c.type(x).shape.begin(), c.type(x).shape.end()))
    return x;
  return c.op(ir::Reshape{std::vector<std::int64_t>(dims.begin(), dims.end())}, {x});
}

template <class T> void convert_reshape(NodeContext<T>& c) {
  const ir::Value x = c.in(0);
  const Shape& s = static_shape(c, x);
  std::vector<std::int64_t> target = c.constant(1, "shape").ints();
  const bool allow_zero = c.attr_int("allowzero", 0) != 0;
  for (std::size_t i = 0; i < target.size(); ++i)
    if (target[i] == 0 && !allow_zero) {
      if (i >= s.rank()) c.bad_attribute("shape entry 0 copies a dimension the input lacks");
      target[i] = s[i];
    }
  c.set_out(0, c.op(ir::Reshape{target}, {x}));
}

template <class T> void convert_flatten(NodeContext<T>& c) {
  const ir::Value x = c.in(0);
  const Shape& s = static_shape(c, x);
  auto axis = c.attr_int("axis", 1);
  if (axis < 0) axis += static_cast<std::int64_t>(s.rank());
  if (axis < 0 || axis > static_cast<std::int64_t>(s.rank()))
    c.bad_attribute("axis " + std::to_string(c.attr_int("axis", 1)) + " is out of range");
  const auto split = s.dims().begin() + axis;
  const Dim dims[] = {product({s.dims().begin(), split}), product({split, s.dims().end()})};
  c.set_out(0, reshape_to<T>(c, x, dims));
}

/// The axes of Squeeze / Unsqueeze / Reduce*: an attribute before `input_opset`, else input 1.
template <class T>
std::optional<std::vector<std::int64_t>> axes_operand(NodeContext<T>& c, int input_opset) {
  if (c.opset() >= input_opset) {
    if (!c.has_in(1)) return std::nullopt;
    return c.constant(1, "axes").ints();
  }
  return c.attr_ints("axes");
}

template <class T> void convert_squeeze(NodeContext<T>& c) {
  const ir::Value x = c.in(0);
  const Shape& s = static_shape(c, x);
  std::vector<bool> drop(s.rank(), false);
  if (const auto axes = axes_operand(c, 13)) {
    for (auto a : *axes) {
      const std::size_t k = normalize_axis(a, s.rank(), c.who());
      if (s[k] != 1)
        c.bad_attribute("axis " + std::to_string(a) + " has extent " + std::to_string(s[k]) +
                        ", not 1");
      drop[k] = true;
    }
  } else {
    for (std::size_t k = 0; k < s.rank(); ++k) drop[k] = s[k] == 1;
  }
  std::vector<Dim> dims;
  for (std::size_t k = 0; k < s.rank(); ++k)
    if (!drop[k]) dims.push_back(s[k]);
  c.set_out(0, reshape_to<T>(c, x, dims));
}

template <class T> void convert_unsqueeze(NodeContext<T>& c) {
  const ir::Value x = c.in(0);
  const Shape& s = static_shape(c, x);
  const auto axes = axes_operand(c, 13);
  if (!axes) c.bad_attribute("Unsqueeze needs axes");
  const std::size_t rank = s.rank() + axes->size();
  const std::vector<bool> added = axis_mask(*axes, rank, c.who());
  std::vector<Dim> dims;
  for (std::size_t k = 0, j = 0; k < rank; ++k) dims.push_back(added[k] ? 1 : s[j++]);
  c.set_out(0, reshape_to<T>(c, x, dims));
}

template <class T> void convert_transpose(NodeContext<T>& c) {
  const ir::Value x = c.in(0);
  const std::size_t rank = c.type(x).shape.rank();
  std::vector<std::size_t> order;
  if (const auto perm = c.attr_ints("perm")) {
    for (auto p : *perm) {
      if (p < 0 || p >= static_cast<std::int64_t>(rank))
        c.bad_attribute("perm entry " + std::to_string(p) + " is out of range");
      order.push_back(static_cast<std::size_t>(p));
    }
  } else {
    for (std::size_t k = rank; k-- > 0;) order.push_back(k);
  }
  c.set_out(0, c.op(ir::Transpose{order}, {x}));
}

/// Split along `axis` (default 0) into parts of the sizes `split` gives (an attribute before
/// opset 13, a known input from it); without it, into `num_outputs` parts (opset 18) or one part
/// per output, of equal size, the last one smaller when the axis does not divide (opset 18's
/// rule; before it the axis had to divide). Each part is an ir::Slice of the input.
template <class T> void convert_split(NodeContext<T>& c) {
  const ir::Value x = c.in(0);
  const Shape& s = static_shape(c, x);
  const std::size_t axis = normalize_axis(c.attr_int("axis", 0), s.rank(), c.who());
  std::vector<std::int64_t> sizes;
  if (c.opset() < 13)
    sizes = c.attr_ints("split").value_or(sizes);
  else if (c.has_in(1))
    sizes = c.constant(1, "split").ints();
  auto parts = static_cast<std::int64_t>(c.output_count());
  if (c.opset() >= 18 && c.has_attr("num_outputs")) parts = c.attr_int("num_outputs", parts);
  if (sizes.empty() && parts > 0) {
    const std::int64_t chunk = (s[axis] + parts - 1) / parts;
    for (std::int64_t i = 0; i < parts; ++i)
      sizes.push_back(std::clamp<std::int64_t>(s[axis] - i * chunk, 0, chunk));
  }
  std::int64_t total = 0;
  for (const std::int64_t n : sizes) total += n >= 0 ? n : s[axis] + 1; // a negative size fails
  if (sizes.size() != c.output_count() || total != s[axis])
    c.bad_attribute("parts of " + std::to_string(sizes.size()) + " sizes summing to " +
                    std::to_string(total) + " for " + std::to_string(c.output_count()) +
                    " outputs of an axis of " + std::to_string(s[axis]));
  std::int64_t start = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (c.has_out(i))
      c.set_out(i, c.op(ir::Slice{static_cast<std::int64_t>(axis), start, sizes[i]}, {x}));
    start += sizes[i];
  }
}

/// Slice of a run-time tensor with steps of 1: one ir::Slice per axis it shortens (another
/// step is not expressible: the node becomes Opaque). Known tensors are sliced while loading
/// (host::slice).
template <class T> void convert_slice(NodeContext<T>& c) {
  ir::Value x = c.in(0);
  const Shape& s = static_shape(c, x);
  const auto b = host::slice_bounds(c, std::vector<std::int64_t>(s.begin(), s.end()));
  for (std::size_t a = 0; a < s.rank(); ++a) {
    if (b.step[a] != 1) throw NotExpressible{"a Slice with a step other than 1"};
    if (b.count[a] != s[a])
      x = c.op(ir::Slice{static_cast<std::int64_t>(a), b.first[a], b.count[a]}, {x});
  }
  c.set_out(0, x);
}

/// Expand broadcasts both ways: the output is broadcast(input, shape).
template <class T> void convert_expand(NodeContext<T>& c) {
  const ir::Value x = c.in(0);
  const Shape target = broadcast(static_shape(c, x), Shape(c.constant(1, "shape").ints()));
  if (target == c.type(x).shape)
    c.set_out(0, x);
  else
    c.set_out(0, c.op(ir::Broadcast{target}, {x}));
}

template <class T> void convert_matmul(NodeContext<T>& c) {
  c.set_out(0, c.op(ir::MatMul{}, {c.in(0), c.in(1)}));
}

/// Gemm: Y = alpha * A' B' + beta * C. A known f32 C is scaled by beta while loading (the
/// product of two f32 values rounds once either way): a Multiply of constants would be a step
/// on the reference path in every run (exporters such as pytorch 0.3 write beta = 0 with a C).
template <class T> void convert_gemm(NodeContext<T>& c) {
  const double alpha = c.attr_float("alpha", 1.0), beta = c.attr_float("beta", 1.0);
  const bool ta = c.attr_int("transA", 0) != 0, tb = c.attr_int("transB", 0) != 0;
  c.ignore_attr("broadcast"); // opset < 7: C is broadcast, as in later opsets
  ir::Value y = c.op(ir::MatMul{ta, tb}, {c.in(0), c.in(1)});
  if (alpha != 1.0) y = c.op(ir::Multiply{}, {y, c.scalar(y, alpha)});
  if (c.has_in(2)) {
    ir::Value bias;
    if (const HostTensor* known = c.host(2);
        known && beta != 1.0 && known->dtype == pb::TensorProto::FLOAT) {
      std::vector<double> scaled = known->values.empty() ? std::vector<double>{0} : known->values;
      for (double& v : scaled) v = to_f32(v * beta);
      bias = c.g().constant(ElementType::f32, known->shape(), std::move(scaled), c.node().input(2));
    } else {
      bias = c.in(2);
      if (beta != 1.0) bias = c.op(ir::Multiply{}, {bias, c.scalar(bias, beta)});
    }
    y = c.op(ir::Add{}, {y, bias});
  }
  c.set_out(0, y);
}

/// The axes a reduction covers (all when none are given), or nothing for the identity
/// (noop_with_empty_axes).
template <class T>
std::optional<std::vector<std::int64_t>> reduction_axes(NodeContext<T>& c, ir::Value x,
                                                        int input_opset) {
  auto axes = axes_operand(c, input_opset);
  const bool noop = c.attr_int("noop_with_empty_axes", 0) != 0;
  if (!axes || axes->empty()) {
    if (noop) return std::nullopt;
    axes.emplace();
    for (std::size_t k = 0; k < c.type(x).shape.rank(); ++k)
      axes->push_back(static_cast<std::int64_t>(k));
  }
  return axes;
}

enum class Reduction { sum, max, min, prod, mean, sum_square, l1, l2, log_sum, log_sum_exp };

template <Reduction R, class T> void convert_reduce(NodeContext<T>& c) {
  ir::Value x = c.in(0);
  const bool keep = c.attr_int("keepdims", 1) != 0;
  const auto axes = reduction_axes(c, x, R == Reduction::sum ? 13 : 18);
  if (!axes || axes->empty()) { // the identity (noop_with_empty_axes, or a scalar)
    if constexpr (R == Reduction::sum_square) x = c.op(ir::Multiply{}, {x, x});
    if constexpr (R == Reduction::l1 || R == Reduction::l2) x = c.op(ir::Abs{}, {x});
    if constexpr (R == Reduction::log_sum) x = c.op(ir::Log{}, {x});
    c.set_out(0, x);
    return;
  }
  auto sum = [&](ir::Value v, bool k) { return c.op(ir::ReduceSum{*axes, k}, {v}); };
  ir::Value y;
  if constexpr (R == Reduction::sum) y = sum(x, keep);
  if constexpr (R == Reduction::max) y = c.op(ir::ReduceMax{*axes, keep}, {x});
  if constexpr (R == Reduction::min) y = c.op(ir::ReduceMin{*axes, keep}, {x});
  if constexpr (R == Reduction::prod) y = c.op(ir::ReduceProd{*axes, keep}, {x});
  if constexpr (R == Reduction::mean) y = c.op(ir::ReduceMean{*axes, keep}, {x});
  if constexpr (R == Reduction::sum_square) y = c.op(ir::ReduceSumSquare{*axes, keep}, {x});
  if constexpr (R == Reduction::l1) y = c.op(ir::ReduceL1{*axes, keep}, {x});
  if constexpr (R == Reduction::l2) y = c.op(ir::ReduceL2{*axes, keep}, {x});
  if constexpr (R == Reduction::log_sum) y = c.op(ir::Log{}, {sum(x, keep)});
  if constexpr (R == Reduction::log_sum_exp) {
    const ir::Value m = c.op(ir::ReduceMax{*axes, true, true}, {x}); // NaN: through the sum
    const ir::Value e = c.op(ir::Exp{.nonpositive = true}, {c.op(ir::Subtract{}, {x, m})});
    y = c.op(ir::Add{}, {c.op(ir::Log{}, {sum(e, true)}), m});
    if (!keep) {
      const Shape out =
          ir::infer_types<T>(ir::ReduceSum{*axes, false}, {{c.type(x)}}, c.who())[0].shape;
      y = reshape_to<T>(c, y, out.dims());
    }
  }
  c.set_out(0, y);
}

/// Softmax and LogSoftmax over `axis`; opset < 13 coerces the input to 2-D [before, from axis].
template <bool Log, class T> void convert_softmax(NodeContext<T>& c) {
  ir::Value x = c.in(0);
  const Shape s = c.type(x).shape; // static where the legacy form flattens it
  const bool legacy = c.opset() < 13;
  std::int64_t axis = c.attr_int("axis", legacy ? 1 : -1);
  const std::size_t k = normalize_axis(axis, std::max<std::size_t>(s.rank(), 1), c.who());
  bool reshaped = false;
  if (legacy && k + 1 < s.rank()) { // flatten [:k] and [k:] when more than one axis follows
    (void)static_shape(c, x);
    const Dim dims[] = {product(s.dims().subspan(0, k)), product(s.dims().subspan(k))};
    x = reshape_to<T>(c, x, dims);
    axis = -1;
    reshaped = true;
  }
  ir::Value y;
  if constexpr (!Log) {
    y = c.op(ir::Softmax{axis}, {x});
  } else {
    const ir::Value m = c.op(ir::ReduceMax{{axis}, true, true}, {x}); // NaN: through the sum
    const ir::Value d = c.op(ir::Subtract{}, {x, m});
    const ir::Value l = c.op(
        ir::Log{}, {c.op(ir::ReduceSum{{axis}, true}, {c.op(ir::Exp{.nonpositive = true}, {d})})});
    y = c.op(ir::Subtract{}, {d, l});
  }
  c.set_out(0, reshaped ? reshape_to<T>(c, y, s.dims()) : y);
}

} // namespace snippets::onnx::detail
