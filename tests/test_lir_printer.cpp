// SPDX-License-Identifier: Apache-2.0
// Golden dump of the fully lowered Linear IR: pins the output of the whole default pipeline
// (domain, loads/stores, broadcast load hoisted out of the inner loop, FMA contraction,
// registers, unrolled main body, masked tail, pointer shifts).
#include <doctest/doctest.h>

#include "snippets/compile.hpp"
#include "snippets/ir/lir_printer.hpp"

using namespace snippets;

TEST_CASE("the lowered LIR of relu(a*b + 1.5) with a per-row b matches the golden dump") {
  ir::Graph<x64::Traits> g;
  auto a = g.parameter(ElementType::f32, {3, 17}, "a");
  auto b = g.parameter(ElementType::f32, {3, 1}, "b");
  g.result(g.relu(g.add(g.multiply(a, b), g.scalar(ElementType::f32, 1.5))), "y");
  auto lir = lower(g, x64::Isa::avx2, {.verify = true});
  CHECK(ir::to_string(lir) == R"(domain [3,17]
0: Parameter 'a' -> [3,17]
1: Parameter 'b' -> [3,1]
2: Scalar 1.5 'Scalar_2' -> [1,1] v0
3: LoopBegin #0 -> [] g0
4:   BroadcastLoad 'b' (%1) -> [3,17] v1
5:   LoopBegin #1 -> [] g1
6:     Load x8 'a' (%0) -> [3,17] v2
7:     FusedMulAdd 'Add_4' (%6 v2, %4 v1, %2 v0) -> [3,17] v2
8:     Relu 'Relu_5' (%7 v2) -> [3,17] v2
9:     Store x8 'y' (%8 v2) -> [3,17]
10:     Load x8 @8 'a' (%0) -> [3,17] v2
11:     FusedMulAdd 'Add_4' (%10 v2, %4 v1, %2 v0) -> [3,17] v2
12:     Relu 'Relu_5' (%11 v2) -> [3,17] v2
13:     Store x8 @8 'y' (%12 v2) -> [3,17]
14:   LoopEnd #1 (%5 g1)
15:   LoopBegin #2 -> [] g1
16:     Load x1 'a' (%0) -> [3,17] v2
17:     FusedMulAdd 'Add_4' (%16 v2, %4 v1, %2 v0) -> [3,17] v2
18:     Relu 'Relu_5' (%17 v2) -> [3,17] v2
19:     Store x1 'y' (%18 v2) -> [3,17]
20:   LoopEnd #2 (%15 g1)
21: LoopEnd #0 (%3 g0)
22: Result 'y' (%9)
loop 0: dim 0 work runtime inc 1 | arg1 +1 fin 0, arg0 +0 fin 0, arg2 +0 fin 0
loop 1: dim 1 work 16 inc 16 once | arg0 +0 fin 16, arg2 +0 fin 16
loop 2: dim 1 work 1 inc 1 tail once | arg0 +0 fin 1, arg2 +0 fin 1
)");
}

TEST_CASE("the detailed LIR dump adds input shapes, use lists, loops and the frame") {
  ir::Graph<x64::Traits> g;
  auto x = g.parameter(ElementType::f32, {2, 20}, "x");
  auto b = g.parameter(ElementType::f32, {2, 1}, "b");
  g.result(g.add(x, b), "y");
  auto lir = lower(g, x64::Isa::avx2, {.unroll = 1});
  CHECK(
      ir::to_string(lir, {.detailed = true}) ==
      R"(domain [2,20] | args 2 in 1 out, spill slots 0, counter slots 0, reserved vector registers 1
0: Parameter 'x' -> [2,20] uses(%10,%5)
1: Parameter 'b' -> [2,1] uses(%3)
2: LoopBegin #0 -> [] g0 uses(%14)
3:   BroadcastLoad 'b' (%1 [2,1]) -> [2,20] v0 uses(%11.1,%6.1) loops(0)
4:   LoopBegin #1 -> [] g1 uses(%8) loops(0)
5:     Load x8 'x' (%0 [2,20]) -> [2,20] v1 uses(%6.0) loops(0,1)
6:     Add 'Add_2' (%5 [2,20] v1, %3 [2,20] v0) -> [2,20] v1 uses(%7) loops(0,1)
7:     Store x8 'y' (%6 [2,20] v1) -> [2,20] uses(%15) loops(0,1)
8:   LoopEnd #1 (%4 [] g1) loops(0)
9:   LoopBegin #2 -> [] g1 uses(%13) loops(0)
10:     Load x4 'x' (%0 [2,20]) -> [2,20] v1 uses(%11.0) loops(0,2)
11:     Add 'Add_2' (%10 [2,20] v1, %3 [2,20] v0) -> [2,20] v1 uses(%12) loops(0,2)
12:     Store x4 'y' (%11 [2,20] v1) -> [2,20] loops(0,2)
13:   LoopEnd #2 (%9 [] g1) loops(0)
14: LoopEnd #0 (%2 [] g0)
15: Result 'y' (%7 [2,20])
loop 0: dim 0 work runtime inc 1 | arg1 +1 fin 0 x4B, arg0 +0 fin 0 x4B, arg2 +0 fin 0 x4B
loop 1: dim 1 work 16 inc 8 | arg0 +8 fin 0 x4B, arg2 +8 fin 0 x4B
loop 2: dim 1 work 4 inc 4 tail once | arg0 +0 fin 4 x4B, arg2 +0 fin 4 x4B
)");
  // the line of one expression, as the disassembly annotations show it
  auto it = std::next(lir.begin(), 6);
  CHECK(ir::expression_to_string(lir, **it) == "6:     Add 'Add_2' (%5 v1, %3 v0) -> [2,20] v1");
}

TEST_CASE("spill and reload lines of the LIR dump name their stack slot") {
  ir::Graph<x64::Traits> g;
  auto y = g.parameter(ElementType::f32, {100});
  std::vector<ir::Value> c;
  for (int i = 0; i < 40; ++i) c.push_back(g.scalar(ElementType::f32, 0.5 + i * 0.03125));
  for (int i = 0; i < 40; ++i)
    y = g.maximum(g.subtract(y, c[std::size_t(i)]), c[std::size_t(39 - i)]);
  g.result(y);
  auto lir = lower(g, x64::Isa::avx2);
  REQUIRE(lir.spill_slots > 0);
  const std::string text = ir::to_string(lir);
  CHECK(text.find(": Spill slot0 ") != std::string::npos);
  CHECK(text.find("Reload slot0 ") != std::string::npos);
}
