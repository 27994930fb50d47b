// SPDX-License-Identifier: Apache-2.0
// snippets/passes/decompose_softmax.hpp: DecomposeSoftmax (data flow), the seed's Softmax
// decomposition, and the normal form of the reductions a kernel computes.
//
// A kernel reduces over trailing axes (row_axes: the last k of its input), walked as one row,
// or over a run of middle axes, a vector of the trailing ones at a time (RowForm::kept); a
// reduction drops them (no keep_dims) only where Results alone read it. For such ops:
//  - Softmax becomes m = ReduceMax(x), e = Exp(x - m), s = ReduceSum(e), e * (1 / s):
//    numerically stable (Exp never sees a positive argument, so large inputs do not overflow)
//    and one division per row instead of one per element;
//  - ReduceSum, ReduceMax, ReduceMin and ReduceProd get axes counted from the end ({-k, ..., -1}
//    over the last axes) and keep_dims, so later rank alignment (Canonicalize) keeps them on
//    the same axes (the kept form has the bytes of the dropped one: the kernel stores it);
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

/// The axes a Softmax or a reduction (ir::reduction) reduces over, when they are one run of
/// adjacent axes of its static-rank input: `reduced` of them (>= 1; a Softmax has one axis),
/// followed by `kept` trailing axes it does not reduce. {0, 0} for any other node. These are
/// the forms a kernel computes: over the last axes (kept 0) it walks the reduced axes as one
/// row (passes/optimize_domain.hpp merges them), per row a reduce loop
/// (passes/decompose_reductions.hpp; the composite reductions after
/// DecomposeCompositeReductions); over middle axes (a sum over the channels of NCHW) it reduces
/// a vector of columns at a time (passes/tile_columns.hpp). keep_dims is not looked at here
/// (reduced_dims_kept).
struct RowForm {
  std::size_t reduced = 0, kept = 0;
  /// The axes, counted from the end: -(reduced + kept) .. -(kept + 1).
  std::vector<std::int64_t> axes() const {
    std::vector<std::int64_t> out;
    for (std::size_t i = 0; i < reduced; ++i)
      out.push_back(-std::int64_t(reduced + kept) + std::int64_t(i));
    return out;
  }
  bool operator==(const RowForm&) const = default;
};

template <class T> RowForm row_form(const ir::Graph<T>& g, const ir::Node<T>& n) {
  if (n.inputs.empty()) return {};
  const std::size_t rank = g.type(n.inputs[0]).shape.rank();
  auto run = [&](const std::vector<std::int64_t>& axes) -> RowForm {
    std::vector<bool> reduced(rank, false);
    for (std::int64_t a : axes) {
      if (a < -std::int64_t(rank) || a >= std::int64_t(rank)) return {};
      reduced[static_cast<std::size_t>(a < 0 ? a + std::int64_t(rank) : a)] = true;
    }
    const auto last = std::find(reduced.rbegin(), reduced.rend(), true);
    if (last == reduced.rend()) return {};
    const auto kept = static_cast<std::size_t>(last - reduced.rbegin());
    const auto k = static_cast<std::size_t>(std::count(reduced.begin(), reduced.end(), true));
    for (std::size_t d = rank - kept - k; d < rank - kept; ++d)
      if (!reduced[d]) return {};
    return {k, kept};
  };
  if (rank == 0) return {};
  if (const auto* s = std::get_if<ir::Softmax>(&n.op)) return run({s->axis});
  return std::visit(
      [&](const auto& r) -> RowForm {
        if constexpr (ir::reduction<std::decay_t<decltype(r)>>)
          return run(r.axes);
        else
          return {};
      },
      n.op);
}

/// How many axes a Softmax or a reduction reduces over when they are the last ones of its
/// input (row_form with nothing kept), else 0.
template <class T> std::size_t row_axes(const ir::Graph<T>& g, const ir::Node<T>& n) {
  const RowForm f = row_form(g, n);
  return f.kept == 0 ? f.reduced : 0;
}

/// Whether `g` holds a MatMul: a body whose Softmax works on the MatMul's rows (LowerBrgemm),
/// and whose reductions reduce rows only.
template <class T> bool has_matmul(const ir::Graph<T>& g) {
  for (ir::NodeId id = 0; id < g.size(); ++id)
    if (ir::is<ir::MatMul>(g.node(id).op)) return true;
  return false;
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
    return rebuild(
        body,
        [&](ir::Graph<T>& out, const ir::Node<T>& n,
            std::span<const ir::Value> in) -> std::optional<std::vector<ir::Value>> {
          const RowForm form = row_form(body, n);
          if (form.reduced == 0 || (!ir::is_row_reduction(n.op) && !ir::is<ir::Softmax>(n.op)) ||
              (!reduced_dims_kept(n) && !read_by_results_only(body, n)))
            return std::nullopt;
          const std::vector<std::int64_t> inner = form.axes();
          const ir::TensorType& shape_type = body.type(n.inputs[0]);
          const Shape& shape = shape_type.shape;
          bool one = true; // every reduced axis has extent 1: no loop walks them
          for (std::int64_t a : inner) one = one && shape[shape.rank() - std::size_t(-a)] == 1;
          auto reduce = [&](auto tag, ir::Value v, const std::string& name) {
            return one ? v : out.make(tag, {v}, name)[0];
          };
          if (ir::is<ir::Softmax>(n.op)) {
            const ir::Value x = in[0];
            // NaN reaches every element through the sum, whatever m is
            const auto m = reduce(ir::ReduceMax{inner, true, true}, x, n.name + "/max");
            const auto d = out.make(ir::Subtract{}, {x, m}, n.name + "/sub")[0];
            const auto e = out.make(ir::Exp{.nonpositive = true}, {d}, n.name + "/exp")[0];
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
