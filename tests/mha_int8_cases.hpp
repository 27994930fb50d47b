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

} // namespace snippets::mha_int8_test
