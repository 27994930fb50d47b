// SPDX-License-Identifier: Apache-2.0
// Looking inside a kernel: the Linear IR as text and as Graphviz, the machine code with the
// expression that produced each instruction, and where the time goes.
//
// Everything here can also be switched on without touching the code, through environment
// variables (docs/debugging.md):
//   SNIPPETS_DUMP_LIR="passes=InsertLoops,AssignRegisters dir=/tmp/x formats=text,dot" ./app
//   SNIPPETS_JIT_DUMP=/tmp/code SNIPPETS_PERF_COUNTERS=cycles SNIPPETS_SEGFAULT_DETECTOR=1 ./app
#include <cstdio>
#include <iostream>
#include <vector>

#include "snippets/debug.hpp"
#include "snippets/snippets.hpp"

int main() {
  using namespace snippets;
  ir::Graph<x64::Traits> g;
  auto x = g.parameter(ElementType::f32, {64, 1000}, "x");
  auto bias = g.parameter(ElementType::f32, {64, 1}, "bias");
  g.result(g.relu(g.add(g.multiply(x, g.scalar(ElementType::f32, 0.5)), bias)), "y");

  // 1. The Linear IR after the whole pipeline, with descriptors, use lists and loops.
  auto lir = lower(g, x64::Isa::avx2);
  std::cout << ir::to_string(lir, {.detailed = true}) << '\n';

  // 2. Its control-flow graph in DOT (render with `dot -Tsvg cfg.dot -o cfg.svg`).
  const std::string cfg = debug::to_dot(lir, debug::LirGraphKind::control_flow);
  std::cout << "control-flow graph: " << cfg.size() << " bytes of DOT\n\n";

  // 3. A kernel with a code map and cycle counters; its annotated disassembly (decoded when
  //    built with snippets::zydis, raw bytes and an objdump command otherwise).
  CompileOptions opt{.isa = x64::Isa::avx2, .name = "scale_bias_relu"};
  opt.debug.counters = debug::Counters::cycles;
  const CompiledKernel kernel = compile(g, opt);
  const std::string text = debug::disassemble(kernel);
  std::cout << text.substr(0, text.find("; constant table")) << '\n';

  // 4. Run it a few times on two threads and see which loop took the time.
  std::vector<double> xs(64 * 1000);
  for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = i % 2 ? 2.0 : -1.0;
  const auto in = reference::Tensor::from_values(ElementType::f32, {64, 1000}, xs);
  const auto b = reference::Tensor::from_values(ElementType::f32, {64, 1}, {0.25});
  std::vector<reference::Tensor> out;
  for (int i = 0; i < 10; ++i) out = kernel.run({in, b}, {.threads = 2});
  debug::print_counters(std::cout, kernel);

  const bool ok = out[0].at(0) == 0.0f && out[0].at(1) == 1.25f;
  std::printf("\nresult %s\n", ok ? "matches" : "DIFFERS");
  return ok ? 0 : 1;
}
