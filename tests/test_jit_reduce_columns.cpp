// SPDX-License-Identifier: Apache-2.0
// JIT tests of reductions over middle axes, the trailing ones kept (passes/tile_columns.hpp: a
// vector of columns at a time), against the reference interpreter in double, on both ISAs, 1
// to 3 threads: every reduction over the channels of NCHW and over two middle axes, with
// column counts that are a multiple of the vector, below it, and prime (a masked vector per
// block); Softmax over the channels; the channel LayerNorm of ConvNeXt (LayerNorm2d) and
// SSD's L2 normalization as one kernel with their ops; reduced outputs with and without
// keep_dims; bf16 inputs and outputs; and what stays refused.
//
// Tolerances as test_jit_reduce_axes.cpp: the sums within 16 ulp or 1e-6 per element times the
// largest term, products of n factors 2n ulp, min and max exact; the normalizations 64 ulp or
// 1e-5 absolutely (a deviation divided by a root of a mean).
#include "error_id.hpp"
#include "jit_test_util.hpp"
#include "snippets/passes/move_reduced_axes_last.hpp"

using namespace snippets;
using namespace snippets::jit_test;

namespace {

/// Runs `model` as a Program (every Subgraph a kernel; with dynamic shapes compiled per set of
/// shapes) on both ISAs and 1 and 2 threads for each of `inputs`, against the reference.
void check_program(const Graph& model, const std::vector<std::vector<Tensor>>& inputs,
                   Tolerance tol) {
  for_each_isa([&](x64::Isa isa) {
    const Program<> program(model, {.compile = {.isa = isa}});
    for (const auto& s : program.steps()) {
      CHECK(s.kind != Program<>::StepKind::reference);
      CHECK(s.kind != Program<>::StepKind::host); // no copy back: the kernel writes y in place
    }
    for (const auto& in : inputs) {
      const auto want = reference::evaluate(model, in);
      for (int threads : {1, 2}) {
        const auto got = program.run(in, with_threads(threads));
        for (std::size_t i = 0; i < want.size(); ++i) CHECK(compare(got[i], want[i], tol) == "");
      }
    }
  });
}

/// The domain of the columns kernel compiled for `g` on `isa` (its last extent: the columns
/// of one vector).
std::vector<Dim> columns_domain(const Graph& g, x64::Isa isa) {
  return compile(g, {.isa = isa}).signature().domain;
}

} // namespace

TEST_CASE("reduce columns: every reduction over the channels, any number of columns") {
  std::uint64_t seed = 1;
  // columns (the kept extent): a multiple of 16, of 8 only, below 8, prime, one
  for (const Shape& s : {Shape{2, 24, 64}, Shape{3, 17, 40}, Shape{2, 9, 7, 7}, Shape{1, 33, 37},
                         Shape{4, 5, 3}, Shape{2, 6, 1, 8}}) {
    const std::vector<std::int64_t> axes{1};
    INFO("shape = " << s.to_string());
    const double n = static_cast<double>(s[1]);
    Graph g;
    const auto x = g.parameter(f32, s);
    const auto sum = g.reduce_sum(x, axes, true);
    g.result(sum);
    g.result(g.reduce_max(x, axes, true));
    g.result(g.reduce_min(x, axes, true));
    g.result(g.reduce_mean(x, axes, true));
    g.result(g.reduce_l2(x, axes, true));
    g.result(g.subtract(x, sum)); // a per-column value used back along the channels
    const double per = 1e-6 * n;
    check_jit(g, {uniform(s, ++seed, -2, 2)},
              {.threads = {1, 3},
               .output_tol = {{16, per * 2}, exact, exact, {16, per}, {16, 2e-6}, {16, per * 2}},
               .unroll = {1, 4}});
    Graph p;
    p.result(p.reduce_prod(p.parameter(f32, s), axes, true));
    check_jit(p, {uniform(s, ++seed, 0.9, 1.1)},
              {.tol = {2 * std::int64_t(n), 0}, .threads = {1, 3}});
  }
}

TEST_CASE("reduce columns: the kernel walks a vector of columns at a time") {
  Graph g;
  const auto x = g.parameter(f32, Shape{2, 24, 7, 7});
  g.result(g.subtract(x, g.reduce_sum(x, {1}, true)));
  // [2, 24, 49]: 49 columns are 7 blocks of 7 (the largest divisor not above the lanes)
  for_each_isa([&](x64::Isa isa) {
    CHECK(columns_domain(g, isa) == std::vector<Dim>{2, 7, 24, 7});
  });
  Graph h;
  const auto y = h.parameter(f32, Shape{1, 24, 64});
  h.result(h.subtract(y, h.reduce_sum(y, {1}, true)));
  CHECK(columns_domain(h, x64::Isa::avx2) == std::vector<Dim>{8, 24, 8});
  if (x64::host_supports(x64::Isa::avx512))
    CHECK(columns_domain(h, x64::Isa::avx512) == std::vector<Dim>{4, 24, 16});
}

TEST_CASE("reduce columns: threads that split the blocks keep whole lines of each channel") {
  // compile/signature.hpp's column_chunk_unit: with the batch dropped, threads split the blocks;
  // two threads never write one cache line of a channel where the channels start on lines, and
  // take at least 1 KiB of each channel where they do not
  struct Case {
    Shape shape;
    int avx512_threads, avx2_threads; // of 2 asked for
  };
  for (const Case& c : {Case{{1, 16, 56, 56}, 2, 2},   // blocks of 64 or 32 bytes, rows of lines
                        Case{{1, 16, 12, 12}, 2, 2},   // 9 or 18 blocks, rows of 9 lines
                        Case{{1, 768, 7, 7}, 1, 1},    // 7 blocks of 28 bytes, rows of 196 bytes
                        Case{{1, 8, 40, 60}, 2, 2},    // 150 or 300 blocks (of 16 or 8), rows of
                                                       // 9600 bytes: whole lines per unit
                        Case{{1, 8, 3, 100}, 1, 1},    // rows of 1200 bytes, not whole lines:
                                                       // one unit of at least 1 KiB
                        Case{{1, 8, 7, 100}, 2, 2},    // rows of 2800 bytes: two units
                        Case{{2, 768, 7, 7}, 2, 2}}) { // the batch is the parallel dimension
    INFO("shape = " << c.shape.to_string());
    Graph g;
    const auto x = g.parameter(f32, c.shape);
    g.result(g.subtract(x, g.reduce_mean(x, {1}, true)));
    for_each_isa([&](x64::Isa isa) {
      const CompiledKernel k = compile(g, {.isa = isa});
      CHECK(divide_work(k.signature(), 2).threads() ==
            (isa == x64::Isa::avx512 ? c.avx512_threads : c.avx2_threads));
    });
  }
}

TEST_CASE("reduce columns: two middle axes, and the kept axes merged") {
  // GroupNorm's statistics the other way round: [N, G, C/G, H, W] over G and C/G
  const Shape s{2, 3, 4, 5, 16};
  Graph g;
  const auto x = g.parameter(f32, s);
  const auto m = g.reduce_mean(x, {1, 2}, true);
  g.result(m);
  g.result(g.multiply(g.subtract(x, m), g.reduce_max(x, {-4, -3}, true)));
  check_jit(g, {uniform(s, 7, -2, 2)}, {.tol = {16, 1e-4}, .threads = {1, 3}});
}

TEST_CASE("reduce columns: Softmax over the channels is one kernel") {
  for (const Shape& s : {Shape{2, 19, 8, 8}, Shape{1, 21, 5, 7}}) {
    INFO("shape = " << s.to_string());
    Graph g;
    g.result(g.softmax(g.parameter(f32, s), 1));
    check_jit(g, {uniform(s, 3, -30, 30)}, {.tol = {16, 1e-7}, .threads = {1, 2}});
  }
}

TEST_CASE("reduce columns: LayerNorm2d and L2 normalization over the channels") {
  SUBCASE("ConvNeXt's LayerNorm2d: mean and variance over C, a scale and shift per channel") {
    for (const Shape& s : {Shape{2, 32, 14, 14}, Shape{1, 48, 8, 8}}) {
      INFO("shape = " << s.to_string());
      const Shape per_channel{s[1], 1, 1};
      Graph g;
      const auto x = g.parameter(f32, s, "x");
      const auto gamma = g.parameter(f32, per_channel, "gamma");
      const auto beta = g.parameter(f32, per_channel, "beta");
      g.result(normalize(g, x, {1}, gamma, beta), "y");
      check_jit(
          g,
          {uniform(s, 1, -3, 3), uniform(per_channel, 2, 0.5, 1.5), uniform(per_channel, 3, -1, 1)},
          {.tol = {64, 1e-5}, .threads = {1, 3}});
    }
  }
  SUBCASE("SSD's L2Norm: x / sqrt(sum over C of x^2), scaled per channel, bf16 in and out") {
    const Shape s{2, 40, 9, 9};
    Graph g;
    const auto x = g.parameter(ElementType::bf16, s, "x");
    const auto xf = g.convert(x, f32);
    const auto norm =
        g.sqrt(g.add(g.reduce_sum(g.multiply(xf, xf), {1}, true), g.scalar(f32, 1e-10)));
    const auto w = g.parameter(f32, Shape{40, 1, 1}, "w");
    g.result(g.convert(g.multiply(g.divide(xf, norm), w), ElementType::bf16), "y");
    Tensor t(ElementType::bf16, s);
    Rng rng(5);
    for (std::size_t i = 0; i < t.size(); ++i) t.set(i, rng.uniform(-6, 6));
    // one bf16 rounding at the store, after f32 sums in another order: within 1 bf16 ulp
    check_jit(g, {t, uniform(Shape{40, 1, 1}, 6, 1, 20)}, {.tol = {1 << 16, 0}, .threads = {1, 2}});
  }
}

TEST_CASE("reduce columns: a value broadcast along the columns, read after the reduction") {
  // relu(b) is computed in the first pass over the row and kept for the last in a Buffer of
  // whole rows: it is stored broadcast (InsertBroadcastMove before the Buffer's Store)
  for (const Shape& s : {Shape{3, 2}, Shape{2, 5, 40}}) {
    INFO("shape = " << s.to_string());
    const Shape per_channel = s.rank() == 2 ? Shape{3, 1} : Shape{5, 1};
    Graph g;
    const auto x = g.parameter(f32, s);
    const auto b = g.parameter(f32, per_channel);
    g.result(g.add(g.relu(b), g.divide(x, g.reduce_mean(x, {-2}, true))));
    check_jit(g, {uniform(s, 12, 0.5, 1), uniform(per_channel, 13, -1, 1)},
              {.tol = {16, 1e-5}, .threads = {1, 2}});
  }
}

TEST_CASE("reduce columns: a row whose lines share cache sets goes through a row Buffer") {
  // channels 1 KiB apart (f32 [.., 64, 256], bf16 [.., 64, 512]): 64 lines in 4 L1 sets, so
  // the first pass copies the row into scratch and the second reads it there
  // (passes/insert_buffers.hpp: lines_collide); 1000 B apart: no copy
  for (const auto& [s, type, copied] : {std::tuple{Shape{2, 64, 16, 16}, f32, true},
                                        std::tuple{Shape{2, 64, 512}, ElementType::bf16, true},
                                        std::tuple{Shape{2, 64, 250}, f32, false}}) {
    INFO("shape = " << s.to_string() << " " << to_string(type));
    Graph g;
    const auto x = g.parameter(type, s);
    const auto xf = type == f32 ? x : g.convert(x, f32);
    g.result(g.subtract(xf, g.reduce_sum(xf, {1}, true)));
    for_each_isa([&](x64::Isa isa) {
      CHECK((compile(g, {.isa = isa}).signature().scratch_bytes > 0) == copied);
    });
    Tensor t(type, s);
    Rng rng(31);
    for (std::size_t i = 0; i < t.size(); ++i) t.set(i, rng.uniform(-2, 2));
    check_jit(g, {t}, {.tol = {16, 1.3e-4}, .threads = {1, 3}});
  }
}

TEST_CASE("reduce columns: reduced outputs without keep_dims") {
  const Shape s{3, 11, 24};
  Graph g;
  const auto x = g.parameter(f32, s);
  g.result(g.reduce_max(x, {1}, false));
  g.result(g.exp(g.subtract(x, g.reduce_max(x, {1}, true))));
  // Exp's 2 ulp, and x - max rounded to f32 first: up to |x - max| <= 8 half-ulps more
  check_jit(g, {uniform(s, 9, -4, 4)}, {.threads = {1, 2}, .output_tol = {exact, {2 + 8, 0}}});
}

TEST_CASE("reduce columns: masked vectors of columns stay inside the tensors") {
  // 7 and 37 columns: every vector is masked; the per-column sums are stored masked too
  for (const Shape& s : {Shape{2, 5, 7}, Shape{3, 4, 37}}) {
    INFO("shape = " << s.to_string());
    for (const bool reduced : {false, true}) {
      Graph g;
      const auto x = g.parameter(f32, s);
      const auto sum = g.reduce_sum(x, {1}, true);
      g.result(reduced ? sum : g.subtract(x, sum));
      const std::vector<Tensor> in{uniform(s, 11, -2, 2)};
      const Tensor want = reference::evaluate(g, in)[0];
      for_each_isa([&](x64::Isa isa) {
        const CompiledKernel k = compile(g, {.isa = isa});
        for (const Guard where : {Guard::before, Guard::after})
          for (const int threads : {1, 2})
            CHECK(compare(run_guarded(k, in, want, where, threads), want, {16, 2e-5}) == "");
      });
    }
  }
}

TEST_CASE("reduce columns: what stays refused") {
  const Shape s{2, 8, 4, 16};
  Graph mixed; // rows and columns in one kernel
  const auto x = mixed.parameter(f32, s);
  mixed.result(mixed.add(mixed.reduce_sum(x, {1}, true), mixed.reduce_sum(x, {1, 2, 3}, true)));
  CHECK(error_id([&] { compile(mixed); }) == "snippets.compile.reduce_axis");
  Graph apart; // kept axes an input walks apart: [1,1,4,1] along [.., 4, 16]
  const auto y = apart.parameter(f32, s);
  apart.result(apart.multiply(apart.subtract(y, apart.reduce_sum(y, {1}, true)),
                              apart.parameter(f32, Shape{4, 1})));
  CHECK(error_id([&] { compile(apart); }) == "snippets.compile.reduce_axis");
  Graph part; // a part of an input, read in place (slice_reads.hpp): not split into columns
  const auto w = part.parameter(f32, Shape{2, 8, 32});
  part.result(part.reduce_sum(part.slice(w, -1, 16, 16), {1}, true));
  CHECK(error_id([&] { compile(part); }) == "snippets.compile.reduce_axis");
  Graph gaps; // not one run of axes
  const auto z = gaps.parameter(f32, s);
  gaps.result(gaps.reduce_sum(z, {0, 2}, true));
  CHECK(error_id([&] { compile(gaps); }) == "snippets.compile.reduce_axis");
}

TEST_CASE("reduce columns: models get one kernel per normalization, in a Program too") {
  SUBCASE("LayerNorm2d and a Softmax over the channels, with ops around them") {
    const Shape s{2, 24, 10, 10}, per_channel{24, 1, 1};
    Graph model;
    const auto x = model.parameter(f32, s, "x");
    const auto gamma = model.parameter(f32, per_channel, "gamma");
    const auto beta = model.parameter(f32, per_channel, "beta");
    const auto y = normalize(model, model.relu(x), {1}, gamma, beta);
    model.result(model.multiply(model.softmax(y, 1), model.scalar(f32, 2.0)), "y");
    CHECK(!passes::MoveReducedAxesLast::finds_candidates(model));
    CHECK(kernels_of(model) == 1);
    check_program(
        model,
        {{uniform(s, 1, -3, 3), uniform(per_channel, 2, 0.5, 1.5), uniform(per_channel, 3, -1, 1)}},
        {64, 1e-5});
  }
  SUBCASE("dynamic batch and size: compiled per set of shapes, without keep_dims too") {
    Graph model;
    const auto x = model.parameter(f32, Shape{dynamic, 12, dynamic}, "x");
    model.result(model.subtract(x, model.reduce_mean(x, {1}, true)), "centred");
    model.result(model.reduce_max(x, {1}, false), "max");
    CHECK(!passes::MoveReducedAxesLast::finds_candidates(model));
    check_program(model, {{uniform(Shape{2, 12, 40}, 4, -2, 2)}, {uniform(Shape{3, 12, 9}, 5)}},
                  {16, 2e-5});
  }
}
