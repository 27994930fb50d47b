// Golden dump of the fully lowered Linear IR: pins the output of the whole default pipeline
// (domain, loads/stores, broadcast load, FMA contraction, registers, tail, pointer shifts).
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
4:   LoopBegin #1 -> [] g1
5:     Load x8 'a' (%0) -> [3,17] v1
6:     BroadcastLoad 'b' (%1) -> [3,17] v2
7:     FusedMulAdd 'Add_4' (%5 v1, %6 v2, %2 v0) -> [3,17] v1
8:     Relu 'Relu_5' (%7 v1) -> [3,17] v1
9:     Store x8 'y' (%8 v1) -> [3,17]
10:   LoopEnd #1 (%4 g1)
11:   LoopBegin #2 -> [] g1
12:     Load x1 'a' (%0) -> [3,17] v1
13:     BroadcastLoad 'b' (%1) -> [3,17] v2
14:     FusedMulAdd 'Add_4' (%12 v1, %13 v2, %2 v0) -> [3,17] v1
15:     Relu 'Relu_5' (%14 v1) -> [3,17] v1
16:     Store x1 'y' (%15 v1) -> [3,17]
17:   LoopEnd #2 (%11 g1)
18: LoopEnd #0 (%3 g0)
19: Result 'y' (%9)
loop 0: dim 0 work runtime inc 1 | arg0 +0 fin 0, arg1 +1 fin 0, arg2 +0 fin 0
loop 1: dim 1 work 16 inc 8 | arg0 +8 fin 0, arg1 +0 fin 0, arg2 +8 fin 0
loop 2: dim 1 work 1 inc 1 tail once | arg0 +0 fin 1, arg1 +0 fin 0, arg2 +0 fin 1
)");
}
