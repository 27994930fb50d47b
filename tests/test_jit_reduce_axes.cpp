// SPDX-License-Identifier: Apache-2.0
// JIT tests of reductions over several trailing axes and without keep_dims
// (passes/decompose_softmax.hpp: row_axes, passes/optimize_domain.hpp: the row walked as one
// dimension, the tokenizer's rule for them) against the reference interpreter in double, on
// both ISAs, 1 to 3 threads: every reduction over the last two or three axes and over all of
// them, LayerNorm over the last two axes, InstanceNorm and GroupNorm as one kernel each (in a
// Program too), reduced outputs without keep_dims, and what stays refused. Over one axis:
// test_jit_reduce.cpp and test_jit_reduce_ops.cpp. Over other axes, in a Program
// (passes/move_reduced_axes_last.hpp): the last two test cases, the second with the ops around
// it as one kernel; the first also has Softmax over other axes.
//
// Tolerances as test_jit_reduce_ops.cpp: the sums within 16 ulp or 1e-6 per element times the
// largest term, products of n factors 2n ulp, min and max exact; the normalizations 64 ulp or
// 1e-5 absolutely (a deviation divided by a root of a mean).
#include "error_id.hpp"
#include "jit_test_util.hpp"
#include "snippets/passes/move_reduced_axes_last.hpp"

using namespace snippets;
using namespace snippets::jit_test;

namespace {

/// ONNX MeanVarianceNormalization's function body over `axes` of x.
ir::Value mvn(Graph& g, ir::Value x, const std::vector<std::int64_t>& axes) {
  const auto mean = g.reduce_mean(x, axes, true);
  const auto var = g.subtract(g.reduce_mean(g.multiply(x, x), axes, true), g.multiply(mean, mean));
  return g.divide(g.subtract(x, mean), g.add(g.sqrt(var), g.scalar(f32, 1e-9)));
}

/// Runs `model` as a Program on both ISAs, 1 and 2 threads, against the reference (every
/// Subgraph a kernel, no step on the reference path); returns its Subgraphs.
int check_program_isas(const Graph& model, const std::vector<Tensor>& in, Tolerance tol) {
  const auto want = reference::evaluate(model, in);
  int subgraphs = 0;
  for_each_isa([&](x64::Isa isa) {
    const Program<> program(model, {.compile = {.isa = isa}});
    check_steps_are_kernels(program);
    for (const auto& s : program.steps()) CHECK(s.kind != Program<>::StepKind::reference);
    subgraphs = 0;
    for (ir::NodeId id = 0; id < program.graph().size(); ++id)
      subgraphs += ir::is<ir::Subgraph<x64::Traits>>(program.graph().node(id).op);
    for (int threads : {1, 2}) {
      const auto got = program.run(in, with_threads(threads));
      for (std::size_t i = 0; i < want.size(); ++i) CHECK(compare(got[i], want[i], tol) == "");
    }
  });
  return subgraphs;
}

/// Runs `model` as a Program (every Subgraph a kernel, no step on the reference path) and
/// compares it with the reference.
void check_program(const Graph& model, const std::vector<Tensor>& in, Tolerance tol) {
  const auto want = reference::evaluate(model, in);
  const Program<> program(model);
  check_steps_are_kernels(program);
  for (const auto& s : program.steps()) CHECK(s.kind != Program<>::StepKind::reference);
  for (int threads : {1, 2}) {
    const auto got = program.run(in, with_threads(threads));
    for (std::size_t i = 0; i < want.size(); ++i) CHECK(compare(got[i], want[i], tol) == "");
  }
}

} // namespace

TEST_CASE("reduce axes: every reduction over the last two, three and all axes") {
  std::uint64_t seed = 1;
  for (const Shape& s : {Shape{3, 4, 5}, Shape{2, 3, 17, 9}, Shape{5, 1, 8, 16}, Shape{7, 3, 1}}) {
    for (std::int64_t k = 2; k <= std::int64_t(s.rank()); ++k) {
      std::vector<std::int64_t> axes;
      for (std::int64_t a = std::int64_t(s.rank()) - k; a < std::int64_t(s.rank()); ++a)
        axes.push_back(k % 2 ? a : a - std::int64_t(s.rank())); // positive and negative
      std::reverse(axes.begin(), axes.end());                   // in any order
      INFO("shape = " << s.to_string() << ", last " << k << " axes");
      Dim n = 1;
      for (std::size_t d = s.rank() - std::size_t(k); d < s.rank(); ++d) n *= s[d];
      Graph g;
      const auto x = g.parameter(f32, s);
      g.result(g.reduce_sum(x, axes, true));
      g.result(g.reduce_max(x, axes, true));
      g.result(g.reduce_min(x, axes, true));
      g.result(g.reduce_mean(x, axes, true));
      g.result(g.reduce_l2(x, axes, true));
      const double per = 1e-6 * static_cast<double>(n);
      check_jit(g, {uniform(s, ++seed, -2, 2)},
                {.threads = {1, 3},
                 .output_tol = {{16, per * 2}, exact, exact, {16, per}, {16, 1e-6 * 2}},
                 .unroll = {1, 4}});
      Graph p;
      p.result(p.reduce_prod(p.parameter(f32, s), axes, true));
      check_jit(p, {uniform(s, ++seed, 0.9, 1.1)}, {.tol = {2 * n, 0}, .threads = {1, 3}});
    }
  }
}

TEST_CASE("reduce axes: LayerNorm over the last two axes is one kernel") {
  // also with a Transpose of its output that keeps the innermost axis: the tokenizer takes it
  // into the kernel (whose domain is the Transpose's input), folded into the store
  for (const Shape& s : {Shape{4, 6, 5, 7}, Shape{2, 3, 16, 48}})
    for (const bool transposed : {false, true}) {
      INFO("shape = " << s.to_string() << (transposed ? ", transposed output" : ""));
      const Shape inner{s[2], s[3]};
      Graph model;
      const auto x = model.parameter(f32, s, "x");
      const auto gamma = model.parameter(f32, inner, "gamma");
      const auto beta = model.parameter(f32, inner, "beta");
      const auto y = normalize(model, x, {-2, -1}, gamma, beta);
      model.result(transposed ? model.transpose(y, {1, 0, 2, 3}) : y, "y");
      const std::vector<Tensor> in{uniform(s, 1, -3, 3), uniform(inner, 2, 0.5, 1.5),
                                   uniform(inner, 3, -1, 1)};
      check_jit(model, in, {.tol = {64, 1e-5}, .threads = {1, 3}});
      CHECK(kernels_of(model) == 1);
      check_program(model, in, {64, 1e-5});
    }
}

TEST_CASE("reduce axes: InstanceNorm and GroupNorm are one kernel each") {
  SUBCASE("InstanceNorm over H and W, a scale and shift per channel") {
    const Shape s{2, 3, 9, 11};
    Graph model;
    const auto x = model.parameter(f32, s, "x");
    const auto scale = model.parameter(f32, Shape{3, 1, 1}, "scale");
    const auto shift = model.parameter(f32, Shape{3, 1, 1}, "shift");
    model.result(normalize(model, x, {2, 3}, scale, shift), "y");
    const std::vector<Tensor> in{uniform(s, 4, -3, 3), uniform(Shape{3, 1, 1}, 5, 0.5, 1.5),
                                 uniform(Shape{3, 1, 1}, 6, -1, 1)};
    check_jit(model, in, {.tol = {64, 1e-5}, .threads = {1, 3}});
    CHECK(kernels_of(model) == 1);
    check_program(model, in, {64, 1e-5});
  }
  SUBCASE("GroupNorm [N, G, C/G, H, W] over the last three axes, per channel [G, C/G, 1, 1]") {
    const Shape s{2, 4, 3, 5, 7};
    const Shape channel{4, 3, 1, 1};
    Graph model;
    const auto x = model.parameter(f32, s, "x");
    const auto scale = model.parameter(f32, channel, "scale");
    const auto shift = model.parameter(f32, channel, "shift");
    model.result(normalize(model, x, {2, 3, 4}, scale, shift), "y");
    const std::vector<Tensor> in{uniform(s, 7, -3, 3), uniform(channel, 8, 0.5, 1.5),
                                 uniform(channel, 9, -1, 1)};
    check_jit(model, in, {.tol = {64, 1e-5}, .threads = {1, 3}});
    CHECK(kernels_of(model) == 1);
    check_program(model, in, {64, 1e-5});
  }
}

TEST_CASE("reduce axes: a reduction without keep_dims is an output of its kernel") {
  Graph g;
  const auto x = g.parameter(f32, Shape{4, 6, 5});
  const auto e = g.exp(x);
  g.result(g.reduce_sum(e, {-1}, false));     // [4, 6]
  g.result(g.reduce_max(e, {-2, -1}, false)); // [4]: another count of axes, another kernel
  const std::vector<Tensor> in{uniform(Shape{4, 6, 5}, 11, -2, 2)};
  Graph one;
  one.result(one.reduce_mean(one.exp(one.parameter(f32, Shape{4, 6, 5})), {1, 2}, false));
  check_jit(one, in, {.tol = {16, 1e-5}, .threads = {1, 3}});
  Graph all; // every axis: a rank-0 result
  all.result(all.reduce_sum(all.parameter(f32, Shape{4, 6, 5}), {0, 1, 2}, false));
  check_jit(all, in, {.tol = {16, 1e-4}, .threads = {1, 2}});
  CHECK(kernels_of(g) == 3); // the Exp is an output of its own: the sum's kernel has one shape
  check_program(g, in, {16, 1e-5});

  // read by an op of the model: that op runs in another kernel
  Graph m;
  const auto y = m.parameter(f32, Shape{4, 6, 5});
  const auto s = m.reduce_sum(m.abs(y), {-1}, false);
  m.result(m.multiply(s, m.parameter(f32, Shape{4, 6})));
  CHECK(kernels_of(m) == 2);
  check_program(m, {in[0], uniform(Shape{4, 6}, 12, -1, 1)}, {16, 1e-5});
}

TEST_CASE("reduce axes: what stays refused") {
  SUBCASE("an axis that is not among the last ones") {
    Graph g;
    g.result(g.reduce_sum(g.parameter(f32, Shape{4, 8, 3}), {0, 2}, true));
    CHECK(error_id([&] { compile(g); }) == "snippets.compile.reduce_axis");
  }
  SUBCASE("reductions over different numbers of axes in one body") {
    Graph g;
    const auto x = g.parameter(f32, Shape{4, 5, 6});
    const auto a = g.reduce_sum(x, {-1}, true);
    g.result(g.add(g.subtract(x, a), g.reduce_max(x, {-2, -1}, true)));
    CHECK(error_id([&] { compile(g); }) == "snippets.compile.reduce_axis");
  }
  SUBCASE("a reduction without keep_dims read by an op of the body") {
    Graph g;
    const auto s = g.reduce_sum(g.parameter(f32, Shape{4, 6}), {-1}, false);
    g.result(g.relu(s));
    CHECK(error_id([&] { compile(g); }) == "snippets.compile.reduce_axis");
  }
  SUBCASE("several axes, or no keep_dims, with dynamic shapes") {
    Graph g;
    g.result(g.reduce_sum(g.parameter(f32, Shape{dynamic, 8, 3}), {-2, -1}, true));
    CHECK(error_id([&] { compile(g); }) == "snippets.compile.dynamic_reduce");
    Graph k;
    k.result(k.reduce_sum(k.parameter(f32, Shape{dynamic, 8}), {-1}, false));
    CHECK(error_id([&] { compile(k); }) == "snippets.compile.dynamic_reduce");
  }
}
TEST_CASE("reduce axes: a reduction over other axes than the last runs in a kernel of a Program") {
  // MoveReducedAxesLast: the Transpose is folded into the kernel's loads, the Reshape of the
  // small result is a host step
  SUBCASE("a sum over the channels of NCHW, keeping them and dropping them") {
    for (const bool keep : {true, false}) {
      Graph model;
      const auto x = model.parameter(f32, Shape{2, 8, 6, 5}, "x");
      model.result(model.reduce_sum(model.relu(x), {1}, keep), "s");
      model.result(model.reduce_max(x, {0, 2}, keep), "m");
      CHECK(passes::MoveReducedAxesLast::finds_candidates(model));
      check_program(model, {uniform(Shape{2, 8, 6, 5}, 21, -2, 2)}, {16, 1e-5});
    }
  }
  SUBCASE("a Softmax over another axis: a kernel of columns (test_jit_reduce_columns.cpp)") {
    for (const Shape& s : {Shape{2, 5, 7, 9}, Shape{3, 1, 4, 17}, Shape{4, 5}})
      for (std::int64_t axis = -std::int64_t(s.rank()); axis < -1; ++axis) {
        INFO("shape = " << s.to_string() << ", axis " << axis);
        Graph model;
        const auto x = model.parameter(f32, s, "x");
        model.result(model.add(model.softmax(model.relu(x), axis), model.scalar(f32, 1.0)), "y");
        CHECK(!passes::MoveReducedAxesLast::finds_candidates(model));
        check_program(model, {uniform(s, 23, -4, 4)}, {16, 1e-6});
      }
  }
  SUBCASE("what it leaves alone: the last axes") {
    Graph g;
    const auto x = g.parameter(f32, Shape{4, 5}, "x");
    g.result(g.reduce_sum(x, {-1}, true));
    g.result(g.softmax(x, -1));
    g.result(g.softmax(x, 1));
    CHECK(!passes::MoveReducedAxesLast::finds_candidates(g));
    Graph d; // dynamic shapes: test_program_dynamic.cpp
    d.result(d.reduce_sum(d.parameter(f32, Shape{dynamic, 4, dynamic, 3}), {1, 3}, false));
    CHECK(passes::MoveReducedAxesLast::finds_candidates(d));
  }
}

TEST_CASE("reduce axes: a reduction over other axes broadcast back is one kernel with its ops") {
  // MoveReducedAxesLast's regions: the reductions and the elementwise ops around them computed
  // in the transposed domain, each reader of x with its own Transpose (one folded load), the
  // outputs transposed back in the kernel's stores
  SUBCASE("MeanVarianceNormalization at [0, 2, 3] and [2, 3], odd sizes and axes of extent 1") {
    for (const Shape& s : {Shape{3, 5, 7, 9}, Shape{3, 4, 5, 6}, Shape{2, 1, 5, 7},
                           Shape{3, 5, 1, 9}, Shape{1, 4, 3, 5}, Shape{3, 5, 7, 1}})
      for (const std::vector<std::int64_t>& axes :
           {std::vector<std::int64_t>{0, 2, 3}, std::vector<std::int64_t>{2, 3}}) {
        INFO("shape = " << s.to_string() << ", axes " << axes.size());
        Graph model;
        model.result(mvn(model, model.parameter(f32, s, "x"), axes), "y");
        CHECK(check_program_isas(model, {uniform(s, 22, -2, 2)}, {64, 1e-5}) == 1);
      }
  }
  SUBCASE("with elementwise ops before and after, a scale per channel") {
    const Shape s{3, 5, 7, 9};
    const Shape channel{5, 1, 1};
    Graph model;
    const auto x = model.parameter(f32, s, "x");
    const auto a = model.parameter(f32, s, "a");
    const auto scale = model.parameter(f32, channel, "scale");
    const auto mean = model.reduce_mean(model.multiply(model.abs(x), a), {0, 2, 3}, true);
    model.result(model.relu(model.multiply(model.subtract(x, mean), scale)), "y");
    const std::vector<Tensor> in{uniform(s, 23, -2, 2), uniform(s, 24, 0.5, 1.5),
                                 uniform(channel, 25, 0.5, 1.5)};
    CHECK(check_program_isas(model, in, {16, 1e-5}) == 1);
    // a reduced output too, without keep_dims: a Subgraph takes one output for Results
    model.result(model.reduce_max(x, {0, 2, 3}, false), "max"); // [5]
    CHECK(check_program_isas(model, in, {16, 1e-5}) == 2);
  }
  SUBCASE("rank 5 over [0, 2, 4], with a comparison and a Select") {
    for (const Shape& s : {Shape{2, 3, 4, 5, 6}, Shape{3, 1, 5, 2, 9}}) {
      Graph model;
      const auto x = model.parameter(f32, s, "x");
      const auto m = model.reduce_max(x, {0, 2, -1}, true);
      const auto half = model.multiply(m, model.scalar(f32, 0.5));
      model.result(model.select(model.greater(x, half), model.subtract(x, m),
                                model.multiply(x, model.scalar(f32, 0.25))),
                   "y");
      // the readers of the maximum meet at the Select, which does not read it: the tokenizer
      // merges the maximum's Subgraph there, as one that feeds the Select's parents alone
      CHECK(check_program_isas(model, {uniform(s, 30, -2, 2)}, exact) == 1);
    }
  }
  SUBCASE("a reader of x beside the region stays as it was") {
    const Shape s{3, 5, 7, 9};
    Graph model;
    const auto x = model.parameter(f32, s, "x");
    model.result(mvn(model, x, {0, 2, 3}), "y");
    model.result(model.relu(x), "r");
    // the three readers of x in the region and its output: four Transposes, none for the Relu
    const Graph moved = passes::MoveReducedAxesLast{}.run(model);
    std::size_t transposes = 0;
    for (ir::NodeId id = 0; id < moved.size(); ++id)
      transposes += ir::is<ir::Transpose>(moved.node(id).op);
    CHECK(transposes == 4);
    CHECK(check_program_isas(model, {uniform(s, 29, -2, 2)}, {64, 1e-5}) == 2);
  }
  SUBCASE("a computed input that several ops read") {
    // midway the value's Subgraph has outputs of two shapes, so the reduction starts another
    // one; they merge where their readers meet (the tokenizer's feeders), as over the last axes
    const Shape s{3, 5, 7, 9};
    for (const std::vector<std::int64_t>& axes :
         {std::vector<std::int64_t>{0, 2, 3}, std::vector<std::int64_t>{1, 2, 3}}) {
      Graph model;
      const auto x = model.parameter(f32, s, "x");
      const auto a = model.parameter(f32, s, "a");
      model.result(mvn(model, model.add(model.multiply(x, a), model.scalar(f32, 0.5)), axes));
      const std::vector<Tensor> in{uniform(s, 23, -2, 2), uniform(s, 24, 0.5, 1.5)};
      CHECK(check_program_isas(model, in, {64, 1e-5}) == 1);
    }
  }
  SUBCASE("a sum over axes 1 and 3 of NCHW, then x - s and a Relu") {
    for (const Shape& s : {Shape{3, 5, 7, 9}, Shape{2, 1, 5, 7}}) {
      Graph model;
      const auto x = model.parameter(f32, s, "x");
      model.result(model.relu(model.subtract(x, model.reduce_sum(x, {1, 3}, true))), "y");
      CHECK(check_program_isas(model, {uniform(s, 26, -2, 2)}, {16, 1e-5}) == 1);
    }
  }
  SUBCASE("axes that are not one run and keep the innermost: one run of middle axes") {
    // the kept axes after the last reduced one stay innermost (kept_last): [0, 2] of NCHW is
    // computed as [1, 0, 2, 3], a sum over its axes 1 and 2 of columns of W, read and written
    // through Transposes that keep W innermost
    for (const Shape& s : {Shape{3, 5, 7, 9}, Shape{2, 4, 3, 16}, Shape{2, 1, 5, 7}}) {
      INFO("shape = " << s.to_string());
      Graph model;
      const auto x = model.parameter(f32, s, "x");
      model.result(model.relu(model.subtract(x, model.reduce_sum(x, {0, 2}, true))), "y");
      model.result(model.reduce_max(x, {0, 2}, false), "max");
      CHECK(check_program_isas(model, {uniform(s, 31, -2, 2)}, {16, 1e-5}) == 2);
      Graph norm; // a LayerNorm over [0, 2] with a scale and shift per channel
      const Shape channel{s[1], 1, 1};
      const auto nx = norm.parameter(f32, s, "x");
      const auto gamma = norm.parameter(f32, channel, "gamma");
      norm.result(normalize(norm, nx, {0, 2}, gamma, norm.parameter(f32, channel, "beta")));
      CHECK(check_program_isas(norm,
                               {uniform(s, 32, -3, 3), uniform(channel, 33, 0.5, 1.5),
                                uniform(channel, 34, -1, 1)},
                               {64, 1e-5}) == 1);
    }
    Graph rank5; // [1, 3] of [N, C, D, H, W]: [N, D, C, H, W], a sum over C and H
    const Shape s5{2, 3, 4, 5, 6};
    const auto x = rank5.parameter(f32, s5, "x");
    rank5.result(rank5.multiply(x, rank5.reduce_mean(x, {1, 3}, true)), "y");
    CHECK(check_program_isas(rank5, {uniform(s5, 35, -2, 2)}, {16, 1e-5}) == 1);
  }
  SUBCASE("a sum over the channels, then x - s and a Relu") {
    // one kernel: with H and W of extent 1 the channels are innermost (a row), else the sum is
    // over columns (passes/tile_columns.hpp) and no region is made
    for (const Shape& s : {Shape{3, 5, 7, 9}, Shape{4, 6, 1, 1}}) {
      Graph model;
      const auto x = model.parameter(f32, s, "x");
      model.result(model.relu(model.subtract(x, model.reduce_sum(x, {1}, true))), "y");
      CHECK(check_program_isas(model, {uniform(s, 27, -2, 2)}, {16, 1e-5}) == 1);
    }
  }
}
