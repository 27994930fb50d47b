// SPDX-License-Identifier: Apache-2.0
// tests/fuzz/math.hpp: the transcendental family: random f32 models mixing the approximate ops
// (Exp, Log, Sigmoid, Tanh, Erf, Gelu in both forms, Swish with several betas, Mish, Elu,
// SoftPlus, HSwish, HSigmoid, SoftSign, LeakyRelu, PowerStatic, Power, SquaredDifference) with
// the exact ones (and Mod, FloorMod, PRelu), run as Programs with FMA contraction on, inputs
// with NaN, infinities, signed zeros, huge and tiny values. The oracle is fuzz/bounds.hpp: each
// op within the bound docs/math_accuracy.md asserts, propagated through the model; a value
// rounded to bf16 on its way (which lets the exp-based ops take their shorter polynomial) is
// allowed that polynomial's error.
#pragma once

#include "fuzz/elementwise.hpp"

namespace snippets::fuzz {

inline std::vector<OpMaker> math_ops() {
  using G = ir::GeluApproximation;
  std::vector<OpMaker> ops = exact_ops();
  const std::vector<OpMaker> approx = {
      unary("Exp", ir::Exp{}),
      unary("Log", ir::Log{}),
      unary("Sigmoid", ir::Sigmoid{}),
      unary("Tanh", ir::Tanh{}),
      unary("Erf", ir::Erf{}),
      unary("Gelu", ir::Gelu{G::erf}),
      unary("GeluTanh", ir::Gelu{G::tanh}),
      unary("Swish", ir::Swish{1.0}),
      unary("Swish0.5", ir::Swish{0.5}),
      unary("Swish1.702", ir::Swish{1.702}),
      unary("Swish-0.75", ir::Swish{-0.75}),
      unary("Swish0.1", ir::Swish{0.1}),
      unary("Swish2", ir::Swish{2.0}),
      unary("Mish", ir::Mish{}),
      unary("Elu", ir::Elu{1.0}),
      unary("Elu2.5", ir::Elu{2.5}),
      unary("Elu-0.5", ir::Elu{-0.5}),
      unary("Elu0.1", ir::Elu{0.1}),
      unary("SoftPlus", ir::SoftPlus{}),
      unary("HSwish", ir::HSwish{}),
      unary("HSigmoid", ir::HSigmoid{}),
      unary("SoftSign", ir::SoftSign{}),
      unary("LeakyRelu", ir::LeakyRelu{0.01}),
      unary("LeakyRelu1/3", ir::LeakyRelu{1.0 / 3}),
      unary("LeakyRelu-0.5", ir::LeakyRelu{-0.5}),
      unary("LeakyRelu0", ir::LeakyRelu{0.0}),
      unary("Cube", ir::PowerStatic{3.0}),
      unary("Pow1.5", ir::PowerStatic{1.5}),
      unary("Pow-2", ir::PowerStatic{-2.0}),
      unary("Reciprocal", ir::PowerStatic{-1.0}),
      unary("Pow0.5", ir::PowerStatic{0.5}),
      binary("Power", ir::Power{}),
      binary("SquaredDifference", ir::SquaredDifference{}),
      binary("Mod", ir::Mod{}),
      binary("FloorMod", ir::FloorMod{}),
      {"PRelu", 2,
       [](Graph& g, std::span<const Value> v) {
         return g.prelu(v[0], g.scalar(ElementType::f32, -0.25));
       }},
      {"AsBf16", 1, // a value kept as bf16 on its way: the shorter exp polynomial may run
       [](Graph& g, std::span<const Value> v) {
         return g.convert(g.convert(v[0], ElementType::bf16), ElementType::f32);
       }},
  };
  // two approximate ops for every exact one
  for (int i = 0; i < 2; ++i) ops.insert(ops.end(), approx.begin(), approx.end());
  return ops;
}

inline Case math_case(std::uint64_t seed) {
  static const ModelSpec spec = [] {
    ModelSpec s;
    s.ops = math_ops();
    s.max_ops = 16;
    s.max_rank = 4;
    s.max_elements = 1024;
    s.twice = true;
    return s;
  }();
  Case c;
  c.model = random_model(seed, spec);
  c.check = Check::bounds;
  c.fma = true;
  c.threads = 1 + int(seed % 2);
  return c;
}

} // namespace snippets::fuzz
