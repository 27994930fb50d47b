// SPDX-License-Identifier: Apache-2.0
// tests/aarch64/test_aarch64_math.cpp: the accuracy of the AArch64 transcendental emitters
// against the reference interpreter (libm in double, rounded once to f32), under qemu-aarch64.
//
// Inputs per op (a smaller sweep than x64's tests/test_jit_math_accuracy.cpp, which sweeps
// 2^20 bit patterns natively): every 16411th f32 bit pattern (261,711 values: all exponents
// of both signs, subnormals, infinities, NaNs), 65,536 points spread over the op's working
// range, the f32 special values and the op's thresholds with three neighbours on each side:
// about 327,000 values per op. The bounds asserted are those of docs/math_accuracy.md
// ("AArch64"); each test prints what it measured. The general Power, Mod and FloorMod are
// checked bit for bit at the special cases x64 is (tests/arith_special_cases.hpp) and swept
// over pairs: Power within 1 ulp, the remainders exact.
#include <doctest/doctest.h>

#include "aarch64/a64_test_util.hpp"
#include "arith_special_cases.hpp"

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

namespace {

/// Runs `tag` on the pairs (a[i], b[i]) and checks the output against `want` with `tol`
/// (NaN matches NaN; the sign of zero counts).
template <class Tag>
void check_pairs(Tag tag, const std::vector<double>& a, const std::vector<double>& b,
                 const std::vector<double>& want, Tolerance tol) {
  INFO("op = " << Tag::name);
  const Shape s{static_cast<Dim>(a.size())};
  G g;
  g.result(g.apply(tag, g.parameter(f32, s), g.parameter(f32, s)));
  const auto got = compile(g).run({Tensor::from_values(f32, s, a), Tensor::from_values(f32, s, b)});
  const AccuracyStats st = measure_accuracy(got.at(0), Tensor::from_values(f32, s, want), tol);
  MESSAGE(Tag::name << ": max " << st.max_ulp << " ulp over " << a.size() << " pairs");
  CHECK_MESSAGE(st.bad == 0, st.report);
}

/// want[i] = the reference of `tag` on f32 operands, rounded once to f32.
template <class Tag>
std::vector<double> reference_of(Tag tag, const std::vector<double>& a,
                                 const std::vector<double>& b) {
  std::vector<double> want;
  for (std::size_t i = 0; i < a.size(); ++i)
    want.push_back(reference::formula(tag, double(float(a[i])), double(float(b[i]))));
  return want;
}

} // namespace

TEST_CASE("aarch64: Power, Mod and FloorMod follow C's pow and fmod at every special case") {
  std::vector<double> a, b, want;
  for (const auto& [x, y, r] : arith_cases::power_special_cases()) {
    a.push_back(x);
    b.push_back(y);
    want.push_back(r);
  }
  check_pairs(ir::Power{}, a, b, want, exact);
  a.clear();
  b.clear();
  for (const auto& [x, y] : arith_cases::mod_special_pairs()) {
    a.push_back(x);
    b.push_back(y);
  }
  check_pairs(ir::Mod{}, a, b, reference_of(ir::Mod{}, a, b), exact);
  check_pairs(ir::FloorMod{}, a, b, reference_of(ir::FloorMod{}, a, b), exact);
}

TEST_CASE("aarch64: Power is within 1 ulp and Mod and FloorMod exact over swept pairs") {
  // bases: every 16411th bit pattern (both signs, subnormals, specials) against exponents that
  // decide the cases (integers odd and even, halves, thirds, large and tiny), then random
  // positive bases in [1e-3, 1e3) with random exponents in [-12, 12)
  const std::vector<double> exponents = {0.5,  -0.5, 2,   3, -1, 1.0 / 3, 2.5, -7.25,
                                         10.1, 0.01, -30, 7, -6, 1e-7,    37.5};
  std::vector<double> x = bit_pattern_sweep(16411), y;
  for (std::size_t i = 0; i < x.size(); ++i) y.push_back(exponents[i % exponents.size()]);
  std::uint64_t state = 12345;
  auto uniform = [&] { // xorshift64*: [0, 1)
    state ^= state >> 12, state ^= state << 25, state ^= state >> 27;
    return double((state * 2685821657736338717ull) >> 11) * 0x1p-53;
  };
  for (int i = 0; i < 65536; ++i) {
    x.push_back(std::exp(std::log(1e-3) + uniform() * std::log(1e6)));
    y.push_back(-12 + 24 * uniform());
  }
  check_pairs(ir::Power{}, x, y, reference_of(ir::Power{}, x, y), Tolerance{1});
  // remainders: dividends of every magnitude against divisors from 1e-30 to 1e30 of both signs
  std::vector<double> a = bit_pattern_sweep(16411), b;
  for (std::size_t i = 0; i < a.size(); ++i)
    b.push_back((uniform() < 0.5 ? -1 : 1) * std::pow(10.0, -30 + 60 * uniform()));
  check_pairs(ir::Mod{}, a, b, reference_of(ir::Mod{}, a, b), exact);
  check_pairs(ir::FloorMod{}, a, b, reference_of(ir::FloorMod{}, a, b), exact);
}
