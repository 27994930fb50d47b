// SPDX-License-Identifier: Apache-2.0
// JIT tests of kernel inputs and outputs of other element types than f32
// (target/x64/memory_access.hpp, the element sizes of passes/init_loops.hpp, compile.hpp and
// runtime/, AlignElementTypes for i8/u8 values, the tokenizer's type rules).
//
// Every result is compared with the reference interpreter element by element: integers and
// f16/bf16 values exactly (NaN matches NaN, the sign of zero counts), unless a test says
// otherwise. Each kernel is compiled for AVX2 and AVX-512, on AVX-512 once more without
// VCVTNEPS2BF16 (CompileOptions::native_bf16 = false) when the host has it, and run with 1
// and 2 threads.
#include "jit_test_util.hpp"

#include <memory>

using namespace snippets;
using namespace snippets::jit_test;

namespace {

constexpr ElementType f16 = ElementType::f16, bf16 = ElementType::bf16, i32 = ElementType::i32,
                      i8 = ElementType::i8, u8 = ElementType::u8;
constexpr Dim tail_sizes[] = {1, 7, 15, 17, 31, 33, 65};

/// Calls f(options) for every ISA, and on AVX-512 with and without VCVTNEPS2BF16.
template <class F> void for_each_variant(F&& f, int unroll = CompileOptions{}.unroll) {
  for_each_isa([&](x64::Isa isa) {
    f(CompileOptions{.isa = isa, .unroll = unroll});
    if (isa == x64::Isa::avx512 && x64::host_has_avx512_bf16()) {
      INFO("bf16 by integer rounding (no VCVTNEPS2BF16)");
      f(CompileOptions{.isa = isa, .unroll = unroll, .native_bf16 = false});
    }
    if (isa == x64::Isa::avx512 && !x64::host_has_avx512_bf16())
      test::skip_on_host("AVX512_BF16 (the native bf16 conversion)");
  });
}

/// Distance of two values of a 16-bit float type in units of its last place.
std::int64_t half_ulps(ElementType t, double a, double b) {
  auto ordered = [&](double x) {
    const auto bits = static_cast<std::int64_t>(t == f16 ? f16_bits(x) : bf16_bits(x));
    return bits & 0x8000 ? -(bits & 0x7fff) : bits;
  };
  const std::int64_t d = ordered(a) - ordered(b);
  return d < 0 ? -d : d;
}

/// Empty when `got` matches `want`: exactly (NaN matches NaN; the sign of zero counts), or
/// within `ulps` of the output's type for floats.
std::string mismatches(const Tensor& got, const Tensor& want, std::int64_t ulps = 0,
                       bool zero_sign = true) {
  std::ostringstream os;
  if (got.type() != want.type() || got.shape() != want.shape())
    return "got " + std::string(to_string(got.type())) + got.shape().to_string() + ", want " +
           std::string(to_string(want.type())) + want.shape().to_string();
  std::size_t bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = got.at(i), w = want.at(i);
    bool ok = std::isnan(g) || std::isnan(w)
                  ? std::isnan(g) && std::isnan(w)
                  : g == w && (!zero_sign || std::signbit(g) == std::signbit(w));
    if (!ok && ulps > 0 && std::isfinite(g) && std::isfinite(w)) {
      if (got.type() == f16 || got.type() == bf16) ok = half_ulps(got.type(), g, w) <= ulps;
      if (got.type() == f32) ok = ulp_distance(float(g), float(w)) <= ulps;
    }
    if (!ok && bad++ < 5) {
      os.precision(10);
      os << "\n  at " << i << ": got " << g << ", want " << w;
    }
  }
  return bad ? std::to_string(bad) + " of " + std::to_string(got.size()) + " differ:" + os.str()
             : std::string{};
}

/// Compiles `g` for every variant and compares every output with the reference.
void check(const Graph& g, const std::vector<Tensor>& inputs, std::int64_t ulps = 0,
           std::vector<int> unrolls = {4}, bool zero_sign = true) {
  const std::vector<Tensor> want = reference::evaluate(g, std::span<const Tensor>(inputs));
  for (const int unroll : unrolls) {
    INFO("unroll = " << unroll);
    for_each_variant(
        [&](const CompileOptions& opt) {
          const CompiledKernel k = compile(g, opt);
          for (const int threads : {1, 2}) {
            INFO("threads = " << threads);
            const auto got = k.run(std::span<const Tensor>(inputs), with_threads(threads));
            REQUIRE(got.size() == want.size());
            for (std::size_t o = 0; o < got.size(); ++o) {
              INFO("output " << o << " (" << to_string(want[o].type()) << ")");
              const std::string report = mismatches(got[o], want[o], ulps, zero_sign);
              CHECK_MESSAGE(report.empty(), report);
            }
          }
        },
        unroll);
  }
}

Tensor tensor(ElementType t, const Shape& s, const std::vector<double>& v) {
  return Tensor::from_values(t, s, v);
}

/// The value of every bit pattern of a 16-bit float type.
std::vector<double> all_half_values(ElementType t) {
  std::vector<double> v;
  for (std::uint32_t b = 0; b < 65536; ++b)
    v.push_back(t == f16 ? from_f16_bits(std::uint16_t(b)) : from_bf16_bits(std::uint16_t(b)));
  return v;
}

double f32_of_bits(std::uint32_t b) { return std::bit_cast<float>(b); }

} // namespace

TEST_CASE("jit precisions: every i8 and u8 value loads exactly and converts back saturated") {
  std::vector<double> s8, u8v;
  for (int i = 0; i < 256; ++i) {
    s8.push_back(i - 128);
    u8v.push_back(255 - i);
  }
  for (const Dim n : {Dim{256}, Dim{251}}) { // whole vectors, and tails
    INFO("n = " << n);
    s8.resize(std::size_t(n));
    u8v.resize(std::size_t(n));
    Graph g;
    const auto x = g.parameter(i8, {n}, "x");
    const auto y = g.parameter(u8, {n}, "y");
    g.result(g.add(g.convert(x, f32), g.convert(y, f32)), "sum");
    g.result(g.convert(x, u8), "x_as_u8"); // negative -> 0
    g.result(g.convert(y, i8), "y_as_i8"); // > 127 -> 127
    g.result(x, "copy");
    g.result(g.convert(y, f16), "y_as_f16");
    g.result(g.convert(x, bf16), "x_as_bf16");
    check(g, {tensor(i8, {n}, s8), tensor(u8, {n}, u8v)}, 0, {1, 4});
  }
}

TEST_CASE("jit precisions: i8/u8 arithmetic keeps its integer semantics (computed in f32)") {
  // a u8 input feeding an Add just works: AlignElementTypes computes in f32 and converts back
  // after every op, so each op saturates as the reference does
  std::vector<double> a, b;
  for (int i = 0; i < 256; ++i) {
    a.push_back(i);
    b.push_back((i * 37 + 11) % 256);
  }
  Graph ok;
  const auto x2 = ok.parameter(u8, {256}, "x");
  const auto y2 = ok.parameter(u8, {256}, "y");
  ok.result(ok.subtract(ok.add(x2, y2), ok.scalar(u8, 100)), "d");
  ok.result(ok.divide(x2, ok.maximum(y2, ok.scalar(u8, 1))), "q");
  ok.result(ok.convert(ok.multiply(x2, y2), i32), "p");
  ok.result(ok.convert(ok.greater(x2, y2), f32), "gt");
  const auto xi = ok.convert(x2, i8); // i8 values: -128..127
  ok.result(ok.abs(ok.negative(ok.subtract(xi, ok.scalar(i8, 100)))), "i8_chain");
  check(ok, {tensor(u8, {256}, a), tensor(u8, {256}, b)});
}

TEST_CASE("jit precisions: f32 to i32, i8 and u8 truncates toward zero, saturates, NaN -> 0") {
  std::vector<double> v = {
      0.0,           -0.0,          0.5,    -0.5, 0.99,  -0.99,    1.5,          -1.5,
      127.9,         128,           -128.9, -129, 254.5, 255.9,    256,          1e10,
      -1e10,         inf,           -inf,   qnan, -qnan, 16777217, 2147483520.0, 2147483648.0,
      -2147483648.0, -2147483904.0, 3e9,    -3e9, 1e-40, -1e-40};
  for (std::size_t i = v.size(); i < 67; ++i) v.push_back((double(i) - 33) * 9.7);
  Graph g;
  const auto x = g.parameter(f32, {Dim(v.size())}, "x");
  // folded into the Stores
  g.result(g.convert(x, i32), "i32");
  g.result(g.convert(x, i8), "i8");
  g.result(g.convert(x, u8), "u8");
  // converted inside the kernel too (the Convert has a non-Result user)
  const auto c = g.convert(x, i8);
  g.result(c, "i8_twice");
  g.result(g.convert(c, f32), "i8_as_f32");
  const auto w = g.convert(x, i32);
  g.result(w, "i32_twice");
  g.result(g.convert(w, f32), "i32_as_f32");
  // an integer has no sign of zero: the kernel's -0.5 -> i8 -> f32 is +0, the reference keeps
  // the -0 of trunc(-0.5) (the Convert emitter's documented choice, arith.hpp)
  check(g, {tensor(f32, {Dim(v.size())}, v)}, 0, {1, 4}, false);
}

TEST_CASE("jit precisions: i32 inputs load as the nearest f32, also beyond 2^24") {
  std::vector<double> v = {0,         1,         -1,         16777216,   16777217,    -16777217,
                           16777219,  33554435,  33554437,   2147483647, -2147483647, -2147483648,
                           123456789, -98765432, 1000000001, 255,        256,         -129};
  Rng rng(77);
  while (v.size() < 71) v.push_back(double(rng.integer(-2147483648LL, 2147483647LL)));
  const Dim n = Dim(v.size());
  Graph g;
  const auto x = g.parameter(i32, {n}, "x");
  const auto xf = g.convert(x, f32);
  g.result(xf, "f32");
  g.result(g.convert(x, i8), "i8");
  g.result(g.convert(x, u8), "u8");
  g.result(g.convert(x, f16), "f16");
  g.result(g.convert(xf, i32), "back"); // the f32 value, saturated: 2^31 -> 2147483647
  check(g, {tensor(i32, {n}, v)}, 0, {1, 4});
}

TEST_CASE("jit precisions: bf16 and f16 stores round to nearest even at every edge") {
  std::vector<double> v = {
      0.0, -0.0, inf, -inf, qnan, -qnan,
      // bf16: halfway between 1 and 1 + 2^-7 (to even: 1), above it, the next tie (up)
      1 + 0x1p-8, 1 + 0x1p-8 + 0x1p-23, 1 + 3 * 0x1p-8, -(1 + 0x1p-8),
      // bf16 and f32 subnormals (bf16 keeps f32's exponent range): ties and non-ties
      f32_of_bits(0x00008000), f32_of_bits(0x00018000), f32_of_bits(0x00400000),
      f32_of_bits(0x007fffff), f32_of_bits(0x00000001), f32_of_bits(0x80408000),
      // the largest f32, bf16's largest finite, and the first value that rounds to bf16 inf
      f32_of_bits(0x7f7fffff), f32_of_bits(0x7f7f0000), f32_of_bits(0x7f7f8000),
      f32_of_bits(0x7f7f7fff),
      // f16: halfway cases, max finite 65504, the last value rounding to it, overflow
      1 + 0x1p-11, 1 + 3 * 0x1p-11, 65504, 65519.99, 65520, -65520,
      // f16 subnormals: the smallest, a tie to zero, a tie up to even, below the smallest
      0x1p-24, 0x1p-25, 3 * 0x1p-25, 0x1p-26, -0x1p-24, 0x1p-14, 0x1p-14 - 0x1p-24,
      // NaNs with payloads only in the low bits (truncation would make them infinities)
      f32_of_bits(0x7f800001), f32_of_bits(0xff800001), f32_of_bits(0x7fc00000)};
  Rng rng(5);
  while (v.size() < 97) v.push_back(rng.uniform(-300, 300));
  const Dim n = Dim(v.size());
  Graph g;
  const auto x = g.parameter(f32, {n}, "x");
  g.result(g.convert(x, bf16), "bf16");
  g.result(g.convert(x, f16), "f16");
  const auto kept = g.convert(x, bf16); // inside the kernel too
  g.result(kept, "bf16_twice");
  g.result(g.convert(kept, f32), "bf16_as_f32");
  const auto kept16 = g.convert(x, f16);
  g.result(kept16, "f16_twice");
  g.result(g.convert(kept16, f32), "f16_as_f32");
  check(g, {tensor(f32, {n}, v)}, 0, {1, 4});
}

TEST_CASE("jit precisions: every bf16 and f16 bit pattern loads exactly and stores back") {
  for (const ElementType t : {bf16, f16}) {
    INFO("type = " << to_string(t));
    std::vector<double> v = all_half_values(t);
    v.resize(65535); // a tail
    const Dim n = Dim(v.size());
    Graph g;
    const auto x = g.parameter(t, {n}, "x");
    g.result(g.convert(x, f32), "f32");
    g.result(x, "copy");
    g.result(g.convert(x, t == bf16 ? f16 : bf16), "other");
    check(g, {tensor(t, {n}, v)});
  }
}

TEST_CASE("jit precisions: mixed graphs, tails and broadcast inputs") {
  std::uint64_t seed = 900;
  for (const Dim n : tail_sizes) {
    INFO("n = " << n);
    auto values = [&](std::size_t count, double lo, double hi) {
      Rng rng(++seed);
      std::vector<double> v(count);
      for (double& x : v) x = std::round(rng.uniform(lo, hi) * 4) / 4;
      return v;
    };
    // u8 image, bf16 per-channel scale (broadcast along the innermost dim), f16 scalar-like
    // [1] bias, i8 full input; f32 compute; bf16, f16, i8 and f32 outputs
    Graph g;
    const auto img = g.parameter(u8, {2, 3, n}, "img");
    const auto scale = g.parameter(bf16, {3, 1}, "scale");
    const auto bias = g.parameter(f16, {1}, "bias");
    const auto q = g.parameter(i8, {n}, "q");
    const auto xf = g.convert(img, f32);
    const auto y = g.add(g.multiply(xf, g.convert(scale, f32)), g.convert(bias, f32));
    const auto z = g.add(y, g.convert(q, f32));
    g.result(g.convert(z, bf16), "z_bf16");
    g.result(g.convert(g.sigmoid(z), f16), "sig_f16");
    g.result(g.convert(g.multiply(z, g.scalar(f32, 0.25)), i8), "z_i8");
    g.result(z, "z_f32");
    const std::vector<Tensor> in = {
        tensor(u8, {2, 3, n}, values(std::size_t(6 * n), 0, 255)),
        tensor(bf16, {3, 1}, {0.5, -1.25, 3.0}),
        tensor(f16, {1}, {-7.5}),
        tensor(i8, {n}, values(std::size_t(n), -128, 127)),
    };
    // sigmoid is within 2 ulp in f32: its f16 rounding may differ by one f16 ulp
    check(g, in, 1, {1, 4});
  }
}

TEST_CASE("jit precisions: tails of narrow types never touch memory past or before a tensor") {
  std::uint64_t seed = 1300;
  for (const Dim n : tail_sizes) {
    for (const ElementType in_t : {u8, i8, bf16, f16, i32}) {
      for (const ElementType out_t : {u8, i8, bf16, f16, i32}) {
        INFO("n = " << n << ", " << to_string(in_t) << " -> " << to_string(out_t));
        Graph g;
        const auto a = g.parameter(in_t, {3, n}, "a");
        const auto b = g.parameter(in_t, {3, 1}, "b"); // a one-element load per row
        const auto s = g.add(g.convert(a, f32), g.convert(b, f32));
        g.result(g.convert(s, out_t), "y");
        Rng rng(++seed);
        std::vector<double> va(std::size_t(3 * n)), vb(3);
        for (double& x : va) x = double(rng.integer(-60, 60));
        for (double& x : vb) x = double(rng.integer(0, 60));
        if (in_t == u8)
          for (double& x : va) x = std::fabs(x);
        const Tensor ta = tensor(in_t, {3, n}, va), tb = tensor(in_t, {3, 1}, vb);
        const Tensor want = reference::evaluate(g, {ta, tb})[0];
        for_each_variant([&](const CompileOptions& opt) {
          for (const int unroll : {1, 4}) {
            CompileOptions o = opt;
            o.unroll = unroll;
            const CompiledKernel k = compile(g, o);
            for (const Guard where : {Guard::after, Guard::before}) {
              GuardedBuffer ga(ta.byte_size(), where), gb(tb.byte_size(), where),
                  gy(want.byte_size(), where);
              std::memcpy(ga.data(), ta.data(), ta.byte_size());
              std::memcpy(gb.data(), tb.data(), tb.byte_size());
              const ConstTensorView in[] = {{in_t, {3, n}, ga.data()}, {in_t, {3, 1}, gb.data()}};
              const TensorView out[] = {{out_t, {3, n}, gy.data()}};
              for (const int threads : {1, 2}) {
                k.run(in, out, with_threads(threads));
                Tensor got(out_t, {3, n});
                std::memcpy(got.data(), gy.data(), want.byte_size());
                const std::string report = mismatches(got, want);
                CHECK_MESSAGE(report.empty(), report);
              }
            }
          }
        });
      }
    }
  }
}

TEST_CASE("jit precisions: dynamic kernels read and write narrow types, tails included") {
  Graph g;
  const auto a = g.parameter(u8, {dynamic, dynamic}, "a");
  const auto b = g.parameter(bf16, {dynamic, 1}, "b");
  const auto s = g.multiply(g.convert(a, f32), g.convert(b, f32));
  g.result(g.convert(s, f16), "f16");
  g.result(g.convert(s, i8), "i8");
  g.result(g.convert(s, bf16), "bf16");
  g.result(g.convert(s, i32), "i32");
  std::uint64_t seed = 4000;
  for_each_variant([&](const CompileOptions& opt) {
    const CompiledKernel k = compile(g, opt);
    REQUIRE(k.is_dynamic());
    for (const Dim n : tail_sizes) {
      INFO("n = " << n);
      Rng rng(++seed);
      std::vector<double> va(std::size_t(2 * n)), vb = {0.5, -1.75};
      for (double& x : va) x = double(rng.integer(0, 255));
      const Tensor ta = tensor(u8, {2, n}, va), tb = tensor(bf16, {2, 1}, vb);
      const auto want = reference::evaluate(g, {ta, tb});
      for (const int threads : {1, 2}) {
        const auto got = k.run({ta, tb}, with_threads(threads));
        for (std::size_t o = 0; o < want.size(); ++o) {
          const std::string report = mismatches(got[o], want[o]);
          CHECK_MESSAGE(report.empty(), report);
        }
      }
      // the masked tail of run-time length against guard pages
      for (const Guard where : {Guard::after, Guard::before}) {
        GuardedBuffer ga(ta.byte_size(), where), gb(tb.byte_size(), where);
        std::memcpy(ga.data(), ta.data(), ta.byte_size());
        std::memcpy(gb.data(), tb.data(), tb.byte_size());
        std::vector<std::unique_ptr<GuardedBuffer>> outs;
        std::vector<TensorView> out;
        for (const Tensor& w : want) {
          outs.push_back(std::make_unique<GuardedBuffer>(w.byte_size(), where));
          out.push_back({w.type(), w.shape(), outs.back()->data()});
        }
        const ConstTensorView in[] = {{u8, {2, n}, ga.data()}, {bf16, {2, 1}, gb.data()}};
        k.run(in, out, with_threads(2));
        for (std::size_t o = 0; o < want.size(); ++o) {
          Tensor got(want[o].type(), want[o].shape());
          std::memcpy(got.data(), outs[o]->data(), got.byte_size());
          const std::string report = mismatches(got, want[o]);
          CHECK_MESSAGE(report.empty(), report);
        }
      }
    }
  });
}

TEST_CASE("jit precisions: the tokenizer fuses narrow inputs and outputs") {
  Graph m;
  const auto x = m.parameter(u8, {4, 33}, "x");
  const auto w = m.parameter(bf16, {4, 33}, "w");
  const auto y = m.add(m.convert(x, bf16), w); // bf16 arithmetic: computed in f32
  m.result(m.convert(m.relu(y), f16), "y");
  const Graph t = passes::tokenize(m);
  std::size_t subgraphs = 0;
  for (ir::NodeId id = 0; id < t.size(); ++id)
    subgraphs += ir::is<ir::Subgraph<x64::Traits>>(t.node(id).op);
  CHECK(subgraphs == 1);
  // an i32 input converted to bf16 would round twice in a kernel: left to the reference
  Graph r;
  r.result(r.convert(r.parameter(i32, {8}, "i"), bf16), "b");
  const Graph tr = passes::tokenize(r);
  for (ir::NodeId id = 0; id < tr.size(); ++id)
    CHECK_FALSE(ir::is<ir::Subgraph<x64::Traits>>(tr.node(id).op));
}

TEST_CASE("jit precisions: a model with u8 input and bf16 output runs as one kernel") {
  Graph m;
  const auto x = m.parameter(u8, {2, 3, 17}, "x");
  const auto b = m.parameter(f32, {3, 1}, "b");
  const auto y = m.multiply(m.add(m.convert(x, f32), b), m.scalar(f32, 1.0 / 255));
  m.result(m.convert(y, bf16), "y");
  Program<> program(m);
  std::size_t kernels = 0;
  for (const auto& step : program.steps()) {
    INFO(step.note);
    CHECK(step.note.empty());
    kernels += step.kind == Program<>::StepKind::kernel;
  }
  CHECK(kernels == 1);
  std::vector<double> vx(2 * 3 * 17);
  for (std::size_t i = 0; i < vx.size(); ++i) vx[i] = double(i * 7 % 256);
  const std::vector<Tensor> in = {tensor(u8, {2, 3, 17}, vx), tensor(f32, {3, 1}, {-1, 0, 0.5})};
  const auto want = reference::evaluate(m, std::span<const Tensor>(in));
  const Tensor out = program.run(in, with_threads(2))[0];
  // the scale is not a power of two: f32 compute may differ from double by one bf16 ulp at ties
  const std::string report = mismatches(out, want[0], 1);
  CHECK_MESSAGE(report.empty(), report);
}

TEST_CASE("jit precisions: what a kernel cannot read or write is rejected with a stable id") {
  for_each_isa([&](x64::Isa isa) {
    const CompileOptions opt{.isa = isa};
    { // an i32 input copied to an output would lose its low bits in an f32 register
      Graph g;
      const auto x = g.parameter(i32, {8});
      g.result(g.convert(x, bf16));
      CHECK(error_id([&] { compile(g, opt); }) == "snippets.compile.unsupported_type");
    }
    { // Power on u8 values is not exact in f32: it stays integer and is rejected
      Graph g;
      const auto x = g.parameter(u8, {8});
      g.result(g.power(x, g.parameter(u8, {8})));
      CHECK(error_id([&] { compile(g, opt); }) == "snippets.compile.unsupported_type");
    }
  });
}

TEST_CASE("jit precisions: loads and stores carry their element type; Converts fold into them") {
  Graph g;
  const auto x = g.parameter(u8, {64}, "x");
  g.result(g.convert(g.relu(g.convert(x, f32)), bf16), "y");
  auto lowered = lower(g, x64::Isa::avx512);
  const std::string lir = ir::to_string(lowered);
  INFO(lir);
  CHECK(lir.find("Load x16 u8") != std::string::npos);
  CHECK(lir.find("Store x16 bf16") != std::string::npos);
  CHECK(lir.find("Convert") == std::string::npos);
}
