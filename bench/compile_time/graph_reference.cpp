// SPDX-License-Identifier: Apache-2.0
// bench/compile_time/graph_reference.cpp, program (a) of scripts/compile-time: a user who only
// builds a graph and runs the reference interpreter (no kernel), with the headers of those two
// (neither includes Xbyak, Boost.Graph or omp.h).
#include <cstdio>

#include "snippets/ir/graph.hpp"
#include "snippets/reference/interpreter.hpp"

int main() {
  using namespace snippets;
  ir::Graph<ReferenceBackend> g;
  auto x = g.parameter(ElementType::f32, {2, 3}, "x");
  g.result(g.relu(g.add(x, g.scalar(ElementType::f32, -1.0))), "y");
  const auto y = reference::evaluate(
      g, {reference::Tensor::from_values(ElementType::f32, {2, 3}, {0, 1, 2, 3, 4, 5})});
  std::printf("%g\n", y.at(0).at(5)); // 4
  return y.at(0).at(5) == 4 ? 0 : 1;
}
