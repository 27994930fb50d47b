// SPDX-License-Identifier: Apache-2.0
// tests/mha_int8_cases.hpp: the quantized attention (OpenVINO's MHAQuant) that every target's
// tests build (tests/test_jit_mha_int8.cpp on x86-64, tests/aarch64/test_aarch64_mha_int8.cpp
// under qemu-aarch64): its graph, inputs, and the error bound of each output element, whose
// reasoning is test_jit_mha_int8.cpp's file comment (both products exact; a quantized
// probability may differ from the reference's by one level only where the f32 Softmax's error
// interval holds a rounding boundary).
#pragma once

#include <cmath>
#include <sstream>

#include "matmul_test_util.hpp"

namespace snippets::mha_int8_test {

using namespace jit_test;

inline constexpr ElementType u8 = ElementType::u8, i8 = ElementType::i8, i32 = ElementType::i32;

/// Quantized attention: Q (q_type) and K, V (i8) [B, S, H, D] (or, `planar`, Q and V
/// [B*H, S, D], K [B*H, D, KV] or with `k_rows` [B*H, KV, D] read transposed);
/// out = dequant(quant(softmax(dequant(Q K^T) + mask)) V), [B, S, H, D] (or planar).
struct QAttention {
  Dim b = 1, s = 8, h = 2, d = 16, kv = 0;
  ElementType q_type = u8;
  bool planar = true, k_rows = false, mask = false;
  std::int32_t q_zero = 0; // Q's zero point (MatMul::a_zero_point)
  ElementType p_type = u8; // the quantized probabilities'
  double p_scale = 1.0 / 255, p_zero = 0;
  ElementType out = f32; // i32: the second product's sums; u8: requantized
  double v_scale = 0.02, out_scale = 0.01, out_zero = 100;

  Dim keys() const { return kv ? kv : s; }
  /// Dequantization of the scores: Q's scale x K's x 1/sqrt(D), such that they span a few units.
  double qk_scale() const { return 3.0 / (128.0 * 100 * std::sqrt(double(d))); }
  std::vector<Shape> inputs() const {
    std::vector<Shape> in;
    if (planar)
      in = {Shape{b * h, s, d}, k_rows ? Shape{b * h, keys(), d} : Shape{b * h, d, keys()},
            Shape{b * h, keys(), d}};
    else
      in = {Shape{b, s, h, d}, Shape{b, keys(), h, d}, Shape{b, keys(), h, d}};
    if (mask) in.push_back(Shape{1, s, keys()});
    return in;
  }
  std::string name() const {
    std::ostringstream os;
    os << (planar ? "planar " : "") << (k_rows ? "K rows " : "") << "b" << b << " s" << s << " kv"
       << keys() << " h" << h << " d" << d << " Q " << to_string(q_type) << " less " << q_zero
       << ", P " << to_string(p_type) << " + " << p_zero << (mask ? ", mask" : "") << ", out "
       << to_string(out);
    return os.str();
  }
};

/// upto: 0 the output, 1 the probabilities [B, H, S, KV] (f32), 2 the scores before the mask.
inline Graph build(const QAttention& a, int upto = 0) {
  const auto in = a.inputs();
  Graph g;
  auto q = g.parameter(a.q_type, in[0], "q");
  auto k = g.parameter(i8, in[1], "k");
  auto v = g.parameter(i8, in[2], "v");
  if (!a.planar) {
    q = g.transpose(q, {0, 2, 1, 3});
    k = g.transpose(k, {0, 2, 3, 1});
    v = g.transpose(v, {0, 2, 1, 3});
  }
  const auto acc = g.make(ir::MatMul{false, a.planar && a.k_rows, a.q_zero}, {q, k})[0];
  auto scores = g.multiply(g.convert(acc, f32), g.scalar(f32, a.qk_scale()));
  if (upto == 2) {
    g.result(scores);
    return g;
  }
  if (a.mask) scores = g.add(scores, g.parameter(f32, in[3], "mask"));
  const auto p = g.softmax(scores, -1);
  if (upto == 1) {
    g.result(p);
    return g;
  }
  const auto pq = g.quantize(p, g.scalar(f32, a.p_scale), g.scalar(f32, a.p_zero), a.p_type);
  const auto sums = g.make(ir::MatMul{false, false, std::int32_t(a.p_zero)}, {pq, v})[0];
  ir::Value out = sums;
  if (a.out != i32) {
    out = g.multiply(g.convert(sums, f32), g.scalar(f32, a.p_scale * a.v_scale));
    if (a.out != f32)
      out = g.quantize(out, g.scalar(f32, a.out_scale), g.scalar(f32, a.out_zero), a.out);
  }
  g.result(a.planar ? out : g.transpose(out, {0, 2, 1, 3}), "out");
  return g;
}

inline std::vector<Tensor> make_inputs(const QAttention& a, std::uint64_t seed) {
  const auto shapes = a.inputs();
  std::vector<Tensor> in{bytes(a.q_type, shapes[0], seed), bytes(i8, shapes[1], seed + 1),
                         bytes(i8, shapes[2], seed + 2)};
  if (a.mask) in.push_back(uniform(shapes[3], seed + 3, -2, 0));
  return in;
}

inline double max_abs(const Tensor& t) {
  double m = 0;
  for (std::size_t i = 0; i < t.size(); ++i) m = std::max(m, std::fabs(t.at(i)));
  return m;
}

/// The error bound of each output element (see the file comment), in the output's layout.
inline Tensor output_bound(const QAttention& a, const std::vector<Tensor>& in) {
  const std::span<const Tensor> inputs(in);
  const Tensor p = reference::evaluate(build(a, 1), inputs)[0]; // [B, H, S, KV] or [BH, S, KV]
  const double acc = max_abs(reference::evaluate(build(a, 2), inputs.first(3))[0]);
  const double ds = 0x1p-22 * acc + (a.mask ? 0x1p-23 * (acc + max_abs(in[3])) : 0);
  const double e = 2 * ds + double(2 * a.keys() + 20) * 0x1p-24;
  const Dim S = a.s, KV = a.keys(), D = a.d, H = a.h;
  std::vector<double> bound(std::size_t(a.b * H * S * D), 0.0);
  for (Dim b = 0; b < a.b; ++b)
    for (Dim h = 0; h < H; ++h)
      for (Dim i = 0; i < S; ++i)
        for (Dim j = 0; j < KV; ++j) {
          const double x = p.at(std::size_t(((b * H + h) * S + i) * KV + j)) / a.p_scale;
          const double lo = std::nearbyint(x * (1 - e) - 1e-9), hi = std::nearbyint(x * (1 + e));
          if (lo == hi) continue; // one level whatever the kernel's rounding
          for (Dim c = 0; c < D; ++c) {
            const Dim vi =
                a.planar ? ((b * H + h) * KV + j) * D + c : ((b * KV + j) * H + h) * D + c;
            const Dim oi = a.planar ? ((b * H + h) * S + i) * D + c : ((b * S + i) * H + h) * D + c;
            bound[std::size_t(oi)] += std::fabs(in[2].at(std::size_t(vi)));
          }
        }
  for (double& x : bound) {
    if (a.out == f32) x *= a.p_scale * a.v_scale;
    if (a.out != f32 && a.out != i32 && x != 0) x = x * a.p_scale * a.v_scale / a.out_scale + 1;
  }
  return Tensor::from_values(f32, a.planar ? Shape{a.b * H, S, D} : Shape{a.b, S, H, D}, bound);
}

/// `bound` with, for an f32 output, the two f32 roundings of an element a level off.
inline Tensor with_f32_roundings(const QAttention& a, Tensor bound, const Tensor& want) {
  if (a.out == f32)
    for (std::size_t i = 0; i < bound.size(); ++i)
      if (bound.at(i) != 0)
        bound.set(i, bound.at(i) + 0x1p-22 * (std::fabs(want.at(i)) + bound.at(i)));
  return bound;
}

/// Runs `k` on `in` with each thread count of `threads`, each output within `bound` of `want`.
inline void check_runs(const CompiledKernel& k, const std::vector<Tensor>& in, const Tensor& want,
                       const Tensor& bound, const std::vector<int>& threads) {
  for (const int n : threads) {
    INFO("threads = " << n);
    const Tensor got = k.run(std::span<const Tensor>(in), with_threads(n))[0];
    REQUIRE(got.type() == want.type());
    REQUIRE(got.shape() == want.shape());
    const std::string report = compare_bounded(got, want, bound);
    CHECK_MESSAGE(report.empty(), report);
  }
}

/// `a` as quantization tools export it (planar false, a mask, u8 Q): the bytes, transposed,
/// dequantized into f32 MatMuls (`dequantize_first`: dequantized before the transposes), the
/// probabilities quantized and dequantized again, with the scales of build(); a Program folds
/// the products into int8 ones (FoldDequantizeIntoMatMul) before the tokenizer.
inline Graph qdq_attention(const QAttention& a, bool dequantize_first) {
  const auto shapes = a.inputs();
  Graph g;
  auto dq = [&](ir::Value x, double s) { return g.multiply(g.convert(x, f32), g.scalar(f32, s)); };
  const double qk = double(float(a.qk_scale())); // 2^-7 x (128 qk): the same f32 product
  auto operand = [&](ElementType type, int i, const char* name,
                     const std::vector<std::size_t>& order, double scale) {
    const auto bytes = g.parameter(type, shapes[std::size_t(i)], name);
    return dequantize_first ? g.transpose(dq(bytes, scale), order)
                            : dq(g.transpose(bytes, order), scale);
  };
  const auto q = operand(u8, 0, "q", {0, 2, 1, 3}, 0x1p-7);
  const auto k = operand(i8, 1, "k", {0, 2, 3, 1}, 128 * qk);
  const auto v = operand(i8, 2, "v", {0, 2, 1, 3}, a.v_scale);
  const auto scores = g.add(g.matmul(q, k), g.parameter(f32, shapes[3], "mask"));
  const auto p = g.quantize(g.softmax(scores, -1), g.scalar(f32, a.p_scale), g.scalar(f32, 0.0));
  const auto out = g.matmul(dq(p, a.p_scale), v);
  g.result(g.transpose(out, {0, 2, 1, 3}), "out");
  return g;
}

/// The bound of qdq_attention(a): output_bound with two f32 roundings on every element.
inline Tensor qdq_bound(const QAttention& a, const std::vector<Tensor>& in, const Tensor& want) {
  Tensor bound = output_bound(a, in);
  for (std::size_t i = 0; i < bound.size(); ++i)
    bound.set(i, bound.at(i) + 0x1p-22 * (std::fabs(want.at(i)) + bound.at(i)));
  return bound;
}

// The cases both suites run, each given to check(attention, threads, seed): the target's
// check_attention.

/// u8 and i8 Q with and without a zero point, masked, f32 / i32 / u8 outputs.
template <class Check> void q_type_cases(Check&& check, std::uint64_t& seed) {
  for (const ElementType qt : {u8, i8})
    for (const std::int32_t zero : {0, 3})
      for (const ElementType out : {f32, i32, u8})
        check(QAttention{.b = 2,
                         .s = 9,
                         .h = 2,
                         .d = 24,
                         .kv = 13,
                         .q_type = qt,
                         .mask = true,
                         .q_zero = qt == u8 ? 128 + zero : -zero,
                         .out = out},
              std::vector<int>{1, 3}, seed += 7);
}

/// Keys: tails of a vector, of the rows' sweep and of A's bytes in the second product; head
/// sizes: tails of V's panels and of the first product's depth.
template <class Check> void odd_size_cases(Check&& check) {
  std::uint64_t seed = 200;
  for (const Dim s : {Dim{1}, Dim{7}, Dim{37}, Dim{128}})
    for (const Dim d : {Dim{64}, Dim{37}})
      check(QAttention{.b = 1, .s = s, .h = 2, .d = d, .kv = s == 128 ? s : s + 2},
            std::vector<int>{1, 3}, seed += 7);
}

/// [B, S, H, D] layouts with odd sizes, K given transposed or read transposed.
template <class Check> void transposed_layout_cases(Check&& check) {
  std::uint64_t seed = 300;
  for (const ElementType qt : {u8, i8}) {
    check(QAttention{.b = 2, .s = 7, .h = 3, .d = 37, .kv = 5, .q_type = qt, .planar = false},
          std::vector<int>{1, 3}, seed += 7);
    check(QAttention{.b = 1, .s = 33, .h = 2, .d = 3, .q_type = qt, .planar = false, .mask = true},
          std::vector<int>{1, 3}, seed += 7);
    check(QAttention{.b = 3,
                     .s = 17,
                     .h = 1,
                     .d = 37,
                     .kv = 21,
                     .q_type = qt,
                     .k_rows = true,
                     .q_zero = qt == u8 ? 7 : -7,
                     .out = u8},
          std::vector<int>{1, 3}, seed += 7);
  }
}

} // namespace snippets::mha_int8_test
