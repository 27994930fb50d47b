// SPDX-License-Identifier: Apache-2.0
// Tests of reference/interpreter.hpp: the evaluation contract (inputs, outputs, element-type
// encoding, Convert, rounding of intermediates, Opaque callables, Subgraph bodies, dynamic
// dimensions, zero-size tensors) and its error ids. Expected values are worked out by hand;
// bit patterns of f16/bf16 are derived from the formats' definitions.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "error_id.hpp"
#include "snippets/reference/interpreter.hpp"

using namespace snippets;

namespace {

using Backend = ReferenceBackend;
using Graph = ir::Graph<Backend>;
using reference::Options;
using reference::Tensor;
using reference::Values;

constexpr auto f32 = ElementType::f32;
constexpr auto f16 = ElementType::f16;
constexpr auto bf16 = ElementType::bf16;
constexpr auto i32 = ElementType::i32;
constexpr auto i8 = ElementType::i8;
constexpr auto u8 = ElementType::u8;
constexpr auto boolean = ElementType::boolean;
constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double qnan = std::numeric_limits<double>::quiet_NaN();
const double two_m30 = std::ldexp(1.0, -30); // 2^-30: lost when added to 1 in f32 or f16

template <class Int> Int raw(const Tensor& t, std::size_t i) {
  Int v;
  std::memcpy(&v, static_cast<const unsigned char*>(t.data()) + i * sizeof(Int), sizeof(Int));
  return v;
}

bool same_values(const std::vector<double>& got, const std::vector<double>& want) {
  if (got.size() != want.size()) return false;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (std::isnan(want[i]) ? !std::isnan(got[i])
                            : got[i] != want[i] || std::signbit(got[i]) != std::signbit(want[i]))
      return false;
  return true;
}

} // namespace

// ---- Tensor ----

TEST_CASE("a Tensor is zero-filled, encodes its values, and one value fills it") {
  const Tensor zeros(i32, {2, 3});
  CHECK(zeros.size() == 6);
  CHECK(zeros.byte_size() == 24);
  CHECK(zeros.values().v == std::vector<double>(6, 0.0));
  const auto filled = Tensor::from_values(bf16, {3}, {1.0 / 3});
  CHECK(filled.values().v == std::vector<double>(3, 0.333984375)); // bf16 0x3EAB
  CHECK(raw<std::uint16_t>(filled, 2) == 0x3EAB);
  const auto ints = Tensor::from_values(u8, {3}, {-1, 2.9, 300});
  CHECK(ints.values().v == std::vector<double>{0, 2, 255});
  const Values v = ints.values();
  CHECK(v.type == u8);
  CHECK(v.shape == Shape{3});
  const Tensor back = Tensor::from(v);
  CHECK(std::memcmp(back.data(), ints.data(), 3) == 0);
}

TEST_CASE("a Tensor given the wrong number of values is [snippets.reference.value_count]") {
  CHECK(error_id([] {
          Tensor::from_values(f32, {2, 2}, {1, 2, 3});
        }) == "snippets.reference.value_count");
  CHECK(error_id([] { Tensor::from_values(f32, {}, std::vector<double>{}); }) ==
        "snippets.reference.value_count");
  CHECK(error_id([] { Tensor(f32, {dynamic, 2}); }) == "snippets.shape.dynamic");
}

// ---- outputs and encodings ----

TEST_CASE("evaluate returns one tensor per Result, in result order, each in its own type") {
  Graph g;
  auto x = g.parameter(f32, {3}, "x");
  g.result(g.less(x, g.scalar(f32, 0.0)), "negative");
  g.result(g.convert(x, i8), "as_i8");
  g.result(x, "x_itself");
  const auto out = reference::evaluate(g, {Tensor::from_values(f32, {3}, {-1.5, 0, 300})});
  REQUIRE(out.size() == 3);
  CHECK(out[0].type() == boolean);
  CHECK(out[0].values().v == std::vector<double>{1, 0, 0});
  CHECK(out[1].type() == i8);
  CHECK(out[1].values().v == std::vector<double>{-1, 0, 127});
  CHECK(out[2].type() == f32);
  CHECK(out[2].values().v == std::vector<double>{-1.5, 0, 300});
}

TEST_CASE("f16 inputs and outputs round to nearest even, overflow to Inf, and keep their bits") {
  Graph g;
  auto a = g.parameter(f16, {4});
  auto b = g.parameter(f16, {4});
  g.result(g.add(a, b));
  const double q = std::ldexp(1.0, -11); // half an f16 ulp at 1
  const auto out = reference::evaluate(g, {Tensor::from_values(f16, {4}, {1, 1, 65504, -2}),
                                           Tensor::from_values(f16, {4}, {q, 3 * q, 16, 0.5})});
  CHECK(out[0].type() == f16);
  CHECK(out[0].byte_size() == 8);
  CHECK(raw<std::uint16_t>(out[0], 0) == 0x3C00); // 1 + 2^-11: tie, stays 1.0
  CHECK(raw<std::uint16_t>(out[0], 1) == 0x3C02); // 1 + 3*2^-11: tie, up to 1 + 2^-9
  CHECK(raw<std::uint16_t>(out[0], 2) == 0x7C00); // 65520 rounds to +Inf
  CHECK(raw<std::uint16_t>(out[0], 3) == 0xBE00); // -1.5
  CHECK(out[0].values().v == std::vector<double>{1, 1.001953125, inf, -1.5});
}

TEST_CASE("bf16 inputs and outputs round to nearest even on 8 significant bits") {
  Graph g;
  auto a = g.parameter(bf16, {3});
  auto b = g.parameter(bf16, {3});
  g.result(g.add(a, b));
  const double q = std::ldexp(1.0, -8);
  const auto out = reference::evaluate(g, {Tensor::from_values(bf16, {3}, {1, 1, 3}),
                                           Tensor::from_values(bf16, {3}, {q, 3 * q, 0.140625})});
  CHECK(out[0].type() == bf16);
  CHECK(raw<std::uint16_t>(out[0], 0) == 0x3F80); // 1 + 2^-8: tie, stays 1.0
  CHECK(raw<std::uint16_t>(out[0], 1) == 0x3F82); // 1 + 3*2^-8: tie, up to 1 + 2^-6
  CHECK(raw<std::uint16_t>(out[0], 2) == 0x4049); // 3.140625
  CHECK(out[0].values().v == std::vector<double>{1, 1.015625, 3.140625});
}

TEST_CASE("i8, u8, i32 and boolean tensors hold their integers in their own byte layout") {
  Graph g;
  auto a = g.parameter(i8, {3});
  auto b = g.parameter(u8, {2});
  auto c = g.parameter(i32, {2});
  g.result(g.negative(a));
  g.result(g.add(b, g.constant(u8, {2}, {10, 4})));
  g.result(g.multiply(c, g.scalar(i32, -2)));
  g.result(g.greater(c, g.scalar(i32, 0)));
  const auto out = reference::evaluate(g, {Tensor::from_values(i8, {3}, {-128, 5, -1}),
                                           Tensor::from_values(u8, {2}, {250, 3}),
                                           Tensor::from_values(i32, {2}, {-1073741825, 1000000})});
  REQUIRE(out.size() == 4);
  CHECK(out[0].type() == i8);
  CHECK(out[0].byte_size() == 3);
  CHECK(raw<std::int8_t>(out[0], 0) == 127);
  CHECK(raw<std::int8_t>(out[0], 1) == -5);
  CHECK(raw<std::int8_t>(out[0], 2) == 1);
  CHECK(out[1].type() == u8);
  CHECK(raw<std::uint8_t>(out[1], 0) == 255);
  CHECK(raw<std::uint8_t>(out[1], 1) == 7);
  CHECK(out[2].type() == i32);
  CHECK(out[2].byte_size() == 8);
  CHECK(raw<std::int32_t>(out[2], 0) == 2147483647); // 2147483650 saturates
  CHECK(raw<std::int32_t>(out[2], 1) == -2000000);
  CHECK(out[3].type() == boolean);
  CHECK(raw<std::uint8_t>(out[3], 0) == 0);
  CHECK(raw<std::uint8_t>(out[3], 1) == 1);
}

// ---- Convert ----

TEST_CASE("Convert follows the documented rules between every pair of types that matter") {
  struct Case {
    ElementType from, to;
    std::vector<double> x, expected;
  };
  const double h = std::ldexp(1.0, -11), b = std::ldexp(1.0, -8);
  const std::vector<Case> cases = {
      // float -> integer: truncate toward zero, saturate, NaN -> 0
      {f32, i8, {200.75, -3.9, -200, 2.9, qnan, inf, -inf}, {127, -3, -128, 2, 0, 127, -128}},
      {f32, u8, {-5, 255.9, 256, 3.7, qnan, -0.5}, {0, 255, 255, 3, 0, 0}},
      {f32, i32, {3e9, -3e9, 2.9, -2.9, qnan}, {2147483647, -2147483648.0, 2, -2, 0}},
      {f16, i8, {-3.5, 200}, {-3, 127}},
      // float -> narrower float: nearest, ties to even, overflow to Inf
      {f32,
       f16,
       {1 + h, 1 + 3 * h, 65520, 65519, std::ldexp(1.0, -25), std::ldexp(3.0, -26), 1.0 / 3},
       {1, 1 + 4 * h, inf, 65504, 0, std::ldexp(1.0, -24), 0.333251953125}},
      {f32,
       bf16,
       {1 + b, 1 + 3 * b, 3.14159265, 3.4e38, -0.0},
       {1, 1 + 4 * b, 3.140625, inf, -0.0}},
      {bf16,
       f16,
       {65536, 1, std::ldexp(1.0, -20), std::ldexp(1.0, -30)},
       {inf, 1, std::ldexp(1.0, -20), 0}},
      // widening is exact
      {f16,
       f32,
       {0.333251953125, -65504, std::ldexp(1.0, -24)},
       {0.333251953125, -65504, std::ldexp(1.0, -24)}},
      {bf16, f32, {3.140625, -inf}, {3.140625, -inf}},
      // integer -> float: f32 keeps 24 significant bits, ties to even
      {i32, f32, {16777217, 16777219, -7}, {16777216, 16777220, -7}},
      {i32, f16, {2049, 70000}, {2048, inf}},
      // integer -> integer: saturate
      {i32, i8, {300, -300, 127, -129}, {127, -128, 127, -128}},
      {i8, u8, {-1, 127, -128}, {0, 127, 0}},
      {u8, i8, {200, 127}, {127, 127}},
      {i32, u8, {-1, 256, 255}, {0, 255, 255}},
      // boolean: any non-zero (NaN included) is true; true converts to 1
      {f32, boolean, {0, -0.0, 0.1, -2, qnan, inf}, {0, 0, 1, 1, 1, 1}},
      {i32, boolean, {0, -7}, {0, 1}},
      {boolean, f32, {1, 0}, {1, 0}},
      {boolean, i8, {1, 0}, {1, 0}},
      {boolean, bf16, {1}, {1}},
      // same type: identity
      {f32, f32, {0.5, -inf}, {0.5, -inf}},
  };
  for (const Case& c : cases) {
    INFO(std::string(to_string(c.from)), " -> ", std::string(to_string(c.to)));
    Graph g;
    const Shape s{Dim(c.x.size())};
    g.result(g.convert(g.parameter(c.from, s), c.to));
    const auto out = reference::evaluate(g, {Tensor::from_values(c.from, s, c.x)});
    CHECK(out[0].type() == c.to);
    CHECK(same_values(out[0].values().v, c.expected));
  }
}

TEST_CASE("Convert to a narrower float rounds even when intermediates keep double precision") {
  // 1 + 2^-30 survives in double, then the Convert to f16 and back loses it: the result is 0
  Graph g;
  auto x = g.parameter(f32, {1});
  auto sum = g.add(x, g.scalar(f32, two_m30));
  g.result(g.subtract(g.convert(g.convert(sum, f16), f32), x));
  const auto out = reference::evaluate(g, {Tensor::from_values(f32, {1}, {1})});
  CHECK(out[0].at(0) == 0);
}

// ---- rounding of intermediates ----

TEST_CASE("round_each_node decides whether f32 intermediates are rounded: (1 + 2^-30) - 1") {
  Graph g;
  auto x = g.parameter(f32, {1});
  g.result(g.subtract(g.add(x, g.scalar(f32, two_m30)), x));
  const std::vector<Tensor> in{Tensor::from_values(f32, {1}, {1})};
  CHECK(reference::evaluate(g, in)[0].at(0) == two_m30); // the default keeps double precision
  Options exact;
  exact.round_each_node = false;
  CHECK(reference::evaluate(g, in, exact)[0].at(0) == two_m30);
  Options rounded;
  rounded.round_each_node = true;
  CHECK(reference::evaluate(g, in, rounded)[0].at(0) == 0); // 1 + 2^-30 is 1 in f32
}

TEST_CASE("round_each_node rounds f16 intermediates to f16") {
  Graph g;
  auto x = g.parameter(f16, {2});
  g.result(g.subtract(g.add(x, g.scalar(f16, std::ldexp(1.0, -11))), x));
  const std::vector<Tensor> in{Tensor::from_values(f16, {2}, {1, 0.5})};
  // without rounding: 2^-11 twice; with: 1 + 2^-11 ties to 1 (-> 0) but 0.5 + 2^-11 is exact
  CHECK(reference::evaluate(g, in)[0].values().v ==
        std::vector<double>{std::ldexp(1.0, -11), std::ldexp(1.0, -11)});
  Options rounded;
  rounded.round_each_node = true;
  CHECK(reference::evaluate(g, in, rounded)[0].values().v ==
        std::vector<double>{0, std::ldexp(1.0, -11)});
}

TEST_CASE("Constants and Scalars hold values of their own type even without round_each_node") {
  Graph g;
  auto x = g.parameter(f32, {2});
  g.result(g.subtract(g.constant(f32, {2}, {1 + two_m30, 2}), x));
  g.result(g.subtract(g.scalar(f32, 1 + two_m30), x));
  g.result(g.add(g.constant(i32, {}, {2.7}), g.scalar(i32, -1.9)));
  const auto out = reference::evaluate(g, {Tensor::from_values(f32, {2}, {1, 1})});
  CHECK(out[0].values().v == std::vector<double>{0, 1});
  CHECK(out[1].values().v == std::vector<double>{0, 0});
  CHECK(out[2].values().v == std::vector<double>{1}); // 2 + (-1)
}

TEST_CASE("one Constant value fills the whole tensor") {
  Graph g;
  g.result(g.constant(f32, {2, 2}, {1.5}));
  const auto out = reference::evaluate(g, std::vector<Tensor>{});
  CHECK(out[0].shape() == Shape{2, 2});
  CHECK(out[0].values().v == std::vector<double>{1.5, 1.5, 1.5, 1.5});
}

TEST_CASE("evaluate_values rounds input Values to their element type first") {
  Graph g;
  auto x = g.parameter(i32, {2});
  auto y = g.parameter(f32, {1});
  g.result(g.add(x, x));
  g.result(g.subtract(y, g.scalar(f32, 1)));
  const std::vector<Values> in{{i32, Shape{2}, {2.7, -2.7}}, {f32, Shape{1}, {1 + two_m30}}};
  const auto out = reference::evaluate_values(g, in);
  CHECK(out[0].v == std::vector<double>{4, -4}); // 2 + 2, not trunc(5.4)
  CHECK(out[1].v == std::vector<double>{0});     // an f32 input cannot hold 1 + 2^-30
}

// ---- Opaque ----

TEST_CASE("an Opaque node runs the callable registered under its type name") {
  Graph g;
  auto x = g.parameter(f32, {dynamic});
  auto y = g.make(ir::Opaque{"twice", {{f32, Shape{dynamic}}}}, {x})[0];
  g.result(g.add(y, g.scalar(f32, 1)));
  Options opt;
  Shape seen;
  opt.opaque["twice"] = [&](std::span<const Values> in) {
    REQUIRE(in.size() == 1);
    seen = in[0].shape; // the callable sees the concrete shape
    Values r = in[0];
    for (double& v : r.v) v *= 2;
    return std::vector<Values>{r};
  };
  const auto out = reference::evaluate(g, {Tensor::from_values(f32, {3}, {1, -2, 0.25})}, opt);
  CHECK(seen == Shape{3});
  CHECK(out[0].values().v == std::vector<double>{3, -3, 1.5});
}

TEST_CASE("an Opaque node may have several outputs of different types") {
  Graph g;
  auto x = g.parameter(f32, {2});
  auto outs = g.make(ir::Opaque{"split", {{f32, Shape{2}}, {boolean, Shape{2}}}}, {x});
  REQUIRE(outs.size() == 2);
  g.result(outs[0]);
  g.result(outs[1]);
  Options opt;
  opt.opaque["split"] = [](std::span<const Values> in) {
    Values mag{f32, in[0].shape, {}}, neg{boolean, in[0].shape, {}};
    for (double v : in[0].v) {
      mag.v.push_back(std::fabs(v));
      neg.v.push_back(v < 0);
    }
    return std::vector<Values>{mag, neg};
  };
  const auto out = reference::evaluate(g, {Tensor::from_values(f32, {2}, {-3, 4})}, opt);
  CHECK(out[0].values().v == std::vector<double>{3, 4});
  CHECK(out[1].type() == boolean);
  CHECK(out[1].values().v == std::vector<double>{1, 0});
}

TEST_CASE("an Opaque node without a callable is [snippets.reference.opaque_without_callable]") {
  Graph g;
  g.result(g.make(ir::Opaque{"missing", {{f32, Shape{1}}}}, {g.parameter(f32, {1})})[0]);
  const std::vector<Tensor> in{Tensor::from_values(f32, {1}, {1})};
  CHECK(error_id([&] { reference::evaluate(g, in); }) ==
        "snippets.reference.opaque_without_callable");
  Options other;
  other.opaque["another"] = [](std::span<const Values> v) {
    return std::vector<Values>(v.begin(), v.end());
  };
  CHECK(error_id([&] { reference::evaluate(g, in, other); }) ==
        "snippets.reference.opaque_without_callable");
}

TEST_CASE("Opaque outputs that differ from the declared ones are "
          "[snippets.reference.opaque_bad_output]") {
  Graph g;
  g.result(g.make(ir::Opaque{"op", {{f32, Shape{dynamic, 2}}}}, {g.parameter(f32, {1, 2})})[0]);
  const std::vector<Tensor> in{Tensor::from_values(f32, {1, 2}, {1, 2})};
  struct Case {
    const char* what;
    std::vector<Values> returned;
  };
  const std::vector<Case> cases = {
      {"no output", {}},
      {"two outputs", {{f32, Shape{1, 2}, {1, 2}}, {f32, Shape{1, 2}, {1, 2}}}},
      {"wrong type", {{i32, Shape{1, 2}, {1, 2}}}},
      {"wrong static dim", {{f32, Shape{1, 3}, {1, 2, 3}}}},
      {"wrong rank", {{f32, Shape{2}, {1, 2}}}},
      {"dynamic shape", {{f32, Shape{dynamic, 2}, {1, 2}}}},
      {"value count", {{f32, Shape{2, 2}, {1, 2}}}},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    Options opt;
    opt.opaque["op"] = [&](std::span<const Values>) { return c.returned; };
    CHECK(error_id([&] { reference::evaluate(g, in, opt); }) ==
          "snippets.reference.opaque_bad_output");
  }
  Options good;
  good.opaque["op"] = [](std::span<const Values>) {
    return std::vector<Values>{{f32, Shape{3, 2}, {1, 2, 3, 4, 5, 6}}}; // '?' takes 3
  };
  CHECK(reference::evaluate(g, in, good)[0].shape() == Shape{3, 2});
}

// ---- input checks ----

TEST_CASE("a wrong number of inputs is [snippets.reference.input_count]") {
  Graph g;
  g.result(g.add(g.parameter(f32, {1}), g.parameter(f32, {1})));
  const auto one = Tensor::from_values(f32, {1}, {1});
  CHECK(error_id([&] { reference::evaluate(g, {one}); }) == "snippets.reference.input_count");
  CHECK(error_id([&] {
          reference::evaluate(g, {one, one, one});
        }) == "snippets.reference.input_count");
  CHECK(error_id([&] { reference::evaluate(g, {one, one}); }) == "no error");
}

TEST_CASE("an input of another element type is [snippets.reference.input_type]") {
  Graph g;
  g.result(g.relu(g.parameter(f32, {2})));
  CHECK(error_id([&] {
          reference::evaluate(g, {Tensor::from_values(i32, {2}, {1, 2})});
        }) == "snippets.reference.input_type");
  CHECK(error_id([&] {
          reference::evaluate(g, {Tensor::from_values(f16, {2}, {1, 2})});
        }) == "snippets.reference.input_type");
}

TEST_CASE("an input whose shape does not fit the Parameter is [snippets.reference.input_shape]") {
  Graph g;
  g.result(g.relu(g.parameter(f32, {2, dynamic})));
  CHECK(error_id([&] {
          reference::evaluate(g, {Tensor(f32, {3, 4})});
        }) == "snippets.reference.input_shape");
  CHECK(error_id([&] { reference::evaluate(g, {Tensor(f32, {2})}); }) ==
        "snippets.reference.input_shape");
  CHECK(error_id([&] {
          reference::evaluate(g, {Tensor(f32, {1, 2, 4})});
        }) == "snippets.reference.input_shape");
  const std::vector<Values> short_values{{f32, Shape{2, 2}, {1, 2, 3}}};
  CHECK(error_id([&] { reference::evaluate_values(g, short_values); }) ==
        "snippets.reference.input_shape");
  const std::vector<Values> dynamic_values{{f32, Shape{2, dynamic}, {1, 2}}};
  CHECK(error_id([&] { reference::evaluate_values(g, dynamic_values); }) ==
        "snippets.reference.input_shape");
}

// ---- dynamic dimensions ----

TEST_CASE("dynamic Parameter dims take a different concrete extent on every call") {
  Graph g;
  auto x = g.parameter(f32, {dynamic, 3});
  auto b = g.parameter(f32, {3});
  g.result(g.reduce_sum(g.multiply(x, b), {1}, false));
  const auto weights = Tensor::from_values(f32, {3}, {1, 10, 100});
  auto out = reference::evaluate(g, {Tensor::from_values(f32, {1, 3}, {1, 2, 3}), weights});
  CHECK(out[0].shape() == Shape{1});
  CHECK(out[0].values().v == std::vector<double>{321});
  out = reference::evaluate(
      g, {Tensor::from_values(f32, {3, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1}), weights});
  CHECK(out[0].shape() == Shape{3});
  CHECK(out[0].values().v == std::vector<double>{1, 10, 100});
  out = reference::evaluate(g, {Tensor(f32, {0, 3}), weights});
  CHECK(out[0].shape() == Shape{0});
}

TEST_CASE("dynamic dims of 1 broadcast at run time like static ones") {
  Graph g;
  auto a = g.parameter(f32, {dynamic});
  auto b = g.parameter(f32, {dynamic});
  g.result(g.add(a, b));
  const auto out = reference::evaluate(
      g, {Tensor::from_values(f32, {1}, {10}), Tensor::from_values(f32, {3}, {1, 2, 3})});
  CHECK(out[0].shape() == Shape{3});
  CHECK(out[0].values().v == std::vector<double>{11, 12, 13});
}

TEST_CASE("dynamic dims that fail to broadcast at run time are "
          "[snippets.shape.not_broadcastable]") {
  Graph g;
  auto a = g.parameter(f32, {dynamic});
  auto b = g.parameter(f32, {dynamic});
  auto c = g.parameter(f32, {3});
  g.result(g.add(a, b));
  g.result(g.multiply(a, c));
  const auto three = Tensor::from_values(f32, {3}, {1, 2, 3});
  CHECK(error_id([&] {
          reference::evaluate(g, {Tensor::from_values(f32, {2}, {1, 2}), three, three});
        }) == "snippets.shape.not_broadcastable");
  CHECK(error_id([&] {
          reference::evaluate(g, {three, Tensor::from_values(f32, {4}, {1, 2, 3, 4}), three});
        }) == "snippets.shape.not_broadcastable");
  CHECK(error_id([&] { reference::evaluate(g, {three, three, three}); }) == "no error");
}

// ---- Subgraph ----

TEST_CASE("a Subgraph node is evaluated through its body, output by output") {
  auto body = std::make_shared<Graph>();
  {
    auto a = body->parameter(f32, {dynamic});
    auto b = body->parameter(f32, {dynamic});
    body->result(body->add(body->multiply(a, b), a));
    body->result(body->relu(body->subtract(a, b)));
  }
  Graph g;
  auto x = g.parameter(f32, {3});
  auto y = g.parameter(f32, {3});
  auto sub = g.make(ir::Subgraph<Backend>{body, {"mul", "add", "sub", "relu"}}, {x, y});
  REQUIRE(sub.size() == 2);
  g.result(g.negative(sub[0]));
  g.result(sub[1]);
  const auto out = reference::evaluate(
      g, {Tensor::from_values(f32, {3}, {1, 2, -3}), Tensor::from_values(f32, {3}, {4, 0.5, 2})});
  // a*b + a = {5, 3, -9}; relu(a - b) = {0, 1.5, 0}
  CHECK(out[0].values().v == std::vector<double>{-5, -3, 9});
  CHECK(out[1].values().v == std::vector<double>{0, 1.5, 0});
}

TEST_CASE("Subgraphs nest, and their outputs are stored as their element type") {
  auto inner = std::make_shared<Graph>();
  inner->result(inner->add(inner->parameter(f32, {1}), inner->scalar(f32, two_m30)));
  auto outer = std::make_shared<Graph>();
  {
    auto p = outer->parameter(f32, {1});
    outer->result(outer->make(ir::Subgraph<Backend>{inner, {}}, {p})[0]);
  }
  Graph g;
  auto x = g.parameter(f32, {1});
  auto s = g.make(ir::Subgraph<Backend>{outer, {}}, {x})[0];
  g.result(g.subtract(s, x));
  // like a kernel, a Subgraph writes 1 + 2^-30 to an f32 output, which holds 1
  const auto out = reference::evaluate(g, {Tensor::from_values(f32, {1}, {1})});
  CHECK(out[0].at(0) == 0);
}

// ---- zero-size tensors ----

TEST_CASE("a graph on zero-size tensors, with an empty Constant, evaluates to empty outputs") {
  Graph g;
  auto x = g.parameter(f32, {2, 0});
  auto c = g.constant(f32, {2, 0}, {});
  auto y = g.exp(g.add(x, c));
  g.result(g.convert(y, i8));
  g.result(g.greater(y, g.constant(f32, {1}, {0})));
  const auto out = reference::evaluate(g, {Tensor(f32, {2, 0})});
  REQUIRE(out.size() == 2);
  CHECK(out[0].type() == i8);
  CHECK(out[0].shape() == Shape{2, 0});
  CHECK(out[0].size() == 0);
  CHECK(out[1].type() == boolean);
  CHECK(out[1].shape() == Shape{2, 0});
  CHECK(out[1].byte_size() == 0);
}

// ---- known issues in ir/ (see the comments) ----

// BUG in ir/type_inference.hpp: infer_types returns Broadcast::shape verbatim, so a target with a
// '?' keeps it even on concrete inputs, and the interpreter cannot size the output
// ([snippets.shape.dynamic] "element count of [?,3] is unknown"). The extent should come from
// the input (here 2), as for every other op whose inference "resolves dynamic dims".
TEST_CASE("Broadcast to a target with a dynamic dim takes that extent from the input" *
          doctest::skip()) {
  Graph g;
  g.result(g.broadcast(g.parameter(f32, {dynamic, 1}), {dynamic, 3}));
  const auto out = reference::evaluate(g, {Tensor::from_values(f32, {2, 1}, {1, 2})});
  CHECK(out[0].shape() == Shape{2, 3});
  CHECK(out[0].values().v == std::vector<double>{1, 1, 1, 2, 2, 2});
}

// BUG in ir/type_inference.hpp (PRelu): the per-channel test is `s[0] == x[1] || s[0] ==
// dynamic` but not `x[1] == dynamic`, so a static slope [3] on x [1,?,2,2] falls through to
// NUMPY broadcasting of [3] against the last dim 2 and the graph cannot even be built
// ([snippets.shape.not_broadcastable]).
TEST_CASE("PRelu with a per-channel slope accepts a dynamic channel dimension" * doctest::skip()) {
  Graph g;
  auto x = g.parameter(f32, {1, dynamic, 1, 2});
  auto s = g.parameter(f32, {3});
  g.result(g.prelu(x, s));
  const auto out =
      reference::evaluate(g, {Tensor::from_values(f32, {1, 3, 1, 2}, {-2, 1, -4, -8, 3, -1}),
                              Tensor::from_values(f32, {3}, {0.5, 0.25, 2})});
  CHECK(out[0].values().v == std::vector<double>{-1, 1, -1, -2, 3, -2});
}
