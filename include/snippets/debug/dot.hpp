// SPDX-License-Identifier: Apache-2.0
// snippets/debug/dot.hpp: Graphviz DOT of a Linear IR and of a (tokenized) model, written by
// Boost.Graph's write_graphviz. Besides ir/graph_view.hpp, this is the only file that includes
// Boost.Graph; its Graphviz header costs about a second of parsing, so nothing in
// snippets/snippets.hpp or compile.hpp includes this file (include snippets/debug.hpp).
//
//   std::ofstream("cfg.dot") << debug::to_dot(lir, debug::LirGraphKind::control_flow);
//   std::ofstream("dfg.dot") << debug::to_dot(lir, debug::LirGraphKind::data_flow);
//   std::ofstream("model.dot") << debug::to_dot(program.graph());   // Subgraphs as clusters
//   $ dot -Tsvg cfg.dot -o cfg.svg
//
// The graphs are those of debug/dot_graph.hpp (control flow: every expression with fall-through,
// repeat and skip edges; data flow: no LoopBegin/LoopEnd, edges labelled with registers; a
// model: each Subgraph a cluster holding its body, so the picture shows which model nodes went
// into which Subgraph).
#pragma once

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/graphviz.hpp>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "snippets/debug/dot_graph.hpp"

// g++ 12 at -O2 and above reports a false -Wmaybe-uninitialized inside Boost's edge iterator
// (a boost::optional it copies) when write_graphviz walks the edges.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace snippets::debug {

namespace detail {

using DotBoostGraph =
    boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, boost::no_property,
                          boost::property<boost::edge_index_t, std::size_t>>;

/// Boost's edge-writer interface over EdgeWriter: looks the edge's index up.
struct BoostEdgeWriter {
  const DotGraph* g;
  const DotBoostGraph* bg;
  template <class E> void operator()(std::ostream& os, const E& e) const {
    EdgeWriter{g}.write(os, boost::get(boost::edge_index, *bg, e));
  }
};

} // namespace detail

/// `g` in DOT through boost::write_graphviz (the same text as debug::write_dot).
inline std::string to_dot(const DotGraph& g) {
  detail::DotBoostGraph bg(g.vertices.size());
  for (std::size_t i = 0; i < g.edges.size(); ++i)
    boost::add_edge(g.edges[i].from, g.edges[i].to, i, bg);
  std::ostringstream os;
  boost::write_graphviz(os, bg, detail::VertexWriter{&g}, detail::BoostEdgeWriter{&g, &bg},
                        detail::GraphWriter{&g});
  return os.str();
}

/// The control-flow or data-flow graph of a Linear IR.
template <class T> std::string to_dot(ir::LinearIR<T>& lir, LirGraphKind kind) {
  return to_dot(lir_graph(lir, kind));
}

/// A data-flow graph; each Subgraph node is drawn as a cluster holding its body.
template <class T> std::string to_dot(const ir::Graph<T>& model) {
  return to_dot(model_graph(model));
}

} // namespace snippets::debug

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
