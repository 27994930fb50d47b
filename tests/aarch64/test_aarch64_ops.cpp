// SPDX-License-Identifier: Apache-2.0
// tests/aarch64/test_aarch64_ops.cpp: the AArch64 target (aarch64::Traits, NEON through
// AsmJit), cross-compiled and run under qemu-aarch64 (docs/testing.md).
//
//  - every op alone against the reference interpreter (double precision) for innermost sizes
//    1..67 (every tail length, one to 16 vectors) with 1 and 2 threads, and with NUMPY
//    broadcasting ([3,n] with [3,1] and with [n]);
//  - loads and stores of f16, i32, i8 and u8 tensors (conversion, saturation);
//  - reductions over the innermost axis;
//  - guard pages: no tail reads or writes a byte outside a tensor;
//  - W^X code pages; a model through Program with an op the target cannot fuse.
#include <doctest/doctest.h>

#include <fstream>
#include <functional>
#include <memory>
#include <sstream>

#include "aarch64/a64_test_util.hpp"

using namespace snippets;
using namespace snippets::a64_test;

namespace {

struct OpCase {
  std::string name;
  int inputs;
  std::function<ir::Value(G&, ir::Value, ir::Value)> build;
  Tolerance tol = exact;
  Pattern pattern = Pattern::general;
};

std::vector<OpCase> op_cases() {
  using V = ir::Value;
  return {
      {"Add", 2, [](G& g, V a, V b) { return g.add(a, b); }},
      {"Subtract", 2, [](G& g, V a, V b) { return g.subtract(a, b); }},
      {"Multiply", 2, [](G& g, V a, V b) { return g.multiply(a, b); }},
      {"Divide", 2, [](G& g, V a, V b) { return g.divide(a, b); }},
      {"Maximum", 2, [](G& g, V a, V b) { return g.maximum(a, b); }},
      {"Minimum", 2, [](G& g, V a, V b) { return g.minimum(a, b); }},
      {"SquaredDifference", 2, [](G& g, V a, V b) { return g.squared_difference(a, b); }, approx},
      {"PRelu", 2, [](G& g, V a, V b) { return g.prelu(a, b); }},
      {"Power", 2, [](G& g, V a, V b) { return g.power(a, b); }, Tolerance{1}},
      {"Mod", 2, [](G& g, V a, V b) { return g.mod(a, b); }},
      {"FloorMod", 2, [](G& g, V a, V b) { return g.floor_mod(a, b); }},
      // contracted into a FusedMulAdd: one rounding (FMLA) against the reference's two
      {"Multiply -> Add", 2, [](G& g, V a, V b) { return g.add(g.multiply(a, b), a); }, approx},
      {"Equal", 2, [](G& g, V a, V b) { return g.convert(g.equal(a, b), f32); }},
      {"NotEqual", 2, [](G& g, V a, V b) { return g.convert(g.not_equal(a, b), f32); }},
      {"Greater", 2, [](G& g, V a, V b) { return g.convert(g.greater(a, b), f32); }},
      {"GreaterEqual", 2, [](G& g, V a, V b) { return g.convert(g.greater_equal(a, b), f32); }},
      {"Less", 2, [](G& g, V a, V b) { return g.convert(g.less(a, b), f32); }},
      {"LessEqual", 2, [](G& g, V a, V b) { return g.convert(g.less_equal(a, b), f32); }},
      {"Select", 2, [](G& g, V a, V b) { return g.select(g.greater(a, b), a, b); }},
      {"LogicalAnd/Or/Xor/Not", 2,
       [](G& g, V a, V b) {
         const V x = g.greater(a, b), y = g.less_equal(a, g.abs(b));
         return g.convert(g.logical_or(g.logical_and(x, y), g.logical_xor(g.logical_not(x), y)),
                          f32);
       }},
      {"Relu", 1, [](G& g, V a, V) { return g.relu(a); }},
      {"Abs", 1, [](G& g, V a, V) { return g.abs(a); }},
      {"Negative", 1, [](G& g, V a, V) { return g.negative(a); }},
      {"Clamp(-1.5, 2.5)", 1, [](G& g, V a, V) { return g.clamp(a, -1.5, 2.5); }},
      {"Clamp(0, 6)", 1, [](G& g, V a, V) { return g.clamp(a, 0.0, 6.0); }},
      {"Clamp(-3, -0)", 1, [](G& g, V a, V) { return g.clamp(a, -3.0, -0.0); }},
      {"Sqrt", 1, [](G& g, V a, V) { return g.sqrt(a); }},
      {"Floor", 1, [](G& g, V a, V) { return g.floor(a); }, exact, Pattern::halves},
      {"Ceiling", 1, [](G& g, V a, V) { return g.ceiling(a); }, exact, Pattern::halves},
      {"Round half to even", 1, [](G& g, V a, V) { return g.round(a); }, exact, Pattern::halves},
      {"Round half away", 1,
       [](G& g, V a, V) { return g.round(a, ir::RoundMode::half_away_from_zero); }, exact,
       Pattern::halves},
      {"LeakyRelu", 1, [](G& g, V a, V) { return g.leaky_relu(a, 0.125); }},
      {"HSigmoid", 1, [](G& g, V a, V) { return g.hsigmoid(a); }, approx},
      {"HSwish", 1, [](G& g, V a, V) { return g.hswish(a); }, approx},
      {"SoftSign", 1, [](G& g, V a, V) { return g.softsign(a); }, approx},
      {"PowerStatic(3)", 1, [](G& g, V a, V) { return g.power_static(a, 3.0); }, approx},
      {"PowerStatic(-2)", 1, [](G& g, V a, V) { return g.power_static(a, -2.0); }, approx},
      {"PowerStatic(2.5)", 1, [](G& g, V a, V) { return g.power_static(a, 2.5); }, approx},
      {"PowerStatic(0.5)", 1, [](G& g, V a, V) { return g.power_static(a, 0.5); }},
      {"PowerStatic(0)", 1, [](G& g, V a, V) { return g.power_static(a, 0.0); }},
      {"Convert f32 -> i32 -> f32", 1,
       [](G& g, V a, V) { return g.convert(g.convert(a, ElementType::i32), f32); }, exact_any_zero},
      {"Convert f32 -> i8 -> f32", 1,
       [](G& g, V a, V) { return g.convert(g.convert(a, ElementType::i8), f32); }, exact_any_zero},
      {"Convert f32 -> u8 -> f32", 1,
       [](G& g, V a, V) { return g.convert(g.convert(a, ElementType::u8), f32); }, exact_any_zero},
      {"Convert f32 -> f16 -> f32", 1,
       [](G& g, V a, V) { return g.convert(g.convert(a, ElementType::f16), f32); }},
      {"Exp", 1, [](G& g, V a, V) { return g.exp(a); }, Tolerance{2}},
      {"Log", 1, [](G& g, V a, V) { return g.log(a); }, Tolerance{2}, Pattern::positive},
      {"Sigmoid", 1, [](G& g, V a, V) { return g.sigmoid(a); }, Tolerance{2}},
      {"Tanh", 1, [](G& g, V a, V) { return g.tanh(a); }, Tolerance{2}},
      {"Erf", 1, [](G& g, V a, V) { return g.erf(a); }, Tolerance{2}},
      {"Gelu (erf)", 1, [](G& g, V a, V) { return g.gelu(a); }, Tolerance{4, 1e-6}},
      {"Gelu (tanh)", 1, [](G& g, V a, V) { return g.gelu(a, ir::GeluApproximation::tanh); },
       Tolerance{4, 1e-6}},
      {"Swish", 1, [](G& g, V a, V) { return g.swish(a); }, Tolerance{4, 1e-6}},
      {"Elu(0.5)", 1, [](G& g, V a, V) { return g.elu(a, 0.5); }, Tolerance{2}},
      {"SoftPlus", 1, [](G& g, V a, V) { return g.softplus(a); }, Tolerance{2}},
      {"Mish", 1, [](G& g, V a, V) { return g.mish(a); }, Tolerance{4}},
      {"Convert f32 -> bf16 -> f32", 1,
       [](G& g, V a, V) { return g.convert(g.convert(a, ElementType::bf16), f32); }},
  };
}

std::vector<Tensor> inputs_for(const OpCase& op, const std::vector<Shape>& shapes,
                               std::uint64_t& seed) {
  std::vector<Tensor> in;
  for (const Shape& s : shapes) in.push_back(make_tensor(s, ++seed, op.pattern));
  if (in.size() == 2 && in[0].shape() == in[1].shape())
    in[1] = share_values(in[0], in[1]); // comparisons see equal operands too
  return in;
}

} // namespace

TEST_CASE("aarch64: every op alone matches the reference for every size from 1 to 67") {
  std::uint64_t seed = 100;
  for (const OpCase& op : op_cases()) {
    INFO("op: " << op.name);
    for (Dim n = 1; n <= 67; ++n) {
      INFO("[2," << n << "]");
      G g;
      std::vector<Shape> shapes(static_cast<std::size_t>(op.inputs), Shape{2, n});
      std::vector<ir::Value> p;
      for (const Shape& s : shapes) p.push_back(g.parameter(f32, s));
      g.result(op.build(g, p[0], op.inputs == 2 ? p[1] : p[0]));
      check_kernel(g, inputs_for(op, shapes, seed), op.tol);
    }
  }
}

TEST_CASE("aarch64: binary ops broadcast ([3,n] with [3,1] and with [n])") {
  std::uint64_t seed = 5000;
  for (const OpCase& op : op_cases()) {
    if (op.inputs != 2) continue;
    INFO("op: " << op.name);
    for (const Dim n : {1, 3, 4, 5, 8, 17, 67}) {
      for (const bool column : {true, false}) {
        const std::vector<Shape> shapes{{3, n}, column ? Shape{3, 1} : Shape{n}};
        INFO(shapes[0].to_string() << " with " << shapes[1].to_string());
        for (const bool swap : {false, true}) {
          if (swap && op.name == "PRelu") continue; // the slope broadcasts into x, not back
          G g;
          const auto a = g.parameter(f32, shapes[0]), b = g.parameter(f32, shapes[1]);
          g.result(swap ? op.build(g, b, a) : op.build(g, a, b));
          check_kernel(g, inputs_for(op, shapes, seed), op.tol);
        }
      }
    }
  }
}

TEST_CASE("aarch64: tensors of f16, bf16, i32, i8 and u8 are converted as they are loaded and "
          "stored") {
  std::uint64_t seed = 7000;
  for (const ElementType t :
       {ElementType::f16, ElementType::bf16, ElementType::i32, ElementType::i8, ElementType::u8}) {
    INFO("type " << to_string(t));
    for (const Dim n : {1, 2, 3, 4, 5, 7, 8, 9, 13, 33, 67}) {
      INFO("n = " << n);
      { // t in, t out: the negation saturates i8's -128 and u8's every positive value
        G g;
        const auto x = g.convert(g.parameter(t, {2, n}), f32);
        g.result(g.convert(g.negative(g.add(x, x)), t));
        const auto values = make_values(static_cast<std::size_t>(2 * n), ++seed);
        std::vector<double> v;
        for (const double d : values) v.push_back(std::isfinite(d) ? std::fmod(d * 37, 300) : 1);
        check_kernel(g, {Tensor::from_values(t, {2, n}, v)}, exact_any_zero);
      }
      { // f32 in, t out (a store that converts) and t in, f32 out
        G g;
        const auto x = g.parameter(f32, {3, n});
        const auto y = g.parameter(t, {3, n});
        g.result(g.convert(g.multiply(x, g.convert(y, f32)), t));
        g.result(g.add(g.convert(y, f32), x));
        std::vector<double> v = make_values(static_cast<std::size_t>(3 * n), ++seed);
        for (double& d : v) d = std::isfinite(d) ? std::round(std::fmod(d * 29, 200)) : 3;
        check_kernel(
            g, {make_tensor({3, n}, ++seed, Pattern::finite), Tensor::from_values(t, {3, n}, v)},
            exact_any_zero);
      }
    }
  }
}

TEST_CASE("aarch64: ReduceSum and ReduceMax over the innermost axis") {
  std::uint64_t seed = 9000;
  for (const Dim n : {1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31, 67}) {
    INFO("n = " << n);
    for (const int kind : {0, 1, 2}) {
      INFO((kind == 0 ? "sum" : kind == 1 ? "max" : "max of a negated row"));
      G g;
      const auto x = g.parameter(f32, {5, n});
      const auto r = kind == 0   ? g.reduce_sum(g.relu(x), {1}, true)
                     : kind == 1 ? g.reduce_max(g.abs(x), {1}, true)
                                 : g.reduce_max(g.negative(x), {1}, true);
      g.result(g.add(r, x)); // the reduced row broadcast back over it
      // sums: another order than the reference's, and f32 accumulation
      const Tolerance tol = kind == 0 ? Tolerance{64, 1e-4} : exact;
      check_kernel(g, {make_tensor({5, n}, ++seed, Pattern::finite)}, tol);
    }
  }
}

TEST_CASE("aarch64: ReduceMin, ReduceProd, ReduceMean, ReduceSumSquare, ReduceL1 and ReduceL2") {
  std::uint64_t seed = 9500;
  for (const Dim n : {1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31, 67}) {
    INFO("n = " << n);
    G g; // min: NaN, infinities and signed zeros among the values; exact (FMIN, FMINP)
    g.result(g.reduce_min(g.parameter(f32, {5, n}), {-1}, true));
    std::vector<double> v = make_values(static_cast<std::size_t>(5 * n), ++seed, Pattern::finite);
    v[0] = qnan;                                   // row 0: NaN
    v[static_cast<std::size_t>(2 * n - 1)] = -inf; // row 1: -inf last (in the tail)
    v[static_cast<std::size_t>(2 * n)] = inf;      // row 2: +inf
    check_kernel(g, {Tensor::from_values(f32, {5, n}, v)}, exact);
    G p; // a product of n factors near 1 in another order: 2n ulp (FMUL, EXT)
    p.result(p.reduce_prod(p.parameter(f32, {5, n}), {-1}, true));
    std::vector<double> f(static_cast<std::size_t>(5 * n));
    for (std::size_t i = 0; i < f.size(); ++i)
      f[i] = (i % 3 ? 1 : -1) * (0.9 + 0.003 * double(i % 67));
    check_kernel(p, {Tensor::from_values(f32, {5, n}, f)}, Tolerance{2 * n, 0});
    G s; // the composite ones: a ReduceSum and elementwise ops (as test_jit_reduce_ops.cpp)
    const auto x = s.parameter(f32, {5, n});
    s.result(s.add(s.reduce_mean(x, {-1}, true), s.reduce_sum_square(x, {-1}, true)));
    s.result(s.multiply(s.reduce_l1(x, {-1}, true), s.reduce_l2(x, {-1}, true)));
    check_kernel(s, {make_tensor({5, n}, ++seed, Pattern::finite)}, Tolerance{32, 1e-4});
  }
}

TEST_CASE("aarch64: reductions over the last axes, rows of one or two loop dimensions") {
  std::uint64_t seed = 10500;
  for (const Dim w : {1, 3, 4, 7, 17}) {
    INFO("w = " << w);
    const Shape s{2, 4, 3, w};
    G g; // over [3, w] with a scale along the first of them: the row keeps two dimensions
    const auto x = g.parameter(f32, s);
    const auto scale = g.parameter(f32, {3, 1});
    const auto d = g.subtract(x, g.reduce_mean(x, {-2, -1}, true));
    const auto var = g.reduce_mean(g.multiply(d, d), {-1, -2}, true);
    g.result(g.multiply(g.divide(d, g.sqrt(g.add(var, g.scalar(f32, 1e-5)))), scale));
    check_kernel(g, {make_tensor(s, ++seed, Pattern::finite), make_tensor({3, 1}, ++seed)},
                 Tolerance{64, 1e-5});
    G m; // max and a sum without keep_dims over all three last axes: rows of 12 w
    const auto y = m.parameter(f32, s);
    m.result(m.reduce_max(y, {1, 2, 3}, false));
    check_kernel(m, {make_tensor(s, ++seed, Pattern::finite)}, exact);
  }
}

TEST_CASE("aarch64: reductions and Softmax over the channels, a vector of columns at a time") {
  // passes/tile_columns.hpp: 4, 3 (masked) and 1 column(s) per vector
  std::uint64_t seed = 10800;
  for (const Shape& s : {Shape{2, 5, 12}, Shape{3, 7, 9}, Shape{2, 6, 3, 3}, Shape{1, 4, 13}}) {
    INFO("shape = " << s.to_string());
    G g;
    const auto x = g.parameter(f32, s);
    const Shape per_channel = s.rank() == 4 ? Shape{s[1], 1, 1} : Shape{s[1], 1};
    const auto b = g.parameter(f32, per_channel);
    const auto d = g.subtract(x, g.reduce_mean(x, {1}, true));
    g.result(g.add(g.divide(d, g.reduce_max(g.abs(d), {1}, true)), g.relu(b)));
    g.result(g.softmax(x, 1));
    check_kernel(g, {make_tensor(s, ++seed, Pattern::finite), make_tensor(per_channel, ++seed)},
                 Tolerance{64, 1e-5});
  }
}

TEST_CASE("aarch64: Softmax over the innermost axis, rows of every length from 1 to 67") {
  std::uint64_t seed = 11000;
  for (Dim n = 1; n <= 67; ++n) {
    INFO("[3," << n << "]");
    G g;
    const auto x = g.parameter(f32, {3, n});
    const auto b = g.parameter(f32, {1, n});
    g.result(g.softmax(g.add(x, b), -1));
    // as x64 (tests/test_jit_reduce.cpp): exp, a sum in another order, a reciprocal
    check_kernel(g,
                 {make_tensor({3, n}, ++seed, Pattern::finite),
                  make_tensor({1, n}, ++seed, Pattern::finite)},
                 Tolerance{16, 1e-9});
  }
  SUBCASE("NaN and infinities in a row") {
    G g;
    const auto x = g.parameter(f32, {4, 9});
    g.result(g.softmax(x, 1));
    std::vector<double> v = make_values(36, 77, Pattern::finite);
    v[3] = qnan;      // row 0: NaN everywhere
    v[9 + 4] = inf;   // row 1: one +inf
    v[18 + 2] = -inf; // row 2: a -inf (its exp is 0)
    check_kernel(g, {Tensor::from_values(f32, {4, 9}, v)}, Tolerance{16, 1e-9});
  }
}
