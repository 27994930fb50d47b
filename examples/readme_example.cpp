// SPDX-License-Identifier: Apache-2.0
// The example of README.md, kept identical so CI proves it compiles and runs.
#include "snippets/snippets.hpp"
using namespace snippets;

int main() {
  ir::Graph<x64::Traits> g; // the backend traits pick the target
  auto a = g.parameter(ElementType::f32, {8, 3, 224, 224}, "a");
  auto bias = g.parameter(ElementType::f32, {3, 1, 1}, "bias");
  auto y = g.relu(g.add(g.multiply(a, g.scalar(ElementType::f32, 0.5)), bias));
  g.result(y, "y");

  CompiledKernel k = compile(g); // one kernel, best ISA of this host
  auto in = reference::Tensor::from_values(ElementType::f32, {8, 3, 224, 224}, {1.0});
  auto b = reference::Tensor::from_values(ElementType::f32, {3, 1, 1}, {-1, 0, 1});
  auto out = k.run({in, b}, {.threads = 2});  // or run(views...) on your buffers
  auto ref = reference::evaluate(g, {in, b}); // the double-precision oracle
  return out[0].at(0) == ref[0].at(0) ? 0 : 1;
}
