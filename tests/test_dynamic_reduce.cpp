// SPDX-License-Identifier: Apache-2.0
// Tests of reductions and Softmax over a dynamic innermost axis: one kernel compiled for a body
// with dynamic dimensions runs rows of any length (run-time tails of the accumulations, pointers
// moved back to the row's start between the loops of a row, Buffers of run-time rows), any
// number of rows, empty rows and empty batches, with broadcast inputs and several threads
// (passes/cleanup_loop_offsets.hpp, passes/allocate_buffers.hpp, runtime/runtime_config.hpp,
// target/x64/kernel_emitter.hpp). Every result is compared with the reference interpreter in
// double, on both ISAs, with the tolerances of test_jit_reduce.cpp: ReduceMax is exact, a sum
// adds in another order (<= 16 ulp, or 1e-6 per element of the row absolutely), Softmax <= 16
// ulp or 1e-9 absolutely, a layer norm <= 64 ulp or 1e-5 absolutely. compilations() proves that
// new shapes cost no compilation.
#include "error_id.hpp"
#include "jit_test_util.hpp"

using namespace snippets;
using namespace snippets::jit_test;

namespace {

constexpr Dim Q = dynamic;
constexpr Tolerance softmax_tol{16, 1e-9};
constexpr Tolerance norm_tol{64, 1e-5};

Tensor uniform(const Shape& s, std::uint64_t seed, double lo, double hi) {
  Tensor t(f32, s);
  Rng rng(seed);
  for (std::size_t i = 0; i < t.size(); ++i) t.set(i, rng.uniform(lo, hi));
  return t;
}

/// Compiles `g` once per ISA, calls check(kernel, isa) and checks that nothing else compiled.
template <class F> void once_per_isa(const Graph& g, F&& check, std::uint64_t variants = 0) {
  for_each_isa([&](x64::Isa isa) {
    const std::uint64_t before = compilations();
    const CompiledKernel k = compile(g, {.isa = isa});
    CHECK(k.is_dynamic());
    check(k);
    CHECK(compilations() - before == 1 + variants);
  });
}

/// Runs `k` on `in` with 1, 2 and 3 threads against the reference.
void check_against_reference(const CompiledKernel& k, const Graph& g, const std::vector<Tensor>& in,
                             Tolerance tol) {
  check_runs(k, in, reference::evaluate(g, std::span<const Tensor>(in)), tol, {1, 2, 3});
}

/// LayerNorm over the last axis as exported models spell it (the mean a ReduceSum times 1/n,
/// whose row length the caller passes as an input of shape [1]), scaled and shifted by
/// per-column gamma and beta.
Graph layer_norm(const Shape& x_shape, const Shape& scale_shape) {
  Graph g;
  const auto x = g.parameter(f32, x_shape, "x");
  const auto inv_n = g.parameter(f32, {1}, "inv_n");
  const auto gamma = g.parameter(f32, scale_shape, "gamma");
  const auto beta = g.parameter(f32, scale_shape, "beta");
  const auto d = g.subtract(x, g.multiply(g.reduce_sum(x, {-1}, true), inv_n));
  const auto var = g.multiply(g.reduce_sum(g.multiply(d, d), {-1}, true), inv_n);
  const auto y = g.divide(d, g.sqrt(g.add(var, g.scalar(f32, 1e-5))));
  g.result(g.add(g.multiply(y, gamma), beta));
  return g;
}

std::vector<Tensor> layer_norm_inputs(const Shape& x, const Shape& scale, std::uint64_t seed) {
  const Dim n = x[x.rank() - 1];
  return {uniform(x, seed, -3, 3),
          Tensor::from_values(f32, Shape{1}, {n ? 1.0 / static_cast<double>(n) : 0.0}),
          uniform(scale, seed + 1, 0.5, 1.5), uniform(scale, seed + 2, -0.5, 0.5)};
}

} // namespace

TEST_CASE("dynamic reduce: Softmax over rows of 1 to 67 elements runs on one kernel") {
  Graph g;
  g.result(g.softmax(g.parameter(f32, {Q, Q}), -1));
  once_per_isa(g, [&](const CompiledKernel& k) {
    std::uint64_t seed = 100;
    for (Dim n = 1; n <= 67; ++n)
      for (const Dim rows : {1, 3, 7}) {
        INFO("shape [" << rows << "," << n << "]");
        check_against_reference(k, g, {uniform(Shape{rows, n}, ++seed, -20, 20)}, softmax_tol);
      }
  });
}

TEST_CASE("dynamic reduce: ReduceSum and ReduceMax give per-row outputs next to full ones") {
  Graph g;
  const auto x = g.parameter(f32, {Q, Q});
  const auto m = g.reduce_max(x, {-1}, true);
  g.result(g.reduce_sum(x, {-1}, true)); // [rows, 1]
  g.result(g.subtract(x, m));            // [rows, n]
  g.result(g.multiply(m, g.scalar(f32, 2.0)));
  const ir::ReduceMax ignoring{{-1}, true, true};
  g.result(g.make(ignoring, {x})[0]);
  once_per_isa(g, [&](const CompiledKernel& k) {
    std::uint64_t seed = 300;
    for (Dim n = 1; n <= 67; ++n)
      for (const Dim rows : {1, 5}) {
        INFO("shape [" << rows << "," << n << "]");
        // signed zeros, halves and +-3 among random values (NaN and infinities: below)
        const std::vector<Tensor> in = {make_tensor(Shape{rows, n}, ++seed, Pattern::finite)};
        const auto want = reference::evaluate(g, std::span<const Tensor>(in));
        for (const int threads : {1, 2, 3}) {
          INFO("threads = " << threads);
          const auto got = k.run(std::span<const Tensor>(in), with_threads(threads));
          REQUIRE(got.size() == 4);
          CHECK(got[0].shape() == Shape{rows, 1});
          const double abs = 1e-6 * static_cast<double>(n) * 8;
          const Tolerance tols[] = {{16, abs}, exact, exact, exact};
          for (std::size_t o = 0; o < 4; ++o) {
            INFO("output " << o);
            const std::string report = compare(got[o], want[o], tols[o]);
            CHECK_MESSAGE(report.empty(), report);
          }
        }
      }
  });
}

TEST_CASE("dynamic reduce: NaN and infinities in the main loop and the tail propagate") {
  Graph g;
  const auto x = g.parameter(f32, {Q, Q});
  g.result(g.reduce_max(x, {-1}, true));
  g.result(g.make(ir::ReduceMax{{-1}, true, true}, {x})[0]);
  g.result(g.reduce_sum(x, {-1}, true));
  g.result(g.softmax(x, -1));
  once_per_isa(g, [&](const CompiledKernel& k) {
    for (const Dim n : {1, 5, 16, 37, 67}) {
      INFO("n = " << n);
      Tensor t = uniform(Shape{5, n}, 7, -3, 3);
      t.set(0 * n + n - 1, qnan); // in the tail (or the last lane)
      t.set(1 * n + 0, inf);
      t.set(2 * n + n / 2, -inf);
      t.set(3 * n + n - 1, inf);
      t.set(4 * n + 0, qnan);
      const std::vector<Tensor> in = {t};
      const auto want = reference::evaluate(g, std::span<const Tensor>(in));
      for (const int threads : {1, 3}) {
        const auto got = k.run(std::span<const Tensor>(in), with_threads(threads));
        const Tolerance tols[] = {exact, exact, {16, 1e-5}, softmax_tol};
        for (std::size_t o = 0; o < 4; ++o) {
          INFO("output " << o << ", threads " << threads);
          const std::string report = compare(got.at(o), want[o], tols[o]);
          CHECK_MESSAGE(report.empty(), report);
        }
      }
    }
  });
}

TEST_CASE("dynamic reduce: LayerNorm over rows of 1 to 67 with scale and shift of shape [C]") {
  const Graph g = layer_norm(Shape{Q, Q, Q}, Shape{Q});
  once_per_isa(g, [&](const CompiledKernel& k) {
    std::uint64_t seed = 500;
    for (Dim n = 1; n <= 67; ++n)
      for (const Shape& outer : {Shape{1, 1}, Shape{3, 5}, Shape{2, 1}}) {
        const Shape x{outer[0], outer[1], n};
        INFO("x " << x.to_string());
        check_against_reference(k, g, layer_norm_inputs(x, Shape{n}, seed += 3), norm_tol);
      }
  });
}

TEST_CASE("dynamic reduce: LayerNorm with scale and shift of shape [1] and of a static row") {
  const Graph g = layer_norm(Shape{Q, Q}, Shape{1});
  once_per_isa(g, [&](const CompiledKernel& k) {
    for (const Dim n : {1, 13, 16, 64, 67, 768})
      check_against_reference(k, g, layer_norm_inputs(Shape{9, n}, Shape{1}, std::uint64_t(n)),
                              norm_tol);
  });
  const Graph rows = layer_norm(Shape{Q, 48}, Shape{48}); // only the number of rows varies
  once_per_isa(rows, [&](const CompiledKernel& k) {
    for (const Dim r : {1, 2, 5, 31})
      check_against_reference(
          k, rows, layer_norm_inputs(Shape{r, 48}, Shape{48}, std::uint64_t(r)), norm_tol);
  });
}

TEST_CASE("dynamic reduce: a scale broadcast along the row only at run time compiles once more") {
  const Graph g = layer_norm(Shape{Q, Q}, Shape{Q});
  once_per_isa(
      g,
      [&](const CompiledKernel& k) {
        for (int pass = 0; pass < 2; ++pass)
          for (const Dim n : {5, 37}) {
            check_against_reference(k, g, layer_norm_inputs(Shape{4, n}, Shape{n}, 7), norm_tol);
            check_against_reference(k, g, layer_norm_inputs(Shape{4, n}, Shape{1}, 8), norm_tol);
          }
      },
      1); // gamma and beta of [1]: one variant for both
}

TEST_CASE("dynamic reduce: AddSoftmax of 4-D scores with a broadcast mask and bias") {
  Graph g;
  const auto x = g.parameter(f32, {Q, Q, Q, Q});
  const auto mask = g.parameter(f32, {Q, 1, 1, Q}); // broadcast over heads and rows
  const auto bias = g.parameter(f32, {1, Q, Q, 1}); // one value per row
  const auto s = g.softmax(g.add(g.add(g.multiply(x, g.scalar(f32, 0.125)), mask), bias), -1);
  g.result(g.multiply(s, g.parameter(f32, {Q})));
  once_per_isa(g, [&](const CompiledKernel& k) {
    for (const Dim n : {1, 7, 16, 33, 67})
      for (const Shape& outer : {Shape{2, 3, 5}, Shape{1, 1, 1}, Shape{1, 4, 3}}) {
        INFO("n = " << n << ", outer " << outer.to_string());
        const Dim b = outer[0], h = outer[1], r = outer[2];
        check_against_reference(
            k, g,
            {uniform(Shape{b, h, r, n}, 1, -20, 20), uniform(Shape{b, 1, 1, n}, 2, -5, 0),
             uniform(Shape{1, h, r, 1}, 3, -1, 1), uniform(Shape{n}, 4, 0, 2)},
            softmax_tol);
      }
  });
}

TEST_CASE("dynamic reduce: a single row, rank 1, and rows of one element") {
  Graph g;
  const auto x = g.parameter(f32, {Q});
  g.result(g.softmax(x, -1));
  g.result(g.reduce_sum(x, {-1}, true));
  once_per_isa(g, [&](const CompiledKernel& k) {
    for (const Dim n : {1, 2, 15, 16, 17, 67, 1000})
      check_against_reference(k, g, {uniform(Shape{n}, std::uint64_t(n), -4, 4)},
                              {16, 1e-6 * static_cast<double>(n) * 4});
  });
  Graph rows;
  rows.result(rows.softmax(rows.parameter(f32, {Q, Q}), -1));
  once_per_isa(rows, [&](const CompiledKernel& k) {
    for (const Dim r : {1, 3, 1000})
      check_against_reference(k, rows, {uniform(Shape{r, 1}, 5, -4, 4)}, softmax_tol);
  });
}

TEST_CASE("dynamic reduce: empty rows and empty batches") {
  Graph g;
  const auto x = g.parameter(f32, {Q, Q});
  g.result(g.reduce_sum(x, {-1}, true));
  g.result(g.reduce_max(x, {-1}, true));
  g.result(g.softmax(x, -1));
  once_per_isa(g, [&](const CompiledKernel& k) {
    for (const Shape& s : {Shape{4, 0}, Shape{0, 5}, Shape{0, 0}, Shape{1, 0}}) {
      INFO("x " << s.to_string());
      const std::vector<Tensor> in = {Tensor(f32, s)};
      const auto want = reference::evaluate(g, std::span<const Tensor>(in));
      for (const int threads : {1, 2, 3}) {
        const auto got = k.run(std::span<const Tensor>(in), with_threads(threads));
        REQUIRE(got.size() == 3);
        CHECK(got[0].shape() == Shape{s[0], 1});
        CHECK(got[2].shape() == s);
        for (std::size_t o = 0; o < 3; ++o) CHECK(compare(got[o], want[o], exact).empty());
      }
      if (s[0] > 0) { // the oracle itself: a sum of nothing is 0, a max of nothing -inf
        CHECK(want[0].at(0) == 0.0);
        CHECK(want[1].at(0) == -inf);
      }
    }
  });
}

TEST_CASE("dynamic reduce: tails never touch memory outside a tensor") {
  const Graph ln = layer_norm(Shape{Q, Q}, Shape{Q});
  Graph sm;
  sm.result(sm.softmax(sm.parameter(f32, {Q, Q}), -1));
  Graph sum;
  sum.result(sum.reduce_sum(sum.parameter(f32, {Q, Q}), {-1}, true));
  for_each_isa([&](x64::Isa isa) {
    const CompiledKernel kln = compile(ln, {.isa = isa}), ksm = compile(sm, {.isa = isa}),
                         ksum = compile(sum, {.isa = isa});
    for (const Dim n : {1, 3, 7, 8, 9, 16, 17, 31, 33, 67})
      for (const Guard where : {Guard::after, Guard::before})
        for (const int threads : {1, 3}) {
          INFO("n = " << n << ", threads = " << threads);
          const Shape x{5, n};
          const auto in_ln = layer_norm_inputs(x, Shape{n}, std::uint64_t(n));
          const Tensor want_ln = reference::evaluate(ln, std::span<const Tensor>(in_ln)).at(0);
          CHECK(compare(run_guarded(kln, in_ln, want_ln, where, threads), want_ln, norm_tol)
                    .empty());
          const std::vector<Tensor> in = {uniform(x, std::uint64_t(n) + 9, -8, 8)};
          const Tensor want_sm = reference::evaluate(sm, std::span<const Tensor>(in)).at(0);
          CHECK(compare(run_guarded(ksm, in, want_sm, where, threads), want_sm, softmax_tol)
                    .empty());
          const Tensor want_sum = reference::evaluate(sum, std::span<const Tensor>(in)).at(0);
          const Tolerance sum_tol{16, 1e-6 * static_cast<double>(n) * 8};
          CHECK(compare(run_guarded(ksum, in, want_sum, where, threads), want_sum, sum_tol)
                    .empty());
        }
  });
}

TEST_CASE("dynamic reduce: configure() keeps rows whole and splits the rows among threads") {
  Graph g;
  g.result(g.softmax(g.parameter(f32, {Q, Q, Q}), -1));
  const CompiledKernel k = compile(g);
  REQUIRE(k.signature().dynamic.has_value());
  CHECK(k.signature().dynamic->rows);
  const RuntimeConfig c = k.configure(std::vector<Shape>{Shape{2, 3, 10}});
  CHECK(c.domain[2] == 10); // an elementwise kernel would run one loop of 60
  CHECK(c.domain[1] == 6);  // the rows merge
  CHECK(c.split == 1);
  const RuntimeConfig one = k.configure(std::vector<Shape>{Shape{1, 1, 300}});
  CHECK(one.domain[2] == 300);
  CHECK(one.split < 2); // never the row
  Graph r;
  r.result(r.reduce_max(r.parameter(f32, {Q, Q}), {-1}, true));
  const CompiledKernel kr = compile(r);
  const RuntimeConfig cr = kr.configure(std::vector<Shape>{Shape{4, 9}});
  CHECK(kr.output_shapes(cr).at(0) == Shape{4, 1});
}

TEST_CASE("dynamic reduce: configure() once and run_configured() many times, with the row's "
          "scratch") {
  Graph g;
  g.result(g.softmax(g.parameter(f32, {Q, Q}), -1));
  const CompiledKernel k = compile(g);
  REQUIRE(k.signature().dynamic.has_value());
  CHECK(k.signature().dynamic->scratch_rows >= 1); // exp(x - max) waits in a row of scratch
  for (const Dim n : {3, 100, 5000}) {
    const Shape s{6, n};
    const RuntimeConfig cfg = k.configure(std::vector<Shape>{s});
    const Tensor x = uniform(s, std::uint64_t(n), -5, 5);
    const Tensor want = reference::evaluate(g, {x}).at(0);
    Tensor out(f32, s);
    const void* in[] = {x.data()};
    void* outs[] = {out.data()};
    for (int i = 0; i < 3; ++i) {
      k.run_configured(cfg, in, outs, with_threads(1 + i));
      CHECK(compare(out, want, softmax_tol).empty());
    }
  }
}

TEST_CASE("dynamic reduce: the lowered LIR walks each row in loops of a run-time length") {
  Graph g;
  g.result(g.softmax(g.parameter(f32, {Q, Q}), -1));
  ir::LinearIR<x64::Traits> lir = lower(g, x64::Isa::avx512, {.unroll = 2});
  const std::string text = ir::to_string(lir);
  INFO(text);
  CHECK(lir.dynamic);
  CHECK(text.starts_with("domain [?,?]"));
  CHECK(text.find("ReduceAccumulate x? max_ignore_nan") != std::string::npos); // masked tail
  CHECK(text.find("ReduceAccumulate x? sum") != std::string::npos);
  // x is read again by the second loop: the first loop's tail moves it back; the Buffer of
  // exp(x - max) goes back after each loop; the output is written once per row
  CHECK(text.find("rewind 4B/walked") != std::string::npos);
  CHECK(lir.buffer_pointers == 1);
  CHECK(lir.buffer_rows == std::vector<std::int64_t>{0});
  CHECK(lir.scratch_rows == 1);
  CHECK(lir.scratch_bytes == 0);
}

TEST_CASE("dynamic reduce: what stays static is refused with snippets.compile.dynamic_reduce") {
  Graph outer; // over another axis
  outer.result(outer.reduce_sum(outer.parameter(f32, {Q, Q}), {0}, true));
  CHECK(error_id([&] { (void)compile(outer); }) == "snippets.compile.dynamic_reduce");
  Graph softmax_outer;
  softmax_outer.result(softmax_outer.softmax(softmax_outer.parameter(f32, {Q, 8}), 0));
  CHECK(error_id([&] { (void)compile(softmax_outer); }) == "snippets.compile.dynamic_reduce");
  Graph dropped; // keep_dims = false
  dropped.result(dropped.reduce_max(dropped.parameter(f32, {Q, Q}), {-1}, false));
  CHECK(error_id([&] { (void)compile(dropped); }) == "snippets.compile.dynamic_reduce");
}
