// SPDX-License-Identifier: Apache-2.0
// tests/dynamic_reduce_cases.hpp: the cases of reductions and Softmax over a dynamic innermost
// axis that every target runs (tests/test_dynamic_reduce.cpp on x86-64, both ISAs;
// tests/aarch64/test_aarch64_dynamic_reduce.cpp under qemu-aarch64): one kernel compiled for a
// body with dynamic dimensions runs rows of any length (run-time tails of the accumulations,
// pointers moved back to the row's start between the loops of a row, Buffers of run-time
// rows), any number of rows, empty rows and empty batches, with broadcast inputs and 1-3
// threads. Every result is compared with the reference interpreter in double with the
// tolerances of test_jit_reduce.cpp: ReduceMax is exact, a sum adds in another order (<= 16
// ulp, or 1e-6 per element of the row absolutely), Softmax <= 16 ulp or 1e-9 absolutely, a
// layer norm <= 64 ulp or 1e-5 absolutely; ReduceMin, ReduceProd, ReduceSumSquare, ReduceL1 and
// ReduceL2 as test_jit_reduce_ops.cpp. compilations() proves that new shapes cost no
// compilation; guard pages prove that no tail reads or writes outside a tensor.
#pragma once

#include <functional>

#include "jit_test_util.hpp"

namespace snippets::dynamic_reduce_test {

using namespace jit_test;

constexpr Dim Q = dynamic;
constexpr Tolerance softmax_tol{16, 1e-9};
constexpr Tolerance norm_tol{64, 1e-5};

/// Compiles `g` once per variant of the target (x86-64: AVX2 and AVX-512 where the host runs
/// them; AArch64: NEON), calls check(kernel) and checks that nothing else compiled but
/// `variants` kernels for inputs broadcast along the row at run time.
template <class F> void once_per_variant(const Graph& g, F&& check, std::uint64_t variants = 0) {
  auto once = [&](const CompileOptions& opt) {
    const std::uint64_t before = compilations();
    const CompiledKernel k = compile(g, opt);
    CHECK(k.is_dynamic());
    check(k);
    CHECK(compilations() - before == 1 + variants);
  };
#if defined(__aarch64__)
  once({});
#else
  for_each_isa([&](x64::Isa isa) { once({.isa = isa}); });
#endif
}

/// Runs `k` on `in` with 1, 2 and 3 threads against the reference.
inline void check_against_reference(const CompiledKernel& k, const Graph& g,
                                    const std::vector<Tensor>& in, Tolerance tol) {
  check_runs(k, in, reference::evaluate(g, std::span<const Tensor>(in)), tol, {1, 2, 3});
}

/// LayerNorm over the last axis as exported models spell it (the mean a ReduceSum times 1/n,
/// whose row length the caller passes as an input of shape [1]), scaled and shifted by
/// per-column gamma and beta.
inline Graph layer_norm(const Shape& x_shape, const Shape& scale_shape) {
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

inline std::vector<Tensor> layer_norm_inputs(const Shape& x, const Shape& scale,
                                             std::uint64_t seed) {
  const Dim n = x[x.rank() - 1];
  return {uniform(x, seed, -3, 3),
          Tensor::from_values(f32, Shape{1}, {n ? 1.0 / static_cast<double>(n) : 0.0}),
          uniform(scale, seed + 1, 0.5, 1.5), uniform(scale, seed + 2, -0.5, 0.5)};
}

inline void softmax_rows() {
  Graph g;
  g.result(g.softmax(g.parameter(f32, {Q, Q}), -1));
  once_per_variant(g, [&](const CompiledKernel& k) {
    std::uint64_t seed = 100;
    for (Dim n = 1; n <= 67; ++n)
      for (const Dim rows : {1, 3, 7}) {
        INFO("shape [" << rows << "," << n << "]");
        check_against_reference(k, g, {uniform(Shape{rows, n}, ++seed, -20, 20)}, softmax_tol);
      }
  });
}

inline void per_row_outputs() {
  Graph g;
  const auto x = g.parameter(f32, {Q, Q});
  const auto m = g.reduce_max(x, {-1}, true);
  g.result(g.reduce_sum(x, {-1}, true)); // [rows, 1]
  g.result(g.subtract(x, m));            // [rows, n]
  g.result(g.multiply(m, g.scalar(f32, 2.0)));
  const ir::ReduceMax ignoring{{-1}, true, true};
  g.result(g.make(ignoring, {x})[0]);
  once_per_variant(g, [&](const CompiledKernel& k) {
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

inline void nan_and_infinities() {
  Graph g;
  const auto x = g.parameter(f32, {Q, Q});
  g.result(g.reduce_max(x, {-1}, true));
  g.result(g.make(ir::ReduceMax{{-1}, true, true}, {x})[0]);
  g.result(g.reduce_sum(x, {-1}, true));
  g.result(g.softmax(x, -1));
  once_per_variant(g, [&](const CompiledKernel& k) {
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

inline void layer_norm_rows() {
  const Graph g = layer_norm(Shape{Q, Q, Q}, Shape{Q});
  once_per_variant(g, [&](const CompiledKernel& k) {
    std::uint64_t seed = 500;
    for (Dim n = 1; n <= 67; ++n)
      for (const Shape& outer : {Shape{1, 1}, Shape{3, 5}, Shape{2, 1}}) {
        const Shape x{outer[0], outer[1], n};
        INFO("x " << x.to_string());
        check_against_reference(k, g, layer_norm_inputs(x, Shape{n}, seed += 3), norm_tol);
      }
  });
}

inline void layer_norm_broadcast() {
  const Graph g = layer_norm(Shape{Q, Q}, Shape{1});
  once_per_variant(g, [&](const CompiledKernel& k) {
    for (const Dim n : {1, 13, 16, 64, 67, 768})
      check_against_reference(k, g, layer_norm_inputs(Shape{9, n}, Shape{1}, std::uint64_t(n)),
                              norm_tol);
  });
  const Graph rows = layer_norm(Shape{Q, 48}, Shape{48}); // only the number of rows varies
  once_per_variant(rows, [&](const CompiledKernel& k) {
    for (const Dim r : {1, 2, 5, 31})
      check_against_reference(k, rows, layer_norm_inputs(Shape{r, 48}, Shape{48}, std::uint64_t(r)),
                              norm_tol);
  });
}

inline void scale_variant() {
  const Graph g = layer_norm(Shape{Q, Q}, Shape{Q});
  once_per_variant(
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

inline void add_softmax() {
  Graph g;
  const auto x = g.parameter(f32, {Q, Q, Q, Q});
  const auto mask = g.parameter(f32, {Q, 1, 1, Q}); // broadcast over heads and rows
  const auto bias = g.parameter(f32, {1, Q, Q, 1}); // one value per row
  const auto s = g.softmax(g.add(g.add(g.multiply(x, g.scalar(f32, 0.125)), mask), bias), -1);
  g.result(g.multiply(s, g.parameter(f32, {Q})));
  once_per_variant(g, [&](const CompiledKernel& k) {
    for (const Dim n : {1, 7, 16, 33, 67})
      for (const Shape& outer : {Shape{2, 3, 5}, Shape{1, 1, 1}, Shape{1, 4, 3}}) {
        INFO("n = " << n << ", outer " << outer.to_string());
        const Dim b = outer[0], h = outer[1], r = outer[2];
        check_against_reference(k, g,
                                {uniform(Shape{b, h, r, n}, 1, -20, 20),
                                 uniform(Shape{b, 1, 1, n}, 2, -5, 0),
                                 uniform(Shape{1, h, r, 1}, 3, -1, 1), uniform(Shape{n}, 4, 0, 2)},
                                softmax_tol);
      }
  });
}

inline void single_row() {
  Graph g;
  const auto x = g.parameter(f32, {Q});
  g.result(g.softmax(x, -1));
  g.result(g.reduce_sum(x, {-1}, true));
  once_per_variant(g, [&](const CompiledKernel& k) {
    for (const Dim n : {1, 2, 15, 16, 17, 67, 1000})
      check_against_reference(k, g, {uniform(Shape{n}, std::uint64_t(n), -4, 4)},
                              {16, 1e-6 * static_cast<double>(n) * 4});
  });
  Graph rows;
  rows.result(rows.softmax(rows.parameter(f32, {Q, Q}), -1));
  once_per_variant(rows, [&](const CompiledKernel& k) {
    for (const Dim r : {1, 3, 1000})
      check_against_reference(k, rows, {uniform(Shape{r, 1}, 5, -4, 4)}, softmax_tol);
  });
}

inline void empty_rows() {
  Graph g;
  const auto x = g.parameter(f32, {Q, Q});
  g.result(g.reduce_sum(x, {-1}, true));
  g.result(g.reduce_max(x, {-1}, true));
  g.result(g.softmax(x, -1));
  once_per_variant(g, [&](const CompiledKernel& k) {
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

/// ReduceMin, ReduceProd, ReduceSumSquare, ReduceL1, ReduceL2 and ReduceMean over rows of 0 to
/// 67 elements (empty rows give +inf, 1, 0 and NaN), with the tolerances of
/// test_jit_reduce_ops.cpp: min exact, a product of n factors within 2n ulp, the sums 16 ulp or
/// 1e-6 per element.
inline void reduce_ops_rows() {
  Graph g;
  const auto x = g.parameter(f32, {Q, Q});
  g.result(g.reduce_min(x, {-1}, true));
  g.result(g.reduce_prod(x, {-1}, true));
  g.result(g.reduce_sum_square(x, {-1}, true));
  g.result(g.reduce_l1(x, {-1}, true));
  g.result(g.reduce_l2(x, {-1}, true));
  g.result(g.subtract(x, g.reduce_min(x, {-1}, true))); // a full output next to them
  g.result(g.reduce_mean(x, {-1}, true));               // the row counted at run time
  once_per_variant(g, [&](const CompiledKernel& k) {
    std::uint64_t seed = 700;
    for (Dim n = 0; n <= 67; ++n)
      for (const Dim rows : {0, 1, 5}) {
        INFO("shape [" << rows << "," << n << "]");
        Tensor t = uniform(Shape{rows, n}, ++seed, 0.8, 1.25);
        for (std::size_t i = 0; i < t.size(); i += 3) t.set(i, -t.at(i)); // signs
        const std::vector<Tensor> in = {t};
        const auto want = reference::evaluate(g, std::span<const Tensor>(in));
        if (rows > 0 && n == 0) { // the oracle itself
          CHECK(want[0].at(0) == inf);
          CHECK(want[1].at(0) == 1.0);
          CHECK(want[4].at(0) == 0.0);
          CHECK(std::isnan(want[6].at(0)));
        }
        const double abs = 1e-6 * static_cast<double>(n) * 2;
        const Tolerance tols[] = {exact,     {2 * n, 0}, {16, abs},     {16, abs},
                                  {16, abs}, exact,      {16, 1e-6 * 2}};
        for (const int threads : {1, 2, 3}) {
          INFO("threads = " << threads);
          const auto got = k.run(std::span<const Tensor>(in), with_threads(threads));
          REQUIRE(got.size() == 7);
          for (std::size_t o = 0; o < 7; ++o) {
            INFO("output " << o);
            const std::string report = compare(got[o], want[o], tols[o]);
            CHECK_MESSAGE(report.empty(), report);
          }
        }
      }
  });
}

inline void output_extents() {
  // an output's innermost extent is that of the inputs it reads along the row, as NUMPY gives
  // it: y's row, or 1 where y is broadcast along it (a second kernel, compiled once)
  Graph g;
  const auto x = g.parameter(f32, {Q, Q}), y = g.parameter(f32, {Q, Q});
  const auto s = g.reduce_sum(x, {-1}, true);
  g.result(g.maximum(s, y));
  g.result(g.make(ir::ReduceMax{{-1}, true, true}, {s})[0]); // over one element per row
  once_per_variant(
      g,
      [&](const CompiledKernel& k) {
        for (int pass = 0; pass < 2; ++pass)
          for (const Dim n : {0, 1, 5, 33})
            for (const Shape& ys : {Shape{4, n}, Shape{4, 1}, Shape{1, n}}) {
              INFO("n = " << n << ", y " << ys.to_string());
              const std::vector<Tensor> in = {uniform(Shape{4, n}, 3, -4, 4),
                                              uniform(ys, 4, -4, 4)};
              const auto want = reference::evaluate(g, std::span<const Tensor>(in));
              CHECK(want[1].at(0) == (n ? want[1].at(0) : 0.0)); // the oracle: a max of 0
              const auto got = k.run(std::span<const Tensor>(in), with_threads(2));
              for (std::size_t o = 0; o < 2; ++o) {
                INFO("output " << o);
                const std::string report = compare(got.at(o), want[o], {16, 1e-5});
                CHECK_MESSAGE(report.empty(), report);
              }
            }
      },
      1); // y broadcast along the row
}

/// Runs `g`'s kernels on rows of 1 to 67 elements whose inputs and output each sit against a
/// PROT_NONE page (after them, then before them).
inline void check_guarded(const Graph& g, Tolerance tol,
                          const std::function<std::vector<Tensor>(Dim n)>& inputs) {
  once_per_variant(g, [&](const CompiledKernel& k) {
    for (const Dim n : {1, 3, 7, 8, 9, 16, 17, 31, 33, 67})
      for (const Guard where : {Guard::after, Guard::before})
        for (const int threads : {1, 3}) {
          INFO("n = " << n << ", threads = " << threads);
          const std::vector<Tensor> in = inputs(n);
          const Tensor want = reference::evaluate(g, std::span<const Tensor>(in)).at(0);
          const std::string report = compare(run_guarded(k, in, want, where, threads), want, tol);
          CHECK_MESSAGE(report.empty(), report);
        }
  });
}

inline void guard_pages() {
  check_guarded(layer_norm(Shape{Q, Q}, Shape{Q}), norm_tol, [](Dim n) {
    return layer_norm_inputs(Shape{5, n}, Shape{n}, std::uint64_t(n));
  });
  auto rows = [](Dim n) { return std::vector<Tensor>{uniform(Shape{5, n}, 9 + n, -8, 8)}; };
  Graph sm;
  sm.result(sm.softmax(sm.parameter(f32, {Q, Q}), -1));
  check_guarded(sm, softmax_tol, rows);
  Graph sum;
  sum.result(sum.reduce_sum(sum.parameter(f32, {Q, Q}), {-1}, true));
  check_guarded(sum, {16, 1e-6 * 67 * 8}, rows);
}

} // namespace snippets::dynamic_reduce_test
