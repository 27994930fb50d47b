// SPDX-License-Identifier: Apache-2.0
// JIT accuracy of emitters/activation.hpp, emitters/arith.hpp and emitters/math.hpp: every
// transcendental and activation op, compiled for AVX2 and AVX-512, against the reference
// interpreter (double precision, rounded once to f32) on a sweep of the whole f32 range:
// every 4096th f32 bit pattern (2^20 values: all exponents of both signs, subnormals,
// infinities, NaNs), 2^18 points spread over the op's working range, the f32 special values
// (+-0, +-subnormal min/max, +-FLT_MIN, +-FLT_MAX, +-inf, NaN) and the op's overflow,
// underflow and branch thresholds with three f32 neighbours on each side. Binary ops sweep
// 2^20 pairs of bit patterns plus dense pairs where their semantics are decided.
//
// Each op asserts the bound that docs/math_accuracy.md states (ulp against the reference
// rounded to f32, or an absolute error for results near zero where that is the bound) and
// prints (MESSAGE) what it measured per ISA: the largest ulp error (for the ops bounded by
// "ulp or absolute": the largest ulp error where |y| >= 1e-3 and the largest absolute error).
#include "jit_test_util.hpp"

using namespace snippets;
using namespace snippets::jit_test;

namespace {

struct Bound {
  std::int64_t ulp;
  double abs = 0;
};

std::vector<double> unary_inputs(double lo, double hi, std::initializer_list<double> thresholds,
                                 std::uint64_t seed) {
  std::vector<double> v = bit_pattern_sweep(4096);
  Rng rng(seed);
  for (int i = 0; i < (1 << 18); ++i) v.push_back(rng.uniform(lo, hi));
  for (double s : f32_specials()) v.push_back(s);
  for (double t : thresholds) {
    add_neighbours(v, t);
    add_neighbours(v, -t);
  }
  return v;
}

void report(const std::string& label, x64::Isa isa, const AccuracyStats& st, Bound b) {
  if (b.abs > 0)
    MESSAGE(label << " [" << x64::to_string(isa) << "]: max " << st.max_ulp_large
                  << " ulp where |y| >= 1e-3, max absolute error " << st.max_abs << "; bound "
                  << b.ulp << " ulp or " << b.abs << " absolute");
  else
    MESSAGE(label << " [" << x64::to_string(isa) << "]: max " << st.max_ulp << " ulp; bound "
                  << b.ulp << " ulp");
}

/// Compiles `g` (inputs `in`) for every ISA and checks its single output against the
/// reference within `bound`.
void check_accuracy(const std::string& label, const Graph& g, const std::vector<Tensor>& in,
                    Bound bound, Accuracy tier = Accuracy::standard) {
  const Tensor want = reference::evaluate(g, std::span<const Tensor>(in))[0];
  for_each_isa([&](x64::Isa isa) {
    const Tensor got =
        compile(g, {.isa = isa, .accuracy = tier}).run(std::span<const Tensor>(in)).at(0);
    const AccuracyStats st = measure_accuracy(got, want, {bound.ulp, bound.abs});
    report(label, isa, st, bound);
    CHECK_MESSAGE(st.bad == 0, label << ": " << st.report);
  });
}

template <class Tag>
void check_unary(const std::string& label, Tag tag, Bound bound, const std::vector<double>& in,
                 Accuracy tier = Accuracy::standard) {
  INFO("op = " << label);
  const Shape s{Dim(in.size())};
  Graph g;
  g.result(g.apply(tag, g.parameter(f32, s)));
  check_accuracy(label, g, {Tensor::from_values(f32, s, in)}, bound, tier);
}

using Pairs = std::pair<std::vector<double>, std::vector<double>>;

/// 2^20 pairs of bit patterns (every 2^22-th pattern against every 2^22-th, offset so both
/// signs and subnormals appear on both sides) and every pair of f32 specials plus `extra`.
Pairs binary_inputs(const std::vector<double>& extra) {
  Pairs p;
  const std::vector<double> a = bit_pattern_sweep(std::uint64_t{1} << 22);
  std::vector<double> b;
  for (std::uint64_t k = 0; k < (std::uint64_t{1} << 32); k += std::uint64_t{1} << 22)
    b.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(k + 0x1234567)));
  for (double x : a)
    for (double y : b) {
      p.first.push_back(x);
      p.second.push_back(y);
    }
  std::vector<double> sp = f32_specials();
  sp.insert(sp.end(), extra.begin(), extra.end());
  for (double x : sp)
    for (double y : sp) {
      p.first.push_back(x);
      p.second.push_back(y);
    }
  return p;
}

template <class Tag> void check_binary(const std::string& label, Tag tag, Bound bound, Pairs in) {
  INFO("op = " << label);
  const Shape s{Dim(in.first.size())};
  Graph g;
  const auto a = g.parameter(f32, s), b = g.parameter(f32, s); // in this order
  g.result(g.apply(tag, a, b));
  check_accuracy(label, g,
                 {Tensor::from_values(f32, s, in.first), Tensor::from_values(f32, s, in.second)},
                 bound);
}

} // namespace

TEST_CASE("jit math accuracy: Exp is within 2 ulp on the whole f32 range, subnormal results "
          "included") {
  // overflow at ln(FLT_MAX), subnormal results below ln(FLT_MIN), zero below ln(2^-150)
  check_unary("Exp", ir::Exp{}, {2},
              unary_inputs(
                  -105, 90,
                  {88.72283935546875, 87.33654475, 103.27892990343, 103.972, 0.34657359, 1e-7}, 1));
}

TEST_CASE("jit math accuracy: Exp{nonpositive} (Softmax's x - max) is within 2 ulp for x <= 0") {
  // the promise covers x <= 0 and NaN: the sweep's positive values are left out
  std::vector<double> in;
  for (double x :
       unary_inputs(-105, 0, {87.33654475, 103.27892990343, 103.972, 0.34657359, 1e-7}, 11))
    if (!(x > 0)) in.push_back(x);
  check_unary("Exp{nonpositive}", ir::Exp{.nonpositive = true}, {2}, in);
}

TEST_CASE("jit math accuracy: Log is within 2 ulp on the whole f32 range, subnormal inputs "
          "included") {
  auto in = unary_inputs(0, 4, {1, 0.75, 1.5, 0.5, 2, 1e-38, 1e-44, 3e38}, 2);
  Rng rng(3);
  for (int i = 0; i < (1 << 16); ++i) in.push_back(rng.uniform(0.99, 1.01));
  check_unary("Log", ir::Log{}, {2}, in);
}

TEST_CASE("jit math accuracy: Sigmoid is within 2 ulp, exactly 0 and 1 far out") {
  check_unary("Sigmoid", ir::Sigmoid{}, {2},
              unary_inputs(-110, 30, {16.635532, 17.328680, 87.33654475, 103.972, 1e-7}, 4));
}

TEST_CASE("jit math accuracy: Tanh is within 2 ulp, exactly +-1 far out") {
  check_unary("Tanh", ir::Tanh{}, {2},
              unary_inputs(-10, 10, {9.010913, 10, 0.3466, 0.5493, 1e-4, 1e-20}, 5));
}

TEST_CASE("jit math accuracy: Erf is within 2 ulp") {
  check_unary("Erf", ir::Erf{}, {2}, unary_inputs(-4.5, 4.5, {0.875, 3.92, 3.8325, 1e-30}, 6));
}

TEST_CASE("jit math accuracy: Gelu in both forms is within 4 ulp or 1e-6 absolute") {
  const auto in = unary_inputs(-10, 10, {1.2374368, 5.5437, 1e-30}, 7);
  check_unary("Gelu(erf)", ir::Gelu{ir::GeluApproximation::erf}, {4, 1e-6}, in);
  check_unary("Gelu(tanh)", ir::Gelu{ir::GeluApproximation::tanh}, {4, 1e-6}, in);
}

TEST_CASE("jit math accuracy: Swish is within 4 ulp or 1e-6 absolute for several betas") {
  const auto in = unary_inputs(-40, 40, {16.635532, 87.33654475, 103.972}, 8);
  for (double beta : {1.0, 0.5, 1.702, 2.0, 0.1, -0.75}) {
    INFO("beta = " << beta);
    check_unary("Swish(beta=" + ir::detail::format_number(beta) + ")", ir::Swish{beta}, {4, 1e-6},
                in);
  }
}

TEST_CASE("jit math accuracy: Mish, Elu and SoftPlus are within their stated bounds") {
  check_unary("Mish", ir::Mish{}, {4},
              unary_inputs(-120, 30, {20, 87.33654475, 91.8, 103.972, 108.6, 110, 1e-20}, 9));
  const auto elu_in = unary_inputs(-25, 5, {17.33, 20, 0.3466, 1e-20}, 10);
  for (double alpha : {1.0, 0.1, 2.5, -0.5}) {
    INFO("alpha = " << alpha);
    check_unary("Elu(alpha=" + ir::detail::format_number(alpha) + ")", ir::Elu{alpha}, {2}, elu_in);
  }
  check_unary("SoftPlus", ir::SoftPlus{}, {2},
              unary_inputs(-110, 30, {0.6931, 16.635532, 87.33654475, 103.972, 1e-20}, 11));
}

TEST_CASE("jit math accuracy: the relaxed tier keeps exp-based ops within 128 ulp (1.5e-5 "
          "relative at most) or 1e-6 absolute, special values as in the standard tier") {
  // CompileOptions::accuracy = relaxed: the degree-4 exp polynomial (docs/math_accuracy.md)
  const Bound relaxed{128, 1e-6};
  const auto r = Accuracy::relaxed;
  check_unary("relaxed Exp", ir::Exp{}, relaxed,
              unary_inputs(-105, 90, {88.72283935546875, 87.33654475, 103.972, 1e-7}, 21), r);
  check_unary("relaxed Sigmoid", ir::Sigmoid{}, relaxed,
              unary_inputs(-110, 30, {16.635532, 17.328680, 87.33654475, 103.972, 1e-7}, 22), r);
  check_unary("relaxed Tanh", ir::Tanh{}, relaxed,
              unary_inputs(-10, 10, {9.010913, 10, 0.3466, 0.5493, 1e-4, 1e-20}, 23), r);
  const auto gelu_in = unary_inputs(-10, 10, {1.2374368, 5.5437, 1e-30}, 24);
  check_unary("relaxed Gelu(tanh)", ir::Gelu{ir::GeluApproximation::tanh}, relaxed, gelu_in, r);
  check_unary("relaxed Gelu(erf)", ir::Gelu{ir::GeluApproximation::erf}, relaxed, gelu_in, r);
  const auto swish_in = unary_inputs(-40, 40, {16.635532, 87.33654475, 103.972}, 25);
  for (double beta : {1.0, 1.702, -0.75})
    check_unary("relaxed Swish(beta=" + ir::detail::format_number(beta) + ")", ir::Swish{beta},
                relaxed, swish_in, r);
  check_unary("relaxed Mish", ir::Mish{}, relaxed,
              unary_inputs(-120, 30, {20, 87.33654475, 91.8, 103.972, 108.6, 110, 1e-20}, 26), r);
  check_unary("relaxed Elu", ir::Elu{1.0}, relaxed,
              unary_inputs(-25, 5, {17.33, 20, 0.3466, 1e-20}, 27), r);
  check_unary("relaxed SoftPlus", ir::SoftPlus{}, relaxed,
              unary_inputs(-110, 30, {0.6931, 16.635532, 87.33654475, 103.972, 1e-20}, 28), r);
}

TEST_CASE("jit math accuracy: the relaxed tier divides by a divisor shared along the row "
          "through its reciprocal, within 2 ulp, special values as x / b") {
  // MultiplyByReciprocal: x * RN(1/b), b the same along a row. Divisors in [2^-125, 2^125]
  // (whose reciprocal is a normal number), 0, inf and NaN; rows of the whole f32 range.
  std::vector<double> row = bit_pattern_sweep(std::uint64_t{1} << 20);
  for (double s : f32_specials()) row.push_back(s);
  std::vector<double> divisors = {0.0,
                                  -0.0,
                                  1.0,
                                  -3.0,
                                  768.0,
                                  0.1,
                                  1e-30,
                                  -1e30,
                                  0x1p-125,
                                  0x1p125,
                                  std::numeric_limits<double>::infinity(),
                                  -std::numeric_limits<double>::infinity(),
                                  std::numeric_limits<double>::quiet_NaN()};
  Rng rng(31);
  for (int i = 0; i < 24; ++i)
    divisors.push_back((i % 2 ? -1 : 1) * std::exp2(rng.uniform(-125, 125)));
  std::vector<double> a, b;
  for (double d : divisors) {
    a.insert(a.end(), row.begin(), row.end());
    b.push_back(d);
  }
  const Dim rows = Dim(divisors.size()), cols = Dim(row.size());
  Graph g;
  const auto x = g.parameter(f32, {rows, cols}), y = g.parameter(f32, {rows, 1});
  g.result(g.divide(x, y));
  check_accuracy(
      "relaxed Divide by a row's divisor", g,
      {Tensor::from_values(f32, {rows, cols}, a), Tensor::from_values(f32, {rows, 1}, b)}, {2},
      Accuracy::relaxed);
}

TEST_CASE("jit math accuracy: exp-based ops kept as bf16 or f16 are within 1 ulp of that type "
          "from the reference (shorter polynomial)") {
  // A result whose every consumer stores or converts it to bf16 (f16) needs 8 (11) significand
  // bits and gets the degree-4 exp polynomial (EmitContext::result_bits). Against the reference
  // rounded to that type the bound is 1 ulp of it (2^16 or 2^13 f32 ulps; Gelu: or 1e-6
  // absolute; f16: or its subnormal step, 2^-24); the MESSAGE gives how many results are not the
  // reference's and how many differ from the f32 kernel's result rounded (nonzero: the shorter
  // polynomial ran). A Convert inside the kernel counts like a Store of that type; a value that
  // also has an f32 consumer keeps the full polynomial.
  const auto in = unary_inputs(-110, 30, {16.635532, 87.33654475, 103.972, 3.92, 1e-7}, 16);
  const Shape s{Dim(in.size())};
  const std::vector<Tensor> x{Tensor::from_values(f32, s, in)};
  const auto check = [&]<class Tag>(const std::string& label, Tag tag, bool must_change, double abs,
                                    ElementType narrow_type) {
    const int bits = narrow_type == ElementType::bf16 ? 8 : 11;
    const std::string kept(to_string(narrow_type));
    INFO("op = " << label << " kept as " << kept);
    if (narrow_type == ElementType::f16) abs = std::max(abs, 0x1p-24);
    Graph narrow, inner, wide, both;
    narrow.result(narrow.convert(narrow.apply(tag, narrow.parameter(f32, s)), narrow_type));
    const auto rounded = inner.convert(inner.apply(tag, inner.parameter(f32, s)), narrow_type);
    inner.result(inner.multiply(inner.convert(rounded, f32), inner.scalar(f32, 1.0)));
    wide.result(wide.apply(tag, wide.parameter(f32, s)));
    const auto y = both.apply(tag, both.parameter(f32, s));
    both.result(both.convert(y, narrow_type));
    both.result(y);
    const Tensor want = reference::evaluate(narrow, std::span<const Tensor>(x))[0];
    for_each_isa([&](x64::Isa isa) {
      const Tensor got = compile(narrow, {.isa = isa}).run(std::span<const Tensor>(x)).at(0);
      const Tensor full = compile(wide, {.isa = isa}).run(std::span<const Tensor>(x)).at(0);
      const Tensor widened = compile(inner, {.isa = isa}).run(std::span<const Tensor>(x)).at(0);
      CHECK(compare(widened, Tensor::from_values(f32, s, got.values().v), exact).empty());
      const auto two = compile(both, {.isa = isa}).run(std::span<const Tensor>(x));
      CHECK(compare(two.at(1), full, exact).empty()); // the f32 consumer: the full polynomial
      const AccuracyStats st = measure_accuracy(got, want, {1 << (24 - bits), abs});
      std::size_t off = 0, changed = 0, not_rounded = 0;
      for (std::size_t i = 0; i < got.size(); ++i) {
        const float g = as_float(got.at(i)), rounded = as_float(two[0].at(i));
        not_rounded +=
            !close_enough(rounded, float(round_to(narrow_type, full.at(i))), exact_any_zero);
        off += !close_enough(g, as_float(want.at(i)), exact_any_zero);
        changed += !close_enough(g, rounded, exact_any_zero);
      }
      CHECK(not_rounded == 0); // the narrow output beside the f32 one is that one rounded
      MESSAGE(label << " stored as " << kept << " [" << x64::to_string(isa) << "]: max "
                    << ((abs > 0 ? st.max_ulp_large : st.max_ulp) >> (24 - bits)) << " " << kept
                    << " ulp" << std::string(abs > 0 ? " where |y| >= 1e-3" : "") << "; " << off
                    << " of " << got.size() << " not the reference's, " << changed
                    << " not the f32 kernel's");
      CHECK_MESSAGE(st.bad == 0, label << ": " << st.report);
      if (must_change) CHECK(changed > 0);
      // the code map says which emitters were told (debug::disassemble prints it)
      const auto told = [&](const Graph& g) {
        const CompiledKernel k = compile(g, {.isa = isa, .debug = {.code_map = true}});
        for (const debug::CodeRecord& r : k.kernel_code().map->records)
          if (r.emitter.ends_with(", result needs " + std::to_string(bits) + " bits")) return true;
        return false;
      };
      CHECK(told(narrow));
      CHECK_FALSE(told(wide));
      CHECK_FALSE(told(both));
    });
  };
  for (const ElementType t : {ElementType::bf16, ElementType::f16}) {
    check("Exp", ir::Exp{}, true, 0, t);
    check("Sigmoid", ir::Sigmoid{}, true, 0, t);
    check("Swish", ir::Swish{}, t == ElementType::bf16, 0, t);
    // Gelu's bound near zero is absolute, as in f32 (its negative tail is tiny)
    check("Gelu(tanh)", ir::Gelu{ir::GeluApproximation::tanh}, false, 1e-6, t);
    check("Gelu(erf)", ir::Gelu{ir::GeluApproximation::erf}, false, 1e-6, t);
    check("Erf", ir::Erf{}, false, 0, t);
    check("SoftPlus", ir::SoftPlus{}, false, 0, t);
    check("Mish", ir::Mish{}, false, 0, t);
  }
}

TEST_CASE("jit math accuracy: LeakyRelu rounds alpha * x once and keeps x elsewhere") {
  const auto in = unary_inputs(-10, 10, {1e-38, 1e-44}, 12);
  for (double alpha : {0.01, 0.2, 1.0 / 3, -0.5, 0.0}) {
    INFO("alpha = " << alpha);
    check_unary("LeakyRelu(alpha=" + ir::detail::format_number(alpha) + ")", ir::LeakyRelu{alpha},
                {1}, in);
  }
}

TEST_CASE("jit math accuracy: HSwish, HSigmoid and SoftSign are within 4 ulp over the whole "
          "f32 range") {
  // a few f32 roundings each (the bound of their tests in test_jit_eltwise.cpp); HSwish divides
  // before it multiplies, so x near FLT_MAX does not overflow
  const auto in = unary_inputs(-8, 8, {3, 6, 1e-38, 5.67e37, 3.4e38}, 13);
  check_unary("HSwish", ir::HSwish{}, {4}, in);
  check_unary("HSigmoid", ir::HSigmoid{}, {4}, in);
  check_unary("SoftSign", ir::SoftSign{}, {4}, in);
}

TEST_CASE("jit math accuracy: Power follows pow within 1 ulp, negative bases and specials "
          "included") {
  Pairs p = binary_inputs({1, -1, 0.5, -0.5, 2, -2, 3, -3, 2.5, -2.5, 1e10, -1e10, 16777217,
                           -16777217, 2147483648.0, 1e-3, 127.9});
  Rng rng(14);
  for (int i = 0; i < (1 << 17); ++i) { // the working range
    p.first.push_back(rng.uniform(0, 4));
    p.second.push_back(rng.uniform(-40, 40));
  }
  for (int i = 0; i < (1 << 16); ++i) { // negative bases with integer exponents
    p.first.push_back(rng.uniform(-4, 0));
    p.second.push_back(double(rng.integer(-60, 60)));
  }
  for (int i = 0; i < (1 << 15); ++i) { // near 1 with large exponents, near over/underflow
    p.first.push_back(rng.uniform(0.999, 1.001));
    p.second.push_back(rng.uniform(-90000, 90000));
  }
  check_binary("Power", ir::Power{}, {1}, std::move(p));
}

TEST_CASE("jit math accuracy: Mod and FloorMod are exact, huge quotients included") {
  Pairs p = binary_inputs({1, -1, 3, -3, 0.1, -0.1, 1e30, -1e30, 1e-30, 7.5, -7.5});
  Rng rng(15);
  for (int i = 0; i < (1 << 17); ++i) { // any magnitude ratio up to 2^277
    const double a = std::exp(rng.uniform(-103, 88)), b = std::exp(rng.uniform(-103, 88));
    p.first.push_back(rng.next() & 1 ? a : -a);
    p.second.push_back(rng.next() & 1 ? b : -b);
  }
  for (int i = 0; i < (1 << 16); ++i) { // near-multiples: off-by-one quotients
    const double b = rng.uniform(-10, 10);
    p.first.push_back(double(float(b * double(rng.integer(-1000000, 1000000)))));
    p.second.push_back(b);
  }
  check_binary("Mod", ir::Mod{}, {0}, p);
  check_binary("FloorMod", ir::FloorMod{}, {0}, std::move(p));
}
