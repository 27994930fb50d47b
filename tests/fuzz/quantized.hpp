// SPDX-License-Identifier: Apache-2.0
// tests/fuzz/quantized.hpp: the quantized family: random_model's chains of exact ops with
// FakeQuantize and Quantize among them, checked bit for bit.
//
// The ops the generator adds (their parameters drawn from a generator seeded by the graph's
// size, so a model is still a function of its seed):
//  - FakeQuantize with ranges per tensor (Scalars: ordinary 8-bit ranges, a level per integer,
//    so that the inputs' halves are ties, two levels, inverted, empty and -0 output ranges) or
//    per channel along a random axis (Constants of one value per index, or model inputs, which
//    may hold anything);
//  - a FakeQuantize onto [0, 255] or [-128, 127] converted to u8 or i8 and back to f32;
//  - Quantize to u8 or i8 (per tensor or per channel, scales that make f32 ties such as 0.1),
//    converted back, or dequantized: (Convert(q) - zero point) * scale;
// and every model gets one more output: its last value quantized to u8 or i8, stored as such.
// The models run as Programs with 1-3 threads and no FMA, against the reference with every node
// rounded to f32: the quantization ops are bit-exact whatever feeds them, but for the sign of a
// zero that went through an integer (a Convert of -0.5 to u8 and back is -0 in the reference's
// values, +0 in a kernel's; docs/math_accuracy.md), which the oracle lets pass.
#pragma once

#include "fuzz/elementwise.hpp"

namespace snippets::fuzz {

namespace detail {

/// A range or scale operand for `x`: one value, or (per channel) a Constant or model input of
/// shape [C, 1, ..., 1] along an axis of x whose extent C is above 1.
inline Value quant_operand(Graph& g, Rng& rng, Value x, int per_channel_axis,
                           const std::function<double(Rng&)>& value) {
  const Shape& s = g.type(x).shape;
  if (per_channel_axis < 0) return g.scalar(ElementType::f32, value(rng));
  const auto a = std::size_t(per_channel_axis);
  std::vector<Dim> dims(s.rank() - a, 1);
  dims[0] = s[a];
  if (rng.integer(0, 4) == 0)
    return g.parameter(ElementType::f32, Shape(dims), "range" + std::to_string(g.size()));
  std::vector<double> v(std::size_t(s[a]));
  for (double& x : v) x = value(rng);
  return g.constant(ElementType::f32, Shape(dims), v);
}

/// An axis of x to quantize along (extent above 1), or -1 (per tensor), one time in three.
inline int channel_axis(Graph& g, Rng& rng, Value x) {
  const Shape& s = g.type(x).shape;
  std::vector<int> axes;
  for (std::size_t a = 0; a < s.rank(); ++a)
    if (s[a] > 1) axes.push_back(int(a));
  if (axes.empty() || rng.integer(0, 2) != 0) return -1;
  return axes[std::size_t(rng.integer(0, std::int64_t(axes.size()) - 1))];
}

inline Value random_fake_quantize(Graph& g, Value x) {
  Rng rng(0xfa4e0000u + g.size());
  const int axis = channel_axis(g, rng, x);
  struct Form {
    double il, ih, ol, oh;
    std::int64_t levels;
  };
  static constexpr Form forms[] = {
      {0, 255, 0, 255, 256}, {-4, 4, -4, 4, 9}, {-1, 1, 0, 1, 2},     {-2.5, 3, -1, 1, 255},
      {3, -3, 0, 6, 7},      {1, 1, -1, 2, 5},  {-8, 8, -0.0, 8, 17}, {-0.5, 0.5, 2, -2, 65536},
  };
  const Form f = forms[rng.integer(0, std::int64_t(std::size(forms)) - 1)];
  auto near = [](double v) { return [v](Rng& r) { return v + r.uniform(-0.5, 0.5); }; };
  auto exact = [](double v) { return [v](Rng&) { return v; }; };
  const bool jitter = axis >= 0 && rng.integer(0, 1) == 0;
  auto operand = [&](double v) {
    return quant_operand(g, rng, x, axis, jitter ? std::function<double(Rng&)>(near(v)) : exact(v));
  };
  const Value il = operand(f.il), ih = operand(f.ih), ol = operand(f.ol), oh = operand(f.oh);
  return g.fake_quantize(x, il, ih, ol, oh, f.levels);
}

inline Value random_quantize(Graph& g, Value x, ElementType to) {
  Rng rng(0x9a470000u + g.size());
  const int axis = channel_axis(g, rng, x);
  static constexpr double scales[] = {0.5, 1, 2, 0.1, 0.25, 3, 0.3};
  const Value s = quant_operand(g, rng, x, axis, [](Rng& r) {
    return scales[r.integer(0, std::int64_t(std::size(scales)) - 1)];
  });
  const Value z = quant_operand(g, rng, x, axis, [to](Rng& r) {
    return double(to == ElementType::u8 ? r.integer(0, 255) : r.integer(-128, 127));
  });
  return g.quantize(x, s, z, to);
}

} // namespace detail

/// The quantization ops the generator adds to exact_ops (see the header), each an f32 value.
inline std::vector<OpMaker> quantization_ops() {
  using detail::random_fake_quantize;
  using detail::random_quantize;
  constexpr ElementType f32 = ElementType::f32, u8 = ElementType::u8, i8 = ElementType::i8;
  return {
      {"FakeQuantize", 1,
       [](Graph& g, std::span<const Value> v) { return random_fake_quantize(g, v[0]); }},
      {"FakeQuantize->u8", 1,
       [](Graph& g, std::span<const Value> v) {
         auto c = [&](double x) { return g.scalar(f32, x); };
         const Value q = g.fake_quantize(v[0], c(-64), c(63.75), c(0), c(255), 256);
         return g.convert(g.convert(q, u8), f32);
       }},
      {"FakeQuantize->i8", 1,
       [](Graph& g, std::span<const Value> v) {
         auto c = [&](double x) { return g.scalar(f32, x); };
         const Value q = g.fake_quantize(v[0], c(-3.2), c(3.1), c(-128), c(127), 256);
         return g.convert(g.convert(q, i8), f32);
       }},
      {"Quantize", 1,
       [](Graph& g, std::span<const Value> v) {
         const ElementType to = g.size() % 2 ? u8 : i8;
         return g.convert(random_quantize(g, v[0], to), f32);
       }},
      {"QDQ", 1,
       [](Graph& g, std::span<const Value> v) {
         const Value q = random_quantize(g, v[0], g.size() % 2 ? u8 : i8);
         const auto& n = g.node(q.output.node); // its scale and zero point
         const Value s = g.value(n.inputs[1]), z = g.value(n.inputs[2]);
         return g.multiply(g.subtract(g.convert(q, f32), z), s);
       }},
  };
}

/// The quantized family (see the header).
inline Case quantized_case(std::uint64_t seed) {
  ModelSpec spec;
  for (int copies = 0; copies < 3; ++copies) // quantization ops a quarter of the time or so
    for (OpMaker& m : quantization_ops()) spec.ops.push_back(std::move(m));
  spec.max_ops = 16;
  spec.opaque_probability = 0.03;
  Case c;
  c.model = random_model(seed, spec);
  Graph& g = c.model;
  const Value last = g.value(g.node(g.results()[0]).inputs[0]);
  g.result(detail::random_quantize(g, last, seed % 2 ? ElementType::u8 : ElementType::i8), "q");
  c.threads = 1 + int(seed % 3);
  c.check = Check::exact_any_zero; // a -0 converted to an integer and back (types.hpp)
  return c;
}

} // namespace snippets::fuzz
