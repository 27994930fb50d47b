// SPDX-License-Identifier: Apache-2.0
// Tests of runtime/work_division.hpp: how the executor shares a kernel's domain out among
// threads, checked without the cores: divide_work() is what CompiledKernel runs, so its shares
// for 64 and 192 threads are those a server would run. For the benchmark shapes, how many
// threads get work and the largest share against the mean; for any space, that the calls
// cover every index exactly once; and, on this host, results against the reference
// interpreter with 64 threads (also through OMP_NUM_THREADS=64: the ctest
// work_division.omp_num_threads_64).
#include <omp.h>

#include <cstdlib>

#include "jit_test_util.hpp"

using namespace snippets;
using namespace snippets::jit_test;

namespace {

struct Stats {
  int busy = 0;
  double max_over_mean = 0;
  double speedup = 0; // all the work over the largest share's on paper (WorkCall::load)
};

/// Threads with work and the largest share over the mean share of `threads`; checks that the
/// calls cover the space exactly once, each a rectangle the kernel can run.
Stats check_division(const WorkDivision& w, int threads) {
  const WorkSpace& s = w.space();
  REQUIRE(w.threads() <= threads);
  std::vector<std::uint8_t> seen(std::size_t(s.items()), 0);
  std::int64_t most = 0;
  Stats st;
  for (int i = 0; i < w.threads(); ++i) {
    const WorkShare share = w.share(i);
    REQUIRE(share.size <= 3);
    for (int c = 0; c < share.size; ++c) {
      const WorkCall& call = share.calls[std::size_t(c)];
      REQUIRE(call.outer_count > 0);
      REQUIRE(call.inner_count > 0);
      // a part of the inner dimension is taken for one outer unit only, from a unit's start
      if (call.inner_count != s.inner && !s.rectangles) REQUIRE(call.outer_count <= s.outer_unit);
      if (s.inner_unit > 0) REQUIRE(call.inner_begin % s.inner_unit == 0);
      REQUIRE(call.outer_begin % s.outer_unit == 0);
      REQUIRE(call.outer_begin + call.outer_count <= s.outer);
      REQUIRE(call.inner_begin + call.inner_count <= s.inner);
      for (std::int64_t o = call.outer_begin; o < call.outer_begin + call.outer_count; ++o)
        for (std::int64_t n = call.inner_begin; n < call.inner_begin + call.inner_count; ++n)
          ++seen[std::size_t(o * s.inner + n)];
    }
    st.busy += share.items() > 0;
    most = std::max(most, share.items());
  }
  CHECK(std::all_of(seen.begin(), seen.end(), [](std::uint8_t x) { return x == 1; }));
  st.max_over_mean = double(most) * threads / double(s.items());
  st.speedup = double(s.items()) / w.max_load();
  return st;
}

/// One benchmark shape's kernel and what its division must reach.
struct Shape_ {
  std::string name;
  CompiledKernel kernel;
  bool bounded = true; // at least 90% busy and no share above 1.25x the mean
};

Graph attention(Dim s, Dim h, Dim d, bool mask = true) {
  Graph g;
  const auto q = g.transpose(g.parameter(f32, Shape{1, s, h, d}, "q"), {0, 2, 1, 3});
  const auto k = g.transpose(g.parameter(f32, Shape{1, s, h, d}, "k"), {0, 2, 3, 1});
  const auto v = g.transpose(g.parameter(f32, Shape{1, s, h, d}, "v"), {0, 2, 1, 3});
  auto x = g.multiply(g.matmul(q, k), g.constant(f32, Shape{1}, {0.125}, "scale"));
  if (mask) x = g.add(x, g.parameter(f32, Shape{1, h, s, s}, "mask"));
  g.result(g.transpose(g.matmul(g.softmax(x, -1), v), {0, 2, 1, 3}), "out");
  return g;
}

/// `layers` x relu(x W + b), x [lead..., m, width], constant weights.
Graph mlp_chain(Shape x_shape, Dim width, int layers) {
  Graph g;
  const Dim in = x_shape[x_shape.rank() - 1];
  ir::Value x = g.parameter(f32, x_shape, "x");
  for (int l = 0; l < layers; ++l) {
    const Dim k = l == 0 ? in : width;
    const auto w = uniform(Shape{k, width}, std::uint64_t(l + 1), -0.1, 0.1);
    x = g.relu(g.add(g.matmul(x, g.constant(f32, Shape{k, width}, w.values().v, "W")),
                     g.parameter(f32, Shape{width}, "b")));
  }
  g.result(x);
  return g;
}

Graph gemm(Dim m, Dim k, Dim n) {
  Graph g;
  g.result(g.matmul(g.parameter(f32, Shape{m, k}), g.parameter(f32, Shape{k, n})));
  return g;
}

/// LayerNorm over rows of `cols` (as bench_norm spells it).
Graph layer_norm(Dim rows, Dim cols) {
  Graph g;
  const auto x = g.parameter(f32, Shape{rows, cols});
  const auto gamma = g.parameter(f32, Shape{cols}), beta = g.parameter(f32, Shape{cols});
  const auto n = g.scalar(f32, double(cols));
  const auto d = g.subtract(x, g.divide(g.reduce_sum(x, {-1}), n));
  const auto var = g.divide(g.reduce_sum(g.multiply(d, d), {-1}), n);
  const auto y = g.divide(d, g.sqrt(g.add(var, g.scalar(f32, 1e-5))));
  g.result(g.add(g.multiply(y, gamma), beta));
  return g;
}

Graph eltwise(const Shape& s) {
  Graph g;
  g.result(g.relu(g.add(g.parameter(f32, s), g.parameter(f32, s))));
  return g;
}

void report(const std::string& name, const WorkDivision& w, int threads, const Stats& st) {
  MESSAGE(name << ", " << threads << " threads: " << w.units() << " units"
               << std::string(w.two_d() ? " (2-D)" : "") << ", " << st.busy
               << " busy, largest share " << st.max_over_mean << "x the mean, " << st.speedup
               << "x one thread on paper");
}

} // namespace

TEST_CASE("work division: every index once, in at most three calls, for any space") {
  for (const std::int64_t outer : {1, 2, 3, 12, 13, 67})
    for (const std::int64_t outer_unit : {1, 5})
      for (const std::int64_t inner : {1, 7, 128, 130})
        for (const std::int64_t unit : {0, 1, 6, 8})
          for (const int threads : {1, 2, 3, 5, 7, 64, 192}) {
            INFO(outer << " in units of " << outer_unit << " x " << inner << " in units of " << unit
                       << ", " << threads);
            const WorkDivision w = divide_work(WorkSpace{outer, outer_unit, inner, unit}, threads);
            const Stats st = check_division(w, threads);
            CHECK(st.busy == w.threads());
            CHECK(w.threads() == std::min<std::int64_t>(threads, w.units()));
            // with work a part of inner repeats, 2-D only where it is less on paper
            const WorkDivision flat = divide_work(WorkSpace{outer, outer_unit, inner, 0}, threads);
            for (const bool rectangles : {false, true}) {
              // rectangles: a grid, one call per thread, never more work than the rows alone
              const WorkSpace grid{outer, outer_unit, inner, unit, 0, rectangles};
              const WorkDivision wg = divide_work(grid, threads);
              check_division(wg, threads);
              if (rectangles && wg.two_d()) CHECK(wg.grid_cols() > 0);
              if (rectangles) CHECK(wg.max_load() <= flat.max_load());
              // with work a part of inner repeats, 2-D only where it is less on paper
              const WorkSpace shared{outer, outer_unit, inner, unit, 0.5, rectangles};
              const WorkDivision ws = divide_work(shared, threads);
              check_division(ws, threads);
              CHECK(ws.max_load() <= flat.max_load());
              if (ws.two_d()) CHECK(ws.max_load() < flat.max_load());
            }
          }
  // a flat domain in main-loop steps: the last chunk carries the remainder
  for (const int threads : {1, 2, 3, 64}) {
    const WorkDivision w = divide_work(WorkSpace{1000, 32, 1, 0}, threads);
    CHECK_FALSE(w.two_d());
    check_division(w, threads);
  }
}

TEST_CASE("work division: one and two threads run one call each, as before the division") {
  const WorkDivision one = divide_work(WorkSpace{12, 1, 128, 8}, 1);
  CHECK_FALSE(one.two_d());
  CHECK(one.share(0).size == 1);
  CHECK(one.share(0).items() == 12 * 128);
  const WorkDivision two = divide_work(WorkSpace{12, 1, 128, 8}, 2);
  CHECK_FALSE(two.two_d()); // 12 heads: 6 each
  CHECK(two.share(1).calls[0].outer_begin == 6);
  CHECK(two.share(1).calls[0].inner_count == 128);
  // too few heads for the threads: blocks of rows as well
  CHECK(divide_work(WorkSpace{12, 1, 128, 8}, 8).two_d());
  CHECK(divide_work(WorkSpace{1, 1, 128, 8}, 2).two_d());
}

TEST_CASE("work division: the benchmark shapes on 64 and 192 threads") {
  // Not bounded, the MLP chains: their next product reads whole rows of the one before, so
  // only the last product's columns divide without the threads synchronising between layers,
  // and a call that takes a part of them computes all of the products before (below); with
  // 8 or 128 rows that leaves 8 to 32 units (docs/benchmarks.md, Many cores, on paper).
  std::vector<Shape_> shapes;
  shapes.push_back({"attention [1,128,12,64]", compile(attention(128, 12, 64)), true});
  shapes.push_back({"MLP chain 3x256, M = 8", compile(mlp_chain(Shape{8, 256}, 256, 3)), false});
  shapes.push_back(
      {"MLP chain 3x256, M = 128", compile(mlp_chain(Shape{128, 256}, 256, 3)), false});
  shapes.push_back(
      {"MLP chain [1,8,1024] 2x1024", compile(mlp_chain(Shape{1, 8, 1024}, 1024, 2)), false});
  shapes.push_back({"GEMM 1024^3", compile(gemm(1024, 1024, 1024)), true});
  const Dim ln_rows = (Dim{64} << 20) / (4 * 768);
  shapes.push_back({"LayerNorm rows of 768, 64 MiB", compile(layer_norm(ln_rows, 768)), true});
  shapes.push_back({"elementwise [8,3,224,224]", compile(eltwise(Shape{8, 3, 224, 224})), true});
  for (const Shape_& s : shapes)
    for (const int threads : {2, 8, 32, 64, 192}) { // docs/benchmarks.md's table
      INFO(s.name << ", " << threads << " threads");
      const WorkDivision w = divide_work(s.kernel.signature(), threads);
      const Stats st = check_division(w, threads);
      report(s.name, w, threads, st);
      // every kernel gives each unit it offers a thread
      CHECK(st.busy == std::min<std::int64_t>(threads, w.units()));
      if (!s.bounded || threads < 64) continue;
      CHECK(st.busy >= 0.9 * threads);
      CHECK(st.max_over_mean <= 1.25);
    }
  // MLP chains: blocks of rows times the last product's panels (4 of 64 columns on AVX-512)
  // where that is less work on paper, the products before it repeated per call
  auto panels = [](const KernelSignature& sig, Dim n) {
    return (n + sig.inner_unit - 1) / sig.inner_unit;
  };
  const KernelSignature& m8 = shapes[1].kernel.signature();
  CHECK(m8.inner_shared == doctest::Approx(2.0 / 3));
  for (const int threads : {64, 192}) { // a unit each: 4 rows x (2/3 + 1/3 of a panel's part)
    const WorkDivision w = divide_work(m8, threads);
    CHECK(w.two_d());
    CHECK(w.units() == 2 * panels(m8, 256)); // (4 + 4 rows: a chain keeps two blocks) x panels
    const double largest = 4 * (2.0 / 3 + 1.0 / (3 * double(panels(m8, 256))));
    CHECK(double(w.space().items()) / w.max_load() == doctest::Approx(8 / largest));
  }
  const KernelSignature& m128 = shapes[2].kernel.signature();
  CHECK_FALSE(divide_work(m128, 2).two_d()); // 4 blocks of 32 rows (8 x 3 tiles): 2 each
  CHECK(divide_work(m128, 8).two_d());       // 1-D would leave 4 threads idle
  CHECK(divide_work(m128, 64).two_d());
  const KernelSignature& wide = shapes[3].kernel.signature();
  CHECK(divide_work(wide, 64).units() == 2 * panels(wide, 1024));
  // GEMM 1024^3: blocks of rows (35 of 30 on AVX-512) times panels (16 of 64 columns)
  const KernelSignature& mm = shapes[4].kernel.signature();
  CHECK(divide_work(mm, 64).units() == (1023 + mm.chunk_unit) / mm.chunk_unit * panels(mm, 1024));
  CHECK(mm.inner_shared == 0);
  // attention: heads times blocks of 8 query rows (192 units)
  const KernelSignature& att = shapes[0].kernel.signature();
  CHECK(att.inner_unit == 8);
  // without RunOptions::threads, a run asks for a thread per ~16K elements of work: attention
  // counts 64 x 128 + 128 x 64 multiply-adds per output element (over the vector lanes)
  CHECK(att.element_cost * (att.vector_bytes / 4) == 256);
  CHECK(divide_work(att, 192).share(191).items() == 8);
  CHECK(divide_work(att, 64).share(63).items() == 24);
}

TEST_CASE("work division: a dynamic kernel with a small outer dimension shares the next one") {
  Graph g;
  const auto a = g.parameter(f32, Shape{dynamic, dynamic, dynamic});
  const auto bias = g.parameter(f32, Shape{1, dynamic, 1});
  g.result(g.add(a, bias));
  const CompiledKernel k = compile(g);
  const std::vector<Shape> shapes{Shape{2, 64, 4096}, Shape{1, 64, 1}};
  const RuntimeConfig cfg = k.configure(shapes);
  for (const int threads : {2, 8, 32, 64, 192}) {
    const WorkDivision w = divide_work(k.signature(), cfg, threads);
    const Stats st = check_division(w, threads);
    report("dynamic [2,64,4096] + [1,64,1]", w, threads, st);
    CHECK(st.busy == std::min(threads, 128));
    if (threads < 8) continue; // 2 threads: one outer index each, as before
    CHECK(w.two_d());
    CHECK(w.units() == 128);
    CHECK(st.max_over_mean <= (threads == 192 ? 1.5 : 1.0));
  }
  // and the results with 64 threads, on this host: exact (one rounding, as the reference)
  const std::vector<Tensor> in{uniform(shapes[0], 1), uniform(shapes[1], 2)};
  const std::vector<Tensor> want = reference::evaluate(g, std::span<const Tensor>(in));
  for (const int threads : {5, 64}) {
    INFO("threads = " << threads);
    const Tensor got = k.run(std::span<const Tensor>(in), with_threads(threads))[0];
    CHECK(compare(got, want[0], exact).empty());
  }
}

TEST_CASE("work division: RunOptions::threads beyond the processors is honoured up to "
          "max_threads()") {
  CHECK(max_threads() >= 256);
  const CompiledKernel k = compile(attention(40, 3, 16, false));
  const WorkDivision w = divide_work(k.signature(), 64);
  CHECK(w.two_d());
  CHECK(w.threads() == 15); // 3 heads x 5 blocks of 8 rows
}

TEST_CASE("work division: attention with OMP_NUM_THREADS threads against the reference") {
  // the ctest work_division.omp_num_threads_64 runs this with OMP_NUM_THREADS=64
  const char* env = std::getenv("OMP_NUM_THREADS");
  if (env && std::atoi(env) > 0) CHECK(omp_get_max_threads() == std::atoi(env));
  const Graph g = attention(100, 3, 32); // 100 rows: blocks of 8 and a tail of 4
  const std::vector<Shape> in_shapes{Shape{1, 100, 3, 32}, Shape{1, 100, 3, 32},
                                     Shape{1, 100, 3, 32}, Shape{1, 3, 100, 100}};
  std::vector<Tensor> in;
  std::uint64_t seed = 5;
  for (const Shape& s : in_shapes) in.push_back(uniform(s, ++seed, -2, 2));
  const Tensor want = reference::evaluate(g, std::span<const Tensor>(in))[0];
  const CompiledKernel k = compile(g);
  // the default thread count (OMP_NUM_THREADS, as many as the work keeps busy: 2-D for 64),
  // and 64 and 7 asked for
  for (const int threads : {0, 7, 64}) {
    INFO("threads = " << threads);
    const Tensor got = k.run(std::span<const Tensor>(in), with_threads(threads))[0];
    // outputs are averages of V (|v| <= 2) with probabilities off by a few hundred ulp
    CHECK(compare(got, want, Tolerance{64, 1e-5}).empty());
  }
}
