// SPDX-License-Identifier: Apache-2.0
// JIT tests of bf16 MatMul kernels (BrgemmShape::pairs, target/x64/emitters/brgemm.hpp):
// bf16 A and B multiplied in pairs of depths by VDPBF16PS (AVX-512 with AVX512_BF16), or
// widened to f32 (AVX2, CompileOptions::native_bf16 = false, a transposed A, an odd depth
// with a transposed B), against the reference interpreter in double.
//
// Tolerance. bf16 inputs are exact in f32 and so are their products, so an f32 result is off
// by the f32 summation bound e = (K + 2) * 2^-24 * sum_k |a_mk| |b_kn| (as in
// test_jit_matmul.cpp). A bf16 result x' of the kernel is rounded once from an f32 within e
// of the exact x, the reference rounds x itself: they differ by at most e plus one bf16 ulp,
// 2^-7 * (|x| + e). VDPBF16PS treats subnormal inputs and results as zero; the data here
// (uniform in [-1, 1], rounded to bf16) has no subnormal products.
#include "matmul_test_util.hpp"

using namespace snippets;
using namespace snippets::jit_test;

namespace {

constexpr ElementType bf16 = ElementType::bf16;

Tensor as_type(const Tensor& t, ElementType type) {
  return Tensor::from_values(type, t.shape(), t.values().v);
}

/// Uniform values in [-1, 1], rounded to bf16 (in a tensor of `type`).
Tensor bf16_values(const Shape& s, std::uint64_t seed, ElementType type = bf16) {
  return as_type(as_type(uniform(s, seed), bf16), type);
}

/// e (see the header) for A x B, and (bf16_out) one bf16 ulp of `want` more.
Tensor error_bound(const Tensor& a, const Tensor& b, bool ta, bool tb, const Tensor* bf16_out) {
  Graph g;
  const auto pa = g.parameter(f32, a.shape());
  g.result(g.matmul(pa, g.parameter(f32, b.shape()), ta, tb));
  const Tensor mag =
      reference::evaluate(g, {absolute(as_type(a, f32)), absolute(as_type(b, f32))})[0];
  const Dim k = ta ? a.shape()[a.shape().rank() - 2] : a.shape()[a.shape().rank() - 1];
  Tensor bound(f32, mag.shape());
  for (std::size_t i = 0; i < mag.size(); ++i) {
    const double e = double(k + 2) * 0x1p-24 * mag.at(i) + 1e-30;
    bound.set(i, bf16_out ? e + 0x1p-7 * (std::fabs(bf16_out->at(i)) + e) : e);
  }
  return bound;
}

/// Calls f(options) for both ISAs, and on AVX-512 with and without AVX512_BF16's instructions.
template <class F> void for_each_variant(F&& f) {
  for_each_isa([&](x64::Isa isa) {
    f(CompileOptions{.isa = isa});
    if (isa == x64::Isa::avx512 && x64::host_has_avx512_bf16()) {
      INFO("bf16 widened to f32 (native_bf16 = false)");
      f(CompileOptions{.isa = isa, .native_bf16 = false});
    }
    if (isa == x64::Isa::avx512 && !x64::host_has_avx512_bf16())
      test::skip_on_host("AVX512_BF16 (the native bf16 conversion)");
  });
}

/// Compiles g (outputs: the product as bf16, then as f32) every way and checks both.
void check_both_outputs(const Graph& g, const std::vector<Tensor>& in, const Tensor& a,
                        const Tensor& b, bool ta, bool tb, std::vector<int> threads = {1, 3}) {
  const std::vector<Tensor> want = reference::evaluate(g, std::span<const Tensor>(in));
  const Tensor bound_bf16 = error_bound(a, b, ta, tb, &want[0]);
  const Tensor bound_f32 = error_bound(a, b, ta, tb, nullptr);
  for_each_variant([&](const CompileOptions& opt) {
    const CompiledKernel k = compile(g, opt);
    for (const int n : threads) {
      INFO("threads = " << n);
      const auto got = k.run(std::span<const Tensor>(in), with_threads(n));
      REQUIRE(got[0].type() == bf16);
      const std::string r0 = compare_bounded(got[0], want[0], bound_bf16);
      CHECK_MESSAGE(r0.empty(), "bf16 output: " << r0);
      const std::string r1 = compare_bounded(got[1], want[1], bound_f32);
      CHECK_MESSAGE(r1.empty(), "f32 output: " << r1);
    }
  });
}

void check_product(const Shape& sa, const Shape& sb, bool ta, bool tb, std::uint64_t seed,
                   std::vector<int> threads = {1, 3}) {
  const std::string what =
      "A " + sa.to_string() + (ta ? "^T" : "") + " x B " + sb.to_string() + (tb ? "^T" : "");
  INFO(what);
  Graph g;
  const auto pa = g.parameter(bf16, sa);
  const auto y = g.matmul(pa, g.parameter(bf16, sb), ta, tb);
  g.result(y, "bf16");
  g.result(g.convert(y, f32), "f32");
  const Tensor a = bf16_values(sa, seed), b = bf16_values(sb, seed + 1);
  check_both_outputs(g, {a, b}, a, b, ta, tb, std::move(threads));
}

} // namespace

TEST_CASE("matmul bf16: the shapes of the issue, bf16 and f32 outputs") {
  std::uint64_t seed = 1;
  const std::pair<Shape, Shape> shapes[] = {{{2, 1, 3, 5}, {1, 3, 5, 3}},
                                            {{3, 1, 32, 14}, {1, 3, 14, 37}},
                                            {{1, 2, 37, 23}, {2, 1, 23, 37}},
                                            {{1, 1, 32, 23}, {1, 1, 23, 68}},
                                            {{1, 16, 384, 64}, {1, 16, 64, 384}}};
  for (const auto& [a, b] : shapes) check_product(a, b, false, false, seed += 2);
}

TEST_CASE("matmul bf16: deep products, K = 700, 1024 and 2501") {
  std::uint64_t seed = 100;
  for (const Dim k : {Dim{700}, Dim{1024}, Dim{2501}})
    check_product({1, 1, 100, k}, {1, 1, k, 100}, false, false, seed += 2, {2});
}

TEST_CASE("matmul bf16: odd sizes, odd depths") {
  std::uint64_t seed = 200;
  for (const Dim m : {Dim{1}, Dim{7}, Dim{17}, Dim{33}})
    for (const Dim n : {Dim{1}, Dim{15}, Dim{31}, Dim{65}})
      for (const Dim k : {Dim{1}, Dim{2}, Dim{17}})
        check_product({m, k}, {k, n}, false, false, seed += 2, {1, 2});
}

TEST_CASE("matmul bf16: transposed A, transposed B (even and odd depths), and both") {
  std::uint64_t seed = 300;
  for (const Dim k : {Dim{21}, Dim{40}})
    for (const bool ta : {false, true})
      for (const bool tb : {false, true}) {
        const Dim m = 19, n = 37;
        check_product(ta ? Shape{2, k, m} : Shape{2, m, k}, tb ? Shape{2, n, k} : Shape{2, k, n},
                      ta, tb, seed += 2);
      }
}

TEST_CASE("matmul bf16: f32 activations with bf16 weights, and the other way round") {
  const Shape sa{2, 23, 33}, sb{33, 40};
  for (const bool a_bf16 : {false, true}) {
    INFO("A is " << std::string(a_bf16 ? "bf16" : "f32"));
    Graph g;
    auto a = g.parameter(a_bf16 ? bf16 : f32, sa);
    auto b = g.parameter(a_bf16 ? f32 : bf16, sb);
    (a_bf16 ? a : b) = g.convert(a_bf16 ? a : b, f32);
    const auto y = g.matmul(a, b);
    g.result(g.convert(y, bf16), "bf16");
    g.result(y, "f32");
    const Tensor ta = bf16_values(sa, 5, a_bf16 ? bf16 : f32);
    const Tensor tb = bf16_values(sb, 6, a_bf16 ? f32 : bf16);
    check_both_outputs(g, {ta, tb}, ta, tb, false, false);
  }
}

TEST_CASE("matmul bf16: an operand read through a gathering Transpose and a Convert to f32") {
  // B is stored [batch, N, 2, K] and read as [batch, 2, K, N] ([0,2,3,1]: its innermost axis is
  // gathered), A as its transpose ([0,1,3,2]); a product reads such an operand through any strides
  const Shape sa{1, 2, 33, 23}, sb{1, 40, 2, 33};
  for (const bool through_a : {false, true}) {
    INFO(std::string(through_a ? "A" : "B") << " through the Transpose");
    Graph g;
    const auto pa = g.parameter(through_a ? bf16 : f32, through_a ? sa : Shape{1, 2, 23, 33});
    const auto pb = g.parameter(through_a ? f32 : bf16, through_a ? Shape{1, 2, 33, 40} : sb);
    const auto a = through_a ? g.convert(g.transpose(pa, {0, 1, 3, 2}), f32) : pa;
    const auto b = through_a ? pb : g.convert(g.transpose(pb, {0, 2, 3, 1}), f32);
    const auto y = g.matmul(a, b);
    g.result(g.convert(y, bf16), "bf16");
    g.result(y, "f32");
    const Tensor ta = bf16_values(g.type(pa).shape, 21, g.type(pa).type);
    const Tensor tb = bf16_values(g.type(pb).shape, 22, g.type(pb).type);
    // the operands as the product reads them, for the bound
    Graph logical;
    const auto la = logical.parameter(g.type(pa).type, g.type(pa).shape);
    const auto lb = logical.parameter(g.type(pb).type, g.type(pb).shape);
    logical.result(through_a ? logical.transpose(la, {0, 1, 3, 2}) : la);
    logical.result(through_a ? lb : logical.transpose(lb, {0, 2, 3, 1}));
    const auto ab = reference::evaluate(logical, {ta, tb});
    check_both_outputs(g, {ta, tb}, ab[0], ab[1], false, false);
  }
}

TEST_CASE("matmul bf16: Converts of epilogue inputs run on their broadcast registers") {
  // f32 bias [N] and column scale [M,1], converted to bf16 (exactly: their values are bf16's)
  const Shape sa{2, 19, 40}, sb{40, 37};
  Graph g;
  const auto pa = g.parameter(bf16, sa);
  const auto y = g.matmul(pa, g.parameter(bf16, sb));
  const auto bias = g.convert(g.parameter(f32, Shape{37}, "bias"), bf16);
  const auto scale = g.convert(g.parameter(f32, Shape{19, 1}, "scale"), bf16);
  // (y + bias * |scale|): scale in [-1, 1], so the slope is at most 1 and e bounds it
  const auto z = g.add(y, g.multiply(bias, g.abs(scale)));
  g.result(z, "bf16");
  g.result(g.convert(z, f32), "f32");
  const Tensor a = bf16_values(sa, 23), b = bf16_values(sb, 24);
  const Tensor c = bf16_values(Shape{37}, 25, f32), d = bf16_values(Shape{19, 1}, 26, f32);
  check_both_outputs(g, {a, b, c, d}, a, b, false, false);
}

TEST_CASE("matmul bf16: bias, scale and activation in the epilogue, bf16 bias") {
  const Shape sa{3, 17, 48}, sb{3, 48, 35};
  Graph g;
  const auto pa = g.parameter(bf16, sa);
  const auto y = g.matmul(pa, g.parameter(bf16, sb));
  const auto bias = g.parameter(bf16, Shape{35}, "bias");
  // relu(y + bias) * 0.5: its slope is at most 1, so e still bounds it (and 8 ulp of rounding)
  const auto z = g.multiply(g.relu(g.add(y, bias)), g.constant(bf16, Shape{1}, {0.5}));
  g.result(z, "bf16");
  g.result(g.convert(z, f32), "f32");
  const Tensor a = bf16_values(sa, 7), b = bf16_values(sb, 8), c = bf16_values(Shape{35}, 9);
  check_both_outputs(g, {a, b, c}, a, b, false, false);
}

TEST_CASE("matmul bf16: constant bf16 weights are packed into pairs at compile time") {
  for (const bool tb : {false, true}) {
    INFO("transpose_b = " << tb);
    const Shape sa{13, 41}, sb = tb ? Shape{70, 41} : Shape{41, 70};
    const Tensor a = bf16_values(sa, 10), w = bf16_values(sb, 11);
    std::vector<double> values(w.size());
    for (std::size_t i = 0; i < w.size(); ++i) values[i] = w.at(i);
    Graph g;
    const auto pa = g.parameter(bf16, sa);
    const auto y = g.matmul(pa, g.constant(bf16, sb, values, "W"), false, tb);
    g.result(y, "bf16");
    g.result(g.convert(y, f32), "f32");
    check_both_outputs(g, {a}, a, w, false, tb);
    auto lowered = lower(g, x64::Isa::avx512);
    const std::string text = ir::to_string(lowered);
    CHECK(text.find("packed") != std::string::npos);
    CHECK(text.find("BrgemmCopyB") == std::string::npos);
  }
}

TEST_CASE("matmul bf16: VDPBF16PS is used exactly when the host and the options allow it") {
  Graph g;
  const auto pa = g.parameter(bf16, Shape{8, 32});
  g.result(g.matmul(pa, g.parameter(bf16, Shape{32, 16})));
  const bool host = x64::host_has_avx512_bf16();
  auto pairs = [&](x64::Isa isa, bool native) {
    const CompileOptions opt{.isa = isa, .native_bf16 = native};
    auto lowered = lower(g, isa, opt);
    return ir::to_string(lowered).find("bf16 pairs") != std::string::npos;
  };
  CHECK(pairs(x64::Isa::avx512, true) == host);
  CHECK_FALSE(pairs(x64::Isa::avx512, false));
  CHECK_FALSE(pairs(x64::Isa::avx2, true));
}

TEST_CASE("matmul bf16: other element types of the product are rejected with a clear error") {
  for (const ElementType t : {ElementType::f16, ElementType::i8}) {
    INFO(to_string(t));
    Graph g;
    const auto a = g.convert(g.parameter(t, Shape{4, 8}), f32);
    g.result(g.matmul(a, g.parameter(f32, Shape{8, 4})));
    CHECK(error_id([&] { compile(g); }) == "snippets.compile.unsupported_matmul");
  }
}

TEST_CASE("matmul bf16: an MLP layer with bf16 weights is one Subgraph, and the Program matches") {
  const Shape sx{8, 64}, sw{64, 96};
  const Tensor x = bf16_values(sx, 12), w = bf16_values(sw, 13), c = bf16_values(Shape{96}, 14);
  std::vector<double> values(w.size());
  for (std::size_t i = 0; i < w.size(); ++i) values[i] = w.at(i);
  Graph g;
  const auto px = g.parameter(bf16, sx, "x");
  const auto y = g.matmul(px, g.constant(bf16, sw, values, "W"));
  g.result(g.relu(g.add(y, g.parameter(bf16, Shape{96}, "b"))), "y");
  const Graph t = passes::tokenize(g);
  int subgraphs = 0;
  for (ir::NodeId id = 0; id < t.size(); ++id) {
    CHECK_FALSE(std::holds_alternative<ir::MatMul>(t.node(id).op)); // not left outside
    subgraphs += std::holds_alternative<ir::Subgraph<x64::Traits>>(t.node(id).op);
  }
  CHECK(subgraphs == 1);
  const std::vector<Tensor> in{x, c};
  const Tensor want = reference::evaluate(g, std::span<const Tensor>(in))[0];
  const Program<> program(g);
  check_steps_are_kernels(program);
  const Tensor got = program.run(in, with_threads(2))[0];
  const std::string report = compare_bounded(got, want, error_bound(x, w, false, false, &want));
  CHECK_MESSAGE(report.empty(), report);
}

TEST_CASE("matmul bf16: a Softmax of a product written as bf16 is refused by compile() and runs "
          "on the reference path in a Program") {
  // SoftmaxRows works in place in the output, on f32 rows: on a bf16 output it wrote twice the
  // output's bytes (found by the matmul fuzz family)
  Graph g;
  const auto q = g.parameter(bf16, Shape{1, 1, 2}, "q"), k = g.parameter(bf16, Shape{1, 2, 8}, "k");
  g.result(g.softmax(g.matmul(q, k), -1), "p");
  CHECK(error_id([&] { compile(g); }) == "snippets.compile.unsupported_matmul");
  const std::vector<Tensor> in{bf16_values(Shape{1, 1, 2}, 15), bf16_values(Shape{1, 2, 8}, 16)};
  const Program<> program(g);
  bool fell_back = false;
  for (const auto& step : program.steps())
    fell_back |= step.note.find("snippets.compile.unsupported_matmul") != std::string::npos;
  CHECK(fell_back);
  const Tensor want = reference::evaluate(g, std::span<const Tensor>(in))[0];
  CHECK(compare(program.run(in)[0], want, exact) == "");
}
