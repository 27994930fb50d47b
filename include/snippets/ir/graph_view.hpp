// SPDX-License-Identifier: Apache-2.0
// snippets/ir/graph_view.hpp: Boost.Graph's algorithms for the passes, over edge lists: the
// order of a contracted graph (the tokenizer) and vertex colouring (buffer planning). With
// debug/dot.hpp, the only file that includes Boost.Graph; Boost types never leave it. The
// headers that build and evaluate graphs do not include it (ir/graph.hpp walks its own edges).
#pragma once

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/sequential_vertex_coloring.hpp>
#include <boost/graph/topological_sort.hpp>

#include <cstdint>
#include <iterator>
#include <optional>
#include <utility>
#include <vector>

namespace snippets::ir::detail {

using BoostDigraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;

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

/// Vertices with every edge's source before its target, or nothing when there is a cycle.
inline std::optional<std::vector<std::uint32_t>> topological_order(std::size_t n,
                                                                   const EdgeList& edges) {
  try {
    return topological_order(to_boost(n, edges));
  } catch (const boost::not_a_dag&) {
    return std::nullopt;
  }
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
