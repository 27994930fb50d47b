// SPDX-License-Identifier: Apache-2.0
// snippets/frontend/onnx_ops_normalization.hpp: ONNX LayerNormalization,
// InstanceNormalization and MeanVarianceNormalization, written with our reductions and
// elementwise ops.
//
// The first two normalize over trailing axes: the mean, the variance as the mean of the squared
// deviations (the definition ONNX's function bodies use: no cancellation of E[x^2] - E[x]^2),
// then (x - mean) / sqrt(var + epsilon) scaled and shifted. The reductions run over the
// trailing axes, which kernels walk as their rows (no Reshape). The graph is the one a model
// exported as separate ops carries, so the tokenizer fuses it into one kernel per
// normalization (the row is read from memory once; the passes over it after the first read it
// from cache). stash_type (the precision of the
// statistics) must be float32, which our kernels compute in anyway.
#pragma once

#include <vector>

#include "snippets/frontend/onnx_ops_tensor.hpp"

namespace snippets::onnx::detail {

/// The statistics and the normalized value of x over its axes [first, rank) (keep_dims).
struct Normalized {
  ir::Value mean, inv_std_dev, y;
};
template <class T>
Normalized normalize_trailing(NodeContext<T>& c, ir::Value x, std::size_t first, double epsilon) {
  const Shape& s = c.type(x).shape;
  std::vector<std::int64_t> axes;
  for (std::size_t a = first; a < s.rank(); ++a) axes.push_back(static_cast<std::int64_t>(a));
  const ir::Value n = c.scalar(x, double(product(s.dims().subspan(first))));
  const ir::Value mean = c.op(ir::Divide{}, {c.op(ir::ReduceSum{axes, true}, {x}), n});
  const ir::Value d = c.op(ir::Subtract{}, {x, mean});
  const ir::Value var =
      c.op(ir::Divide{}, {c.op(ir::ReduceSum{axes, true}, {c.op(ir::Multiply{}, {d, d})}), n});
  const ir::Value inv =
      c.op(ir::Divide{},
           {c.scalar(x, 1.0), c.op(ir::Sqrt{}, {c.op(ir::Add{}, {var, c.scalar(x, epsilon)})})});
  return {mean, inv, c.op(ir::Multiply{}, {d, inv})};
}

/// Input `i` (Scale or B) as a tensor of `dims`, the normalized axes' extents (a [C] vector,
/// say, as [C, 1] against [C, H*W]): its values must cover them exactly, or be one value. A
/// value known at load time is reshaped there.
template <class T>
ir::Value per_element(NodeContext<T>& c, std::size_t i, std::span<const Dim> dims,
                      std::string_view what) {
  const HostTensor* known = c.host(i);
  const Shape s = known ? known->shape() : static_shape(c, c.in(i));
  if (s.element_count() == 1) return c.in(i);
  if (s.element_count() != product(dims))
    throw NotExpressible{c.who() + ": " + std::string(what) + " of shape " + s.to_string() +
                         " does not cover the normalized axes one value each"};
  if (!known) return reshape_to<T>(c, c.in(i), dims);
  const ElementType t = require_element_type(known->dtype, c.who() + ": " + std::string(what));
  return c.g().constant(t, Shape(std::vector<Dim>(dims.begin(), dims.end())), known->values,
                        c.node().input(int(i)));
}

template <class T> void check_stash_type(NodeContext<T>& c) {
  if (c.attr_int("stash_type", 1) != 1)
    c.bad_attribute("stash_type " + std::to_string(c.attr_int("stash_type", 1)) +
                    " (statistics in another type than float32)");
}

/// LayerNormalization (opset 17): Y = normalize(X over axes [axis, rank)) * Scale + B, and the
/// optional outputs Mean and InvStdDev (X's shape, 1 from `axis` on).
template <class T> void convert_layer_normalization(NodeContext<T>& c) {
  check_stash_type(c);
  const ir::Value x = c.in(0);
  const Shape s = static_shape(c, x);
  if (s.rank() == 0) throw NotExpressible{c.who() + ": a scalar has no axis to normalize"};
  const std::size_t k = normalize_axis(c.attr_int("axis", -1), s.rank(), c.who());
  const Normalized r = normalize_trailing(c, x, k, c.attr_float("epsilon", 1e-5));
  const std::span<const Dim> inner = s.dims().subspan(k);
  ir::Value y = c.op(ir::Multiply{}, {r.y, per_element(c, 1, inner, "Scale")});
  if (c.has_in(2)) y = c.op(ir::Add{}, {y, per_element(c, 2, inner, "B")});
  c.set_out(0, y);
  if (c.has_out(1)) c.set_out(1, r.mean);
  if (c.has_out(2)) c.set_out(2, r.inv_std_dev);
}

/// InstanceNormalization: Y = normalize(X over its spatial axes, per batch and channel)
/// * scale[C] + B[C], for X [N, C, D1, ...].
template <class T> void convert_instance_normalization(NodeContext<T>& c) {
  const ir::Value x = c.in(0);
  const Shape s = static_shape(c, x);
  if (s.rank() < 3)
    throw NotExpressible{c.who() + ": input of rank " + std::to_string(s.rank()) +
                         " has no spatial axes"};
  const Normalized r = normalize_trailing(c, x, 2, c.attr_float("epsilon", 1e-5));
  std::vector<Dim> channel(s.rank() - 1, 1); // [C, 1, ...]: along axis 1 of X
  channel[0] = s[1];
  ir::Value y = c.op(ir::Multiply{}, {r.y, per_element(c, 1, channel, "scale")});
  c.set_out(0, c.op(ir::Add{}, {y, per_element(c, 2, channel, "B")}));
}

/// MeanVarianceNormalization (opsets 9 and 13): (X - E[X]) / (sqrt(E[X^2] - E[X]^2) + 1e-9),
/// the means over `axes` (default [0, 2, 3]), as ONNX's function body writes it (the variance
/// by the difference of the means, the epsilon added to the deviation, not the variance).
template <class T> void convert_mean_variance_normalization(NodeContext<T>& c) {
  const ir::Value x = c.in(0);
  const std::vector<std::int64_t> axes =
      c.attr_ints("axes").value_or(std::vector<std::int64_t>{0, 2, 3});
  for (std::int64_t a : axes) normalize_axis(a, c.type(x).shape.rank(), c.who());
  const ir::Value mean = c.op(ir::ReduceMean{axes, true}, {x});
  const ir::Value mean_of_squares =
      c.op(ir::ReduceMean{axes, true}, {c.op(ir::Multiply{}, {x, x})});
  const ir::Value var = c.op(ir::Subtract{}, {mean_of_squares, c.op(ir::Multiply{}, {mean, mean})});
  const ir::Value std_dev = c.op(ir::Add{}, {c.op(ir::Sqrt{}, {var}), c.scalar(x, 1e-9)});
  c.set_out(0, c.op(ir::Divide{}, {c.op(ir::Subtract{}, {x, mean}), std_dev}));
}

} // namespace snippets::onnx::detail
