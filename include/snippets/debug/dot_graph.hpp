// SPDX-License-Identifier: Apache-2.0
// snippets/debug/dot_graph.hpp: a Linear IR, a data-flow body or a tokenized model as a graph
// to draw in Graphviz DOT.
//
// DotGraph is a plain description: vertices with a label and attributes, edges in order, and
// clusters (boxes around groups of vertices).
//  - lir_graph(lir, control_flow): every expression, in order; fall-through edges, a dashed
//    back edge from each LoopEnd that repeats to the loop's first expression, and a dotted
//    "skip" edge from a LoopBegin whose loop may run zero times to the code after its LoopEnd.
//  - lir_graph(lir, data_flow): expressions without LoopBegin/LoopEnd; an edge per input from
//    its source, labelled with the register (or shape) it carries.
//  - body_graph(graph): a data-flow Graph, one vertex per node, edges labelled "%node:port".
//  - model_graph(graph): as body_graph, but each Subgraph is a cluster holding its body (its
//    Parameters and Results labelled in<i>/out<i>); model edges into a Subgraph end at the body
//    Parameter they feed, edges out of it start at the body Result that produces them.
// write_dot() writes the same text as Boost.Graph's write_graphviz with the writers below
// (debug/dot.hpp); it exists so that compile()'s dumps (SNIPPETS_DUMP_LIR formats=dot) need no
// Boost.Graph Graphviz headers (about a second of parsing per translation unit). A test pins
// that both give identical output. Clusters are written by the graph-properties writer, before
// the vertices: a vertex belongs to the cluster that names it first.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <ostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "snippets/debug/options.hpp"
#include "snippets/ir/graph.hpp"
#include "snippets/ir/lir_printer.hpp"
#include "snippets/ir/printer.hpp"
#include "snippets/passes/lir_queries.hpp"

namespace snippets::debug {

using DotAttributes = std::vector<std::pair<std::string, std::string>>;

struct DotGraph {
  struct Vertex {
    std::string label;
    DotAttributes attributes; // after the label, in this order
  };
  struct Edge {
    std::uint32_t from = 0, to = 0;
    DotAttributes attributes;
  };
  struct Cluster {
    DotAttributes attributes; // label, style, ...
    std::vector<std::uint32_t> vertices;
  };
  DotAttributes graph, node, edge; // defaults: `graph [...]`, `node [...]`, `edge [...]`
  std::vector<Vertex> vertices;
  std::vector<Edge> edges;
  std::vector<Cluster> clusters;
};

enum class LirGraphKind { control_flow, data_flow };

namespace detail {

/// A DOT string literal: quoted, with quotes, backslashes and newlines escaped.
inline std::string dot_quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out + "\"";
}

inline void write_attribute_list(std::ostream& os, const std::string* label,
                                 const DotAttributes& attrs) {
  os << '[';
  bool first = true;
  if (label) {
    os << "label=" << dot_quote(*label);
    first = false;
  }
  for (const auto& [k, v] : attrs) {
    os << (first ? "" : ", ") << k << '=' << dot_quote(v);
    first = false;
  }
  os << ']';
}

// The writers Boost's write_graphviz calls (vertex, edge, graph properties); write_dot uses the
// same ones so the two agree byte for byte.
struct VertexWriter {
  const DotGraph* g;
  template <class V> void operator()(std::ostream& os, const V& v) const {
    const auto& vx = g->vertices[static_cast<std::size_t>(v)];
    write_attribute_list(os, &vx.label, vx.attributes);
  }
};
struct EdgeWriter {
  const DotGraph* g;
  void write(std::ostream& os, std::size_t index) const {
    if (!g->edges[index].attributes.empty())
      write_attribute_list(os, nullptr, g->edges[index].attributes);
  }
};
struct GraphWriter {
  const DotGraph* g;
  void operator()(std::ostream& os) const {
    const std::pair<const char*, const DotAttributes*> parts[] = {
        {"graph", &g->graph}, {"node", &g->node}, {"edge", &g->edge}};
    for (const auto& [what, attrs] : parts)
      if (!attrs->empty()) {
        os << what << ' ';
        write_attribute_list(os, nullptr, *attrs);
        os << ";\n";
      }
    for (std::size_t c = 0; c < g->clusters.size(); ++c) {
      os << "subgraph cluster" << c << " {\n";
      for (const auto& [k, v] : g->clusters[c].attributes) os << k << '=' << dot_quote(v) << ";\n";
      for (std::uint32_t v : g->clusters[c].vertices) os << v << ";\n";
      os << "}\n";
    }
  }
};

/// Edge indices in the order Boost's adjacency_list (vecS) lists them: by source vertex, then
/// in insertion order.
inline std::vector<std::size_t> edge_order(const DotGraph& g) {
  std::vector<std::size_t> order(g.edges.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return g.edges[a].from < g.edges[b].from; });
  return order;
}

inline DotGraph styled_graph() {
  DotGraph g;
  g.node = {{"shape", "box"}, {"fontname", "monospace"}, {"fontsize", "10"}};
  g.edge = {{"fontname", "monospace"}, {"fontsize", "9"}};
  return g;
}

template <class T> std::string strip_indent(const ir::Expression<T>& e) {
  std::ostringstream os;
  ir::detail::print_expression(os, e, {});
  std::string s = os.str();
  const std::size_t colon = s.find(": ");
  const std::size_t text = s.find_first_not_of(' ', colon + 2);
  return s.substr(0, colon + 2) + s.substr(text);
}

template <class T> DotAttributes expression_style(const ir::Expression<T>& e) {
  if (std::holds_alternative<ir::LoopBegin>(e.op) || std::holds_alternative<ir::LoopEnd>(e.op))
    return {{"style", "filled"}, {"fillcolor", "lightgrey"}};
  if (std::holds_alternative<ir::Parameter>(e.op) || std::holds_alternative<ir::Result>(e.op))
    return {{"shape", "ellipse"}};
  if (std::holds_alternative<ir::Load>(e.op) || std::holds_alternative<ir::Store>(e.op) ||
      std::holds_alternative<ir::BroadcastLoad>(e.op))
    return {{"color", "blue"}};
  return {};
}

/// "Op 'name' {attributes}" and one line per output type.
template <class T> std::string node_label(const ir::Node<T>& n) {
  std::string label = cat(n.op_name(), " '", n.name, "'", ir::detail::format_attributes<T>(n.op));
  for (const auto& t : n.outputs) label.append("\n").append(t.to_string());
  return label;
}

template <class T> DotAttributes node_style(const ir::Op<T>& op) {
  if (ir::is<ir::Parameter>(op) || ir::is<ir::Result>(op)) return {{"shape", "ellipse"}};
  if (ir::is<ir::Subgraph<T>>(op)) return {{"style", "filled"}, {"fillcolor", "lightyellow"}};
  return {};
}

} // namespace detail

template <class T> DotGraph lir_graph(ir::LinearIR<T>& lir, LirGraphKind kind) {
  lir.renumber();
  DotGraph g = detail::styled_graph();
  std::vector<ir::Expression<T>*> exprs;
  for (auto& e : lir) exprs.push_back(e.get());
  if (kind == LirGraphKind::control_flow) {
    std::map<std::size_t, std::size_t> begin_of; // loop id -> LoopBegin position
    for (const auto* e : exprs)
      g.vertices.push_back({detail::strip_indent(*e), detail::expression_style(*e)});
    for (std::size_t i = 0; i + 1 < exprs.size(); ++i)
      g.edges.push_back({static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(i + 1), {}});
    for (std::size_t i = 0; i < exprs.size(); ++i) {
      if (const auto* b = std::get_if<ir::LoopBegin>(&exprs[i]->op)) begin_of[b->loop_id] = i;
      const auto* en = std::get_if<ir::LoopEnd>(&exprs[i]->op);
      if (!en || !begin_of.count(en->loop_id)) continue;
      const std::size_t b = begin_of[en->loop_id];
      const ir::LoopInfo& info = lir.loops().at(en->loop_id);
      const std::string loop = detail::cat("#", std::to_string(en->loop_id));
      if (!info.evaluate_once && b + 1 < i)
        g.edges.push_back({static_cast<std::uint32_t>(i),
                           static_cast<std::uint32_t>(b + 1),
                           {{"label", std::string("repeat ") + loop}, {"style", "dashed"}}});
      if ((info.runtime_work_amount || info.tail_of >= 0) && i + 1 < exprs.size())
        g.edges.push_back({static_cast<std::uint32_t>(b),
                           static_cast<std::uint32_t>(i + 1),
                           {{"label", std::string("skip ") + loop}, {"style", "dotted"}}});
    }
    return g;
  }
  std::map<const ir::Expression<T>*, std::uint32_t> vertex;
  for (const auto* e : exprs) {
    if (passes::is_loop_marker(*e)) continue;
    vertex[e] = static_cast<std::uint32_t>(g.vertices.size());
    DotAttributes style = detail::expression_style(*e);
    if (!e->loop_ids.empty()) {
      std::string loops;
      for (std::size_t id : e->loop_ids)
        loops.append(loops.empty() ? "#" : ",#").append(std::to_string(id));
      style.push_back({"tooltip", std::string("loops ") + loops});
    }
    g.vertices.push_back({detail::strip_indent(*e), std::move(style)});
  }
  for (const auto* e : exprs) {
    if (passes::is_loop_marker(*e)) continue;
    for (std::size_t i = 0; i < e->num_inputs(); ++i) {
      const auto& src = e->input_expr(i);
      if (!vertex.count(&src)) continue;
      const auto& d = e->in_desc(i);
      std::string label = d.reg.kind == ir::RegKind::none ? ir::detail::dims(d.shape)
                                                          : ir::detail::reg_name(d.reg).substr(1);
      g.edges.push_back({vertex[&src], vertex[e], {{"label", std::move(label)}}});
    }
  }
  return g;
}

/// A data-flow Graph (a Subgraph body, or a model with its Subgraphs as single vertices).
template <class T> DotGraph body_graph(const ir::Graph<T>& graph) {
  DotGraph g = detail::styled_graph();
  for (ir::NodeId id = 0; id < graph.size(); ++id)
    g.vertices.push_back(
        {detail::cat("%", std::to_string(id), " ", detail::node_label(graph.node(id))),
         detail::node_style<T>(graph.node(id).op)});
  for (ir::NodeId id = 0; id < graph.size(); ++id)
    for (const auto& in : graph.node(id).inputs)
      g.edges.push_back(
          {in.node,
           id,
           {{"label", detail::cat("%", std::to_string(in.node), ":", std::to_string(in.port))}}});
  return g;
}

/// A (tokenized) model with each Subgraph drawn as a cluster of its body's nodes.
template <class T> DotGraph model_graph(const ir::Graph<T>& model) {
  DotGraph g = detail::styled_graph();
  // vertex numbers: a node outside Subgraphs has one, a Subgraph's body nodes have one each
  std::vector<std::uint32_t> first(model.size());
  for (ir::NodeId id = 0; id < model.size(); ++id) {
    first[id] = static_cast<std::uint32_t>(g.vertices.size());
    const auto& n = model.node(id);
    const auto* sg = std::get_if<ir::Subgraph<T>>(&n.op);
    if (!sg) {
      g.vertices.push_back({detail::cat("%", std::to_string(id), " ", detail::node_label(n)),
                            detail::node_style<T>(n.op)});
      continue;
    }
    const ir::Graph<T>& body = *sg->body;
    std::string absorbed;
    for (const auto& a : sg->absorbed) absorbed.append(absorbed.empty() ? "" : " ").append(a);
    DotGraph::Cluster cluster{
        {{"label", detail::cat("Subgraph '", n.name, "' (%", std::to_string(id), "): ", absorbed)},
         {"style", "filled"},
         {"fillcolor", "lightyellow"}},
        {}};
    const auto& params = body.parameters();
    const auto& results = body.results();
    for (ir::NodeId b = 0; b < body.size(); ++b) {
      std::string label = detail::node_label(body.node(b));
      if (const auto p = std::find(params.begin(), params.end(), b); p != params.end())
        label = detail::cat("in", std::to_string(p - params.begin()), ": ", label);
      if (const auto r = std::find(results.begin(), results.end(), b); r != results.end())
        label = detail::cat("out", std::to_string(r - results.begin()), ": ", label);
      cluster.vertices.push_back(static_cast<std::uint32_t>(g.vertices.size()));
      g.vertices.push_back({std::move(label), detail::node_style<T>(body.node(b).op)});
    }
    g.clusters.push_back(std::move(cluster));
  }
  for (ir::NodeId id = 0; id < model.size(); ++id) { // body edges, in node order
    const auto* sg = std::get_if<ir::Subgraph<T>>(&model.node(id).op);
    for (ir::NodeId b = 0; sg && b < sg->body->size(); ++b)
      for (const auto& in : sg->body->node(b).inputs)
        g.edges.push_back({first[id] + in.node, first[id] + b, {}});
  }
  for (ir::NodeId id = 0; id < model.size(); ++id) { // model edges
    const auto& n = model.node(id);
    const auto* to_sg = std::get_if<ir::Subgraph<T>>(&n.op);
    for (std::size_t i = 0; i < n.inputs.size(); ++i) {
      const ir::Output src = n.inputs[i];
      const auto* from_sg = std::get_if<ir::Subgraph<T>>(&model.node(src.node).op);
      const std::uint32_t from =
          first[src.node] + (from_sg ? from_sg->body->results().at(src.port) : 0);
      const std::uint32_t to = first[id] + (to_sg ? to_sg->body->parameters().at(i) : 0);
      g.edges.push_back(
          {from,
           to,
           {{"label", detail::cat("%", std::to_string(src.node), ":", std::to_string(src.port))}}});
    }
  }
  return g;
}

/// Writes `g` in DOT, exactly as boost::write_graphviz does with debug/dot.hpp's writers.
inline void write_dot(std::ostream& os, const DotGraph& g) {
  os << "digraph G {\n";
  detail::GraphWriter{&g}(os);
  for (std::size_t v = 0; v < g.vertices.size(); ++v) {
    os << v;
    detail::VertexWriter{&g}(os, v);
    os << ";\n";
  }
  for (std::size_t e : detail::edge_order(g)) {
    os << g.edges[e].from << "->" << g.edges[e].to << ' ';
    detail::EdgeWriter{&g}.write(os, e);
    os << ";\n";
  }
  os << "}\n";
}

inline std::string to_dot_text(const DotGraph& g) {
  std::ostringstream os;
  write_dot(os, g);
  return os.str();
}

} // namespace snippets::debug
