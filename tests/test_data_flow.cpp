// SPDX-License-Identifier: Apache-2.0
// tests/test_data_flow.cpp: the data-flow passes on a Subgraph body (golden before/after
// dumps), and layouts end to end: a body with channels-last or blocked inputs compiles to a
// kernel over the physical shapes and matches the reference on the logical tensors.
#include <doctest/doctest.h>

#include <string>

#include "error_id.hpp"
#include "jit_test_util.hpp"
#include "snippets/snippets.hpp"

using namespace snippets;
using namespace snippets::jit_test;
using ir::Value;

namespace {
constexpr Dim Q = dynamic;
constexpr auto bf16 = ElementType::bf16;

/// The seed's body: Parameter1 * Constant1 + Parameter2, to the power Constant2.
Graph seed_body() {
  Graph g;
  const Value p1 = g.parameter(f32, {3, 2, Q, Q}, "Parameter1");
  const Value c1 = g.constant(f32, {1, 1, 1, 1}, {1.0}, "Constant1");
  const Value mul = g.multiply(p1, c1);
  const Value p2 = g.parameter(f32, {3, 2, Q, Q}, "Parameter2");
  const Value add = g.add(mul, p2);
  const Value c2 = g.constant(f32, {1, 1, 1, 1}, {2.0}, "Constant2");
  g.result(g.power(add, c2), "Result");
  return g;
}

/// The tensor `logical` laid out in memory as `layout` says (padding of a block is 0).
Tensor to_physical(const Tensor& logical, const Layout& layout) {
  const Shape& shape = logical.shape();
  Tensor phys(f32, layout.physical_shape(shape));
  std::vector<std::int64_t> idx(shape.rank(), 0);
  for (std::size_t i = 0; i < logical.size(); ++i) {
    std::size_t rest = i;
    for (std::size_t a = shape.rank(); a-- > 0;) {
      idx[a] = static_cast<std::int64_t>(rest % static_cast<std::size_t>(shape[a]));
      rest /= static_cast<std::size_t>(shape[a]);
    }
    phys.set(static_cast<std::size_t>(layout.offset(shape, idx)), logical.at(i));
  }
  return phys;
}
} // namespace

TEST_CASE("data flow: the seed's Multiply/Add/Power body comes out as in its figure") {
  const Graph before = seed_body();
  const Graph after = passes::DefaultDataFlow{}.run(before);
  CHECK(ir::to_string(after) == "%0 = Parameter 'Parameter1'() -> f32[3,2,?,?]\n"
                                "%1 = Parameter 'Parameter2'() -> f32[3,2,?,?]\n"
                                "%2 = Scalar 'Constant1'() {value=1} -> f32[1,1,1,1]\n"
                                "%3 = Multiply 'Multiply_2'(%0:0, %2:0) -> f32[3,2,?,?]\n"
                                "%4 = Add 'Add_4'(%3:0, %1:0) -> f32[3,2,?,?]\n"
                                "%5 = PowerStatic 'Power_6'(%4:0) {exponent=2} -> f32[3,2,?,?]\n"
                                "%6 = Result 'Result'(%5:0)\n");
}

TEST_CASE("data flow: ConvertConstantsToScalars keeps tensor constants") {
  Graph g;
  const Value x = g.parameter(f32, {2, 3}, "x");
  const Value one = g.constant(f32, {3}, {4, 4, 4}, "same");
  const Value row = g.constant(f32, {3}, {1, 2, 3}, "row");
  g.result(g.add(g.multiply(x, one), row), "y");
  CHECK(ir::to_string(passes::ConvertConstantsToScalars{}.run(g)) ==
        "%0 = Parameter 'x'() -> f32[2,3]\n"
        "%1 = Constant 'row'() {values=[1,2,3]} -> f32[3]\n"
        "%2 = Scalar 'same'() {value=4} -> f32[1]\n"
        "%3 = Multiply 'Multiply_3'(%0:0, %2:0) -> f32[2,3]\n"
        "%4 = Add 'Add_4'(%3:0, %1:0) -> f32[2,3]\n"
        "%5 = Result 'y'(%4:0)\n");
}

TEST_CASE("data flow: a constant that broadcasts its user to its shape stays a tensor") {
  // x[2,1] * ones[1,5] is [2,5] only through the ones: a Scalar would make it [2,1] (and the
  // kernel used to write 2 of the 10 elements)
  Graph g;
  g.result(g.multiply(g.parameter(f32, {2, 1}, "x"), g.constant(f32, {1, 5}, {1.0}, "ones")));
  CHECK(ir::to_string(passes::ConvertConstantsToScalars{}.run(g)).find("Scalar") ==
        std::string::npos);
  CHECK(error_id([&] { compile(g); }) == "snippets.compile.tensor_constant");
  // a Program runs that Subgraph on the reference path, with the right values
  const std::vector<Tensor> in = {Tensor::from_values(f32, {2, 1}, {3, 4})};
  const auto got = Program<>(g).run(in)[0];
  CHECK(compare(got, reference::evaluate(g, in)[0], exact) == "");
  // the same constant is a Scalar where the output gets its shape from an input anyway
  Graph h;
  const Value scaled = h.multiply(h.parameter(f32, {2, 1}, "x"), h.constant(f32, {1, 5}, {1.0}));
  h.result(h.add(scaled, h.parameter(f32, {2, 5}, "z")));
  CHECK(ir::to_string(passes::ConvertConstantsToScalars{}.run(h)).find("Scalar") !=
        std::string::npos);
}

TEST_CASE("data flow: ConvertPowerToPowerStatic needs a Scalar exponent that does not widen") {
  Graph g;
  const Value x = g.parameter(f32, {4}, "x");
  const Value e = g.parameter(f32, {4}, "e");
  const Value s = g.scalar(f32, 3.0, {}, "three");
  const Value wide = g.scalar(f32, 2.0, {1, 1}, "wide");
  g.result(g.power(x, s), "cube");
  g.result(g.power(x, e), "tensor_exponent");
  g.result(g.power(x, wide), "widened"); // [1,4]: PowerStatic would keep [4]
  CHECK(ir::to_string(passes::ConvertPowerToPowerStatic{}.run(g)) ==
        "%0 = Parameter 'x'() -> f32[4]\n"
        "%1 = Parameter 'e'() -> f32[4]\n"
        "%2 = Scalar 'wide'() {value=2} -> f32[1,1]\n"
        "%3 = PowerStatic 'Power_4'(%0:0) {exponent=3} -> f32[4]\n"
        "%4 = Power 'Power_6'(%0:0, %1:0) -> f32[4]\n"
        "%5 = Power 'Power_8'(%0:0, %2:0) -> f32[1,4]\n"
        "%6 = Result 'cube'(%3:0)\n"
        "%7 = Result 'tensor_exponent'(%4:0)\n"
        "%8 = Result 'widened'(%5:0)\n");
}

TEST_CASE("data flow: AlignElementTypes computes bf16 in f32 and keeps the rounding") {
  Graph g;
  const Value a = g.parameter(bf16, {4}, "a");
  const Value y = g.add(a, g.scalar(bf16, 0.1, {}, "s"));
  g.result(y, "y");
  g.result(g.make(ir::Convert{f32}, {y}, "wide")[0], "w");
  const Graph after = passes::AlignElementTypes{}.run(g);
  CHECK(ir::to_string(after) == "%0 = Parameter 'a'() -> bf16[4]\n"
                                "%1 = Convert 'a/f32'(%0:0) {to=f32} -> f32[4]\n"
                                "%2 = Scalar 's'() {value=0.10009765625} -> f32[]\n"
                                "%3 = Add 'Add_2'(%1:0, %2:0) -> f32[4]\n"
                                "%4 = Convert 'wide'(%3:0) {to=f32} -> f32[4]\n"
                                "%5 = Convert 'y/bf16'(%3:0) {to=bf16} -> bf16[4]\n"
                                "%6 = Result 'y'(%5:0)\n"
                                "%7 = Result 'w'(%4:0)\n");
  // same values before and after, through the interpreter
  const Tensor in = Tensor::from_values(bf16, {4}, {1.0, -3.5, 1e-3, 100.0});
  const auto want = reference::evaluate(g, {in});
  const auto got = reference::evaluate(after, {in});
  for (int i = 0; i < 2; ++i) CHECK(compare(got[i], want[i], exact) == "");
}

TEST_CASE("data flow: Canonicalize aligns ranks and gives blocked inputs physical shapes") {
  Graph g;
  const Layout blocked = Layout::blocked({0, 1, 2, 3}, 1, 16); // nChw16c
  const Value a = g.parameter(f32, {2, 32, 3, 4}, "a", blocked);
  const Value b = g.parameter(f32, {3, 4}, "b"); // planar, 1 on C: trailing 1
  const Value c = g.parameter(f32, {1, 32, 1, 1}, "c", blocked);
  g.result(g.add(g.multiply(a, b), c), "y");
  CHECK(ir::to_string(passes::Canonicalize{}.run(g)) ==
        "%0 = Parameter 'a'() -> f32[2,2,3,4,16]\n"
        "%1 = Parameter 'b'() -> f32[1,1,3,4,1]\n"
        "%2 = Parameter 'c'() -> f32[1,2,1,1,16]\n"
        "%3 = Multiply 'Multiply_3'(%0:0, %1:0) -> f32[2,2,3,4,16]\n"
        "%4 = Add 'Add_4'(%3:0, %2:0) -> f32[2,2,3,4,16]\n"
        "%5 = Result 'y'(%4:0)\n");
}

TEST_CASE("data flow: Canonicalize with channels-last and a per-channel PRelu slope") {
  Graph g;
  const Value a = g.parameter(f32, {2, 3, 4, 5}, "a", Layout::channels_last(4));
  const Value bias = g.parameter(f32, {3, 1, 1}, "bias");
  const Value slope = g.parameter(f32, {3}, "slope");
  g.result(g.make(ir::PRelu{}, {g.add(a, bias), slope})[0], "y");
  CHECK(ir::to_string(passes::Canonicalize{}.run(g)) ==
        "%0 = Parameter 'a'() -> f32[2,4,5,3]\n"
        "%1 = Parameter 'bias'() -> f32[1,1,1,3]\n"
        "%2 = Parameter 'slope'() -> f32[1,1,1,3]\n"
        "%3 = Add 'Add_3'(%0:0, %1:0) -> f32[2,4,5,3]\n"
        "%4 = PRelu 'PRelu_4'(%3:0, %2:0) -> f32[2,4,5,3]\n"
        "%5 = Result 'y'(%4:0)\n");
}

TEST_CASE("data flow: Canonicalize rejects layouts it cannot reconcile") {
  SUBCASE("two different layouts") {
    Graph g;
    const Value a = g.parameter(f32, {1, 16, 2, 2}, "a", Layout::channels_last(4));
    const Value b = g.parameter(f32, {1, 16, 2, 2}, "b", Layout::blocked({0, 1, 2, 3}, 1, 8));
    g.result(g.add(a, b));
    CHECK(error_id([&] { passes::Canonicalize{}.run(g); }) ==
          "snippets.canonicalize.layout_conflict");
  }
  SUBCASE("a planar input whose memory order differs") {
    Graph g;
    const Value a = g.parameter(f32, {1, 16, 2, 2}, "a", Layout::channels_last(4));
    const Value b = g.parameter(f32, {1, 16, 2, 2}, "b");
    g.result(g.add(a, b));
    CHECK(error_id([&] { passes::Canonicalize{}.run(g); }) ==
          "snippets.canonicalize.layout_conflict");
  }
  SUBCASE("a planar input with channels in a blocked body") {
    Graph g;
    const Value a = g.parameter(f32, {1, 16, 2, 2}, "a", Layout::blocked({0, 1, 2, 3}, 1, 8));
    const Value b = g.parameter(f32, {1, 16, 1, 1}, "b");
    g.result(g.add(a, b));
    CHECK(error_id([&] { passes::Canonicalize{}.run(g); }) ==
          "snippets.canonicalize.layout_conflict");
  }
  SUBCASE("a blocked input broadcast along its blocked axis (its padding lanes are not channels)") {
    Graph g;
    const Layout nchw8c = Layout::blocked({0, 1, 2, 3}, 1, 8);
    const Value a = g.parameter(f32, {1, 16, 2, 3}, "a", nchw8c);
    const Value b = g.parameter(f32, {1, 1, 2, 3}, "b", nchw8c);
    g.result(g.add(a, b));
    CHECK(error_id([&] { passes::Canonicalize{}.run(g); }) ==
          "snippets.canonicalize.layout_conflict");
    Graph both; // every blocked input of extent 1 there: fine
    both.result(both.add(both.parameter(f32, {1, 1, 2, 3}, "a", nchw8c),
                         both.parameter(f32, {1, 1, 2, 3}, "b", nchw8c)));
    CHECK_NOTHROW(passes::Canonicalize{}.run(both));
  }
  SUBCASE("a layout with an op that is not elementwise") {
    Graph g;
    const Value a = g.parameter(f32, {1, 16, 2, 2}, "a", Layout::channels_last(4));
    g.result(g.make(ir::Softmax{1}, {a})[0]);
    CHECK(error_id([&] { passes::Canonicalize{}.run(g); }) ==
          "snippets.canonicalize.layout_unsupported");
  }
}

TEST_CASE("data flow: kernels over channels-last and blocked inputs match the reference") {
  struct Case {
    const char* name;
    Layout layout;
    Shape a, bias;
  };
  const Case cases[] = {
      {"nhwc", Layout::channels_last(4), {2, 19, 3, 5}, {1, 19, 1, 1}},
      {"nChw16c", Layout::blocked({0, 1, 2, 3}, 1, 16), {2, 32, 3, 5}, {1, 32, 1, 1}},
      {"nChw8c, C not a multiple",
       Layout::blocked({0, 1, 2, 3}, 1, 8),
       {1, 12, 2, 7},
       {1, 12, 1, 1}},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    Graph g;
    const Value a = g.parameter(f32, c.a, "a", c.layout);
    const Value bias = g.parameter(f32, c.bias, "bias", c.layout);
    const Value plane = g.parameter(f32, {c.a[2], c.a[3]}, "plane"); // planar, broadcast on C
    g.result(g.relu(g.add(g.multiply(a, plane), bias)), "y");
    const Tensor ta = make_tensor(c.a, 1), tb = make_tensor(c.bias, 2),
                 tp = make_tensor({c.a[2], c.a[3]}, 3);
    const Tensor want = to_physical(reference::evaluate(g, {ta, tb, tp})[0], c.layout);
    for_each_isa([&](x64::Isa isa) {
      const CompiledKernel k = compile(g, {.isa = isa});
      CHECK(k.signature().inputs[0].shape == c.layout.physical_shape(c.a));
      CHECK(k.signature().inputs[2].shape == Shape{c.a[2], c.a[3]});
      Tensor got = k.run({to_physical(ta, c.layout), to_physical(tb, c.layout), tp})[0];
      REQUIRE(got.shape() == want.shape());
      // a block's padding lanes hold whatever the kernel computed from zero padding
      CHECK(compare(got, want, approx) == "");
    });
  }
}
