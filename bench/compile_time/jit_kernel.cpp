// SPDX-License-Identifier: Apache-2.0
// bench/compile_time/jit_kernel.cpp, programs (b) and (c) of scripts/compile-time: a user who
// compiles one kernel and runs it, header-only (b) or linking snippets::prebuilt (c).
#include <cstdio>

#include "snippets/snippets.hpp"

int main() {
  using namespace snippets;
  ir::Graph<x64::Traits> g;
  auto x = g.parameter(ElementType::f32, {2, 3}, "x");
  g.result(g.relu(g.add(x, g.scalar(ElementType::f32, -1.0))), "y");
  const auto in = reference::Tensor::from_values(ElementType::f32, {2, 3}, {0, 1, 2, 3, 4, 5});
  const auto y = compile(g).run({in}).at(0);
  std::printf("%g\n", y.at(5)); // 4
  return y.at(5) == 4 ? 0 : 1;
}
