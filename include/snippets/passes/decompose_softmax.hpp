// SPDX-License-Identifier: Apache-2.0
// snippets/passes/decompose_softmax.hpp: DecomposeSoftmax (data flow), the seed's Softmax
// decomposition, and the normal form of the reductions a kernel computes.
//
// A kernel reduces over the innermost axis only, keeping it (innermost_reduction). For such ops:
//  - Softmax becomes m = ReduceMax(x), e = Exp(x - m), s = ReduceSum(e), e * (1 / s):
//    numerically stable (Exp never sees a positive argument, so large inputs do not overflow)
//    and one division per row instead of one per element;
//  - ReduceSum, ReduceMax, ReduceMin and ReduceProd get axes {-1}, so later rank alignment
//    (Canonicalize) keeps them on the innermost axis;
//  - a reduction over an axis of extent 1 is its input (a NaN-ignoring ReduceMax: its input
//    where it is a number, -inf for NaN: a Select). No loop then walks the axis, which matters
//    in a dynamic kernel whose rows may be empty at run time: the value stays the element's.
// Anything else is left as it is (compile() then names the op it cannot fuse). It runs first,
// before Canonicalize changes ranks.
#pragma once

#include <limits>

#include "snippets/passes/data_flow.hpp"
#include "snippets/passes/properties.hpp"

namespace snippets::passes {

/// True for Softmax and the reductions (ir::reduction: keep_dims) over exactly the innermost
/// axis of a static-rank input: the forms a kernel computes (passes/decompose_reductions.hpp;
/// the composite ones after DecomposeCompositeReductions).
template <class T> bool innermost_reduction(const ir::Graph<T>& g, const ir::Node<T>& n) {
  if (n.inputs.empty()) return false;
  const auto rank = static_cast<std::int64_t>(g.type(n.inputs[0]).shape.rank());
  auto last = [&](std::int64_t a) { return rank > 0 && (a == -1 || a == rank - 1); };
  if (const auto* s = std::get_if<ir::Softmax>(&n.op)) return last(s->axis);
  return std::visit(
      [&](const auto& r) {
        if constexpr (ir::reduction<std::decay_t<decltype(r)>>)
          return r.keep_dims && r.axes.size() == 1 && last(r.axes[0]);
        else
          return false;
      },
      n.op);
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
                     if (!innermost_reduction(body, n) ||
                         (!ir::is_row_reduction(n.op) && !ir::is<ir::Softmax>(n.op)))
                       return std::nullopt;
                     const std::vector<std::int64_t> inner{-1};
                     const ir::TensorType& shape_type = body.type(n.inputs[0]);
                     const Shape& shape = shape_type.shape;
                     const bool one = shape.rank() > 0 && shape[shape.rank() - 1] == 1;
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
