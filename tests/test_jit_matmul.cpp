// SPDX-License-Identifier: Apache-2.0
// JIT tests of MatMul kernels (passes/lower_brgemm.hpp, target/x64/emitters/brgemm.hpp): the
// product with its epilogue against the reference interpreter in double, on both ISAs and
// 1-3 threads.
//
// Tolerance: the kernel sums K products in f32 in another order than the reference, so an
// element may be off by (K + 2) * 2^-24 * sum_k |a_mk| |b_kn| (the reference computes that
// magnitude too, as MatMul(|A|, |B|)), times the epilogue's largest slope (`slope`), plus a
// few ulp of the epilogue's own rounding.
#include "matmul_test_util.hpp"

using namespace snippets;
using namespace snippets::jit_test;

namespace {

struct Product {
  Shape a, b;
  bool ta = false, tb = false;
};

/// The bound on |got - want| of each output element (see the header).
Tensor error_bound(const Product& p, const Tensor& a, const Tensor& b, double slope) {
  Graph g;
  const auto pa = g.parameter(f32, p.a);
  const auto pb = g.parameter(f32, p.b);
  g.result(g.matmul(pa, pb, p.ta, p.tb));
  const Tensor mag = reference::evaluate(g, {absolute(a), absolute(b)})[0];
  const Dim k = p.ta ? p.a[p.a.rank() - 2] : p.a[p.a.rank() - 1];
  Tensor bound(f32, mag.shape());
  for (std::size_t i = 0; i < mag.size(); ++i)
    bound.set(i, slope * double(k + 2) * 0x1p-24 * mag.at(i) + 1e-30);
  return bound;
}

/// Compiles `g` for both ISAs and checks every output against the reference with `bound`.
void check_matmul(const Graph& g, const Tensor& bound, const std::vector<Tensor>& inputs,
                  std::vector<int> threads = {1, 3}) {
  const std::vector<Tensor> want = reference::evaluate(g, std::span<const Tensor>(inputs));
  for_each_isa([&](x64::Isa isa) {
    const CompiledKernel k = compile(g, {.isa = isa});
    for (const int n : threads) {
      INFO("threads = " << n);
      const auto got = k.run(std::span<const Tensor>(inputs), with_threads(n));
      for (std::size_t o = 0; o < got.size(); ++o) {
        INFO("output " << o);
        REQUIRE(got[o].shape() == want[o].shape());
        const std::string report = compare_bounded(got[o], want[o], bound);
        CHECK_MESSAGE(report.empty(), report);
      }
    }
  });
}

void check_product(const Product& p, std::uint64_t seed, std::vector<int> threads = {1, 3}) {
  INFO("A " << p.a.to_string() << (p.ta ? "^T" : "") << " x B " << p.b.to_string()
            << (p.tb ? "^T" : ""));
  Graph g;
  const auto a = g.parameter(f32, p.a);
  const auto b = g.parameter(f32, p.b);
  g.result(g.matmul(a, b, p.ta, p.tb));
  const Tensor x = uniform(p.a, seed), y = uniform(p.b, seed + 1);
  check_matmul(g, error_bound(p, x, y, 1), {x, y}, std::move(threads));
}

} // namespace

TEST_CASE("matmul: the shapes of the issue, with batch broadcasting") {
  std::uint64_t seed = 1;
  for (const Product& p :
       {Product{{2, 1, 3, 5}, {1, 3, 5, 3}}, Product{{3, 1, 32, 14}, {1, 3, 14, 37}},
        Product{{1, 2, 37, 23}, {2, 1, 23, 37}}, Product{{1, 1, 32, 23}, {1, 1, 23, 68}}})
    check_product(p, seed += 2);
}

TEST_CASE("matmul: a deep product, K = 700, 1024 and 2500") {
  std::uint64_t seed = 100;
  for (const Dim k : {Dim{700}, Dim{1024}, Dim{2500}})
    check_product({{1, 1, 100, k}, {1, 1, k, 100}}, seed += 2, {2});
}

TEST_CASE("matmul: attention-sized batch [1,16,384,64] x [1,16,64,384]") {
  check_product({{1, 16, 384, 64}, {1, 16, 64, 384}}, 7, {2});
}

TEST_CASE("matmul: one batch dim, its rows shared among many threads, with tails") {
  // 3 x 100 rows in blocks of 8 and a tail of 4; B packed per batch index by every thread
  check_product({{3, 100, 17}, {3, 17, 33}}, 11, {2, 5, 7, 64});
  check_product({{2, 1, 45, 9}, {2, 1, 9, 70}}, 13, {3, 64});
}

TEST_CASE("matmul: odd sizes in every dimension") {
  std::uint64_t seed = 200;
  for (const Dim m : {Dim{1}, Dim{7}, Dim{17}, Dim{33}})
    for (const Dim n : {Dim{1}, Dim{15}, Dim{31}, Dim{65}})
      for (const Dim k : {Dim{1}, Dim{17}}) check_product({{m, k}, {k, n}}, seed += 2, {1, 2});
}

TEST_CASE("matmul: the register tile suits the rows, and every tile it may choose is right") {
  // the tile chosen for each M (passes/brgemm_blocking.hpp, choose_tile): 1 to 8 rows by 1 to
  // 4 vectors on AVX-512, by 1 or 2 on AVX2, a short last tile or none
  std::uint64_t seed = 900;
  for (Dim m = 1; m <= 17; ++m)
    for (const Dim n : {Dim{16}, Dim{40}, Dim{100}}) check_product({{m, 19}, {19, n}}, seed += 2);
  auto tile = [](Dim m, Dim n, x64::Isa isa) {
    Graph g;
    g.result(g.matmul(g.parameter(f32, {m, 256}), g.parameter(f32, {256, n})));
    auto lowered = lower(g, isa);
    const std::string text = ir::to_string(lowered);
    const std::size_t at = text.find(" tile ");
    REQUIRE(at != std::string::npos);
    return text.substr(at + 6, text.find(' ', at + 6) - at - 6);
  };
  for_each_isa([&](x64::Isa isa) {
    INFO(x64::to_string(isa));
    if (isa == x64::Isa::avx512) {
      CHECK(tile(1024, 1024, isa) == "6x4"); // many rows: the fewest loads per product
      CHECK(tile(12, 256, isa) == "6x4");
      CHECK(tile(8, 256, isa) == "8x3"); // not 6 rows and then 2, which stream B from L2 again
      CHECK(tile(4, 256, isa) == "4x4");
    } else {
      CHECK(tile(1024, 1024, isa) == "6x2");
      CHECK(tile(8, 256, isa) == "4x2");
    }
  });
}

TEST_CASE("matmul: transposed A, transposed B, and both") {
  std::uint64_t seed = 300;
  for (const bool ta : {false, true})
    for (const bool tb : {false, true}) {
      const Dim m = 19, k = 21, n = 37;
      const Shape a = ta ? Shape{2, k, m} : Shape{2, m, k};
      const Shape b = tb ? Shape{2, n, k} : Shape{2, k, n};
      check_product({a, b, ta, tb}, seed += 2);
    }
}

TEST_CASE("matmul: constant weights are packed at compile time") {
  for (const bool tb : {false, true}) {
    INFO("transpose_b = " << tb);
    const Dim m = 13, k = 40, n = 70;
    const Product p{{m, k}, tb ? Shape{n, k} : Shape{k, n}, false, tb};
    const Tensor a = uniform(p.a, 5), w = uniform(p.b, 6);
    Graph g;
    const auto x = g.parameter(f32, p.a);
    std::vector<double> values(w.size());
    for (std::size_t i = 0; i < w.size(); ++i) values[i] = w.at(i);
    const auto weights = g.constant(f32, p.b, values, "W");
    const auto bias = g.parameter(f32, Shape{n}, "bias");
    g.result(g.relu(g.add(g.matmul(x, weights, false, tb), bias)));
    check_matmul(g, error_bound(p, a, w, 1), {a, uniform(Shape{n}, 8)});
    auto lowered = lower(g, x64::best_host_isa());
    const std::string text = ir::to_string(lowered);
    CHECK(text.find("packed") != std::string::npos);
    CHECK(text.find("BrgemmCopyB") == std::string::npos);
  }
}

TEST_CASE("matmul: every epilogue op runs on the accumulators") {
  const Product p{{2, 29, 48}, {2, 48, 35}};
  const Tensor a = uniform(p.a, 11), b = uniform(p.b, 12);
  struct Case {
    const char* name;
    double slope;
    std::function<ir::Value(Graph&, ir::Value)> f;
  };
  const Case cases[] = {
      {"relu", 1, [](Graph& g, ir::Value y) { return g.relu(y); }},
      {"sigmoid", 0.25, [](Graph& g, ir::Value y) { return g.sigmoid(y); }},
      {"tanh", 1, [](Graph& g, ir::Value y) { return g.tanh(y); }},
      {"gelu erf", 1.13, [](Graph& g, ir::Value y) { return g.gelu(y); }},
      {"gelu tanh", 1.13,
       [](Graph& g, ir::Value y) { return g.gelu(y, ir::GeluApproximation::tanh); }},
      {"swish", 1.1, [](Graph& g, ir::Value y) { return g.swish(y); }},
      {"clamp", 1, [](Graph& g, ir::Value y) { return g.clamp(y, -0.5, 0.75); }},
      // exp's slope is exp(y) itself; |y| stays below 7.5 here
      {"exp", std::exp(7.5), [](Graph& g, ir::Value y) { return g.exp(y); }},
      {"scale", 0.125,
       [](Graph& g, ir::Value y) { return g.multiply(y, g.constant(f32, Shape{1}, {0.125})); }},
      {"scale, bias, gelu", 1.13 * 3,
       [](Graph& g, ir::Value y) {
         const auto s = g.multiply(y, g.constant(f32, Shape{1}, {3.0}));
         return g.gelu(g.add(s, g.constant(f32, Shape{1}, {0.5})));
       }},
  };
  for (const Case& c : cases) {
    INFO("epilogue: " << std::string(c.name));
    Graph g;
    const auto pa = g.parameter(f32, p.a);
    const auto y = g.matmul(pa, g.parameter(f32, p.b));
    g.result(c.f(g, y));
    check_matmul(g, error_bound(p, a, b, c.slope), {a, b}, {1, 2});
  }
}

TEST_CASE("matmul: epilogue inputs broadcast along rows, columns and batches") {
  const Product p{{3, 21, 16}, {3, 16, 45}};
  std::uint64_t seed = 400;
  for (const Shape& bias : {Shape{45}, Shape{21, 1}, Shape{21, 45}, Shape{3, 1, 45},
                            Shape{3, 21, 45}, Shape{1}, Shape{3, 1, 1}}) {
    INFO("bias " << bias.to_string());
    Graph g;
    const auto pa = g.parameter(f32, p.a);
    const auto y = g.matmul(pa, g.parameter(f32, p.b));
    g.result(g.add(y, g.parameter(f32, bias)));
    const Tensor a = uniform(p.a, ++seed), b = uniform(p.b, ++seed);
    check_matmul(g, error_bound(p, a, b, 1), {a, b, uniform(bias, ++seed)});
  }
}

TEST_CASE("matmul: an output transposed along its rows, also when N = 1") {
  // [B, M, N] written as [M, B, N]: rows of N stay contiguous, the row stride is B * N; with
  // N = 1 the innermost axis of extent above 1 moves, which elementwise kernels refuse
  std::uint64_t seed = 450;
  for (const Dim n : {Dim{1}, Dim{5}, Dim{37}}) {
    INFO("N = " << n);
    const Product p{{3, 64, 16}, {16, n}};
    for (const bool softmax : {false, true}) {
      INFO("softmax " << softmax);
      Graph g;
      const auto pa = g.parameter(f32, p.a);
      const auto y = g.matmul(pa, g.parameter(f32, p.b));
      g.result(g.transpose(softmax ? g.softmax(y) : g.relu(y), {1, 0, 2}));
      const Tensor a = uniform(p.a, ++seed), b = uniform(p.b, ++seed);
      // |x| <= K = 16: probabilities within 2 (K + 2) K 2^-24 + (2 N + 16) 2^-24 (test_jit_mha)
      Tensor bound = Tensor::from_values(f32, Shape{1}, {(2.0 * 18 * 16 + 2.0 * n + 16) * 0x1p-24});
      if (!softmax) { // the product's bound, transposed as the output
        Graph t;
        t.result(t.transpose(t.parameter(f32, Shape{3, 64, n}), {1, 0, 2}));
        bound = reference::evaluate(t, {error_bound(p, a, b, 1)})[0];
      }
      check_matmul(g, bound, {a, b});
    }
  }
}

TEST_CASE("matmul: two outputs, the product and its activation (MLP layer)") {
  const Product p{{8, 128}, {128, 256}};
  Graph g;
  const auto pa = g.parameter(f32, p.a);
  const auto pb = g.parameter(f32, p.b);
  const auto y = g.add(g.matmul(pa, pb), g.parameter(f32, Shape{256}));
  g.result(y);
  g.result(g.relu(y));
  const Tensor a = uniform(p.a, 1), b = uniform(p.b, 2);
  check_matmul(g, error_bound(p, a, b, 1), {a, b, uniform(Shape{256}, 3)});
}

/// One layer of an MLP chain: relu/gelu/identity(x W + b), W [K, width] (or [width, K] read
/// transposed), a Constant (packed at compile time) or an input.
struct Layer {
  Dim width;
  bool constant = true, tb = false;
  enum { relu, gelu, none } act = relu;
};

/// x [..., M, K0] through `layers` (then `+ x` if `residual`) as one graph, its inputs (x, then
/// each input W and each b), and the bound on |got - want| of the output (the header's
/// per-product bound, carried through the next products: e_l = (K + 2) 2^-24 (|x| |W| + |b|) +
/// e_{l-1} |W|, times the activation's slope, plus its own rounding).
struct Mlp {
  Graph g;
  std::vector<Tensor> inputs;
  Tensor bound;
};
Mlp mlp(const Shape& x_shape, const std::vector<Layer>& layers, bool residual = false) {
  Mlp m;
  const std::size_t R = x_shape.rank();
  const std::size_t rows = std::size_t(x_shape.element_count() / x_shape[R - 1]);
  const ir::Value x0 = m.g.parameter(f32, x_shape, "x");
  ir::Value x = x0;
  m.inputs.push_back(uniform(x_shape, 1));
  std::vector<double> v(m.inputs[0].size()), e(v.size(), 0.0); // values and bounds, row-major
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = m.inputs[0].at(i);
  Dim k = x_shape[R - 1];
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const Layer& L = layers[l];
    const Shape ws = L.tb ? Shape{L.width, k} : Shape{k, L.width};
    const Tensor w = uniform(ws, 10 + l, -1.5 / std::sqrt(double(k)), 1.5 / std::sqrt(double(k)));
    const Tensor b = uniform(Shape{L.width}, 20 + l);
    const std::string n = std::to_string(l);
    ir::Value wv;
    if (L.constant) {
      wv = m.g.constant(f32, ws, w.values().v, std::string("w").append(n));
    } else {
      wv = m.g.parameter(f32, ws, std::string("w").append(n));
      m.inputs.push_back(w);
    }
    m.inputs.push_back(b);
    ir::Value y = m.g.add(m.g.matmul(x, wv, false, L.tb), m.g.parameter(f32, Shape{L.width}));
    if (L.act == Layer::relu) y = m.g.relu(y);
    if (L.act == Layer::gelu) y = m.g.gelu(y, ir::GeluApproximation::tanh);
    x = y;
    std::vector<double> nv(rows * std::size_t(L.width)), ne(nv.size());
    for (std::size_t r = 0; r < rows; ++r)
      for (Dim c = 0; c < L.width; ++c) {
        double z = b.at(std::size_t(c)), mag = std::fabs(z), carried = 0;
        for (Dim d = 0; d < k; ++d) {
          const double wd = w.at(std::size_t(L.tb ? c * k + d : d * L.width + c));
          z += v[r * std::size_t(k) + std::size_t(d)] * wd;
          mag += std::fabs(v[r * std::size_t(k) + std::size_t(d)] * wd);
          carried += e[r * std::size_t(k) + std::size_t(d)] * std::fabs(wd);
        }
        const double slope = L.act == Layer::gelu ? 1.13 : 1;
        double out = z, own = 0;
        if (L.act == Layer::relu) out = std::max(z, 0.0);
        if (L.act == Layer::gelu) {
          out = 0.5 * z * (1 + std::tanh(0.7978845608028654 * (z + 0.044715 * z * z * z)));
          own = 16 * 0x1p-24 * std::fabs(out) + 1e-6;
        }
        nv[r * std::size_t(L.width) + std::size_t(c)] = out;
        ne[r * std::size_t(L.width) + std::size_t(c)] =
            slope * (double(k + 2) * 0x1p-24 * mag + carried) + own;
      }
    v = std::move(nv), e = std::move(ne), k = L.width;
  }
  if (residual) { // the epilogue reads A again: the pointer it shares moves once
    x = m.g.add(x, x0);
    for (std::size_t i = 0; i < v.size(); ++i) {
      v[i] += m.inputs[0].at(i);
      e[i] += 0x1p-24 * std::fabs(v[i]);
    }
  }
  m.g.result(x, "y");
  Shape out_shape = x_shape;
  out_shape[R - 1] = k;
  m.bound = Tensor(f32, out_shape);
  for (std::size_t i = 0; i < e.size(); ++i) m.bound.set(i, e[i] + 1e-30);
  return m;
}

TEST_CASE("matmul: a chain of products (an MLP) is one kernel, its activations in scratch") {
  using L = Layer;
  struct Case {
    Shape x;
    std::vector<Layer> layers;
    bool residual = false;
  };
  const std::vector<Case> cases{
      {{1, 64}, {{64}, {64}, {64}}},
      {{9, 24}, {{24}}, true},
      {{64, 64}, {{256, true, false, L::gelu}, {64, true, false, L::none}}, true},
      {{2, 3, 17, 20}, {{33, false}, {20, true, false, L::none}}, true},
      {{7, 17}, {{33, true, false, L::gelu}, {15}, {31, true, false, L::none}}},
      {{33, 100}, {{65, false}, {17, true, true}}},
      {{130, 48}, {{96}, {200, false, true, L::gelu}, {40}, {24, true, false, L::none}}},
      {{2, 3, 17, 20}, {{33}, {5, false}, {70}}},
      {{384, 64}, {{256}, {256}, {64}}},
      // 8 tensors (x, 3 W, 3 b, y) and the residual, which reads x again: still 8 (was
      // counted as a ninth and refused, though the tokenizer made it one Subgraph)
      {{16, 24}, {{24, false}, {32, false}, {24, false}}, true},
  };
  for (const Case& c : cases) {
    const std::string plus = c.residual ? ", + x" : "";
    INFO("x " << c.x.to_string() << ", " << c.layers.size() << " layers" << plus);
    const Mlp m = mlp(c.x, c.layers, c.residual);
    check_matmul(m.g, m.bound, m.inputs, {1, 2, 3});
    auto lowered = lower(m.g, x64::best_host_isa());
    const std::string text = ir::to_string(lowered);
    std::size_t brgemms = 0;
    for (std::size_t at = text.find("Brgemm m"); at != std::string::npos;
         at = text.find("Brgemm m", at + 1))
      ++brgemms;
    CHECK(brgemms >= c.layers.size()); // (a tail block repeats them)
  }
}

TEST_CASE("matmul: tails never touch memory past the tensors") {
  const Dim m = 9, k = 13, n = 19;
  Graph g;
  const auto pa = g.parameter(f32, Shape{m, k});
  const auto pb = g.parameter(f32, Shape{k, n});
  g.result(g.relu(g.add(g.matmul(pa, pb), g.parameter(f32, Shape{n}))));
  const std::vector<Tensor> in{uniform(Shape{m, k}, 1), uniform(Shape{k, n}, 2),
                               uniform(Shape{n}, 3)};
  const Tensor want = reference::evaluate(g, std::span<const Tensor>(in))[0];
  const Tensor bound = error_bound({{m, k}, {k, n}}, in[0], in[1], 1);
  for_each_isa([&](x64::Isa isa) {
    const CompiledKernel kernel = compile(g, {.isa = isa});
    for (const Guard where : {Guard::after, Guard::before}) {
      const std::string report =
          compare_bounded(run_guarded(kernel, in, want, where, 2), want, bound);
      CHECK_MESSAGE(report.empty(), report);
    }
  });
}

TEST_CASE("matmul: bodies outside the Brgemm form are rejected with a clear error") {
  SUBCASE("a product that reads a value of a product two steps back") {
    Graph g;
    const auto a = g.parameter(f32, Shape{4, 4}), w = g.parameter(f32, Shape{4, 4});
    const auto y1 = g.matmul(a, w);
    g.result(g.matmul(g.add(g.matmul(y1, w), y1), w));
    CHECK(error_id([&] { compile(g); }) == "snippets.compile.unsupported_matmul");
  }
  SUBCASE("an output of a product before the last one") {
    Graph g;
    const auto a = g.parameter(f32, Shape{4, 4}), w = g.parameter(f32, Shape{4, 4});
    const auto y1 = g.relu(g.matmul(a, w));
    g.result(y1);
    g.result(g.matmul(y1, w));
    CHECK(error_id([&] { compile(g); }) == "snippets.compile.unsupported_matmul");
  }
  SUBCASE("an epilogue that reads B") {
    Graph g;
    const auto a = g.parameter(f32, Shape{4, 4}), w = g.parameter(f32, Shape{4, 4});
    g.result(g.add(g.matmul(a, w), w));
    CHECK(error_id([&] { compile(g); }) == "snippets.compile.unsupported_matmul");
  }
  SUBCASE("A computed in the kernel") {
    Graph g;
    g.result(g.matmul(g.relu(g.parameter(f32, Shape{4, 4})), g.parameter(f32, Shape{4, 4})));
    CHECK(error_id([&] { compile(g); }) == "snippets.compile.unsupported_matmul");
  }
  SUBCASE("an epilogue that broadcasts the product further") {
    Graph g;
    const auto y = g.matmul(g.parameter(f32, Shape{4, 4}), g.parameter(f32, Shape{4, 4}));
    g.result(g.add(y, g.parameter(f32, Shape{2, 4, 4})));
    CHECK(error_id([&] { compile(g); }) == "snippets.compile.unsupported_matmul");
  }
  SUBCASE("a reduction after the product") {
    Graph g;
    const auto y = g.matmul(g.parameter(f32, Shape{4, 4}), g.parameter(f32, Shape{4, 4}));
    g.result(g.reduce_sum(y, {-1}, true));
    CHECK(error_id([&] { compile(g); }) == "snippets.compile.unsupported_matmul");
  }
  SUBCASE("dynamic shapes") {
    Graph g;
    g.result(g.matmul(g.parameter(f32, Shape{dynamic, 4}), g.parameter(f32, Shape{4, 4})));
    CHECK(error_id([&] { compile(g); }) == "snippets.compile.dynamic_matmul");
  }
}

TEST_CASE("matmul: the tokenizer keeps constant weights inside the Subgraph (packed once)") {
  const Dim batch = 8, width = 48;
  const Tensor w = uniform(Shape{width, width}, 3, -0.3, 0.3);
  std::vector<double> values(w.size());
  for (std::size_t i = 0; i < w.size(); ++i) values[i] = w.at(i);
  Graph g;
  const auto x = g.parameter(f32, Shape{batch, width}, "x");
  const auto weights = g.constant(f32, Shape{width, width}, values, "W");
  const auto y = g.relu(g.add(g.matmul(x, weights), g.parameter(f32, Shape{width}, "b")));
  g.result(y, "y");
  const Graph t = passes::tokenize(g);
  int subgraphs = 0;
  for (ir::NodeId id = 0; id < t.size(); ++id) {
    CHECK_FALSE(std::holds_alternative<ir::Constant>(t.node(id).op)); // not left outside
    if (std::holds_alternative<ir::Subgraph<x64::Traits>>(t.node(id).op)) {
      ++subgraphs;
      CHECK(t.node(id).inputs.size() == 2); // x and b: the weights are in the body
    }
  }
  CHECK(subgraphs == 1);
  const std::vector<Tensor> in{uniform(Shape{batch, width}, 1), uniform(Shape{width}, 2)};
  const Tensor want = reference::evaluate(g, std::span<const Tensor>(in))[0];
  const Program<> program(g);
  check_steps_are_kernels(program);
  const Tensor got = program.run(in, with_threads(2))[0];
  const std::string report = compare(got, want, {64, 1e-5});
  CHECK_MESSAGE(report.empty(), report);
}

TEST_CASE("matmul: an MLP chain is one Subgraph while its tensors fit the kernel's operands") {
  for (const bool constant : {true, false})
    for (const int layers : {1, 3, 5})
      for (const Dim width : {Dim{64}, Dim{128}, Dim{256}})
        for (const Dim batch : {Dim{1}, Dim{2}, Dim{4}, Dim{8}}) {
          INFO("constant weights = " << constant << ", layers = " << layers << ", width = " << width
                                     << ", batch = " << batch);
          Graph g;
          ir::Value x = g.parameter(f32, Shape{batch, width}, "x");
          std::vector<Tensor> in{uniform(Shape{batch, width}, 1)};
          for (int l = 0; l < layers; ++l) {
            const std::string layer = std::to_string(l); // (GCC 12 warns on "w" + to_string(l))
            const Tensor w = uniform(Shape{width, width}, 10 + l, -0.2, 0.2);
            ir::Value wv;
            if (constant) {
              wv = g.constant(f32, Shape{width, width}, w.values().v,
                              std::string("w").append(layer));
            } else {
              wv = g.parameter(f32, Shape{width, width}, std::string("w").append(layer));
              in.push_back(w);
            }
            const auto b = g.parameter(f32, Shape{width}, std::string("b").append(layer));
            x = g.relu(g.add(g.matmul(x, wv), b));
            in.push_back(uniform(Shape{width}, 20 + l));
          }
          g.result(x, "y");
          // a kernel takes LowerBrgemm::max_operands = 8 tensors: x, y and a bias per layer
          // with constant weights (5 layers fit), x, y and W and b per layer otherwise (3 do)
          const int per_subgraph = constant ? 5 : 3;
          const Graph t = passes::tokenize(g);
          std::vector<std::size_t> absorbed;
          for (ir::NodeId id = 0; id < t.size(); ++id)
            if (const auto* sg = std::get_if<ir::Subgraph<x64::Traits>>(&t.node(id).op))
              absorbed.push_back(sg->absorbed.size());
          CHECK(int(absorbed.size()) == (layers + per_subgraph - 1) / per_subgraph);
          CHECK(absorbed.front() == 3 * std::size_t(std::min(layers, per_subgraph)));
          const Tensor want = reference::evaluate(g, std::span<const Tensor>(in))[0];
          const Program<> program(g);
          check_steps_are_kernels(program);
          const Tensor got = program.run(in, with_threads(2))[0];
          // each layer sums up to 256 products of magnitude <= 0.2 |x|: 1e-5 relative is far
          // above f32 noise
          const std::string report = compare(got, want, {64, 1e-5});
          CHECK_MESSAGE(report.empty(), report);
        }
}

TEST_CASE("matmul: an activation read outside the chain ends its Subgraph there") {
  for (const bool residual : {false, true}) {
    const std::string reader = residual ? "a residual add" : "a Result";
    INFO(reader << " reads it");
    Graph g;
    const auto x = g.parameter(f32, Shape{8, 32}, "x");
    const auto w = g.parameter(f32, Shape{32, 32}, "w");
    const auto h = g.relu(g.matmul(x, w));
    const auto y = g.relu(g.matmul(h, w));
    if (residual) {
      g.result(g.add(y, h), "y"); // mixes the values of two products: not one chain
    } else {
      g.result(h, "hidden");
      g.result(y, "y");
    }
    const Graph t = passes::tokenize(g);
    int subgraphs = 0;
    for (ir::NodeId id = 0; id < t.size(); ++id)
      subgraphs += std::holds_alternative<ir::Subgraph<x64::Traits>>(t.node(id).op);
    CHECK(subgraphs == 2);
    const std::vector<Tensor> in{uniform(Shape{8, 32}, 1), uniform(Shape{32, 32}, 2)};
    const auto want = reference::evaluate(g, std::span<const Tensor>(in));
    const Program<> program(g);
    check_steps_are_kernels(program);
    const auto got = program.run(in, with_threads(2));
    for (std::size_t o = 0; o < want.size(); ++o) {
      const std::string report = compare(got[o], want[o], {64, 1e-5});
      CHECK_MESSAGE(report.empty(), report);
    }
  }
}

TEST_CASE("matmul: an epilogue that keeps more values live than the registers hold is refused") {
  // 40 scaled copies of the product, all live until a chain of Maximums folds them: no
  // register tile fits beside them, on either ISA
  Graph g;
  const auto m = g.matmul(g.parameter(f32, {8, 16}, "a"), g.parameter(f32, {16, 16}, "b"));
  std::vector<ir::Value> copies;
  for (int i = 0; i < 40; ++i) copies.push_back(g.multiply(m, g.scalar(f32, 1.0 + i / 64.0)));
  ir::Value acc = copies[0];
  for (int i = 1; i < 40; ++i) acc = g.maximum(acc, copies[static_cast<std::size_t>(i)]);
  g.result(acc, "y");
  for_each_isa([&](x64::Isa isa) {
    CHECK(error_id([&] { compile(g, {.isa = isa}); }) == "snippets.compile.register_pressure");
  });
}
