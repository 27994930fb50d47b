// SPDX-License-Identifier: Apache-2.0
// JIT tests of reductions over the innermost axis and Softmax (passes/decompose_softmax.hpp,
// passes/decompose_reductions.hpp, passes/insert_buffers.hpp, target/x64/emitters/reduce.hpp),
// against the reference interpreter in double, on both ISAs, 1 and 3 threads.
//
// Tolerances: ReduceMax is exact (max rounds nothing). ReduceSum adds in a different order
// than the reference (one accumulator per lane, then a butterfly): <= 16 ulp of the sum, or
// 1e-6 times the sum of magnitudes where cancellation leaves a small result. Softmax adds the
// exponentials' approximation (<= 2 ulp), the order of the sum and a reciprocal: <= 16 ulp, or
// 1e-9 absolutely for results that underflow towards 0.
#include "jit_test_util.hpp"

using namespace snippets;
using namespace snippets::jit_test;

namespace {

constexpr Dim row_sizes[] = {1, 9, 16, 17, 19, 37, 49, 50, 128, 129, 130, 1024};
constexpr Tolerance softmax_tol{16, 1e-9};

} // namespace

TEST_CASE("reduce: ReduceMax over the innermost axis is exact for every row length") {
  std::uint64_t seed = 1;
  for (Dim n : row_sizes) {
    for (const Shape& s : {Shape{n}, Shape{5, n}, Shape{2, 3, n}}) {
      INFO("shape = " << s.to_string());
      Graph g;
      g.result(g.reduce_max(g.parameter(f32, s), {-1}, true));
      check_jit(g, {make_tensor(s, ++seed)}, {.tol = exact, .threads = {1, 3}});
    }
  }
}

TEST_CASE("reduce: ReduceSum over the innermost axis for every row length") {
  std::uint64_t seed = 50;
  for (Dim n : row_sizes) {
    for (const Shape& s : {Shape{n}, Shape{7, n}}) {
      INFO("shape = " << s.to_string());
      Graph g;
      const auto x = g.parameter(f32, s);
      g.result(g.reduce_sum(x, {static_cast<std::int64_t>(s.rank()) - 1}, true));
      const double abs = 1e-6 * static_cast<double>(n) * 4;
      check_jit(g, {uniform(s, ++seed, -4, 4)},
                {.tol = {16, abs}, .threads = {1, 3}, .unroll = {1, 4}});
    }
  }
}

TEST_CASE("reduce: NaN and infinities propagate like the reference") {
  for (Dim n : {Dim{5}, Dim{16}, Dim{37}}) {
    Tensor t = uniform(Shape{4, n}, 7, -3, 3);
    t.set(0 * n + n - 1, qnan); // in the tail (or last lane)
    t.set(1 * n + 0, inf);
    t.set(2 * n + n / 2, -inf);
    t.set(3 * n + 1, qnan);
    for (const int kind : {0, 1, 2}) { // max, max with ignore_nan, sum
      Graph g;
      const auto x = g.parameter(f32, Shape{4, n});
      const ir::ReduceMax max{{-1}, true, kind == 1};
      g.result(kind == 2 ? g.reduce_sum(x, {-1}, true) : g.make(max, {x})[0]);
      check_jit(g, {t}, {.tol = {16, 1e-5}, .threads = {1, 2}});
    }
    Graph g; // Softmax, whose max leaves NaN out: the NaN row is NaN through the sum
    g.result(g.softmax(g.parameter(f32, Shape{4, n}), -1));
    check_jit(g, {t}, {.tol = softmax_tol, .threads = {1, 2}, .unroll = {1, 4}});
  }
}

TEST_CASE("reduce: a NaN-ignoring ReduceMax over rows of one element gives -inf for a NaN") {
  // DecomposeSoftmax drops reductions over an axis of extent 1; not this one
  Tensor t = uniform(Shape{5, 1}, 8, -3, 3);
  t.set(1, qnan);
  t.set(3, inf);
  for (const bool ignore_nan : {false, true}) {
    Graph g;
    g.result(g.make(ir::ReduceMax{{-1}, true, ignore_nan}, {g.parameter(f32, Shape{5, 1})})[0]);
    const Tensor want = reference::evaluate(g, std::vector<Tensor>{t})[0];
    CHECK((ignore_nan ? want.at(1) == -inf : std::isnan(want.at(1)))); // the oracle itself
    check_jit(g, {t}, {.threads = {1, 2}});
  }
}

TEST_CASE("softmax: every row length, with large magnitudes") {
  std::uint64_t seed = 200;
  for (Dim n : row_sizes) {
    for (const double scale : {1.0, 80.0, 1e4}) {
      INFO("n = " << n << ", scale = " << scale);
      Graph g;
      g.result(g.softmax(g.parameter(f32, Shape{3, n}), -1));
      check_jit(g, {uniform(Shape{3, n}, ++seed, -scale, scale)},
                {.tol = softmax_tol, .threads = {1, 3}, .unroll = {1, 4}});
    }
  }
}

TEST_CASE("softmax: 4-D input and a positive axis") {
  Graph g;
  g.result(g.softmax(g.parameter(f32, Shape{2, 3, 5, 37}), 3));
  check_jit(g, {uniform(Shape{2, 3, 5, 37}, 3, -10, 10)}, {.tol = softmax_tol, .threads = {1, 2}});
}

TEST_CASE("softmax: AddSoftmax with broadcast inputs and ops after it in one kernel") {
  for (Dim n : {Dim{17}, Dim{64}, Dim{130}}) {
    INFO("n = " << n);
    Graph g;
    const auto x = g.parameter(f32, Shape{2, 4, 3, n});
    const auto mask = g.parameter(f32, Shape{2, 1, 1, n}); // broadcast over heads and rows
    const auto bias = g.parameter(f32, Shape{1, 4, 3, 1}); // broadcast along the row
    const auto scale = g.scalar(f32, 0.125);
    const auto s = g.softmax(g.add(g.add(g.multiply(x, scale), mask), bias), -1);
    g.result(g.multiply(s, g.parameter(f32, Shape{1, 1, 1, n})));
    check_jit(g,
              {uniform(Shape{2, 4, 3, n}, 1, -20, 20), uniform(Shape{2, 1, 1, n}, 2, -5, 0),
               uniform(Shape{1, 4, 3, 1}, 3, -1, 1), uniform(Shape{1, 1, 1, n}, 4, 0, 2)},
              {.tol = softmax_tol, .threads = {1, 3}});
  }
}

TEST_CASE("reduce: a per-row output next to a full output of one kernel") {
  Graph g;
  const auto x = g.parameter(f32, Shape{6, 33});
  const auto m = g.reduce_max(x, {-1}, true);
  g.result(g.subtract(x, m));
  g.result(g.multiply(m, g.scalar(f32, 2.0)));
  check_jit(g, {uniform(Shape{6, 33}, 9, -3, 3)}, {.tol = exact, .threads = {1, 2}});
}

TEST_CASE("reduce: layer-norm style chain (two reductions in sequence, a buffer reused)") {
  for (Dim n : {Dim{7}, Dim{48}, Dim{129}}) {
    INFO("n = " << n);
    Graph g;
    const auto x = g.parameter(f32, Shape{5, n});
    const auto inv_n = g.scalar(f32, 1.0 / static_cast<double>(n));
    const auto mean = g.multiply(g.reduce_sum(x, {-1}, true), inv_n);
    const auto d = g.subtract(x, mean);
    const auto var = g.multiply(g.reduce_sum(g.multiply(d, d), {-1}, true), inv_n);
    const auto y = g.divide(d, g.sqrt(g.add(var, g.scalar(f32, 1e-5))));
    g.result(g.relu(y));
    check_jit(g, {uniform(Shape{5, n}, n, -3, 3)}, {.tol = {64, 1e-5}, .threads = {1, 2}});
  }
}

TEST_CASE("softmax: tails never touch memory past the tensors") {
  for (Dim n : {Dim{9}, Dim{37}, Dim{130}}) {
    INFO("n = " << n);
    Graph g;
    g.result(g.softmax(g.parameter(f32, Shape{4, n}), -1));
    const Tensor x = uniform(Shape{4, n}, 11, -5, 5);
    const Tensor want = reference::evaluate(g, {x})[0];
    for_each_isa([&](x64::Isa isa) {
      const CompiledKernel k = compile(g, {.isa = isa});
      for (const Guard where : {Guard::after, Guard::before}) {
        GuardedBuffer in(x.byte_size(), where), out(x.byte_size(), where);
        std::memcpy(in.data(), x.data(), x.byte_size());
        const void* ins[] = {in.data()};
        void* outs[] = {out.data()};
        k.run_unchecked(ins, outs, with_threads(2));
        Tensor got(f32, Shape{4, n});
        std::memcpy(got.data(), out.data(), x.byte_size());
        const std::string report = compare(got, want, softmax_tol);
        CHECK_MESSAGE(report.empty(), report);
      }
    });
  }
}

TEST_CASE("reduce: errors name the op and what to do") {
  SUBCASE("axes that are not one run (over middle axes: test_jit_reduce_columns.cpp)") {
    Graph g;
    g.result(g.reduce_sum(g.parameter(f32, Shape{4, 8, 3}), {0, 2}, true));
    CHECK(error_id([&] { compile(g); }) == "snippets.compile.reduce_axis");
    Graph s; // a Softmax over the channels beside a MatMul
    const auto a = s.parameter(f32, Shape{4, 8});
    s.result(s.softmax(s.matmul(a, s.parameter(f32, Shape{8, 8})), 0));
    CHECK(error_id([&] { compile(s); }) == "snippets.compile.reduce_axis");
  }
  SUBCASE("keep_dims = false, read by an op of the body (as an output: test_jit_reduce_axes.cpp)") {
    Graph g;
    g.result(g.abs(g.reduce_max(g.parameter(f32, Shape{4, 8}), {-1}, false)));
    CHECK(error_id([&] { compile(g); }) == "snippets.compile.reduce_axis");
  }
  SUBCASE("dynamic shapes and another axis (the innermost one: test_dynamic_reduce.cpp)") {
    Graph g;
    g.result(g.softmax(g.parameter(f32, Shape{dynamic, 8}), 0));
    CHECK(error_id([&] { compile(g); }) == "snippets.compile.dynamic_reduce");
  }
}

TEST_CASE("softmax: the tokenizer fuses a transformer-style tail into one kernel") {
  // (x * scale + mask) -> Softmax -> * v_gate; Softmax over axis 0 with the Relu in a kernel of
  // columns (passes/tile_columns.hpp), which the attention tail's rows do not join
  Graph model;
  const auto x = model.parameter(f32, Shape{2, 6, 40}, "scores");
  const auto mask = model.parameter(f32, Shape{1, 1, 40}, "mask");
  const auto gate = model.parameter(f32, Shape{2, 6, 40}, "gate");
  const auto s = model.softmax(model.add(model.multiply(x, model.scalar(f32, 0.25)), mask), -1);
  model.result(model.multiply(s, gate), "y");
  model.result(model.softmax(model.relu(gate), 0), "z");
  const Graph tokenized = passes::tokenize(model);
  std::vector<std::string> bodies;
  for (ir::NodeId id = 0; id < tokenized.size(); ++id)
    if (const auto* sg = std::get_if<ir::Subgraph<x64::Traits>>(&tokenized.node(id).op)) {
      std::string names;
      for (const auto& n : sg->absorbed) names += n + ",";
      bodies.push_back(names);
    }
  REQUIRE(bodies.size() == 2); // the attention tail, and Relu before the axis-0 Softmax
  const bool tail_first = bodies[0].find("Add") != std::string::npos;
  const std::string& tail = bodies[tail_first ? 0 : 1];
  const std::string& relu = bodies[tail_first ? 1 : 0];
  CHECK(tail.find("Softmax") != std::string::npos);
  CHECK(tail.find("Relu") == std::string::npos);
  CHECK(relu.find("Relu") != std::string::npos);
  CHECK(relu.find("Softmax") != std::string::npos);
  CHECK(relu.find("Add") == std::string::npos);

  std::vector<Tensor> in{uniform(Shape{2, 6, 40}, 1, -9, 9), uniform(Shape{1, 1, 40}, 2, -3, 0),
                         uniform(Shape{2, 6, 40}, 3, -1, 1)};
  const auto want = reference::evaluate(model, in);
  for_each_isa([&](x64::Isa isa) {
    ProgramOptions<x64::Traits> opt;
    opt.compile.isa = isa;
    const Program<> program(model, opt);
    check_steps_are_kernels(program);
    const auto got = program.run(in, with_threads(2));
    CHECK(compare(got[0], want[0], softmax_tol) == "");
    CHECK(compare(got[1], want[1], softmax_tol) == "");
  });
}

TEST_CASE("softmax: bf16 and f16 in and out, u8 rows summed, f32 compute") {
  // the reference rounds once at the end; the kernel rounds the input on load and the result
  // on store: within 1 ulp of bf16 (2^16 ulp of f32) or of f16 (2^13)
  for (const ElementType type : {ElementType::bf16, ElementType::f16}) {
    INFO("type = " << to_string(type));
    Graph g;
    g.result(g.softmax(g.parameter(type, Shape{5, 37}), -1));
    Tensor x(type, Shape{5, 37});
    Rng rng(17);
    for (std::size_t i = 0; i < x.size(); ++i) x.set(i, rng.uniform(-6, 6));
    const std::int64_t ulp = type == ElementType::bf16 ? 1 << 16 : 1 << 13;
    check_jit(g, {x}, {.tol = {ulp, 1e-6}, .threads = {1, 2}});
  }
  Graph g;
  const auto x = g.parameter(ElementType::u8, Shape{4, 300});
  g.result(g.reduce_sum(g.convert(x, f32), {-1}, true));
  Tensor t(ElementType::u8, Shape{4, 300});
  for (std::size_t i = 0; i < t.size(); ++i) t.set(i, double(i * 37 % 256));
  check_jit(g, {t}, {.tol = exact}); // integer sums below 2^24 are exact in any order
}

TEST_CASE("softmax: MHA-style inputs transposed on the way in") {
  // scores [B, S, H, S'] read as [B, H, S, S'] (innermost kept) and K-like [B, S', H, S] read
  // as [B, H, S, S'] (innermost gathered)
  for (const auto& order : {std::vector<std::size_t>{0, 2, 1, 3}, {0, 2, 3, 1}}) {
    INFO("order = " << order[1] << order[2] << order[3]);
    Graph g;
    const auto x = g.parameter(f32, Shape{2, 19, 3, 19});
    const auto mask = g.parameter(f32, Shape{1, 1, 1, 19});
    const auto t = g.apply(ir::Transpose{order}, x);
    g.result(g.softmax(g.add(g.multiply(t, g.scalar(f32, 0.125)), mask), -1));
    check_jit(g, {uniform(Shape{2, 19, 3, 19}, 5, -30, 30), uniform(Shape{1, 1, 1, 19}, 6, -4, 0)},
              {.tol = softmax_tol, .threads = {1, 2}});
  }
}
