// SPDX-License-Identifier: Apache-2.0
// JIT tests of attention kernels (MatMul -> scale/mask -> Softmax -> MatMul, the transposes of
// Q, K, V and the output folded into memory access; passes/lower_brgemm.hpp,
// emitters/softmax_rows.hpp) and of MatMul -> Softmax, against the reference interpreter in
// double, on both ISAs and 1-3 threads; and their tokenization into one Subgraph.
//
// Tolerance. A score s = scale * q.k (+ mask) is off by at most
// ds = scale * (K + 2) * 2^-24 * max |q|.|k| (the reference computes |Q| |K|^T); a probability
// p = exp(s - max) / sum is then off by a relative 2 ds plus a few ulp of the exp, the sum
// (N * 2^-24) and the scaling; the output sum_j p_j v_j by that relative error times
// sum_j p_j |v_j| (the reference computes it), plus (N + 2) * 2^-24 of the same for its own
// sum. So: bound = (2 ds + (2 N + 16) * 2^-24) * (P |V|). With bf16 inputs (exact in f32, the
// scores and probabilities stay f32 in the kernel and double in the reference) a bf16 output
// may be one bf16 ulp further: bound + 2^-7 * (|out| + bound).
#include "matmul_test_util.hpp"

using namespace snippets;
using namespace snippets::jit_test;

namespace {

/// Attention with the layout of a transformer layer: Q, K, V [B, S, H, D] (or, with
/// `planar`, Q and V [B*H, S, D] and K [B*H, D, S] or, with `k_rows`, K [B*H, S, D] read
/// transposed by the MatMul); out = softmax(Q K^T * scale + mask) V, [B, S, H, D] (or planar).
struct Attention {
  Dim b = 1, s = 8, h = 2, d = 16;
  Shape mask; // empty: no mask
  bool planar = false;
  bool k_rows = false;
  double scale = 0.125;
  Dim kv = 0;             // keys and values (0: s)
  ElementType type = f32; // of every input and the output

  Dim keys() const { return kv ? kv : s; }
  std::vector<Shape> inputs() const {
    std::vector<Shape> in;
    if (planar) {
      in = {Shape{b * h, s, d}, k_rows ? Shape{b * h, keys(), d} : Shape{b * h, d, keys()},
            Shape{b * h, keys(), d}};
    } else {
      in = {Shape{b, s, h, d}, Shape{b, keys(), h, d}, Shape{b, keys(), h, d}};
    }
    if (mask.rank()) in.push_back(mask);
    return in;
  }
  std::string name() const {
    std::string n = std::string(planar ? "planar " : "") + "b" + std::to_string(b);
    n.append(" s").append(std::to_string(s)).append(" kv").append(std::to_string(keys()));
    n.append(" h").append(std::to_string(h)).append(" d").append(std::to_string(d));
    return n.append(" mask ").append(mask.to_string());
  }
};

/// The attention's value in `g`; `upto`: 0 the whole attention, 1 the probabilities, 2 the
/// scores, 3 the bare product Q K^T.
ir::Value attention(Graph& g, const Attention& a, int upto = 0) {
  const auto in = a.inputs();
  auto q = g.parameter(a.type, in[0], "q");
  auto k = g.parameter(a.type, in[1], "k");
  auto v = g.parameter(a.type, in[2], "v");
  if (!a.planar) {
    q = g.transpose(q, {0, 2, 1, 3});
    k = g.transpose(k, {0, 2, 3, 1});
    v = g.transpose(v, {0, 2, 1, 3});
  }
  auto scores = g.matmul(q, k, false, a.planar && a.k_rows);
  if (upto == 3) return scores;
  scores = g.multiply(scores, g.constant(a.type, Shape{1}, {a.scale}, "scale"));
  if (a.mask.rank()) scores = g.add(scores, g.parameter(a.type, a.mask, "mask"));
  if (upto == 2) return scores;
  const auto p = g.softmax(scores, -1);
  if (upto == 1) return p;
  auto out = g.matmul(p, v);
  return a.planar ? out : g.transpose(out, {0, 2, 1, 3});
}

Graph build(const Attention& a, int upto = 0) {
  Graph g;
  g.result(attention(g, a, upto), "out");
  return g;
}

std::vector<Tensor> make_inputs(const Attention& a, std::uint64_t seed) {
  std::vector<Tensor> in;
  for (const Shape& s : a.inputs())
    in.push_back(Tensor::from_values(a.type, s, uniform(s, ++seed, -2, 2).values().v));
  return in;
}

/// The relative error bound of a probability (see the header): 2 ds + (2 N + 16) 2^-24.
double probability_error(const Attention& a, const std::vector<Tensor>& in) {
  std::vector<Tensor> mags{absolute(in[0]), absolute(in[1]), in[2]}; // q, k, (v)
  const Tensor qk = reference::evaluate(build(a, 3), std::span<const Tensor>(mags))[0];
  double max_qk = 0;
  for (std::size_t i = 0; i < qk.size(); ++i) max_qk = std::max(max_qk, qk.at(i));
  const double ds = a.scale * double(a.d + 2) * 0x1p-24 * max_qk;
  return 2 * ds + double(2 * a.keys() + 16) * 0x1p-24;
}

/// `rel` times `magnitude`, element by element.
Tensor scaled(Tensor magnitude, double rel) {
  for (std::size_t i = 0; i < magnitude.size(); ++i)
    magnitude.set(i, rel * std::fabs(magnitude.at(i)) + 1e-30);
  return magnitude;
}

/// The output's error bound (see the header): (2 ds + (2 N + 16) 2^-24) * (P |V|).
Tensor attention_bound(const Attention& a, const std::vector<Tensor>& in) {
  // P |V|: the same graph on |V| (the probabilities do not depend on V)
  std::vector<Tensor> with_abs_v = in;
  with_abs_v[2] = absolute(in[2]);
  Attention wide = a; // P |V| itself, not rounded to the output type
  wide.type = f32;
  for (Tensor& t : with_abs_v) t = Tensor::from_values(f32, t.shape(), t.values().v);
  Tensor bound = scaled(reference::evaluate(build(wide), std::span<const Tensor>(with_abs_v))[0],
                        probability_error(wide, with_abs_v));
  if (a.type == f32) return bound;
  const Tensor want = reference::evaluate(build(a), std::span<const Tensor>(in))[0];
  for (std::size_t i = 0; i < bound.size(); ++i)
    bound.set(i, bound.at(i) + 0x1p-7 * (std::fabs(want.at(i)) + bound.at(i)));
  return bound;
}

void check_attention(const Attention& a, std::vector<int> threads = {1, 3}) {
  INFO(a.name());
  const Graph g = build(a);
  const std::vector<Tensor> in = make_inputs(a, 17);
  const std::vector<Tensor> want = reference::evaluate(g, std::span<const Tensor>(in));
  const Tensor bound = attention_bound(a, in);
  for_each_isa([&](x64::Isa isa) {
    for (const bool native : {true, false}) {
      if (!native && (a.type == f32 || isa != x64::Isa::avx512)) continue;
      INFO("native_bf16 = " << native);
      const CompiledKernel k = compile(g, {.isa = isa, .native_bf16 = native});
      for (const int n : threads) {
        INFO("threads = " << n);
        const auto got = k.run(std::span<const Tensor>(in), with_threads(n));
        REQUIRE(got[0].shape() == want[0].shape());
        const std::string report = compare_bounded(got[0], want[0], bound);
        CHECK_MESSAGE(report.empty(), report);
      }
    }
  });
}

} // namespace

TEST_CASE("mha: Q, K, V [1,128,12,64] with a mask [1,12,128,128], transposes folded") {
  check_attention({.b = 1, .s = 128, .h = 12, .d = 64, .mask = Shape{1, 12, 128, 128}}, {2});
}

TEST_CASE("mha: many threads share heads and blocks of query rows (work_division.hpp)") {
  // 64 threads on any host; 100 rows: blocks of 8 and a tail of 4; 5 and 7 divide nothing
  check_attention({.b = 1, .s = 100, .h = 3, .d = 32, .mask = Shape{1, 3, 100, 100}}, {5, 7, 64});
  check_attention({.b = 1, .s = 128, .h = 12, .d = 64, .mask = Shape{1, 12, 128, 128}}, {64});
  check_attention({.b = 1, .s = 33, .h = 2, .d = 16, .kv = 17}, {3, 64});
}

TEST_CASE("mha: bf16 Q, K, V, mask and output (Q K^T in bf16 pairs when D is even)") {
  check_attention({.b = 1,
                   .s = 128,
                   .h = 12,
                   .d = 64,
                   .mask = Shape{1, 12, 128, 128},
                   .type = ElementType::bf16},
                  {2});
  for (const Dim d : {Dim{15}, Dim{32}})
    check_attention({.b = 2, .s = 33, .h = 3, .d = d, .kv = 17, .type = ElementType::bf16});
}

TEST_CASE("mha: [2,68,6,92] with a broadcast mask [1,1,68,68]") {
  check_attention({.b = 2, .s = 68, .h = 6, .d = 92, .mask = Shape{1, 1, 68, 68}});
}

TEST_CASE("mha: 3-D variants, K given transposed or read transposed") {
  for (const bool k_rows : {false, true}) {
    INFO("k_rows = " << k_rows);
    check_attention({.b = 3,
                     .s = 40,
                     .h = 4,
                     .d = 24,
                     .mask = Shape{40, 40},
                     .planar = true,
                     .k_rows = k_rows});
  }
}

TEST_CASE("mha: constant values (V a Constant) are packed at compile time") {
  const Dim s = 21, kv = 30, d = 19;
  const Tensor v = uniform(Shape{kv, d}, 4);
  std::vector<double> values(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) values[i] = v.at(i);
  Graph g;
  const auto q = g.parameter(f32, Shape{s, d}, "q");
  const auto k = g.parameter(f32, Shape{d, kv}, "k");
  const auto p = g.softmax(g.matmul(q, k), -1);
  g.result(g.matmul(p, g.constant(f32, Shape{kv, d}, values, "V")));
  const std::vector<Tensor> in{uniform(Shape{s, d}, 5), uniform(Shape{d, kv}, 6)};
  const Tensor want = reference::evaluate(g, std::span<const Tensor>(in))[0];
  // |q.k| <= d: the probabilities within 2 (d + 2) d 2^-24 + (2 kv + 16) 2^-24 relative,
  // and |out| <= max |v| = 1: that times kv is a bound on the absolute error
  const double bound = (2.0 * (d + 2) * d + 2 * kv + 16) * 0x1p-24 * kv;
  for_each_isa([&](x64::Isa isa) {
    const Tensor got = compile(g, {.isa = isa}).run(std::span<const Tensor>(in))[0];
    for (std::size_t i = 0; i < want.size(); ++i) CHECK(std::fabs(got.at(i) - want.at(i)) <= bound);
  });
}

TEST_CASE("mha: odd sizes, row tails and the block tail") {
  // one batch: the rows are shared out in blocks, and the last block is a tail
  for (const Dim s : {Dim{1}, Dim{7}, Dim{17}, Dim{33}, Dim{97}})
    for (const Dim d : {Dim{1}, Dim{15}, Dim{31}})
      check_attention({.b = 1, .s = s, .h = 1, .d = d, .planar = true, .kv = s + 2}, {1, 2});
}

TEST_CASE("mha: long rows, and a fully masked row is NaN as in the reference") {
  check_attention(
      {.b = 1, .s = 9, .h = 2, .d = 8, .mask = Shape{9, 1100}, .planar = true, .kv = 1100}, {2});
  Attention a{.b = 1, .s = 3, .h = 1, .d = 16, .mask = Shape{3, 20}, .planar = true, .kv = 20};
  const Graph g = build(a);
  std::vector<Tensor> in = make_inputs(a, 3);
  for (std::size_t j = 0; j < 20; ++j) in[3].set(20 + j, -inf); // row 1: all -inf
  for_each_isa([&](x64::Isa isa) {
    const Tensor got = compile(g, {.isa = isa}).run(std::span<const Tensor>(in))[0];
    for (std::size_t c = 0; c < 16; ++c) {
      CHECK(std::isnan(got.at(16 + c)));
      CHECK(std::isfinite(got.at(c)));
    }
  });
}

TEST_CASE("mha: MatMul -> Softmax as a kernel of its own, the Softmax written in place") {
  for (const Dim s : {Dim{5}, Dim{37}, Dim{130}}) {
    const Attention a{.b = 2, .s = s, .h = 3, .d = 20, .mask = Shape{1, 3, 1, s}};
    INFO(a.name());
    const Graph g = build(a, 1);
    const std::vector<Tensor> in = make_inputs(a, 5);
    const Tensor want = reference::evaluate(g, std::span<const Tensor>(in))[0];
    const Tensor bound = scaled(want, probability_error(a, in));
    for_each_isa([&](x64::Isa isa) {
      const Tensor got =
          compile(g, {.isa = isa}).run(std::span<const Tensor>(in), with_threads(2))[0];
      const std::string report = compare_bounded(got, want, bound);
      CHECK_MESSAGE(report.empty(), report);
    });
  }
}

TEST_CASE("mha: the tokenizer makes the attention block one Subgraph, and the Program matches") {
  for (const ElementType type : {f32, ElementType::bf16}) {
    INFO(to_string(type));
    const Attention a{.b = 1, .s = 32, .h = 4, .d = 16, .mask = Shape{1, 4, 32, 32}, .type = type};
    const std::vector<Tensor> in = make_inputs(a, 9);
    check_one_subgraph_program(build(a), in, attention_bound(a, in));
  }
}

TEST_CASE("mha: the attention Subgraph is sealed; ops after it form their own") {
  const Attention a{.b = 1, .s = 16, .h = 2, .d = 8, .planar = true};
  Graph g;
  // a residual add and an activation after the attention: not taken into its Subgraph
  const ir::Value out = attention(g, a);
  g.result(g.relu(g.add(out, g.parameter(f32, Shape{2, 16, 8}, "residual"))));
  const Graph t = passes::tokenize(g);
  CHECK(count_subgraphs(t) == 2);
}

TEST_CASE("mha: forms the kernel cannot compute are rejected with a clear error") {
  SUBCASE("an op between the Softmax and the second MatMul") {
    Graph g;
    const auto q = g.parameter(f32, Shape{8, 4});
    const auto k = g.parameter(f32, Shape{4, 8});
    const auto p = g.multiply(g.softmax(g.matmul(q, k), -1), g.constant(f32, Shape{1}, {0.5}));
    g.result(g.matmul(p, g.parameter(f32, Shape{8, 4})));
    CHECK(error_id([&] { compile(g); }) == "snippets.compile.unsupported_matmul");
  }
  SUBCASE("the scores as a second output") {
    Graph g;
    const auto q = g.parameter(f32, Shape{8, 4});
    const auto k = g.parameter(f32, Shape{4, 8});
    const auto s = g.matmul(q, k);
    g.result(g.matmul(g.softmax(s, -1), g.parameter(f32, Shape{8, 8})));
    g.result(s);
    CHECK(error_id([&] { compile(g); }) == "snippets.compile.unsupported_matmul");
  }
  SUBCASE("a reduction that is not a Softmax") {
    Graph g;
    const auto s = g.matmul(g.parameter(f32, Shape{8, 4}), g.parameter(f32, Shape{4, 8}));
    g.result(g.subtract(s, g.reduce_max(s, {-1}, true)));
    CHECK(error_id([&] { compile(g); }) == "snippets.compile.unsupported_matmul");
  }
  SUBCASE("a Softmax of the second product (it used to escape as std::out_of_range)") {
    Graph g;
    const auto s = g.matmul(g.parameter(f32, Shape{8, 4}), g.parameter(f32, Shape{4, 8}));
    g.result(g.softmax(g.matmul(s, g.parameter(f32, Shape{8, 8})), -1));
    CHECK(error_id([&] { compile(g); }) == "snippets.compile.unsupported_matmul");
  }
}
