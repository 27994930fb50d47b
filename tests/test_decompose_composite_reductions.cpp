// SPDX-License-Identifier: Apache-2.0
// DecomposeCompositeReductions (passes/decompose_composite_reductions.hpp): what each composite
// reduction becomes, that axes and the result's name carry over, keep_dims too unless Results
// alone read the op (then the kept form, which has the same bytes), how a mean over a
// dynamic axis counts its elements, and how the tokenizer judges the ops before the pass runs.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "snippets/compile.hpp"
#include "snippets/passes/tokenize.hpp"
#include "snippets/reference/interpreter.hpp"

using namespace snippets;
using G = ir::Graph<x64::Traits>;
constexpr auto f32 = ElementType::f32;

namespace {

/// The op names of `g`'s computing nodes, sorted, space-separated.
std::string ops_of(const G& g) {
  std::vector<std::string> names;
  for (ir::NodeId id = 0; id < g.size(); ++id) {
    const auto& op = g.node(id).op;
    if (!ir::is<ir::Parameter>(op) && !ir::is<ir::Result>(op))
      names.emplace_back(g.node(id).op_name());
  }
  std::sort(names.begin(), names.end());
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : " ") + n;
  return s;
}

const ir::Node<x64::Traits>& producer_of_result(const G& g) {
  return g.node(g.node(g.results()[0]).inputs[0].node);
}

} // namespace

TEST_CASE("DecomposeCompositeReductions writes each as a ReduceSum and elementwise ops") {
  struct Case {
    const char* name;
    std::function<ir::Value(G&, ir::Value)> make;
    const char* ops;
  };
  const Case cases[] = {
      {"mean",
       [](G& g, ir::Value x) {
         return g.make(ir::ReduceMean{{1, 2}, false}, {x}, "y")[0];
       },
       "Divide ReduceSum Scalar"},
      {"sum square",
       [](G& g, ir::Value x) {
         return g.make(ir::ReduceSumSquare{{1, 2}, false}, {x}, "y")[0];
       },
       "Multiply ReduceSum"},
      {"l1",
       [](G& g, ir::Value x) {
         return g.make(ir::ReduceL1{{1, 2}, false}, {x}, "y")[0];
       },
       "Abs ReduceSum"},
      {"l2",
       [](G& g, ir::Value x) {
         return g.make(ir::ReduceL2{{1, 2}, false}, {x}, "y")[0];
       },
       "Multiply ReduceSum Sqrt"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    G g;
    const auto x = g.parameter(f32, {2, 3, 4});
    g.result(c.make(g, x));
    const G out = passes::DecomposeCompositeReductions{}.run(g);
    CHECK(ops_of(out) == c.ops);
    for (ir::NodeId id = 0; id < out.size(); ++id)
      if (const auto* s = std::get_if<ir::ReduceSum>(&out.node(id).op)) {
        CHECK(s->axes == std::vector<std::int64_t>{1, 2});
        CHECK(s->keep_dims); // a Result alone reads it: the kept form, the same bytes
      }
    CHECK(producer_of_result(out).name == "y");
    CHECK(out.type(out.node(out.results()[0]).inputs[0]).shape == Shape{2, 1, 1});
    // the same values as the op itself
    using reference::Tensor;
    const auto in = std::vector<Tensor>{
        Tensor::from_values(f32, {2, 3, 4}, {1,  -2, 3,  -4, 5,  -6, 7,  -8, 9,  -10, 11, -12,
                                             13, 14, 15, 16, 17, 18, 19, 20, 21, 22,  23, 24})};
    const auto want = reference::evaluate(g, in);
    const auto got = reference::evaluate(out, in);
    for (std::size_t i = 0; i < 2; ++i) CHECK(got[0].at(i) == doctest::Approx(want[0].at(i)));
  }
}

TEST_CASE("DecomposeCompositeReductions drops the axes where an op reads the result") {
  G g;
  g.result(g.relu(g.reduce_mean(g.parameter(f32, {2, 3, 4}), {1, 2}, false)));
  const G out = passes::DecomposeCompositeReductions{}.run(g);
  bool seen = false;
  for (ir::NodeId id = 0; id < out.size(); ++id)
    if (const auto* s = std::get_if<ir::ReduceSum>(&out.node(id).op)) {
      seen = true;
      CHECK(!s->keep_dims);
    }
  CHECK(seen);
  CHECK(out.type(out.node(out.results()[0]).inputs[0]).shape == Shape{2});
}

TEST_CASE("DecomposeCompositeReductions divides the mean's sum by the count of its axes") {
  G g;
  g.result(g.reduce_mean(g.parameter(f32, {2, 3, 5}), {0, -1}, true));
  const G out = passes::DecomposeCompositeReductions{}.run(g);
  const auto& divide = producer_of_result(out);
  REQUIRE(ir::is<ir::Divide>(divide.op));
  const auto& n = std::get<ir::Scalar>(out.node(divide.inputs[1].node).op);
  CHECK(n.value == 10.0);
}

TEST_CASE("DecomposeCompositeReductions counts a dynamic axis with a sum of ones") {
  G g;
  g.result(g.reduce_mean(g.parameter(f32, {dynamic, dynamic}), {-1}, true));
  const G out = passes::DecomposeCompositeReductions{}.run(g);
  CHECK(ops_of(out) == "Divide Equal ReduceSum ReduceSum Scalar Select");
  using reference::Tensor;
  const std::vector<Tensor> in{
      Tensor::from_values(f32, {2, 3}, {1, std::numeric_limits<double>::quiet_NaN(), 2, 4, 5, 6})};
  const auto got = reference::evaluate(out, in);
  CHECK(std::isnan(got[0].at(0)));
  CHECK(got[0].at(1) == 5.0);
  G s; // a dynamic outer axis and a static reduced one: a Scalar count
  s.result(s.reduce_mean(s.parameter(f32, {dynamic, 6}), {-1}, true));
  CHECK(ops_of(passes::DecomposeCompositeReductions{}.run(s)) == "Divide ReduceSum Scalar");
  G m; // min and prod have reduce loops of their own
  const auto x = m.parameter(f32, {dynamic, dynamic});
  m.result(m.reduce_min(x, {-1}, true));
  m.result(m.reduce_prod(x, {-1}, true));
  CHECK(ops_of(passes::DecomposeCompositeReductions{}.run(m)) == ops_of(m));
}

TEST_CASE("the tokenizer takes a composite reduction over the innermost axis or columns") {
  G model;
  const auto x = model.parameter(f32, {4, 16}, "x");
  const auto a = model.relu(x);
  model.result(model.add(model.reduce_l2(a, {-1}, true), model.reduce_mean(a, {1}, true)), "y");
  model.result(model.reduce_mean(model.exp(x), {0}, true), "z"); // columns: another kernel
  const G t = passes::tokenize(model);
  std::vector<std::string> absorbed;
  for (ir::NodeId id = 0; id < t.size(); ++id)
    if (const auto* sg = std::get_if<ir::Subgraph<x64::Traits>>(&t.node(id).op))
      for (const auto& n : sg->absorbed) absorbed.push_back(n);
  auto taken = [&](std::string_view op) {
    return std::count_if(absorbed.begin(), absorbed.end(),
                         [&](const std::string& n) { return n.find(op) != std::string::npos; });
  };
  CHECK(taken("ReduceL2") == 1);
  CHECK(taken("ReduceMean") == 2); // over axis 1 with the L2, over axis 0 with the Exp
  CHECK(taken("Relu") == 1);
}
