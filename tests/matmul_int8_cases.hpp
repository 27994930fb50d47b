// SPDX-License-Identifier: Apache-2.0
// tests/matmul_int8_cases.hpp: int8 MatMul graphs that every target's tests build
// (tests/test_jit_matmul_int8.cpp on x86-64, tests/aarch64/test_aarch64_matmul_int8.cpp under
// qemu-aarch64), each with its inputs; each suite checks them with its own variants.
#pragma once

#include <cmath>
#include <utility>

#include "matmul_test_util.hpp"

namespace snippets::matmul_int8_test {

using namespace jit_test;

/// A graph and its inputs.
struct Case {
  Graph g;
  std::vector<Tensor> in;
};

/// A (a_type, [.., M, K]) x B (i8, [.., K, N] or [.., N, K] with tb), B an input or constant
/// weights, written as i32.
inline Case int8_product(ElementType a_type, const Shape& sa, const Shape& sb, bool tb,
                         bool constant_b, std::uint64_t seed) {
  const Tensor a = bytes(a_type, sa, seed), b = bytes(ElementType::i8, sb, seed + 1);
  Case c;
  const auto pa = c.g.parameter(a_type, sa);
  const auto w = constant_b ? c.g.constant(ElementType::i8, sb, b.values().v)
                            : c.g.parameter(ElementType::i8, sb);
  c.g.result(c.g.matmul(pa, w, false, tb));
  c.in = constant_b ? std::vector<Tensor>{a} : std::vector<Tensor>{a, b};
  return c;
}

/// A quantized layer on constant weights, [2, 21, 70] x [70, 45]: the sums, then dequantized
/// (acc * (scale_x * scale_w) + bias), relu, and QuantizeLinear to u8; outputs the sums, the
/// f32 values and the u8 ones.
inline Case requantizing_layer(ElementType a_type, std::uint64_t& seed) {
  const Shape sa{2, 21, 70}, sb{70, 45};
  Case c;
  Graph& g = c.g;
  const auto x = g.parameter(a_type, sa);
  const auto w = g.constant(ElementType::i8, sb, bytes(ElementType::i8, sb, ++seed).values().v);
  const auto bias = g.parameter(f32, Shape{45});
  const auto acc = g.matmul(x, w);
  const auto y =
      g.relu(g.add(g.multiply(g.convert(acc, f32), g.scalar(f32, 0.0078125 * 0.02)), bias));
  g.result(acc, "sums");
  g.result(y, "f32");
  g.result(g.quantize(y, g.scalar(f32, 0.05), g.scalar(f32, 3.0), ElementType::u8), "u8");
  c.in = {bytes(a_type, sa, ++seed), uniform(Shape{45}, ++seed, -2, 2)};
  return c;
}

/// A quantized MLP chain of `widths.size() - 1` layers on x (x_type [.., M, widths[0]]): each
/// layer q = Quantize(relu(Convert(x_q W) * s + b)), u8 (zero point 5) or i8 (zero point -3)
/// by `hidden`, the next layer subtracting that zero point (MatMul::a_zero_point); the last
/// layer's dequantized f32 and requantized u8 values are the outputs (`f32_out` false: the u8
/// one alone). W constant or inputs.
inline Graph quantized_chain(ElementType x_type, const Shape& x_shape,
                             const std::vector<Dim>& widths, ElementType hidden, bool constant_w,
                             std::uint64_t seed, std::vector<Tensor>& inputs, bool f32_out = true) {
  Graph g;
  inputs = {bytes(x_type, x_shape, seed)};
  ir::Value x = g.parameter(x_type, x_shape, "x");
  std::int32_t zero = 0;
  for (std::size_t l = 0; l + 1 < widths.size(); ++l) {
    const Shape sw{widths[l], widths[l + 1]};
    const Tensor w = bytes(ElementType::i8, sw, seed + 10 * l + 1);
    const auto wv = constant_w ? g.constant(ElementType::i8, sw, w.values().v)
                               : g.parameter(ElementType::i8, sw);
    if (!constant_w) inputs.push_back(w);
    const auto bias = g.parameter(f32, Shape{widths[l + 1]});
    inputs.push_back(uniform(Shape{widths[l + 1]}, seed + 10 * l + 2, -2, 2));
    const auto acc = g.make(ir::MatMul{false, false, zero}, {x, wv})[0];
    const double scale = 1.0 / (128.0 * 64 * std::sqrt(double(widths[l])));
    const auto y = g.add(g.multiply(g.convert(acc, f32), g.scalar(f32, scale)), bias);
    if (l + 2 == widths.size()) {
      if (f32_out) g.result(y, "f32");
      g.result(g.quantize(y, g.scalar(f32, 0.02), g.scalar(f32, 128.0), ElementType::u8), "u8");
      break;
    }
    zero = hidden == ElementType::u8 ? 5 : -3;
    x = g.quantize(g.relu(y), g.scalar(f32, 0.01), g.scalar(f32, double(zero)), hidden);
  }
  return g;
}

} // namespace snippets::matmul_int8_test
