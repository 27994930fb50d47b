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
