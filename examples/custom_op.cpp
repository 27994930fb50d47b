// SPDX-License-Identifier: Apache-2.0
// An op of your own, fused with built-in ones into one kernel.
//
// squared_relu.hpp declares SquaredRelu (tag, reference formula, x86-64 emitter) and
// my_ops::Traits, the x86-64 backend that knows it. Here a graph uses it between built-in
// ops: the tokenizer puts all of them into one Subgraph, compile() turns it into one kernel,
// and the result matches the reference interpreter bit for bit.
#include <cstdio>
#include <vector>

#include "squared_relu.hpp"

int main() {
  using namespace snippets;
  using G = ir::Graph<my_ops::Traits>;
  G model;
  const auto x = model.parameter(ElementType::f32, {16, 1000}, "x");
  const auto scale = model.parameter(ElementType::f32, {1, 1000}, "scale");
  const auto y = model.make(my_ops::SquaredRelu{}, {model.multiply(x, scale)}, "act")[0];
  model.result(model.add(y, x), "y");
  std::printf("%s\n", ir::to_string(model).c_str());

  const Program<my_ops::Traits> program(model);
  int kernels = 0;
  for (const auto& step : program.steps())
    kernels += step.kind == Program<my_ops::Traits>::StepKind::kernel;
  std::printf("%zu step(s), %d kernel(s)\n", program.steps().size(), kernels);

  std::vector<double> xs(16 * 1000), ss(1000);
  for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<double>(i % 97) / 8.0 - 6.0;
  for (std::size_t i = 0; i < ss.size(); ++i) ss[i] = 0.5 + static_cast<double>(i % 7) / 4.0;
  const std::vector<reference::Tensor> in{
      reference::Tensor::from_values(ElementType::f32, {16, 1000}, xs),
      reference::Tensor::from_values(ElementType::f32, {1, 1000}, ss)};
  const auto got = program.run(in)[0].values().v;
  const auto want = reference::evaluate(model, in)[0].values().v;
  std::size_t differ = 0;
  for (std::size_t i = 0; i < got.size(); ++i) differ += got[i] != want[i];
  std::printf("%zu of %zu outputs differ from the reference\n", differ, got.size());
  return kernels == 1 && differ == 0 ? 0 : 1;
}
