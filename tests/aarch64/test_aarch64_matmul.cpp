// SPDX-License-Identifier: Apache-2.0
// tests/aarch64/test_aarch64_matmul.cpp: MatMul kernels on the AArch64 target
// (passes/lower_brgemm.hpp, target/aarch64/emitters/brgemm.hpp and softmax_rows.hpp),
// cross-compiled and run under qemu-aarch64; the x64 counterparts are tests/test_jit_matmul.cpp
// and tests/test_jit_mha.cpp.
//
//  - products of every M, N and K from 1 to 67 (each tail of the 6 x 16 register tile, of the
//    four-depth steps and of a vector), batch dims broadcast between A and B, transposed A and
//    B, constant weights packed at compile time, bf16 operands (widened), zero sizes;
//  - epilogues: biases broadcast along rows, columns and batches, activations, outputs of
//    other types, two outputs;
//  - an MLP chain and attention (MatMul -> scale/mask -> Softmax -> MatMul, transposes folded),
//    and MatMul -> Softmax;
//  - guard pages around every tensor; Programs whose MatMul Subgraphs all become kernels.
// int8 products: test_aarch64_matmul_int8.cpp.
// Every result is compared with the reference interpreter (double) within the bound of an f32
// sum of K products in another order: (K + 2) 2^-24 sum_k |a_mk| |b_kn| (the reference computes
// the magnitudes as MatMul(|A|, |B|)), times the epilogue's largest slope; attention's bound
// is test_jit_mha.cpp's. 1, 2 and 3 threads.
#include <doctest/doctest.h>

#include <functional>
#include <memory>

#include "aarch64/a64_test_util.hpp"
#include "matmul_test_util.hpp"

using namespace snippets;
using namespace snippets::a64_test;

namespace {

struct Product {
  Shape a, b;
  bool ta = false, tb = false;
  ElementType type = f32;
};

/// The lowered LIR of `g`, as text.
std::string lowered_text(const G& g) {
  auto lir = lower(g, aarch64::Isa::neon);
  return ir::to_string(lir);
}

Dim depth(const Product& p) { return p.ta ? p.a[p.a.rank() - 2] : p.a[p.a.rank() - 1]; }

/// The bound on |got - want| of each output element (see the header).
Tensor error_bound(const Product& p, const Tensor& a, const Tensor& b, double slope) {
  G g;
  g.result(g.matmul(g.parameter(f32, p.a), g.parameter(f32, p.b), p.ta, p.tb));
  const Tensor mag = reference::evaluate(g, {absolute(a), absolute(b)})[0];
  Tensor bound(f32, mag.shape());
  for (std::size_t i = 0; i < mag.size(); ++i)
    bound.set(i, slope * double(depth(p) + 2) * 0x1p-24 * mag.at(i) + 1e-30);
  return bound;
}

/// Compiles `g` (one kernel) and checks every output against the reference with `bound`.
void check_matmul(const G& g, const Tensor& bound, const std::vector<Tensor>& inputs,
                  std::vector<int> threads = {1, 3}) {
  const std::vector<Tensor> want = reference::evaluate(g, std::span<const Tensor>(inputs));
  const CompiledKernel k = compile(g);
  for (const int n : threads) {
    INFO("threads = " << n);
    const auto got = k.run(std::span<const Tensor>(inputs), with_threads(n));
    REQUIRE(got.size() == want.size());
    for (std::size_t o = 0; o < got.size(); ++o) {
      INFO("output " << o);
      REQUIRE(got[o].shape() == want[o].shape());
      const std::string report = compare_bounded(got[o], want[o], bound);
      CHECK_MESSAGE(report.empty(), report);
    }
  }
}

/// Inputs of `type` uniform in [-1, 1] (exact in that type).
Tensor operand(ElementType type, const Shape& s, std::uint64_t seed) {
  return Tensor::from_values(type, s, uniform(s, seed).values().v);
}

void check_product(const Product& p, std::uint64_t seed, std::vector<int> threads = {1, 3}) {
  INFO("A " << p.a.to_string() << (p.ta ? "^T" : "") << " x B " << p.b.to_string()
            << (p.tb ? "^T" : "") << " " << to_string(p.type));
  G g;
  g.result(g.matmul(g.parameter(p.type, p.a), g.parameter(p.type, p.b), p.ta, p.tb));
  const Tensor x = operand(p.type, p.a, seed), y = operand(p.type, p.b, seed + 1);
  Tensor bound = error_bound(p, Tensor::from_values(f32, p.a, x.values().v),
                             Tensor::from_values(f32, p.b, y.values().v), 1);
  if (p.type == ElementType::bf16) { // the output rounds to bf16 once more
    const Tensor want = reference::evaluate(g, {x, y})[0];
    for (std::size_t i = 0; i < bound.size(); ++i)
      bound.set(i, bound.at(i) + 0x1p-8 * (std::fabs(want.at(i)) + bound.at(i)));
  }
  check_matmul(g, bound, {x, y}, std::move(threads));
}

} // namespace

TEST_CASE("aarch64 matmul: MatMul is fusable and becomes one kernel") {
  static_assert(Backend::fusable<ir::MatMul>);
  G g;
  const auto x = g.parameter(f32, Shape{5, 7}, "x");
  g.result(g.relu(
      g.add(g.matmul(x, g.parameter(f32, Shape{7, 9}, "w")), g.parameter(f32, Shape{9}, "b"))));
  const Program<Backend> program(g);
  int kernels = 0;
  for (const auto& s : program.steps()) {
    INFO(s.note);
    CHECK(s.kind != Program<Backend>::StepKind::reference);
    kernels += s.kind == Program<Backend>::StepKind::kernel;
  }
  CHECK(kernels == 1);
  const std::string text = lowered_text(g);
  CHECK(text.find("Brgemm m") != std::string::npos);
}

TEST_CASE("aarch64 matmul: every M, N and K from 1 to 67") {
  std::uint64_t seed = 1;
  for (Dim m = 1; m <= 67; m += m < 14 ? 1 : 9) // each row tail of the 6-row tile, then more
    check_product({{m, 9}, {9, 21}}, seed += 2, {2});
  for (Dim n = 1; n <= 67; ++n) // each vector and panel tail of the 16-column panels
    check_product({{7, 5}, {5, n}}, seed += 2, {1});
  for (Dim k = 1; k <= 67; ++k) // each depth tail of the four-depth steps
    check_product({{6, k}, {k, 19}}, seed += 2, {1});
  for (const Dim m : {Dim{1}, Dim{7}, Dim{13}, Dim{67}})
    for (const Dim n : {Dim{3}, Dim{16}, Dim{33}, Dim{67}})
      for (const Dim k : {Dim{1}, Dim{17}, Dim{67}}) check_product({{m, k}, {k, n}}, seed += 2);
}

TEST_CASE("aarch64 matmul: batch dims broadcast between A and B") {
  std::uint64_t seed = 100;
  for (const Product& p :
       {Product{{2, 1, 3, 5}, {1, 3, 5, 3}}, Product{{3, 1, 32, 14}, {1, 3, 14, 37}},
        Product{{1, 2, 37, 23}, {2, 1, 23, 37}}, Product{{4, 9, 6}, {6, 11}},
        Product{{9, 6}, {3, 6, 11}}, Product{{2, 3, 5, 8}, {8, 4}}})
    check_product(p, seed += 2, {1, 2, 3});
}

TEST_CASE("aarch64 matmul: transposed A, transposed B, and both") {
  std::uint64_t seed = 200;
  for (const bool ta : {false, true})
    for (const bool tb : {false, true})
      for (const Dim k : {Dim{1}, Dim{6}, Dim{21}}) {
        const Dim m = 19, n = 37;
        const Shape a = ta ? Shape{2, k, m} : Shape{2, m, k};
        const Shape b = tb ? Shape{2, n, k} : Shape{2, k, n};
        check_product({a, b, ta, tb}, seed += 2);
      }
}

TEST_CASE("aarch64 matmul: operands stored in another order, read with strides") {
  // A [2, M, K] and B [2, K, N] from the stored order `oa` / `ob` (Transposes folded into the
  // reads): rows apart, columns along the depth (B's 4 x 4 transposes), or both strided (B
  // gathered element by element, A one element per row and depth)
  using Order = std::vector<std::size_t>;
  const Dim m = 9, k = 7, n = 18;
  std::uint64_t seed = 250;
  for (const Order& oa : {Order{1, 0, 2}, Order{2, 1, 0}})
    for (const Order& ob : {Order{1, 0, 2}, Order{1, 2, 0}, Order{2, 0, 1}}) {
      INFO("A's order " << oa[0] << oa[1] << oa[2] << ", B's " << ob[0] << ob[1] << ob[2]);
      auto stored = [](const std::vector<Dim>& logical, const Order& o) {
        std::vector<Dim> s(3);
        for (std::size_t i = 0; i < 3; ++i) s[o[i]] = logical[i];
        return Shape(s);
      };
      const Shape sa = stored({2, m, k}, oa), sb = stored({2, k, n}, ob);
      G g;
      g.result(
          g.matmul(g.transpose(g.parameter(f32, sa), oa), g.transpose(g.parameter(f32, sb), ob)));
      const Tensor a = uniform(sa, ++seed), b = uniform(sb, ++seed);
      Tensor bound = reference::evaluate(g, {absolute(a), absolute(b)})[0];
      for (std::size_t i = 0; i < bound.size(); ++i)
        bound.set(i, double(k + 2) * 0x1p-24 * bound.at(i) + 1e-30);
      check_matmul(g, bound, {a, b}, {1, 2});
    }
}

TEST_CASE("aarch64 matmul: a deep product, K = 700") {
  check_product({{1, 1, 20, 700}, {1, 1, 700, 37}}, 300, {2});
}

TEST_CASE("aarch64 matmul: bf16 operands are widened to f32") {
  std::uint64_t seed = 400;
  for (const bool tb : {false, true})
    for (const Dim k : {Dim{3}, Dim{8}, Dim{29}}) {
      const Dim m = 11, n = 21;
      check_product({{m, k}, tb ? Shape{n, k} : Shape{k, n}, false, tb, ElementType::bf16},
                    seed += 2);
    }
  check_product({{2, 13, 9}, {2, 13, 22}, true, false, ElementType::bf16}, seed += 2);
}

TEST_CASE("aarch64 matmul: constant weights are packed at compile time") {
  for (const bool tb : {false, true})
    for (const Dim n : {Dim{5}, Dim{16}, Dim{70}}) {
      INFO("transpose_b = " << tb << ", n = " << n);
      const Dim m = 13, k = 40;
      const Product p{{m, k}, tb ? Shape{n, k} : Shape{k, n}, false, tb};
      const Tensor a = uniform(p.a, 5), w = uniform(p.b, 6);
      G g;
      const auto x = g.parameter(f32, p.a);
      const auto weights = g.constant(f32, p.b, w.values().v, "W");
      const auto bias = g.parameter(f32, Shape{n}, "bias");
      g.result(g.relu(g.add(g.matmul(x, weights, false, tb), bias)));
      check_matmul(g, error_bound(p, a, w, 1), {a, uniform(Shape{n}, 8)});
      const std::string text = lowered_text(g);
      CHECK(text.find("packed") != std::string::npos);
      CHECK(text.find("BrgemmCopyB") == std::string::npos);
    }
}

TEST_CASE("aarch64 matmul: epilogue ops run on the accumulators") {
  const Product p{{2, 29, 48}, {2, 48, 35}};
  const Tensor a = uniform(p.a, 11), b = uniform(p.b, 12);
  struct Case {
    const char* name;
    double slope;
    std::function<ir::Value(G&, ir::Value)> f;
  };
  const Case cases[] = {
      {"relu", 1, [](G& g, ir::Value y) { return g.relu(y); }},
      {"sigmoid", 0.25, [](G& g, ir::Value y) { return g.sigmoid(y); }},
      {"tanh", 1, [](G& g, ir::Value y) { return g.tanh(y); }},
      {"gelu erf", 1.13, [](G& g, ir::Value y) { return g.gelu(y); }},
      {"gelu tanh", 1.13, [](G& g, ir::Value y) { return g.gelu(y, ir::GeluApproximation::tanh); }},
      {"swish", 1.1, [](G& g, ir::Value y) { return g.swish(y); }},
      {"clamp", 1, [](G& g, ir::Value y) { return g.clamp(y, -0.5, 0.75); }},
      {"exp", std::exp(7.5), [](G& g, ir::Value y) { return g.exp(y); }}, // |y| < 7.5 here
      {"scale, bias, gelu", 1.13 * 3,
       [](G& g, ir::Value y) {
         const auto s = g.multiply(y, g.constant(f32, Shape{1}, {3.0}));
         return g.gelu(g.add(s, g.constant(f32, Shape{1}, {0.5})));
       }},
  };
  for (const Case& c : cases) {
    INFO("epilogue: " << std::string(c.name));
    G g;
    const auto y = g.matmul(g.parameter(f32, p.a), g.parameter(f32, p.b));
    g.result(c.f(g, y));
    check_matmul(g, error_bound(p, a, b, c.slope), {a, b}, {1, 2});
  }
}

TEST_CASE("aarch64 matmul: epilogue inputs broadcast along rows, columns and batches") {
  const Product p{{3, 21, 16}, {3, 16, 45}};
  std::uint64_t seed = 500;
  for (const Shape& bias : {Shape{45}, Shape{21, 1}, Shape{21, 45}, Shape{3, 1, 45},
                            Shape{3, 21, 45}, Shape{1}, Shape{3, 1, 1}}) {
    INFO("bias " << bias.to_string());
    G g;
    const auto y = g.matmul(g.parameter(f32, p.a), g.parameter(f32, p.b));
    g.result(g.add(y, g.parameter(f32, bias)));
    const Tensor a = uniform(p.a, ++seed), b = uniform(p.b, ++seed);
    check_matmul(g, error_bound(p, a, b, 1), {a, b, uniform(bias, ++seed)});
  }
}

TEST_CASE("aarch64 matmul: outputs and epilogue inputs of other types") {
  const Product p{{10, 12}, {12, 19}};
  const Tensor a = uniform(p.a, 1, -4, 4), b = uniform(p.b, 2, -4, 4);
  for (const ElementType t :
       {ElementType::f16, ElementType::bf16, ElementType::i32, ElementType::i8, ElementType::u8}) {
    INFO("output " << to_string(t));
    G g;
    const auto y = g.matmul(g.parameter(f32, p.a), g.parameter(f32, p.b));
    const auto bias = g.convert(g.parameter(ElementType::f16, Shape{19}), f32);
    g.result(g.convert(g.add(y, bias), t));
    const std::vector<Tensor> in{a, b, operand(ElementType::f16, Shape{19}, 3)};
    const Tensor want = reference::evaluate(g, std::span<const Tensor>(in))[0];
    const Tensor got = compile(g).run(std::span<const Tensor>(in), with_threads(2))[0];
    // a sum within the product bound may round to a neighbour of the reference's value
    const Tensor bound = error_bound(p, a, b, 1);
    std::size_t bad = 0;
    for (std::size_t i = 0; i < want.size(); ++i) {
      const double tol = t == ElementType::f16 ? 0x1p-10 : 0x1p-7; // one ulp
      const bool integer = t == ElementType::i32 || t == ElementType::i8 || t == ElementType::u8;
      const double err = std::fabs(got.at(i) - want.at(i));
      bad += integer ? err > 1 : err > tol * std::fabs(want.at(i)) + bound.at(i) + 1e-30;
    }
    CHECK(bad == 0);
  }
}

TEST_CASE("aarch64 matmul: ops on the epilogue's inputs alone run on their broadcast registers") {
  // a bias [N] rounded to f16 and a column scale [M,1]: the products of their broadcast
  // registers, then added to the accumulators (docs/matmul.md)
  const Product p{{2, 10, 12}, {12, 19}};
  const Tensor a = uniform(p.a, 4), b = uniform(p.b, 5);
  G g;
  const auto pa = g.parameter(f32, p.a);
  const auto y = g.matmul(pa, g.parameter(f32, p.b));
  const auto bias = g.convert(g.convert(g.parameter(f32, Shape{19}), ElementType::f16), f32);
  const auto scale = g.abs(g.parameter(f32, Shape{10, 1}));
  g.result(g.add(y, g.multiply(bias, scale)));
  check_matmul(g, error_bound(p, a, b, 1), {a, b, uniform(Shape{19}, 6), uniform(Shape{10, 1}, 7)});
}

TEST_CASE("aarch64 matmul: two outputs, the product and its activation") {
  const Product p{{8, 40}, {40, 70}};
  G g;
  const auto y =
      g.add(g.matmul(g.parameter(f32, p.a), g.parameter(f32, p.b)), g.parameter(f32, Shape{70}));
  g.result(y);
  g.result(g.relu(y));
  const Tensor a = uniform(p.a, 1), b = uniform(p.b, 2);
  check_matmul(g, error_bound(p, a, b, 1), {a, b, uniform(Shape{70}, 3)});
}

TEST_CASE("aarch64 matmul: zero sizes") {
  for (const Product& p : {Product{{0, 5}, {5, 7}}, Product{{4, 5}, {5, 0}},
                           Product{{4, 0}, {0, 7}}, Product{{2, 0, 3}, {3, 6}}}) {
    INFO("A " << p.a.to_string() << " x B " << p.b.to_string());
    G g;
    const auto y = g.matmul(g.parameter(f32, p.a), g.parameter(f32, p.b));
    const Shape out = g.type(y).shape;
    g.result(g.add(y, g.parameter(f32, Shape{out[out.rank() - 1]})));
    const std::vector<Tensor> in{uniform(p.a, 1), uniform(p.b, 2),
                                 uniform(Shape{out[out.rank() - 1]}, 3)};
    const Tensor want = reference::evaluate(g, std::span<const Tensor>(in))[0];
    const Program<Backend> program(g); // an empty product may stay on the reference path
    const Tensor got = program.run(in, with_threads(2))[0];
    REQUIRE(got.shape() == want.shape());
    const std::string report = compare(got, want, exact);
    CHECK_MESSAGE(report.empty(), report);
  }
}

TEST_CASE("aarch64 matmul: tails never touch memory past the tensors") {
  const Dim m = 9, k = 13, n = 19;
  for (const bool tb : {false, true}) {
    INFO("transpose_b = " << tb);
    G g;
    const Shape sb = tb ? Shape{n, k} : Shape{k, n};
    g.result(g.relu(g.add(g.matmul(g.parameter(f32, Shape{m, k}), g.parameter(f32, sb), false, tb),
                          g.parameter(f32, Shape{n}))));
    const std::vector<Tensor> in{uniform(Shape{m, k}, 1), uniform(sb, 2), uniform(Shape{n}, 3)};
    const Tensor want = reference::evaluate(g, std::span<const Tensor>(in))[0];
    const Tensor bound = error_bound({{m, k}, sb, false, tb}, in[0], in[1], 1);
    const CompiledKernel kernel = compile(g);
    for (const Guard where : {Guard::after, Guard::before}) {
      const std::string report =
          compare_bounded(run_guarded(kernel, in, want, where, 2), want, bound);
      CHECK_MESSAGE(report.empty(), report);
    }
  }
}

TEST_CASE("aarch64 matmul: an MLP chain is one kernel, its activations in scratch") {
  struct Layer {
    Dim width;
    bool constant = true, tb = false;
  };
  struct Case {
    Shape x;
    std::vector<Layer> layers;
    bool residual = false;
  };
  const std::vector<Case> cases{
      {{1, 64}, {{64}, {64}, {64}}},
      {{9, 24}, {{24}}, true},
      {{2, 3, 17, 20}, {{33, false}, {20, true}}, true},
      {{7, 17}, {{33}, {15, false, true}, {31}}},
      {{33, 100}, {{65, false}, {17, true, true}}},
  };
  std::uint64_t seed = 600;
  for (const Case& c : cases) {
    INFO("x " << c.x.to_string() << ", " << c.layers.size() << " layers"
              << (c.residual ? ", + x" : ""));
    G g;
    const auto x0 = g.parameter(f32, c.x, "x");
    std::vector<Tensor> in{uniform(c.x, ++seed)};
    ir::Value x = x0;
    Dim k = c.x[c.x.rank() - 1];
    for (const Layer& l : c.layers) {
      const Shape ws = l.tb ? Shape{l.width, k} : Shape{k, l.width};
      const double r = 1.5 / std::sqrt(double(k));
      const Tensor w = uniform(ws, ++seed, -r, r);
      ir::Value wv;
      if (l.constant) {
        wv = g.constant(f32, ws, w.values().v, "w");
      } else {
        wv = g.parameter(f32, ws, "w");
        in.push_back(w);
      }
      x = g.relu(g.add(g.matmul(x, wv, false, l.tb), g.parameter(f32, Shape{l.width}, "b")));
      in.push_back(uniform(Shape{l.width}, ++seed));
      k = l.width;
    }
    if (c.residual) x = g.add(x, x0);
    g.result(x, "y");
    const Program<Backend> program(g);
    for (const auto& s : program.steps()) {
      INFO(s.note);
      CHECK(s.kind != Program<Backend>::StepKind::reference);
    }
    const Tensor want = reference::evaluate(g, std::span<const Tensor>(in))[0];
    for (const int threads : {1, 3}) {
      const Tensor got = program.run(in, with_threads(threads))[0];
      const std::string report = compare(got, want, {64, 1e-5});
      CHECK_MESSAGE(report.empty(), report);
    }
  }
}

namespace {

/// Attention as a transformer layer has it (test_jit_mha.cpp): Q, K, V [B, S, H, D], or
/// (`planar`) Q, V [B*H, S, D] and K [B*H, D, S] (or, with `k_rows`, [B*H, S, D] read
/// transposed); out = softmax(Q K^T * scale + mask) V.
struct Attention {
  Dim b = 1, s = 8, h = 2, d = 16, kv = 0;
  Shape mask;
  bool planar = false, k_rows = false;
  double scale = 0.125;
  Dim keys() const { return kv ? kv : s; }
  std::vector<Shape> inputs() const {
    std::vector<Shape> in;
    if (planar)
      in = {Shape{b * h, s, d}, k_rows ? Shape{b * h, keys(), d} : Shape{b * h, d, keys()},
            Shape{b * h, keys(), d}};
    else
      in = {Shape{b, s, h, d}, Shape{b, keys(), h, d}, Shape{b, keys(), h, d}};
    if (mask.rank()) in.push_back(mask);
    return in;
  }
};

/// `upto`: 0 the whole attention, 1 the probabilities, 3 the bare product Q K^T.
G build(const Attention& a, int upto = 0) {
  G g;
  const auto in = a.inputs();
  auto q = g.parameter(f32, in[0], "q"), k = g.parameter(f32, in[1], "k"),
       v = g.parameter(f32, in[2], "v");
  if (!a.planar) {
    q = g.transpose(q, {0, 2, 1, 3});
    k = g.transpose(k, {0, 2, 3, 1});
    v = g.transpose(v, {0, 2, 1, 3});
  }
  auto scores = g.matmul(q, k, false, a.planar && a.k_rows);
  if (upto != 3) {
    scores = g.multiply(scores, g.constant(f32, Shape{1}, {a.scale}, "scale"));
    if (a.mask.rank()) scores = g.add(scores, g.parameter(f32, a.mask, "mask"));
  }
  if (upto == 3) {
    g.result(scores);
  } else if (upto == 1) {
    g.result(g.softmax(scores, -1));
  } else {
    const auto out = g.matmul(g.softmax(scores, -1), v);
    g.result(a.planar ? out : g.transpose(out, {0, 2, 1, 3}));
  }
  return g;
}

/// The output's bound (test_jit_mha.cpp): (2 ds + (2 N + 16) 2^-24) (P |V|), ds the scores'
/// bound scale (D + 2) 2^-24 max |Q| |K|^T; the probabilities alone (`upto` 1): that relative
/// error of each.
void check_attention(const Attention& a, int upto = 0, std::vector<int> threads = {1, 3}) {
  INFO((a.planar ? "planar " : "") << "b" << a.b << " s" << a.s << " kv" << a.keys() << " h" << a.h
                                   << " d" << a.d << " mask " << a.mask.to_string());
  std::vector<Tensor> in;
  std::uint64_t seed = 17;
  for (const Shape& s : a.inputs()) in.push_back(uniform(s, ++seed, -2, 2));
  const G g = build(a, upto);
  const std::vector<Tensor> want = reference::evaluate(g, std::span<const Tensor>(in));
  std::vector<Tensor> mags{absolute(in[0]), absolute(in[1]), in[2]};
  const Tensor qk = reference::evaluate(build(a, 3), std::span<const Tensor>(mags))[0];
  double max_qk = 0;
  for (std::size_t i = 0; i < qk.size(); ++i) max_qk = std::max(max_qk, qk.at(i));
  const double rel =
      2 * a.scale * double(a.d + 2) * 0x1p-24 * max_qk + double(2 * a.keys() + 16) * 0x1p-24;
  std::vector<Tensor> with_abs_v = in;
  with_abs_v[2] = absolute(in[2]);
  Tensor bound =
      upto == 1 ? want[0] : reference::evaluate(g, std::span<const Tensor>(with_abs_v))[0];
  for (std::size_t i = 0; i < bound.size(); ++i) bound.set(i, rel * std::fabs(bound.at(i)) + 1e-30);
  const CompiledKernel k = compile(g);
  for (const int n : threads) {
    INFO("threads = " << n);
    const auto got = k.run(std::span<const Tensor>(in), with_threads(n));
    REQUIRE(got[0].shape() == want[0].shape());
    const std::string report = compare_bounded(got[0], want[0], bound);
    CHECK_MESSAGE(report.empty(), report);
  }
}

} // namespace

TEST_CASE("aarch64 matmul: attention, MatMul -> scale/mask -> Softmax -> MatMul, one kernel") {
  check_attention({});
  check_attention({.b = 2, .s = 13, .h = 3, .d = 17, .mask = Shape{2, 1, 1, 13}});
  check_attention({.b = 1, .s = 5, .h = 2, .d = 8, .kv = 19, .mask = Shape{5, 19}});
  check_attention({.b = 2, .s = 17, .h = 1, .d = 32, .planar = true});
  check_attention({.b = 1, .s = 9, .h = 4, .d = 16, .kv = 23, .planar = true, .k_rows = true});
  check_attention({.b = 1, .s = 67, .h = 1, .d = 8, .kv = 67, .planar = true});
  const G g = build({});
  const std::string text = lowered_text(g);
  CHECK(text.find("SoftmaxRows") != std::string::npos);
}

TEST_CASE("aarch64 matmul: many threads share heads and blocks of query rows") {
  // runtime/work_division.hpp: 100 rows in blocks of 8 and a tail of 4, the M loop counting
  // work[1]; 5 and 64 threads divide nothing
  check_attention({.b = 1, .s = 100, .h = 3, .d = 16, .mask = Shape{1, 3, 100, 100}}, 0, {5, 64});
  check_attention({.b = 1, .s = 20, .h = 2, .d = 8, .kv = 13, .planar = true}, 1, {3, 64});
  check_product({{3, 45, 9}, {3, 9, 21}}, 31, {5, 64});
}

TEST_CASE("aarch64 matmul: MatMul -> Softmax writes the probabilities") {
  check_attention({.b = 1, .s = 7, .h = 2, .d = 8, .kv = 13, .planar = true}, 1);
  check_attention({.b = 2, .s = 3, .h = 1, .d = 5, .kv = 4, .planar = true}, 1);
  check_attention({.b = 1, .s = 6, .h = 2, .d = 8, .kv = 37, .mask = Shape{6, 37}}, 1);
}
