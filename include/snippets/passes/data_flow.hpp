// SPDX-License-Identifier: Apache-2.0
// snippets/passes/data_flow.hpp: passes over a Subgraph body (the seed's data-flow optimizer).
//
// A data-flow pass is a struct with no base class, like a Linear IR pass:
//   struct MyRewrite {
//     using pass_tag = snippets::passes::data_flow_pass_tag;     // opt-in
//     static constexpr std::string_view name = "MyRewrite";
//     template <class T> ir::Graph<T> run(const ir::Graph<T>& body) const;
//   };
// A Graph only grows, so a pass returns a new body (usually through `rebuild` below) and
// never changes its input. Passes are shape-agnostic: they work on dynamic shapes too.
// DataFlowPipeline (pipeline.hpp) runs them in order and is itself a data-flow pass.
#pragma once

#include <algorithm>
#include <concepts>
#include <map>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "snippets/ir/graph.hpp"

namespace snippets::passes {

/// Opt-in tag of passes over a Subgraph body.
struct data_flow_pass_tag {};

template <class P, class T>
concept DataFlowPass = std::same_as<typename P::pass_tag, data_flow_pass_tag> && requires {
  { P::name } -> std::convertible_to<std::string_view>;
} && requires(const P& p, const ir::Graph<T>& g) {
  { p.run(g) } -> std::same_as<ir::Graph<T>>;
};

namespace detail {
struct OutputLess {
  bool operator()(const ir::Output& a, const ir::Output& b) const {
    return a.node != b.node ? a.node < b.node : a.port < b.port;
  }
};

/// The value of a Scalar, or of a Constant whose values are all equal (a scalar constant).
template <class T> std::optional<double> uniform_value(const ir::Op<T>& op) {
  if (const auto* s = std::get_if<ir::Scalar>(&op)) return s->value;
  const auto* c = std::get_if<ir::Constant>(&op);
  if (!c || c->values.empty() ||
      !std::all_of(c->values.begin(), c->values.end(), [&](double v) { return v == c->values[0]; }))
    return std::nullopt;
  return c->values[0];
}
} // namespace detail

/// Copies `g` into a new graph, node by node: Parameters first (in order), then the rest in
/// topological order, Results last (in order), so inputs and outputs keep their positions.
/// For every node, `rewrite(out, node, new_inputs)` may return the node's replacement values
/// (one per output, built in `out`); std::nullopt copies the node unchanged. Nodes that no
/// Result depends on are dropped unless `drop_dead` is false.
template <class T, class F>
ir::Graph<T> rebuild(const ir::Graph<T>& g, F&& rewrite, bool drop_dead = true) {
  ir::Graph<T> out;
  std::map<ir::Output, ir::Value, detail::OutputLess> mapped;
  auto visit = [&](ir::NodeId id) {
    const ir::Node<T>& n = g.node(id);
    std::vector<ir::Value> in;
    for (const ir::Output& o : n.inputs) in.push_back(mapped.at(o));
    std::optional<std::vector<ir::Value>> values = rewrite(out, n, std::span<const ir::Value>(in));
    if (!values) {
      values = out.make(n.op, in, n.name);
      if (n.skipped_by_plugin && !values->empty()) out.mark_skipped(values->at(0).output.node);
    }
    for (std::uint32_t p = 0; p < values->size(); ++p) mapped[{id, p}] = (*values)[p];
  };
  // nodes no Result depends on are dropped (Parameters stay: they are the body's signature)
  std::vector<bool> live(g.size(), false);
  const auto order = g.topological_order();
  for (ir::NodeId r : g.results()) live[r] = true;
  if (!drop_dead) live.assign(g.size(), true);
  for (auto it = order.rbegin(); it != order.rend(); ++it)
    if (live[*it])
      for (const ir::Output& o : g.node(*it).inputs) live[o.node] = true;
  for (ir::NodeId p : g.parameters()) visit(p);
  for (ir::NodeId id : order)
    if (live[id] && !ir::is<ir::Parameter>(g.node(id).op) && !ir::is<ir::Result>(g.node(id).op))
      visit(id);
  for (ir::NodeId r : g.results()) visit(r);
  return out;
}

/// A copy of `g` whose Parameters have the types `in` (in order, each compatible with the
/// declared one: a dynamic body made static for one set of input shapes); type inference gives
/// every other node its type for them.
template <class T>
ir::Graph<T> with_input_types(const ir::Graph<T>& g, std::span<const ir::TensorType> in) {
  std::size_t next = 0; // rebuild visits the Parameters first, in order
  return rebuild(
      g,
      [&](ir::Graph<T>& out, const ir::Node<T>& n,
          std::span<const ir::Value>) -> std::optional<std::vector<ir::Value>> {
        const auto* p = std::get_if<ir::Parameter>(&n.op);
        if (!p) return std::nullopt;
        ir::Parameter typed = *p;
        typed.output = in[next++];
        return out.make(typed, {}, n.name);
      },
      false);
}

/// A copy of `g` without the nodes no Result depends on.
template <class T> ir::Graph<T> remove_dead_nodes(const ir::Graph<T>& g) {
  return rebuild(g, [](auto&&...) { return std::optional<std::vector<ir::Value>>{}; });
}

/// `model` after `rewrite(g, region)` for each region `find(g)` gives, until it gives none;
/// nothing when it gives none at first. Each rewrite must take its region away for good, so
/// at most one round per node of `model` runs (SplitMergedAxes, MoveReducedAxesLast).
template <class T, class Find, class Rewrite>
std::optional<ir::Graph<T>> rewrite_regions(const ir::Graph<T>& model, Find&& find,
                                            Rewrite&& rewrite) {
  std::optional<ir::Graph<T>> g;
  for (std::size_t round = 0; round <= model.size(); ++round) {
    const auto region = find(g ? *g : model);
    if (!region) break;
    g = rewrite(g ? *g : model, *region);
  }
  return g;
}

/// Ops computed element by element on their (broadcast) inputs, elementwise in their shapes:
/// the ops a region rewrite (SplitMergedAxes, MoveReducedAxesLast) computes over other axes.
template <class Tag>
inline constexpr bool elementwise_tag =
    Tag::category == ir::OpCategory::unary || Tag::category == ir::OpCategory::binary ||
    Tag::category == ir::OpCategory::comparison || Tag::category == ir::OpCategory::logical ||
    std::is_same_v<Tag, ir::Select> || std::is_same_v<Tag, ir::Convert> ||
    std::is_same_v<Tag, ir::FakeQuantize> || std::is_same_v<Tag, ir::Quantize>;

} // namespace snippets::passes
