// snippets/ir/printer.hpp: a stable text dump of a Graph, one node per line, used by golden
// tests and debug output. Nodes appear in id order (ids are stable and edges name them):
//   %2 = Add 'sum'(%0:0, %1:0) -> f32[1,3,?,?]
#pragma once

#include <sstream>
#include <string>

#include "snippets/ir/graph.hpp"

namespace snippets::ir {

template <class T> std::string to_string(const Graph<T> &g) {
  std::ostringstream os;
  for (NodeId id = 0; id < g.size(); ++id) {
    const Node<T> &n = g.node(id);
    os << '%' << id << " = " << n.op_name() << " '" << n.name << "'(";
    for (std::size_t i = 0; i < n.inputs.size(); ++i)
      os << (i ? ", " : "") << '%' << n.inputs[i].node << ':' << n.inputs[i].port;
    os << ')';
    for (std::size_t i = 0; i < n.outputs.size(); ++i)
      os << (i ? ", " : " -> ") << n.outputs[i].to_string();
    if (n.skipped_by_plugin) os << " [skipped]";
    os << '\n';
  }
  return os.str();
}

} // namespace snippets::ir
