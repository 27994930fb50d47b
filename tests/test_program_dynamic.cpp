// SPDX-License-Identifier: Apache-2.0
// tests/test_program_dynamic.cpp: a Program of a model with dynamic dimensions
// (program/program.hpp): tokenized and compiled once, a Plan per set of input shapes, dynamic
// kernels configured per plan, MatMul Subgraphs compiled per shape set, checked against the
// reference interpreter on every ISA with several thread counts.
#include <doctest/doctest.h>

#include <thread>

#include "error_id.hpp"
#include "jit_test_util.hpp"
#include "snippets/snippets.hpp"

using namespace snippets;
using namespace snippets::jit_test;
using ir::Value;

namespace {

using StepKind = Program<>::StepKind;

/// An encoder-like block over a dynamic number of tokens: a LayerNorm chain (a dynamic row
/// reduction), a MatMul with a constant weight and its epilogue (compiled per shape set), a
/// Reshape between kernels (a host copy) and a residual Softmax.
struct DynamicBlock {
  static constexpr Dim hidden = 48, width = 40;
  Graph g;
  DynamicBlock() {
    const Value x = g.parameter(f32, {dynamic, hidden}, "x");
    const Value bias = g.parameter(f32, {width}, "bias");
    const Value centred =
        g.subtract(x, g.multiply(g.reduce_sum(x, {-1}, true), g.scalar(f32, 1.0 / double(hidden))));
    const Tensor w = uniform({hidden, width}, 7, -0.5, 0.5);
    const Value wv = g.constant(f32, {hidden, width}, w.values().v, "w");
    const Value y = g.relu(g.add(g.matmul(centred, wv), bias));
    const Value r = g.reshape(y, {-1, width / 2});
    g.result(g.softmax(g.multiply(r, g.scalar(f32, 0.25)), -1), "p");
    g.result(centred, "centred");
  }
  std::vector<Tensor> inputs(Dim tokens, std::uint64_t seed) const {
    return {uniform({tokens, hidden}, seed, -2, 2), uniform({width}, seed + 1, -1, 1)};
  }
};

void check_outputs(const std::vector<Tensor>& got, const std::vector<Tensor>& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t o = 0; o < got.size(); ++o) {
    INFO("output " << o);
    CHECK(got[o].shape() == want[o].shape());
    const std::string report = compare(got[o], want[o], Tolerance{64, 1e-5});
    CHECK_MESSAGE(report.empty(), report);
  }
}

} // namespace

TEST_CASE("a dynamic model compiles once and runs every number of tokens against the reference") {
  const DynamicBlock m;
  for_each_isa([&](x64::Isa isa) {
    ProgramOptions<x64::Traits> opt;
    opt.compile.isa = isa;
    opt.cache = nullptr; // count this Program's compilations alone
    const std::uint64_t before = compilations();
    const Program<> program(m.g, opt);
    CHECK(program.is_dynamic());
    int dynamic_kernels = 0, per_shape = 0, host = 0;
    for (const auto& step : program.steps()) {
      INFO(step.note);
      dynamic_kernels += step.kind == StepKind::kernel && step.kernel->is_dynamic();
      per_shape += step.kind == StepKind::kernel_per_shape;
      host += step.kind == StepKind::host;
      CHECK(step.kind != StepKind::reference);
    }
    CHECK(dynamic_kernels >= 2); // the LayerNorm chain, the Softmax after the Reshape
    CHECK(per_shape == 1);       // the MatMul and its epilogue
    CHECK(host == 1);
    const std::uint64_t at_construction = compilations() - before;
    for (const Dim tokens : {Dim(1), Dim(7), Dim(33), Dim(64)}) {
      INFO("tokens = " << tokens);
      const auto in = m.inputs(tokens, std::uint64_t(tokens) + 3);
      const auto want = reference::evaluate(m.g, in);
      for (const int threads : {1, 2, 3}) {
        INFO("threads = " << threads);
        check_outputs(program.run(in, with_threads(threads)), want);
      }
    }
    // one MatMul kernel per shape set, none when a set comes back
    const std::uint64_t after_sweep = compilations() - before;
    CHECK(after_sweep == at_construction + 4);
    const auto again = m.inputs(7, 99);
    check_outputs(program.run(again), reference::evaluate(m.g, again));
    CHECK(compilations() - before == after_sweep);
  });
}

TEST_CASE("attention over a dynamic sequence: one Subgraph, compiled per sequence length") {
  constexpr Dim heads = 3, head_size = 16;
  Graph g;
  const Value q = g.transpose(g.parameter(f32, {1, dynamic, heads, head_size}, "q"), {0, 2, 1, 3});
  const Value k = g.transpose(g.parameter(f32, {1, dynamic, heads, head_size}, "k"), {0, 2, 3, 1});
  const Value v = g.transpose(g.parameter(f32, {1, dynamic, heads, head_size}, "v"), {0, 2, 1, 3});
  const Value mask = g.parameter(f32, {1, heads, dynamic, dynamic}, "mask");
  const Value s = g.add(g.multiply(g.matmul(q, k), g.scalar(f32, 0.25)), mask);
  g.result(g.transpose(g.matmul(g.softmax(s, -1), v), {0, 2, 1, 3}), "out");
  for_each_isa([&](x64::Isa isa) {
    ProgramOptions<x64::Traits> opt;
    opt.compile.isa = isa;
    const Program<> program(g, opt);
    REQUIRE(program.steps().size() == 1);
    CHECK(program.steps()[0].kind == StepKind::kernel_per_shape);
    for (const Dim n : {Dim(1), Dim(5), Dim(24), Dim(37)}) {
      INFO("sequence " << n);
      const std::vector<Tensor> in = {
          uniform({1, n, heads, head_size}, 1), uniform({1, n, heads, head_size}, 2),
          uniform({1, n, heads, head_size}, 3), uniform({1, heads, n, n}, 4)};
      const std::vector<Shape> shapes = {in[0].shape(), in[1].shape(), in[2].shape(),
                                         in[3].shape()};
      CHECK(program.plan(shapes)->notes[0].empty()); // a kernel for this length
      const auto want = reference::evaluate(g, in);
      for (const int threads : {1, 2, 3}) {
        INFO("threads = " << threads);
        check_outputs(program.run(in, with_threads(threads)), want);
      }
    }
    // a query length that differs from the keys' breaks the mask's broadcast: refused
    const std::vector<Tensor> odd = {
        uniform({1, 4, heads, head_size}, 1), uniform({1, 6, heads, head_size}, 2),
        uniform({1, 6, heads, head_size}, 3), uniform({1, heads, 5, 6}, 4)};
    CHECK(error_id([&] { (void)program.run(odd); }) == "snippets.shape.not_broadcastable");
  });
}

TEST_CASE("a dynamic model's plan holds its shapes, and its context grows to the largest run") {
  const DynamicBlock m;
  const Program<> program(m.g);
  const std::vector<Shape> small = {Shape{3, DynamicBlock::hidden}, Shape{DynamicBlock::width}};
  const std::vector<Shape> large = {Shape{50, DynamicBlock::hidden}, Shape{DynamicBlock::width}};
  const auto p = program.plan(small);
  CHECK(p == program.plan(small)); // kept
  REQUIRE(p->outputs.size() == 2);
  CHECK(p->outputs[0].shape == Shape{6, DynamicBlock::width / 2});
  CHECK(p->outputs[1].shape == Shape{3, DynamicBlock::hidden});
  CHECK(program.plan(large)->arena_bytes > p->arena_bytes);
  CHECK(program.arena_bytes() == 0);

  ExecutionContext ctx = program.make_context();
  CHECK(ctx.bytes() == 0);
  for (const auto& shapes : {large, small}) {
    const auto in = m.inputs(shapes[0][0], 5);
    const auto want = reference::evaluate(m.g, in);
    std::vector<Tensor> got;
    for (const auto& t : program.plan(shapes)->outputs) got.emplace_back(t.type, t.shape);
    const ConstTensorView iv[] = {{f32, in[0].shape(), in[0].data()},
                                  {f32, in[1].shape(), in[1].data()}};
    const TensorView ov[] = {{f32, got[0].shape(), got[0].data()},
                             {f32, got[1].shape(), got[1].data()}};
    program.run(ctx, iv, ov);
    CHECK(ctx.bytes() == program.plan(large)->arena_bytes); // grown once, kept
    check_outputs(got, want);
  }
}

TEST_CASE("a dynamic model runs from several threads at once, each with its own shapes") {
  const DynamicBlock m;
  const Program<> program(m.g);
  std::vector<std::string> failures(4);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < failures.size(); ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < 3; ++round) {
        const auto in = m.inputs(Dim(5 + 9 * t + std::size_t(round)), t * 10 + std::size_t(round));
        const auto got = program.run(in);
        const auto want = reference::evaluate(m.g, in);
        for (std::size_t o = 0; o < got.size(); ++o)
          if (const auto r = compare(got[o], want[o], Tolerance{64, 1e-5}); !r.empty())
            failures[t] = r;
      }
    });
  for (auto& th : threads) th.join();
  for (const auto& f : failures) CHECK_MESSAGE(f.empty(), f);
}

TEST_CASE("a dynamic model refuses inputs that do not fit it, and outputs of other shapes") {
  const DynamicBlock m;
  const Program<> program(m.g);
  const auto wrong_width = std::vector<Tensor>{uniform({4, DynamicBlock::hidden + 1}, 1),
                                               uniform({DynamicBlock::width}, 2)};
  CHECK(error_id([&] { (void)program.run(wrong_width); }) == "snippets.run.shape_mismatch");
  const auto in = m.inputs(4, 3);
  Tensor out0(f32, {8, DynamicBlock::width / 2}), out1(f32, {5, DynamicBlock::hidden});
  const ConstTensorView iv[] = {{f32, in[0].shape(), in[0].data()},
                                {f32, in[1].shape(), in[1].data()}};
  const TensorView ov[] = {{f32, out0.shape(), out0.data()}, {f32, out1.shape(), out1.data()}};
  auto ctx = program.make_context();
  CHECK(error_id([&] { program.run(ctx, iv, ov); }) == "snippets.run.shape_mismatch");
}

TEST_CASE("outputs of one dynamic kernel that differ at run time: compiled for those shapes") {
  // a + b and b * 2 form one Subgraph whose outputs share the partial shape [?, 16]; with a
  // [4, 16] and b [1, 16] they differ, so the dynamic kernel cannot write both: the step is
  // compiled for the run's shapes (where a static body with two domains is refused, it runs
  // on the reference path, still right)
  Graph g;
  const Value a = g.parameter(f32, {dynamic, 16}, "a");
  const Value b = g.parameter(f32, {dynamic, 16}, "b");
  g.result(g.add(a, b), "sum");
  g.result(g.multiply(b, g.scalar(f32, 2.0)), "twice");
  const Program<> program(g);
  for (const auto& shapes : {std::pair<Dim, Dim>{4, 4}, {4, 1}, {1, 3}, {0, 1}, {0, 0}, {3, 5}}) {
    INFO("rows " << shapes.first << ", " << shapes.second);
    const std::vector<Tensor> in = {uniform({shapes.first, 16}, 1),
                                    uniform({shapes.second, 16}, 2)};
    if (shapes.first != shapes.second && shapes.first != 1 && shapes.second != 1) {
      CHECK(error_id([&] { (void)program.run(in); }) == "snippets.shape.not_broadcastable");
      continue;
    }
    check_outputs(program.run(in), reference::evaluate(g, in));
  }
}

TEST_CASE("reductions and a Softmax over other axes of a dynamic model: kernels per shape set") {
  // compiled for each set of shapes: the sum and the Softmax over the channels as kernels of
  // columns (passes/tile_columns.hpp); the max over axes 0 and 2 by MoveReducedAxesLast over its
  // input transposed (a gathering kernel), the result reshaped by a host step; so the
  // reductions of the rank-4 inputs without keep_dims, their results the kept axes as they are
  // in the transposed domain: over axes 0 and 2 (the kept W innermost: a kernel of columns), over
  // 1 and 3 with a result of one dynamic dimension, and of two, alone and beside a norm's mean
  Graph g;
  const Value x = g.parameter(f32, {dynamic, 6, dynamic}, "x");
  const Value x4 = g.parameter(f32, {dynamic, 4, 5, 3}, "x4");
  const Value y4 = g.parameter(f32, {dynamic, 4, dynamic, 3}, "y4");
  g.result(g.reduce_sum(g.relu(x), {1}, true), "s");
  g.result(g.reduce_max(x, {0, 2}, true), "m");
  g.result(g.softmax(x, 1), "p");
  g.result(g.reduce_mean(x4, {0, 2}, false), "mean02");
  g.result(g.reduce_sum(x4, {1, 3}, false), "sum13");
  g.result(g.reduce_max(g.relu(y4), {1, 3}, false), "max13");
  const Value centred = g.subtract(y4, g.reduce_mean(y4, {1, 3}, true));
  g.result(g.multiply(centred, g.scalar(f32, 2.0)), "centred");
  g.result(g.reduce_min(centred, {1, 3}, false), "min13");
  for_each_isa([&](x64::Isa isa) {
    const Program<> program(g, {.compile = {.isa = isa}});
    int per_shape = 0;
    for (const auto& step : program.steps()) {
      INFO(step.note);
      CHECK(step.kind != StepKind::reference);
      per_shape += step.kind == StepKind::kernel_per_shape;
    }
    CHECK(per_shape >= 6);
    for (const auto& [n, hw] : {std::pair<Dim, Dim>{2, 5}, {1, 1}, {3, 17}, {2, 40}}) {
      INFO("shape [" << n << ", 6, " << hw << "]");
      const std::vector<Tensor> in = {uniform({n, 6, hw}, std::uint64_t(n * 100 + hw), -3, 3),
                                      uniform({hw, 4, 5, 3}, std::uint64_t(n * 100 + hw + 1)),
                                      uniform({n, 4, hw, 3}, std::uint64_t(n * 100 + hw + 2))};
      const auto want = reference::evaluate(g, in);
      for (const int threads : {1, 2}) check_outputs(program.run(in, with_threads(threads)), want);
    }
  });
}

TEST_CASE("normalizations over other axes of a dynamic model: one kernel per shape set") {
  // MoveReducedAxesLast's regions with dynamic dimensions: MeanVarianceNormalization over [0, 2, 3]
  // (rows of the transposed input) and [2, 3], a norm over [0, 2] (a kernel of columns) and
  // [1, 3], each with a per-channel scale: one kernel compiled per set of shapes, the scale's
  // Reshape a view
  for (const std::vector<std::int64_t>& axes :
       {std::vector<std::int64_t>{0, 2, 3}, {2, 3}, {0, 2}, {1, 3}}) {
    INFO("axes " << axes.size() << ": " << axes[0] << ", " << axes[1]);
    Graph g;
    const Value x = g.parameter(f32, {dynamic, 5, dynamic, 8}, "x");
    const Value scale = g.parameter(f32, {5, 1, 1}, "scale");
    const Value mean = g.reduce_mean(x, axes, true);
    const Value d = g.subtract(x, mean);
    const Value var = g.reduce_mean(g.multiply(d, d), axes, true);
    g.result(g.multiply(g.divide(d, g.sqrt(g.add(var, g.scalar(f32, 1e-5)))), scale), "y");
    const Program<> program(g);
    int kernels = 0;
    for (const auto& step : program.steps()) {
      INFO(step.note);
      CHECK(step.kind != StepKind::reference);
      kernels += step.kind == StepKind::kernel_per_shape;
    }
    CHECK(kernels == 1);
    for (const auto& [n, h] : {std::pair<Dim, Dim>{2, 3}, {1, 1}, {3, 7}}) {
      INFO("shape [" << n << ", 5, " << h << ", 8]");
      const std::vector<Tensor> in = {uniform({n, 5, h, 8}, std::uint64_t(n * 10 + h), -3, 3),
                                      uniform({5, 1, 1}, 7, 0.5, 1.5)};
      const auto want = reference::evaluate(g, in);
      for (const int threads : {1, 2}) check_outputs(program.run(in, with_threads(threads)), want);
    }
  }
}

TEST_CASE("an Opaque op of a dynamic model: its dynamic dimensions follow its first input") {
  auto twice = [](std::span<const ConstTensorView> in, std::span<const TensorView> out) {
    const auto n = static_cast<std::size_t>(in[0].shape.element_count());
    for (std::size_t i = 0; i < n; ++i)
      static_cast<float*>(out[0].data)[i] = 2 * static_cast<const float*>(in[0].data)[i];
  };
  auto twice_values = [](std::span<const reference::Values> in) {
    reference::Values y = in[0];
    for (double& v : y.v) v *= 2;
    return std::vector<reference::Values>{y};
  };
  Graph g;
  const Value x = g.parameter(f32, {dynamic, 8}, "x");
  const Value t = g.make(ir::Opaque{"Twice", {ir::TensorType{f32, {dynamic, 8}}}}, {g.relu(x)})[0];
  g.result(g.sigmoid(t), "y");
  ProgramOptions<x64::Traits> opt;
  opt.opaque["Twice"] = twice;
  opt.reference.opaque["Twice"] = twice_values;
  const Program<> program(g, opt);
  for (const Dim rows : {Dim(3), Dim(10)}) {
    const std::vector<Tensor> in = {uniform({rows, 8}, std::uint64_t(rows))};
    check_outputs(program.run(in), reference::evaluate(g, in, opt.reference));
  }

  Graph flat; // an output of another rank: its dynamic extent is not decided by the input
  const Value fx = flat.parameter(f32, {dynamic, 8}, "x");
  flat.result(flat.make(ir::Opaque{"Flatten", {ir::TensorType{f32, {dynamic}}}}, {fx})[0]);
  ProgramOptions<x64::Traits> fopt;
  fopt.opaque["Flatten"] = twice;
  const Program<> p(flat, fopt);
  CHECK(error_id([&] {
          (void)p.run(std::vector<Tensor>{uniform({2, 8}, 1)});
        }) == "snippets.program.dynamic_shape");
}
