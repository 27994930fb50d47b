// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "mock_backend.hpp"
#include "snippets/ir/graph.hpp"
#include "snippets/ir/printer.hpp"

using namespace snippets;
using namespace snippets::ir;
using snippets::test::MockBackend;

namespace {
using G = Graph<MockBackend>;
constexpr Dim Q = dynamic;
constexpr auto f32 = ElementType::f32;
constexpr auto i32 = ElementType::i32;
} // namespace

TEST_CASE("golden dump of the seed's Multiply -> Add -> Power body") {
  // seeds/000: Parameter 1 * Constant 1 -> Add Parameter 2 -> Power Constant 2 -> Result
  G g;
  const Value p1 = g.parameter(f32, {3, 2, Q, Q}, "Parameter1");
  const Value c1 = g.constant(f32, {1, 1, 1, 1}, {1.0}, "Constant1");
  const Value mul = g.multiply(p1, c1);
  const Value p2 = g.parameter(f32, {3, 2, Q, Q}, "Parameter2");
  const Value add = g.add(mul, p2);
  const Value c2 = g.constant(f32, {1, 1, 1, 1}, {2.0}, "Constant2");
  const Value pow = g.power(add, c2);
  g.result(pow, "Result");
  CHECK(to_string(g) == "%0 = Parameter 'Parameter1'() -> f32[3,2,?,?]\n"
                        "%1 = Constant 'Constant1'() {values=[1]} -> f32[1,1,1,1]\n"
                        "%2 = Multiply 'Multiply_2'(%0:0, %1:0) -> f32[3,2,?,?]\n"
                        "%3 = Parameter 'Parameter2'() -> f32[3,2,?,?]\n"
                        "%4 = Add 'Add_4'(%2:0, %3:0) -> f32[3,2,?,?]\n"
                        "%5 = Constant 'Constant2'() {values=[2]} -> f32[1,1,1,1]\n"
                        "%6 = Power 'Power_6'(%4:0, %5:0) -> f32[3,2,?,?]\n"
                        "%7 = Result 'Result'(%6:0)\n");
}

TEST_CASE("the dump of an empty graph is empty") { CHECK(to_string(G{}) == ""); }

TEST_CASE("attributes are printed in braces after the inputs, shortest exact numbers") {
  G g;
  const Value x = g.parameter(f32, {1, 4, 2, 2}, "x", Layout::channels_last(4));
  const Value b = g.parameter(f32, {1, 4, 2, 2}, "b", Layout::blocked({0, 1, 2, 3}, 1, 2));
  g.make(Clamp{-0.5, 6}, {x}, "clamp");
  g.make(Round{RoundMode::half_away_from_zero}, {x}, "round");
  g.make(Gelu{GeluApproximation::tanh}, {x}, "gelu");
  g.make(Swish{1.5}, {x}, "swish");
  g.make(Elu{0.1}, {x}, "elu");
  g.make(PowerStatic{3}, {x}, "pow");
  g.make(Convert{i32}, {x}, "cvt");
  g.make(ReduceSum{{1, -1}, false}, {x}, "rsum");
  g.make(ReduceMax{{0}, true, true}, {x}, "rmax");
  g.make(Softmax{-1}, {x}, "sm");
  g.make(Transpose{{0, 2, 3, 1}}, {x}, "tr");
  g.make(Broadcast{{2, 1, 4, 2, 2}}, {b}, "bc");
  g.make(Reshape{{1, -1}}, {b}, "rs");
  g.make(MatMul{false, true}, {x, b}, "mm");
  g.make(Opaque{"Nms", {{i32, {Q, 3}}, {f32, {Q}}}}, {x, b}, "nms");
  g.scalar(f32, 0.1, {}, "s");
  g.constant(f32, {10}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, "many");
  g.make(Exp{.nonpositive = true}, {x}, "exp");
  g.make(Exp{}, {x}, "exp_plain");
  CHECK(to_string(g) ==
        "%0 = Parameter 'x'() {layout=acdb} -> f32[1,4,2,2]\n"
        "%1 = Parameter 'b'() {layout=aBcd2b} -> f32[1,4,2,2]\n"
        "%2 = Clamp 'clamp'(%0:0) {lo=-0.5, hi=6} -> f32[1,4,2,2]\n"
        "%3 = Round 'round'(%0:0) {mode=half_away_from_zero} -> f32[1,4,2,2]\n"
        "%4 = Gelu 'gelu'(%0:0) {approximation=tanh} -> f32[1,4,2,2]\n"
        "%5 = Swish 'swish'(%0:0) {beta=1.5} -> f32[1,4,2,2]\n"
        "%6 = Elu 'elu'(%0:0) {alpha=0.1} -> f32[1,4,2,2]\n"
        "%7 = PowerStatic 'pow'(%0:0) {exponent=3} -> f32[1,4,2,2]\n"
        "%8 = Convert 'cvt'(%0:0) {to=i32} -> i32[1,4,2,2]\n"
        "%9 = ReduceSum 'rsum'(%0:0) {axes=[1,-1], keep_dims=false} -> f32[1,2]\n"
        "%10 = ReduceMax 'rmax'(%0:0) {axes=[0], keep_dims=true, ignore_nan=true} -> "
        "f32[1,4,2,2]\n"
        "%11 = Softmax 'sm'(%0:0) {axis=-1} -> f32[1,4,2,2]\n"
        "%12 = Transpose 'tr'(%0:0) {order=[0,2,3,1]} -> f32[1,2,2,4]\n"
        "%13 = Broadcast 'bc'(%1:0) {shape=[2,1,4,2,2]} -> f32[2,1,4,2,2]\n"
        "%14 = Reshape 'rs'(%1:0) {shape=[1,-1]} -> f32[1,16]\n"
        "%15 = MatMul 'mm'(%0:0, %1:0) {transpose_a=false, transpose_b=true} -> f32[1,4,2,2]\n"
        "%16 = Opaque 'nms'(%0:0, %1:0) {type_name=Nms} -> i32[?,3], f32[?]\n"
        "%17 = Scalar 's'() {value=0.1} -> f32[]\n"
        "%18 = Constant 'many'() {values=[1,2,3,4,5,6,7,8,...]} -> f32[10]\n"
        "%19 = Exp 'exp'(%0:0) {nonpositive=true} -> f32[1,4,2,2]\n"
        "%20 = Exp 'exp_plain'(%0:0) -> f32[1,4,2,2]\n");
}

TEST_CASE("a Subgraph prints its absorbed ops and its body indented") {
  auto inner = std::make_shared<G>();
  inner->result(inner->relu(inner->parameter(f32, {2}, "ip")), "ir");
  auto body = std::make_shared<G>();
  {
    const Value a = body->parameter(f32, {2}, "a");
    const Value s = body->make(Subgraph<MockBackend>{inner, {"Relu_1"}}, {a}, "nested")[0];
    body->result(body->add(s, a), "r");
  }
  G g;
  const Value x = g.parameter(f32, {2}, "x");
  const Value y = g.make(Subgraph<MockBackend>{body, {"Relu_1", "Add_3"}}, {x}, "sg")[0];
  g.mark_skipped(g.result(y, "out"));
  CHECK(to_string(g) == "%0 = Parameter 'x'() -> f32[2]\n"
                        "%1 = Subgraph 'sg'(%0:0) {absorbed=[Relu_1,Add_3]} -> f32[2]\n"
                        "    %0 = Parameter 'a'() -> f32[2]\n"
                        "    %1 = Subgraph 'nested'(%0:0) {absorbed=[Relu_1]} -> f32[2]\n"
                        "        %0 = Parameter 'ip'() -> f32[2]\n"
                        "        %1 = Relu 'Relu_1'(%0:0) -> f32[2]\n"
                        "        %2 = Result 'ir'(%1:0)\n"
                        "    %2 = Add 'Add_2'(%1:0, %0:0) -> f32[2]\n"
                        "    %3 = Result 'r'(%2:0)\n"
                        "%2 = Result 'out'(%1:0) [skipped]\n");
}

TEST_CASE("the dump follows set_input: edges are printed as they are now") {
  G g;
  const Value x = g.parameter(f32, {2}, "x");
  const Value y = g.parameter(f32, {2}, "y");
  const Value s = g.add(x, x);
  g.set_input(s.output.node, 1, y);
  CHECK(to_string(g) == "%0 = Parameter 'x'() -> f32[2]\n"
                        "%1 = Parameter 'y'() -> f32[2]\n"
                        "%2 = Add 'Add_2'(%0:0, %1:0) -> f32[2]\n");
}
