// SPDX-License-Identifier: Apache-2.0
// snippets/reference/eltwise.hpp: the defining formula of every elementwise op, in double.
//
// One overload of `formula` per op tag: `formula(tag, x)` for unary ops, `formula(tag, a, b)`
// for binary, comparison and logical ops (booleans arrive as 0 or 1 and leave as 0 or 1).
// The interpreter finds them by overload resolution, so an op's formula lives here and
// nowhere else. They are the oracle for the JIT: simple, exact in double where the math
// library is, and explicit about NaN (see the semantics list in ir/op_tags.hpp).
#pragma once

#include <cmath>
#include <limits>
#include <numbers>

#include "snippets/ir/op_tags.hpp"

namespace snippets::reference {

namespace detail {
inline constexpr double nan = std::numeric_limits<double>::quiet_NaN();
inline double max_nan(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? nan : (a > b ? a : b);
}
inline double min_nan(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? nan : (a < b ? a : b);
}
inline double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
/// log(1 + e^x) without overflow for large x.
inline double softplus(double x) {
  return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}
} // namespace detail

// ---- unary ----
inline double formula(const ir::Abs&, double x) { return std::fabs(x); }
inline double formula(const ir::Negative&, double x) { return -x; }
inline double formula(const ir::Relu&, double x) { return detail::max_nan(x, 0.0); }
inline double formula(const ir::Clamp& c, double x) {
  // + 0.0 turns a -0 bound into +0: a zero bound clamps to +0 whatever its sign
  return detail::min_nan(detail::max_nan(x, c.lo + 0.0), c.hi + 0.0);
}
inline double formula(const ir::Floor&, double x) { return std::floor(x); }
inline double formula(const ir::Ceiling&, double x) { return std::ceil(x); }
inline double formula(const ir::Round& r, double x) {
  return r.mode == ir::RoundMode::half_to_even ? std::nearbyint(x) : std::round(x);
}
inline double formula(const ir::Sqrt&, double x) { return std::sqrt(x); }
inline double formula(const ir::Exp&, double x) { return std::exp(x); }
inline double formula(const ir::Log&, double x) { return std::log(x); }
inline double formula(const ir::Sigmoid&, double x) { return detail::sigmoid(x); }
inline double formula(const ir::Tanh&, double x) { return std::tanh(x); }
inline double formula(const ir::Erf&, double x) { return std::erf(x); }
inline double formula(const ir::Gelu& g, double x) {
  if (g.approximation == ir::GeluApproximation::erf)
    return 0.5 * x * (1.0 + std::erf(x / std::numbers::sqrt2));
  const double k = std::sqrt(2.0 / std::numbers::pi);
  return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
}
inline double formula(const ir::Swish& s, double x) { return x * detail::sigmoid(s.beta * x); }
// relu6(x + 3) through max_nan/min_nan: fmax/fmin would turn a NaN input into 0
inline double formula(const ir::HSwish&, double x) {
  return x * detail::min_nan(detail::max_nan(x + 3.0, 0.0), 6.0) / 6.0;
}
inline double formula(const ir::HSigmoid&, double x) {
  return detail::min_nan(detail::max_nan(x + 3.0, 0.0), 6.0) / 6.0;
}
inline double formula(const ir::Mish&, double x) { return x * std::tanh(detail::softplus(x)); }
inline double formula(const ir::Elu& e, double x) { return x > 0 ? x : e.alpha * std::expm1(x); }
inline double formula(const ir::LeakyRelu& l, double x) {
  return x >= 0 || std::isnan(x) ? x : l.alpha * x;
}
inline double formula(const ir::SoftPlus&, double x) { return detail::softplus(x); }
inline double formula(const ir::SoftSign&, double x) { return x / (1.0 + std::fabs(x)); }
inline double formula(const ir::PowerStatic& p, double x) { return std::pow(x, p.exponent); }
inline double formula(const ir::LogicalNot&, double x) { return x != 0 ? 0.0 : 1.0; }

// ---- binary ----
inline double formula(const ir::Add&, double a, double b) { return a + b; }
inline double formula(const ir::Subtract&, double a, double b) { return a - b; }
inline double formula(const ir::Multiply&, double a, double b) { return a * b; }
inline double formula(const ir::Divide&, double a, double b) { return a / b; }
inline double formula(const ir::Maximum&, double a, double b) { return detail::max_nan(a, b); }
inline double formula(const ir::Minimum&, double a, double b) { return detail::min_nan(a, b); }
inline double formula(const ir::Power&, double a, double b) { return std::pow(a, b); }
inline double formula(const ir::SquaredDifference&, double a, double b) {
  return (a - b) * (a - b);
}
inline double formula(const ir::FloorMod&, double a, double b) {
  const double r = std::fmod(a, b);
  if (r == 0) return std::copysign(0.0, b); // fmod's zero has the dividend's sign
  return (r < 0) != (b < 0) ? r + b : r;
}
inline double formula(const ir::Mod&, double a, double b) { return std::fmod(a, b); }
inline double formula(const ir::PRelu&, double x, double slope) {
  return x >= 0 || std::isnan(x) ? x : slope * x;
}

inline double formula(const ir::Equal&, double a, double b) { return a == b; }
inline double formula(const ir::NotEqual&, double a, double b) { return a != b; }
inline double formula(const ir::Greater&, double a, double b) { return a > b; }
inline double formula(const ir::GreaterEqual&, double a, double b) { return a >= b; }
inline double formula(const ir::Less&, double a, double b) { return a < b; }
inline double formula(const ir::LessEqual&, double a, double b) { return a <= b; }

inline double formula(const ir::LogicalAnd&, double a, double b) { return (a != 0) && (b != 0); }
inline double formula(const ir::LogicalOr&, double a, double b) { return (a != 0) || (b != 0); }
inline double formula(const ir::LogicalXor&, double a, double b) { return (a != 0) != (b != 0); }

template <class Tag>
concept HasUnaryFormula = requires(const Tag& t) {
  formula(t, 0.0);
};
template <class Tag>
concept HasBinaryFormula = requires(const Tag& t) {
  formula(t, 0.0, 0.0);
};

} // namespace snippets::reference
