// SPDX-License-Identifier: Apache-2.0
// JIT tests of broadcasting and parallel execution: passes/optimize_domain.hpp (domain
// collapsing), passes/insert_load_store.hpp, insert_broadcast_move.hpp and
// load_move_broadcast_to_broadcast_load.hpp (broadcast loads), passes/init_loops.hpp and
// cleanup_loop_offsets.hpp (pointer arithmetic of broadcast inputs), and
// runtime/executor.hpp (chunks per thread). Every kind of NUMPY broadcast of ranks 0 to 6 is
// compiled for AVX2 and AVX-512, run with 1, 2 and 3 threads, and compared bit for bit with
// the reference: the bodies use only exact ops (Multiply, Subtract, Maximum, Add) with FMA
// contraction off, so the reference rounding every node to f32 is exact.
#include "jit_test_util.hpp"

using namespace snippets;
using namespace snippets::jit_test;

namespace {

const std::vector<int> thread_counts = {1, 2, 3};

/// t = inputs[0]; for each further input x: t = max(x - t * x, t). Every op broadcasts its
/// operands, so every input's broadcast pattern reaches the output.
ir::Value fold_inputs(Graph& g, const std::vector<ir::Value>& in) {
  ir::Value t = in[0];
  for (std::size_t i = 1; i < in.size(); ++i)
    t = g.maximum(g.subtract(in[i], g.multiply(t, in[i])), t);
  return t;
}

struct Case {
  const char* what;
  std::vector<Shape> inputs;
  std::vector<Dim> domain; // expected collapsed domain; empty: not checked
};

std::vector<Case> broadcast_cases() {
  return {
      {"rank-0 parameter with NCHW", {Shape{}, Shape{2, 3, 4, 5}}, {120}},
      {"rank-0 with rank-0", {Shape{}, Shape{}}, {1}},
      {"[1] with [1]", {Shape{1}, Shape{1}}, {1}},
      {"rank 1 with broadcast [1]", {Shape{17}, Shape{1}}, {17}},
      {"per-channel [1,C,1,1]", {Shape{1, 3, 1, 1}, Shape{2, 3, 4, 5}}, {2, 3, 20}},
      {"per-channel, inner tail", {Shape{1, 3, 1, 1}, Shape{2, 3, 2, 17}}, {2, 3, 34}},
      {"innermost 1 [N,C,H,1]", {Shape{2, 3, 4, 1}, Shape{2, 3, 4, 5}}, {24, 5}},
      {"innermost 1, W = 17", {Shape{2, 3, 4, 1}, Shape{2, 3, 4, 17}}, {24, 17}},
      {"innermost 1, W = 33", {Shape{2, 3, 4, 1}, Shape{2, 3, 4, 33}}, {24, 33}},
      {"innermost 1, W = 16", {Shape{2, 3, 1}, Shape{2, 3, 16}}, {6, 16}},
      {"innermost 1, W = 1000", {Shape{3, 1}, Shape{3, 1000}}, {3, 1000}},
      {"outer 1 [1,C,H,W]", {Shape{1, 3, 4, 5}, Shape{2, 3, 4, 5}}, {2, 60}},
      {"middle 1 [N,1,H,W]", {Shape{2, 1, 4, 5}, Shape{2, 3, 4, 5}}, {2, 3, 20}},
      {"all ones [1,1,1,1]", {Shape{1, 1, 1, 1}, Shape{2, 3, 4, 5}}, {120}},
      {"both sides [2,1,5] and [1,3,5]", {Shape{2, 1, 5}, Shape{1, 3, 5}}, {2, 3, 5}},
      {"both sides, inner tails", {Shape{2, 1, 17}, Shape{1, 3, 17}}, {2, 3, 17}},
      {"both sides [N,C,H,1] and [1,C,1,W]",
       {Shape{2, 3, 4, 1}, Shape{1, 3, 1, 17}},
       {2, 3, 4, 17}},
      {"both sides on the inner dim [3,1] and [1,7]", {Shape{3, 1}, Shape{1, 7}}, {3, 7}},
      {"rank mismatch [W] with NCHW", {Shape{5}, Shape{2, 3, 4, 5}}, {24, 5}},
      {"rank mismatch [W] with NCHW, W = 9", {Shape{9}, Shape{2, 3, 4, 9}}, {24, 9}},
      {"rank mismatch [H,1] with NCHW", {Shape{4, 1}, Shape{2, 3, 4, 5}}, {6, 4, 5}},
      {"rank mismatch [C,1,1] with NCHW", {Shape{3, 1, 1}, Shape{2, 3, 4, 5}}, {2, 3, 20}},
      {"the seed case [1,16,29,7] and [1,16,29,1]",
       {Shape{1, 16, 29, 7}, Shape{1, 16, 29, 1}},
       {464, 7}},
      {"leading 1s only [1,5] and [1,1]", {Shape{1, 5}, Shape{1, 1}}, {5}},
      {"rank 5", {Shape{2, 1, 3, 1, 17}, Shape{1, 4, 3, 5, 1}}, {2, 4, 3, 5, 17}},
      {"rank 6", {Shape{2, 3, 1, 2, 1, 9}, Shape{1, 3, 4, 1, 5, 1}}, {2, 3, 4, 2, 5, 9}},
      {"rank 6 with rank 0 and rank 2", {Shape{2, 1, 3, 1, 2, 8}, Shape{}, Shape{2, 1}}, {6, 2, 8}},
      {"three inputs NCHW, [1,C,1,1], [H,1]",
       {Shape{2, 3, 4, 5}, Shape{1, 3, 1, 1}, Shape{4, 1}},
       {}},
      {"four inputs with every pattern",
       {Shape{1, 3, 1, 1}, Shape{2, 3, 4, 1}, Shape{}, Shape{1, 1, 4, 31}},
       {}},
  };
}

} // namespace

TEST_CASE("jit broadcast: every broadcast kind of ranks 0 to 6 matches the reference bit for "
          "bit with 1, 2 and 3 threads") {
  std::uint64_t seed = 1000;
  for (const Case& c : broadcast_cases()) {
    INFO("case: " << std::string(c.what));
    // the first input order as listed, then reversed, so each side broadcasts as either operand
    for (int reversed = 0; reversed < 2; ++reversed) {
      INFO("reversed = " << reversed);
      std::vector<Shape> shapes = c.inputs;
      if (reversed) std::reverse(shapes.begin(), shapes.end());
      Graph g;
      std::vector<ir::Value> params;
      std::vector<Tensor> tensors;
      for (const Shape& s : shapes) {
        params.push_back(g.parameter(f32, s));
        tensors.push_back(make_tensor(s, ++seed, Pattern::finite));
      }
      g.result(fold_inputs(g, params));
      check_jit(
          g, tensors,
          {.threads = thread_counts, .fma = false, .round_each_node = true, .unroll = {1, 3, 4}});
    }
  }
}

TEST_CASE("jit broadcast: special values broadcast from a per-channel or innermost-1 input "
          "propagate like the reference") {
  // NaN, infinities and signed zeros in the broadcast operand. With FMA contraction on, the
  // Multiply of a broadcast operand feeding Add contracts (one rounding: within 4 ulp of the
  // exact reference, see test_jit_eltwise.cpp); with it off, every node rounds and the result
  // is bit-equal to the reference that rounds every node.
  std::uint64_t seed = 1100;
  for (const auto& [small, big] : {std::pair{Shape{1, 24, 1, 1}, Shape{2, 24, 3, 17}},
                                   std::pair{Shape{2, 24, 3, 1}, Shape{2, 24, 3, 17}}}) {
    INFO("shapes " << small.to_string() << " " << big.to_string());
    Graph g;
    const auto a = g.parameter(f32, small), b = g.parameter(f32, big);
    g.result(g.add(g.multiply(b, a), g.maximum(a, b)));
    const std::vector<Tensor> in = {make_tensor(small, ++seed), make_tensor(big, ++seed)};
    check_jit(g, in, {.tol = approx, .threads = thread_counts});
    check_jit(g, in, {.threads = thread_counts, .fma = false, .round_each_node = true});
  }
}

TEST_CASE("jit broadcast: values computed from broadcast inputs broadcast after the computation") {
  // Ops whose operands are all innermost-1 (or rank 0) run on one useful lane; the result is
  // broadcast where it meets a full operand (InsertBroadcastMove instead of a BroadcastLoad).
  std::uint64_t seed = 1150;
  const std::vector<std::vector<Shape>> cases = {
      {Shape{3, 17}, Shape{3, 1}, Shape{3, 1}},
      {Shape{2, 3, 4, 33}, Shape{2, 3, 4, 1}, Shape{1, 3, 1, 1}},
      {Shape{2, 3, 9}, Shape{}, Shape{3, 1}},
      {Shape{1000}, Shape{}, Shape{1}},
  };
  for (const auto& shapes : cases) {
    INFO("shapes " << shapes[0].to_string() << " " << shapes[1].to_string() << " "
                   << shapes[2].to_string());
    Graph g;
    const auto a = g.parameter(f32, shapes[0]), b = g.parameter(f32, shapes[1]),
               c = g.parameter(f32, shapes[2]);
    // abs(b) and b * c are narrow; the Add broadcasts them across a
    const auto narrow = g.subtract(g.multiply(g.abs(b), c), g.negative(c));
    g.result(g.maximum(g.add(a, narrow), g.floor(b)));
    check_jit(g,
              {make_tensor(shapes[0], ++seed), make_tensor(shapes[1], ++seed),
               make_tensor(shapes[2], ++seed)},
              {.threads = thread_counts, .fma = false, .round_each_node = true});
  }
}

TEST_CASE("jit broadcast: Scalar constants broadcast to every element") {
  std::uint64_t seed = 1200;
  for (const Shape& s : {Shape{1}, Shape{7}, Shape{3, 17}, Shape{2, 3, 4, 33}}) {
    INFO("shape = " << s.to_string());
    Graph g;
    const auto x = g.parameter(f32, s);
    // a rank-0 Scalar, a Scalar of shape [1,1], and a single-valued Constant (becomes a Scalar)
    auto t = g.multiply(x, g.scalar(f32, 0.5));
    t = g.add(t, g.scalar(f32, -1.25, Shape{1, 1}));
    t = g.maximum(t, g.constant(f32, {1}, {-2.0}));
    t = g.divide(g.scalar(f32, 3.0), t);
    g.result(t);
    check_jit(g, {make_tensor(s, ++seed)},
              {.threads = thread_counts, .fma = false, .round_each_node = true});
  }
}

TEST_CASE("jit broadcast: the scheduling domain collapses dimensions that need no loop") {
  for (const Case& c : broadcast_cases()) {
    if (c.domain.empty()) continue;
    INFO("case: " << std::string(c.what));
    Graph g;
    std::vector<ir::Value> params;
    for (const Shape& s : c.inputs) params.push_back(g.parameter(f32, s));
    g.result(fold_inputs(g, params));
    for_each_isa([&](x64::Isa isa) {
      CHECK(dims_string(compile(g, {.isa = isa}).signature().domain) == dims_string(c.domain));
    });
  }
  // a plain elementwise body of any rank is one flat loop
  Graph g;
  const auto a = g.parameter(f32, {8, 3, 5, 7}), b = g.parameter(f32, {8, 3, 5, 7});
  g.result(g.relu(g.add(a, b)));
  for_each_isa([&](x64::Isa isa) {
    const CompiledKernel k = compile(g, {.isa = isa});
    CHECK(dims_string(k.signature().domain) == "[840]");
    // a flat domain splits across threads in whole main-loop steps (vectors times unroll)
    CHECK(k.signature().chunk_unit % x64::lanes(isa) == 0);
  });
}

TEST_CASE("jit broadcast: a domain whose outer dimension is smaller than the thread count runs "
          "correctly") {
  std::uint64_t seed = 1300;
  const std::pair<Shape, Shape> cases[] = {
      {Shape{2, 1, 5}, Shape{1, 3, 5}},          // domain [2,3,5]: 2 outer rows
      {Shape{1, 16, 29, 7}, Shape{1, 1, 29, 1}}, // outer 16
      {Shape{7}, Shape{1}},                      // flat, one partial vector
      {Shape{33}, Shape{1}},                     // flat, 2-5 vectors and a tail
  };
  for (const auto& [sa, sb] : cases) {
    INFO("shapes " << sa.to_string() << " " << sb.to_string());
    Graph g;
    const auto a = g.parameter(f32, sa), b = g.parameter(f32, sb);
    g.result(fold_inputs(g, {a, b}));
    check_jit(
        g, {make_tensor(sa, ++seed), make_tensor(sb, ++seed)},
        {.threads = {3, 5, 8, 17, 64}, .fma = false, .round_each_node = true, .unroll = {1, 4}});
  }
}

TEST_CASE("jit broadcast: a flat domain of 1000003 elements splits across threads with the "
          "tail in the last chunk") {
  const Shape s{1000003};
  Graph g;
  const auto a = g.parameter(f32, s), b = g.parameter(f32, s), c = g.parameter(f32, {});
  g.result(g.maximum(g.subtract(b, g.multiply(a, c)), a));
  // threads = 0 picks the count from the work and the host
  check_jit(g, {make_tensor(s, 1400), make_tensor(s, 1401), make_tensor({}, 1402)},
            {.threads = {1, 2, 3, 0}, .fma = false, .round_each_node = true, .unroll = {1, 4}});
}

TEST_CASE("jit broadcast: a per-channel input inside a rank-3 domain is read for every channel") {
  // Regression: ExtractLoopInvariants once hoisted the BroadcastLoad of b = f32[3,1] (aligned
  // [1,3,1]) out of the inner loop, kept it in the channel loop, then hoisted it out of the
  // outer loop as well, i.e. out of the channel loop it depends on: every channel read b[0].
  Graph g;
  const auto a = g.parameter(f32, {2, 3, 4}), b = g.parameter(f32, {3, 1});
  g.result(g.add(a, b));
  const Tensor ta = Tensor::from_values(f32, {2, 3, 4}, {0.0});
  const Tensor tb = Tensor::from_values(f32, {3, 1}, {1, 2, 3});
  check_jit(g, {ta, tb}, {.threads = {1, 2}});
}

TEST_CASE("jit broadcast: a body with two or three Results writes each to its own output") {
  // Regression: convert_to_linear_ir once numbered Results in Graph::topological_order(), not
  // in the order of Graph::results() that KernelSignature::outputs and run() use, so
  // g.result(a + b); g.result(a * b) returned the product as output 0.
  std::uint64_t seed = 1500;
  const std::pair<Shape, Shape> cases[] = {{Shape{4}, Shape{4}},
                                           {Shape{3, 17}, Shape{3, 17}},
                                           {Shape{1, 3, 1, 1}, Shape{2, 3, 4, 5}},
                                           {Shape{2, 3, 4, 1}, Shape{2, 3, 4, 33}},
                                           {Shape{}, Shape{1000}}};
  for (const auto& [sa, sb] : cases) {
    INFO("shapes " << sa.to_string() << " " << sb.to_string());
    Graph g;
    const auto a = g.parameter(f32, sa), b = g.parameter(f32, sb);
    g.result(g.add(a, b));
    g.result(g.multiply(a, b));
    g.result(g.maximum(g.subtract(b, a), g.negative(b)));
    check_jit(g, {make_tensor(sa, ++seed), make_tensor(sb, ++seed)},
              {.threads = thread_counts, .fma = false, .round_each_node = true});
  }
}
