// SPDX-License-Identifier: Apache-2.0
// JIT tests of int8 MatMul kernels (BrgemmShape::quads and words,
// target/x64/emitters/brgemm.hpp): u8 x i8 and i8 x i8 products summed in int32 by VPDPBUSD
// (AVX512_VNNI on AVX-512, AVX-VNNI on AVX2), B packed in quads of depths at compile time
// (constant weights) or in the kernel, an i8 A and A's zero point (MatMul::a_zero_point)
// compensated by B's column sums; and the same products as 16-bit words into VPMADDWD
// (CompileOptions::native_int8 = false, and hosts without VNNI). Every i32 result
// must be the reference's bit for bit (its sums are exact in double); the sums here reach past
// 2^24, where an f32 path would round. Epilogues (Convert to f32, scale, bias, relu, Quantize back
// to u8) are compared bit for bit with the reference rounding each node to f32, compiled without
// FMA contraction.
#include <iomanip>

#include "matmul_int8_cases.hpp"

using namespace snippets;
using namespace snippets::jit_test;
using namespace snippets::matmul_int8_test;

namespace {

constexpr ElementType u8 = ElementType::u8, i8 = ElementType::i8, i32 = ElementType::i32;

/// Empty when every element of `got` equals `want` exactly (as doubles: i32 beyond 2^24 too).
std::string compare_exact(const Tensor& got, const Tensor& want) {
  if (got.type() != want.type() || got.shape() != want.shape())
    return "got " + std::string(to_string(got.type())) + got.shape().to_string() + ", want " +
           std::string(to_string(want.type())) + want.shape().to_string();
  std::ostringstream os;
  os << std::setprecision(17);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < want.size(); ++i)
    if (got.at(i) != want.at(i) && bad++ < 5)
      os << "\n  at " << coordinates(want.shape(), i) << ": got " << got.at(i) << ", want "
         << want.at(i);
  return bad ? std::to_string(bad) + " of " + std::to_string(want.size()) + " differ:" + os.str()
             : std::string{};
}

/// Calls f(options) for both ISAs (fma off, so an f32 epilogue rounds as the reference does
/// node by node), each with VPDPBUSD (where the host has it) and with 16-bit words
/// (CompileOptions::native_int8 = false).
template <class F> void for_each_variant(F&& f) { for_each_int8_variant(f, {.fma = false}); }

/// Compiles `g` every way (for_each_variant) and checks every output bit for bit.
void check_exact(const Graph& g, const std::vector<Tensor>& in, std::vector<int> threads = {1, 3}) {
  reference::Options ro;
  ro.round_each_node = true;
  const std::vector<Tensor> want = reference::evaluate(g, std::span<const Tensor>(in), ro);
  for_each_variant([&](const CompileOptions& opt) {
    const CompiledKernel k = compile(g, opt);
    for (const int n : threads) {
      INFO("threads = " << n);
      const auto got = k.run(std::span<const Tensor>(in), with_threads(n));
      REQUIRE(got.size() == want.size());
      for (std::size_t i = 0; i < got.size(); ++i) {
        INFO("output " << i);
        const std::string r = compare_exact(got[i], want[i]);
        CHECK_MESSAGE(r.empty(), r);
      }
    }
  });
}

/// A (a_type, [.., M, K]) x B (i8, [.., K, N] or [.., N, K] with tb), B an input or constant
/// weights, written as i32.
void check_product(ElementType a_type, const Shape& sa, const Shape& sb, bool tb, bool constant_b,
                   std::uint64_t seed, std::vector<int> threads = {1, 3}) {
  const std::string what = std::string(to_string(a_type)) + " A " + sa.to_string() + " x i8 B " +
                           sb.to_string() + (tb ? "^T" : "") +
                           (constant_b ? " constant" : " input");
  INFO(what);
  const Case c = int8_product(a_type, sa, sb, tb, constant_b, seed);
  check_exact(c.g, c.in, std::move(threads));
}

} // namespace

TEST_CASE("matmul int8: the reference sums bytes exactly into i32") {
  Graph g;
  const auto a = g.parameter(u8, Shape{1, 1024});
  const auto b = g.parameter(i8, Shape{1024, 2});
  const auto y = g.matmul(a, b);
  CHECK(g.type(y).type == i32);
  g.result(y);
  std::vector<double> bv(2048);
  for (std::size_t i = 0; i < bv.size(); ++i) bv[i] = i % 2 ? 127 : -128;
  const auto out = reference::evaluate(
      g, {Tensor::from_values(u8, Shape{1, 1024}, std::vector<double>(1024, 255.0)),
          Tensor::from_values(i8, Shape{1024, 2}, bv)})[0];
  CHECK(out.at(0) == -255.0 * 128 * 1024); // -33423360: past 2^24, where f32 would round
  CHECK(out.at(1) == 255.0 * 127 * 1024);
}

TEST_CASE("matmul int8: u8 x i8 and i8 x i8 over tails of M, N and K (K % 4 != 0 too)") {
  std::uint64_t seed = 1;
  for (const ElementType at : {u8, i8})
    for (const Dim m : {Dim{1}, Dim{7}, Dim{8}, Dim{17}}) // tiles of 1-8 rows, 1-4 vectors
      for (const Dim n : {Dim{1}, Dim{15}, Dim{17}, Dim{65}})
        for (const Dim k : {Dim{1}, Dim{2}, Dim{3}, Dim{4}, Dim{5}, Dim{35}})
          for (const bool constant_b : {false, true})
            check_product(at, {m, k}, {k, n}, false, constant_b, seed += 2, {1, 2});
}

TEST_CASE("matmul int8: an i8 B input read along its columns (transposed, K in attention)") {
  // quads gather each column's four bytes as a dword, the last K % 4 (and words) byte by byte
  std::uint64_t seed = 700;
  for (const ElementType at : {u8, i8})
    for (const Dim n : {Dim{1}, Dim{17}, Dim{65}})
      for (const Dim k : {Dim{1}, Dim{2}, Dim{3}, Dim{4}, Dim{5}, Dim{35}, Dim{64}})
        check_product(at, {7, k}, {n, k}, true, false, seed += 2, {1, 2});
  check_product(u8, {2, 19, 37}, {2, 40, 37}, true, false, seed += 2); // batches
}

TEST_CASE("matmul int8: deep products past 2^24 stay exact, 1-3 threads") {
  std::uint64_t seed = 100;
  for (const ElementType at : {u8, i8})
    for (const Dim k : {Dim{1024}, Dim{2051}})
      for (const bool constant_b : {false, true})
        check_product(at, {67, k}, {k, 70}, false, constant_b, seed += 2, {1, 2, 3});
  // sums near their extremes, odd and past 2^24, so f32 cannot hold them: A all 255 (u8) or
  // -127 (i8), B all -128 but its first row, -127: the sums are -/+ |a| x (128 K - 1)
  for (const ElementType at : {u8, i8}) {
    INFO("extremes, A " << std::string(to_string(at)));
    const Shape sa{9, 3001}, sb{3001, 33};
    Graph g;
    const auto pa = g.parameter(at, sa);
    g.result(g.matmul(pa, g.parameter(i8, sb)));
    const Tensor a = Tensor::from_values(
        at, sa, std::vector<double>(std::size_t(sa.element_count()), at == u8 ? 255 : -127));
    std::vector<double> bv(std::size_t(sb.element_count()), -128);
    std::fill(bv.begin(), bv.begin() + 33, -127);
    const Tensor b = Tensor::from_values(i8, sb, bv);
    const double sum = (at == u8 ? -255.0 : 127.0) * (128.0 * 3001 - 1);
    REQUIRE(reference::evaluate(g, {a, b})[0].at(0) == sum);
    REQUIRE(double(float(sum)) != sum);
    check_exact(g, {a, b}, {1, 3});
  }
}

TEST_CASE("matmul int8: an A zero point joins the compensation row (MatMulInteger)") {
  std::uint64_t seed = 400;
  for (const auto& [at, zero] :
       {std::pair{u8, 131}, std::pair{u8, 255}, std::pair{i8, -3}, std::pair{i8, 127}})
    for (const bool constant_b : {false, true})
      for (const Dim k : {Dim{3}, Dim{37}, Dim{1031}}) {
        INFO("A " << std::string(to_string(at)) << " less " << zero << ", K = " << k
                  << (constant_b ? ", constant B" : ", B input"));
        const Shape sa{2, 13, k}, sb{k, 35};
        const Tensor a = bytes(at, sa, ++seed), b = bytes(i8, sb, ++seed);
        Graph g;
        const auto pa = g.parameter(at, sa);
        const auto w = constant_b ? g.constant(i8, sb, b.values().v) : g.parameter(i8, sb);
        g.result(g.make(ir::MatMul{false, false, zero}, {pa, w})[0]);
        check_exact(g, constant_b ? std::vector<Tensor>{a} : std::vector<Tensor>{a, b});
      }
}

TEST_CASE("matmul int8: batches, broadcast B, transposed constant B") {
  std::uint64_t seed = 200;
  for (const ElementType at : {u8, i8}) {
    check_product(at, {3, 19, 37}, {3, 37, 40}, false, false, seed += 2);
    check_product(at, {2, 3, 19, 37}, {37, 40}, false, false, seed += 2);
    check_product(at, {2, 19, 37}, {37, 40}, false, true, seed += 2);
    check_product(at, {2, 19, 37}, {40, 37}, true, true, seed += 2);
  }
}

TEST_CASE("matmul int8: an epilogue dequantizes on the registers and requantizes to u8") {
  std::uint64_t seed = 300;
  for (const ElementType at : {u8, i8}) {
    INFO("A " << std::string(to_string(at)));
    const Case c = requantizing_layer(at, seed);
    check_exact(c.g, c.in);
  }
}

TEST_CASE("matmul int8: no byte past or before a tensor is touched (guard pages)") {
  std::uint64_t seed = 500;
  for (const ElementType at : {u8, i8})
    for (const Dim k : {Dim{1}, Dim{3}, Dim{6}, Dim{41}})
      for (const bool bytes_out : {false, true}) { // an i32 output, or a one-byte one
        INFO("A " << std::string(to_string(at)) << ", K = " << k << ", output "
                  << (bytes_out ? "u8" : "i32"));
        const Shape sa{7, k}, sb{k, 19};
        Graph g;
        const auto pa = g.parameter(at, sa);
        const auto y = g.matmul(pa, g.parameter(i8, sb));
        g.result(bytes_out ? g.convert(g.convert(y, f32), u8) : y);
        const std::vector<Tensor> in{bytes(at, sa, ++seed), bytes(i8, sb, ++seed)};
        const Tensor want = reference::evaluate(g, std::span<const Tensor>(in))[0];
        for_each_variant([&](const CompileOptions& opt) {
          const CompiledKernel kernel = compile(g, opt);
          for (const Guard where : {Guard::after, Guard::before}) {
            const std::string r = compare_exact(run_guarded(kernel, in, want, where, 2), want);
            CHECK_MESSAGE(r.empty(), r);
          }
        });
      }
}

TEST_CASE("matmul int8: refused where the int8 path does not go, with the reason") {
  {
    Graph g; // u8 B: VPDPBUSD reads B signed
    const auto a = g.parameter(u8, Shape{4, 8});
    g.result(g.matmul(a, g.parameter(u8, Shape{8, 4})));
    check_int8_refused(g, "reads its B as u8");
  }
  {
    Graph g; // a transposed A
    const auto a = g.parameter(u8, Shape{8, 4});
    g.result(g.matmul(a, g.parameter(i8, Shape{8, 4}), true, false));
    check_int8_refused(g, "strided depths");
  }
  {
    Graph g; // sums that could overflow int32
    const auto a = g.parameter(u8, Shape{1, 65794});
    g.result(g.matmul(a, g.parameter(i8, Shape{65794, 1})));
    check_int8_refused(g, "overflow int32");
  }
  {
    Graph g; // an A zero point outside A's type
    const auto a = g.parameter(i8, Shape{4, 8});
    g.result(g.make(ir::MatMul{false, false, 200}, {a, g.parameter(i8, Shape{8, 4})})[0]);
    check_int8_refused(g, "does not hold");
  }
  {
    Graph g; // an A zero point on an f32 product
    const auto a = g.parameter(f32, Shape{4, 8});
    g.result(g.make(ir::MatMul{false, false, 1}, {a, g.parameter(f32, Shape{8, 4})})[0]);
    check_int8_refused(g, "only integer products");
  }
}

TEST_CASE("matmul int8: a quantized MLP chain is one kernel, its bytes in scratch, bit for bit") {
  std::uint64_t seed = 900;
  for (const ElementType xt : {u8, i8})
    for (const ElementType hidden : {u8, i8})
      for (const bool constant_w : {true, false})
        for (const Dim m : {Dim{1}, Dim{7}, Dim{37}, Dim{130}}) {
          INFO("x " << to_string(xt) << " [" << m << "], hidden " << to_string(hidden)
                    << (constant_w ? ", constant W" : ", W inputs"));
          std::vector<Tensor> in;
          const Graph g =
              quantized_chain(xt, Shape{m, 35}, {35, 67, 19}, hidden, constant_w, seed += 50, in);
          check_exact(g, in, {1, 3});
        }
  // three layers, batches
  std::vector<Tensor> in;
  const Graph g = quantized_chain(u8, Shape{2, 21, 64}, {64, 128, 33, 16}, u8, true, 7, in);
  check_exact(g, in, {1, 3});
}

TEST_CASE("matmul int8: the tokenizer makes a quantized MLP chain one Subgraph") {
  std::vector<Tensor> in;
  const Graph g = quantized_chain(u8, Shape{37, 35}, {35, 67, 19}, u8, true, 3, in, false);
  const Program<> program(g);
  check_steps_are_kernels(program);
  std::size_t kernels = 0;
  for (const auto& s : program.steps()) kernels += s.kind == Program<>::StepKind::kernel;
  CHECK(kernels == 1);
  reference::Options ro;
  ro.round_each_node = true;
  const auto want = reference::evaluate(g, std::span<const Tensor>(in), ro);
  const auto got = program.run(in, with_threads(2));
  // the Program's kernel contracts Multiply -> Add into FMAs (one rounding less than the
  // reference's node by node): the hidden and the output levels may differ by one where the
  // value before rounding is within an f32 rounding of a tie (rare: a few elements at most)
  std::size_t off = 0;
  for (std::size_t i = 0; i < want[0].size(); ++i) {
    CHECK(std::fabs(got[0].at(i) - want[0].at(i)) <= 2);
    off += got[0].at(i) != want[0].at(i);
  }
  CHECK(off <= want[0].size() / 50);
}
