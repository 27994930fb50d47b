// SPDX-License-Identifier: Apache-2.0
// snippets/reference/tensor_ops.hpp: the non-elementwise reference computations on Values.
//
// Plain loops over planar double tensors: NUMPY-broadcasting maps, reductions, Softmax,
// Transpose, Slice, MatMul. Output shapes come from ir/type_inference.hpp; these functions trust
// them. Clarity over speed: they are the oracle, not the product.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <vector>

#include "snippets/ir/op_tags.hpp"
#include "snippets/reference/tensor.hpp"
#include "snippets/support/function_ref.hpp"

namespace snippets::reference::detail {

inline std::vector<std::int64_t> strides_of(const Shape& s) {
  std::vector<std::int64_t> st(s.rank(), 1);
  for (std::size_t i = s.rank(); i-- > 1;) st[i - 1] = st[i] * s[i];
  return st;
}

/// Element strides of `in` read as a tensor of shape `out` (right-aligned; 0 where broadcast).
inline std::vector<std::int64_t> broadcast_strides(const Shape& in, const Shape& out) {
  std::vector<std::int64_t> st(out.rank(), 0);
  const auto in_st = strides_of(in);
  const std::size_t off = out.rank() - in.rank();
  for (std::size_t i = 0; i < in.rank(); ++i) st[off + i] = in[i] == 1 ? 0 : in_st[i];
  return st;
}

/// Calls fn(output_linear_index, input_offsets) for every element of `out`, where each input
/// offset follows NUMPY broadcasting of `inputs[k]` into `out`.
inline void for_each_broadcast(const Shape& out, std::span<const Shape> inputs,
                               FunctionRef<void(std::size_t, std::span<const std::int64_t>)> fn) {
  const std::size_t rank = out.rank(), n_in = inputs.size();
  std::vector<std::vector<std::int64_t>> st;
  for (const Shape& s : inputs) st.push_back(broadcast_strides(s, out));
  std::vector<std::int64_t> idx(rank, 0), offs(n_in, 0);
  const auto total = static_cast<std::size_t>(out.element_count());
  for (std::size_t lin = 0; lin < total; ++lin) {
    fn(lin, offs);
    for (std::size_t d = rank; d-- > 0;) { // odometer increment, updating offsets incrementally
      ++idx[d];
      for (std::size_t k = 0; k < n_in; ++k) offs[k] += st[k][d];
      if (idx[d] < out[d]) break;
      for (std::size_t k = 0; k < n_in; ++k) offs[k] -= st[k][d] * idx[d];
      idx[d] = 0;
    }
  }
}

/// Elementwise map with broadcasting: out[i] = f(in_0[..], in_1[..], ...). One loop for every
/// op of the interpreter (f is a reference, not a template parameter).
inline Values broadcast_map(ElementType type, const Shape& out, std::span<const Values* const> in,
                            FunctionRef<double(std::span<const double>)> f) {
  Values r{type, out, std::vector<double>(static_cast<std::size_t>(out.element_count()))};
  std::vector<Shape> shapes;
  for (const Values* v : in) shapes.push_back(v->shape);
  std::vector<double> args(in.size());
  for_each_broadcast(out, shapes, [&](std::size_t lin, std::span<const std::int64_t> offs) {
    for (std::size_t k = 0; k < in.size(); ++k)
      args[k] = in[k]->v[static_cast<std::size_t>(offs[k])];
    r.v[lin] = f(std::span<const double>(args));
  });
  return r;
}

enum class ReduceKind { sum, max, max_ignore_nan, min, prod, mean, sum_square, l1, l2 };

/// The reduction an op tag computes (ir/op_tags.hpp states the semantics).
inline ReduceKind reduce_kind(const ir::ReduceSum&) { return ReduceKind::sum; }
inline ReduceKind reduce_kind(const ir::ReduceMax& r) {
  return r.ignore_nan ? ReduceKind::max_ignore_nan : ReduceKind::max;
}
inline ReduceKind reduce_kind(const ir::ReduceMin&) { return ReduceKind::min; }
inline ReduceKind reduce_kind(const ir::ReduceProd&) { return ReduceKind::prod; }
inline ReduceKind reduce_kind(const ir::ReduceMean&) { return ReduceKind::mean; }
inline ReduceKind reduce_kind(const ir::ReduceSumSquare&) { return ReduceKind::sum_square; }
inline ReduceKind reduce_kind(const ir::ReduceL1&) { return ReduceKind::l1; }
inline ReduceKind reduce_kind(const ir::ReduceL2&) { return ReduceKind::l2; }

/// Reduces `x` over `axes` (normalised); `out_shape` is the inferred output shape.
inline Values reduce(const Values& x, const std::vector<bool>& reduced, ReduceKind kind,
                     const Shape& out_shape) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<Dim> kept(x.shape.begin(), x.shape.end());
  std::int64_t count = 1; // elements per output element
  for (std::size_t i = 0; i < kept.size(); ++i)
    if (reduced[i]) count *= kept[i], kept[i] = 1;
  const Shape kept_shape(kept);
  const double init = kind == ReduceKind::max || kind == ReduceKind::max_ignore_nan ? -inf
                      : kind == ReduceKind::min                                     ? inf
                      : kind == ReduceKind::prod                                    ? 1.0
                                                                                    : 0.0;
  Values r{x.type, out_shape,
           std::vector<double>(static_cast<std::size_t>(kept_shape.element_count()), init)};
  const auto out_st = broadcast_strides(kept_shape, x.shape);
  // iterate the input; its offset into the kept-dims output has stride 0 along reduced axes
  std::vector<std::int64_t> idx(x.shape.rank(), 0);
  for (std::size_t lin = 0; lin < x.v.size(); ++lin) {
    std::int64_t o = 0, rem = static_cast<std::int64_t>(lin);
    for (std::size_t d = x.shape.rank(); d-- > 0;) {
      o += (rem % x.shape[d]) * out_st[d];
      rem /= x.shape[d];
    }
    double& acc = r.v[static_cast<std::size_t>(o)];
    const double v = x.v[lin];
    switch (kind) {
    case ReduceKind::sum:
    case ReduceKind::mean: acc += v; break;
    case ReduceKind::sum_square:
    case ReduceKind::l2: acc += v * v; break;
    case ReduceKind::l1: acc += std::abs(v); break;
    case ReduceKind::prod: acc *= v; break;
    case ReduceKind::max_ignore_nan: acc = std::isnan(v) ? acc : std::max(acc, v); break;
    case ReduceKind::max: acc = std::isnan(acc) || std::isnan(v) ? nan : std::max(acc, v); break;
    case ReduceKind::min: acc = std::isnan(acc) || std::isnan(v) ? nan : std::min(acc, v); break;
    }
  }
  for (double& acc : r.v) {
    if (kind == ReduceKind::mean) acc /= static_cast<double>(count); // 0 / 0: NaN
    if (kind == ReduceKind::l2) acc = std::sqrt(acc);
  }
  return r;
}

/// Numerically stable softmax along `axis`.
inline Values softmax(const Values& x, std::size_t axis) {
  Values r = x;
  std::int64_t outer = 1, inner = 1;
  for (std::size_t i = 0; i < axis; ++i) outer *= x.shape[i];
  for (std::size_t i = axis + 1; i < x.shape.rank(); ++i) inner *= x.shape[i];
  const std::int64_t n = x.shape[axis];
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t in = 0; in < inner; ++in) {
      auto at = [&](std::int64_t k) -> double& {
        return r.v[std::size_t((o * n + k) * inner + in)];
      };
      double m = -std::numeric_limits<double>::infinity();
      for (std::int64_t k = 0; k < n; ++k) m = std::max(m, at(k)); // a NaN makes the row NaN below
      double sum = 0;
      for (std::int64_t k = 0; k < n; ++k) sum += (at(k) = std::exp(at(k) - m));
      for (std::int64_t k = 0; k < n; ++k) at(k) /= sum;
    }
  return r;
}

inline Values transpose(const Values& x, const std::vector<std::size_t>& order, const Shape& out) {
  Values r{x.type, out, std::vector<double>(x.v.size())};
  const auto in_st = strides_of(x.shape);
  std::vector<std::int64_t> perm_st(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) perm_st[i] = in_st[order[i]];
  for (std::size_t lin = 0; lin < r.v.size(); ++lin) {
    std::int64_t src = 0, rem = static_cast<std::int64_t>(lin);
    for (std::size_t d = out.rank(); d-- > 0;) {
      src += (rem % out[d]) * perm_st[d];
      rem /= out[d];
    }
    r.v[lin] = x.v[static_cast<std::size_t>(src)];
  }
  return r;
}

/// The elements of `x` from `start` on along `axis` (normalised), `out` being the shape of the
/// part (its extent along `axis` is the part's length).
inline Values slice(const Values& x, std::size_t axis, std::int64_t start, const Shape& out) {
  std::int64_t outer = 1, inner = 1;
  for (std::size_t d = 0; d < axis; ++d) outer *= out[d];
  for (std::size_t d = axis + 1; d < out.rank(); ++d) inner *= out[d];
  const std::int64_t length = out[axis], extent = x.shape[axis];
  Values r{x.type, out, {}};
  r.v.reserve(static_cast<std::size_t>(outer * length * inner));
  for (std::int64_t o = 0; o < outer; ++o) {
    const auto from = x.v.begin() + (o * extent + start) * inner;
    r.v.insert(r.v.end(), from, from + length * inner);
  }
  return r;
}

/// NUMPY matmul with optional transposes of the last two dims of rank >= 2 operands, A's
/// values less `a_zero`, of type `type` (i32 for i8/u8 operands: the sums of products of
/// bytes are exact in double).
inline Values matmul(const Values& a, const Values& b, bool ta, bool tb, double a_zero,
                     ElementType type, const Shape& out) {
  // promote rank-1 operands, then view both as [batch..., rows, cols]
  std::vector<Dim> da(a.shape.begin(), a.shape.end()), db(b.shape.begin(), b.shape.end());
  const bool a_vec = da.size() == 1, b_vec = db.size() == 1;
  if (a_vec) da.insert(da.begin(), 1), ta = false;
  if (b_vec) db.push_back(1), tb = false;
  const std::int64_t m = ta ? da[da.size() - 1] : da[da.size() - 2];
  const std::int64_t k = ta ? da[da.size() - 2] : da[da.size() - 1];
  const std::int64_t n = tb ? db[db.size() - 2] : db[db.size() - 1];
  const Shape batch_a(std::span<const Dim>(da).first(da.size() - 2));
  const Shape batch_b(std::span<const Dim>(db).first(db.size() - 2));
  const Shape batch = broadcast(batch_a, batch_b);
  Values r{type, out, std::vector<double>(static_cast<std::size_t>(batch.element_count() * m * n))};
  const std::vector<Shape> shapes{batch_a, batch_b};
  std::size_t batch_index = 0;
  for_each_broadcast(batch, shapes, [&](std::size_t, std::span<const std::int64_t> offs) {
    const double* pa = a.v.data() + offs[0] * da[da.size() - 1] * da[da.size() - 2];
    const double* pb = b.v.data() + offs[1] * db[db.size() - 1] * db[db.size() - 2];
    double* pc = r.v.data() + batch_index++ * std::size_t(m * n);
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (std::int64_t p = 0; p < k; ++p)
          acc += (pa[ta ? p * m + i : i * k + p] - a_zero) * pb[tb ? j * k + p : p * n + j];
        pc[i * n + j] = acc;
      }
  });
  return r;
}

/// The product of `a` and `b` in A's type, without a zero point (for callers that multiply
/// values of one type, such as error bounds).
inline Values matmul(const Values& a, const Values& b, bool ta, bool tb, const Shape& out) {
  return matmul(a, b, ta, tb, 0.0, a.type, out);
}

} // namespace snippets::reference::detail
