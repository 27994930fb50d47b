// SPDX-License-Identifier: Apache-2.0
// The seed's data-flow example, y = (x1 * 2 + x2) ^ 2, compiled into one JIT kernel.
//
// Builds the graph, compiles it for the best ISA of this host (the Constants become Scalars
// and the Power a PowerStatic on the way), runs it on two threads, and checks every value
// against the reference interpreter.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

#include "snippets/snippets.hpp"

int main() {
  using namespace snippets;
  constexpr auto f32 = ElementType::f32;
  const Shape shape{3, 2, 64, 64};

  ir::Graph<x64::Traits> g;
  auto x1 = g.parameter(f32, shape, "x1");
  auto x2 = g.parameter(f32, shape, "x2");
  auto scaled = g.multiply(x1, g.constant(f32, {1, 1, 1, 1}, {2.0}, "two"));
  auto sum = g.add(scaled, x2);
  auto y = g.power(sum, g.constant(f32, {1, 1, 1, 1}, {2.0}, "square"));
  g.result(y, "y");
  std::printf("%s\n", ir::to_string(g).c_str());

  const CompiledKernel kernel = compile(g);
  std::printf("compiled for %s: %zu bytes of code, scheduling domain of rank %zu\n",
              kernel.signature().isa.c_str(), kernel.code().size(),
              kernel.signature().domain.size());

  const auto n = static_cast<std::size_t>(shape.element_count());
  std::vector<double> a(n), b(n);
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = 0.25 * double(i % 7) - 0.5;
    b[i] = 1.0 - 0.125 * double(i % 5);
  }
  const auto in1 = reference::Tensor::from_values(f32, shape, a);
  const auto in2 = reference::Tensor::from_values(f32, shape, b);

  kernel.run({in1, in2}, {.threads = 2}); // the first call also starts the OpenMP threads
  const auto start = std::chrono::steady_clock::now();
  const auto out = kernel.run({in1, in2}, {.threads = 2});
  const double us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  const auto ref = reference::evaluate(g, {in1, in2});

  std::size_t wrong = 0;
  double max_rel = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double want = ref[0].at(i), got = out[0].at(i);
    const double rel = want == 0 ? std::fabs(got) : std::fabs(got - want) / std::fabs(want);
    max_rel = std::max(max_rel, rel);
    wrong += rel > 4.0 * 0x1p-24; // FMA contraction: within a few f32 rounding errors
  }
  std::printf("y%s: first values %g %g %g, %zu values in %.1f us (second call)\n",
              out[0].shape().to_string().c_str(), out[0].at(0), out[0].at(1), out[0].at(2), n, us);
  std::printf("%s: largest relative difference from the double-precision reference %.2e\n",
              wrong ? "MISMATCH" : "ok", max_rel);
  return wrong ? 1 : 0;
}
