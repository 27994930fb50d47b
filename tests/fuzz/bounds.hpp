// SPDX-License-Identifier: Apache-2.0
// tests/fuzz/bounds.hpp: the oracle of the fuzz families whose ops are not correctly rounded
// (transcendentals, reductions, products): per element, the reference value and a bound on how
// far a kernel's result may be from it.
//
// evaluate_bounds(g, inputs) walks the graph in topological order as reference::evaluate does
// (double precision, every node rounded to its type: Options::round_each_node) and carries,
// beside each value v, a bound e >= |kernel - v| on the kernel's value of that node. For a
// node computing f on inputs known to within e_i:
//  - the inputs' spread: f is evaluated (reference/eltwise.hpp formulas, rounded to the node's
//    type) at the corners of the box [x_i - e_i, x_i + e_i], plus 0 where an interval
//    straddles it (kinks, poles, domain edges); f is monotone in each argument between those
//    points for every op here except Gelu, Swish, Mish and HSwish, which add their Lipschitz
//    constant times e instead, and Equal, NotEqual (1 once the boxes meet), SquaredDifference,
//    Mod and FloorMod (written out);
//  - the op's own error where it is not correctly rounded: the bound docs/math_accuracy.md
//    asserts (ulp of the f32 result, or absolute), with the shorter exp polynomial's 2^-17
//    (relative) where the value is kept as bf16;
//  - one ulp of the node's type for the roundings the kernel and the reference make at
//    different places (an FMA, a bf16 product rounded only at the store, ...);
//  - ReduceSum: the inputs' bounds and (n + 2) 2^-24 sum |x| for another order of additions;
//    ReduceMean: that over n, plus two ulps (the sum's and the quotient's roundings);
//    ReduceMax and ReduceMin: the largest input bound; Softmax: exp(2 E) - 1 relative for input
//    bounds up to E, plus (2 n + 24) 2^-24 relative (exp, the sum, the scaling), |x - max| 2^-24
//    relative (x - max rounded to f32) and 2^-140 absolute; MatMul: |A| e_B + e_A |B| +
//    e_A e_B + (K + 2) 2^-24 |A| |B| (computed by the reference's own matmul), plus
//    (K + 2) 2^-126 for bf16 operands (VDPBF16PS flushes subnormal products);
//  - a NaN or an infinity known exactly (every input bound 0) must be met exactly; a bound that
//    reaches a pole, a domain edge, an overflow or an infinite value is infinite: that element
//    is not checked (`unchecked` counts them).
// The bound is sound for any kernel that computes each op within its stated accuracy, in any
// order of summation, with or without FMA contraction: a result outside it is a bug (or an op
// outside its documented bound), never noise.
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "jit_test_util.hpp"

namespace snippets::fuzz {

using jit_test::Graph;
using jit_test::Tensor;
using reference::Values;

/// A value and, per element, a bound on |kernel - value| (infinite: not checked).
struct Bounded {
  Values v, e;
};

/// How an Opaque op of the fuzz families moves bounds: its outputs' bounds from its inputs'.
using OpaqueBoundFn = std::function<std::vector<Values>(std::span<const Bounded>)>;

/// One ulp of `t` at magnitude `m` (an upper bound: the ulp of the binade above counts).
inline double ulp_at(ElementType t, double m) {
  switch (t) {
  case ElementType::f32: return std::max(m * 0x1p-23, 0x1p-149);
  case ElementType::f16: return std::max(m * 0x1p-10, 0x1p-24);
  case ElementType::bf16: return std::max(m * 0x1p-7, 0x1p-133);
  default: return 0;
  }
}

inline double max_finite(ElementType t) {
  switch (t) {
  case ElementType::f16: return 65504;
  case ElementType::bf16: return 3.3895313892515355e38;
  default: return std::numeric_limits<float>::max();
  }
}

namespace detail {

inline constexpr double unbounded = std::numeric_limits<double>::infinity();

/// An op's own error (docs/math_accuracy.md) and how its value moves with its inputs.
struct OpAccuracy {
  double ulp = 0, abs = 0; // own error: ulp of the f32 result, or absolute
  double lipschitz = 0;    // > 0: not monotone between the corner points; |f'| <= this
  bool exp_based = false;  // takes the shorter exp polynomial when kept as bf16
};

template <class Tag> OpAccuracy accuracy_of(const Tag& tag) {
  using ir::GeluApproximation;
  if constexpr (std::is_same_v<Tag, ir::Exp> || std::is_same_v<Tag, ir::Sigmoid> ||
                std::is_same_v<Tag, ir::Erf> || std::is_same_v<Tag, ir::SoftPlus>)
    return {2, 0, 0, true};
  else if constexpr (std::is_same_v<Tag, ir::Log> || std::is_same_v<Tag, ir::Tanh> ||
                     std::is_same_v<Tag, ir::Elu>)
    return {2, 0, 0, false};
  else if constexpr (std::is_same_v<Tag, ir::Gelu>)
    return {4, 1e-6, 1.13, true};
  else if constexpr (std::is_same_v<Tag, ir::Swish>)
    return {4, 1e-6, 1.1, true}; // d/dx x sigmoid(bx) = s(u) + u s'(u), u = bx: within 1.1
  else if constexpr (std::is_same_v<Tag, ir::Mish>)
    return {4, 0, 1.1, true};
  else if constexpr (std::is_same_v<Tag, ir::HSwish>)
    return {4, 0, 1.5, false};
  else if constexpr (std::is_same_v<Tag, ir::HSigmoid> || std::is_same_v<Tag, ir::SoftSign> ||
                     std::is_same_v<Tag, ir::SquaredDifference>)
    return {4, 0, 0, false};
  else if constexpr (std::is_same_v<Tag, ir::LeakyRelu> || std::is_same_v<Tag, ir::Power>)
    return {1, 0, 0, false};
  else if constexpr (std::is_same_v<Tag, ir::PowerStatic>) {
    // 0, +-1, 2, 0.5 are exact; others a few roundings (4 ulp, tests/test_jit_eltwise.cpp).
    // Finding (both ISAs): a negative exponent below -1 is 1 / x^n, which overflows to inf and
    // gives 0 where x^-n is subnormal ((x^3)^-2 = 2.87e-42 for x^3 = 5.9e20): within the unit
    // tests' 4 ulp or 1e-6 absolute, not within 4 ulp; allowed here up to FLT_MIN absolute
    const double e = tag.exponent;
    const bool exact = e == 0 || e == 1 || e == -1 || e == 2 || e == 0.5;
    return {exact ? 0.0 : 4.0, e < -1 ? 0x1p-126 : 0.0, 0, false};
  } else
    return {};
}

/// Points of [x - e, x + e] where f is evaluated: the ends, and 0 when the interval holds it.
inline int corner_points(double x, double e, double* out) {
  if (e == 0) {
    out[0] = x;
    return 1;
  }
  out[0] = x - e;
  out[1] = x + e;
  if (x - e < 0 && x + e > 0) {
    out[2] = 0;
    return 3;
  }
  return 2;
}

/// max |f(corner) - f(x)| over the box of `x` +- `e` (f already rounded to the node's type);
/// infinite when a corner is NaN or infinite and f(x) is not the same.
template <class F> double spread(std::span<const double> x, std::span<const double> e, F&& f) {
  const std::size_t n = x.size();
  double pts[4][3];
  int count[4];
  bool exact = true;
  for (std::size_t i = 0; i < n; ++i) {
    count[i] = corner_points(x[i], e[i], pts[i]);
    exact = exact && e[i] == 0;
  }
  if (exact) return 0;
  const double center = f(x);
  double args[4], worst = 0;
  int idx[4] = {0, 0, 0, 0};
  for (;;) {
    for (std::size_t i = 0; i < n; ++i) args[i] = pts[i][idx[i]];
    const double y = f(std::span<const double>(args, n));
    if (std::isnan(y) || std::isnan(center)) {
      if (!(std::isnan(y) && std::isnan(center))) return unbounded;
    } else if (std::isinf(y) || std::isinf(center)) {
      if (y != center) return unbounded;
    } else {
      worst = std::max(worst, std::fabs(y - center));
    }
    std::size_t i = 0;
    for (; i < n; ++i) {
      if (++idx[i] < count[i]) break;
      idx[i] = 0;
    }
    if (i == n) return worst;
  }
}

/// The bound of a node of type `t` and value `v` whose inputs spread it by `spread` and whose
/// own error is `acc` (`bf16_kept`: the exp-based op may use its shorter polynomial;
/// `finite_in`: every input is finite, so an approximate op's infinity is an overflow).
inline double finish(ElementType t, double v, double spread, const OpAccuracy& acc, bool bf16_kept,
                     bool finite_in) {
  if (std::isnan(spread) || std::isinf(spread)) return unbounded;
  const bool approx = acc.ulp > 0 || acc.abs > 0;
  if (std::isnan(v)) return spread == 0 ? 0 : unbounded;
  if (std::isinf(v)) return spread == 0 && !(approx && finite_in) ? 0 : unbounded;
  if (t == ElementType::boolean) return spread > 0 ? 1 : 0;
  if (is_integer(t)) return spread; // the corners were truncated: the jump is in `spread`
  double e = spread;
  const double m = std::fabs(v) + spread;
  if (approx) {
    e += acc.ulp * ulp_at(ElementType::f32, m) + acc.abs;
    if (acc.exp_based && bf16_kept) e += m * 0x1p-17;
  }
  e += ulp_at(t, m + e);
  if (std::fabs(v) + e > max_finite(t)) return unbounded;
  return e;
}

inline Values absolute(Values x) {
  for (double& d : x.v) d = std::fabs(d);
  return x;
}

inline Values like(const Values& x, double fill) {
  return Values{ElementType::f32, x.shape, std::vector<double>(x.v.size(), fill)};
}

inline bool all_zero(const Values& e) {
  return std::all_of(e.v.begin(), e.v.end(), [](double d) { return d == 0; });
}

/// Whether every user of `n`'s value only keeps it as bf16 (the shorter exp polynomial).
inline bool kept_as_bf16(const Graph& g, const ir::Node<jit_test::TestedTraits>& n) {
  if (n.outputs[0].type == ElementType::bf16) return true;
  if (n.users.empty() || n.users[0].empty()) return false;
  for (const ir::Use& u : n.users[0]) {
    const auto* c = std::get_if<ir::Convert>(&g.node(u.node).op);
    if (!c || c->to != ElementType::bf16) return false;
  }
  return true;
}

/// Bounds of an elementwise node (unary, binary, Select, Convert).
template <class Tag>
Values elementwise_bound(const Graph& g, const ir::Node<jit_test::TestedTraits>& n, const Tag& tag,
                         std::span<const Bounded> in, const Values& value) {
  const ElementType t = n.outputs[0].type;
  const OpAccuracy acc = accuracy_of(tag);
  const bool bf16_kept = acc.exp_based && kept_as_bf16(g, n);
  auto f = [&](std::span<const double> a) -> double {
    if constexpr (std::is_same_v<Tag, ir::Convert>)
      return round_to(t, a[0]);
    else if constexpr (std::is_same_v<Tag, ir::Select>)
      return round_to(t, a[0] != 0 ? a[1] : a[2]);
    else if constexpr (reference::HasUnaryFormula<Tag>)
      return round_to(t, reference::formula(tag, a[0]));
    else
      return round_to(t, reference::formula(tag, a[0], a[1]));
  };
  std::vector<const Values*> ptrs;
  for (const Bounded& b : in) ptrs.push_back(&b.v);
  for (const Bounded& b : in) ptrs.push_back(&b.e);
  const std::size_t k = in.size();
  std::size_t at = 0;
  return reference::detail::broadcast_map(
      ElementType::f32, value.shape, ptrs, [&](std::span<const double> a) {
        const double v = value.v[at++];
        const auto x = a.first(k), e = a.subspan(k);
        for (double d : e)
          if (std::isinf(d)) return unbounded;
        bool finite_in = true;
        for (double d : x) finite_in = finite_in && std::isfinite(d);
        double s = 0;
        if constexpr (std::is_same_v<Tag, ir::Equal> || std::is_same_v<Tag, ir::NotEqual>) {
          // not monotone: equal anywhere inside the box, not only at its corners
          s = e[0] + e[1] > 0 && !(std::fabs(x[0] - x[1]) > e[0] + e[1]) ? 1 : 0;
        } else if constexpr (std::is_same_v<Tag, ir::SquaredDifference>) {
          const double d = std::fabs(x[0] - x[1]), ed = e[0] + e[1];
          s = ed > 0 ? (d + ed) * (d + ed) - d * d : 0;
        } else if constexpr (std::is_same_v<Tag, ir::Mod> || std::is_same_v<Tag, ir::FloorMod>) {
          // not monotone: anywhere in (-|b|, |b|) once the dividend or divisor may move, and
          // NaN where the divisor may be 0
          s = e[0] + e[1] == 0            ? 0
              : !(std::fabs(x[1]) > e[1]) ? unbounded
                                          : std::fabs(v) + std::fabs(x[1]) + e[1];
        } else {
          s = spread(x, e, f);
          if (acc.lipschitz > 0 && k == 1) s = std::max(s, acc.lipschitz * e[0]);
        }
        return finish(t, v, s, acc, bf16_kept, finite_in);
      });
}

/// Bounds of a reduction over k axes or a Softmax over one. A reduction over other axes than
/// the last ones has the same rows with its axes moved last (its reduced values keep their
/// order: passes/move_reduced_axes_last.hpp); a Softmax's output is moved alike and back.
inline Values row_bound(const ir::Node<jit_test::TestedTraits>& n, const Bounded& moved,
                        const Values& output) {
  const std::size_t rank = moved.v.shape.rank();
  std::vector<bool> reduced(rank, false);
  std::visit(
      [&](const auto& tag) {
        if constexpr (requires { tag.axes; })
          reduced = axis_mask(tag.axes, rank, n.describe());
        else if constexpr (requires { tag.axis; })
          reduced = axis_mask({tag.axis}, rank, n.describe());
        else if (rank > 0)
          reduced.back() = true;
      },
      n.op);
  const auto k = static_cast<std::size_t>(std::count(reduced.begin(), reduced.end(), true));
  std::vector<std::size_t> perm;
  for (const bool last : {false, true})
    for (std::size_t d = 0; d < rank; ++d)
      if (reduced[d] == last) perm.push_back(d);
  const bool softmax = ir::is<ir::Softmax>(n.op), mean = ir::is<ir::ReduceMean>(n.op);
  Bounded x = moved;
  Values value = output;
  const bool transposed = !std::is_sorted(perm.begin(), perm.end());
  if (transposed) {
    std::vector<Dim> d;
    for (std::size_t a : perm) d.push_back(moved.v.shape[a]);
    x.v = reference::detail::transpose(moved.v, perm, Shape(d));
    x.e = reference::detail::transpose(moved.e, perm, Shape(d));
    if (softmax) value = reference::detail::transpose(output, perm, Shape(d));
  }
  std::size_t len = 1;
  for (std::size_t d = x.v.shape.rank() - std::min(k, x.v.shape.rank()); d < x.v.shape.rank(); ++d)
    len *= static_cast<std::size_t>(x.v.shape[d]);
  const std::size_t rows = len ? x.v.v.size() / len : value.v.size();
  Values e = like(value, 0);
  const ElementType t = n.outputs[0].type;
  const bool sum = ir::is<ir::ReduceSum>(n.op) || mean;
  for (std::size_t r = 0; r < rows; ++r) {
    double mag = 0, worst = 0, top = -std::numeric_limits<double>::infinity();
    bool finite = true, exact = true, zeros[2] = {false, false}; // +0, -0 among the elements
    for (std::size_t i = 0; i < len; ++i) {
      const double xi = x.v.v[r * len + i], ei = x.e.v[r * len + i];
      if (xi == 0) zeros[std::signbit(xi) ? 1 : 0] = true;
      finite = finite && std::isfinite(xi);
      exact = exact && ei == 0;
      worst = std::max(worst, ei);
      mag += std::fabs(xi);
      top = std::max(top, xi);
    }
    const std::size_t out_len = softmax ? len : 1;
    for (std::size_t i = 0; i < out_len; ++i) {
      const double v = value.v[r * out_len + i];
      double b = 0;
      if (std::isinf(worst) || (!finite && !exact)) {
        b = unbounded;
      } else if (!std::isfinite(v)) {
        b = 0; // exactly known inputs: NaN and infinities must match
      } else if (softmax) {
        // the inputs' bounds, the sum and the scaling, exp's 2 ulp, and x - max rounded to f32
        // (a -inf element is exactly 0)
        const double xi = x.v.v[r * len + i];
        const double shift = std::isinf(xi) ? 0 : std::fabs(xi - top) * 0x1p-24;
        const double rel = std::expm1(2 * worst) + double(2 * len + 24) * 0x1p-24 + shift;
        b = std::isfinite(rel) ? std::fabs(v) * rel + 0x1p-140 : unbounded;
        b += ulp_at(t, std::fabs(v) + b);
      } else if (sum) {
        b = double(len + 2) * 0x1p-24 * mag;
        for (std::size_t j = 0; j < len; ++j) b += x.e.v[r * len + j];
        if (mean) b = b / double(len) + ulp_at(t, std::fabs(v) + b / double(len));
        b += ulp_at(t, std::fabs(v) + b);
        if (std::fabs(v) + b > max_finite(t)) b = unbounded;
      } else {
        b = worst > 0 ? worst + ulp_at(t, std::fabs(v) + worst) : 0;
        // the max (min) of +0 and -0 is either (op_tags.hpp): a zero of unknown sign
        if (v == 0 && zeros[0] && zeros[1]) b = std::max(b, 0x1p-149);
      }
      e.v[r * out_len + i] = b;
    }
  }
  if (!softmax || !transposed) return e;
  return reference::detail::transpose(e, inverse_permutation(perm), output.shape);
}

inline Values matmul_bound(const ir::Node<jit_test::TestedTraits>& n, const Bounded& a,
                           const Bounded& b, const Values& value) {
  const auto& mm = std::get<ir::MatMul>(n.op);
  const Shape& out = value.shape;
  const Values abs_a = absolute(a.v), abs_b = absolute(b.v);
  using reference::detail::matmul;
  const Values mag = matmul(abs_a, abs_b, mm.transpose_a, mm.transpose_b, out);
  const bool exact = all_zero(a.e) && all_zero(b.e);
  Values spread = like(value, 0);
  if (!exact) {
    const Values t1 = matmul(abs_a, b.e, mm.transpose_a, mm.transpose_b, out);
    const Values t2 = matmul(a.e, abs_b, mm.transpose_a, mm.transpose_b, out);
    const Values t3 = matmul(a.e, b.e, mm.transpose_a, mm.transpose_b, out);
    for (std::size_t i = 0; i < spread.v.size(); ++i) spread.v[i] = t1.v[i] + t2.v[i] + t3.v[i];
  }
  const Shape& sa = a.v.shape;
  const Dim k = sa.rank() == 1 ? sa[0] : mm.transpose_a ? sa[sa.rank() - 2] : sa[sa.rank() - 1];
  const bool bf16 = a.v.type == ElementType::bf16 || b.v.type == ElementType::bf16;
  const ElementType t = n.outputs[0].type;
  Values e = like(value, 0);
  for (std::size_t i = 0; i < e.v.size(); ++i) {
    const double v = value.v[i], s = spread.v[i];
    if (!std::isfinite(v)) {
      e.v[i] = exact ? 0 : unbounded;
      continue;
    }
    double bound = s + double(k + 2) * 0x1p-24 * mag.v[i] + (bf16 ? double(k + 2) * 0x1p-126 : 0);
    if (!std::isfinite(bound)) {
      e.v[i] = unbounded;
      continue;
    }
    bound += ulp_at(t, std::fabs(v) + bound);
    e.v[i] = std::fabs(v) + bound > max_finite(t) ? unbounded : bound;
  }
  return e;
}

} // namespace detail

/// The reference's value of every Result of `g` on `inputs` and its bound (see the header).
inline std::vector<Bounded>
evaluate_bounds(const Graph& g, std::span<const Tensor> inputs, const reference::Options& ref,
                const std::map<std::string, OpaqueBoundFn, std::less<>>& opaque) {
  using namespace detail;
  std::vector<std::vector<Bounded>> values(g.size());
  const auto& params = g.parameters();
  for (std::size_t i = 0; i < params.size(); ++i) {
    Values v = inputs[i].values();
    reference::detail::round_values(v);
    values[params[i]] = {{v, like(v, 0)}};
  }
  for (ir::NodeId id : g.topological_order()) {
    const auto& n = g.node(id);
    if (ir::is<ir::Parameter>(n.op) || ir::is<ir::Result>(n.op)) continue;
    std::vector<Bounded> in;
    std::vector<Values> in_values;
    for (const ir::Output& o : n.inputs) {
      in.push_back(values[o.node][o.port]);
      in_values.push_back(in.back().v);
    }
    std::vector<Values> out = reference::detail::eval_node(n, in_values, ref);
    for (Values& v : out) reference::detail::round_values(v); // round_each_node
    std::vector<Values> bounds;
    std::visit(
        [&](const auto& tag) {
          using Tag = std::decay_t<decltype(tag)>;
          if constexpr (std::is_same_v<Tag, ir::Constant> || std::is_same_v<Tag, ir::Scalar>) {
            bounds.push_back(like(out[0], 0));
          } else if constexpr (std::is_same_v<Tag, ir::ReduceSum> ||
                               std::is_same_v<Tag, ir::ReduceMax> ||
                               std::is_same_v<Tag, ir::ReduceMin> ||
                               std::is_same_v<Tag, ir::ReduceMean> ||
                               std::is_same_v<Tag, ir::Softmax>) {
            bounds.push_back(row_bound(n, in[0], out[0]));
          } else if constexpr (std::is_same_v<Tag, ir::MatMul>) {
            bounds.push_back(matmul_bound(n, in[0], in[1], out[0]));
          } else if constexpr (std::is_same_v<Tag, ir::Transpose> ||
                               std::is_same_v<Tag, ir::Broadcast> ||
                               std::is_same_v<Tag, ir::Reshape> || std::is_same_v<Tag, ir::Slice>) {
            Values e = in[0].e;
            e.type = in[0].v.type; // the op's own type checks
            bounds = reference::detail::eval_node(n, std::vector<Values>{e}, ref);
            for (Values& b : bounds) b.type = ElementType::f32;
          } else if constexpr (std::is_same_v<Tag, ir::Opaque>) {
            const auto it = opaque.find(tag.type_name);
            SNIPPETS_ASSERT(it != opaque.end()) << "no bound for Opaque " << tag.type_name;
            bounds = it->second(in);
          } else if constexpr (reference::HasUnaryFormula<Tag> ||
                               reference::HasBinaryFormula<Tag> ||
                               std::is_same_v<Tag, ir::Select> ||
                               std::is_same_v<Tag, ir::Convert>) {
            bounds.push_back(elementwise_bound(g, n, tag, in, out[0]));
          } else {
            SNIPPETS_ASSERT(false) << "the fuzz bounds do not know " << n.describe();
          }
        },
        n.op);
    for (std::size_t p = 0; p < out.size(); ++p) values[id].push_back({out[p], bounds.at(p)});
  }
  std::vector<Bounded> results;
  for (ir::NodeId r : g.results()) {
    const ir::Output src = g.node(r).inputs[0];
    results.push_back(values[src.node][src.port]);
  }
  return results;
}

/// Empty when `got` has `want`'s element type and shape; else what differs.
inline std::string type_mismatch(const Tensor& got, const Tensor& want) {
  if (got.type() == want.type() && got.shape() == want.shape()) return {};
  return "got " + std::string(to_string(got.type())) + got.shape().to_string() + ", want " +
         std::string(to_string(want.type())) + want.shape().to_string();
}

/// Empty when every checked element of `got` is within its bound `e` of `want` (the reference's
/// output: NaN matches NaN, an exactly known infinity must be met); else a report of the first
/// mismatches. `unchecked` counts the elements whose bound is infinite.
inline std::string compare_bounded(const Tensor& got, const Tensor& want, const Values& e,
                                   std::size_t& unchecked, std::size_t max_report = 5) {
  if (std::string m = type_mismatch(got, want); !m.empty()) return m;
  std::ostringstream os;
  os.precision(9);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = got.at(i), w = want.at(i), b = e.v[i];
    if (std::isinf(b)) {
      ++unchecked;
      continue;
    }
    bool ok;
    if (std::isnan(w) || std::isnan(g))
      ok = std::isnan(w) && std::isnan(g);
    else if (std::isinf(w) || std::isinf(g))
      ok = g == w;
    else
      ok = std::fabs(g - w) <= b;
    if (!ok && bad++ < max_report)
      os << "\n  at " << i << " " << jit_test::coordinates(got.shape(), i) << ": got " << g
         << ", want " << w << ", bound " << b;
  }
  if (bad == 0) return {};
  return std::to_string(bad) + " of " + std::to_string(got.size()) +
         " elements outside their bounds:" + os.str();
}

} // namespace snippets::fuzz
