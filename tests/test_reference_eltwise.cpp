// SPDX-License-Identifier: Apache-2.0
// Tests of reference/eltwise.hpp: every elementwise formula against hand-computed values.
//
// Expected numbers are literals worked out by hand or taken from 30-digit evaluations of the
// defining formula (sigmoid(1) = e/(1+e), ...), never from the code under test. Formulas are
// checked in double with a relative tolerance of 1e-12 where a math-library call is involved
// and exactly where the arithmetic is exact; graph runs are checked for exact equality with
// the f32-rounded literal, since a Result stores its value as f32.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <iomanip>
#include <limits>
#include <ostream>
#include <vector>

#include "snippets/reference/interpreter.hpp"

using namespace snippets;
using reference::formula;

namespace {

using Backend = ReferenceBackend;
using Graph = ir::Graph<Backend>;
using reference::Tensor;

constexpr auto f32 = ElementType::f32;
constexpr auto i32 = ElementType::i32;
constexpr auto i8 = ElementType::i8;
constexpr auto u8 = ElementType::u8;
constexpr auto boolean = ElementType::boolean;
constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double qnan = std::numeric_limits<double>::quiet_NaN();

/// `actual == near(expected)` holds within a relative tolerance (NaN matches NaN).
struct Near {
  double expected;
  double rel;
};
Near near(double expected, double rel = 1e-12) { return {expected, rel}; }
bool operator==(double actual, const Near& n) {
  if (std::isnan(n.expected)) return std::isnan(actual);
  if (actual == n.expected) return true; // zeros and infinities
  return std::fabs(actual - n.expected) <= n.rel * std::fabs(n.expected);
}
std::ostream& operator<<(std::ostream& os, const Near& n) {
  return os << std::setprecision(17) << n.expected << " (rel " << n.rel << ")";
}

double as_f32(double x) { return double(static_cast<float>(x)); }

/// y = op(x) on a rank-1 tensor of type `t` holding `xs`; returns y's stored values.
std::vector<double> run_unary(const ir::Op<Backend>& op, const std::vector<double>& xs,
                              ElementType t = f32) {
  Graph g;
  auto x = g.parameter(t, {Dim(xs.size())});
  g.result(g.make(op, {x})[0]);
  const auto out = reference::evaluate(g, {Tensor::from_values(t, {Dim(xs.size())}, xs)});
  REQUIRE(out.size() == 1);
  return out[0].values().v;
}

/// y = op(a, b) on rank-1 tensors of type `t`; returns y's type and stored values.
reference::Values run_binary(const ir::Op<Backend>& op, const std::vector<double>& as,
                             const std::vector<double>& bs, ElementType t = f32) {
  Graph g;
  auto a = g.parameter(t, {Dim(as.size())});
  auto b = g.parameter(t, {Dim(bs.size())});
  g.result(g.make(op, {a, b})[0]);
  const auto out = reference::evaluate(g, {Tensor::from_values(t, {Dim(as.size())}, as),
                                           Tensor::from_values(t, {Dim(bs.size())}, bs)});
  REQUIRE(out.size() == 1);
  return out[0].values();
}

} // namespace

// ---- unary formulas ----

TEST_CASE("Abs and Negative are exact, handle signed zeros, and keep infinities and NaN") {
  CHECK(formula(ir::Abs{}, -2.5) == 2.5);
  CHECK(formula(ir::Abs{}, 3.0) == 3.0);
  CHECK(formula(ir::Abs{}, -0.0) == 0.0);
  CHECK_FALSE(std::signbit(formula(ir::Abs{}, -0.0)));
  CHECK(formula(ir::Abs{}, -inf) == inf);
  CHECK(std::isnan(formula(ir::Abs{}, qnan)));
  CHECK(formula(ir::Negative{}, 2.0) == -2.0);
  CHECK(formula(ir::Negative{}, -0.5) == 0.5);
  CHECK(std::signbit(formula(ir::Negative{}, 0.0)));
  CHECK(formula(ir::Negative{}, inf) == -inf);
  CHECK(std::isnan(formula(ir::Negative{}, qnan)));
}

TEST_CASE("Relu zeroes negatives, keeps positives and propagates NaN") {
  CHECK(formula(ir::Relu{}, -1.0) == 0.0);
  CHECK(formula(ir::Relu{}, 2.5) == 2.5);
  CHECK(formula(ir::Relu{}, 0.0) == 0.0);
  CHECK(formula(ir::Relu{}, -inf) == 0.0);
  CHECK(formula(ir::Relu{}, inf) == inf);
  CHECK(std::isnan(formula(ir::Relu{}, qnan)));
}

TEST_CASE("Clamp bounds both sides, maps infinities to the bounds and propagates NaN") {
  const ir::Clamp c{0, 6};
  CHECK(formula(c, -1.0) == 0.0);
  CHECK(formula(c, 3.25) == 3.25);
  CHECK(formula(c, 7.0) == 6.0);
  CHECK(formula(c, 6.0) == 6.0);
  CHECK(formula(c, -inf) == 0.0);
  CHECK(formula(c, inf) == 6.0);
  CHECK(std::isnan(formula(c, qnan)));
  const ir::Clamp negative{-2.5, -1};
  CHECK(formula(negative, 0.0) == -1.0);
  CHECK(formula(negative, -3.0) == -2.5);
}

TEST_CASE("Floor rounds toward -inf and Ceiling toward +inf") {
  CHECK(formula(ir::Floor{}, 2.7) == 2.0);
  CHECK(formula(ir::Floor{}, -2.3) == -3.0);
  CHECK(formula(ir::Floor{}, -0.5) == -1.0);
  CHECK(formula(ir::Floor{}, 4.0) == 4.0);
  CHECK(formula(ir::Ceiling{}, 2.3) == 3.0);
  CHECK(formula(ir::Ceiling{}, -2.7) == -2.0);
  CHECK(formula(ir::Ceiling{}, -0.5) == 0.0);
  CHECK(std::signbit(formula(ir::Ceiling{}, -0.5))); // ceil(-0.5) is -0
  CHECK(formula(ir::Floor{}, -inf) == -inf);
  CHECK(std::isnan(formula(ir::Ceiling{}, qnan)));
}

TEST_CASE("Round half_to_even sends exact ties to the even neighbour") {
  const ir::Round r{ir::RoundMode::half_to_even};
  CHECK(formula(r, 2.5) == 2.0);
  CHECK(formula(r, -2.5) == -2.0);
  CHECK(formula(r, 0.5) == 0.0);
  CHECK(formula(r, -0.5) == 0.0);
  CHECK(std::signbit(formula(r, -0.5)));
  CHECK(formula(r, 1.5) == 2.0);
  CHECK(formula(r, -1.5) == -2.0);
  CHECK(formula(r, 3.5) == 4.0);
  CHECK(formula(r, 2.4999) == 2.0);
  CHECK(formula(r, 2.5001) == 3.0);
  CHECK(formula(r, -3.7) == -4.0);
  CHECK(formula(r, inf) == inf);
}

TEST_CASE("Round half_away_from_zero sends exact ties away from zero") {
  const ir::Round r{ir::RoundMode::half_away_from_zero};
  CHECK(formula(r, 2.5) == 3.0);
  CHECK(formula(r, -2.5) == -3.0);
  CHECK(formula(r, 0.5) == 1.0);
  CHECK(formula(r, -0.5) == -1.0);
  CHECK(formula(r, 1.5) == 2.0);
  CHECK(formula(r, 1.4) == 1.0);
  CHECK(formula(r, -1.6) == -2.0);
  CHECK(std::isnan(formula(r, qnan)));
}

TEST_CASE("Sqrt, Exp and Log match hand values and their IEEE special cases") {
  CHECK(formula(ir::Sqrt{}, 4.0) == 2.0);
  CHECK(formula(ir::Sqrt{}, 2.0) == near(1.4142135623730950488));
  CHECK(formula(ir::Sqrt{}, 0.5) == near(0.70710678118654752440));
  CHECK(formula(ir::Sqrt{}, 0.0) == 0.0);
  CHECK(formula(ir::Sqrt{}, inf) == inf);
  CHECK(std::isnan(formula(ir::Sqrt{}, -1.0)));
  CHECK(formula(ir::Exp{}, 0.0) == 1.0);
  CHECK(formula(ir::Exp{}, 1.0) == near(2.7182818284590452354));
  CHECK(formula(ir::Exp{}, -1.0) == near(0.36787944117144232160));
  CHECK(formula(ir::Exp{}, 0.5) == near(1.6487212707001281468));
  CHECK(formula(ir::Exp{}, -inf) == 0.0);
  CHECK(formula(ir::Exp{}, inf) == inf);
  CHECK(formula(ir::Exp{}, 1000.0) == inf); // e^1000 overflows double
  CHECK(formula(ir::Log{}, 1.0) == 0.0);
  CHECK(formula(ir::Log{}, 2.0) == near(0.69314718055994530942));
  CHECK(formula(ir::Log{}, 10.0) == near(2.3025850929940456840));
  CHECK(formula(ir::Log{}, 0.0) == -inf);
  CHECK(formula(ir::Log{}, inf) == inf);
  CHECK(std::isnan(formula(ir::Log{}, -1.0)));
  CHECK(std::isnan(formula(ir::Log{}, qnan)));
}

TEST_CASE("Sigmoid is 1/(1+e^-x) and saturates to 0 and 1 without NaN") {
  CHECK(formula(ir::Sigmoid{}, 0.0) == 0.5);
  CHECK(formula(ir::Sigmoid{}, 1.0) == near(0.73105857863000487925)); // e/(1+e)
  CHECK(formula(ir::Sigmoid{}, -1.0) == near(0.26894142136999512075));
  CHECK(formula(ir::Sigmoid{}, 2.0) == near(0.88079707797788244406));
  CHECK(formula(ir::Sigmoid{}, -40.0) == near(4.2483542552915889773e-18)); // no cancellation
  CHECK(formula(ir::Sigmoid{}, 1000.0) == 1.0);
  CHECK(formula(ir::Sigmoid{}, -1000.0) == 0.0);
  CHECK(formula(ir::Sigmoid{}, inf) == 1.0);
  CHECK(formula(ir::Sigmoid{}, -inf) == 0.0);
  CHECK(std::isnan(formula(ir::Sigmoid{}, qnan)));
}

TEST_CASE("Tanh is odd and saturates to -1 and 1 at infinity") {
  CHECK(formula(ir::Tanh{}, 0.0) == 0.0);
  CHECK(formula(ir::Tanh{}, 0.5) == near(0.46211715726000975850));
  CHECK(formula(ir::Tanh{}, 1.0) == near(0.76159415595576488812));
  CHECK(formula(ir::Tanh{}, -1.0) == near(-0.76159415595576488812));
  CHECK(formula(ir::Tanh{}, 3.0) == near(0.99505475368673045133));
  CHECK(formula(ir::Tanh{}, inf) == 1.0);
  CHECK(formula(ir::Tanh{}, -inf) == -1.0);
  CHECK(std::isnan(formula(ir::Tanh{}, qnan)));
}

TEST_CASE("Erf matches tabulated values, is odd and tends to +-1") {
  CHECK(formula(ir::Erf{}, 0.0) == 0.0);
  CHECK(formula(ir::Erf{}, 0.5) == near(0.52049987781304653768));
  CHECK(formula(ir::Erf{}, -0.5) == near(-0.52049987781304653768));
  CHECK(formula(ir::Erf{}, 1.0) == near(0.84270079294971486934));
  CHECK(formula(ir::Erf{}, 2.0) == near(0.99532226501895273416));
  CHECK(formula(ir::Erf{}, inf) == 1.0);
  CHECK(formula(ir::Erf{}, -inf) == -1.0);
}

TEST_CASE("Gelu's erf form is x times the normal CDF and its tanh form approximates it") {
  const ir::Gelu exact{ir::GeluApproximation::erf};
  CHECK(formula(exact, 0.0) == 0.0);
  CHECK(formula(exact, 1.0) == near(0.84134474606854294859)); // Phi(1)
  CHECK(formula(exact, -1.0) == near(-0.15865525393145705141));
  CHECK(formula(exact, 2.0) == near(1.9544997361036415856));
  CHECK(formula(exact, -3.0) == near(-0.0040496940948902835800));
  const ir::Gelu approx{ir::GeluApproximation::tanh};
  CHECK(formula(approx, 0.0) == 0.0);
  CHECK(formula(approx, 1.0) == near(0.84119199060827670478));
  CHECK(formula(approx, -1.0) == near(-0.15880800939172329522));
  CHECK(formula(approx, 2.0) == near(1.9545976940877750188));
  CHECK(formula(approx, -3.0) == near(-0.0036373920817730188378));
  CHECK(formula(exact, inf) == inf);
  CHECK(formula(approx, inf) == inf);
}

TEST_CASE("Swish is x * sigmoid(beta * x) for any beta") {
  CHECK(formula(ir::Swish{}, 0.0) == 0.0);
  CHECK(formula(ir::Swish{}, 1.0) == near(0.73105857863000487925)); // beta 1: sigmoid(1)
  CHECK(formula(ir::Swish{2.0}, 1.0) == near(0.88079707797788244406));
  CHECK(formula(ir::Swish{2.0}, -1.0) == near(-0.11920292202211755594));
  CHECK(formula(ir::Swish{0.5}, 2.0) == near(1.4621171572600097585)); // 2 * sigmoid(1)
  CHECK(formula(ir::Swish{0.0}, 3.0) == 1.5);                         // beta 0: x / 2
  CHECK(formula(ir::Swish{}, inf) == inf);
}

TEST_CASE("HSwish and HSigmoid are 0 below -3, a linear ramp, then saturated above 3") {
  CHECK(formula(ir::HSigmoid{}, -4.0) == 0.0);
  CHECK(formula(ir::HSigmoid{}, -3.0) == 0.0);
  CHECK(formula(ir::HSigmoid{}, 0.0) == 0.5);
  CHECK(formula(ir::HSigmoid{}, 1.5) == 0.75);
  CHECK(formula(ir::HSigmoid{}, 1.0) == near(2.0 / 3.0, 1e-15));
  CHECK(formula(ir::HSigmoid{}, 3.0) == 1.0);
  CHECK(formula(ir::HSigmoid{}, 10.0) == 1.0);
  CHECK(formula(ir::HSigmoid{}, -inf) == 0.0);
  CHECK(formula(ir::HSigmoid{}, inf) == 1.0);
  CHECK(std::isnan(formula(ir::HSigmoid{}, qnan))); // NaN propagates, as through Clamp
  CHECK(formula(ir::HSwish{}, -4.0) == 0.0);
  CHECK(formula(ir::HSwish{}, -3.0) == 0.0);
  CHECK(formula(ir::HSwish{}, 0.0) == 0.0);
  CHECK(formula(ir::HSwish{}, 1.5) == 1.125); // 1.5 * 4.5 / 6
  CHECK(formula(ir::HSwish{}, -1.0) == near(-1.0 / 3.0, 1e-15));
  CHECK(formula(ir::HSwish{}, 3.0) == 3.0);
  CHECK(formula(ir::HSwish{}, 5.0) == 5.0);
  CHECK(formula(ir::HSwish{}, inf) == inf);
  CHECK(std::isnan(formula(ir::HSwish{}, qnan)));
}

TEST_CASE("Mish is x * tanh(softplus(x)) and stays accurate for large |x|") {
  CHECK(formula(ir::Mish{}, 0.0) == 0.0);
  CHECK(formula(ir::Mish{}, 1.0) == near(0.86509838826731034612));
  CHECK(formula(ir::Mish{}, -1.0) == near(-0.30340146137410891807));
  CHECK(formula(ir::Mish{}, 2.0) == near(1.9439589595339945203));
  CHECK(formula(ir::Mish{}, 100.0) == 100.0);
  CHECK(formula(ir::Mish{}, 1000.0) == 1000.0); // no overflow through e^x
  // for x << 0, mish(x) ~ x e^x: -100 e^-100
  CHECK(formula(ir::Mish{}, -100.0) == near(-3.7200759760208359630e-42));
  CHECK(std::isnan(formula(ir::Mish{}, qnan)));
}

TEST_CASE("Elu is the identity above 0 and alpha * (e^x - 1) at or below 0") {
  CHECK(formula(ir::Elu{1.0}, 1.0) == 1.0);
  CHECK(formula(ir::Elu{1.0}, 0.0) == 0.0);
  CHECK(formula(ir::Elu{1.0}, -1.0) == near(-0.63212055882855767840));
  CHECK(formula(ir::Elu{0.5}, -2.0) == near(-0.43233235838169365405));
  CHECK(formula(ir::Elu{0.5}, 2.0) == 2.0); // alpha does not scale positives
  CHECK(formula(ir::Elu{1.0}, -1e-10) == near(-9.9999999995000000000e-11)); // expm1, not exp-1
  CHECK(formula(ir::Elu{2.0}, -inf) == -2.0);
  CHECK(std::isnan(formula(ir::Elu{1.0}, qnan)));
}

TEST_CASE("SoftPlus neither overflows nor loses digits at large |x|") {
  CHECK(formula(ir::SoftPlus{}, 0.0) == near(0.69314718055994530942));
  CHECK(formula(ir::SoftPlus{}, 1.0) == near(1.3132616875182228340));
  CHECK(formula(ir::SoftPlus{}, -1.0) == near(0.31326168751822283405));
  CHECK(formula(ir::SoftPlus{}, 20.0) == near(20.000000002061153620));
  CHECK(formula(ir::SoftPlus{}, -20.0) == near(2.0611536203143807032e-9));
  CHECK(formula(ir::SoftPlus{}, 1000.0) == 1000.0);
  CHECK(formula(ir::SoftPlus{}, -1000.0) == 0.0); // e^-1000 underflows double
  CHECK(formula(ir::SoftPlus{}, inf) == inf);
  CHECK(formula(ir::SoftPlus{}, -inf) == 0.0);
}

TEST_CASE("SoftSign is x / (1 + |x|)") {
  CHECK(formula(ir::SoftSign{}, 0.0) == 0.0);
  CHECK(formula(ir::SoftSign{}, 1.0) == 0.5);
  CHECK(formula(ir::SoftSign{}, -3.0) == -0.75);
  CHECK(formula(ir::SoftSign{}, 0.25) == 0.2);
  CHECK(std::isnan(formula(ir::SoftSign{}, qnan)));
}

TEST_CASE("PowerStatic raises to its fixed exponent") {
  CHECK(formula(ir::PowerStatic{2.0}, 3.0) == 9.0);
  CHECK(formula(ir::PowerStatic{2.0}, -3.0) == 9.0);
  CHECK(formula(ir::PowerStatic{3.0}, -2.0) == -8.0);
  CHECK(formula(ir::PowerStatic{0.5}, 4.0) == 2.0);
  CHECK(formula(ir::PowerStatic{-1.0}, 4.0) == 0.25);
  CHECK(formula(ir::PowerStatic{0.0}, 7.0) == 1.0);
  CHECK(formula(ir::PowerStatic{1.0}, -2.5) == -2.5);
  CHECK(formula(ir::PowerStatic{-1.0}, 0.0) == inf);
  CHECK(std::isnan(formula(ir::PowerStatic{0.5}, -1.0)));
}

TEST_CASE("LogicalNot maps 0 to 1 and anything else to 0") {
  CHECK(formula(ir::LogicalNot{}, 0.0) == 1.0);
  CHECK(formula(ir::LogicalNot{}, 1.0) == 0.0);
  CHECK(formula(ir::LogicalNot{}, -2.0) == 0.0);
}

TEST_CASE("every unary op runs through the interpreter and stores its f32-rounded value") {
  struct Case {
    ir::Op<Backend> op;
    std::vector<double> x, expected;
  };
  const std::vector<Case> cases = {
      {ir::Abs{}, {-2.5, 3}, {2.5, 3}},
      {ir::Negative{}, {2, -0.5}, {-2, 0.5}},
      {ir::Relu{}, {-1, 2, qnan}, {0, 2, qnan}},
      {ir::Clamp{0, 6}, {-1, 3.25, 7, qnan}, {0, 3.25, 6, qnan}},
      {ir::Floor{}, {2.75, -2.25}, {2, -3}},
      {ir::Ceiling{}, {2.25, -2.75}, {3, -2}},
      {ir::Round{}, {2.5, -2.5, 0.5, 1.5}, {2, -2, 0, 2}},
      {ir::Round{ir::RoundMode::half_away_from_zero}, {2.5, -2.5, 0.5}, {3, -3, 1}},
      {ir::Sqrt{}, {4, 2, -1}, {2, 1.4142135623730950488, qnan}},
      {ir::Exp{}, {1, -inf}, {2.7182818284590452354, 0}},
      {ir::Log{}, {2, 0, -1}, {0.69314718055994530942, -inf, qnan}},
      {ir::Sigmoid{}, {1, -inf, inf}, {0.73105857863000487925, 0, 1}},
      {ir::Tanh{}, {0.5, -inf, inf}, {0.46211715726000975850, -1, 1}},
      {ir::Erf{}, {1}, {0.84270079294971486934}},
      {ir::Gelu{}, {1}, {0.84134474606854294859}},
      {ir::Gelu{ir::GeluApproximation::tanh}, {1}, {0.84119199060827670478}},
      {ir::Swish{2.0}, {1}, {0.88079707797788244406}},
      {ir::HSwish{}, {1.5, -4}, {1.125, 0}},
      {ir::HSigmoid{}, {0, 4}, {0.5, 1}},
      {ir::Mish{}, {1}, {0.86509838826731034612}},
      {ir::Elu{0.5}, {-2, 2}, {-0.43233235838169365405, 2}},
      {ir::SoftPlus{}, {1000, -1000, 0}, {1000, 0, 0.69314718055994530942}},
      {ir::SoftSign{}, {-3}, {-0.75}},
      {ir::PowerStatic{3.0}, {-2}, {-8}},
  };
  for (const Case& c : cases) {
    INFO(ir::op_name<Backend>(c.op));
    const auto y = run_unary(c.op, c.x);
    REQUIRE(y.size() == c.expected.size());
    for (std::size_t i = 0; i < y.size(); ++i)
      if (std::isnan(c.expected[i]))
        CHECK(std::isnan(y[i]));
      else
        CHECK(y[i] == as_f32(c.expected[i]));
  }
}

TEST_CASE("LogicalNot runs on a boolean tensor and yields a boolean tensor") {
  Graph g;
  auto x = g.parameter(boolean, {3});
  g.result(g.logical_not(x));
  const auto out = reference::evaluate(g, {Tensor::from_values(boolean, {3}, {0, 1, 0})});
  CHECK(out[0].type() == boolean);
  CHECK(out[0].values().v == std::vector<double>{1, 0, 1});
}

TEST_CASE("unary ops on integer types saturate to the output type") {
  CHECK(run_unary(ir::Abs{}, {-128, -5, 7}, i8) == std::vector<double>{127, 5, 7});
  CHECK(run_unary(ir::Negative{}, {5, 0}, u8) == std::vector<double>{0, 0});
  CHECK(run_unary(ir::Negative{}, {-128}, i8) == std::vector<double>{127});
  CHECK(run_unary(ir::Relu{}, {-7, 7}, i32) == std::vector<double>{0, 7});
  CHECK(run_unary(ir::Clamp{-1.5, 2.5}, {-9, 9, 1}, i32) == std::vector<double>{-1, 2, 1});
}

// ---- binary formulas ----

TEST_CASE("Add, Subtract, Multiply and Divide follow IEEE double arithmetic") {
  CHECK(formula(ir::Add{}, 1.5, 2.25) == 3.75);
  CHECK(formula(ir::Subtract{}, 1.5, 2.25) == -0.75);
  CHECK(formula(ir::Multiply{}, -1.5, 2.5) == -3.75);
  CHECK(formula(ir::Divide{}, 7.0, 2.0) == 3.5);
  CHECK(formula(ir::Divide{}, 1.0, 0.0) == inf);
  CHECK(formula(ir::Divide{}, -1.0, 0.0) == -inf);
  CHECK(std::isnan(formula(ir::Divide{}, 0.0, 0.0)));
  CHECK(std::isnan(formula(ir::Add{}, inf, -inf)));
  CHECK(std::isnan(formula(ir::Multiply{}, 0.0, inf)));
}

TEST_CASE("Maximum and Minimum propagate NaN from either operand") {
  CHECK(formula(ir::Maximum{}, 1.0, 2.0) == 2.0);
  CHECK(formula(ir::Maximum{}, -1.0, -2.0) == -1.0);
  CHECK(formula(ir::Minimum{}, 1.0, 2.0) == 1.0);
  CHECK(formula(ir::Minimum{}, -inf, 5.0) == -inf);
  CHECK(std::isnan(formula(ir::Maximum{}, qnan, 1.0)));
  CHECK(std::isnan(formula(ir::Maximum{}, 1.0, qnan)));
  CHECK(std::isnan(formula(ir::Minimum{}, qnan, 1.0)));
  CHECK(std::isnan(formula(ir::Minimum{}, 1.0, qnan)));
}

TEST_CASE("Power and SquaredDifference match hand values") {
  CHECK(formula(ir::Power{}, 2.0, 10.0) == 1024.0);
  CHECK(formula(ir::Power{}, 4.0, 0.5) == 2.0);
  CHECK(formula(ir::Power{}, 2.0, -2.0) == 0.25);
  CHECK(formula(ir::Power{}, -2.0, 3.0) == -8.0);
  CHECK(formula(ir::Power{}, 5.0, 0.0) == 1.0);
  CHECK(std::isnan(formula(ir::Power{}, -8.0, 1.0 / 3.0)));
  CHECK(formula(ir::SquaredDifference{}, 3.0, 5.0) == 4.0);
  CHECK(formula(ir::SquaredDifference{}, -1.0, 2.0) == 9.0);
  CHECK(formula(ir::SquaredDifference{}, 2.5, 2.5) == 0.0);
}

TEST_CASE("FloorMod has the sign of the divisor and Mod the sign of the dividend") {
  CHECK(formula(ir::FloorMod{}, -7.0, 3.0) == 2.0);
  CHECK(formula(ir::FloorMod{}, 7.0, -3.0) == -2.0);
  CHECK(formula(ir::FloorMod{}, 7.0, 3.0) == 1.0);
  CHECK(formula(ir::FloorMod{}, -7.0, -3.0) == -1.0);
  CHECK(formula(ir::FloorMod{}, 5.5, 2.0) == 1.5);
  CHECK(formula(ir::FloorMod{}, -5.5, 2.0) == 0.5);
  CHECK(formula(ir::FloorMod{}, -6.0, 3.0) == 0.0);
  CHECK_FALSE(std::signbit(formula(ir::FloorMod{}, -6.0, 3.0))); // zero of the divisor's sign
  CHECK(std::signbit(formula(ir::FloorMod{}, 6.0, -3.0)));
  CHECK(std::isnan(formula(ir::FloorMod{}, 1.0, 0.0)));
  CHECK(formula(ir::Mod{}, -7.0, 3.0) == -1.0);
  CHECK(formula(ir::Mod{}, 7.0, -3.0) == 1.0);
  CHECK(formula(ir::Mod{}, -7.0, -3.0) == -1.0);
  CHECK(formula(ir::Mod{}, -5.5, 2.0) == -1.5);
  CHECK(std::signbit(formula(ir::Mod{}, -6.0, 3.0)));
  CHECK(std::isnan(formula(ir::Mod{}, 1.0, 0.0)));
}

TEST_CASE("PRelu scales negatives by the slope and passes zero, positives and NaN") {
  CHECK(formula(ir::PRelu{}, -4.0, 0.25) == -1.0);
  CHECK(formula(ir::PRelu{}, 4.0, 0.25) == 4.0);
  CHECK(formula(ir::PRelu{}, 0.0, 0.25) == 0.0);
  CHECK(formula(ir::PRelu{}, -2.0, -3.0) == 6.0);
  CHECK(formula(ir::PRelu{}, -inf, 0.5) == -inf);
  CHECK(std::isnan(formula(ir::PRelu{}, qnan, 0.5)));
}

TEST_CASE("comparisons give 1 or 0, and any comparison with NaN is false except NotEqual") {
  CHECK(formula(ir::Equal{}, 2.0, 2.0) == 1.0);
  CHECK(formula(ir::Equal{}, 2.0, 3.0) == 0.0);
  CHECK(formula(ir::Equal{}, 0.0, -0.0) == 1.0);
  CHECK(formula(ir::NotEqual{}, 2.0, 3.0) == 1.0);
  CHECK(formula(ir::Greater{}, 3.0, 2.0) == 1.0);
  CHECK(formula(ir::Greater{}, 2.0, 2.0) == 0.0);
  CHECK(formula(ir::GreaterEqual{}, 2.0, 2.0) == 1.0);
  CHECK(formula(ir::Less{}, 2.0, 3.0) == 1.0);
  CHECK(formula(ir::Less{}, 3.0, 3.0) == 0.0);
  CHECK(formula(ir::LessEqual{}, 3.0, 3.0) == 1.0);
  CHECK(formula(ir::Less{}, -inf, inf) == 1.0);
  CHECK(formula(ir::Equal{}, qnan, qnan) == 0.0);
  CHECK(formula(ir::NotEqual{}, qnan, qnan) == 1.0);
  CHECK(formula(ir::Greater{}, qnan, 1.0) == 0.0);
  CHECK(formula(ir::GreaterEqual{}, qnan, qnan) == 0.0);
  CHECK(formula(ir::Less{}, 1.0, qnan) == 0.0);
  CHECK(formula(ir::LessEqual{}, qnan, qnan) == 0.0);
}

TEST_CASE("logical ops treat any non-zero as true and return 0 or 1") {
  CHECK(formula(ir::LogicalAnd{}, 1.0, 1.0) == 1.0);
  CHECK(formula(ir::LogicalAnd{}, 1.0, 0.0) == 0.0);
  CHECK(formula(ir::LogicalOr{}, 0.0, 0.0) == 0.0);
  CHECK(formula(ir::LogicalOr{}, 0.0, 2.0) == 1.0);
  CHECK(formula(ir::LogicalXor{}, 1.0, 1.0) == 0.0);
  CHECK(formula(ir::LogicalXor{}, 3.0, 0.0) == 1.0);
}

TEST_CASE("every binary op runs through the interpreter and stores its f32-rounded value") {
  struct Case {
    ir::Op<Backend> op;
    std::vector<double> a, b, expected;
  };
  const std::vector<Case> cases = {
      {ir::Add{}, {1.5, -1}, {2.25, 1}, {3.75, 0}},
      {ir::Subtract{}, {1.5, 0}, {2.25, -2}, {-0.75, 2}},
      {ir::Multiply{}, {-1.5, 3}, {2.5, 0.5}, {-3.75, 1.5}},
      {ir::Divide{}, {1, 7, 1}, {3, 2, 0}, {1.0 / 3.0, 3.5, inf}},
      {ir::Maximum{}, {1, qnan, 1}, {2, 1, qnan}, {2, qnan, qnan}},
      {ir::Minimum{}, {1, qnan, 1}, {2, 1, qnan}, {1, qnan, qnan}},
      {ir::Power{}, {2, 4}, {10, 0.5}, {1024, 2}},
      {ir::SquaredDifference{}, {3, -1}, {5, 2}, {4, 9}},
      {ir::FloorMod{}, {-7, 7, 5.5}, {3, -3, 2}, {2, -2, 1.5}},
      {ir::Mod{}, {-7, 7, -5.5}, {3, -3, 2}, {-1, 1, -1.5}},
      {ir::PRelu{}, {-4, 4, qnan}, {0.25, 0.25, 0.5}, {-1, 4, qnan}},
  };
  for (const Case& c : cases) {
    INFO(ir::op_name<Backend>(c.op));
    const auto y = run_binary(c.op, c.a, c.b);
    CHECK(y.type == f32);
    REQUIRE(y.v.size() == c.expected.size());
    for (std::size_t i = 0; i < y.v.size(); ++i)
      if (std::isnan(c.expected[i]))
        CHECK(std::isnan(y.v[i]));
      else
        CHECK(y.v[i] == as_f32(c.expected[i]));
  }
}

TEST_CASE("comparison nodes yield boolean tensors of 0/1 bytes, with NaN==NaN false") {
  const std::vector<double> a{1, 2, 3, qnan}, b{2, 2, 2, qnan};
  struct Case {
    ir::Op<Backend> op;
    std::vector<double> expected;
  };
  const std::vector<Case> cases = {
      {ir::Equal{}, {0, 1, 0, 0}},   {ir::NotEqual{}, {1, 0, 1, 1}},
      {ir::Greater{}, {0, 0, 1, 0}}, {ir::GreaterEqual{}, {0, 1, 1, 0}},
      {ir::Less{}, {1, 0, 0, 0}},    {ir::LessEqual{}, {1, 1, 0, 0}},
  };
  for (const Case& c : cases) {
    INFO(ir::op_name<Backend>(c.op));
    Graph g;
    auto pa = g.parameter(f32, {4});
    auto pb = g.parameter(f32, {4});
    g.result(g.make(c.op, {pa, pb})[0]);
    const auto out = reference::evaluate(
        g, {Tensor::from_values(f32, {4}, a), Tensor::from_values(f32, {4}, b)});
    REQUIRE(out[0].type() == boolean);
    REQUIRE(out[0].byte_size() == 4);
    const auto* bytes = static_cast<const std::uint8_t*>(out[0].data());
    for (std::size_t i = 0; i < 4; ++i) CHECK(double(bytes[i]) == c.expected[i]);
  }
}

TEST_CASE("comparisons on i32 compare the integer values") {
  const auto y = run_binary(ir::Less{}, {-3, 5, 2147483647}, {-2, 5, 2147483646}, i32);
  CHECK(y.type == boolean);
  CHECK(y.v == std::vector<double>{1, 0, 0});
}

TEST_CASE("logical ops broadcast [2,1] against [1,2] into their full truth tables") {
  struct Case {
    ir::Op<Backend> op;
    std::vector<double> table; // rows a = 0, 1; columns b = 0, 1
  };
  const std::vector<Case> cases = {{ir::LogicalAnd{}, {0, 0, 0, 1}},
                                   {ir::LogicalOr{}, {0, 1, 1, 1}},
                                   {ir::LogicalXor{}, {0, 1, 1, 0}}};
  for (const Case& c : cases) {
    INFO(ir::op_name<Backend>(c.op));
    Graph g;
    auto a = g.parameter(boolean, {2, 1});
    auto b = g.parameter(boolean, {1, 2});
    g.result(g.make(c.op, {a, b})[0]);
    const auto out = reference::evaluate(g, {Tensor::from_values(boolean, {2, 1}, {0, 1}),
                                             Tensor::from_values(boolean, {1, 2}, {0, 1})});
    CHECK(out[0].type() == boolean);
    CHECK(out[0].shape() == Shape{2, 2});
    CHECK(out[0].values().v == c.table);
  }
}

// ---- integer semantics ----

TEST_CASE("i32 Divide truncates toward zero") {
  const auto y = run_binary(ir::Divide{}, {-7, 7, -7, 7, 1}, {2, 2, -2, -2, 3}, i32);
  CHECK(y.type == i32);
  CHECK(y.v == std::vector<double>{-3, 3, 3, -3, 0});
}

TEST_CASE("i32 FloorMod and Mod follow the same sign rules as for floats") {
  CHECK(run_binary(ir::FloorMod{}, {-7, 7, -7, 7}, {3, -3, -3, 3}, i32).v ==
        std::vector<double>{2, -2, -1, 1});
  CHECK(run_binary(ir::Mod{}, {-7, 7, -7, 7}, {3, -3, -3, 3}, i32).v ==
        std::vector<double>{-1, 1, -1, 1});
}

TEST_CASE("i32 Power truncates a fractional result toward zero") {
  CHECK(run_binary(ir::Power{}, {2, 2, 3}, {10, -1, 2}, i32).v == std::vector<double>{1024, 0, 9});
}

TEST_CASE("i8 and u8 results saturate to the type's range") {
  CHECK(run_binary(ir::Add{}, {100, -100, 1}, {100, -100, 2}, i8).v ==
        std::vector<double>{127, -128, 3});
  CHECK(run_binary(ir::Subtract{}, {3, 5, 0}, {5, 3, 255}, u8).v == std::vector<double>{0, 2, 0});
  CHECK(run_binary(ir::Multiply{}, {16, 15}, {16, 17}, u8).v == std::vector<double>{255, 255});
  CHECK(run_binary(ir::Multiply{}, {-16, 16}, {16, 8}, i8).v == std::vector<double>{-128, 127});
  CHECK(run_binary(ir::Add{}, {2147483647, -2147483647}, {1, -2}, i32).v ==
        std::vector<double>{2147483647, -2147483648.0});
}

TEST_CASE("an integer chain saturates at every node, not only at the end") {
  // (100 + 100) - 100 in i8: the sum saturates to 127 before the subtraction
  Graph g;
  auto a = g.parameter(i8, {1});
  auto b = g.parameter(i8, {1});
  g.result(g.subtract(g.add(a, b), b));
  const auto out = reference::evaluate(
      g, {Tensor::from_values(i8, {1}, {100}), Tensor::from_values(i8, {1}, {100})});
  CHECK(out[0].at(0) == 27);
}
