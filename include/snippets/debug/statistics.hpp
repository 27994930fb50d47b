// SPDX-License-Identifier: Apache-2.0
// snippets/debug/statistics.hpp: what fusion saves, per Subgraph (the seed's
// print_statistics).
//
// For each Subgraph of a tokenized graph: the ops it absorbed, the bytes those ops would read
// and write if each ran alone (every input read and every output written once per op;
// Scalars cost nothing, they live in registers either way), the bytes the fused kernel moves
// (its inputs and outputs, once), and their ratio.
//
//   snippets::debug::print_statistics(std::cout, tokenized);
#pragma once

#include <cstdint>
#include <iomanip>
#include <ostream>
#include <string>
#include <vector>

#include "snippets/ir/graph.hpp"

namespace snippets::debug {

struct SubgraphStatistics {
  std::string name;
  std::vector<std::string> absorbed;
  std::int64_t inputs = 0, outputs = 0;
  std::int64_t unfused_bytes = 0; // memory traffic of the ops run one by one
  std::int64_t fused_bytes = 0;   // memory traffic of the fused kernel
  double ratio() const {
    return fused_bytes ? static_cast<double>(unfused_bytes) / static_cast<double>(fused_bytes) : 0;
  }
};

namespace detail {
inline std::int64_t bytes_of(const ir::TensorType& t) {
  return t.shape.is_static() ? t.shape.element_count() * static_cast<std::int64_t>(size_of(t.type))
                             : 0;
}
} // namespace detail

template <class T> std::vector<SubgraphStatistics> statistics(const ir::Graph<T>& g) {
  std::vector<SubgraphStatistics> out;
  for (ir::NodeId id = 0; id < g.size(); ++id) {
    const auto* sg = std::get_if<ir::Subgraph<T>>(&g.node(id).op);
    if (!sg) continue;
    const ir::Graph<T>& body = *sg->body;
    SubgraphStatistics s{g.node(id).name, sg->absorbed};
    s.inputs = static_cast<std::int64_t>(body.parameters().size());
    s.outputs = static_cast<std::int64_t>(body.results().size());
    for (ir::NodeId b = 0; b < body.size(); ++b) {
      const auto& n = body.node(b);
      if (ir::is<ir::Parameter>(n.op)) {
        s.fused_bytes += detail::bytes_of(n.outputs[0]);
      } else if (ir::is<ir::Result>(n.op)) {
        s.fused_bytes += detail::bytes_of(body.type(n.inputs[0]));
      } else if (!ir::is<ir::Scalar>(n.op) && !ir::is<ir::Constant>(n.op)) {
        for (const ir::Output& o : n.inputs)
          if (!ir::is<ir::Scalar>(body.node(o.node).op))
            s.unfused_bytes += detail::bytes_of(body.type(o));
        for (const auto& t : n.outputs) s.unfused_bytes += detail::bytes_of(t);
      }
    }
    out.push_back(std::move(s));
  }
  return out;
}

/// One line per Subgraph, then the totals.
template <class T> void print_statistics(std::ostream& os, const ir::Graph<T>& g) {
  const std::ios_base::fmtflags flags = os.flags(); // restored below: the caller's stream
  const std::streamsize precision = os.precision();
  std::int64_t unfused = 0, fused = 0;
  const auto stats = statistics(g);
  for (const auto& s : stats) {
    os << "Subgraph '" << s.name << "': " << s.absorbed.size() << " ops [";
    for (std::size_t i = 0; i < s.absorbed.size(); ++i) os << (i ? " " : "") << s.absorbed[i];
    os << "], " << s.inputs << " in / " << s.outputs << " out, unfused " << s.unfused_bytes
       << " B, fused " << s.fused_bytes << " B, " << std::fixed << std::setprecision(2) << s.ratio()
       << "x less traffic\n";
    unfused += s.unfused_bytes;
    fused += s.fused_bytes;
  }
  os << stats.size() << " Subgraph(s): unfused " << unfused << " B, fused " << fused << " B";
  if (fused)
    os << ", " << std::fixed << std::setprecision(2) << double(unfused) / double(fused) << "x";
  os << '\n';
  os.flags(flags);
  os.precision(precision);
}

} // namespace snippets::debug
