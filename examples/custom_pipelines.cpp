// SPDX-License-Identifier: Apache-2.0
// Pipelines configured at compile time (custom_pipelines.hpp): a pass removed, a pass
// replaced, a data-flow pass added, and a whole Program compiled with them. Every result is
// compared with the reference interpreter; the program fails if one differs.
#include <cmath>
#include <cstdio>

#include "custom_pipelines.hpp"

using namespace snippets;
using namespace custom_pipelines;

namespace {
/// The largest difference between two tensors of one shape.
double max_difference(const reference::Tensor& a, const reference::Tensor& b) {
  double d = 0;
  for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(a.at(i) - b.at(i)));
  return d;
}

/// An f32 tensor of `shape` holding sin(i) * scale, i = 0, 1, ...
reference::Tensor wave(Shape shape, double scale) {
  std::vector<double> v(static_cast<std::size_t>(shape.element_count()));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = std::sin(static_cast<double>(i)) * scale;
  return reference::Tensor::from_values(ElementType::f32, std::move(shape), v);
}
} // namespace

int main() {
  bool ok = true;
  auto check = [&](const char* what, const reference::Tensor& got, const reference::Tensor& want) {
    const double d = max_difference(got, want);
    std::printf("  %-44s max |kernel - reference| = %g\n", what, d);
    ok = ok && d <= 1e-5;
  };

  // y = exp(x) * 0.5 * s + x, z = relu(y)
  ir::Graph<x64::Traits> g;
  auto x = g.parameter(ElementType::f32, {64, 300});
  auto s = g.parameter(ElementType::f32, {64, 300});
  auto half = g.constant(ElementType::f32, {1}, {0.5});
  auto y = g.add(g.multiply(g.multiply(g.exp(x), half), s), x);
  g.result(y);
  g.result(g.relu(y));
  const auto in = std::vector{wave({64, 300}, 2.0), wave({64, 300}, 1.0)};
  const auto want = reference::evaluate(g, in);
  const auto isa = DefaultTraits::default_variant();

  std::printf("1. passes::remove_t<DefaultLowering, OptimizeDomain>\n");
  const auto flat = lower(g, isa), nested = lower<x64::Traits, NoDomainCollapse>(g, isa);
  std::printf("  loops: %d with the domain collapsed, %d without\n", count<ir::LoopBegin>(flat),
              count<ir::LoopBegin>(nested));
  ok = ok && count<ir::LoopBegin>(nested) > count<ir::LoopBegin>(flat);
  check("outputs without domain collapsing", compile<x64::Traits, NoDomainCollapse>(g).run(in)[1],
        want[1]);

  std::printf(
      "2. passes::replace_t<DefaultLowering, InsertSpecificIterations, UnrollByRowLength>\n");
  check("outputs with the row-length unroll policy",
        compile<x64::Traits, MyUnrolling>(g).run(in)[1], want[1]);

  std::printf("3. passes::insert_before_t<DefaultDataFlow, ConvertConstantsToScalars, "
              "RemoveMultiplyByOne>\n");
  ir::Graph<x64::Traits> h;
  auto a = h.parameter(ElementType::f32, {1000});
  h.result(h.sigmoid(h.multiply(a, h.constant(ElementType::f32, {1}, {1.0}))));
  std::vector<std::string_view> trace;
  const auto k = compile<x64::Traits, passes::DefaultLowering, MyDataFlow>(h, {.trace = &trace});
  const bool rewritten = std::ranges::find(trace, "RemoveMultiplyByOne") != trace.end();
  std::printf("  RemoveMultiplyByOne ran: %s\n", rewritten ? "yes" : "no");
  ok = ok && rewritten;
  const auto ain = std::vector{wave({1000}, 2.0)};
  check("sigmoid(a * 1)", k.run(ain)[0], reference::evaluate(h, ain)[0]);

  std::printf(
      "4. Program<x64::Traits, NoDomainCollapse, MyDataFlow>: every Subgraph, MatMuls too\n");
  ir::Graph<x64::Traits> m;
  auto q = m.parameter(ElementType::f32, {16, 32});
  auto w = m.constant(ElementType::f32, {32, 8}, std::vector<double>(256, 0.125));
  auto hidden = m.relu(m.matmul(q, w));
  m.result(m.multiply(m.exp(m.negative(hidden)), m.constant(ElementType::f32, {1}, {1.0})));
  const Program<x64::Traits, NoDomainCollapse, MyDataFlow> program(m);
  int kernels = 0;
  for (const auto& step : program.steps())
    if (step.kernel) {
      ++kernels;
      std::printf("  kernel '%.*s', built by:\n%s", static_cast<int>(step.kernel->name().size()),
                  step.kernel->name().data(), std::string(step.kernel->pipeline()).c_str());
    }
  const auto qin = std::vector{wave({16, 32}, 2.0)};
  check("the program", program.run(qin)[0], reference::evaluate(m, qin)[0]);
  ok = ok && kernels > 0;
  std::printf("%s\n", ok ? "all match the reference" : "MISMATCH");
  return ok ? 0 : 1;
}
