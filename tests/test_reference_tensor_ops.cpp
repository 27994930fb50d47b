// SPDX-License-Identifier: Apache-2.0
// Tests of reference/tensor_ops.hpp: NUMPY broadcasting, Select, PRelu's slope rules,
// reductions, Softmax, Transpose, Broadcast, Reshape, Slice and MatMul, checked element by element
// against values worked out by hand (indices are written out, never computed by the code under
// test). Results are f32 unless stated; values that are not exact in f32 are compared with
// their f32-rounded literal, and the double-precision helpers with a relative 1e-12.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "snippets/reference/interpreter.hpp"

using namespace snippets;

namespace {

using Backend = ReferenceBackend;
using Graph = ir::Graph<Backend>;
using reference::Tensor;
using reference::Values;

constexpr auto f32 = ElementType::f32;
constexpr auto i32 = ElementType::i32;
constexpr auto i8 = ElementType::i8;
constexpr auto boolean = ElementType::boolean;
constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double qnan = std::numeric_limits<double>::quiet_NaN();

double as_f32(double x) { return double(static_cast<float>(x)); }

std::vector<double> iota(std::size_t n) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = double(i);
  return v;
}

/// Evaluates `g` and returns its single output as Values.
Values run(const Graph& g, std::initializer_list<Tensor> inputs) {
  const auto out = reference::evaluate(g, inputs);
  REQUIRE(out.size() == 1);
  return out[0].values();
}

/// y = op(a, b) for f32 tensors of the given shapes and values.
Values binary(const ir::Op<Backend>& op, const Shape& sa, std::vector<double> a, const Shape& sb,
              std::vector<double> b) {
  Graph g;
  auto pa = g.parameter(f32, sa);
  auto pb = g.parameter(f32, sb);
  g.result(g.make(op, {pa, pb})[0]);
  return run(g, {Tensor::from_values(f32, sa, a), Tensor::from_values(f32, sb, b)});
}

bool all_nan_where_expected(const std::vector<double>& got, const std::vector<double>& want) {
  if (got.size() != want.size()) return false;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (std::isnan(want[i]) ? !std::isnan(got[i]) : got[i] != want[i]) return false;
  return true;
}

} // namespace

// ---- broadcasting helpers ----

TEST_CASE("strides_of gives planar element strides and broadcast_strides zeroes stretched axes") {
  CHECK(reference::detail::strides_of(Shape{2, 3, 4}) == std::vector<std::int64_t>{12, 4, 1});
  CHECK(reference::detail::strides_of(Shape{}).empty());
  // [3,1] read as [2,3,4]: the missing leading axis and the size-1 axis have stride 0
  CHECK(reference::detail::broadcast_strides(Shape{3, 1}, Shape{2, 3, 4}) ==
        std::vector<std::int64_t>{0, 1, 0});
  CHECK(reference::detail::broadcast_strides(Shape{}, Shape{2, 2}) ==
        std::vector<std::int64_t>{0, 0});
}

TEST_CASE("for_each_broadcast visits the output in planar order with each input's offset") {
  // out [2,3]; a [2,1] has offsets 0,0,0,1,1,1; b [3] has offsets 0,1,2,0,1,2
  const std::vector<Shape> inputs{Shape{2, 1}, Shape{3}};
  std::vector<std::size_t> lin;
  std::vector<std::int64_t> a, b;
  reference::detail::for_each_broadcast(Shape{2, 3}, inputs,
                                        [&](std::size_t i, std::span<const std::int64_t> offs) {
                                          lin.push_back(i);
                                          a.push_back(offs[0]);
                                          b.push_back(offs[1]);
                                        });
  CHECK(lin == std::vector<std::size_t>{0, 1, 2, 3, 4, 5});
  CHECK(a == std::vector<std::int64_t>{0, 0, 0, 1, 1, 1});
  CHECK(b == std::vector<std::int64_t>{0, 1, 2, 0, 1, 2});
}

TEST_CASE("for_each_broadcast calls once for a rank-0 output and never for an empty one") {
  int calls = 0;
  const std::vector<Shape> scalar{Shape{}};
  reference::detail::for_each_broadcast(
      Shape{}, scalar, [&](std::size_t, std::span<const std::int64_t>) { ++calls; });
  CHECK(calls == 1);
  const std::vector<Shape> empty{Shape{0, 3}};
  reference::detail::for_each_broadcast(
      Shape{0, 3}, empty, [&](std::size_t, std::span<const std::int64_t>) { ++calls; });
  CHECK(calls == 1);
}

// ---- NUMPY broadcasting through binary ops ----

TEST_CASE("a rank-0 scalar broadcasts against every element, on either side") {
  auto y = binary(ir::Add{}, {2, 2}, {1, 2, 3, 4}, {}, {10});
  CHECK(y.shape == Shape{2, 2});
  CHECK(y.v == std::vector<double>{11, 12, 13, 14});
  y = binary(ir::Subtract{}, {}, {10}, {2, 2}, {1, 2, 3, 4});
  CHECK(y.shape == Shape{2, 2});
  CHECK(y.v == std::vector<double>{9, 8, 7, 6});
  y = binary(ir::Multiply{}, {}, {3}, {}, {-2});
  CHECK(y.shape == Shape{});
  CHECK(y.v == std::vector<double>{-6});
}

TEST_CASE("a per-channel [1,C,1,1] operand broadcasts over N, H and W of [N,C,H,W]") {
  // x[n][c][0][w] = 6n + 2c + w; plus 100 * (c + 1)
  const auto y = binary(ir::Add{}, {2, 3, 1, 2}, iota(12), {1, 3, 1, 1}, {100, 200, 300});
  CHECK(y.shape == Shape{2, 3, 1, 2});
  CHECK(y.v == std::vector<double>{100, 101, 202, 203, 304, 305, 106, 107, 208, 209, 310, 311});
  const auto z = binary(ir::Subtract{}, {1, 3, 1, 1}, {100, 200, 300}, {2, 3, 1, 2}, iota(12));
  CHECK(z.v == std::vector<double>{100, 99, 198, 197, 296, 295, 94, 93, 192, 191, 290, 289});
}

TEST_CASE("an innermost 1 repeats a value along the last axis") {
  const auto y = binary(ir::Multiply{}, {2, 3}, iota(6), {2, 1}, {10, 100});
  CHECK(y.shape == Shape{2, 3});
  CHECK(y.v == std::vector<double>{0, 10, 20, 300, 400, 500});
}

TEST_CASE("an outer 1 repeats a row along the first axis") {
  const auto y = binary(ir::Add{}, {2, 3}, iota(6), {1, 3}, {10, 20, 30});
  CHECK(y.v == std::vector<double>{10, 21, 32, 13, 24, 35});
}

TEST_CASE("a lower-rank operand is aligned on the right ([3] against [2,3])") {
  const auto y = binary(ir::Subtract{}, {3}, {10, 20, 30}, {2, 3}, iota(6));
  CHECK(y.shape == Shape{2, 3});
  CHECK(y.v == std::vector<double>{10, 19, 28, 7, 16, 25});
}

TEST_CASE("both operands broadcast at once ([2,1] against [1,3] gives [2,3])") {
  auto y = binary(ir::Multiply{}, {2, 1}, {1, 2}, {1, 3}, {1, 10, 100});
  CHECK(y.shape == Shape{2, 3});
  CHECK(y.v == std::vector<double>{1, 10, 100, 2, 20, 200});
  y = binary(ir::Subtract{}, {2, 1}, {1, 2}, {1, 3}, {1, 10, 100});
  CHECK(y.v == std::vector<double>{0, -9, -99, 1, -8, -98});
  // rank mismatch and both sides: [3,1,2] against [4,1] gives [3,4,2]
  y = binary(ir::Add{}, {3, 1, 2}, {0, 1, 10, 11, 20, 21}, {4, 1}, {0, 100, 200, 300});
  CHECK(y.shape == Shape{3, 4, 2});
  CHECK(y.v == std::vector<double>{0,   1,   100, 101, 200, 201, 300, 301, 10,  11,  110, 111,
                                   210, 211, 310, 311, 20,  21,  120, 121, 220, 221, 320, 321});
}

TEST_CASE("Select picks then where cond is true, else elsewhere, broadcasting all three") {
  Graph g;
  auto cond = g.parameter(boolean, {2, 1});
  auto then_ = g.parameter(f32, {3});
  auto else_ = g.parameter(f32, {});
  g.result(g.select(cond, then_, else_));
  const auto y =
      run(g, {Tensor::from_values(boolean, {2, 1}, {1, 0}),
              Tensor::from_values(f32, {3}, {1, qnan, 3}), Tensor::from_values(f32, {}, {9})});
  CHECK(y.type == f32);
  CHECK(y.shape == Shape{2, 3});
  CHECK(all_nan_where_expected(y.v, {1, qnan, 3, 9, 9, 9}));
}

TEST_CASE("Select keeps the value type of its branches (i8)") {
  Graph g;
  auto cond = g.parameter(boolean, {3});
  auto then_ = g.parameter(i8, {2, 1});
  auto else_ = g.parameter(i8, {1});
  g.result(g.select(cond, then_, else_));
  const auto y =
      run(g, {Tensor::from_values(boolean, {3}, {1, 0, 1}),
              Tensor::from_values(i8, {2, 1}, {5, -5}), Tensor::from_values(i8, {1}, {0})});
  CHECK(y.type == i8);
  CHECK(y.shape == Shape{2, 3});
  CHECK(y.v == std::vector<double>{5, 0, 5, -5, 0, -5});
}

// ---- PRelu's slope ----

TEST_CASE("PRelu with a rank-1 slope of length C scales channel c of [N,C,H,W] by slope[c]") {
  // x [1,3,1,2]: channel 0 {-2, 1}, channel 1 {-4, -8}, channel 2 {3, -1}
  const auto y = binary(ir::PRelu{}, {1, 3, 1, 2}, {-2, 1, -4, -8, 3, -1}, {3}, {0.5, 0.25, 2});
  CHECK(y.shape == Shape{1, 3, 1, 2});
  CHECK(y.v == std::vector<double>{-1, 1, -1, -2, 3, -2});
}

TEST_CASE("PRelu's per-channel rule wins when C also equals the last dimension") {
  // x [1,2,1,2] all -4, slope {0.5, 0.25}: per channel gives -2,-2,-1,-1 (NUMPY: -2,-1,-2,-1)
  const auto y = binary(ir::PRelu{}, {1, 2, 1, 2}, {-4}, {2}, {0.5, 0.25});
  CHECK(y.v == std::vector<double>{-2, -2, -1, -1});
}

TEST_CASE("PRelu with any other slope broadcasts it by NUMPY rules") {
  // rank-1 slope that matches the last axis, not axis 1: x [2,3,2]
  auto y = binary(ir::PRelu{}, {2, 3, 2}, {-4}, {2}, {0.5, 0.25});
  CHECK(y.shape == Shape{2, 3, 2});
  CHECK(y.v == std::vector<double>{-2, -1, -2, -1, -2, -1, -2, -1, -2, -1, -2, -1});
  // rank-0 slope
  y = binary(ir::PRelu{}, {2, 2}, {-4, 4, -1, 0}, {}, {0.25});
  CHECK(y.v == std::vector<double>{-1, 4, -0.25, 0});
  // [1,3,1] slope on [2,3,2]
  y = binary(ir::PRelu{}, {2, 3, 2}, {-8, 8, -8, 8, -8, 8, -4, 4, -4, 4, -4, 4}, {1, 3, 1},
             {0.5, 0.25, 0.125});
  CHECK(y.v == std::vector<double>{-4, 8, -2, 8, -1, 8, -2, 4, -1, 4, -0.5, 4});
}

// ---- Broadcast and Reshape ----

TEST_CASE("Broadcast repeats an input into the target shape by NUMPY rules") {
  struct Case {
    Shape in, target;
    std::vector<double> x, expected;
  };
  const std::vector<Case> cases = {
      {{3}, {2, 3}, {1, 2, 3}, {1, 2, 3, 1, 2, 3}},
      {{2, 1}, {2, 3}, {1, 2}, {1, 1, 1, 2, 2, 2}},
      {{}, {2, 2}, {7}, {7, 7, 7, 7}},
      {{1, 2}, {2, 2, 2}, {4, 5}, {4, 5, 4, 5, 4, 5, 4, 5}},
      {{2, 3}, {2, 3}, {1, 2, 3, 4, 5, 6}, {1, 2, 3, 4, 5, 6}},
  };
  for (const Case& c : cases) {
    INFO(c.in.to_string(), " -> ", c.target.to_string());
    Graph g;
    g.result(g.broadcast(g.parameter(f32, c.in), c.target));
    const auto y = run(g, {Tensor::from_values(f32, c.in, c.x)});
    CHECK(y.shape == c.target);
    CHECK(y.v == c.expected);
  }
}

TEST_CASE("Reshape keeps planar order and infers a -1 extent") {
  struct Case {
    std::vector<std::int64_t> target;
    Shape expected;
  };
  const std::vector<Case> cases = {
      {{3, -1}, {3, 2}}, {{-1}, {6}}, {{1, -1, 2}, {1, 3, 2}}, {{6, 1}, {6, 1}}};
  for (const Case& c : cases) {
    INFO(c.expected.to_string());
    Graph g;
    g.result(g.reshape(g.parameter(f32, {2, 3}), c.target));
    const auto y = run(g, {Tensor::from_values(f32, {2, 3}, iota(6))});
    CHECK(y.shape == c.expected);
    CHECK(y.v == iota(6));
  }
}

TEST_CASE("Slice keeps the elements from start to start + length (excluded) of one axis, any type, "
          "empty parts too") {
  Graph g;
  const auto x = g.parameter(i8, {2, 3, 4});
  g.result(g.slice(x, -1, 1, 2)); // innermost: rows of 4 -> [1, 2]
  g.result(g.slice(x, 1, 2, 1));  // the middle axis
  g.result(g.slice(x, 0, 1, 1));  // the outermost
  g.result(g.slice(x, 2, 4, 0));  // empty
  const auto out = reference::evaluate(g, {Tensor::from_values(i8, {2, 3, 4}, iota(24))});
  REQUIRE(out.size() == 4);
  CHECK(out[0].type() == i8);
  CHECK(out[0].values().shape == Shape{2, 3, 2});
  CHECK(out[0].values().v == std::vector<double>{1, 2, 5, 6, 9, 10, 13, 14, 17, 18, 21, 22});
  CHECK(out[1].values().shape == Shape{2, 1, 4});
  CHECK(out[1].values().v == std::vector<double>{8, 9, 10, 11, 20, 21, 22, 23});
  CHECK(out[2].values().shape == Shape{1, 3, 4});
  CHECK(out[2].values().v == std::vector<double>{12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23});
  CHECK(out[3].values().shape == Shape{2, 3, 0});
  CHECK(out[3].size() == 0);
}

// ---- reductions ----

TEST_CASE("ReduceSum over one axis, keeping or dropping it") {
  // x[a][b][c] = 6a + 2b + c on [2,3,2]
  Graph g;
  auto x = g.parameter(f32, {2, 3, 2});
  g.result(g.reduce_sum(x, {0}, true));
  g.result(g.reduce_sum(x, {1}, false));
  g.result(g.reduce_sum(x, {-1}, false));
  const auto out = reference::evaluate(g, {Tensor::from_values(f32, {2, 3, 2}, iota(12))});
  REQUIRE(out.size() == 3);
  CHECK(out[0].shape() == Shape{1, 3, 2});
  CHECK(out[0].values().v == std::vector<double>{6, 8, 10, 12, 14, 16});
  CHECK(out[1].shape() == Shape{2, 2});
  CHECK(out[1].values().v == std::vector<double>{6, 9, 24, 27});
  CHECK(out[2].shape() == Shape{2, 3});
  CHECK(out[2].values().v == std::vector<double>{1, 5, 9, 13, 17, 21});
}

TEST_CASE("ReduceSum over several axes, including all of them and a repeated axis") {
  Graph g;
  auto x = g.parameter(f32, {2, 3, 2});
  g.result(g.reduce_sum(x, {0, 2}, true));
  g.result(g.reduce_sum(x, {0, 1, 2}, false));
  g.result(g.reduce_sum(x, {2, -3}, false));
  g.result(g.reduce_sum(x, {1, -2}, true)); // the same axis twice reduces it once
  const auto out = reference::evaluate(g, {Tensor::from_values(f32, {2, 3, 2}, iota(12))});
  CHECK(out[0].shape() == Shape{1, 3, 1});
  CHECK(out[0].values().v == std::vector<double>{14, 22, 30});
  CHECK(out[1].shape() == Shape{});
  CHECK(out[1].values().v == std::vector<double>{66});
  CHECK(out[2].shape() == Shape{3});
  CHECK(out[2].values().v == std::vector<double>{14, 22, 30});
  CHECK(out[3].shape() == Shape{2, 1, 2});
  CHECK(out[3].values().v == std::vector<double>{6, 9, 24, 27});
}

TEST_CASE("ReduceMax over one and several axes, with negative axes") {
  Graph g;
  auto x = g.parameter(f32, {2, 3, 2});
  g.result(g.reduce_max(x, {1}, true));
  g.result(g.reduce_max(x, {-3, -1}, false));
  const auto out = reference::evaluate(
      g, {Tensor::from_values(f32, {2, 3, 2}, {0, 1, 2, 3, 4, 5, -6, -7, -8, -9, -10, -11})});
  CHECK(out[0].shape() == Shape{2, 1, 2});
  CHECK(out[0].values().v == std::vector<double>{4, 5, -6, -7});
  CHECK(out[1].shape() == Shape{3});
  CHECK(out[1].values().v == std::vector<double>{1, 3, 5});
}

TEST_CASE("ReduceMax propagates NaN wherever it sits and handles infinities") {
  Graph g;
  auto x = g.parameter(f32, {5, 3});
  g.result(g.reduce_max(x, {1}, false));
  const auto y = run(g, {Tensor::from_values(f32, {5, 3},
                                             {qnan, 1, 2,       //
                                              1, qnan, 2,       //
                                              1, 2, qnan,       //
                                              -inf, -inf, -inf, //
                                              -inf, inf, 0})});
  CHECK(all_nan_where_expected(y.v, {qnan, qnan, qnan, -inf, inf}));
}

TEST_CASE("ReduceMax with ignore_nan leaves NaN out: -inf when nothing is left") {
  Graph g;
  auto x = g.parameter(f32, {4, 3});
  g.result(g.make(ir::ReduceMax{{1}, false, true}, {x})[0]);
  const auto y = run(g, {Tensor::from_values(f32, {4, 3},
                                             {qnan, 1, 2,       //
                                              1, qnan, -inf,    //
                                              qnan, qnan, qnan, //
                                              inf, qnan, 0})});
  CHECK(y.v == std::vector<double>{2, 1, -inf, inf});
}

TEST_CASE("ReduceMin, ReduceProd, ReduceMean, ReduceSumSquare, ReduceL1 and ReduceL2 values") {
  // x[a][b][c] = 6a + 2b + c - 5 on [2,3,2]: -5 .. 6
  Graph g;
  auto x = g.parameter(f32, {2, 3, 2});
  g.result(g.reduce_min(x, {1}, true));
  g.result(g.reduce_prod(x, {-1}, false));
  g.result(g.reduce_mean(x, {0, 2}, false));
  g.result(g.reduce_sum_square(x, {0, 1, 2}, false));
  g.result(g.reduce_l1(x, {2}, true));
  g.result(g.reduce_l2(x, {-1}, false));
  std::vector<double> v = iota(12);
  for (double& e : v) e -= 5;
  const auto out = reference::evaluate(g, {Tensor::from_values(f32, {2, 3, 2}, v)});
  REQUIRE(out.size() == 6);
  CHECK(out[0].shape() == Shape{2, 1, 2});
  CHECK(out[0].values().v == std::vector<double>{-5, -4, 1, 2});
  CHECK(out[1].shape() == Shape{2, 3});
  CHECK(out[1].values().v == std::vector<double>{20, 6, 0, 2, 12, 30});
  CHECK(out[2].shape() == Shape{3}); // (-5 - 4 + 1 + 2) / 4, ...
  CHECK(out[2].values().v == std::vector<double>{-1.5, 0.5, 2.5});
  CHECK(out[3].shape() == Shape{});
  CHECK(out[3].values().v == std::vector<double>{146}); // 25+16+9+4+1+0+1+4+9+16+25+36
  CHECK(out[4].shape() == Shape{2, 3, 1});
  CHECK(out[4].values().v == std::vector<double>{9, 5, 1, 3, 7, 11});
  CHECK(out[5].shape() == Shape{2, 3});
  CHECK(out[5].values().v[2] == 1.0); // sqrt(1 + 0)
  CHECK(out[5].values().v[0] == doctest::Approx(std::sqrt(41.0)));
}

TEST_CASE("reductions over no elements: 0, 1, +inf, -inf and NaN (the mean's 0 / 0)") {
  Graph g;
  auto x = g.parameter(f32, {2, 0});
  g.result(g.reduce_sum(x, {1}, false));
  g.result(g.reduce_prod(x, {1}, false));
  g.result(g.reduce_min(x, {1}, false));
  g.result(g.reduce_max(x, {1}, false));
  g.result(g.reduce_mean(x, {1}, false));
  g.result(g.reduce_sum_square(x, {1}, false));
  g.result(g.reduce_l1(x, {1}, false));
  g.result(g.reduce_l2(x, {1}, false));
  const auto out = reference::evaluate(g, {Tensor(f32, Shape{2, 0})});
  const double want[] = {0, 1, inf, -inf, qnan, 0, 0, 0};
  for (std::size_t o = 0; o < 8; ++o) {
    INFO("output " << o);
    CHECK(out[o].shape() == Shape{2});
    CHECK(all_nan_where_expected(out[o].values().v, {want[o], want[o]}));
  }
}

TEST_CASE("ReduceMin propagates NaN; ReduceProd and the sums take NaN and infinities along") {
  Graph g;
  auto x = g.parameter(f32, {4, 3});
  g.result(g.reduce_min(x, {1}, false));
  g.result(g.reduce_prod(x, {1}, false));
  g.result(g.reduce_l2(x, {1}, false));
  const auto out = reference::evaluate(g, {Tensor::from_values(f32, {4, 3},
                                                               {qnan, 1, 2, //
                                                                1, -inf, 2, //
                                                                0, inf, 1,  //
                                                                -2, 3, -0.5})});
  CHECK(all_nan_where_expected(out[0].values().v, {qnan, -inf, 0, -2}));
  CHECK(all_nan_where_expected(out[1].values().v, {qnan, -inf, qnan, 3}));
  CHECK(
      all_nan_where_expected(out[2].values().v, {qnan, inf, inf, double(float(std::sqrt(13.25)))}));
}

TEST_CASE("ReduceMean of an integer type truncates its quotient, as Convert does") {
  Graph g;
  auto x = g.parameter(i8, {2, 3});
  g.result(g.reduce_mean(x, {1}, false));
  const auto out = reference::evaluate(g, {Tensor::from_values(i8, {2, 3}, {1, 2, 2, -1, -2, -2})});
  CHECK(out[0].values().v == std::vector<double>{1, -1}); // 5/3 and -5/3
}

TEST_CASE("integer reductions accumulate exactly and saturate once, at the end") {
  Graph g;
  auto x = g.parameter(i8, {2, 3});
  g.result(g.reduce_sum(x, {1}, false));
  g.result(g.reduce_max(x, {0}, false));
  const auto out =
      reference::evaluate(g, {Tensor::from_values(i8, {2, 3}, {100, 100, -100, 100, 100, 100})});
  CHECK(out[0].type() == i8);
  CHECK(out[0].values().v == std::vector<double>{100, 127}); // 100 + 100 - 100; 300 saturates
  CHECK(out[1].values().v == std::vector<double>{100, 100, 100});
}

// ---- Softmax ----

TEST_CASE("Softmax over the last axis matches e^x / sum e^x") {
  Graph g;
  g.result(g.softmax(g.parameter(f32, {2, 3}), -1));
  const auto y = run(g, {Tensor::from_values(f32, {2, 3}, {1, 2, 3, 0, 0, 0})});
  CHECK(y.v[0] == as_f32(0.090030573170380457998));
  CHECK(y.v[1] == as_f32(0.24472847105479765247));
  CHECK(y.v[2] == as_f32(0.66524095577482188953));
  CHECK(y.v[3] == as_f32(1.0 / 3.0));
  CHECK(y.v[4] == as_f32(1.0 / 3.0));
  CHECK(y.v[5] == as_f32(1.0 / 3.0));
}

TEST_CASE("Softmax does not overflow on large inputs and gives -inf entries weight 0") {
  Graph g;
  g.result(g.softmax(g.parameter(f32, {4, 3}), 1));
  const auto y = run(g, {Tensor::from_values(f32, {4, 3},
                                             {1000, 1001, -inf,    //
                                              0, -inf, -inf,       //
                                              -1000, -1001, -1000, //
                                              88, 89, 88})});
  // 1/(1+e), e/(1+e), 0
  CHECK(y.v[0] == as_f32(0.26894142136999512075));
  CHECK(y.v[1] == as_f32(0.73105857863000487925));
  CHECK(y.v[2] == 0);
  CHECK(y.v[3] == 1);
  CHECK(y.v[4] == 0);
  CHECK(y.v[5] == 0);
  // 1/(2+e^-1) = e/(2e+1) and e^-1/(2+e^-1) = 1/(2e+1)
  CHECK(y.v[6] == as_f32(0.42231879825151819660));
  CHECK(y.v[7] == as_f32(0.15536240349696360679));
  CHECK(y.v[8] == as_f32(0.42231879825151819660));
  // 1/(2+e), e/(2+e), 1/(2+e): e^89 alone overflows f32 but the shifted form does not
  CHECK(y.v[9] == as_f32(0.21194155761708544507));
  CHECK(y.v[10] == as_f32(0.57611688476582910986));
  CHECK(y.v[11] == as_f32(0.21194155761708544507));
}

TEST_CASE("a NaN makes its own Softmax row NaN and leaves the other rows alone") {
  Graph g;
  g.result(g.softmax(g.parameter(f32, {2, 2}), -1));
  const auto y = run(g, {Tensor::from_values(f32, {2, 2}, {1, qnan, 0, 0})});
  CHECK(all_nan_where_expected(y.v, {qnan, qnan, 0.5, 0.5}));
}

TEST_CASE("Softmax over a middle axis normalises each column independently") {
  // x [2,3,2]; the axis-1 columns (a, c) are: (0,0) {1,2,3}, (0,1) {0,0,0},
  // (1,0) {1000,1001,1000}, (1,1) {-inf,5,-inf}
  const std::vector<double> x{1, 0, 2, 0, 3, 0, 1000, -inf, 1001, 5, 1000, -inf};
  for (std::int64_t axis : {1, -2}) {
    INFO("axis ", axis);
    Graph g;
    g.result(g.softmax(g.parameter(f32, {2, 3, 2}), axis));
    const auto y = run(g, {Tensor::from_values(f32, {2, 3, 2}, x)});
    const double third = as_f32(1.0 / 3.0);
    const double p = as_f32(0.21194155761708544507), q = as_f32(0.57611688476582910986);
    CHECK(y.v == std::vector<double>{as_f32(0.090030573170380457998), third,
                                     as_f32(0.24472847105479765247), third,
                                     as_f32(0.66524095577482188953), third, p, 0, q, 1, p, 0});
  }
}

TEST_CASE("Softmax over axis 0 normalises down the columns") {
  Graph g;
  g.result(g.softmax(g.parameter(f32, {2, 2}), 0));
  const auto y = run(g, {Tensor::from_values(f32, {2, 2}, {0, 2, 1, 4})});
  CHECK(y.v == std::vector<double>{as_f32(0.26894142136999512075), as_f32(0.11920292202211755594),
                                   as_f32(0.73105857863000487925), as_f32(0.88079707797788244406)});
}

TEST_CASE("detail::softmax is accurate in double") {
  const Values x{f32, Shape{3}, {1000, 1001, 1002}};
  const Values y = reference::detail::softmax(x, 0);
  const double expected[] = {0.090030573170380457998, 0.24472847105479765247,
                             0.66524095577482188953};
  for (int i = 0; i < 3; ++i) CHECK(std::fabs(y.v[i] - expected[i]) <= 1e-12 * expected[i]);
}

// ---- Transpose ----

TEST_CASE("Transpose [0,2,3,1] moves channels last, element by element") {
  // x [2,3,2,2] with x[n][c][h][w] = 12n + 4c + 2h + w; y[n][h][w][c] = x[n][c][h][w]
  Graph g;
  g.result(g.transpose(g.parameter(f32, {2, 3, 2, 2}), {0, 2, 3, 1}));
  const auto y = run(g, {Tensor::from_values(f32, {2, 3, 2, 2}, iota(24))});
  CHECK(y.shape == Shape{2, 2, 2, 3});
  CHECK(y.v == std::vector<double>{0,  4,  8,  1,  5,  9,  2,  6,  10, 3,  7,  11,
                                   12, 16, 20, 13, 17, 21, 14, 18, 22, 15, 19, 23});
  // spot checks written as y[n][h][w][c] == x[n][c][h][w]
  auto y_at = [&](int n, int h, int w, int c) {
    return y.v[std::size_t(12 * n + 6 * h + 3 * w + c)];
  };
  CHECK(y_at(1, 0, 1, 2) == 12 + 8 + 0 + 1);
  CHECK(y_at(0, 1, 0, 1) == 0 + 4 + 2 + 0);
  CHECK(y_at(1, 1, 1, 0) == 12 + 0 + 2 + 1);
}

TEST_CASE("Transpose [1,0] is the matrix transpose and [2,0,1] rotates axes") {
  Graph g;
  auto x = g.parameter(f32, {2, 3});
  g.result(g.transpose(x, {1, 0}));
  auto out = reference::evaluate(g, {Tensor::from_values(f32, {2, 3}, iota(6))});
  CHECK(out[0].shape() == Shape{3, 2});
  CHECK(out[0].values().v == std::vector<double>{0, 3, 1, 4, 2, 5});
  // x [2,3,2], y = x.transpose(2,0,1) of shape [2,2,3]: y[k][i][j] = x[i][j][k] = 6i + 2j + k
  Graph h;
  h.result(h.transpose(h.parameter(f32, {2, 3, 2}), {2, 0, 1}));
  out = reference::evaluate(h, {Tensor::from_values(f32, {2, 3, 2}, iota(12))});
  CHECK(out[0].shape() == Shape{2, 2, 3});
  CHECK(out[0].values().v == std::vector<double>{0, 2, 4, 6, 8, 10, 1, 3, 5, 7, 9, 11});
}

// ---- MatMul ----

TEST_CASE("MatMul of 2x3 and 3x2 matrices, with every combination of transposes") {
  const std::vector<double> a{1, 2, 3, 4, 5, 6}, at{1, 4, 2, 5, 3, 6};
  const std::vector<double> b{7, 8, 9, 10, 11, 12}, bt{7, 9, 11, 8, 10, 12};
  const std::vector<double> expected{58, 64, 139, 154};
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      INFO("transpose_a ", ta, " transpose_b ", tb);
      Graph g;
      auto pa = g.parameter(f32, ta ? Shape{3, 2} : Shape{2, 3});
      auto pb = g.parameter(f32, tb ? Shape{2, 3} : Shape{3, 2});
      g.result(g.matmul(pa, pb, ta, tb));
      const auto y =
          run(g, {Tensor::from_values(f32, ta ? Shape{3, 2} : Shape{2, 3}, ta ? at : a),
                  Tensor::from_values(f32, tb ? Shape{2, 3} : Shape{3, 2}, tb ? bt : b)});
      CHECK(y.shape == Shape{2, 2});
      CHECK(y.v == expected);
    }
}

TEST_CASE("MatMul broadcasts batch dimensions ([2,1,2,3] @ [3,2] -> [2,1,2,2])") {
  Graph g;
  auto a = g.parameter(f32, {2, 1, 2, 3});
  auto b = g.parameter(f32, {3, 2});
  g.result(g.matmul(a, b));
  const auto y =
      run(g, {Tensor::from_values(f32, {2, 1, 2, 3}, {1, 2, 3, 4, 5, 6, -1, 0, 1, 2, 2, 2}),
              Tensor::from_values(f32, {3, 2}, {7, 8, 9, 10, 11, 12})});
  CHECK(y.shape == Shape{2, 1, 2, 2});
  CHECK(y.v == std::vector<double>{58, 64, 139, 154, 4, 4, 54, 60});
}

TEST_CASE("MatMul broadcasts batch dimensions on both sides") {
  // a [2,1,1,2] rows a0 = {1,2}, a1 = {3,4}; b [3,2,1] columns {1,1}, {1,0}, {0,1}
  Graph g;
  auto a = g.parameter(f32, {2, 1, 1, 2});
  auto b = g.parameter(f32, {3, 2, 1});
  g.result(g.matmul(a, b));
  const auto y = run(g, {Tensor::from_values(f32, {2, 1, 1, 2}, {1, 2, 3, 4}),
                         Tensor::from_values(f32, {3, 2, 1}, {1, 1, 1, 0, 0, 1})});
  CHECK(y.shape == Shape{2, 3, 1, 1});
  CHECK(y.v == std::vector<double>{3, 1, 2, 7, 3, 4});
}

TEST_CASE("MatMul with transposes and a batch: [2,3,2]^T @ [2,3]^T") {
  // a[0] = {1,4;2,5;3,6} (the transpose of {1,2,3;4,5,6}), a[1] = its negation;
  // b = {7,9,11;8,10,12} (the transpose of {7,8;9,10;11,12})
  Graph g;
  auto a = g.parameter(f32, {2, 3, 2});
  auto b = g.parameter(f32, {2, 3});
  g.result(g.matmul(a, b, true, true));
  const auto y =
      run(g, {Tensor::from_values(f32, {2, 3, 2}, {1, 4, 2, 5, 3, 6, -1, -4, -2, -5, -3, -6}),
              Tensor::from_values(f32, {2, 3}, {7, 9, 11, 8, 10, 12})});
  CHECK(y.shape == Shape{2, 2, 2});
  CHECK(y.v == std::vector<double>{58, 64, 139, 154, -58, -64, -139, -154});
}

TEST_CASE("MatMul promotes rank-1 operands, drops the added dimension, ignores their transposes") {
  Graph g;
  auto v3 = g.parameter(f32, {3});
  auto m32 = g.parameter(f32, {3, 2});
  auto m23 = g.parameter(f32, {2, 3});
  auto w3 = g.parameter(f32, {3});
  g.result(g.matmul(v3, m32));              // [3] @ [3,2] -> [2]
  g.result(g.matmul(m23, w3));              // [2,3] @ [3] -> [2]
  g.result(g.matmul(v3, w3));               // [3] @ [3] -> []
  g.result(g.matmul(m32, w3, true, true));  // [3,2]^T @ [3] -> [2]; w3 is not transposed
  g.result(g.matmul(v3, m32, true, false)); // a rank-1 a is not transposed either
  const auto out = reference::evaluate(g, {Tensor::from_values(f32, {3}, {1, 2, 3}),
                                           Tensor::from_values(f32, {3, 2}, {7, 8, 9, 10, 11, 12}),
                                           Tensor::from_values(f32, {2, 3}, {1, 2, 3, 4, 5, 6}),
                                           Tensor::from_values(f32, {3}, {1, 0, -1})});
  CHECK(out[0].shape() == Shape{2});
  CHECK(out[0].values().v == std::vector<double>{58, 64});
  CHECK(out[1].shape() == Shape{2});
  CHECK(out[1].values().v == std::vector<double>{-2, -2});
  CHECK(out[2].shape() == Shape{});
  CHECK(out[2].values().v == std::vector<double>{-2});
  // {7,9,11; 8,10,12} @ {1,0,-1}
  CHECK(out[3].shape() == Shape{2});
  CHECK(out[3].values().v == std::vector<double>{-4, -4});
  CHECK(out[4].shape() == Shape{2});
  CHECK(out[4].values().v == std::vector<double>{58, 64});
}

TEST_CASE("MatMul on i32 accumulates exactly and saturates the result") {
  Graph g;
  auto a = g.parameter(i32, {1, 2});
  auto b = g.parameter(i32, {2, 2});
  g.result(g.matmul(a, b));
  const auto y = run(g, {Tensor::from_values(i32, {1, 2}, {65536, 65536}),
                         Tensor::from_values(i32, {2, 2}, {3, 1, -1, 1})});
  CHECK(y.type == i32);
  CHECK(y.v == std::vector<double>{131072, 131072});
  const auto z = run(g, {Tensor::from_values(i32, {1, 2}, {65536, 65536}),
                         Tensor::from_values(i32, {2, 2}, {32768, 1, 32768, 1})});
  CHECK(z.v == std::vector<double>{2147483647, 131072}); // 2^32 saturates
}

// ---- zero-size tensors ----

TEST_CASE("ops on tensors with a zero dimension give empty outputs of the right shape") {
  Graph g;
  auto x = g.parameter(f32, {0, 3});
  g.result(g.add(x, g.parameter(f32, {3})));
  g.result(g.reduce_sum(x, {0}, true));
  g.result(g.reduce_sum(x, {1}, true));
  g.result(g.softmax(x, -1));
  g.result(g.transpose(x, {1, 0}));
  g.result(g.reshape(x, {-1, 3}));
  g.result(g.broadcast(g.parameter(f32, {1, 3}), {0, 3}));
  g.result(g.relu(x));
  const auto out = reference::evaluate(g, {Tensor::from_values(f32, {0, 3}, std::vector<double>{}),
                                           Tensor::from_values(f32, {3}, {1, 2, 3}),
                                           Tensor::from_values(f32, {1, 3}, {1, 2, 3})});
  REQUIRE(out.size() == 8);
  CHECK(out[0].shape() == Shape{0, 3});
  CHECK(out[0].size() == 0);
  CHECK(out[1].shape() == Shape{1, 3});
  CHECK(out[1].values().v == std::vector<double>{0, 0, 0}); // an empty sum is 0
  CHECK(out[2].shape() == Shape{0, 1});
  CHECK(out[3].shape() == Shape{0, 3});
  CHECK(out[4].shape() == Shape{3, 0});
  CHECK(out[5].shape() == Shape{0, 3});
  CHECK(out[6].shape() == Shape{0, 3});
  CHECK(out[7].shape() == Shape{0, 3});
  for (std::size_t i : {0, 2, 3, 4, 5, 6, 7}) CHECK(out[i].byte_size() == 0);
}

TEST_CASE("MatMul with an empty inner dimension is all zeros; an empty outer one is empty") {
  Graph g;
  auto a = g.parameter(f32, {2, 0});
  auto b = g.parameter(f32, {0, 3});
  g.result(g.matmul(a, b));
  g.result(g.matmul(b, g.parameter(f32, {3, 2})));
  const auto out = reference::evaluate(
      g, {Tensor(f32, {2, 0}), Tensor(f32, {0, 3}), Tensor::from_values(f32, {3, 2}, iota(6))});
  CHECK(out[0].shape() == Shape{2, 3});
  CHECK(out[0].values().v == std::vector<double>(6, 0.0));
  CHECK(out[1].shape() == Shape{0, 2});
  CHECK(out[1].size() == 0);
}
