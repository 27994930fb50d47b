// SPDX-License-Identifier: Apache-2.0
// JIT tests of emitters/activation.hpp and emitters/arith.hpp beyond accuracy: special values
// checked by hand (IEEE and C's pow/fmod rules, the sign of zero), exactness of Mod at huge
// quotients, Convert chains inside an f32 kernel, attribute checks (supports()), and the new
// ops fused with each other and with the elementwise ops in one kernel on every tail length
// (1, 7, 15, 17, 31, 33) and with NUMPY broadcasting, on both ISAs.
#include "arith_special_cases.hpp"
#include "jit_test_util.hpp"

using namespace snippets;
using namespace snippets::jit_test;

namespace {

using arith_cases::dmin_;
using arith_cases::fmax_;
using arith_cases::mod_special_pairs;
using arith_cases::power_special_cases;

/// Runs the one-input graph `g` on `in` for every ISA and checks the output bit for bit
/// against `want` (NaN matches NaN; the sign of zero counts).
void check_values(const Graph& g, const std::vector<double>& in, const std::vector<double>& want,
                  Tolerance tol = exact) {
  const Shape s{static_cast<Dim>(in.size())};
  const Tensor x = Tensor::from_values(f32, s, in);
  const Tensor expected = Tensor::from_values(f32, s, want);
  for_each_isa([&](x64::Isa isa) {
    const auto out = compile(g, {.isa = isa}).run({x});
    const std::string report = compare(out.at(0), expected, tol);
    CHECK_MESSAGE(report.empty(), report);
  });
}

template <class Tag>
void check_unary_values(Tag tag, const std::vector<double>& in, const std::vector<double>& want,
                        Tolerance tol = exact) {
  INFO("op = " << Tag::name);
  Graph g;
  g.result(g.apply(tag, g.parameter(f32, {Dim(in.size())})));
  check_values(g, in, want, tol);
}

/// Binary op on pairs, checked bit for bit against `want`.
template <class Tag>
void check_binary_values(Tag tag, const std::vector<double>& a, const std::vector<double>& b,
                         const std::vector<double>& want) {
  INFO("op = " << Tag::name);
  const Shape s{Dim(a.size())};
  Graph g;
  const auto x = g.parameter(f32, s), y = g.parameter(f32, s);
  g.result(g.apply(tag, x, y));
  const Tensor ta = Tensor::from_values(f32, s, a), tb = Tensor::from_values(f32, s, b);
  const Tensor expected = Tensor::from_values(f32, s, want);
  for_each_isa([&](x64::Isa isa) {
    const auto out = compile(g, {.isa = isa}).run({ta, tb});
    const std::string report = compare(out.at(0), expected, exact);
    CHECK_MESSAGE(report.empty(), report);
  });
}

} // namespace

TEST_CASE("jit math ops: every new op is fusable on x64 and rejects the attributes it cannot "
          "honour") {
  static_assert(x64::Traits::fusable<ir::Exp>);
  static_assert(x64::Traits::fusable<ir::Log>);
  static_assert(x64::Traits::fusable<ir::Sigmoid>);
  static_assert(x64::Traits::fusable<ir::Tanh>);
  static_assert(x64::Traits::fusable<ir::Erf>);
  static_assert(x64::Traits::fusable<ir::Gelu>);
  static_assert(x64::Traits::fusable<ir::Swish>);
  static_assert(x64::Traits::fusable<ir::Mish>);
  static_assert(x64::Traits::fusable<ir::Elu>);
  static_assert(x64::Traits::fusable<ir::SoftPlus>);
  static_assert(x64::Traits::fusable<ir::LeakyRelu>);
  static_assert(x64::Traits::fusable<ir::PRelu>);
  static_assert(x64::Traits::fusable<ir::Power>);
  static_assert(x64::Traits::fusable<ir::Mod>);
  static_assert(x64::Traits::fusable<ir::FloorMod>);
  static_assert(x64::Traits::fusable<ir::Convert>);
  // emitters declare at most four scratch registers
  static_assert(x64::Emitter<ir::Mish>::scratch <= 4);
  static_assert(x64::Emitter<ir::Power>::scratch <= 4);
  static_assert(x64::Emitter<ir::Mod>::scratch <= 4);
  for (const double bad : {inf, -inf, qnan, 1e39}) {
    INFO("attribute = " << bad);
    for (int op = 0; op < 3; ++op) {
      Graph g;
      const auto x = g.parameter(f32, {8});
      g.result(op == 0 ? g.swish(x, bad) : op == 1 ? g.elu(x, bad) : g.leaky_relu(x, bad));
      CHECK(error_id([&] { compile(g); }) == "snippets.compile.unsupported_attribute");
    }
  }
}

TEST_CASE("jit math ops: LeakyRelu prints its alpha and defaults to 0.01") {
  Graph g;
  g.result(g.leaky_relu(g.parameter(f32, {2}, "x"), 0.25));
  CHECK(ir::to_string(g).find("LeakyRelu 'LeakyRelu_1'(%0:0) {alpha=0.25} -> f32[2]") !=
        std::string::npos);
  CHECK(ir::LeakyRelu{}.alpha == 0.01);
  CHECK(reference::formula(ir::LeakyRelu{0.5}, -2.0) == -1.0);
  CHECK(std::signbit(reference::formula(ir::LeakyRelu{0.5}, -0.0)));
  CHECK(std::isnan(reference::formula(ir::LeakyRelu{0.5}, qnan)));
}

TEST_CASE("jit math ops: PRelu with a scalar, a per-channel and a full slope is bit-exact") {
  // specials in x and in the slope: -0 and NaN keep x, -inf * a negative slope is +inf
  std::vector<double> xs = specials(), slopes = specials();
  const Dim n = static_cast<Dim>(xs.size());
  for (Dim i = 0; i < n; ++i) slopes[static_cast<std::size_t>(i)] = xs[(i * 7 + 3) % xs.size()];
  {
    Graph g;
    g.result(g.prelu(g.parameter(f32, {n}, "x"), g.parameter(f32, {n}, "slope")));
    check_jit(g, {Tensor::from_values(f32, {n}, xs), Tensor::from_values(f32, {n}, slopes)},
              {.tol = exact, .threads = {1, 2}});
  }
  for (const Shape& x_shape : {Shape{1, 3, 5, 7}, Shape{2, 17, 3, 33}, Shape{4, 1, 1, 15}}) {
    INFO("x " << x_shape.to_string());
    const Dim channels = x_shape[1];
    for (const Shape& slope_shape : {Shape{1}, Shape{channels}, Shape{channels, 1, 1}}) {
      INFO("slope " << slope_shape.to_string());
      Graph g;
      const auto x = g.parameter(f32, x_shape, "x");
      g.result(g.prelu(x, g.parameter(f32, slope_shape, "slope")));
      check_jit(g, {make_tensor(x_shape, 11), make_tensor(slope_shape, 12)},
                {.tol = exact, .threads = {1, 2}});
    }
  }
}

TEST_CASE("jit math ops: Exp and Log saturate and keep subnormals like libm") {
  check_unary_values(ir::Exp{},
                     {-inf, inf, qnan, 0.0, -0.0, 88.72283935546875, 88.72284, 89, -103.972, -104,
                      -87.33654475, -100},
                     {0, inf, qnan, 1, 1, std::exp(double(88.72283935546875f)), inf, inf, dmin_, 0,
                      std::exp(double(float(-87.33654475))), std::exp(-100.0)},
                     {1});
  check_unary_values(
      ir::Log{}, {0.0, -0.0, -1.0, -inf, inf, qnan, 1.0, dmin_, fmax_, -dmin_},
      {-inf, -inf, qnan, qnan, inf, qnan, 0.0, std::log(dmin_), std::log(fmax_), qnan}, {1});
}

TEST_CASE("jit math ops: Sigmoid, Tanh and Erf are exact at their limits and odd where they "
          "should be") {
  check_unary_values(ir::Sigmoid{}, {-inf, inf, qnan, 17.4, 30, -200, 0.0, -0.0},
                     {0, 1, qnan, 1, 1, 0, 0.5, 0.5});
  // tanh(-0) = -0 and tanh(+0) = +0 (the comparison is bitwise)
  check_unary_values(ir::Tanh{}, {-0.0, 0.0, -inf, inf, qnan, 9.1, -9.1, 20, -20, dmin_, -dmin_},
                     {-0.0, 0.0, -1, 1, qnan, 1, -1, 1, -1, dmin_, -dmin_});
  check_unary_values(ir::Erf{}, {-0.0, 0.0, -inf, inf, qnan, 4, -4, 1e30},
                     {-0.0, 0.0, -1, 1, qnan, 1, -1, 1});
}

TEST_CASE("jit math ops: Gelu, Swish, Mish, Elu and SoftPlus handle infinities, NaN and "
          "zeros like the reference") {
  const std::vector<double> in = {-inf, inf, qnan, 0.0, -0.0, 1e30, -1e30, dmin_, -dmin_};
  for (auto tag : {ir::Gelu{ir::GeluApproximation::erf}, ir::Gelu{ir::GeluApproximation::tanh}}) {
    Graph g;
    g.result(g.apply(tag, g.parameter(f32, {Dim(in.size())})));
    check_jit(g, {Tensor::from_values(f32, {Dim(in.size())}, in)}, {.tol = exact});
  }
  for (auto tag : {ir::Swish{1.0}, ir::Swish{1.702}, ir::Swish{-0.75}}) {
    INFO("beta = " << tag.beta);
    Graph g;
    g.result(g.apply(tag, g.parameter(f32, {Dim(in.size())})));
    check_jit(g, {Tensor::from_values(f32, {Dim(in.size())}, in)}, {.tol = {1}});
  }
  // mish(-inf) = -inf * tanh(0) = NaN; the tail x e^x underflows to -0 below about -108.6
  check_unary_values(ir::Mish{}, {-inf, inf, qnan, 0.0, -0.0, -200, -1e30, 1e30},
                     {qnan, inf, qnan, 0.0, -0.0, -0.0, -0.0, 1e30}, {4});
  check_unary_values(ir::Elu{1.0}, {-inf, inf, qnan, 0.0, -0.0, -30}, {-1, inf, qnan, 0, -0.0, -1});
  // a negative alpha flips the sign of the zeros too: alpha * expm1(+-0)
  check_unary_values(ir::Elu{-0.5}, {0.0, -0.0, -inf}, {-0.0, 0.0, 0.5});
  check_unary_values(ir::SoftPlus{}, {-inf, inf, qnan, 0.0, 1e30, -200},
                     {0, inf, qnan, std::log(2.0), 1e30, std::exp(-200.0)}, {1});
  check_unary_values(ir::LeakyRelu{0.01}, {-0.0, 0.0, -inf, inf, qnan, -2},
                     {-0.0, 0.0, -inf, inf, qnan, -0.02});
}

TEST_CASE("jit math ops: Power follows C's pow at every special case") {
  std::vector<double> a, b, want;
  for (const auto& [x, y, r] : power_special_cases()) {
    a.push_back(x);
    b.push_back(y);
    want.push_back(r);
  }
  check_binary_values(ir::Power{}, a, b, want);
}

TEST_CASE("jit math ops: Mod and FloorMod are exact for huge quotients and give zeros the "
          "right sign") {
  std::vector<double> a, b, mod, floor_mod;
  for (const auto& [x, y] : mod_special_pairs()) {
    a.push_back(x);
    b.push_back(y);
    // in double: exact for f32 operands
    const double r = std::fmod(double(float(x)), double(float(y)));
    mod.push_back(r);
    floor_mod.push_back(reference::formula(ir::FloorMod{}, double(float(x)), double(float(y))));
  }
  check_binary_values(ir::Mod{}, a, b, mod);
  check_binary_values(ir::FloorMod{}, a, b, floor_mod);
}

TEST_CASE("jit math ops: Convert to i32 and back inside an f32 kernel truncates, saturates and "
          "maps NaN to 0") {
  // Parameter(f32) -> Convert(i32) -> Convert(f32) -> Result; 2^31 - 1 converts back to 2^31
  const std::vector<double> in = {2.7, -2.7, 0.5,   -0.5,     qnan,       inf,          -inf,
                                  3e9, -3e9, 1e-40, 16777217, 2147483520, -2147483648.0};
  const std::vector<double> want = {2,
                                    -2,
                                    0,
                                    0,
                                    0,
                                    2147483648.0,
                                    -2147483648.0,
                                    2147483648.0,
                                    -2147483648.0,
                                    0,
                                    16777216,
                                    2147483520,
                                    -2147483648.0};
  Graph g;
  g.result(g.convert(g.convert(g.parameter(f32, {Dim(in.size())}), ElementType::i32), f32));
  check_values(g, in, want, exact_any_zero);
  // and against the reference interpreter (which keeps a -0 through the integer: see
  // docs/math_accuracy.md; the kernel gives +0, an integer has no sign of zero)
  check_jit(g, {Tensor::from_values(f32, {Dim(in.size())}, in)}, {.tol = exact_any_zero});
}

TEST_CASE("jit math ops: Convert chains through i8, u8, boolean, f16 and bf16 match the "
          "reference") {
  std::vector<double> in = {0.0,        -0.0,     1.5,   -1.5,  127.5, 128,  -128.7,
                            -129,       255.9,    256,   -1,    qnan,  inf,  -inf,
                            65504,      65519.99, 65520, 1e-5,  6e-8,  3e-8, 1.00390625,
                            1.01171875, 3.4e38,   1e-40, -1e-40};
  for (double v : make_values(256, 77)) in.push_back(v * 37.25);
  const Shape s{Dim(in.size())};
  for (const ElementType t : {ElementType::i8, ElementType::u8, ElementType::boolean,
                              ElementType::f16, ElementType::bf16, ElementType::i32}) {
    INFO("via " << to_string(t));
    Graph g;
    g.result(g.convert(g.convert(g.parameter(f32, s), t), f32));
    check_jit(g, {Tensor::from_values(f32, s, in)}, {.tol = exact_any_zero});
  }
}

TEST_CASE("jit math ops: the new ops fuse with each other and with elementwise ops on every "
          "tail length and with broadcasting") {
  // Tolerance: each op is within its few-ulp bound; sums of positive terms and products keep
  // that relative, so 16 ulp or 1e-5 absolute (for results near zero) covers the chains.
  const Tolerance chain{16, 1e-5};
  std::uint64_t seed = 1000;
  for (const Dim n : {1, 7, 15, 17, 31, 33}) {
    INFO("n = " << n);
    const Shape full{3, n}, row{n}, column{3, 1};
    const Tensor a = make_tensor(full, ++seed), b = make_tensor(row, ++seed),
                 c = make_tensor(column, ++seed, Pattern::positive);
    {
      Graph g;
      const auto x = g.parameter(f32, full), y = g.parameter(f32, row),
                 z = g.parameter(f32, column);
      auto t = g.gelu(g.add(g.multiply(x, z), y), ir::GeluApproximation::tanh);
      t = g.add(t, g.multiply(g.sigmoid(x), g.exp(g.negative(g.abs(y)))));
      g.result(t);
      g.result(g.mish(g.multiply(y, z)));
      g.result(g.swish(x, 1.5));
      check_jit(g, {a, b, c}, {.tol = chain, .threads = {1, 2}});
    }
    {
      Graph g;
      const auto x = g.parameter(f32, full), y = g.parameter(f32, row),
                 z = g.parameter(f32, column);
      auto t = g.add(g.tanh(x), g.erf(y));
      t = g.add(t, g.log(g.add(g.abs(x), z)));
      t = g.maximum(t, g.elu(y, 0.5));
      g.result(g.add(t, g.softplus(g.leaky_relu(x, 0.2))));
      g.result(g.gelu(g.subtract(x, y)));
      check_jit(g, {a, b, c}, {.tol = chain, .threads = {1, 2}});
    }
    {
      Graph g;
      const auto x = g.parameter(f32, full), y = g.parameter(f32, row),
                 z = g.parameter(f32, column);
      g.result(g.power(g.add(g.abs(x), z), y));
      g.result(g.mod(x, g.add(z, g.scalar(f32, 0.5))));
      g.result(g.floor_mod(g.multiply(y, g.scalar(f32, 7.0)), z));
      g.result(g.convert(g.convert(g.multiply(x, g.scalar(f32, 3.3)), ElementType::i32), f32));
      // fmod and truncation are discontinuous: the reference rounds every node like the kernel
      check_jit(g, {a, b, c},
                {.threads = {1, 2},
                 .round_each_node = true,
                 .output_tol = {Tolerance{1}, exact, exact, exact_any_zero}});
    }
  }
}

TEST_CASE("jit: arithmetic on an integer intermediate is rejected, conversions are not") {
  // Convert(i32) -> Divide would be computed in f32 (3.5 instead of 3)
  jit_test::Graph g;
  const auto x = g.parameter(ElementType::f32, {8}, "x");
  const auto i = g.convert(x, ElementType::i32);
  g.result(g.convert(g.divide(i, g.scalar(ElementType::i32, 2.0)), ElementType::f32), "y");
  CHECK(error_id([&] { compile(g); }) == "snippets.compile.unsupported_type");
  jit_test::Graph ok;
  ok.result(ok.convert(ok.convert(ok.parameter(ElementType::f32, {8}, "x"), ElementType::i32),
                       ElementType::f32),
            "y");
  CHECK_NOTHROW(compile(ok));
}

TEST_CASE("jit: constants live in the vector registers no value uses, the rest in memory") {
  // the table: the first constants asked for take the registers it was given
  x64::ConstantTable zmm_table(64);
  zmm_table.pin_registers(30, 2);
  CHECK(zmm_table.bits(7).isZMM());
  CHECK(zmm_table.bits(7).getIdx() == 30);
  CHECK(zmm_table.value(1.0f).getIdx() == 31);
  CHECK(zmm_table.bits(9).isMEM());
  CHECK(zmm_table.bits(7).getIdx() == 30); // asked again: the same register
  CHECK(zmm_table.pinned() == 2);
  x64::ConstantTable ymm_table(32);
  ymm_table.pin_registers(12, 1);
  CHECK(ymm_table.bits(7).isYMM());
  CHECK(ymm_table.bits(8).isMEM());
  // a kernel whose ops ask for more constants than there are free registers (about 60 for
  // Gelu(erf), Mish, Log, SoftPlus and Erf), four copies of the body and a tail of 3: the
  // registers fill up and the rest are read from memory; every output as accurate as alone
  Graph g;
  const auto x = g.parameter(f32, {67});
  g.result(g.gelu(x, ir::GeluApproximation::erf));
  g.result(g.mish(x));
  g.result(g.log(x));
  g.result(g.softplus(x));
  g.result(g.erf(x));
  const Tensor in = make_tensor({67}, 11);
  check_jit(
      g, {in},
      {.threads = {1, 2},
       .output_tol = {Tolerance{4, 1e-6}, Tolerance{4}, Tolerance{2}, Tolerance{2}, Tolerance{2}}});
  for_each_isa([&](x64::Isa isa) {
    const CompiledKernel k = compile(g, {.isa = isa, .debug = {.code_map = true}});
    const debug::CodeMap* map = k.kernel_code().map.get();
    REQUIRE(map);
    const debug::CodeRecord& loads = map->records.back();
    CHECK(loads.text == "constants");
    CHECK(loads.end - loads.begin > 5 * 7); // register loads (7 bytes each and more) and a jump
  });
}
