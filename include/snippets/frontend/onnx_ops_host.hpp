// SPDX-License-Identifier: Apache-2.0
// snippets/frontend/onnx_ops_host.hpp: ONNX ops evaluated while the model loads.
//
// Models compute shapes with small int64 subgraphs (Shape -> Slice -> Concat -> Reshape, as
// the `_expanded` function bodies do). With static shapes these are known at load time, so the
// importer evaluates them here on HostTensors (in double, exact for shapes) instead of putting
// int64 arithmetic, which our kernels do not have, into the graph. Constant nodes and
// ConstantOfShape produce known values too. A host op whose inputs are not all known throws
// NotExpressible (Concat and Gather of run-time tensors are not in our op set; a Slice of a
// run-time tensor becomes ir::Slice ops, onnx_ops_tensor.hpp).
#pragma once

#include <algorithm>
#include <cmath>

#include "snippets/frontend/onnx_node_context.hpp"
#include "snippets/reference/tensor_ops.hpp"

namespace snippets::onnx::detail {

inline bool is_integer_dtype(int dtype) {
  switch (dtype) {
  case pb::TensorProto::INT8:
  case pb::TensorProto::INT16:
  case pb::TensorProto::INT32:
  case pb::TensorProto::INT64:
  case pb::TensorProto::UINT8:
  case pb::TensorProto::UINT16:
  case pb::TensorProto::UINT32:
  case pb::TensorProto::UINT64: return true;
  default: return false;
  }
}

/// The value `x` takes as ONNX `dtype` (integers truncated, floats rounded, bool 0/1).
inline double round_host(int dtype, double x) {
  if (const auto t = element_type_of(dtype)) return round_to(*t, x);
  if (is_integer_dtype(dtype)) return std::isnan(x) ? 0 : std::trunc(x);
  return x; // double
}

inline HostTensor make_host(int dtype, std::vector<std::int64_t> dims, std::vector<double> v) {
  return HostTensor{dtype, std::move(dims), std::move(v)};
}

inline HostTensor int64_vector(std::vector<double> v) {
  const auto n = static_cast<std::int64_t>(v.size());
  return make_host(pb::TensorProto::INT64, {n}, std::move(v));
}

template <class T> void convert_constant(NodeContext<T>& c) {
  if (const pb::TensorProto* t = c.attr_tensor("value")) {
    c.set_out_host(0, to_host(*t, c.who() + ": value"));
  } else if (c.has_attr("value_float")) {
    c.set_out_host(0, make_host(pb::TensorProto::FLOAT, {}, {c.attr_float("value_float", 0)}));
  } else if (c.has_attr("value_int")) {
    c.set_out_host(0, make_host(pb::TensorProto::INT64, {}, {double(c.attr_int("value_int", 0))}));
  } else if (const auto fs = c.attr_floats("value_floats")) {
    c.set_out_host(0, make_host(pb::TensorProto::FLOAT, {std::int64_t(fs->size())}, *fs));
  } else if (const auto is = c.attr_ints("value_ints")) {
    c.set_out_host(0, int64_vector(std::vector<double>(is->begin(), is->end())));
  } else {
    throw NotExpressible{"a Constant with a sparse or string value"};
  }
}

/// Shape (with opset-15 start / end) and Size of a tensor with a static shape.
template <bool Size, class T> void convert_shape(NodeContext<T>& c) {
  Shape s;
  if (const HostTensor* h = c.host(0))
    s = h->shape();
  else
    s = c.type(c.in(0)).shape;
  if (!s.is_static()) throw NotExpressible{"the shape of a tensor with dynamic dimensions"};
  if constexpr (Size) {
    c.set_out_host(0, make_host(pb::TensorProto::INT64, {}, {double(s.element_count())}));
  } else {
    const auto r = static_cast<std::int64_t>(s.rank());
    auto clip = [&](std::int64_t a) { return std::clamp(a < 0 ? a + r : a, std::int64_t{0}, r); };
    const std::int64_t start = clip(c.attr_int("start", 0)), end = clip(c.attr_int("end", r));
    std::vector<double> v;
    for (std::int64_t k = start; k < end; ++k) v.push_back(double(s[std::size_t(k)]));
    c.set_out_host(0, int64_vector(std::move(v)));
  }
}

template <class T> void convert_constant_of_shape(NodeContext<T>& c) {
  const HostTensor& shape = c.constant(0, "shape");
  HostTensor h = make_host(pb::TensorProto::FLOAT, shape.ints(), {});
  double fill = 0;
  if (const pb::TensorProto* t = c.attr_tensor("value")) {
    const HostTensor v = to_host(*t, c.who() + ": value");
    if (v.values.size() != 1) c.bad_attribute("value must hold one element");
    h.dtype = v.dtype;
    fill = v.values[0];
  }
  h.values.assign(static_cast<std::size_t>(h.element_count()), fill);
  c.set_out_host(0, std::move(h));
}

namespace host {

template <class T> const HostTensor& known(NodeContext<T>& c, std::size_t i) {
  if (const HostTensor* h = c.host(i)) return *h;
  throw NotExpressible{"on run-time tensors (only shapes known at load time are computed)"};
}

inline reference::Values as_values(const HostTensor& h) {
  return {ElementType::f32, h.shape(), h.values};
}

template <class T> void identity(NodeContext<T>& c) { c.set_out_host(0, known(c, 0)); }

template <class T> void cast(NodeContext<T>& c) {
  HostTensor h = known(c, 0);
  h.dtype = static_cast<int>(c.attr_int("to", h.dtype));
  c.attr_int("saturate", 1);
  for (double& x : h.values) x = round_host(h.dtype, x);
  c.set_out_host(0, std::move(h));
}

/// Neg, Add, Sub, Mul, Div with NUMPY broadcasting; integer division truncates.
template <char Op, class T> void arithmetic(NodeContext<T>& c) {
  const HostTensor& a = known(c, 0);
  std::vector<reference::Values> in{as_values(a)};
  if constexpr (Op != 'n') in.push_back(as_values(known(c, 1)));
  Shape out = in[0].shape;
  for (const auto& v : in) out = broadcast(out, v.shape);
  std::vector<const reference::Values*> ptrs;
  for (const auto& v : in) ptrs.push_back(&v);
  const int dtype = a.dtype;
  const auto r = reference::detail::broadcast_map(ElementType::f32, out, ptrs,
                                                  [&](std::span<const double> x) -> double {
                                                    switch (Op) {
                                                    case 'n': return -x[0];
                                                    case '+': return x[0] + x[1];
                                                    case '-': return x[0] - x[1];
                                                    case '*': return x[0] * x[1];
                                                    default: return x[0] / x[1];
                                                    }
                                                  });
  HostTensor h = make_host(dtype, std::vector<std::int64_t>(out.begin(), out.end()), r.v);
  for (double& x : h.values) x = round_host(dtype, x);
  c.set_out_host(0, std::move(h));
}

template <class T> void concat(NodeContext<T>& c) {
  std::vector<const HostTensor*> in;
  for (std::size_t i = 0; i < c.input_count(); ++i)
    if (c.has_in(i)) in.push_back(&known(c, i));
  const auto rank = static_cast<std::int64_t>(in[0]->dims.size());
  const std::size_t axis = normalize_axis(c.attr_int("axis", 0), std::size_t(rank), c.who());
  HostTensor out = *in[0];
  out.dims[axis] = 0;
  for (const HostTensor* h : in) out.dims[axis] += h->dims[axis];
  const std::int64_t outer = product(std::span(out.dims).subspan(0, axis));
  out.values.clear();
  for (std::int64_t o = 0; o < outer; ++o)
    for (const HostTensor* h : in) {
      const std::int64_t inner = product(std::span(h->dims).subspan(axis));
      out.values.insert(out.values.end(), h->values.begin() + o * inner,
                        h->values.begin() + (o + 1) * inner);
    }
  c.set_out_host(0, std::move(out));
}

/// What an ONNX Slice takes from a tensor of `dims`: per axis the first element, the step and
/// the count (the whole axis where the node names none). starts/ends/axes/steps are attributes
/// before opset 10 and known inputs from it.
struct SliceBounds {
  std::vector<std::int64_t> first, step, count;
};
template <class T>
SliceBounds slice_bounds(NodeContext<T>& c, const std::vector<std::int64_t>& dims) {
  const std::size_t rank = dims.size();
  std::vector<std::int64_t> starts, ends, axes, steps;
  if (c.opset() < 10) {
    starts = c.attr_ints("starts").value_or(starts);
    ends = c.attr_ints("ends").value_or(ends);
    axes = c.attr_ints("axes").value_or(axes);
  } else {
    starts = known(c, 1).ints();
    ends = known(c, 2).ints();
    if (c.has_in(3)) axes = known(c, 3).ints();
    if (c.has_in(4)) steps = known(c, 4).ints();
  }
  if (axes.empty())
    for (std::size_t k = 0; k < starts.size(); ++k) axes.push_back(std::int64_t(k));
  if (ends.size() != starts.size() || axes.size() != starts.size())
    c.bad_attribute("starts, ends and axes of different lengths");
  steps.resize(starts.size(), 1);
  SliceBounds b{std::vector<std::int64_t>(rank, 0), std::vector<std::int64_t>(rank, 1), dims};
  for (std::size_t i = 0; i < starts.size(); ++i) {
    const std::size_t a = normalize_axis(axes[i], rank, c.who());
    const std::int64_t d = dims[a], s = steps[i];
    if (s == 0) c.bad_attribute("a step of 0");
    auto fix = [&](std::int64_t v, std::int64_t lo, std::int64_t hi) {
      if (v < 0) v += d;
      return std::clamp(v, lo, hi);
    };
    const std::int64_t first = s > 0 ? fix(starts[i], 0, d) : fix(starts[i], -1, d - 1);
    const std::int64_t end = s > 0 ? fix(ends[i], 0, d) : fix(ends[i], -1, d - 1);
    b.first[a] = first;
    b.step[a] = s;
    b.count[a] = s > 0 ? std::max<std::int64_t>(0, (end - first + s - 1) / s)
                       : std::max<std::int64_t>(0, (first - end - s - 1) / -s);
  }
  return b;
}

template <class T> void slice(NodeContext<T>& c) {
  const HostTensor& x = known(c, 0);
  const std::size_t rank = x.dims.size();
  const auto [first, step, count] = slice_bounds(c, x.dims);
  HostTensor out = make_host(x.dtype, count, {});
  std::vector<std::int64_t> idx(rank, 0);
  const std::int64_t n = out.element_count();
  for (std::int64_t lin = 0; lin < n; ++lin) {
    std::int64_t off = 0;
    for (std::size_t k = 0; k < rank; ++k) off = off * x.dims[k] + first[k] + idx[k] * step[k];
    out.values.push_back(x.values[std::size_t(off)]);
    for (std::size_t k = rank; k-- > 0;)
      if (++idx[k] < count[k])
        break;
      else
        idx[k] = 0;
  }
  c.set_out_host(0, std::move(out));
}

template <class T> void gather(NodeContext<T>& c) {
  const HostTensor& x = known(c, 0);
  const HostTensor& ind = known(c, 1);
  const std::size_t axis = normalize_axis(c.attr_int("axis", 0), x.dims.size(), c.who());
  const std::int64_t outer = product(std::span(x.dims).subspan(0, axis));
  const std::int64_t inner = product(std::span(x.dims).subspan(axis + 1));
  const std::int64_t d = x.dims[axis];
  std::vector<std::int64_t> dims(x.dims.begin(), x.dims.begin() + std::ptrdiff_t(axis));
  dims.insert(dims.end(), ind.dims.begin(), ind.dims.end());
  dims.insert(dims.end(), x.dims.begin() + std::ptrdiff_t(axis) + 1, x.dims.end());
  HostTensor out = make_host(x.dtype, dims, {});
  for (std::int64_t o = 0; o < outer; ++o)
    for (double iv : ind.values) {
      auto i = static_cast<std::int64_t>(iv);
      if (i < 0) i += d;
      if (i < 0 || i >= d) c.bad_attribute("index " + std::to_string(iv) + " is out of range");
      const auto* src = x.values.data() + (o * d + i) * inner;
      out.values.insert(out.values.end(), src, src + inner);
    }
  c.set_out_host(0, std::move(out));
}

/// Reshape, Flatten, Squeeze, Unsqueeze of a known value: the same values, new dims.
template <class T> void reshape(NodeContext<T>& c, std::vector<std::int64_t> dims) {
  HostTensor h = known(c, 0);
  std::int64_t infer = -1;
  std::vector<std::int64_t> known_dims;
  for (std::size_t k = 0; k < dims.size(); ++k) {
    if (dims[k] == 0 && c.node().op_type() == "Reshape" && c.attr_int("allowzero", 0) == 0)
      dims[k] = h.dims.at(k);
    if (dims[k] != -1)
      known_dims.push_back(dims[k]);
    else if (infer >= 0)
      c.bad_attribute("the new shape has more than one -1");
    else
      infer = std::int64_t(k);
  }
  const std::int64_t known_count = product(known_dims);
  if (infer >= 0) dims[std::size_t(infer)] = known_count ? h.element_count() / known_count : 0;
  h.dims = std::move(dims);
  if (h.element_count() != static_cast<std::int64_t>(h.values.size()))
    c.bad_attribute("the new shape holds another number of elements");
  c.set_out_host(0, std::move(h));
}

template <class T> void reshape_op(NodeContext<T>& c) {
  const std::string& op = c.node().op_type();
  const HostTensor& x = known(c, 0);
  const std::size_t rank = x.dims.size();
  auto axes_of = [&]() -> std::vector<std::int64_t> {
    if (c.opset() >= 13 && c.has_in(1)) return known(c, 1).ints();
    return c.attr_ints("axes").value_or(std::vector<std::int64_t>{});
  };
  if (op == "Reshape") return reshape(c, known(c, 1).ints());
  if (op == "Flatten") {
    auto axis = c.attr_int("axis", 1);
    if (axis < 0) axis += std::int64_t(rank);
    const auto split = x.dims.begin() + axis;
    return reshape(c, {product({x.dims.begin(), split}), product({split, x.dims.end()})});
  }
  const auto axes = axes_of();
  std::vector<std::int64_t> dims;
  if (op == "Squeeze") {
    const std::vector<bool> drop = axis_mask(axes, rank, c.who(), axes.empty());
    for (std::size_t k = 0; k < rank; ++k)
      if (!(drop[k] && x.dims[k] == 1)) dims.push_back(x.dims[k]);
  } else { // Unsqueeze
    const std::size_t out_rank = rank + axes.size();
    const std::vector<bool> added = axis_mask(axes, out_rank, c.who());
    for (std::size_t k = 0, j = 0; k < out_rank; ++k) dims.push_back(added[k] ? 1 : x.dims[j++]);
  }
  reshape(c, dims);
}

} // namespace host
} // namespace snippets::onnx::detail
