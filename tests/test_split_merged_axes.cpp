// SPDX-License-Identifier: Apache-2.0
// Tests of SplitMergedAxes (passes/split_merged_axes.hpp): ops between Reshapes that merge and
// split axes computed over the axes both shapes share. PyTorch's GroupNorm (Reshape,
// InstanceNorm, Reshape back, per-channel scale and shift) becomes one kernel between two
// Reshapes a Program runs as views; a Softmax over a split axis fuses with the ops after the
// Reshape back. Checked against the reference interpreter in double on both ISAs, 1 and 2
// threads; what the pass leaves alone is checked node by node.
// Tolerances: the normalizations 64 ulp or 1e-5 absolutely (test_jit_reduce_axes.cpp).
#include "jit_test_util.hpp"
#include "snippets/passes/split_merged_axes.hpp"

using namespace snippets;
using namespace snippets::jit_test;
using StepKind = Program<>::StepKind;

namespace {

/// PyTorch's GroupNorm of x [N, C, spatial...] as exported to ONNX (opset < 18): InstanceNorm
/// of x reshaped to [N, G, -1] (scale 1, shift 0 per group), reshaped back, then scale and
/// shift per channel ([C, 1, ...]).
ir::Value group_norm(Graph& g, ir::Value x, std::int64_t groups, ir::Value scale, ir::Value shift) {
  const Shape& s = g.type(x).shape;
  const auto rows = g.reshape(x, {std::int64_t(s[0]), groups, -1});
  const auto d = g.subtract(rows, g.reduce_mean(rows, {-1}, true));
  const auto var = g.reduce_mean(g.multiply(d, d), {-1}, true);
  const auto ones = g.constant(f32, Shape{groups, 1}, std::vector<double>(groups, 1.0));
  const auto zeros = g.constant(f32, Shape{groups, 1}, std::vector<double>(groups, 0.0));
  const auto n =
      g.add(g.multiply(g.divide(d, g.sqrt(g.add(var, g.scalar(f32, 1e-5)))), ones), zeros);
  const auto back = g.reshape(n, std::vector<std::int64_t>(s.begin(), s.end()));
  return g.add(g.multiply(back, scale), shift);
}

template <class Tag> std::size_t count(const Graph& g) {
  std::size_t n = 0;
  for (ir::NodeId id = 0; id < g.size(); ++id) n += ir::is<Tag>(g.node(id).op);
  return n;
}

/// Runs `model` as a Program on every ISA, 1 and 2 threads, against the reference; returns
/// the kernels of one of them and checks that every Reshape moves no bytes but those of a
/// constant or an input returned as it is.
std::size_t check_program(const Graph& model, const std::vector<Tensor>& in, Tolerance tol) {
  const auto want = reference::evaluate(model, in);
  std::size_t kernels = 0;
  for_each_isa([&](x64::Isa isa) {
    const Program<> program(model, {.compile = {.isa = isa}});
    kernels = 0;
    for (const auto& step : program.steps()) {
      INFO(step.note);
      CHECK(step.kind != StepKind::reference);
      kernels += step.kind == StepKind::kernel;
      if (!ir::is<ir::Reshape>(program.graph().node(step.node).op)) continue;
      const auto& from = program.values()[step.inputs[0]];
      const auto& to = program.values()[step.outputs[0]];
      CHECK((from.place == to.place && from.index == to.index));
    }
    for (int threads : {1, 2}) {
      const auto got = program.run(in, with_threads(threads));
      for (std::size_t i = 0; i < want.size(); ++i) CHECK(compare(got[i], want[i], tol) == "");
    }
  });
  return kernels;
}

} // namespace

TEST_CASE("split merged axes: PyTorch's GroupNorm is one kernel between two views") {
  for (const Shape& s : {Shape{2, 8, 5, 6}, Shape{1, 6, 7}, Shape{3, 4, 1, 9, 2}}) {
    for (const std::int64_t groups : {std::int64_t{2}, std::int64_t(s[1])}) {
      INFO(s << ", " << groups << " groups");
      Shape channel(std::vector<Dim>(s.rank() - 1, 1));
      channel[0] = s[1];
      Graph model;
      const auto x = model.parameter(f32, s, "x");
      const auto scale = model.parameter(f32, channel, "scale");
      const auto shift = model.constant(f32, channel, make_values(s[1], 3, Pattern::finite));
      model.result(group_norm(model, x, groups, scale, shift), "y");

      const std::vector<Tensor> in{uniform(s, 7, -3, 3), uniform(channel, 8, 0.5, 1.5)};
      // (with [1, 6, 7] and 6 groups too: its Reshapes keep the shape, but are in the middle)
      CHECK(passes::SplitMergedAxes::finds_candidates(model));
      const Graph split = passes::SplitMergedAxes{}.run(model);
      CHECK_FALSE(passes::SplitMergedAxes::finds_candidates(split)); // done once for all
      // the reductions run over the C/G * spatial elements of a group, and the tokenizer makes
      // one Subgraph of it all
      for (ir::NodeId id = 0; id < split.size(); ++id)
        if (const auto* r = std::get_if<ir::ReduceMean>(&split.node(id).op)) {
          const Shape& x = split.type(split.node(id).inputs[0]).shape;
          Dim group = 1;
          for (std::int64_t a : r->axes) group *= x[std::size_t(a < 0 ? a + x.rank() : a)];
          CHECK(group == s.element_count() / s[0] / groups);
        }
      CHECK(count<ir::Subgraph<x64::Traits>>(passes::tokenize(split)) == 1);
      CHECK(compare(reference::evaluate(split, in)[0], reference::evaluate(model, in)[0],
                    Tolerance{64, 1e-12}) == "");
      CHECK(check_program(model, in, {64, 1e-5}) == 1);
    }
  }
}

TEST_CASE("split merged axes: a Softmax over a split axis fuses with the ops after the Reshape") {
  Graph model;
  const auto x = model.parameter(f32, Shape{5, 12}, "x");
  const auto bias = model.parameter(f32, Shape{12}, "bias");
  const auto p = model.softmax(model.reshape(model.abs(x), {5, 3, 4}), -1);
  const auto sum = model.reduce_sum(p, {1}, false); // [5, 4]: the split axis reduced away
  model.result(model.add(model.reshape(p, {5, 12}), bias), "y");
  model.result(sum, "column_sums");
  const Graph split = passes::SplitMergedAxes{}.run(model);
  const std::vector<Tensor> in{uniform(Shape{5, 12}, 1, -4, 4), uniform(Shape{12}, 2, -1, 1)};
  for (std::size_t i = 0; i < 2; ++i)
    CHECK(compare(reference::evaluate(split, in)[i], reference::evaluate(model, in)[i],
                  Tolerance{4, 1e-12}) == "");
  // abs, the Softmax and the bias in one kernel; the sum over the middle axis is moved last
  CHECK(check_program(model, in, {16, 1e-6}) <= 2);
}

TEST_CASE("split merged axes: what is left alone") {
  SUBCASE("no Reshape in the middle of the region") {
    Graph g;
    const auto x = g.parameter(f32, Shape{2, 12});
    g.result(g.reduce_sum(g.exp(g.reshape(x, {2, 3, 4})), {-1}, true));
    CHECK_FALSE(passes::SplitMergedAxes::finds_candidates(g));
    CHECK(passes::SplitMergedAxes{}.run(g).size() == g.size());
  }
  SUBCASE("shapes without a common refinement") {
    Graph g;
    const auto x = g.parameter(f32, Shape{4, 6});
    g.result(g.relu(g.reshape(g.exp(g.reshape(g.abs(x), {6, 4})), {4, 6})));
    CHECK_FALSE(passes::SplitMergedAxes::finds_candidates(g));
  }
  SUBCASE("a Reshape with nothing of the region after it") {
    Graph g;
    const auto x = g.parameter(f32, Shape{2, 12});
    g.result(g.reshape(g.exp(g.reshape(x, {2, 3, 4})), {2, 12}));
    CHECK_FALSE(passes::SplitMergedAxes::finds_candidates(g));
  }
  SUBCASE("dynamic shapes") {
    Graph g;
    const auto x = g.parameter(f32, Shape{dynamic, 12});
    g.result(g.relu(g.reshape(g.exp(g.reshape(x, {-1, 3, 4})), {-1, 12})));
    CHECK_FALSE(passes::SplitMergedAxes::finds_candidates(g));
  }
  SUBCASE("a reduction over an axis that is split the other way") {
    // [6, 4] -> [2, 12]: refinement [2, 3, 4]; the sum over the first axis of [6, 4] covers
    // F's axes 0 and 1 and joins, so the Reshape back is in the middle: rewritten, values kept
    Graph g;
    const auto x = g.parameter(f32, Shape{6, 4});
    const auto s =
        g.reduce_sum(g.reshape(g.reshape(g.exp(g.reshape(x, {2, 12})), {6, 4}), {6, 4}), {0}, true);
    g.result(g.relu(s));
    const Graph split = passes::SplitMergedAxes{}.run(g);
    const std::vector<Tensor> in{uniform(Shape{6, 4}, 4, -2, 2)};
    CHECK(compare(reference::evaluate(split, in)[0], reference::evaluate(g, in)[0],
                  Tolerance{4, 1e-12}) == "");
    CHECK(count<ir::Reshape>(split) == 2);
  }
}
