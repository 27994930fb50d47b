// SPDX-License-Identifier: Apache-2.0
// JIT tests of ReduceMin, ReduceProd, ReduceMean, ReduceSumSquare, ReduceL1 and ReduceL2 over
// the innermost axis (passes/decompose_composite_reductions.hpp, passes/decompose_reductions.hpp,
// target/x64/emitters/reduce.hpp), against the reference interpreter in double, on both ISAs,
// 1 to 3 threads, unrolled or not; the normalizations written with them as one kernel each;
// and what stays refused. Dynamic rows (empty ones included): test_dynamic_reduce.cpp, and
// below a mean whose count is known when compiling only for some of its axes.
//
// Tolerances: ReduceMin is exact (min rounds nothing). A product of n factors in another order
// than the reference's rounds n - 1 times in f32: within 2n ulp. The sums (of x, x * x, |x|)
// as test_jit_reduce.cpp: <= 16 ulp, or 1e-6 per element times the largest term absolutely
// where cancellation leaves a small result; the mean divides that by n, L2 takes its root.
#include "error_id.hpp"
#include "jit_test_util.hpp"

using namespace snippets;
using namespace snippets::jit_test;

namespace {

constexpr Dim row_sizes[] = {1, 9, 16, 17, 19, 37, 49, 50, 128, 129, 130, 1024};

/// x with a random sign and a magnitude in [0.9, 1.1): products of up to 1024 of them stay far
/// from overflow and underflow.
Tensor factors(const Shape& s, std::uint64_t seed) {
  Tensor t = uniform(s, seed, 0.9, 1.1);
  Rng rng(seed + 1000);
  for (std::size_t i = 0; i < t.size(); ++i)
    if (rng.next() % 2) t.set(i, -t.at(i));
  return t;
}

} // namespace

TEST_CASE("reduce ops: ReduceMin over the innermost axis is exact for every row length") {
  std::uint64_t seed = 1;
  for (Dim n : row_sizes) {
    for (const Shape& s : {Shape{n}, Shape{5, n}, Shape{2, 3, n}}) {
      INFO("shape = " << s.to_string());
      Graph g;
      g.result(g.reduce_min(g.parameter(f32, s), {-1}, true));
      // specials among the values: NaN, infinities, signed zeros, extremes
      check_jit(g, {make_tensor(s, ++seed)}, {.tol = exact, .threads = {1, 3}, .unroll = {1, 4}});
    }
  }
}

TEST_CASE("reduce ops: ReduceProd over the innermost axis for every row length") {
  std::uint64_t seed = 100;
  for (Dim n : row_sizes) {
    for (const Shape& s : {Shape{n}, Shape{7, n}}) {
      INFO("shape = " << s.to_string());
      Graph g;
      g.result(g.reduce_prod(g.parameter(f32, s), {-1}, true));
      check_jit(g, {factors(s, ++seed)}, {.tol = {2 * n, 0}, .threads = {1, 3}, .unroll = {1, 4}});
    }
  }
}

TEST_CASE("reduce ops: ReduceMean, ReduceSumSquare, ReduceL1 and ReduceL2 for every row length") {
  std::uint64_t seed = 200;
  for (Dim n : row_sizes) {
    INFO("n = " << n);
    const Shape s{6, n};
    Graph g;
    const auto x = g.parameter(f32, s);
    g.result(g.reduce_mean(x, {-1}, true));
    g.result(g.reduce_sum_square(x, {1}, true)); // a positive axis
    g.result(g.reduce_l1(x, {-1}, true));
    g.result(g.reduce_l2(x, {-1}, true));
    const double per = 1e-6 * static_cast<double>(n);
    check_jit(g, {uniform(s, ++seed, -4, 4)},
              {.threads = {1, 3},
               .output_tol = {{16, 1e-6 * 4}, {16, per * 16}, {16, per * 4}, {16, 1e-6 * 4}},
               .unroll = {1, 4}});
  }
}

TEST_CASE("reduce ops: NaN, infinities and zeros give what the reference gives") {
  for (Dim n : {Dim{5}, Dim{16}, Dim{37}}) {
    INFO("n = " << n);
    Tensor t = uniform(Shape{6, n}, 7, -3, 3);
    t.set(0 * n + n - 1, qnan); // in the tail (or the last lane)
    t.set(1 * n + 0, inf);
    t.set(2 * n + n / 2, -inf);
    t.set(3 * n + 1, qnan);
    t.set(4 * n + 2, 0.0); // a zero factor ...
    t.set(5 * n + 1, 0.0); // ... and zero times infinity: NaN
    t.set(5 * n + n - 1, -inf);
    Graph g;
    const auto x = g.parameter(f32, Shape{6, n});
    g.result(g.reduce_min(x, {-1}, true));
    g.result(g.reduce_prod(x, {-1}, true));
    g.result(g.reduce_mean(x, {-1}, true));
    g.result(g.reduce_sum_square(x, {-1}, true));
    g.result(g.reduce_l1(x, {-1}, true));
    g.result(g.reduce_l2(x, {-1}, true));
    const Tensor want = reference::evaluate(g, std::vector<Tensor>{t})[1];
    CHECK(std::isnan(want.at(5))); // the oracle itself: 0 * -inf
    CHECK(want.at(4) == 0.0);
    check_jit(g, {t}, {.tol = {2 * n, 1e-5}, .threads = {1, 2}});
  }
}

TEST_CASE("reduce ops: LayerNorm and RMSNorm written with ReduceMean are one kernel each") {
  for (Dim n : {Dim{7}, Dim{48}, Dim{129}, Dim{768}}) {
    for (const bool rms : {false, true}) {
      INFO("n = " << n << (rms ? ", RMSNorm" : ", LayerNorm"));
      Graph model;
      const auto x = model.parameter(f32, Shape{2, 5, n}, "x");
      const auto gamma = model.parameter(f32, Shape{n}, "gamma");
      const auto eps = model.scalar(f32, 1e-5);
      const auto d = rms ? x : model.subtract(x, model.reduce_mean(x, {-1}, true));
      const auto var = model.reduce_mean(model.multiply(d, d), {-1}, true);
      model.result(model.multiply(model.divide(d, model.sqrt(model.add(var, eps))), gamma));
      const std::vector<Tensor> in{uniform(Shape{2, 5, n}, n, -3, 3),
                                   uniform(Shape{n}, n + 1, 0.5, 1.5)};
      check_jit(model, in, {.tol = {64, 1e-5}, .threads = {1, 3}});

      const Graph tokenized = passes::tokenize(model);
      std::size_t kernels = 0;
      for (ir::NodeId id = 0; id < tokenized.size(); ++id)
        kernels += ir::is<ir::Subgraph<x64::Traits>>(tokenized.node(id).op);
      CHECK(kernels == 1);
      const auto want = reference::evaluate(model, in);
      const Program<> program(model);
      check_steps_are_kernels(program);
      CHECK(compare(program.run(in, with_threads(2))[0], want[0], {64, 1e-5}) == "");
    }
  }
}

TEST_CASE("reduce ops: a ReduceMin feeds elementwise ops of its row, a ReduceProd a sum") {
  Graph g;
  const auto x = g.parameter(f32, Shape{9, 37});
  const auto lo = g.reduce_min(x, {-1}, true);
  const auto hi = g.reduce_max(x, {-1}, true);
  g.result(g.divide(g.subtract(x, lo), g.subtract(hi, lo))); // min-max scaling
  g.result(g.reduce_sum(g.reduce_prod(x, {-1}, true), {-1}, true));
  check_jit(g, {uniform(Shape{9, 37}, 3, 0.9, 1.1)},
            {.threads = {1, 2}, .output_tol = {{4, 1e-6}, {74, 0}}});
}

TEST_CASE("reduce ops: bf16 and f16 in and out, computed in f32") {
  // min rounds nothing: exact; the mean and L2 round once at the store, as the reference does
  // at the end, after f32 sums in another order: within 1 ulp of bf16 (2^16 ulp of f32) or of
  // f16 (2^13)
  for (const ElementType type : {ElementType::bf16, ElementType::f16}) {
    INFO("type = " << to_string(type));
    Graph g;
    const auto x = g.parameter(type, Shape{5, 37});
    g.result(g.reduce_min(x, {-1}, true));
    g.result(g.reduce_mean(x, {-1}, true));
    g.result(g.reduce_l2(x, {-1}, true));
    Tensor t(type, Shape{5, 37});
    Rng rng(23);
    for (std::size_t i = 0; i < t.size(); ++i) t.set(i, rng.uniform(-6, 6));
    const std::int64_t ulp = type == ElementType::bf16 ? 1 << 16 : 1 << 13;
    check_jit(g, {t}, {.threads = {1, 2}, .output_tol = {exact, {ulp, 1e-3}, {ulp, 1e-6}}});
  }
}

TEST_CASE("reduce ops: a ReduceMean over a dynamic row counts the row at run time") {
  // static row, dynamic rows: n a Scalar; dynamic row: n a second sum (of ones), NaN when 0
  Graph s;
  s.result(s.reduce_mean(s.parameter(f32, Shape{dynamic, 24}), {-1}, true));
  const CompiledKernel ks = compile(s);
  Graph d;
  const auto x = d.parameter(f32, Shape{dynamic, dynamic});
  d.result(d.reduce_mean(x, {-1}, true));
  d.result(d.subtract(x, d.reduce_mean(x, {-1}, true))); // centred rows, as a LayerNorm
  const CompiledKernel kd = compile(d);
  std::uint64_t seed = 40;
  for (const Dim rows : {1, 5}) {
    const std::vector<Tensor> in{make_tensor(Shape{rows, 24}, ++seed)}; // NaN and infinities too
    check_runs(ks, in, reference::evaluate(s, std::span<const Tensor>(in)), {16, 1e-6}, {1, 3});
    for (const Dim n : {0, 1, 7, 16, 33, 130}) {
      INFO("[" << rows << "," << n << "]");
      const std::vector<Tensor> dn{uniform(Shape{rows, n}, ++seed, -4, 4)};
      const auto want = reference::evaluate(d, std::span<const Tensor>(dn));
      if (n == 0) CHECK(std::isnan(want[0].at(0))); // the oracle itself: 0 / 0
      check_runs(kd, dn, want, {16, 1e-6 * 4}, {1, 3});
    }
  }
}

TEST_CASE("reduce ops: errors name the op and what to do") {
  SUBCASE("an axis that is not among the last ones, or no keep_dims read inside") {
    Graph g;
    g.result(g.reduce_mean(g.parameter(f32, Shape{4, 8, 3}), {0, 2}, true));
    CHECK(error_id([&] { compile(g); }) == "snippets.compile.reduce_axis");
    Graph k;
    k.result(k.relu(k.reduce_min(k.parameter(f32, Shape{4, 8}), {-1}, false)));
    CHECK(error_id([&] { compile(k); }) == "snippets.compile.reduce_axis");
    Graph l;
    l.result(l.reduce_l2(l.parameter(f32, Shape{4, 8, 3}), {0, 2}, true));
    CHECK(error_id([&] { compile(l); }) == "snippets.compile.reduce_axis");
  }
  SUBCASE("a composite reduction left in the body by a pipeline without its decomposition") {
    Graph g;
    g.result(g.reduce_l1(g.parameter(f32, Shape{4, 8}), {-1}, true));
    using Bare = passes::remove_t<passes::DefaultDataFlow, passes::DecomposeCompositeReductions>;
    CHECK(error_id([&] { compile<x64::Traits, passes::DefaultLowering, Bare>(g); }) ==
          "snippets.compile.unsupported_op");
  }
}
