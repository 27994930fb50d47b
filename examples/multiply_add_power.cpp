// The seed's data-flow example: y = (x1 * 2 + x2) ^ 2 on [3,2,?,?] inputs.
//
// Builds the graph with dynamic spatial dimensions, prints it, and evaluates it with the
// reference interpreter on a concrete shape. (JIT compilation replaces the evaluation step
// once the code generator lands; the graph stays the same.)
#include <cmath>
#include <cstdio>
#include <vector>

#include "snippets/snippets.hpp"

int main() {
  using namespace snippets;
  constexpr auto f32 = ElementType::f32;

  ir::Graph<ReferenceBackend> g;
  auto x1 = g.parameter(f32, {3, 2, dynamic, dynamic}, "x1");
  auto x2 = g.parameter(f32, {3, 2, dynamic, dynamic}, "x2");
  auto scaled = g.multiply(x1, g.constant(f32, {1, 1, 1, 1}, {2.0}, "two"));
  auto sum = g.add(scaled, x2);
  auto y = g.power(sum, g.constant(f32, {1, 1, 1, 1}, {2.0}, "square"));
  g.result(y, "y");
  std::printf("%s\n", ir::to_string(g).c_str());

  const Shape shape{3, 2, 4, 5};
  std::vector<double> a(120), b(120);
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = 0.25 * double(i % 7) - 0.5;
    b[i] = 1.0 - 0.125 * double(i % 5);
  }
  const auto in1 = reference::Tensor::from_values(f32, shape, a);
  const auto in2 = reference::Tensor::from_values(f32, shape, b);
  const auto out = reference::evaluate(g, {in1, in2});

  std::printf("y%s, first values:", out[0].shape().to_string().c_str());
  int wrong = 0;
  for (std::size_t i = 0; i < out[0].size(); ++i) {
    const double expected = std::pow(2.0 * a[i] + b[i], 2.0);
    if (i < 6) std::printf(" %g", out[0].at(i));
    wrong += out[0].at(i) != static_cast<float>(expected);
  }
  std::printf("\n%s: %zu values checked against (2*x1 + x2)^2\n", wrong ? "MISMATCH" : "ok",
              out[0].size());
  return wrong ? 1 : 0;
}
