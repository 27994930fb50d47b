// SPDX-License-Identifier: Apache-2.0
// snippets/ir/graph.hpp: Graph<T>, the data-flow IR (our analogue of an OpenVINO model).
//
//   snippets::ir::Graph<snippets::ReferenceBackend> g;
//   auto x = g.parameter(f32, {1, 3, dynamic, dynamic});
//   auto y = g.add(g.multiply(x, g.scalar(f32, 2.0)), x);   // builder sugar, graph_builder.hpp
//   g.result(y);
//
// Invariants:
//  - node ids are dense (0..size()-1) and nodes never move (stable addresses);
//  - every edge refers to an existing output of a node of this graph, and the graph is acyclic;
//  - each node's output types are those type inference gives for its op and inputs;
//  - a failed construction or mutation throws snippets::Error and leaves the graph unchanged.
// A Value is a handle to one output of one node of one graph; it is checked on every use
// ([snippets.graph.foreign_value], [snippets.graph.dangling_edge]). Moving a graph moves its
// identity: its Values stay valid in the new graph, and the moved-from graph is empty with a
// fresh id. Source ops (Parameter, Constant, Scalar) are checked by type inference, so
// make() with a hand-built tag is checked exactly like the builder methods.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "snippets/backend_traits.hpp"
#include "snippets/ir/graph_builder.hpp"
#include "snippets/ir/type_inference.hpp"

namespace snippets::ir {

#if defined(SNIPPETS_PREBUILT) && !defined(SNIPPETS_DEFINE_TEMPLATES)
// snippets::prebuilt (which defines SNIPPETS_PREBUILT) holds type inference for the reference
// backend (src/prebuilt.cpp): a program that builds graphs compiles none of its rules
extern template std::vector<TensorType> infer_types<ReferenceBackend>(const Op<ReferenceBackend>&,
                                                                      std::span<const TensorType>,
                                                                      std::string_view);
#endif

using NodeId = std::uint32_t;

/// The producer end of an edge: output `port` of node `node`.
struct Output {
  NodeId node = 0;
  std::uint32_t port = 0;
  bool operator==(const Output&) const = default;
};

/// The consumer end of an edge: input `input` of node `node`.
struct Use {
  NodeId node = 0;
  std::uint32_t input = 0;
  bool operator==(const Use&) const = default;
};

/// A user-facing handle to an output; remembers which graph it belongs to.
struct Value {
  std::uint64_t graph = 0;
  Output output;
  bool operator==(const Value&) const = default;
};

template <class T> struct Node {
  NodeId id = 0;
  std::string name;
  Op<T> op;
  std::vector<Output> inputs;
  std::vector<TensorType> outputs;
  std::vector<std::vector<Use>> users; // per output port
  bool skipped_by_plugin = false;      // the seed's SkippedByPlugin mark: never tokenized

  std::string_view op_name() const { return ir::op_name<T>(op); }
  /// "Add 'name'", used in error messages.
  std::string describe() const { return std::string(op_name()) + " '" + name + "'"; }
};

template <class T> class Graph : public GraphBuilder<Graph<T>> {
  static_assert(check_backend_traits<T>());

public:
  using traits_type = T;
  using op_type = Op<T>;

  Graph() : id_(next_id()) {}
  ~Graph(); // out of line, with make() and topological_order(): see the end of this file
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  /// Values of `other` stay valid in the new graph. The moved-from graph is empty and gets a
  /// fresh id, so the two never accept each other's Values.
  Graph(Graph&& other) noexcept
      : id_(std::exchange(other.id_, next_id())), nodes_(std::move(other.nodes_)),
        parameters_(std::move(other.parameters_)), results_(std::move(other.results_)) {
    other.clear_after_move();
  }
  Graph& operator=(Graph&& other) noexcept {
    if (this != &other) {
      id_ = std::exchange(other.id_, next_id());
      nodes_ = std::move(other.nodes_);
      parameters_ = std::move(other.parameters_);
      results_ = std::move(other.results_);
      other.clear_after_move();
    }
    return *this;
  }

  /// A graph-unique id; Values carry it so a Value of another graph is rejected.
  std::uint64_t id() const { return id_; }

  // ---- construction ----

  /// Adds a node computing `op` on `inputs`; returns one Value per output.
  /// @throws snippets::Error for a wrong arity, type, shape, attribute or a foreign Value.
  std::vector<Value> make(op_type op, std::span<const Value> inputs, std::string name = {});

  std::vector<Value> make(op_type op, std::initializer_list<Value> inputs, std::string name = {}) {
    return make(std::move(op), std::span<const Value>(inputs.begin(), inputs.size()),
                std::move(name));
  }

  /// Adds an attribute-free built-in op by its name ("Relu", "Add", ...).
  /// @throws [snippets.graph.unknown_op] when no such op exists (describe it as an Opaque).
  std::vector<Value> make(std::string_view op, std::span<const Value> inputs,
                          std::string name = {}) {
    op_type tag;
    if (!make_op_by_name<T>(op, tag))
      raise("snippets.graph.unknown_op",
            "backend '" + std::string(T::name) + "' knows no attribute-free op named '" +
                std::string(op) +
                "'; use the typed builder for ops with attributes, or "
                "describe a foreign op as ir::Opaque{name, output types}");
    return make(std::move(tag), inputs, std::move(name));
  }
  std::vector<Value> make(std::string_view op, std::initializer_list<Value> inputs,
                          std::string name = {}) {
    return make(op, std::span<const Value>(inputs.begin(), inputs.size()), std::move(name));
  }

  // The sources below are checked by type inference (a layout of the shape's rank, a static
  // Constant with one value or one per element, a Scalar shape of 1s), so make() with a
  // hand-built tag is checked alike.
  Value parameter(ElementType type, Shape shape, std::string name = {}, Layout layout = {}) {
    return make(Parameter{{type, std::move(shape)}, std::move(layout)}, {}, std::move(name))[0];
  }
  Value constant(ElementType type, Shape shape, std::vector<double> values, std::string name = {}) {
    return make(Constant{{type, std::move(shape)}, std::move(values)}, {}, std::move(name))[0];
  }
  Value scalar(ElementType type, double value, Shape shape = {}, std::string name = {}) {
    return make(Scalar{{type, std::move(shape)}, value}, {}, std::move(name))[0];
  }
  NodeId result(Value v, std::string name = {}) {
    make(Result{}, {v}, std::move(name));
    return results_.back();
  }

  // ---- mutation ----

  /// Reconnects input `index` of `node` to `v`.
  /// @throws [snippets.graph.cycle] when the edge would close a cycle, and the errors of make()
  /// when the node's op does not accept the new input type.
  void set_input(NodeId node_id, std::uint32_t index, Value v) {
    Node<T>& n = mutable_node(node_id);
    if (index >= n.inputs.size())
      raise("snippets.graph.dangling_edge",
            n.describe() + " has no input " + std::to_string(index));
    const Output src = checked(v, n.name);
    if (reaches(node_id, src.node))
      raise("snippets.graph.cycle", "connecting " + nodes_[src.node]->describe() + " to " +
                                        n.describe() + " would create a cycle");
    std::vector<TensorType> in_types;
    for (std::uint32_t i = 0; i < n.inputs.size(); ++i)
      in_types.push_back(type(i == index ? src : n.inputs[i]));
    if (infer_types<T>(n.op, in_types, n.describe()) != n.outputs)
      raise("snippets.graph.type_mismatch", "new input " + type(src).to_string() +
                                                " would change the outputs of " + n.describe() +
                                                "; build a new node instead");
    auto& new_users = nodes_[src.node]->users[src.port];
    make_room(new_users, 1);
    auto& old_users = nodes_[n.inputs[index].node]->users[n.inputs[index].port];
    std::erase(old_users, Use{node_id, index});
    new_users.push_back({node_id, index});
    n.inputs[index] = src;
  }

  /// Marks a node so the tokenizer never puts it into a Subgraph (the seed's SkippedByPlugin).
  void mark_skipped(NodeId node_id) { mutable_node(node_id).skipped_by_plugin = true; }

  // ---- queries ----

  std::size_t size() const { return nodes_.size(); }
  const Node<T>& node(NodeId id) const {
    if (id >= nodes_.size())
      raise("snippets.graph.dangling_edge", "node id " + std::to_string(id) + " does not exist");
    return *nodes_[id];
  }
  const Node<T>& node(Value v) const { return node(checked(v, "node()").node); }
  const std::vector<NodeId>& parameters() const { return parameters_; }
  const std::vector<NodeId>& results() const { return results_; }
  const TensorType& type(Output o) const { return type(Value{id_, o}); }
  const TensorType& type(Value v) const {
    const Output o = checked(v, "type()");
    return nodes_[o.node]->outputs[o.port];
  }
  /// The consumers of output `o`, in the order they were connected.
  std::span<const Use> users(Output o) const {
    const Output c = checked(Value{id_, o}, "users()");
    return nodes_[c.node]->users[c.port];
  }
  std::span<const Use> users(Value v) const { return users(checked(v, "users()")); }
  Value value(Output o) const { return {id_, checked(Value{id_, o}, "value()")}; }
  /// Node ids in an order where every producer precedes its consumers: the reversed finishing
  /// order of a depth-first walk that starts from the nodes in id order and takes each node's
  /// consumers in id order (Boost.Graph's topological_sort over the same edges gives the same
  /// order; the headers that build graphs stay free of Boost, ir/graph_view.hpp).
  std::vector<NodeId> topological_order() const;

private:
  /// True when a path of data edges leads from node `from` to node `to` (or from == to).
  bool reaches(NodeId from, NodeId to) const {
    std::vector<bool> seen(nodes_.size());
    std::vector<NodeId> stack{from};
    while (!stack.empty()) {
      const NodeId u = stack.back();
      stack.pop_back();
      if (u == to) return true;
      if (seen[u]) continue;
      seen[u] = true;
      for (const auto& port_users : nodes_[u]->users)
        for (const Use& use : port_users) stack.push_back(use.node);
    }
    return false;
  }

  static std::uint64_t next_id() {
    static std::atomic<std::uint64_t> counter{1};
    return counter++;
  }

  /// Reserves room for `extra` more elements, growing geometrically: reserving exactly one
  /// more per node copied the whole vector at every make(), which made building a graph
  /// quadratic in its size.
  template <class V> static void make_room(V& v, std::size_t extra) {
    if (v.size() + extra > v.capacity()) v.reserve(std::max(v.size() + extra, 2 * v.capacity()));
  }

  void clear_after_move() noexcept {
    nodes_.clear();
    parameters_.clear();
    results_.clear();
  }

  Node<T>& mutable_node(NodeId id) {
    node(id); // bounds check
    return *nodes_[id];
  }

  Output checked(Value v, std::string_view who) const {
    if (v.graph != id_)
      raise("snippets.graph.foreign_value",
            std::string(who) + ": the input value belongs to another graph (or is default-"
                               "constructed); use values returned by this graph's builder");
    if (v.output.node >= nodes_.size() || v.output.port >= nodes_[v.output.node]->outputs.size())
      raise("snippets.graph.dangling_edge", std::string(who) + ": node " +
                                                std::to_string(v.output.node) + " has no output " +
                                                std::to_string(v.output.port));
    return v.output;
  }

  std::uint64_t id_;
  std::vector<std::unique_ptr<Node<T>>> nodes_;
  std::vector<NodeId> parameters_;
  std::vector<NodeId> results_;
};

// Defined out of the class, so not inline: the heaviest members (make() instantiates the
// op variant's every alternative) are compiled once per program when snippets::prebuilt holds
// them (the extern declarations below), not in every source file that builds a graph.
template <class T> Graph<T>::~Graph() = default;

template <class T>
std::vector<Value> Graph<T>::make(op_type op, std::span<const Value> inputs, std::string name) {
  std::vector<TensorType> in_types;
  std::vector<Output> in_outputs;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    in_outputs.push_back(checked(inputs[i], name.empty() ? op_name<T>(op) : name));
    in_types.push_back(type(in_outputs.back()));
  }
  const NodeId id = static_cast<NodeId>(nodes_.size());
  if (name.empty()) name = std::string(op_name<T>(op)) + "_" + std::to_string(id);
  const std::string who = std::string(op_name<T>(op)) + " '" + name + "'";
  std::vector<TensorType> out_types = infer_types<T>(op, in_types, who);

  auto node = std::make_unique<Node<T>>();
  node->id = id;
  node->name = std::move(name);
  node->op = std::move(op);
  node->inputs = std::move(in_outputs);
  node->outputs = std::move(out_types);
  node->users.resize(node->outputs.size());
  // Reserve everything first so that nothing below can throw after the first change.
  make_room(nodes_, 1);
  for (const Output& o : node->inputs)
    make_room(nodes_[o.node]->users[o.port], node->inputs.size());
  if (is<Parameter>(node->op)) make_room(parameters_, 1);
  if (is<Result>(node->op)) make_room(results_, 1);
  std::vector<Value> values;
  values.reserve(node->outputs.size());
  for (std::uint32_t p = 0; p < node->outputs.size(); ++p) values.push_back({id_, {id, p}});

  for (std::uint32_t i = 0; i < node->inputs.size(); ++i)
    nodes_[node->inputs[i].node]->users[node->inputs[i].port].push_back({id, i});
  if (is<Parameter>(node->op)) parameters_.push_back(id);
  if (is<Result>(node->op)) results_.push_back(id);
  nodes_.push_back(std::move(node));
  return values;
}

template <class T> std::vector<NodeId> Graph<T>::topological_order() const {
  std::vector<std::vector<NodeId>> consumers(nodes_.size());
  for (NodeId v = 0; v < nodes_.size(); ++v)
    for (const Output& in : nodes_[v]->inputs) consumers[in.node].push_back(v);
  std::vector<NodeId> order;
  order.reserve(nodes_.size());
  std::vector<bool> seen(nodes_.size());
  std::vector<std::pair<NodeId, std::size_t>> stack; // node, next consumer to visit
  for (NodeId root = 0; root < nodes_.size(); ++root) {
    if (seen[root]) continue;
    seen[root] = true;
    stack.push_back({root, 0});
    while (!stack.empty()) {
      auto& [u, next] = stack.back();
      if (next == consumers[u].size()) {
        order.push_back(u);
        stack.pop_back();
      } else if (const NodeId v = consumers[u][next++]; !seen[v]) {
        seen[v] = true;
        stack.push_back({v, 0});
      }
    }
  }
  return {order.rbegin(), order.rend()};
}

#if defined(SNIPPETS_PREBUILT) && !defined(SNIPPETS_DEFINE_TEMPLATES)
extern template class Graph<ReferenceBackend>;
#endif

} // namespace snippets::ir
