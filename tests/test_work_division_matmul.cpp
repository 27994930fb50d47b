// SPDX-License-Identifier: Apache-2.0
// Tests of MatMul kernels whose calls take blocks of rows times ranges of B's column panels
// (runtime/work_division.hpp; ir::Brgemm::column_range, target/x64/emitters/brgemm.hpp): a
// product without batch dimensions divided among 7 and 64 threads, where the division is 2-D,
// against the reference interpreter in double and bit for bit against the same kernel on one
// thread (each output element is summed by the same instructions whichever call computes it).
// Tails: M not a multiple of m_blk, N not a multiple of the panel width, odd K (every tensor
// also against a PROT_NONE page); B an input
// (packed per call, only the call's panels) or constant weights (packed at compile time, the
// call's panels found from CallArgs::inner_begin); f32 (B planar and transposed), bf16 and
// u8 x i8 -> i32; both ISAs; an MLP chain, whose calls take columns of its last product; and
// a GEMM on the default thread count (the ctest work_division.omp_num_threads_64 runs it with
// OMP_NUM_THREADS=64).
#include <omp.h>

#include <cstdlib>

#include "matmul_test_util.hpp"

using namespace snippets;
using namespace snippets::jit_test;

namespace {

constexpr ElementType bf16 = ElementType::bf16, u8 = ElementType::u8, i8 = ElementType::i8;

/// A [M, K] x B [K, N] (or B^T [N, K]) of `a_type` x `b_type`, B an input or the constant `w`;
/// for float products an epilogue with inputs along the columns and along the rows:
/// relu(x B + bias[N]) * scale[M, 1], in f32.
Graph product(ElementType a_type, ElementType b_type, Dim m, Dim k, Dim n, bool tb,
              const Tensor* w) {
  Graph g;
  const Shape sb = tb ? Shape{n, k} : Shape{k, n};
  const auto a = g.parameter(a_type, Shape{m, k}, "a");
  const auto b = w ? g.constant(b_type, sb, w->values().v, "W") : g.parameter(b_type, sb, "b");
  auto y = g.matmul(a, b, false, tb);
  if (is_byte_integer(a_type)) {
    g.result(y);
    return g;
  }
  if (a_type != f32) y = g.convert(y, f32);
  y = g.relu(g.add(y, g.parameter(f32, Shape{n}, "bias")));
  g.result(g.multiply(y, g.parameter(f32, Shape{m, 1}, "scale")));
  return g;
}

/// |x B| summed in double, times (K + 2) 2^-24: the f32 summation bound (test_jit_matmul.cpp;
/// relu and a scale of at most 1 do not widen it), plus a few ulp.
Tensor error_bound(const Tensor& a, const Tensor& b, bool tb) {
  Graph g;
  const auto pa = g.parameter(f32, a.shape());
  g.result(g.matmul(pa, g.parameter(f32, b.shape()), false, tb));
  auto as_f32 = [](const Tensor& t) { return Tensor::from_values(f32, t.shape(), t.values().v); };
  const Tensor mag = reference::evaluate(g, {absolute(as_f32(a)), absolute(as_f32(b))})[0];
  const Dim k = a.shape()[1];
  Tensor bound(f32, mag.shape());
  for (std::size_t i = 0; i < mag.size(); ++i)
    bound.set(i, double(k + 2) * 0x1p-24 * mag.at(i) + 1e-30);
  return bound;
}

/// Calls f(options) for both ISAs; integer products also as 16-bit words (native_int8 false).
template <class F> void for_each_options(bool integer, F&& f) {
  for_each_isa([&](x64::Isa isa) {
    f(CompileOptions{.isa = isa});
    if (!integer) return;
    INFO("words, VPMADDWD (native_int8 = false)");
    f(CompileOptions{.isa = isa, .native_int8 = false});
  });
}

struct Case {
  ElementType a_type, b_type;
  Dim m, k, n;
  bool tb = false;
};

/// `c` with B an input and with B constant, on both ISAs and 1, 7 and 64 threads.
void check(const Case& c, std::uint64_t seed) {
  INFO(to_string(c.a_type) << " x " << to_string(c.b_type) << ", M " << c.m << " K " << c.k << " N "
                           << c.n << std::string(c.tb ? ", B transposed" : ""));
  const bool integer = is_byte_integer(c.a_type);
  const Shape sb = c.tb ? Shape{c.n, c.k} : Shape{c.k, c.n};
  auto values = [&](ElementType t, const Shape& s) {
    if (is_byte_integer(t)) return bytes(t, s, ++seed);
    return Tensor::from_values(t, s, uniform(s, ++seed).values().v); // rounded to t
  };
  const Tensor a = values(c.a_type, Shape{c.m, c.k}), b = values(c.b_type, sb);
  const Tensor bias = uniform(Shape{c.n}, ++seed), scale = uniform(Shape{c.m, 1}, ++seed, 0, 1);
  const Tensor bound = error_bound(a, b, c.tb);
  for (const bool constant : {false, true}) {
    INFO(std::string(constant ? "constant B" : "B an input"));
    const Graph g = product(c.a_type, c.b_type, c.m, c.k, c.n, c.tb, constant ? &b : nullptr);
    std::vector<Tensor> in{a};
    if (!constant) in.push_back(b);
    if (!integer) in.push_back(bias), in.push_back(scale);
    const Tensor want = reference::evaluate(g, std::span<const Tensor>(in))[0];
    for_each_options(integer, [&](const CompileOptions& opt) {
      const CompiledKernel k = compile(g, opt);
      // the cases are chosen so that 7 and 64 threads take ranges of columns
      const KernelSignature& sig = k.signature();
      REQUIRE(sig.inner_unit > 0);
      CHECK(divide_work(sig, 7).two_d());
      CHECK(divide_work(sig, 64).two_d());
      const Tensor one = k.run(std::span<const Tensor>(in), with_threads(1))[0];
      for (const int threads : {1, 7, 64}) {
        INFO("threads = " << threads);
        const Tensor got = k.run(std::span<const Tensor>(in), with_threads(threads))[0];
        REQUIRE(got.shape() == want.shape());
        const std::string r =
            integer ? compare(got, want, exact) : compare_bounded(got, want, bound);
        CHECK_MESSAGE(r.empty(), r);
        CHECK(compare(got, one, exact).empty()); // the same sums, whichever call made them
        // every tensor against a PROT_NONE page: no call reads or writes past its columns
        for (const Guard where : {Guard::before, Guard::after})
          if (threads > 1)
            CHECK(compare(run_guarded(k, in, want, where, threads), one, exact).empty());
      }
    });
  }
}

} // namespace

TEST_CASE("work division, MatMul: blocks of rows times ranges of panels, f32") {
  // M 67: blocks of 12 rows and a tail of 7; N 200: 3 panels of 64 (AVX-512) or 12 of 16
  // (AVX2) and a tail of 8; K 45 odd
  check({f32, f32, 67, 45, 200}, 1);
  check({f32, f32, 67, 45, 200, true}, 10); // B read along its columns (transposed panels)
  check({f32, f32, 13, 300, 129}, 20);      // one column past the panels
}

TEST_CASE("work division, MatMul: blocks of rows times ranges of panels, bf16") {
  check({bf16, bf16, 67, 45, 200}, 30); // pairs of depths (AVX512_BF16), an odd last one
  check({bf16, bf16, 43, 64, 136, true}, 40);
}

TEST_CASE("work division, MatMul: blocks of rows times ranges of panels, u8 x i8 -> i32") {
  check({u8, i8, 67, 45, 200}, 50);  // quads of depths, the last K % 4 short
  check({i8, i8, 43, 130, 136}, 60); // an i8 A: the compensation row of each panel
}

TEST_CASE("work division, MatMul: a unit of a GEMM is one panel; A does not move along N") {
  Graph g;
  const auto a = g.parameter(f32, Shape{1024, 1024});
  g.result(g.matmul(a, g.parameter(f32, Shape{1024, 1024})));
  for_each_isa([&](x64::Isa isa) {
    const CompiledKernel k = compile(g, {.isa = isa});
    const KernelSignature& sig = k.signature();
    CHECK(sig.inner_unit == (isa == x64::Isa::avx512 ? 64 : 16));        // one panel
    CHECK(sig.inner_stride_bytes == std::vector<std::int64_t>{0, 4, 4}); // A, B, the output
  });
}

TEST_CASE("work division, MatMul: an MLP chain divides its last product's columns") {
  // relu(relu(relu(x W1 + b1) W2 + b2) W3 + b3), x [8, 96] -> 160 -> 96 -> 200 (a tail panel);
  // W an input or constant; the calls that take a part of the last product's columns compute
  // all of the first two
  const std::vector<Dim> widths{96, 160, 96, 200};
  std::uint64_t seed = 70;
  const Tensor x = uniform(Shape{8, widths[0]}, ++seed);
  std::vector<Tensor> w, b;
  for (std::size_t l = 0; l + 1 < widths.size(); ++l) {
    w.push_back(uniform(Shape{widths[l], widths[l + 1]}, ++seed, -0.2, 0.2));
    b.push_back(uniform(Shape{widths[l + 1]}, ++seed));
  }
  for (const bool constant : {false, true}) {
    INFO(std::string(constant ? "constant weights" : "weights inputs"));
    Graph g;
    ir::Value v = g.parameter(f32, x.shape(), "x");
    std::vector<Tensor> in{x};
    for (std::size_t l = 0; l < w.size(); ++l) {
      const auto wl = constant ? g.constant(f32, w[l].shape(), w[l].values().v, "W")
                               : g.parameter(f32, w[l].shape(), "W");
      const auto prod = g.matmul(v, wl);
      v = g.relu(g.add(prod, g.parameter(f32, b[l].shape(), "b")));
    }
    g.result(v);
    // inputs in the order the parameters were made: x, then W (if an input) and b per layer
    for (std::size_t l = 0; l < w.size(); ++l) {
      if (!constant) in.push_back(w[l]);
      in.push_back(b[l]);
    }
    const Tensor want = reference::evaluate(g, std::span<const Tensor>(in))[0];
    for_each_isa([&](x64::Isa isa) {
      const CompiledKernel k = compile(g, {.isa = isa});
      REQUIRE(k.signature().inner_unit > 0);
      CHECK(k.signature().inner_shared > 0.3); // the first two products: 96 x 160 + 160 x 96
      CHECK(divide_work(k.signature(), 64).two_d());
      const Tensor one = k.run(std::span<const Tensor>(in), with_threads(1))[0];
      for (const int threads : {1, 7, 64}) {
        INFO("threads = " << threads);
        const Tensor got = k.run(std::span<const Tensor>(in), with_threads(threads))[0];
        // sums of 96 to 160 products in another order than the reference's, three layers
        CHECK(compare(got, want, Tolerance{256, 1e-5}).empty());
        CHECK(compare(got, one, exact).empty());
      }
    });
  }
}

TEST_CASE("work division, MatMul: no column ranges where a moved pointer is read elsewhere") {
  // a residual: the epilogue reads A again, whose pointer does not move along the columns
  Graph g;
  const auto x = g.parameter(f32, Shape{16, 256});
  const auto y =
      g.matmul(x, g.constant(f32, Shape{256, 256}, uniform(Shape{256, 256}, 3).values().v));
  g.result(g.add(y, x));
  const CompiledKernel k = compile(g);
  CHECK(k.signature().inner_unit == 0);
  const Tensor in = uniform(Shape{16, 256}, 4);
  const Tensor want = reference::evaluate(g, {in})[0];
  CHECK(compare(k.run({in}, with_threads(64))[0], want, Tolerance{256, 1e-4}).empty());
}

TEST_CASE("work division, MatMul: a GEMM with OMP_NUM_THREADS threads against the reference") {
  // the ctest work_division.omp_num_threads_64 runs this with OMP_NUM_THREADS=64: the default
  // thread count (one per ~16K elements of work: all 64 here) takes blocks of 108 rows times
  // panels (10 x 9 units on AVX-512)
  const char* env = std::getenv("OMP_NUM_THREADS");
  if (env && std::atoi(env) > 0) CHECK(omp_get_max_threads() == std::atoi(env));
  const Tensor a = uniform(Shape{1000, 300}, 80), b = uniform(Shape{300, 520}, 81);
  const Tensor bias = uniform(Shape{520}, 82), scale = uniform(Shape{1000, 1}, 83, 0, 1);
  const Tensor bound = error_bound(a, b, false);
  for (const bool constant : {false, true}) {
    INFO(std::string(constant ? "constant B" : "B an input"));
    const Graph g = product(f32, f32, 1000, 300, 520, false, constant ? &b : nullptr);
    std::vector<Tensor> in{a};
    if (!constant) in.push_back(b);
    in.push_back(bias), in.push_back(scale);
    const Tensor want = reference::evaluate(g, std::span<const Tensor>(in))[0];
    const CompiledKernel k = compile(g);
    const Tensor got = k.run(std::span<const Tensor>(in))[0];
    const std::string r = compare_bounded(got, want, bound);
    CHECK_MESSAGE(r.empty(), r);
    CHECK(compare(got, k.run(std::span<const Tensor>(in), with_threads(1))[0], exact).empty());
  }
}
