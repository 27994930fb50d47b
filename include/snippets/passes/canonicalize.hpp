// SPDX-License-Identifier: Apache-2.0
// snippets/passes/canonicalize.hpp: Canonicalization, the first data-flow pass.
//
// It brings the inputs' memory layouts into the body, so that every later stage sees the
// shapes the kernel walks over (the seed's "layout-aware output shapes for scheduling"):
//  - ranks are aligned: every Parameter gets leading 1s up to the body's rank;
//  - a PRelu slope Parameter of rank 1 whose length is x's channel dimension becomes
//    [C, 1, ..., 1] (per-channel), which is then ordinary NUMPY broadcasting;
//  - Parameters with a non-planar Layout (channels-last, NCHW16c, ...) get their physical
//    shape; all such inputs must share one layout. A planar input in such a body is read in
//    that layout's dimension order, which is only the same memory when its non-1 dimensions
//    keep their order; for a blocked layout it must also be 1 on the blocked axis and gets a
//    trailing 1 (the seed's rule). Anything else is [snippets.canonicalize.layout_conflict].
// The rewritten Parameters are planar with the physical shape; shapes propagate through the
// body by type inference, so the outputs come out in the body's layout. Bodies with ops that
// are not elementwise (Reduce, Softmax, Transpose, ...) keep their shapes: they must be planar.
// A Parameter with `strided_read` (a Transpose folded into its load) is not a body layout: it
// keeps its logical shape and its layout (both rank-aligned), and the LIR reads it with the
// strides of its layout. A Result with a layout (a Transpose folded into its store) gets
// its layout rank-aligned the same way. Neither can be combined with a body layout
// [layout_conflict].
#pragma once

#include <algorithm>

#include "snippets/passes/data_flow.hpp"
#include "snippets/passes/properties.hpp"

namespace snippets::passes {

namespace detail {
/// Ops whose output element i depends only on element i of each (broadcast) input.
template <class T> bool is_elementwise(const ir::Op<T>& op) {
  switch (ir::op_category<T>(op)) {
  case ir::OpCategory::unary:
  case ir::OpCategory::binary:
  case ir::OpCategory::comparison:
  case ir::OpCategory::logical:
  case ir::OpCategory::parameter:
  case ir::OpCategory::result:
  case ir::OpCategory::constant: return true;
  default:
    return ir::is<ir::Select>(op) || ir::is<ir::Convert>(op) || ir::is<ir::PRelu>(op) ||
           ir::is<ir::LogicalNot>(op);
  }
}

/// `layout` (of rank r) on a shape with `extra` leading 1s added.
inline Layout lift_layout(const Layout& layout, std::size_t rank, std::size_t extra) {
  std::vector<std::size_t> order(extra);
  for (std::size_t i = 0; i < extra; ++i) order[i] = i;
  const auto& inner = layout.order();
  for (std::size_t i = 0; i < rank; ++i) order.push_back(extra + (inner.empty() ? i : inner[i]));
  if (!layout.is_blocked()) return Layout::permuted(std::move(order));
  return Layout::blocked(std::move(order), static_cast<std::size_t>(layout.block_axis()) + extra,
                         layout.block_size());
}
} // namespace detail

struct Canonicalize {
  using pass_tag = data_flow_pass_tag;
  static constexpr std::string_view name = "Canonicalize";
  using establishes = Properties<property::RanksAligned>;

  template <class T> ir::Graph<T> run(const ir::Graph<T>& body) const {
    std::size_t rank = 0;
    bool elementwise = true;
    for (ir::NodeId id = 0; id < body.size(); ++id) {
      elementwise = elementwise && detail::is_elementwise<T>(body.node(id).op);
      for (const auto& t : body.node(id).outputs) rank = std::max(rank, t.shape.rank());
    }
    // the one non-planar layout of the inputs, lifted to `rank`
    std::optional<Layout> layout;
    std::string layout_owner;
    for (ir::NodeId p : body.parameters()) {
      const auto& n = body.node(p);
      const Layout& l = std::get<ir::Parameter>(n.op).layout;
      if (l.is_planar() || std::get<ir::Parameter>(n.op).strided_read) continue;
      if (!elementwise)
        raise("snippets.canonicalize.layout_unsupported",
              "input '" + n.name + "' has layout " + l.to_string(n.outputs[0].shape.rank()) +
                  " but the body has ops that are not elementwise; give it planar inputs");
      const std::size_t r = n.outputs[0].shape.rank();
      const Layout lifted = detail::lift_layout(l, r, rank - r);
      if (layout && !(*layout == lifted))
        raise("snippets.canonicalize.layout_conflict",
              "inputs '" + layout_owner + "' and '" + n.name +
                  "' have different layouts; give them one layout (or make one planar)");
      layout = lifted;
      layout_owner = n.name;
    }
    if (!elementwise) return remove_dead_nodes(body);
    if (layout && layout->is_blocked()) check_blocked_axis(body, *layout, rank);
    if (layout)
      for (ir::NodeId p : body.parameters())
        if (std::get<ir::Parameter>(body.node(p).op).strided_read)
          raise("snippets.canonicalize.layout_conflict",
                "input '" + body.node(p).name + "' is read transposed but the body's layout is " +
                    layout->to_string(rank) + " (from '" + layout_owner +
                    "'); transpose outside the subgraph, or give the inputs planar layouts");
    if (layout)
      for (ir::NodeId r : body.results())
        if (!std::get<ir::Result>(body.node(r).op).layout.is_planar())
          raise("snippets.canonicalize.layout_conflict",
                "output '" + body.node(r).name +
                    "' is written transposed but the body's layout is " + layout->to_string(rank) +
                    " (from '" + layout_owner +
                    "'); transpose outside the subgraph, or give the inputs planar layouts");
    if (layout)
      for (ir::NodeId id = 0; id < body.size(); ++id)
        if (const auto* c = std::get_if<ir::Constant>(&body.node(id).op);
            c && c->output.shape.element_count() > 1)
          raise("snippets.canonicalize.layout_unsupported",
                "Constant '" + body.node(id).name + "' is planar but the body's inputs are " +
                    layout->to_string(rank) + "; pass it as an input with that layout");

    return rebuild(
        body,
        [&](ir::Graph<T>& out, const ir::Node<T>& n,
            std::span<const ir::Value> in) -> std::optional<std::vector<ir::Value>> {
          if (const auto* r = std::get_if<ir::Result>(&n.op); r && !r->layout.is_planar()) {
            const std::size_t have = r->layout.order().size();
            const std::size_t want = out.type(in[0]).shape.rank();
            out.make(ir::Result{detail::lift_layout(r->layout, have, want - have)}, in, n.name);
            return std::vector<ir::Value>{};
          }
          const auto* p = std::get_if<ir::Parameter>(&n.op);
          if (!p) return std::nullopt;
          std::vector<Dim> dims(rank - p->output.shape.rank(), 1);
          dims.insert(dims.end(), p->output.shape.begin(), p->output.shape.end());
          if (const auto channels = per_channel_slope(body, n); channels)
            std::fill(dims.begin(), dims.end(), 1), dims[*channels] = p->output.shape[0];
          Shape shape(dims);
          if (p->strided_read) {
            const std::size_t r = p->output.shape.rank();
            ir::Parameter q = *p;
            q.output.shape = shape;
            q.layout = detail::lift_layout(p->layout, r, rank - r);
            return out.make(std::move(q), std::span<const ir::Value>(), n.name);
          }
          if (!p->layout.is_planar())
            shape = layout->physical_shape(shape);
          else if (layout)
            shape = planar_in_layout(shape, *layout, n.name);
          return std::vector{out.parameter(p->output.type, shape, n.name)};
        });
  }

private:
  /// The axis (in the aligned rank) of a per-channel PRelu slope Parameter, if `n` is one.
  template <class T>
  static std::optional<std::size_t> per_channel_slope(const ir::Graph<T>& body,
                                                      const ir::Node<T>& n) {
    if (n.outputs[0].shape.rank() != 1 || n.outputs[0].shape[0] == 1) return std::nullopt;
    std::optional<std::size_t> axis;
    for (const ir::Use& u : body.users(ir::Output{n.id, 0})) {
      const auto& user = body.node(u.node);
      const Shape& x = body.type(user.inputs[0]).shape;
      if (!ir::is<ir::PRelu>(user.op) || u.input != 1 || x.rank() < 2 ||
          x[1] != n.outputs[0].shape[0])
        return std::nullopt; // also used as an ordinary operand: keep NUMPY rules
      std::size_t rank = 0;
      for (ir::NodeId id = 0; id < body.size(); ++id)
        for (const auto& t : body.node(id).outputs) rank = std::max(rank, t.shape.rank());
      axis = rank - x.rank() + 1;
    }
    return axis;
  }

  /// The shape a planar input has when read in `layout`'s order.
  static Shape planar_in_layout(const Shape& shape, const Layout& layout, const std::string& who) {
    std::vector<std::size_t> non_unit; // non-1 axes in memory order
    for (std::size_t a = 0; a < shape.rank(); ++a)
      if (shape[a] != 1) non_unit.push_back(a);
    std::vector<std::size_t> in_layout_order;
    std::vector<Dim> dims;
    for (std::size_t a : layout.order()) {
      dims.push_back(shape[a]);
      if (shape[a] != 1) in_layout_order.push_back(a);
    }
    const bool blocked_axis_ok =
        !layout.is_blocked() || shape[static_cast<std::size_t>(layout.block_axis())] == 1;
    if (in_layout_order != non_unit || !blocked_axis_ok)
      raise("snippets.canonicalize.layout_conflict",
            "input '" + who + "' " + shape.to_string() + " is planar but the body's layout is " +
                layout.to_string(shape.rank()) +
                "; give this input the same layout (its memory order differs)");
    if (layout.is_blocked()) dims.push_back(1); // the seed's trailing 1
    return Shape(dims);
  }

private:
  /// Inputs in the blocked body layout all span its blocked axis, or none does: one of extent 1
  /// beside a wider one would be read with its block's padding lanes as the other channels.
  template <class T>
  static void check_blocked_axis(const ir::Graph<T>& body, const Layout& layout, std::size_t rank) {
    const auto axis = static_cast<std::size_t>(layout.block_axis());
    const ir::Node<T>* narrow = nullptr;
    const ir::Node<T>* wide = nullptr;
    for (ir::NodeId p : body.parameters()) {
      const auto& n = body.node(p);
      const auto& param = std::get<ir::Parameter>(n.op);
      if (param.layout.is_planar() || param.strided_read) continue;
      const Shape& s = n.outputs[0].shape;
      const std::size_t lead = rank - s.rank();
      const Dim extent = axis >= lead ? s[axis - lead] : 1;
      (extent == 1 ? narrow : wide) = &n;
    }
    if (narrow && wide)
      raise("snippets.canonicalize.layout_conflict",
            "input '" + narrow->name + "' is broadcast along the blocked axis of " +
                layout.to_string(rank) + " (extent 1 beside '" + wide->name +
                "'): its block holds one channel and padding; give it the full axis, or a "
                "planar layout");
  }
};

} // namespace snippets::passes
