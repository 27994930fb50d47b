// SPDX-License-Identifier: Apache-2.0
// JIT tests of target/x64/emitters/eltwise.hpp: every op with an x64 emitter, compiled for
// AVX2 and AVX-512, against the reference interpreter on every tail length (innermost sizes
// 1, 7, 8, 15, 16, 17, 29, 31, 33, 1000 as [n] and [3, n]) with inputs that mix random values
// with signed zeros, halves, NaN, infinities, huge and denormal numbers.
//
// Tolerances (jit_test_util.hpp): ops that round once in IEEE f32 (add, subtract, multiply,
// divide, max, min, abs, negative, relu, clamp, floor, ceiling, round, sqrt, comparisons,
// select, logical ops, PowerStatic with exponent 0, 1, 2, -1 or 0.5) must be bit-equal to the
// reference rounded to f32 (NaN matches NaN, and the sign of a zero counts). Ops that round more
// than once in f32 while the reference rounds once from double (FMA contraction vs double rounding,
// SquaredDifference, PowerStatic with exponent 3, 1.5 or -2, HSwish, HSigmoid, SoftSign) may
// differ by <= 4 ulp, or 1e-6 absolutely near zero.
#include "jit_test_util.hpp"

using namespace snippets;
using namespace snippets::jit_test;

namespace {

constexpr Dim inner_sizes[] = {1, 7, 8, 15, 16, 17, 29, 31, 33, 1000};

/// [n] and [3, n] for every innermost size.
std::vector<Shape> sweep_shapes() {
  std::vector<Shape> out;
  for (Dim n : inner_sizes) {
    out.push_back(Shape{n});
    out.push_back(Shape{3, n});
  }
  return out;
}

template <class Tag> void check_unary(Tag tag, Tolerance tol, Pattern pattern = Pattern::general) {
  INFO("op = " << Tag::name);
  std::uint64_t seed = 100;
  for (const Shape& s : sweep_shapes()) {
    INFO("shape = " << s.to_string());
    Graph g;
    g.result(g.apply(tag, g.parameter(f32, s)));
    check_jit(g, {make_tensor(s, ++seed, pattern)}, {.tol = tol, .threads = {1, 3}});
  }
}

template <class Tag> void check_binary(Tag tag, Tolerance tol) {
  INFO("op = " << Tag::name);
  std::uint64_t seed = 200;
  for (const Shape& s : sweep_shapes()) {
    INFO("shape = " << s.to_string());
    Graph g;
    const auto a = g.parameter(f32, s), b = g.parameter(f32, s);
    g.result(g.apply(tag, a, b));
    const Tensor ta = make_tensor(s, ++seed);
    check_jit(g, {ta, share_values(ta, make_tensor(s, ++seed))}, {.tol = tol, .threads = {1, 3}});
  }
}

/// Select(cmp(a, b), a, b) for a comparison tag.
template <class Tag> void check_comparison(Tag tag) {
  INFO("op = " << Tag::name);
  std::uint64_t seed = 300;
  for (const Shape& s : sweep_shapes()) {
    INFO("shape = " << s.to_string());
    Graph g;
    const auto a = g.parameter(f32, s), b = g.parameter(f32, s);
    g.result(g.select(g.apply(tag, a, b), a, b));
    const Tensor ta = make_tensor(s, ++seed);
    check_jit(g, {ta, share_values(ta, make_tensor(s, ++seed))}, {.threads = {1, 3}});
  }
}

/// Runs the unary op `tag` on `in` for every ISA and checks the output bit for bit against
/// `want` (hand-computed, NaN matches NaN): as given ([in.size()], a tail), and repeated to
/// over 300 elements, which runs the unrolled main loop too.
template <class Tag>
void check_values(Tag tag, const std::vector<double>& in, const std::vector<double>& want) {
  for (const std::size_t copies : {std::size_t{1}, 300 / in.size() + 1}) {
    std::vector<double> x, y;
    for (std::size_t c = 0; c < copies; ++c) {
      x.insert(x.end(), in.begin(), in.end());
      y.insert(y.end(), want.begin(), want.end());
    }
    const Shape s{static_cast<Dim>(x.size())};
    INFO("shape = " << s.to_string());
    Graph g;
    g.result(g.apply(tag, g.parameter(f32, s)));
    const Tensor expected = Tensor::from_values(f32, s, y);
    for_each_isa([&](x64::Isa isa) {
      const auto out = compile(g, {.isa = isa}).run({Tensor::from_values(f32, s, x)});
      const std::string report = compare(out.at(0), expected, exact);
      CHECK_MESSAGE(report.empty(), report);
    });
  }
}

} // namespace

TEST_CASE("jit eltwise: Add, Subtract, Multiply, Divide, Maximum and Minimum are bit-exact on "
          "every tail length") {
  check_binary(ir::Add{}, exact);
  check_binary(ir::Subtract{}, exact);
  check_binary(ir::Multiply{}, exact);
  check_binary(ir::Divide{}, exact);
  check_binary(ir::Maximum{}, exact);
  check_binary(ir::Minimum{}, exact);
}

TEST_CASE("jit eltwise: every unroll factor gives the reference's bits on every tail length") {
  // CompileOptions::unroll copies the innermost body; the remainder of W mod (unroll * lanes)
  // runs as full vectors and one masked tail
  std::uint64_t seed = 150;
  for (const Shape& s : sweep_shapes()) {
    INFO("shape = " << s.to_string());
    Graph g;
    const auto a = g.parameter(f32, s), b = g.parameter(f32, s);
    g.result(g.maximum(g.subtract(a, g.multiply(a, b)), b));
    check_jit(
        g, {make_tensor(s, ++seed), make_tensor(s, ++seed)},
        {.threads = {1, 3}, .fma = false, .round_each_node = true, .unroll = {1, 2, 3, 4, 5, 16}});
  }
}

TEST_CASE("jit eltwise: SquaredDifference is within 4 ulp on every tail length") {
  // f32 rounds a - b before squaring; the reference squares the exact difference
  check_binary(ir::SquaredDifference{}, approx);
}

TEST_CASE("jit eltwise: Abs, Negative, Floor, Ceiling and Sqrt are bit-exact on every tail "
          "length") {
  check_unary(ir::Abs{}, exact);
  check_unary(ir::Negative{}, exact);
  check_unary(ir::Floor{}, exact);
  check_unary(ir::Ceiling{}, exact);
  check_unary(ir::Sqrt{}, exact);
  check_unary(ir::Sqrt{}, exact, Pattern::positive);
}

TEST_CASE("jit eltwise: Relu and Clamp are bit-exact on every tail length, NaN included") {
  check_unary(ir::Relu{}, exact);
  check_unary(ir::Clamp{0, 6}, exact);
  check_unary(ir::Clamp{-6, 0}, exact);
  check_unary(ir::Clamp{-1.5, 2.5}, exact);
  check_unary(ir::Clamp{-1e30, 0.1}, exact);
}

TEST_CASE("jit eltwise: Relu(-0) and Clamp(-0) with a zero bound return +0 like the reference") {
  // Regression (both ISAs, fixed): Emitter<Relu> is vmaxps(0, x) and Emitter<Clamp> vmaxps(lo, x) /
  // vminps(hi, v), which return their second operand x = -0 when both are zeros. The reference
  // (max_nan(x, 0): "x > 0 ? x : 0") and the JIT's own Maximum(x, 0) give +0.
  Graph g;
  const auto x = g.parameter(f32, {2});
  g.result(g.relu(x));
  g.result(g.clamp(x, 0, 6));
  g.result(g.clamp(x, -6, 0));
  const Tensor in = Tensor::from_values(f32, {2}, {-0.0, 0.0});
  const Tensor want = Tensor::from_values(f32, {2}, {0.0, 0.0});
  for_each_isa([&](x64::Isa isa) {
    for (const Tensor& out : compile(g, {.isa = isa}).run({in})) {
      const std::string report = compare(out, want, exact);
      CHECK_MESSAGE(report.empty(), report);
    }
  });
}

TEST_CASE("jit eltwise: Round in both modes is bit-exact on halves and every tail length") {
  check_unary(ir::Round{ir::RoundMode::half_to_even}, exact, Pattern::halves);
  check_unary(ir::Round{ir::RoundMode::half_away_from_zero}, exact, Pattern::halves);
  check_unary(ir::Round{ir::RoundMode::half_to_even}, exact);
  check_unary(ir::Round{ir::RoundMode::half_away_from_zero}, exact);
}

TEST_CASE("jit eltwise: Round half away from zero keeps the sign of a negative result that "
          "rounds to zero") {
  // Regression (AVX2, fixed): Emitter<Round> half_away_from_zero computes t = trunc(x) and
  // then t + (s & mask) with s = copysign(1, x). Where |x - t| < 0.5 the masked addend is
  // +0, and -0 + +0 = +0: Round(-0.3) and Round(-0.0) give +0 instead of -0 (std::round and
  // the reference give -0). AVX-512 adds under an opmask and is right.
  check_values(ir::Round{ir::RoundMode::half_away_from_zero}, {-0.3, -0.0, -0.4999999},
               {-0.0, -0.0, -0.0});
}

TEST_CASE("jit eltwise: Round rounds ties to even or away from zero as its mode says") {
  const std::vector<double> in = {0.5,  1.5, 2.5,       -0.5,       -1.5,      -2.5, 0.4999999,
                                  -3.7, 3.7, 8388607.5, -8388607.5, 4194302.5, qnan, inf};
  check_values(ir::Round{ir::RoundMode::half_to_even}, in,
               {0, 2, 2, -0.0, -2, -2, 0, -4, 4, 8388608, -8388608, 4194302, qnan, inf});
  check_values(ir::Round{ir::RoundMode::half_away_from_zero}, in,
               {1, 2, 3, -1, -2, -3, 0, -4, 4, 8388608, -8388608, 4194303, qnan, inf});
}

TEST_CASE("jit eltwise: a Result fed by a Parameter copies it, and an input used twice is read "
          "once per element") {
  std::uint64_t seed = 900;
  for (const Shape& s : sweep_shapes()) {
    INFO("shape = " << s.to_string());
    Graph g;
    g.result(g.parameter(f32, s));
    check_jit(g, {make_tensor(s, ++seed)}, {.threads = {1, 3}});
    Graph h;
    const auto x = h.parameter(f32, s);
    h.result(h.subtract(h.multiply(x, x), x));
    check_jit(h, {make_tensor(s, ++seed)},
              {.threads = {1, 3}, .fma = false, .round_each_node = true});
  }
}

TEST_CASE("jit eltwise: Maximum, Minimum, Relu and Clamp propagate NaN from either operand") {
  const std::vector<double> a = {qnan, 1, qnan, -inf, inf, qnan, 0, -5, 2};
  const std::vector<double> b = {1, qnan, qnan, qnan, qnan, -inf, 0, 7, -2};
  const Shape s{Dim(a.size())};
  const Tensor ta = Tensor::from_values(f32, s, a), tb = Tensor::from_values(f32, s, b);
  auto nan_where_either = [&](const Tensor& out) {
    for (std::size_t i = 0; i < a.size(); ++i) {
      INFO("element " << i << ": " << a[i] << ", " << b[i] << " -> " << out.at(i));
      CHECK(std::isnan(out.at(i)) == (std::isnan(a[i]) || std::isnan(b[i])));
    }
  };
  for_each_isa([&](x64::Isa isa) {
    for (int max = 0; max < 2; ++max) {
      Graph g;
      const auto x = g.parameter(f32, s), y = g.parameter(f32, s);
      g.result(max ? g.maximum(x, y) : g.minimum(x, y));
      nan_where_either(compile(g, {.isa = isa}).run({ta, tb}).at(0));
    }
    Graph g;
    const auto x = g.parameter(f32, s);
    g.result(g.relu(x));
    g.result(g.clamp(x, -1, 1));
    for (const Tensor& out : compile(g, {.isa = isa}).run({ta}))
      for (std::size_t i = 0; i < a.size(); ++i) CHECK(std::isnan(out.at(i)) == std::isnan(a[i]));
  });
}

TEST_CASE("jit eltwise: PowerStatic with exponents 0, 1, 2, -1 and 0.5 is bit-exact") {
  // one f32 rounding each: 1, x, x*x, 1/x, sqrt(x)
  for (double e : {0.0, 1.0, 2.0, -1.0}) {
    INFO("exponent = " << e);
    check_unary(ir::PowerStatic{e}, exact);
  }
  check_unary(ir::PowerStatic{0.5}, exact, Pattern::positive);
  check_unary(ir::PowerStatic{0.5}, exact);
}

TEST_CASE("jit eltwise: PowerStatic with exponents 3, 1.5 and -2 is within 4 ulp") {
  for (double e : {3.0, 1.5, -2.0}) {
    INFO("exponent = " << e);
    check_unary(ir::PowerStatic{e}, approx, Pattern::finite);
  }
  // with NaN, infinities, huge and denormal inputs
  for (double e : {3.0, 1.5, -2.0}) {
    INFO("exponent = " << e);
    check_unary(ir::PowerStatic{e}, approx);
  }
}

TEST_CASE(
    "jit eltwise: PowerStatic with exponents 0.5 and 1.5 follows pow, not sqrt, at -0 and -inf") {
  // Regression (both ISAs, fixed): Emitter<PowerStatic> computes x ** 0.5 (and the half of
  // x ** 1.5) as vsqrtps(x). IEEE pow(x, 0.5) differs from sqrt(x) at -0 (pow: +0, sqrt: -0)
  // and at -inf (pow: +inf, sqrt: NaN); the reference (std::pow) gives +0 and +inf, and
  // pow(-inf, 1.5) = +inf where the kernel computes -inf * NaN = NaN.
  check_values(ir::PowerStatic{0.5}, {-0.0, -inf, 4}, {0.0, inf, 2});
  check_values(ir::PowerStatic{1.5}, {-0.0, -inf, 4}, {0.0, inf, 8});
}

TEST_CASE("jit eltwise: HSwish, HSigmoid and SoftSign are within 4 ulp on every tail length") {
  check_unary(ir::HSwish{}, approx);
  check_unary(ir::HSigmoid{}, approx);
  check_unary(ir::SoftSign{}, approx);
}

TEST_CASE("jit eltwise: comparisons feeding Select are bit-exact, NaN and equal operands "
          "included") {
  check_comparison(ir::Equal{});
  check_comparison(ir::NotEqual{});
  check_comparison(ir::Greater{});
  check_comparison(ir::GreaterEqual{});
  check_comparison(ir::Less{});
  check_comparison(ir::LessEqual{});
}

TEST_CASE("jit eltwise: Select picks its second or third input by a computed condition") {
  std::uint64_t seed = 400;
  for (const Shape& s : sweep_shapes()) {
    INFO("shape = " << s.to_string());
    Graph g;
    const auto c = g.parameter(f32, s), a = g.parameter(f32, s), b = g.parameter(f32, s);
    g.result(g.select(g.greater(c, g.scalar(f32, 0.5)), a, b));
    check_jit(g, {make_tensor(s, ++seed), make_tensor(s, ++seed), make_tensor(s, ++seed)},
              {.threads = {1, 3}});
    // Scalars as the selected values
    Graph k;
    const auto y = k.parameter(f32, s);
    k.result(k.select(k.less_equal(y, k.scalar(f32, 0)), k.scalar(f32, -1.5), y));
    check_jit(k, {make_tensor(s, ++seed)}, {.threads = {1, 3}});
  }
}

TEST_CASE("jit eltwise: LogicalAnd, LogicalOr, LogicalXor and LogicalNot of comparisons are "
          "bit-exact") {
  using Build = std::function<ir::Value(Graph&, ir::Value, ir::Value, ir::Value)>;
  const std::pair<const char*, Build> cases[] = {
      {"and", [](Graph& g, auto a, auto b,
                 auto c) { return g.logical_and(g.greater(a, b), g.less(b, c)); }},
      {"or", [](Graph& g, auto a, auto b,
                auto c) { return g.logical_or(g.greater(a, b), g.less_equal(b, c)); }},
      {"xor", [](Graph& g, auto a, auto b,
                 auto c) { return g.logical_xor(g.greater_equal(a, b), g.not_equal(a, c)); }},
      {"not", [](Graph& g, auto a, auto b, auto) { return g.logical_not(g.less(a, b)); }},
      {"not(and)", [](Graph& g, auto a, auto b, auto c) {
         return g.logical_not(g.logical_and(g.equal(a, b), g.less(c, a)));
       }}};
  for (const auto& [name, build] : cases) {
    INFO("logical = " << name);
    std::uint64_t seed = 500;
    for (const Shape& s : sweep_shapes()) {
      INFO("shape = " << s.to_string());
      Graph g;
      const auto a = g.parameter(f32, s), b = g.parameter(f32, s), c = g.parameter(f32, s);
      g.result(g.select(build(g, a, b, c), a, c));
      const Tensor ta = make_tensor(s, ++seed);
      check_jit(g, {ta, share_values(ta, make_tensor(s, ++seed)), make_tensor(s, ++seed)},
                {.threads = {1, 3}});
    }
  }
}

TEST_CASE("jit eltwise: Multiply feeding Add becomes an FMA within 4 ulp of the reference") {
  std::uint64_t seed = 600;
  for (const Shape& s : sweep_shapes()) {
    INFO("shape = " << s.to_string());
    for (int variant = 0; variant < 3; ++variant) {
      INFO("variant = " << variant);
      Graph g;
      const auto a = g.parameter(f32, s), b = g.parameter(f32, s), c = g.parameter(f32, s);
      if (variant == 0) g.result(g.add(g.multiply(a, b), c));
      if (variant == 1) g.result(g.add(c, g.multiply(a, b)));
      if (variant == 2) g.result(g.add(g.multiply(a, a), a));
      check_jit(g, {make_tensor(s, ++seed), make_tensor(s, ++seed), make_tensor(s, ++seed)},
                {.tol = approx, .threads = {1, 3}});
    }
    // both operands of the Add are Multiplies: one contracts, the other rounds on its own;
    // positive inputs, so no cancellation can magnify that rounding beyond 4 ulp
    Graph g;
    const auto a = g.parameter(f32, s), b = g.parameter(f32, s);
    g.result(g.add(g.multiply(a, b), g.multiply(b, b)));
    check_jit(
        g, {make_tensor(s, ++seed, Pattern::positive), make_tensor(s, ++seed, Pattern::positive)},
        {.tol = approx, .threads = {1, 3}});
  }
}

TEST_CASE("jit eltwise: the FMA rounds once, so a*b - round(a*b) keeps the low bits") {
  // a = b = 1 + 2^-12: a*b = 1 + 2^-11 + 2^-24 exactly, which f32 rounds to 1 + 2^-11 (a tie
  // to even). With c = -(1 + 2^-11) one rounding gives 2^-24, two roundings give 0.
  const double a = 1 + std::ldexp(1, -12), c = -(1 + std::ldexp(1, -11));
  const Shape s{19};
  const Tensor ta = Tensor::from_values(f32, s, {a}), tc = Tensor::from_values(f32, s, {c});
  Graph g;
  const auto x = g.parameter(f32, s), y = g.parameter(f32, s), z = g.parameter(f32, s);
  g.result(g.add(g.multiply(x, y), z));
  for_each_isa([&](x64::Isa isa) {
    const auto fused = compile(g, {.isa = isa}).run({ta, ta, tc}).at(0);
    const auto unfused = compile(g, {.isa = isa, .fma = false}).run({ta, ta, tc}).at(0);
    for (std::size_t i = 0; i < fused.size(); ++i) {
      CHECK(fused.at(i) == std::ldexp(1, -24));
      CHECK(unfused.at(i) == 0);
    }
  });
}

TEST_CASE("jit eltwise: with fma = false, Multiply then Add matches a reference that rounds "
          "every node, bit for bit") {
  std::uint64_t seed = 700;
  for (const Shape& s : sweep_shapes()) {
    INFO("shape = " << s.to_string());
    Graph g;
    const auto a = g.parameter(f32, s), b = g.parameter(f32, s), c = g.parameter(f32, s);
    g.result(g.maximum(g.add(g.multiply(a, b), c), a));
    check_jit(g, {make_tensor(s, ++seed), make_tensor(s, ++seed), make_tensor(s, ++seed)},
              {.threads = {1, 3}, .fma = false, .round_each_node = true});
  }
}

TEST_CASE("jit eltwise: chains of fusable ops in one kernel match the reference") {
  // Bodies that keep many values alive at once, so register assignment and emitter scratch
  // registers are exercised together. FMA contraction is off so every node rounds like the
  // reference with round_each_node: the chain of exact ops must be bit-equal; the ops that
  // round more than once sit right before the output, where no later cancellation can
  // magnify their few ulps, and get the 4 ulp budget.
  std::uint64_t seed = 800;
  for (const Shape& s : {Shape{1}, Shape{17}, Shape{3, 33}, Shape{1000}}) {
    INFO("shape = " << s.to_string());
    const std::vector<Tensor> in = {make_tensor(s, ++seed), make_tensor(s, ++seed),
                                    make_tensor(s, ++seed)};
    for (int reciprocal = 0; reciprocal < 2; ++reciprocal) {
      Graph g;
      const auto a = g.parameter(f32, s), b = g.parameter(f32, s), c = g.parameter(f32, s);
      auto t = g.add(g.abs(a), g.negative(b));
      t = g.subtract(t, g.multiply(g.relu(c), g.scalar(f32, 0.25)));
      t = g.maximum(t, g.minimum(g.floor(a), g.ceiling(b)));
      t = g.divide(t, g.add(g.sqrt(g.abs(c)), g.scalar(f32, 1)));
      t = g.add(t, g.subtract(g.round(a, ir::RoundMode::half_to_even), g.floor(b)));
      t = g.select(g.logical_or(g.greater(a, b), g.logical_not(g.less(b, c))), t,
                   g.clamp(c, -2, 2));
      t = g.select(g.logical_xor(g.equal(a, c), g.less_equal(t, a)), t, g.negative(t));
      g.result(reciprocal ? g.power_static(t, -1.0) : t);
      check_jit(g, in, {.tol = exact, .threads = {1, 2}, .fma = false, .round_each_node = true});
    }
    {
      Graph g;
      const auto a = g.parameter(f32, s), b = g.parameter(f32, s), c = g.parameter(f32, s);
      g.result(g.maximum(g.maximum(g.hswish(a), g.softsign(c)),
                         g.minimum(g.hsigmoid(b), g.squared_difference(a, c))));
      check_jit(g, in, {.tol = approx, .threads = {1, 2}});
    }
    {
      Graph g;
      const auto b = g.parameter(f32, s);
      g.result(g.power_static(g.add(g.abs(b), g.scalar(f32, 1)), -2));
      check_jit(g, {in[1]}, {.tol = approx, .threads = {1, 2}});
    }
  }
}

TEST_CASE("jit eltwise: a three-input body of 40 ops with four Results compiles and matches the "
          "reference on both ISAs") {
  // Regression: the Linear IR follows Graph::topological_order() (Boost's reverse DFS
  // post-order), which computes independent branches early and keeps their values live; this
  // body needs 14 live vector values at the Load of its first input, more than AVX2's 13
  // allocatable registers, and compile() threw [snippets.compile.register_pressure] until
  // InsertRegSpills joined the default pipeline. It also has four Results, whose order the
  // kernel once mixed up.
  std::uint64_t seed = 850;
  for (const Shape& s : {Shape{17}, Shape{3, 33}, Shape{1000}}) {
    INFO("shape = " << s.to_string());
    Graph g;
    const auto a = g.parameter(f32, s), b = g.parameter(f32, s), c = g.parameter(f32, s);
    auto t = g.add(g.abs(a), g.negative(b));
    t = g.subtract(t, g.multiply(g.relu(c), g.scalar(f32, 0.25)));
    t = g.maximum(t, g.minimum(g.floor(a), g.ceiling(b)));
    t = g.divide(t, g.add(g.sqrt(g.abs(c)), g.scalar(f32, 1)));
    t = g.add(t, g.subtract(g.round(a, ir::RoundMode::half_away_from_zero),
                            g.round(b, ir::RoundMode::half_to_even)));
    t = g.select(g.logical_or(g.greater(a, b), g.logical_not(g.less(b, c))), t, g.clamp(c, -2, 2));
    t = g.select(g.logical_xor(g.equal(a, c), g.less_equal(t, a)), t, g.negative(t));
    g.result(t);
    g.result(g.power_static(g.add(g.abs(t), g.scalar(f32, 1)), -1.0));
    g.result(g.maximum(g.hswish(a), g.softsign(c)));
    g.result(g.minimum(g.hsigmoid(b), g.squared_difference(a, c)));
    check_jit(g, {make_tensor(s, ++seed), make_tensor(s, ++seed), make_tensor(s, ++seed)},
              {.threads = {1, 2},
               .fma = false,
               .round_each_node = true,
               .output_tol = {exact, exact, approx, approx}});
  }
}
