// SPDX-License-Identifier: Apache-2.0
// tests/aarch64/test_aarch64_mha_int8.cpp: quantized attention kernels (OpenVINO's MHAQuant) on
// the AArch64 target, under qemu-aarch64; the x64 counterpart is tests/test_jit_mha_int8.cpp,
// whose cases, bounds and reasoning these are.
//
// u8 or i8 Q (with a zero point) times i8 K summed exactly in int32 by SDOT, dequantized,
// scaled and masked on the registers, an f32 Softmax whose probabilities SoftmaxRows quantizes
// to u8 or i8 on the registers (FDIV, FRINTN: round half to even, FADD of the zero point,
// saturating narrowing) into byte rows of the scratch, the A of a second SDOT product with
// i8 V (a u8 A read as A - 128, the 128 back by the compensation row of V, packed per call by
// BrgemmCopyB), written as its i32 sums, dequantized f32 or requantized u8; 1-3 threads
// (5, 7 and 64 share heads and blocks of query rows), against the reference interpreter in
// double.
//
// Exactness (test_jit_mha_int8.cpp): both products are exact integer sums, so the only
// difference from the reference is the f32 Softmax, within a relative e = 2 ds + (2 N + 20)
// 2^-24 of the exact probability; a quantized level differs from the reference's only where
// [x (1 - e), x (1 + e)] holds a rounding boundary. The i32 output must equal the reference's
// but for the sum of |v| over such ambiguous levels of its row (most rows bit for bit), the f32
// output within that times the scales (plus two f32 roundings), a requantized u8 within that
// over its scale plus one level. Without FEAT_DotProd (aarch64.emulated.no_dotprod) quantized
// attention is refused.
#include <doctest/doctest.h>

#include <cmath>

#include "aarch64/a64_test_util.hpp"
#include "mha_int8_cases.hpp"

using namespace snippets;
using namespace snippets::a64_test;
using namespace snippets::mha_int8_test;

namespace {

/// Compiles the attention and compares each run with the reference within output_bound;
/// returns how many output elements had a nonzero bound (ambiguous levels).
std::size_t check_attention(const QAttention& a, std::vector<int> threads = {1, 3},
                            std::uint64_t seed = 11) {
  INFO(a.name());
  const G g = build(a);
  const std::vector<Tensor> in = make_inputs(a, seed);
  const Tensor want = reference::evaluate(g, std::span<const Tensor>(in))[0];
  const Tensor bound = with_f32_roundings(a, output_bound(a, in), want);
  std::size_t loose = 0;
  for (std::size_t i = 0; i < bound.size(); ++i) loose += bound.at(i) != 0;
  check_runs(compile(g), in, want, bound, threads);
  return loose;
}

/// A Program of `g` is one kernel, within `bound` of the reference.
void check_program(const G& g, const std::vector<Tensor>& in, const Tensor& bound) {
  const Tensor want = reference::evaluate(g, std::span<const Tensor>(in))[0];
  const Program<> program(g);
  std::size_t kernels = 0;
  for (const auto& s : program.steps()) kernels += s.kind == Program<>::StepKind::kernel;
  CHECK(kernels == 1);
  const Tensor got = program.run(in, with_threads(2))[0];
  const std::string report = compare_bounded(got, want, bound);
  CHECK_MESSAGE(report.empty(), report);
}

} // namespace

TEST_CASE("aarch64 mha int8: the probabilities' levels are exact but where f32 leaves one "
          "ambiguous") {
  if (!has_dotprod()) return;
  // the i32 sums are the reference's bit for bit in almost every element
  const QAttention a{.b = 1, .s = 37, .h = 3, .d = 64, .out = i32};
  const std::size_t loose = check_attention(a);
  CHECK(loose < std::size_t(a.b * a.h * a.s * a.d) / 4);
}

TEST_CASE("aarch64 mha int8: u8 and i8 Q, zero points, i8 probabilities, f32 / i32 / u8 "
          "outputs") {
  if (!has_dotprod()) return;
  std::uint64_t seed = 100;
  q_type_cases(check_attention, seed);
  // i8 probabilities, without and with a zero point (levels -128 .. 127 for p in [0, 1]):
  // an i8 A is read as it is, its zero point compensated by V's column sums
  for (const double zero : {0.0, -128.0})
    for (const ElementType out : {f32, i32})
      check_attention({.s = 7,
                       .h = 2,
                       .d = 16,
                       .p_type = i8,
                       .p_scale = zero == 0 ? 1.0 / 127 : 1.0 / 255,
                       .p_zero = zero,
                       .out = out},
                      {1, 3}, seed += 7);
}

TEST_CASE("aarch64 mha int8: a probability on a tie between two levels rounds to even") {
  // K zero: every score 0, every probability exactly 1 / KV, and with a scale of 2 / KV each
  // level is exactly 0.5 (f32 leaves no doubt), level 0 (+ zero) where half away from zero
  // would give 1: the i32 sums are the reference's bit for bit (0, or the zero point's
  // -128 x the sum of V's column)
  if (!has_dotprod()) return;
  for (const Dim kv : {Dim{8}, Dim{32}})
    for (const ElementType pt : {u8, i8}) {
      const QAttention a{.s = 5,
                         .h = 2,
                         .d = 19,
                         .kv = kv,
                         .p_type = pt,
                         .p_scale = 2.0 / double(kv),
                         .p_zero = pt == i8 ? -128.0 : 0.0,
                         .out = i32};
      INFO(a.name());
      std::vector<Tensor> in = make_inputs(a, 400);
      in[1] = Tensor(i8, in[1].shape());
      const G g = build(a);
      const Tensor want = reference::evaluate(g, std::span<const Tensor>(in))[0];
      const Tensor got = compile(g).run(std::span<const Tensor>(in), with_threads(2))[0];
      CHECK(compare(got, want, exact) == "");
      if (pt == u8) CHECK(max_abs(want) == 0);
    }
}

TEST_CASE("aarch64 mha int8: odd sizes, row tails and the block tail") {
  if (!has_dotprod()) return;
  odd_size_cases(check_attention);
}

TEST_CASE("aarch64 mha int8: Q, K, V [1,128,12,64] with a mask, transposes folded (K read "
          "transposed)") {
  if (!has_dotprod()) return;
  check_attention({.b = 1, .s = 128, .h = 12, .d = 64, .planar = false, .mask = true}, {2});
}

TEST_CASE("aarch64 mha int8: transposed layouts with odd sizes, K given transposed or read "
          "transposed") {
  if (!has_dotprod()) return;
  transposed_layout_cases(check_attention);
}

TEST_CASE("aarch64 mha int8: many threads share heads and blocks of query rows") {
  if (!has_dotprod()) return;
  check_attention({.b = 1, .s = 100, .h = 3, .d = 32, .planar = false, .mask = true}, {5, 7, 64});
}

TEST_CASE("aarch64 mha int8: a Program runs quantized attention as one kernel") {
  if (!has_dotprod()) return;
  const QAttention a{.b = 1, .s = 32, .h = 4, .d = 16, .planar = false, .mask = true};
  const std::vector<Tensor> in = make_inputs(a, 9);
  check_program(build(a), in, output_bound(a, in));
}

TEST_CASE("aarch64 mha int8: forms the kernel cannot compute are refused with the reason; "
          "without FEAT_DotProd, all") {
  auto attention = [](G& g, ir::Value scale, ElementType v_type) {
    const auto q = g.parameter(u8, Shape{8, 16});
    const auto k = g.parameter(i8, Shape{16, 8});
    const auto p = g.softmax(g.convert(g.matmul(q, k), f32), -1);
    auto pq = g.quantize(p, scale, g.scalar(f32, 0.0), u8);
    if (v_type == f32) pq = g.convert(pq, f32);
    return g.matmul(pq, g.parameter(v_type, Shape{8, 4}));
  };
  if (!Backend::host_has_dotprod()) {
    G g;
    g.result(attention(g, g.scalar(f32, 1.0 / 255), i8));
    check_refused([&] { (void)compile(g); }, "no int8 products");
    return;
  }
  {
    G g; // quantized probabilities times f32 values
    g.result(attention(g, g.scalar(f32, 1.0 / 255), f32));
    check_refused([&] { (void)compile(g); }, "multiplies u8 by f32");
  }
  {
    G g; // u8 values: SDOT reads B signed
    g.result(attention(g, g.scalar(f32, 1.0 / 255), u8));
    check_refused([&] { (void)compile(g); }, "reads its B as u8");
  }
  {
    G g; // a scale of one value per key: not the quantization of the probabilities
    g.result(attention(g, g.parameter(f32, Shape{8}), i8));
    check_refused([&] { (void)compile(g); }, "follows the Softmax");
  }
}

TEST_CASE("aarch64 mha int8: the QDQ form (DequantizeLinear around f32 MatMuls) runs as the same "
          "kernel") {
  // qdq_attention (mha_int8_cases.hpp), the bytes dequantized after the transposes
  if (!has_dotprod()) return;
  const QAttention a{.b = 1, .s = 32, .h = 4, .d = 16, .planar = false, .mask = true};
  const G g = qdq_attention(a, false);
  const std::vector<Tensor> in = make_inputs(a, 21);
  const Tensor want = reference::evaluate(g, std::span<const Tensor>(in))[0];
  check_program(g, in, qdq_bound(a, in, want));
}
