// SPDX-License-Identifier: Apache-2.0
// JIT tests of quantized attention kernels (OpenVINO's MHAQuant; passes/lower_brgemm.hpp,
// passes/attention_rows.hpp, emitters/softmax_rows.hpp): u8 or i8 Q (with a zero point) times
// i8 K summed exactly in int32, dequantized, scaled and masked on the registers, an f32
// Softmax, its probabilities quantized to u8 or i8 (QuantizeLinear: round half to even,
// saturated) into the A rows of a second integer product with i8 V, written as its i32 sums,
// dequantized f32 or requantized u8. Both x64 ISAs, VPDPBUSD and 16-bit words
// (native_int8 = false), 1 and 3 threads, against the reference interpreter in double.
//
// Exactness. Both products are exact integer sums, so the only difference from the reference
// is the f32 Softmax: a probability p is off by a relative e = 2 ds + (2 N + 20) 2^-24 (ds:
// the scores' absolute error, two f32 roundings of |acc x scale| and one of the mask; N keys:
// the sum; test_jit_mha.cpp), and its quantized level x = p / scale + zero is then one of
// the levels of [x (1 - e), x (1 + e)]: the same as the reference's unless that interval holds
// a rounding boundary (a level ambiguous by one). So the i32 output must equal the
// reference's but for the sum of |v| over the ambiguous levels of its row (most rows: none,
// bit for bit); the f32 output (one rounding of an exact f32 sum times a scale) within that
// times the scale (and two f32 roundings of such a value; else compare_bounded's 8 ulp); a
// requantized u8 output within that over its scale plus one level.
#include <cmath>

#include "mha_int8_cases.hpp"

using namespace snippets;
using namespace snippets::jit_test;
using namespace snippets::mha_int8_test;

namespace {

/// Compiles the attention every way and compares each run with the reference within
/// output_bound; returns how many output elements had a nonzero bound (ambiguous levels).
std::size_t check_attention(const QAttention& a, std::vector<int> threads = {1, 3},
                            std::uint64_t seed = 11) {
  INFO(a.name());
  const Graph g = build(a);
  const std::vector<Tensor> in = make_inputs(a, seed);
  const Tensor want = reference::evaluate(g, std::span<const Tensor>(in))[0];
  const Tensor bound = with_f32_roundings(a, output_bound(a, in), want);
  std::size_t loose = 0;
  for (std::size_t i = 0; i < bound.size(); ++i) loose += bound.at(i) != 0;
  for_each_int8_variant(
      [&](const CompileOptions& opt) { check_runs(compile(g, opt), in, want, bound, threads); });
  return loose;
}

} // namespace

TEST_CASE("mha int8: the probabilities' levels are exact but where f32 leaves one ambiguous") {
  // the i32 sums are the reference's bit for bit in almost every element
  const QAttention a{.b = 1, .s = 37, .h = 3, .d = 64, .out = i32};
  const std::size_t loose = check_attention(a);
  CHECK(loose < std::size_t(a.b * a.h * a.s * a.d) / 4);
}

TEST_CASE("mha int8: u8 and i8 Q, zero points, i8 probabilities, f32 / i32 / u8 outputs") {
  std::uint64_t seed = 100;
  q_type_cases(check_attention, seed);
  // i8 probabilities with a zero point: levels -128 .. 127 for p in [0, 1]
  check_attention({.s = 7, .h = 2, .d = 16, .p_type = i8, .p_scale = 1.0 / 255, .p_zero = -128},
                  {1, 3}, seed += 7);
}

TEST_CASE("mha int8: odd sizes, row tails and the block tail") { odd_size_cases(check_attention); }

TEST_CASE("mha int8: Q, K, V [1,128,12,64] with a mask, transposes folded (K read transposed)") {
  check_attention({.b = 1, .s = 128, .h = 12, .d = 64, .planar = false, .mask = true}, {2});
}

TEST_CASE("mha int8: transposed layouts with odd sizes, K given transposed or read transposed") {
  transposed_layout_cases(check_attention);
}

TEST_CASE("mha int8: many threads share heads and blocks of query rows (work_division.hpp)") {
  check_attention({.b = 1, .s = 100, .h = 3, .d = 32, .planar = false, .mask = true}, {5, 7, 64});
}

TEST_CASE(
    "mha int8: the tokenizer makes quantized attention one Subgraph, and the Program matches") {
  const QAttention a{.b = 1, .s = 32, .h = 4, .d = 16, .planar = false, .mask = true};
  const std::vector<Tensor> in = make_inputs(a, 9);
  check_one_subgraph_program(build(a), in, output_bound(a, in));
}

TEST_CASE("mha int8: forms the kernel cannot compute are refused with the reason") {
  auto attention = [](Graph& g, ir::Value scale, ElementType v_type) {
    const auto q = g.parameter(u8, Shape{8, 16});
    const auto k = g.parameter(i8, Shape{16, 8});
    const auto p = g.softmax(g.convert(g.matmul(q, k), f32), -1);
    auto pq = g.quantize(p, scale, g.scalar(f32, 0.0), u8);
    if (v_type == f32) pq = g.convert(pq, f32);
    return g.matmul(pq, g.parameter(v_type, Shape{8, 4}));
  };
  {
    Graph g; // quantized probabilities times f32 values
    g.result(attention(g, g.scalar(f32, 1.0 / 255), f32));
    check_int8_refused(g, "multiplies u8 by f32");
  }
  {
    Graph g; // u8 values: VPDPBUSD reads B signed
    g.result(attention(g, g.scalar(f32, 1.0 / 255), u8));
    check_int8_refused(g, "reads its B as u8");
  }
  {
    Graph g; // a scale of one value per key: not the quantization of the probabilities
    g.result(attention(g, g.parameter(f32, Shape{8}), i8));
    check_int8_refused(g, "follows the Softmax");
  }
}

TEST_CASE("mha int8: the QDQ form (DequantizeLinear around f32 MatMuls) runs as the same kernel") {
  // qdq_attention (mha_int8_cases.hpp): the bytes dequantized after the transposes of Q, K and
  // V, or before them
  for (const bool dequantize_first : {false, true}) {
    INFO("dequantized before the transposes: " << dequantize_first);
    const QAttention a{.b = 1, .s = 32, .h = 4, .d = 16, .planar = false, .mask = true};
    const Graph g = qdq_attention(a, dequantize_first);
    const std::vector<Tensor> in = make_inputs(a, 21);
    const Tensor want = reference::evaluate(g, std::span<const Tensor>(in))[0];
    const Program<> program(g);
    check_steps_are_kernels(program);
    std::size_t kernels = 0;
    for (const auto& s : program.steps()) kernels += s.kind == Program<>::StepKind::kernel;
    CHECK(kernels == 1);
    const Tensor got = program.run(in, with_threads(2))[0];
    const std::string report = compare_bounded(got, want, qdq_bound(a, in, want));
    CHECK_MESSAGE(report.empty(), report);
  }
}
