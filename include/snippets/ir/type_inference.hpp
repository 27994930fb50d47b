// SPDX-License-Identifier: Apache-2.0
// snippets/ir/type_inference.hpp: output element types and shapes of every op.
//
// infer_types(op, inputs, who) returns the output TensorTypes of `op` applied to inputs of
// the given types, or throws snippets::Error naming `who` (the op and node) and the fix.
// It works on static and dynamic shapes alike, so the reference interpreter reuses it to get
// the concrete shapes of a run. It never reads tensor values.
#pragma once

#include <algorithm>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include "snippets/ir/op.hpp"

namespace snippets::ir {

namespace detail {

inline void check_arity(std::span<const TensorType> in, std::size_t n, std::string_view who) {
  if (in.size() != n)
    raise("snippets.graph.arity", std::string(who) + " takes " + std::to_string(n) +
                                      " input(s) but was given " + std::to_string(in.size()));
}

inline void check_same_type(std::span<const TensorType> in, std::string_view who) {
  for (const auto& t : in)
    if (t.type != in[0].type)
      raise("snippets.graph.type_mismatch",
            std::string(who) + " needs inputs of one element type but got " + in[0].to_string() +
                " and " + t.to_string() + "; insert a Convert on one of them");
}

inline void check_not_boolean(const TensorType& t, std::string_view who) {
  if (t.type == ElementType::boolean)
    raise("snippets.graph.unsupported_type",
          std::string(who) + " does not take boolean inputs; Convert to f32 or i32 first");
}

inline void check_boolean(const TensorType& t, std::string_view who) {
  if (t.type != ElementType::boolean)
    raise("snippets.graph.unsupported_type", std::string(who) + " needs boolean inputs but got " +
                                                 t.to_string() + "; compare or Convert first");
}

// Checks of the ops without inputs, here rather than in the builder so that make() with a
// hand-built tag is checked the same way.
inline void check_source(const Parameter& p, std::string_view who) {
  const auto& order = p.layout.order();
  if (!order.empty() && order.size() != p.output.shape.rank())
    raise("snippets.layout.rank_mismatch",
          std::string(who) + ": layout " + p.layout.to_string(order.size()) + " has rank " +
              std::to_string(order.size()) + " but the shape " + p.output.shape.to_string() +
              " has rank " + std::to_string(p.output.shape.rank()) +
              "; give a layout of the shape's rank");
  if (p.strided_read && p.layout.is_blocked())
    raise("snippets.layout.invalid",
          std::string(who) + ": a strided read takes a dimension order, not the blocked layout " +
              p.layout.to_string(p.output.shape.rank()) +
              "; use Layout::permuted, or drop strided_read so the body takes the layout");
}

inline void check_source(const Constant& c, std::string_view who) {
  const Shape& s = c.output.shape;
  if (!s.is_static())
    raise("snippets.shape.dynamic", std::string(who) + ": a Constant needs a static shape, got " +
                                        s.to_string() + "; use a Parameter for run-time shapes");
  // element_count(), with `who` in the message: a zero extent wins over an overflow
  const bool empty = std::find(s.begin(), s.end(), Dim{0}) != s.end();
  std::int64_t n = empty ? 0 : 1;
  for (Dim d : s)
    if (!empty && __builtin_mul_overflow(n, d, &n))
      raise("snippets.shape.too_many_elements", std::string(who) + ": a Constant of shape " +
                                                    s.to_string() +
                                                    " has more elements than int64 can count");
  if (c.values.size() != 1 && static_cast<std::int64_t>(c.values.size()) != n)
    raise("snippets.graph.bad_attribute", std::string(who) + ": a Constant of shape " +
                                              s.to_string() + " needs " + std::to_string(n) +
                                              " values (or one to fill it) but got " +
                                              std::to_string(c.values.size()));
}

inline void check_source(const Scalar& c, std::string_view who) {
  for (Dim d : c.output.shape)
    if (d != 1)
      raise("snippets.graph.bad_attribute", std::string(who) +
                                                ": a Scalar's shape may only hold 1s, got " +
                                                c.output.shape.to_string() + "; use a Constant");
}

inline Shape broadcast_in(std::span<const TensorType> in, std::string_view who) {
  Shape out = in[0].shape;
  for (std::size_t i = 1; i < in.size(); ++i)
    if (!try_broadcast(out, in[i].shape, out))
      raise("snippets.shape.not_broadcastable",
            std::string(who) + ": input shapes " + in[0].shape.to_string() + " and " +
                in[i].shape.to_string() +
                " do not broadcast (NUMPY rules); insert a Reshape or Broadcast");
  return out;
}

inline std::vector<TensorType> reduce(std::span<const TensorType> in,
                                      const std::vector<std::int64_t>& axes, bool keep_dims,
                                      std::string_view who) {
  check_arity(in, 1, who);
  check_not_boolean(in[0], who);
  const Shape& s = in[0].shape;
  if (axes.empty())
    raise("snippets.graph.bad_attribute",
          std::string(who) + " needs at least one axis to reduce over");
  const std::vector<bool> reduced = axis_mask(axes, s.rank(), who);
  std::vector<Dim> dims;
  for (std::size_t i = 0; i < s.rank(); ++i)
    if (!reduced[i])
      dims.push_back(s[i]);
    else if (keep_dims)
      dims.push_back(1);
  return {{in[0].type, Shape(std::move(dims))}};
}

inline Shape reshape(const Shape& s, const std::vector<std::int64_t>& target,
                     std::string_view who) {
  std::int64_t known = 1;
  int infer_at = -1;
  for (std::size_t i = 0; i < target.size(); ++i) {
    if (target[i] == -1 && infer_at < 0)
      infer_at = int(i);
    else if (target[i] < 0)
      raise("snippets.graph.bad_attribute",
            std::string(who) + ": target shape may hold one -1 and otherwise extents >= 0");
    else if (__builtin_mul_overflow(known, target[i], &known))
      raise("snippets.shape.too_many_elements",
            std::string(who) + ": the target shape has more elements than int64 can count");
  }
  std::vector<Dim> dims(target.begin(), target.end());
  if (!s.is_static()) {
    if (infer_at >= 0) dims[std::size_t(infer_at)] = dynamic;
    return Shape(std::move(dims));
  }
  const std::int64_t n = s.element_count();
  if (infer_at >= 0) {
    if (known == 0 || n % known != 0)
      raise("snippets.shape.reshape_mismatch", std::string(who) + ": cannot reshape " +
                                                   s.to_string() + " so that -1 is a whole extent");
    dims[std::size_t(infer_at)] = n / known;
  } else if (known != n) {
    raise("snippets.shape.reshape_mismatch",
          std::string(who) + ": cannot reshape " + s.to_string() + " (" + std::to_string(n) +
              " elements) into " + std::to_string(known) + " elements");
  }
  return Shape(std::move(dims));
}

inline Shape matmul(Shape a, Shape b, const MatMul& m, std::string_view who) {
  if (a.rank() == 0 || b.rank() == 0)
    raise("snippets.graph.bad_shape", std::string(who) + " needs operands of rank >= 1");
  const bool a_vec = a.rank() == 1, b_vec = b.rank() == 1;
  std::vector<Dim> da(a.begin(), a.end()), db(b.begin(), b.end());
  if (a_vec)
    da.insert(da.begin(), 1);
  else if (m.transpose_a)
    std::swap(da[da.size() - 1], da[da.size() - 2]);
  if (b_vec)
    db.push_back(1);
  else if (m.transpose_b)
    std::swap(db[db.size() - 1], db[db.size() - 2]);
  const Dim k_a = da.back(), k_b = db[db.size() - 2];
  if (k_a != dynamic && k_b != dynamic && k_a != k_b)
    raise("snippets.shape.matmul_mismatch", std::string(who) + ": inner dimensions differ (" +
                                                std::to_string(k_a) + " vs " + std::to_string(k_b) +
                                                ") for " + a.to_string() + " x " + b.to_string() +
                                                "; check transpose_a/transpose_b");
  Shape batch_a(std::span<const Dim>(da).first(da.size() - 2));
  Shape batch_b(std::span<const Dim>(db).first(db.size() - 2));
  Shape batch;
  if (!try_broadcast(batch_a, batch_b, batch))
    raise("snippets.shape.not_broadcastable", std::string(who) + ": batch dimensions of " +
                                                  a.to_string() + " and " + b.to_string() +
                                                  " do not broadcast");
  std::vector<Dim> out(batch.begin(), batch.end());
  if (!a_vec) out.push_back(da[da.size() - 2]);
  if (!b_vec) out.push_back(db.back());
  return Shape(std::move(out));
}

template <class T>
std::vector<TensorType> infer_types_unchecked(const Op<T>& op, std::span<const TensorType> in,
                                              std::string_view who) {
  return std::visit(
      [&](const auto& tag) -> std::vector<TensorType> {
        using Tag = std::decay_t<decltype(tag)>;
        constexpr OpCategory cat = Tag::category;
        if constexpr (Tag::float_only) {
          for (const auto& t : in)
            if (!is_float(t.type))
              raise("snippets.graph.unsupported_type",
                    std::string(who) + " computes on floats only but got " + t.to_string() +
                        "; Convert the input to f32 first");
        }
        if constexpr (cat == OpCategory::parameter || cat == OpCategory::constant) {
          detail::check_arity(in, 0, who);
          detail::check_source(tag, who);
          return {tag.output};
        } else if constexpr (cat == OpCategory::result) {
          detail::check_arity(in, 1, who);
          if (tag.layout.is_blocked())
            raise("snippets.layout.invalid",
                  std::string(who) + ": an output layout is a dimension order, not a blocked "
                                     "layout; use Layout::permuted");
          tag.layout.check_rank(in[0].shape.rank());
          return {};
        } else if constexpr (cat == OpCategory::unary) {
          detail::check_arity(in, 1, who);
          detail::check_not_boolean(in[0], who);
          if constexpr (std::is_same_v<Tag, Clamp>) {
            if (!(tag.lo <= tag.hi)) // also rejects NaN bounds
              raise("snippets.graph.bad_attribute",
                    std::string(who) + ": Clamp needs lo <= hi (got lo " + std::to_string(tag.lo) +
                        ", hi " + std::to_string(tag.hi) + ")");
          }
          return {in[0]};
        } else if constexpr (cat == OpCategory::binary) {
          detail::check_arity(in, 2, who);
          detail::check_same_type(in, who);
          detail::check_not_boolean(in[0], who);
          return {{in[0].type, detail::broadcast_in(in, who)}};
        } else if constexpr (cat == OpCategory::comparison) { // booleans too: false < true
          detail::check_arity(in, 2, who);
          detail::check_same_type(in, who);
          return {{ElementType::boolean, detail::broadcast_in(in, who)}};
        } else if constexpr (cat == OpCategory::logical) {
          detail::check_arity(in, 2, who);
          for (const auto& t : in) detail::check_boolean(t, who);
          return {{ElementType::boolean, detail::broadcast_in(in, who)}};
        } else if constexpr (std::is_same_v<Tag, LogicalNot>) {
          detail::check_arity(in, 1, who);
          detail::check_boolean(in[0], who);
          return {in[0]};
        } else if constexpr (std::is_same_v<Tag, PRelu>) {
          detail::check_arity(in, 2, who);
          detail::check_same_type(in, who);
          detail::check_not_boolean(in[0], who);
          const Shape& x = in[0].shape;
          const Shape& s = in[1].shape;
          if (s.rank() == 1 && x.rank() >= 2 && s[0] != 1 && (s[0] == x[1] || s[0] == dynamic))
            return {in[0]}; // per-channel slope
          const Shape out = detail::broadcast_in(in, who);
          if (!compatible(out, x))
            raise("snippets.shape.not_broadcastable",
                  std::string(who) + ": slope " + s.to_string() + " must broadcast into x " +
                      x.to_string() + " without growing it");
          return {in[0]};
        } else if constexpr (std::is_same_v<Tag, Select>) {
          detail::check_arity(in, 3, who);
          detail::check_boolean(in[0], who);
          detail::check_same_type(in.subspan(1), who);
          return {{in[1].type, detail::broadcast_in(in, who)}};
        } else if constexpr (std::is_same_v<Tag, Convert>) {
          detail::check_arity(in, 1, who);
          return {{tag.to, in[0].shape}};
        } else if constexpr (std::is_same_v<Tag, FakeQuantize>) {
          detail::check_arity(in, 5, who);
          detail::check_same_type(in, who);
          if (tag.levels < 2 || tag.levels > FakeQuantize::max_levels)
            raise("snippets.graph.bad_attribute",
                  std::string(who) + ": levels is " + std::to_string(tag.levels) +
                      "; FakeQuantize takes 2 to 2^24 levels (256 for 8 bits)");
          return {{in[0].type, detail::broadcast_in(in, who)}};
        } else if constexpr (std::is_same_v<Tag, Quantize>) {
          detail::check_arity(in, 3, who);
          detail::check_same_type(in, who);
          if (tag.to != ElementType::u8 && tag.to != ElementType::i8)
            raise("snippets.graph.bad_attribute", std::string(who) + " quantizes to " +
                                                      std::string(snippets::to_string(tag.to)) +
                                                      "; it quantizes to u8 or i8");
          return {{tag.to, detail::broadcast_in(in, who)}};
        } else if constexpr (reduction<Tag>) {
          return detail::reduce(in, tag.axes, tag.keep_dims, who);
        } else if constexpr (std::is_same_v<Tag, Softmax>) {
          detail::check_arity(in, 1, who);
          normalize_axis(tag.axis, in[0].shape.rank(), who);
          return {in[0]};
        } else if constexpr (std::is_same_v<Tag, Transpose>) {
          detail::check_arity(in, 1, who);
          const Shape& s = in[0].shape;
          std::vector<bool> seen(s.rank(), false);
          std::vector<Dim> dims;
          if (tag.order.size() != s.rank())
            raise("snippets.graph.bad_attribute",
                  std::string(who) + ": order has " + std::to_string(tag.order.size()) +
                      " entries but the input has rank " + std::to_string(s.rank()));
          for (std::size_t a : tag.order) {
            if (a >= s.rank() || seen[a])
              raise("snippets.graph.bad_attribute",
                    std::string(who) + ": order must be a permutation of 0..rank-1");
            seen[a] = true;
            dims.push_back(s[a]);
          }
          return {{in[0].type, Shape(std::move(dims))}};
        } else if constexpr (std::is_same_v<Tag, Broadcast>) {
          detail::check_arity(in, 1, who);
          Shape out;
          if (!try_broadcast(in[0].shape, tag.shape, out) || !compatible(out, tag.shape))
            raise("snippets.shape.not_broadcastable",
                  std::string(who) + ": " + in[0].shape.to_string() + " cannot be broadcast to " +
                      tag.shape.to_string());
          return {{in[0].type, tag.shape}};
        } else if constexpr (std::is_same_v<Tag, Reshape>) {
          detail::check_arity(in, 1, who);
          return {{in[0].type, detail::reshape(in[0].shape, tag.shape, who)}};
        } else if constexpr (std::is_same_v<Tag, Slice>) {
          detail::check_arity(in, 1, who);
          const Shape& s = in[0].shape;
          const std::size_t axis = normalize_axis(tag.axis, s.rank(), who);
          if (tag.start < 0 || tag.length < 0 ||
              (s[axis] != dynamic && tag.start + tag.length > s[axis]))
            raise("snippets.graph.bad_attribute",
                  std::string(who) + ": elements [" + std::to_string(tag.start) + ", " +
                      std::to_string(tag.start + tag.length) + ") of axis " + std::to_string(axis) +
                      " are not inside " + s.to_string());
          std::vector<Dim> dims(s.begin(), s.end());
          dims[axis] = tag.length;
          return {{in[0].type, Shape(std::move(dims))}};
        } else if constexpr (std::is_same_v<Tag, MatMul>) {
          detail::check_arity(in, 2, who);
          // an integer product: i8 and u8 operands in any mix, summed exactly into i32
          if (in.size() == 2 && is_byte_integer(in[0].type) && is_byte_integer(in[1].type))
            return {{ElementType::i32, detail::matmul(in[0].shape, in[1].shape, tag, who)}};
          detail::check_same_type(in, who);
          detail::check_not_boolean(in[0], who);
          return {{in[0].type, detail::matmul(in[0].shape, in[1].shape, tag, who)}};
        } else if constexpr (std::is_same_v<Tag, Opaque>) {
          if (tag.outputs.empty())
            raise("snippets.graph.bad_attribute",
                  std::string(who) + ": an Opaque op must declare at least one output type");
          return tag.outputs;
        } else if constexpr (std::is_same_v<Tag, Subgraph<T>>) {
          if (!tag.body)
            raise("snippets.graph.bad_attribute", std::string(who) + " has no body graph");
          const auto& params = tag.body->parameters();
          detail::check_arity(in, params.size(), who);
          if (tag.body->results().empty())
            raise("snippets.graph.bad_attribute",
                  std::string(who) + ": the body has no Result; a Subgraph needs at least one "
                                     "output");
          for (std::size_t i = 0; i < in.size(); ++i) {
            const TensorType& p = tag.body->node(params[i]).outputs[0];
            if (p.type != in[i].type || !compatible(p.shape, in[i].shape))
              raise("snippets.graph.type_mismatch",
                    std::string(who) + ": input " + std::to_string(i) + " is " + in[i].to_string() +
                        " but the body's parameter is " + p.to_string());
          }
          std::vector<TensorType> out;
          for (auto r : tag.body->results())
            out.push_back(tag.body->type(tag.body->node(r).inputs[0]));
          return out;
        } else {
          static_assert(sizeof(Tag) == 0, "snippets: op tag has no type inference rule; add one");
        }
      },
      op);
}

} // namespace detail

template <class T>
std::vector<TensorType> infer_types(const Op<T>& op, std::span<const TensorType> in,
                                    std::string_view who) {
  std::vector<TensorType> out = detail::infer_types_unchecked<T>(op, in, who);
  for (const TensorType& t : out) // no buffer could hold it, and counts would wrap
    if (t.shape.is_static() && !t.countable())
      raise("snippets.shape.too_many_elements",
            std::string(who) + " gives " + t.to_string() +
                ", which has more bytes than int64 can count; use smaller tensors");
  return out;
}

} // namespace snippets::ir
