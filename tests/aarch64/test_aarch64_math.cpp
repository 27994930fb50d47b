// SPDX-License-Identifier: Apache-2.0
// tests/aarch64/test_aarch64_math.cpp: the accuracy of the AArch64 transcendental emitters
// against the reference interpreter (libm in double, rounded once to f32), under qemu-aarch64.
//
// Inputs per op (a smaller sweep than x64's tests/test_jit_math_accuracy.cpp, which sweeps
// 2^20 bit patterns natively): every 16411th f32 bit pattern (261,711 values: all exponents
// of both signs, subnormals, infinities, NaNs), 65,536 points spread over the op's working
// range, the f32 special values and the op's thresholds with three neighbours on each side:
// about 327,000 values per op. The bounds asserted are those of docs/math_accuracy.md
// ("AArch64"); each test prints what it measured.
#include <doctest/doctest.h>

#include "aarch64/a64_test_util.hpp"

using namespace snippets;
using namespace snippets::a64_test;

namespace {

struct MathCase {
  std::string name;
  std::function<ir::Value(G&, ir::Value)> build;
  double lo, hi;                  // the working range, swept densely
  std::vector<double> thresholds; // where the result changes regime
  Tolerance tol;
};

std::vector<MathCase> math_cases() {
  using V = ir::Value;
  return {
      {"Exp", [](G& g, V x) { return g.exp(x); }, -104, 89, {-103.97, -87.34, 88.72}, {2}},
      {"Log", [](G& g, V x) { return g.log(x); }, 1e-3, 100, {1.0, 0.75, 1.5}, {2}},
      {"Sigmoid", [](G& g, V x) { return g.sigmoid(x); }, -110, 20, {0, 16.7, -87.3}, {2}},
      {"Tanh", [](G& g, V x) { return g.tanh(x); }, -10, 10, {0, 9.01, -9.01, 0.5}, {2}},
      {"Erf", [](G& g, V x) { return g.erf(x); }, -5, 5, {0.875, -0.875, 3.92, -3.92}, {2}},
      {"Gelu (erf)",
       [](G& g, V x) { return g.gelu(x, ir::GeluApproximation::erf); },
       -12,
       12,
       {1.2374, -1.2374, -6},
       {4, 1e-6}},
      {"Gelu (tanh)",
       [](G& g, V x) { return g.gelu(x, ir::GeluApproximation::tanh); },
       -12,
       12,
       {-10, 10, -5.4},
       {4, 1e-6}},
      {"Swish", [](G& g, V x) { return g.swish(x); }, -110, 90, {0, -87.3, 16.7}, {4, 1e-6}},
      {"Elu", [](G& g, V x) { return g.elu(x, 1.0); }, -30, 10, {0, -20}, {2}},
      {"Elu (alpha = -0.5)", [](G& g, V x) { return g.elu(x, -0.5); }, -30, 10, {0}, {2}},
      {"SoftPlus", [](G& g, V x) { return g.softplus(x); }, -110, 30, {0, 17, -87.3}, {2}},
      {"Mish", [](G& g, V x) { return g.mish(x); }, -115, 30, {0, -87.3, 20, -110}, {4}},
      {"Swish (beta = 1.702)",
       [](G& g, V x) { return g.swish(x, 1.702); },
       -70,
       60,
       {0, -50},
       {8, 1e-6}},
      {"Swish (beta = -0.75)",
       [](G& g, V x) { return g.swish(x, -0.75); },
       -120,
       140,
       {0},
       {10, 1e-6}},
  };
}

} // namespace

TEST_CASE("aarch64: accuracy of the transcendental ops over swept f32 inputs") {
  for (const MathCase& op : math_cases()) {
    INFO("op: " << op.name);
    std::vector<double> x = bit_pattern_sweep(16411);
    for (int i = 0; i < 65536; ++i) x.push_back(op.lo + (op.hi - op.lo) * i / 65536.0);
    for (const double s : f32_specials()) x.push_back(s);
    for (const double t : op.thresholds) add_neighbours(x, t);
    G g;
    const Shape shape{static_cast<Dim>(x.size())};
    const auto p = g.parameter(f32, shape);
    g.result(op.build(g, p));
    const Tensor in = Tensor::from_values(f32, shape, x);
    const Tensor got = compile(g).run({in})[0];
    const Tensor want = reference::evaluate(g, std::span<const Tensor>(&in, 1))[0];
    const AccuracyStats st = measure_accuracy(got, want, op.tol);
    MESSAGE(op.name << ": max " << st.max_ulp << " ulp (" << st.max_ulp_large
                    << " where |y| >= 1e-3), max abs " << st.max_abs << ", over " << x.size()
                    << " values");
    CHECK_MESSAGE(st.bad == 0, st.report);
  }
}
