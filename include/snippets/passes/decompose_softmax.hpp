// SPDX-License-Identifier: Apache-2.0
// snippets/passes/decompose_softmax.hpp: DecomposeSoftmax (data flow), the seed's Softmax
// decomposition, and the normal form of the reductions a kernel computes.
//
// A kernel reduces over trailing axes (row_axes: the last k of its input), walked as one row;
// a reduction drops them (no keep_dims) only where Results alone read it. For such ops:
//  - Softmax becomes m = ReduceMax(x), e = Exp(x - m), s = ReduceSum(e), e * (1 / s):
//    numerically stable (Exp never sees a positive argument, so large inputs do not overflow)
//    and one division per row instead of one per element;
//  - ReduceSum, ReduceMax, ReduceMin and ReduceProd get axes {-k, ..., -1} and keep_dims, so
//    later rank alignment (Canonicalize) keeps them on the trailing axes (the kept form has the
//    bytes of the dropped one: the kernel stores it);
//  - a reduction over axes of extent 1 is its input (a NaN-ignoring ReduceMax: its input
//    where it is a number, -inf for NaN: a Select). No loop then walks the axis, which matters
//    in a dynamic kernel whose rows may be empty at run time: the value stays the element's.
// Anything else is left as it is (compile() then names the op it cannot fuse). It runs first,
// before Canonicalize changes ranks.
#pragma once

#include <limits>

#include "snippets/passes/data_flow.hpp"
#include "snippets/passes/properties.hpp"

namespace snippets::passes {

/// How many axes a Softmax or a reduction (ir::reduction) reduces over when they are the last
/// k axes of its static-rank input (k >= 1; a Softmax has one axis), else 0. These are the
/// forms a kernel computes: it walks the k axes as one row (passes/optimize_domain.hpp merges
/// them), per row a reduce loop (passes/decompose_reductions.hpp; the composite reductions
/// after DecomposeCompositeReductions). keep_dims is not looked at here (reduced_dims_kept).
template <class T> std::size_t row_axes(const ir::Graph<T>& g, const ir::Node<T>& n) {
  if (n.inputs.empty()) return 0;
  const std::size_t rank = g.type(n.inputs[0]).shape.rank();
  auto trailing = [&](const std::vector<std::int64_t>& axes) -> std::size_t {
    std::vector<bool> reduced(rank, false);
    for (std::int64_t a : axes) {
      if (a < -std::int64_t(rank) || a >= std::int64_t(rank)) return 0;
      reduced[static_cast<std::size_t>(a < 0 ? a + std::int64_t(rank) : a)] = true;
    }
    const auto k = static_cast<std::size_t>(std::count(reduced.begin(), reduced.end(), true));
    for (std::size_t d = rank - k; d < rank; ++d)
      if (!reduced[d]) return 0;
    return k;
  };
  if (rank == 0) return 0;
  if (const auto* s = std::get_if<ir::Softmax>(&n.op)) return trailing({s->axis});
  return std::visit(
      [&](const auto& r) -> std::size_t {
        if constexpr (ir::reduction<std::decay_t<decltype(r)>>)
          return trailing(r.axes);
        else
          return 0;
      },
      n.op);
}

/// False for a reduction without keep_dims (true for any other node).
template <class T> bool reduced_dims_kept(const ir::Node<T>& n) {
  return std::visit(
      [](const auto& r) {
        if constexpr (ir::reduction<std::decay_t<decltype(r)>>)
          return r.keep_dims;
        else
          return true;
      },
      n.op);
}

/// Whether every user of `n`'s output is a Result: a reduction without keep_dims computes in a
/// kernel only then (its result has the bytes of the kept form; the kernel stores that).
template <class T> bool read_by_results_only(const ir::Graph<T>& g, const ir::Node<T>& n) {
  return std::all_of(n.users[0].begin(), n.users[0].end(),
                     [&](const ir::Use& u) { return ir::is<ir::Result>(g.node(u.node).op); });
}

struct DecomposeSoftmax {
  using pass_tag = data_flow_pass_tag;
  static constexpr std::string_view name = "DecomposeSoftmax";
  using before = Properties<property::RanksAligned>;
  using establishes = Properties<property::SoftmaxDecomposed>;

  template <class T> ir::Graph<T> run(const ir::Graph<T>& body) const {
    return rebuild(body,
                   [&](ir::Graph<T>& out, const ir::Node<T>& n,
                       std::span<const ir::Value> in) -> std::optional<std::vector<ir::Value>> {
                     const std::size_t k = row_axes(body, n);
                     if (k == 0 || (!ir::is_row_reduction(n.op) && !ir::is<ir::Softmax>(n.op)) ||
                         (!reduced_dims_kept(n) && !read_by_results_only(body, n)))
                       return std::nullopt;
                     std::vector<std::int64_t> inner; // -k .. -1
                     for (auto a = -std::int64_t(k); a < 0; ++a) inner.push_back(a);
                     const ir::TensorType& shape_type = body.type(n.inputs[0]);
                     const Shape& shape = shape_type.shape;
                     bool one = true; // every reduced axis has extent 1: no loop walks them
                     for (std::size_t d = shape.rank() - k; d < shape.rank(); ++d)
                       one = one && shape[d] == 1;
                     auto reduce = [&](auto tag, ir::Value v, const std::string& name) {
                       return one ? v : out.make(tag, {v}, name)[0];
                     };
                     if (ir::is<ir::Softmax>(n.op)) {
                       const ir::Value x = in[0];
                       // NaN reaches every element through the sum, whatever m is
                       const auto m = reduce(ir::ReduceMax{inner, true, true}, x, n.name + "/max");
                       const auto d = out.make(ir::Subtract{}, {x, m}, n.name + "/sub")[0];
                       const auto e =
                           out.make(ir::Exp{.nonpositive = true}, {d}, n.name + "/exp")[0];
                       const auto s = reduce(ir::ReduceSum{inner, true}, e, n.name + "/sum");
                       const auto one = out.scalar(shape_type.type, 1.0, {}, n.name + "/one");
                       const auto r = out.make(ir::Divide{}, {one, s}, n.name + "/rcp")[0];
                       return out.make(ir::Multiply{}, {e, r}, n.name);
                     }
                     if (ir::is<ir::ReduceSum>(n.op))
                       return std::vector{reduce(ir::ReduceSum{inner, true}, in[0], n.name)};
                     if (ir::is<ir::ReduceMin>(n.op))
                       return std::vector{reduce(ir::ReduceMin{inner, true}, in[0], n.name)};
                     if (ir::is<ir::ReduceProd>(n.op))
                       return std::vector{reduce(ir::ReduceProd{inner, true}, in[0], n.name)};
                     if (std::get<ir::ReduceMax>(n.op).ignore_nan && one)
                       return std::vector{number_or_low(out, in[0], n.name)};
                     if (std::get<ir::ReduceMax>(n.op).ignore_nan)
                       return out.make(ir::ReduceMax{inner, true, true}, {in[0]}, n.name);
                     return std::vector{reduce(ir::ReduceMax{inner, true, false}, in[0], n.name)};
                   });
  }

private:
  /// A NaN-ignoring max over one element: x == x ? x : -inf, elementwise (a loop over the
  /// domain's row would leave -inf where a dynamic kernel's rows are empty).
  template <class T>
  static ir::Value number_or_low(ir::Graph<T>& out, ir::Value x, const std::string& name) {
    const ElementType type = out.type(x).type;
    if (!is_float(type)) return x; // no NaN
    const auto number = out.make(ir::Equal{}, {x, x}, name + "/num")[0];
    const auto low = out.scalar(type, -std::numeric_limits<double>::infinity(), {}, name + "/-inf");
    return out.make(ir::Select{}, {number, x, low}, name)[0];
  }
};

} // namespace snippets::passes
