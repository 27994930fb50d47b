// SPDX-License-Identifier: Apache-2.0
// snippets/ir/graph_view.hpp: the only file that includes Boost.Graph.
//
// It gives Boost's algorithms a read-only view of any graph G that provides
//   std::size_t size() const;                       // node ids are 0..size()-1
//   node(id).inputs  -> range of {node, port}       // producer of each input
// and offers the algorithms the IR needs. Boost types never leave this header.
#pragma once

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/sequential_vertex_coloring.hpp>
#include <boost/graph/topological_sort.hpp>

#include <cstdint>
#include <iterator>
#include <optional>
#include <utility>
#include <vector>

namespace snippets::ir::detail {

using BoostDigraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;

/// Edges point from producer to consumer.
template <class G> BoostDigraph to_boost(const G& g) {
  BoostDigraph bg(g.size());
  for (std::size_t v = 0; v < g.size(); ++v)
    for (const auto& in : g.node(static_cast<std::uint32_t>(v)).inputs)
      boost::add_edge(in.node, v, bg);
  return bg;
}

/// Edges {from, to} over vertices 0..n-1.
using EdgeList = std::vector<std::pair<std::uint32_t, std::uint32_t>>;

inline BoostDigraph to_boost(std::size_t n, const EdgeList& edges) {
  BoostDigraph bg(n);
  for (const auto& [from, to] : edges) boost::add_edge(from, to, bg);
  return bg;
}

inline std::vector<std::uint32_t> topological_order(const BoostDigraph& bg) {
  std::vector<std::size_t> reversed;
  boost::topological_sort(bg, std::back_inserter(reversed));
  return {reversed.rbegin(), reversed.rend()};
}

/// Node ids with every producer before its consumers. Throws if the graph has a cycle
/// (boost::not_a_dag), which the Graph's own checks prevent.
template <class G> std::vector<std::uint32_t> topological_order(const G& g) {
  return topological_order(to_boost(g));
}

/// Vertices with every edge's source before its target, or nothing when there is a cycle.
inline std::optional<std::vector<std::uint32_t>> topological_order(std::size_t n,
                                                                   const EdgeList& edges) {
  try {
    return topological_order(to_boost(n, edges));
  } catch (const boost::not_a_dag&) {
    return std::nullopt;
  }
}

/// True when a path of data edges leads from `from` to `to` (or from == to).
template <class G> bool reaches(const G& g, std::uint32_t from, std::uint32_t to) {
  if (from == to) return true;
  const BoostDigraph bg = to_boost(g);
  std::vector<boost::default_color_type> color(g.size(), boost::white_color);
  boost::breadth_first_visit(bg, from,
                             boost::color_map(boost::make_iterator_property_map(
                                 color.begin(), boost::get(boost::vertex_index, bg))));
  return color[to] != boost::white_color;
}

/// A colour per vertex of the undirected graph on vertices 0..n-1 with `edges`, such that the
/// ends of every edge differ: Boost's greedy sequential colouring in vertex order (colours are
/// 0, 1, ...; vertices with no edges all get 0).
inline std::vector<std::size_t> colour_vertices(std::size_t n, const EdgeList& edges) {
  using Undirected = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS>;
  Undirected g(n);
  for (const auto& [a, b] : edges) boost::add_edge(a, b, g);
  std::vector<std::size_t> colour(n, 0);
  boost::sequential_vertex_coloring(
      g, boost::make_iterator_property_map(colour.begin(), boost::get(boost::vertex_index, g)));
  return colour;
}

} // namespace snippets::ir::detail
