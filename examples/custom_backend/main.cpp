// SPDX-License-Identifier: Apache-2.0
// examples/custom_backend/main.cpp: a model run through Program<sse41::Traits>, the SSE4.1
// backend of this directory, and checked against the reference interpreter.
//
// The model mixes ops the backend has emitters for with one it lacks (Tanh): the tokenizer
// puts the supported ops into Subgraphs around the Tanh, which runs on the reference path.
// Exit code 0 only when there are two kernels and every output is within 2 ulp of the
// reference (the kernels' Exp and Sigmoid are within 1 and 2 ulp, the other ops exact).
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "custom_backend/sse41_traits.hpp"
#include "snippets/snippets.hpp"

namespace {

std::int64_t ulp_distance(float a, float b) {
  auto ordered = [](float f) {
    const auto i = static_cast<std::int64_t>(std::bit_cast<std::int32_t>(f));
    return i >= 0 ? i : std::int64_t{INT32_MIN} - i;
  };
  const std::int64_t d = ordered(a) - ordered(b);
  return d < 0 ? -d : d;
}

} // namespace

int main() {
  using namespace snippets;
  using G = ir::Graph<sse41::Traits>;
  constexpr ElementType f32 = ElementType::f32;
  if (!sse41::Traits::host_supported()) {
    std::printf("this host lacks SSE4.1\n");
    return 1;
  }
  G model;
  const auto x = model.parameter(f32, {8, 37}, "x");
  const auto scale = model.parameter(f32, {1, 37}, "scale");
  const auto bias = model.parameter(f32, {8, 1}, "bias");
  const auto pre = model.add(model.multiply(x, scale), bias);
  const auto gate = model.sigmoid(model.clamp(pre, -6.0, 6.0));
  const auto mid = model.tanh(model.maximum(pre, gate)); // no SSE4.1 emitter: reference path
  model.result(model.sqrt(model.add(model.exp(model.negative(model.abs(mid))), gate)), "y");

  const Program<sse41::Traits> program(model);
  int kernels = 0;
  for (const auto& step : program.steps()) {
    kernels += step.kind == Program<sse41::Traits>::StepKind::kernel;
    if (!step.note.empty()) std::printf("note: %s\n", step.note.c_str());
  }
  std::printf("%zu step(s), %d SSE4.1 kernel(s)\n", program.steps().size(), kernels);

  std::vector<double> xs(8 * 37), ss(37), bs(8);
  for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<double>(i % 29) / 4.0 - 3.5;
  for (std::size_t i = 0; i < ss.size(); ++i) ss[i] = 0.25 + static_cast<double>(i % 5) / 2.0;
  for (std::size_t i = 0; i < bs.size(); ++i) bs[i] = static_cast<double>(i) - 4.0;
  const std::vector<reference::Tensor> in{reference::Tensor::from_values(f32, {8, 37}, xs),
                                          reference::Tensor::from_values(f32, {1, 37}, ss),
                                          reference::Tensor::from_values(f32, {8, 1}, bs)};
  const auto got = program.run(in)[0].values().v;
  const auto want = reference::evaluate(model, in)[0].values().v;
  std::int64_t worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    worst = std::max(worst, ulp_distance(static_cast<float>(got[i]), static_cast<float>(want[i])));
  const bool match = worst <= 2;
  std::printf("largest difference from the reference: %lld ulp: %s\n",
              static_cast<long long>(worst), match ? "results match" : "results DIFFER");
  return kernels == 2 && match ? 0 : 1;
}
