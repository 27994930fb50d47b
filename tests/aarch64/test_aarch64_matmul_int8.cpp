// SPDX-License-Identifier: Apache-2.0
// tests/aarch64/test_aarch64_matmul_int8.cpp: int8 MatMul kernels on the AArch64 target
// (BrgemmShape::quads with signed_a, target/aarch64/emitters/brgemm.hpp), under qemu-aarch64;
// the x64 counterpart is tests/test_jit_matmul_int8.cpp.
//
// u8 x i8 and i8 x i8 products summed in int32 by SDOT (FEAT_DotProd), a u8 A read as A - 128
// and A's zero point compensated by B's column sums; B packed in quads at compile time
// (constant weights) or in the kernel (BrgemmCopyB, along its rows or its columns). Every i32
// result must be the reference's bit for bit, over tails of M, N and K (K % 4 and K % 16, the
// depths of a quad and of A's register), past 2^24, 1-3 threads, with guard pages; epilogues
// (Convert to f32, scale, bias, relu, Quantize to u8) and quantized MLP chains bit for bit
// against the reference rounding each node, without FMA contraction; a QDQ MatMul through a
// Program within a few ulp. Where the int8 path does not go, the refusal names the reason; on
// a processor without FEAT_DotProd (ctest's aarch64.emulated.no_dotprod, qemu -cpu cortex-a72)
// every int8 product is refused and a QDQ MatMul stays an f32 product.
#include <doctest/doctest.h>

#include <iomanip>

#include "aarch64/a64_test_util.hpp"
#include "matmul_int8_cases.hpp"

using namespace snippets;
using namespace snippets::a64_test;
using namespace snippets::matmul_int8_test;

namespace {

constexpr ElementType u8 = ElementType::u8, i8 = ElementType::i8, i32 = ElementType::i32;

/// Compiles `g` without FMA contraction (an f32 epilogue rounds as the reference node by node)
/// and checks every output bit for bit with `threads`.
void check_exact(const G& g, const std::vector<Tensor>& in, std::vector<int> threads = {1, 3}) {
  reference::Options ro;
  ro.round_each_node = true;
  const std::vector<Tensor> want = reference::evaluate(g, std::span<const Tensor>(in), ro);
  const CompiledKernel k = compile(g, {.fma = false});
  for (const int n : threads) {
    INFO("threads = " << n);
    const auto got = k.run(std::span<const Tensor>(in), with_threads(n));
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      INFO("output " << i);
      CHECK(compare(got[i], want[i], exact) == "");
    }
  }
}

/// A (a_type, [.., M, K]) x B (i8, [.., K, N] or [.., N, K] with tb), B an input or constant
/// weights, written as i32.
void check_product(ElementType a_type, const Shape& sa, const Shape& sb, bool tb, bool constant_b,
                   std::uint64_t seed, std::vector<int> threads = {1, 3}) {
  INFO(to_string(a_type) << " A " << sa.to_string() << " x i8 B " << sb.to_string()
                         << (tb ? "^T" : "") << (constant_b ? " constant" : " input"));
  const Case c = int8_product(a_type, sa, sb, tb, constant_b, seed);
  check_exact(c.g, c.in, std::move(threads));
}

} // namespace

TEST_CASE("aarch64 matmul int8: u8 x i8 and i8 x i8 over tails of M, N and K") {
  if (!has_dotprod()) return;
  std::uint64_t seed = 1;
  for (const ElementType at : {u8, i8})
    for (const Dim m : {Dim{1}, Dim{7}, Dim{13}})
      for (const Dim n : {Dim{1}, Dim{5}, Dim{17}, Dim{35}})
        for (const Dim k : {Dim{1}, Dim{3}, Dim{4}, Dim{5}, Dim{13}, Dim{16}, Dim{17}, Dim{47}})
          for (const bool constant_b : {false, true})
            check_product(at, {m, k}, {k, n}, false, constant_b, seed += 2, {1, 2});
}

TEST_CASE("aarch64 matmul int8: zero sizes, with a zero point") {
  if (!has_dotprod()) return;
  for (const auto& [sa, sb] :
       {std::pair{Shape{0, 5}, Shape{5, 7}}, std::pair{Shape{4, 5}, Shape{5, 0}},
        std::pair{Shape{4, 0}, Shape{0, 7}}})
    for (const bool constant_b : {false, true}) {
      INFO("A " << sa.to_string() << " x B " << sb.to_string() << (constant_b ? " constant" : ""));
      const Tensor a = bytes(u8, sa, 5), b = bytes(i8, sb, 6);
      G g;
      const auto pa = g.parameter(u8, sa);
      const auto w = constant_b ? g.constant(i8, sb, b.values().v) : g.parameter(i8, sb);
      g.result(g.make(ir::MatMul{false, false, 3}, {pa, w})[0]);
      const std::vector<Tensor> in =
          constant_b ? std::vector<Tensor>{a} : std::vector<Tensor>{a, b};
      const Tensor want = reference::evaluate(g, std::span<const Tensor>(in))[0];
      const Program<Backend> program(g); // an empty product may stay on the reference path
      CHECK(compare(program.run(in, with_threads(2))[0], want, exact) == "");
    }
}

TEST_CASE("aarch64 matmul int8: B read along its columns (transposed), batches, broadcast B") {
  if (!has_dotprod()) return;
  std::uint64_t seed = 700;
  for (const ElementType at : {u8, i8}) {
    for (const Dim n : {Dim{1}, Dim{17}, Dim{33}})
      for (const Dim k : {Dim{1}, Dim{3}, Dim{4}, Dim{14}, Dim{16}, Dim{35}, Dim{64}})
        for (const bool constant_b : {false, true})
          check_product(at, {7, k}, {n, k}, true, constant_b, seed += 2, {1, 2});
    check_product(at, {3, 19, 37}, {3, 37, 40}, false, false, seed += 2);
    check_product(at, {2, 3, 19, 37}, {37, 40}, false, false, seed += 2);
    check_product(at, {2, 19, 37}, {37, 40}, false, true, seed += 2);
    check_product(at, {2, 19, 37}, {2, 40, 37}, true, false, seed += 2);
  }
}

TEST_CASE("aarch64 matmul int8: deep products past 2^24 stay exact, at their extremes too") {
  if (!has_dotprod()) return;
  std::uint64_t seed = 100;
  for (const ElementType at : {u8, i8})
    for (const bool constant_b : {false, true})
      check_product(at, {25, 2051}, {2051, 21}, false, constant_b, seed += 2, {1, 3});
  // A all 255 (u8) or -127 (i8), B all -128 but its first row, -127: sums of 128 K - 1 times
  // |a|, odd and past 2^24, which f32 cannot hold
  for (const ElementType at : {u8, i8}) {
    INFO("extremes, A " << to_string(at));
    const Shape sa{7, 3001}, sb{3001, 19};
    G g;
    const auto pa = g.parameter(at, sa);
    g.result(g.matmul(pa, g.parameter(i8, sb)));
    const Tensor a = Tensor::from_values(
        at, sa, std::vector<double>(std::size_t(sa.element_count()), at == u8 ? 255 : -127));
    std::vector<double> bv(std::size_t(sb.element_count()), -128);
    std::fill(bv.begin(), bv.begin() + 19, -127);
    const double sum = (at == u8 ? -255.0 : 127.0) * (128.0 * 3001 - 1);
    REQUIRE(reference::evaluate(g, {a, Tensor::from_values(i8, sb, bv)})[0].at(0) == sum);
    check_exact(g, {a, Tensor::from_values(i8, sb, bv)}, {1, 2});
  }
}

TEST_CASE("aarch64 matmul int8: an A zero point joins the compensation row (MatMulInteger)") {
  if (!has_dotprod()) return;
  std::uint64_t seed = 400;
  for (const auto& [at, zero] :
       {std::pair{u8, 128}, std::pair{u8, 255}, std::pair{i8, -3}, std::pair{i8, 127}})
    for (const bool constant_b : {false, true})
      for (const bool tb : {false, true})
        for (const Dim k : {Dim{3}, Dim{37}}) {
          INFO("A " << to_string(at) << " less " << zero << ", K = " << k
                    << (constant_b ? ", constant B" : ", B input") << (tb ? ", B^T" : ""));
          const Shape sa{2, 13, k}, sb = tb ? Shape{35, k} : Shape{k, 35};
          const Tensor a = bytes(at, sa, ++seed), b = bytes(i8, sb, ++seed);
          G g;
          const auto pa = g.parameter(at, sa);
          const auto w = constant_b ? g.constant(i8, sb, b.values().v) : g.parameter(i8, sb);
          g.result(g.make(ir::MatMul{false, tb, zero}, {pa, w})[0]);
          check_exact(g, constant_b ? std::vector<Tensor>{a} : std::vector<Tensor>{a, b});
        }
}

TEST_CASE("aarch64 matmul int8: an epilogue dequantizes on the registers and requantizes to u8") {
  if (!has_dotprod()) return;
  std::uint64_t seed = 300;
  for (const ElementType at : {u8, i8}) {
    INFO("A " << to_string(at));
    const Case c = requantizing_layer(at, seed);
    check_exact(c.g, c.in);
  }
}

TEST_CASE("aarch64 matmul int8: no byte past or before a tensor is touched (guard pages)") {
  if (!has_dotprod()) return;
  std::uint64_t seed = 500;
  for (const ElementType at : {u8, i8})
    for (const Dim k : {Dim{1}, Dim{3}, Dim{6}, Dim{15}, Dim{41}})
      for (const bool tb : {false, true})
        for (const bool bytes_out : {false, true}) { // an i32 output, or a one-byte one
          INFO("A " << to_string(at) << ", K = " << k << (tb ? ", B^T" : "") << ", output "
                    << (bytes_out ? "u8" : "i32"));
          const Shape sa{7, k}, sb = tb ? Shape{19, k} : Shape{k, 19};
          G g;
          const auto pa = g.parameter(at, sa);
          const auto y = g.matmul(pa, g.parameter(i8, sb), false, tb);
          g.result(bytes_out ? g.convert(g.convert(y, f32), u8) : y);
          const std::vector<Tensor> in{bytes(at, sa, ++seed), bytes(i8, sb, ++seed)};
          const Tensor want = reference::evaluate(g, std::span<const Tensor>(in))[0];
          const CompiledKernel kernel = compile(g);
          for (const Guard where : {Guard::after, Guard::before})
            CHECK(compare(run_guarded(kernel, in, want, where, 2), want, exact) == "");
        }
}

TEST_CASE("aarch64 matmul int8: a quantized MLP chain is one kernel, bit for bit") {
  if (!has_dotprod()) return;
  // each layer Quantize(relu(Convert(x W) * s + b)) to the hidden type, the next layer less
  // its zero point; the last layer's f32 and u8 values are the outputs
  std::uint64_t seed = 900;
  for (const ElementType xt : {u8, i8})
    for (const ElementType hidden : {u8, i8})
      for (const bool constant_w : {true, false})
        for (const Dim m : {Dim{1}, Dim{13}, Dim{37}}) {
          INFO("x " << to_string(xt) << " [" << m << "], hidden " << to_string(hidden)
                    << (constant_w ? ", constant W" : ", W inputs"));
          std::vector<Tensor> in;
          const G g =
              quantized_chain(xt, Shape{m, 35}, {35, 67, 19}, hidden, constant_w, seed += 50, in);
          check_exact(g, in);
        }
}

namespace {

/// (Convert(x) - zx) * sx times (Convert(W) - 0) * sw per column, + bias, relu, and a u8
/// QuantizeLinear: the QDQ MatMul that FoldDequantizeIntoMatMul rewrites as an int8 product.
G qdq_matmul(Dim m, Dim k, Dim n, std::vector<Tensor>& in) {
  G g;
  const auto x = g.parameter(u8, Shape{m, k}, "x");
  const auto bias = g.parameter(f32, Shape{n}, "bias");
  in = {bytes(u8, Shape{m, k}, 91), uniform(Shape{n}, 92, -3, 3)};
  std::vector<double> sw(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < sw.size(); ++i) sw[i] = 0.001 * double(1 + i % 7);
  const auto dx =
      g.multiply(g.subtract(g.convert(x, f32), g.scalar(f32, 128)), g.scalar(f32, 0.0173));
  const auto w = g.constant(i8, Shape{k, n}, bytes(i8, Shape{k, n}, 93).values().v);
  const auto dw = g.multiply(g.convert(w, f32), g.constant(f32, Shape{n}, sw));
  const auto y = g.relu(g.add(g.matmul(dx, dw), bias));
  g.result(y, "f32");
  g.result(g.quantize(y, g.scalar(f32, 0.37), g.scalar(f32, 3.0), u8), "u8");
  return g;
}

/// The MatMuls of a Program's kernels, as "MatMul(type, zx zero point) ".
std::string products_of(const Program<>& program) {
  std::string s;
  for (const auto& step : program.steps()) {
    if (step.kind != Program<>::StepKind::kernel) continue;
    const auto& body = *std::get<ir::Subgraph<Backend>>(program.graph().node(step.node).op).body;
    for (ir::NodeId id : body.topological_order())
      if (const auto* mm = std::get_if<ir::MatMul>(&body.node(id).op))
        s += "MatMul(" + std::string(to_string(body.node(id).outputs[0].type)) + ", zx " +
             std::to_string(mm->a_zero_point) + ") ";
  }
  return s;
}

} // namespace

TEST_CASE("aarch64 matmul int8: a Program folds a QDQ MatMul into an int8 kernel where it can") {
  std::vector<Tensor> in;
  const G g = qdq_matmul(33, 64, 21, in);
  const Program<> program(g);
  // with FEAT_DotProd the int8 product (zero point 128); without, the f32 product as before
  CHECK(products_of(program) ==
        (Backend::host_has_dotprod() ? "MatMul(i32, zx 128) " : "MatMul(f32, zx 0) "));
  const auto got = program.run(in, with_threads(2));
  const auto want = reference::evaluate(g, std::span<const Tensor>(in));
  REQUIRE(got.size() == want.size());
  double largest = 0;
  for (std::size_t i = 0; i < want[0].size(); ++i)
    largest = std::max(largest, std::abs(want[0].at(i)));
  for (std::size_t i = 0; i < want[0].size(); ++i) {
    INFO("element " << i);
    CHECK(std::abs(got[0].at(i) - want[0].at(i)) <= 6 * largest * 0x1p-24); // a few ulp
    CHECK(std::abs(got[1].at(i) - want[1].at(i)) <= 1);                     // one quantization step
  }
}

TEST_CASE("aarch64 matmul int8: refused where the int8 path does not go, with the reason; "
          "native_int8 = false changes nothing") {
  G g;
  const auto a = g.parameter(u8, Shape{4, 8});
  g.result(g.matmul(a, g.parameter(i8, Shape{8, 4})));
  if (!Backend::host_has_dotprod()) {
    check_refused([&] { (void)compile(g); }, "no int8 products");
    return;
  }
  // native_int8 = false asks for 16-bit words, which this target has not: SDOT all the same
  const std::vector<Tensor> in{bytes(u8, Shape{4, 8}, 5), bytes(i8, Shape{8, 4}, 6)};
  const auto got = compile(g, {.native_int8 = false}).run(std::span<const Tensor>(in));
  CHECK(compare(got[0], reference::evaluate(g, std::span<const Tensor>(in))[0], exact) == "");
  G ub; // a u8 B: SDOT reads B signed
  const auto ua = ub.parameter(u8, Shape{4, 8});
  ub.result(ub.matmul(ua, ub.parameter(u8, Shape{8, 4})));
  check_refused([&] { (void)compile(ub); }, "reads its B as u8");
  G ta; // a transposed A
  const auto t = ta.parameter(u8, Shape{8, 4});
  ta.result(ta.matmul(t, ta.parameter(i8, Shape{8, 4}), true, false));
  check_refused([&] { (void)compile(ta); }, "strided depths");
}

TEST_CASE("aarch64 matmul int8: Q K^T as an int8 product into a Softmax") {
  // (quantized attention, the probabilities the A of a second int8 product, is
  // test_aarch64_mha_int8.cpp)
  if (!has_dotprod()) return;
  const Shape sq{2, 9, 19}, sk{2, 19, 11};
  const std::vector<Tensor> in{bytes(u8, sq, 61), bytes(i8, sk, 62)};
  G g;
  const auto q = g.parameter(u8, sq, "q");
  const auto k = g.parameter(i8, sk, "k");
  const auto acc = g.make(ir::MatMul{false, false, 128}, {q, k})[0];
  g.result(g.softmax(g.multiply(g.convert(acc, f32), g.scalar(f32, 1.0 / 4096)), -1));
  const auto want = reference::evaluate(g, std::span<const Tensor>(in));
  const auto got = compile(g).run(std::span<const Tensor>(in), with_threads(2));
  CHECK(compare(got[0], want[0], approx) == "");
}
