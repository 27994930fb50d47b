// SPDX-License-Identifier: Apache-2.0
// tests/test_transpose_fusion.cpp: Transposes of kernel inputs folded into their loads
// (passes/fuse_transpose_into_parameter.hpp): the pass on a Graph, the strided memory order
// through OptimizeDomain and InsertLoadStore, JIT results against the reference interpreter
// (both ISAs, tails, 1 and 2 threads, mixed with planar and broadcast inputs), the kernel
// signature, the tokenizer and the errors for what is not folded.
#include <doctest/doctest.h>

#include <cstring>
#include <string>

#include "error_id.hpp"
#include "jit_test_util.hpp"
#include "snippets/snippets.hpp"

using namespace snippets;
using namespace snippets::jit_test;
using ir::NodeId;
using ir::Value;
using Order = std::vector<std::size_t>;

namespace {

int count_ops(const Graph& g, std::string_view name) {
  int n = 0;
  for (NodeId id = 0; id < g.size(); ++id) n += g.node(id).op_name() == name;
  return n;
}

const ir::Parameter& param(const Graph& g, std::size_t i) {
  return std::get<ir::Parameter>(g.node(g.parameters().at(i)).op);
}

Shape transposed(const Shape& s, const Order& order) {
  std::vector<Dim> d;
  for (std::size_t a : order) d.push_back(s[a]);
  return Shape(d);
}

/// exp(transpose(x) * y + b): x transposed, y planar in the transposed shape, b broadcast
/// along every dimension but the last.
Graph chain(const Shape& x_shape, const Order& order) {
  Graph g;
  const Shape t = transposed(x_shape, order);
  std::vector<Dim> bdims(t.rank(), 1);
  bdims.back() = t[t.rank() - 1];
  auto x = g.parameter(f32, x_shape, "x");
  auto y = g.parameter(f32, t, "y");
  auto b = g.parameter(f32, Shape(bdims), "b");
  g.result(g.exp(g.add(g.multiply(g.transpose(x, order), y), b)), "out");
  return g;
}

std::vector<Tensor> inputs_of(const Graph& g, std::uint64_t seed = 7) {
  std::vector<Tensor> in;
  for (NodeId p : g.parameters()) {
    const ir::TensorType& t = g.node(p).outputs[0];
    in.push_back(Tensor::from_values(t.type, t.shape,
                                     make_tensor(t.shape, seed++, Pattern::finite).values().v));
  }
  return in;
}

/// g's one input `x` read from a buffer against a PROT_NONE page (before it, then after it), on
/// every ISA: the result matches the reference, and no read leaves the buffer.
void check_guarded(const Graph& g, const Tensor& x) {
  const Tensor want = reference::evaluate(g, std::vector<Tensor>{x})[0];
  for_each_isa([&](x64::Isa isa) {
    const CompiledKernel k = compile(g, {.isa = isa});
    for (const Guard where : {Guard::before, Guard::after}) {
      GuardedBuffer in(x.byte_size(), where);
      std::memcpy(in.data(), x.data(), x.byte_size());
      Tensor got(want.type(), want.shape());
      const ConstTensorView ins[] = {{x.type(), x.shape(), in.data()}};
      const TensorView outs[] = {{got.type(), got.shape(), got.data()}};
      k.run(ins, outs, with_threads(1));
      CHECK(compare(got, want, exact) == "");
    }
  });
}

} // namespace

// ---- the pass on a Graph ----

TEST_CASE("FuseTransposeIntoParameter: Parameter -> Transpose becomes one strided Parameter") {
  Graph g;
  auto x = g.parameter(f32, {2, 3, 5, 7}, "x");
  g.result(g.relu(g.transpose(x, {0, 2, 3, 1})), "y");
  const Graph out = passes::FuseTransposeIntoParameter{}.run(g);
  CHECK(count_ops(g, "Transpose") == 1); // the input graph is not modified
  CHECK(count_ops(out, "Transpose") == 0);
  REQUIRE(out.parameters().size() == 1);
  const ir::Parameter& p = param(out, 0);
  CHECK(p.output.shape == Shape{2, 5, 7, 3}); // logical: the Transpose's output
  CHECK(p.layout.order() == Order{0, 3, 1, 2});
  CHECK(p.strided_read);
  CHECK(p.layout.physical_shape(p.output.shape) == Shape{2, 3, 5, 7}); // the user's buffer
  CHECK(out.node(out.parameters()[0]).name == "x");
  CHECK(ir::to_string(out).find("layout=adbc, strided_read=true") != std::string::npos);
}

TEST_CASE("FuseTransposeIntoParameter: memory offsets of the new layout are the user's planar "
          "offsets") {
  for (const Order& order :
       {Order{0, 2, 3, 1}, Order{0, 2, 1, 3}, Order{0, 3, 1, 2}, Order{3, 1, 0, 2}}) {
    INFO("order " << order[0] << order[1] << order[2] << order[3]);
    Graph g;
    const Shape s{2, 3, 4, 5};
    g.result(g.transpose(g.parameter(f32, s), order));
    const Graph out = passes::FuseTransposeIntoParameter{}.run(g);
    const ir::Parameter& p = param(out, 0);
    // logical index i of the transposed tensor is input index j with j[order[k]] = i[k]
    for (std::int64_t flat = 0; flat < s.element_count(); ++flat) {
      std::vector<std::int64_t> j(4), i(4);
      for (std::int64_t r = flat, d = 3; d >= 0; --d) j[d] = r % s[d], r /= s[d];
      for (std::size_t k = 0; k < 4; ++k) i[k] = j[order[k]];
      REQUIRE(p.layout.offset(p.output.shape, i) == flat);
    }
  }
}

TEST_CASE("FuseTransposeIntoParameter: chains compose, identities vanish, shared inputs stay") {
  SUBCASE("two Transposes of one input fold into one Parameter") {
    Graph g;
    auto x = g.parameter(f32, {2, 3, 4}, "x");
    g.result(g.transpose(g.transpose(x, {1, 0, 2}), {0, 2, 1})); // [3,2,4] -> [3,4,2]
    const Graph out = passes::FuseTransposeIntoParameter{}.run(g);
    CHECK(count_ops(out, "Transpose") == 0);
    const ir::Parameter& p = param(out, 0);
    CHECK(p.output.shape == Shape{3, 4, 2});
    CHECK(p.layout.physical_shape(p.output.shape) == Shape{2, 3, 4});
  }
  SUBCASE("Transposes of one order, every reader of an input, fold into one Parameter") {
    for (const bool same : {true, false}) {
      Graph g;
      auto x = g.parameter(f32, {2, 3, 4}, "x");
      const auto a = g.transpose(x, {1, 0, 2});
      const auto b = g.transpose(x, same ? Order{1, 0, 2} : Order{0, 2, 1});
      g.result(g.relu(a));
      g.result(g.exp(b));
      const Graph out = passes::FuseTransposeIntoParameter{}.run(g);
      CHECK(count_ops(out, "Transpose") == (same ? 0 : 2));
      CHECK(param(out, 0).strided_read == same);
      if (same) CHECK(param(out, 0).output.shape == Shape{3, 2, 4});
    }
  }
  SUBCASE("a Transpose and its inverse leave a planar input") {
    Graph g;
    auto x = g.parameter(f32, {2, 3, 4}, "x");
    g.result(g.relu(g.transpose(g.transpose(x, {2, 0, 1}), {1, 2, 0})));
    const Graph out = passes::FuseTransposeIntoParameter{}.run(g);
    CHECK(count_ops(out, "Transpose") == 0);
    CHECK(param(out, 0).layout.is_planar());
    CHECK_FALSE(param(out, 0).strided_read);
  }
  SUBCASE("an identity Transpose of a computed value is removed") {
    Graph g;
    auto x = g.parameter(f32, {2, 3}, "x");
    g.result(g.transpose(g.relu(x), {0, 1}));
    CHECK(count_ops(passes::FuseTransposeIntoParameter{}.run(g), "Transpose") == 0);
  }
  SUBCASE("an input with another consumer keeps its Transpose, and compile() says why") {
    Graph g;
    auto x = g.parameter(f32, {4, 4}, "x");
    g.result(g.add(g.transpose(x, {1, 0}), x));
    const Graph out = passes::FuseTransposeIntoParameter{}.run(g);
    CHECK(count_ops(out, "Transpose") == 1);
    CHECK(param(out, 0).layout.is_planar());
    CHECK(error_id([&] { (void)compile(g); }) == "snippets.compile.unsupported_op");
    try {
      (void)compile(g);
    } catch (const Error& e) {
      CHECK(std::string(e.what()).find("only consumer of a subgraph input") != std::string::npos);
    }
  }
  SUBCASE("a Transpose of a computed value stays") {
    Graph g;
    auto x = g.parameter(f32, {3, 5}, "x");
    g.result(g.transpose(g.relu(x), {1, 0}));
    CHECK(count_ops(passes::FuseTransposeIntoParameter{}.run(g), "Transpose") == 1);
    CHECK(error_id([&] { (void)compile(g); }) == "snippets.compile.unsupported_op");
  }
}

TEST_CASE("DefaultDataFlow folds transposes right after the decompositions, and Canonicalize "
          "rank-aligns the strided layout") {
  std::vector<std::string_view> trace;
  Graph g;
  auto x = g.parameter(f32, {3, 5}, "x");
  auto y = g.parameter(f32, {2, 5, 3}, "y");
  g.result(g.add(g.transpose(x, {1, 0}), y));
  const Graph out = passes::DefaultDataFlow{}.run(g, &trace);
  REQUIRE(trace.size() >= 7);
  CHECK(trace[0] == "FoldDequantizeIntoMatMul");
  CHECK(trace[1] == "DecomposeCompositeReductions");
  CHECK(trace[2] == "DecomposeSoftmax");
  CHECK(trace[3] == "DecomposeQuantization");
  CHECK(trace[4] == "FuseTransposeIntoParameter");
  CHECK(trace[5] == "FuseTransposeIntoResult");
  CHECK(trace[6] == "Canonicalize");
  const ir::Parameter& p = param(out, 0);
  CHECK(p.output.shape == Shape{1, 5, 3});
  CHECK(p.layout.order() == Order{0, 2, 1});
  CHECK(p.strided_read);
}

TEST_CASE("a strided read next to a body layout, or with a blocked layout, is rejected") {
  Graph g;
  auto x = g.parameter(f32, {1, 4, 3, 3}, "x");
  auto y = g.parameter(f32, {1, 3, 3, 4}, "y", Layout::channels_last(4));
  g.result(g.add(g.transpose(x, {0, 2, 3, 1}), y));
  CHECK(error_id([&] { (void)compile(g); }) == "snippets.canonicalize.layout_conflict");
  Graph b;
  ir::Parameter blocked; // named: GCC 12 -O3 warns about a temporary's vector here
  blocked.output = {f32, Shape{1, 32, 3, 3}};
  blocked.layout = Layout::blocked({0, 1, 2, 3}, 1, 16);
  blocked.strided_read = true;
  CHECK(error_id([&] { b.make(blocked, std::span<const Value>()); }) == "snippets.layout.invalid");
}

// ---- lowering ----

TEST_CASE("lowering: a strided innermost dimension becomes a gather Load with its stride, a "
          "contiguous one a plain Load") {
  auto lir_text = [](const Order& order) {
    Graph g;
    auto x = g.parameter(f32, {2, 9, 5, 7}, "x");
    g.result(g.relu(g.transpose(x, order)));
    auto lir = lower(g, x64::Isa::avx2);
    return ir::to_string(lir);
  };
  // [0,2,3,1]: logical [2,5,7,9], innermost 9 is 35 apart in memory; 5 and 7 merge
  CHECK(lir_text({0, 2, 3, 1}).find("stride 35") != std::string::npos);
  CHECK(lir_text({0, 2, 1, 3}).find("stride") == std::string::npos);
}

TEST_CASE("TileStridedReads: a gathered innermost dimension of whole vectors is split, and the "
          "input's contiguous dimension walks inside the block loop") {
  Graph g;
  auto x = g.parameter(f32, {2, 32, 5, 7}, "x"); // [0,2,3,1]: domain [2, 35, 32] after merging
  g.result(g.relu(g.transpose(x, {0, 2, 3, 1})));
  CHECK(lower(g, x64::Isa::avx2).domain == std::vector<Dim>{2, 4, 35, 8}); // [B, S/8, H*D, 8]
  Graph h; // 33 is no multiple of the vector: left as it is
  h.result(h.relu(h.transpose(h.parameter(f32, {2, 33, 5, 7}, "x"), {0, 2, 3, 1})));
  CHECK(lower(h, x64::Isa::avx2).domain == std::vector<Dim>{2, 35, 33});
}

// ---- JIT against the reference ----

TEST_CASE("JIT: a transposed input alone, every order, odd sizes, both ISAs, 1 and 2 threads") {
  const std::vector<Order> orders4 = {
      {0, 2, 3, 1}, {0, 2, 1, 3}, {0, 3, 1, 2}, {0, 1, 2, 3}, {3, 2, 1, 0}};
  for (const Shape& s : {Shape{2, 7, 3, 17}, Shape{1, 33, 5, 7}, Shape{3, 1, 37, 1},
                         Shape{2, 17, 4, 33}, Shape{2, 32, 3, 5}, Shape{1, 48, 2, 16}}) {
    for (const Order& order : orders4) {
      INFO("shape " << s.to_string() << " order " << order[0] << order[1] << order[2] << order[3]);
      Graph g;
      g.result(g.relu(g.transpose(g.parameter(f32, s, "x"), order)));
      check_jit(g, inputs_of(g), {.threads = {1, 2}, .unroll = {1, 4}});
    }
  }
  for (const Shape& s : {Shape{7, 17}, Shape{33, 1}, Shape{1, 37}, Shape{37, 33}}) {
    INFO("shape " << s.to_string());
    Graph g;
    g.result(g.negative(g.transpose(g.parameter(f32, s, "x"), {1, 0})));
    check_jit(g, inputs_of(g), {.threads = {1, 2}, .unroll = {1, 4}});
  }
}

TEST_CASE("JIT: a transposed input with planar and broadcast inputs in Multiply/Add/Exp") {
  for (const Order& order : {Order{0, 2, 3, 1}, Order{0, 2, 1, 3}, Order{0, 3, 1, 2}}) {
    for (const Shape& s : {Shape{2, 17, 3, 7}, Shape{1, 37, 2, 33}}) {
      INFO("shape " << s.to_string() << " order " << order[0] << order[1] << order[2] << order[3]);
      const Graph g = chain(s, order);
      // exp magnifies the rounding of its argument: round like the kernel, no contraction
      check_jit(g, inputs_of(g),
                {.tol = {2, 1e-6}, .threads = {1, 2}, .fma = false, .round_each_node = true});
    }
  }
  // a transposed input broadcast along the innermost dimension: a BroadcastLoad that keeps the
  // input's memory order ([4,1,3] by [2,0,1] is [3,4,1]: rows 1 apart, columns 3 apart)
  {
    Graph h;
    auto x = h.parameter(f32, {4, 1, 3}, "x");
    auto y = h.parameter(f32, {3, 4, 7}, "y");
    h.result(h.add(h.transpose(x, {2, 0, 1}), y));
    check_jit(h, inputs_of(h), {.threads = {1, 2}});
  }
  // [1,0] on a matrix, with a per-row scale (broadcast along the innermost dimension)
  Graph g;
  auto x = g.parameter(f32, {33, 17}, "x");
  auto s = g.parameter(f32, {17, 1}, "s");
  g.result(g.multiply(g.transpose(x, {1, 0}), s));
  check_jit(g, inputs_of(g), {.threads = {1, 2}});
}

TEST_CASE("JIT: MHA-style inputs [B,S,H,D] transposed by [0,2,1,3] and [0,2,3,1]") {

  for (const Shape& bshd : {Shape{2, 17, 3, 16}, Shape{2, 32, 3, 16}})
    for (const Order& order : {Order{0, 2, 1, 3}, Order{0, 2, 3, 1}}) {
      INFO("shape " << bshd.to_string() << " order " << order[0] << order[1] << order[2]
                    << order[3]);
      Graph g;
      auto q = g.parameter(f32, bshd, "q");
      auto k = g.parameter(f32, bshd, "k");
      auto scale = g.scalar(f32, 0.125);
      // both inputs transposed the same way, plus a scaled exp: one kernel, two strided reads
      g.result(g.exp(g.multiply(g.add(g.transpose(q, order), g.transpose(k, order)), scale)));
      const CompiledKernel kernel = compile(g);
      REQUIRE(kernel.signature().inputs.size() == 2);
      CHECK(kernel.signature().inputs[0].shape == bshd); // what the user passes to run()
      CHECK(kernel.signature().inputs[1].shape == bshd);
      CHECK(kernel.signature().outputs[0].shape == transposed(bshd, order));
      check_jit(g, inputs_of(g), {.tol = {2, 1e-6}, .threads = {1, 2}});
    }
}

TEST_CASE("JIT: strided reads never touch memory outside the input (guard pages)") {
  Graph g;
  const Shape s{3, 7, 5};
  g.result(g.relu(g.transpose(g.parameter(f32, s, "x"), {0, 2, 1})));
  check_guarded(g, make_tensor(s, 3, Pattern::finite));
}

TEST_CASE("JIT: f16, bf16, i8 and u8 inputs whose innermost extent is 1 moved by the Transpose "
          "are read element by element, never past the input") {
  // the unit axis leaves the domain, so the strided axis becomes innermost: a gather of
  // narrow elements (a dword gather would read the wrong elements, and past the last one)
  const std::pair<Shape, Order> cases[] = {{Shape{2, 3, 1}, {1, 0, 2}},
                                           {Shape{2, 1, 1, 2, 1}, {2, 3, 1, 0, 4}},
                                           {Shape{17, 5, 1}, {1, 0, 2}},
                                           {Shape{3, 40, 1}, {1, 0, 2}}};
  for (const ElementType t :
       {ElementType::f16, ElementType::bf16, ElementType::i8, ElementType::u8})
    for (const auto& [s, order] : cases) {
      INFO(to_string(t) << " " << s.to_string());
      Graph g;
      g.result(g.relu(g.transpose(g.parameter(t, s, "x"), order)));
      check_jit(g, inputs_of(g), {.threads = {1, 2}, .unroll = {1, 4}});
      std::vector<double> v(static_cast<std::size_t>(s.element_count()));
      for (std::size_t i = 0; i < v.size(); ++i) v[i] = double(i % 100) - 40;
      check_guarded(g, Tensor::from_values(t, s, v));
    }
}

TEST_CASE("JIT: a transposed input with dynamic shapes is rejected with dynamic_layout") {
  Graph g;
  auto x = g.parameter(f32, {2, dynamic, 8}, "x");
  g.result(g.relu(g.transpose(x, {0, 2, 1})));
  CHECK(error_id([&] { (void)compile(g); }) == "snippets.compile.dynamic_layout");
}

// ---- tokenizer and Program ----

TEST_CASE("tokenize: a Transpose of a model input joins the Subgraph of its consumers") {
  Graph m;
  auto x = m.parameter(f32, {2, 7, 3, 5}, "x");
  auto y = m.parameter(f32, {2, 3, 5, 7}, "y");
  m.result(m.exp(m.add(m.transpose(x, {0, 2, 3, 1}), y)), "out");
  const Graph t = passes::tokenize(m);
  REQUIRE(count_ops(t, "Subgraph") == 1);
  CHECK(count_ops(t, "Transpose") == 0);
  for (NodeId id = 0; id < t.size(); ++id)
    if (const auto* sg = std::get_if<ir::Subgraph<x64::Traits>>(&t.node(id).op)) {
      CHECK(count_ops(*sg->body, "Transpose") == 1);
      CHECK(sg->body->parameters().size() == 2);
    }
  const Program<> program(m);
  REQUIRE(program.steps().size() == 1);
  CHECK(program.steps()[0].kind == Program<>::StepKind::kernel);
  const std::vector<Tensor> in = inputs_of(m);
  reference::Options rounded;
  rounded.round_each_node = true; // as the kernel rounds the Add before the Exp
  CHECK(compare(program.run(in, with_threads(2))[0], reference::evaluate(m, in, rounded)[0],
                {2, 1e-6}) == "");
}

TEST_CASE("tokenize: a Transpose of another Subgraph's output starts the next Subgraph, and one "
          "whose input is also read inside stays out") {
  SUBCASE("after a Subgraph") {
    Graph m;
    auto x = m.parameter(f32, {4, 6}, "x");
    auto r = m.relu(x);
    m.result(m.negative(m.transpose(r, {1, 0})), "out");
    const Graph t = passes::tokenize(m);
    CHECK(count_ops(t, "Subgraph") == 2);
    CHECK(count_ops(t, "Transpose") == 0);
    const Program<> program(m);
    for (const auto& step : program.steps()) CHECK(step.kind == Program<>::StepKind::kernel);
    const std::vector<Tensor> in = inputs_of(m);
    CHECK(compare(program.run(in)[0], reference::evaluate(m, in)[0], exact) == "");
  }
  SUBCASE("a model input read transposed and as is") {
    Graph m;
    auto x = m.parameter(f32, {5, 5}, "x");
    m.result(m.add(m.transpose(x, {1, 0}), x), "out");
    const Graph t = passes::tokenize(m);
    for (NodeId id = 0; id < t.size(); ++id)
      if (const auto* sg = std::get_if<ir::Subgraph<x64::Traits>>(&t.node(id).op))
        CHECK(count_ops(*sg->body, "Transpose") + count_ops(*sg->body, "Add") == 1);
    const Program<> program(m);
    const std::vector<Tensor> in = inputs_of(m);
    CHECK(compare(program.run(in)[0], reference::evaluate(m, in)[0], exact) == "");
  }
}

TEST_CASE("tokenize: Transposes of one order of a model input, each read by its own op, are one "
          "load of one Subgraph; of two orders they are not") {
  for (const bool same : {true, false}) {
    Graph m;
    auto x = m.parameter(f32, {4, 4, 4}, "x");
    const auto a = m.transpose(x, {1, 0, 2});
    const auto b = m.transpose(x, same ? Order{1, 0, 2} : Order{2, 1, 0});
    m.result(m.multiply(m.relu(a), m.exp(b)), "out");
    const Graph t = passes::tokenize(m);
    CHECK(count_ops(t, "Subgraph") == (same ? 1 : 2));
    const Program<> program(m);
    for (const auto& step : program.steps()) CHECK(step.kind == Program<>::StepKind::kernel);
    const std::vector<Tensor> in = inputs_of(m);
    reference::Options rounded;
    rounded.round_each_node = true;
    CHECK(compare(program.run(in, with_threads(2))[0], reference::evaluate(m, in, rounded)[0],
                  {2, 1e-6}) == "");
  }
}

// ---- the output side ----

TEST_CASE("FuseTransposeIntoResult: a Transpose before an output becomes the Result's layout when "
          "the innermost axis stays innermost") {
  Graph g;
  auto x = g.parameter(f32, {2, 3, 5, 7}, "x");
  g.result(g.transpose(g.relu(x), {0, 2, 1, 3}), "y");
  const Graph out = passes::FuseTransposeIntoResult{}.run(g);
  CHECK(count_ops(out, "Transpose") == 0);
  REQUIRE(out.results().size() == 1);
  const auto& r = out.node(out.results()[0]);
  const Layout& l = std::get<ir::Result>(r.op).layout;
  CHECK(l.order() == Order{0, 2, 1, 3});
  CHECK(out.type(r.inputs[0]).shape == Shape{2, 3, 5, 7}); // computed untransposed
  CHECK(l.physical_shape(out.type(r.inputs[0]).shape) == Shape{2, 5, 3, 7}); // user's buffer
  CHECK(r.name == "y");
  CHECK(ir::to_string(out).find("Result 'y'") != std::string::npos);

  SUBCASE("an order that moves the last axis is left, and compile() says why") {
    Graph h;
    auto a = h.parameter(f32, {3, 5}, "a");
    h.result(h.transpose(h.relu(a), {1, 0}));
    CHECK(count_ops(passes::FuseTransposeIntoResult{}.run(h), "Transpose") == 1);
    try {
      (void)compile(h);
      FAIL("no error");
    } catch (const Error& e) {
      CHECK(e.id() == "snippets.compile.unsupported_op");
      CHECK(std::string(e.what()).find("last op before an output") != std::string::npos);
    }
  }
  SUBCASE("the innermost axis of extent > 1 decides: [3,1,7,1] by [2,1,0,3] is not folded") {
    Graph h;
    auto a = h.parameter(f32, {3, 1, 7, 1}, "a");
    h.result(h.transpose(h.relu(a), {2, 1, 0, 3}));
    CHECK(count_ops(passes::FuseTransposeIntoResult{}.run(h), "Transpose") == 1);
    Graph k;
    auto c = k.parameter(f32, {3, 7, 1}, "c");
    k.result(k.transpose(k.relu(c), {0, 2, 1})); // [3,1,7]: 7 stays innermost
    CHECK(count_ops(passes::FuseTransposeIntoResult{}.run(k), "Transpose") == 0);
  }
  SUBCASE("a Result layout must be a permutation of the value's rank") {
    Graph h;
    auto a = h.parameter(f32, {3, 5}, "a");
    CHECK(error_id([&] {
            h.make(ir::Result{Layout::permuted({0, 2, 1})}, {a});
          }) == "snippets.layout.rank_mismatch");
    CHECK(error_id([&] {
            h.make(ir::Result{Layout::blocked({0, 1}, 1, 8)}, {a});
          }) == "snippets.layout.invalid");
  }
}

TEST_CASE("JIT: transposed outputs, and inputs and outputs transposed in one kernel") {
  for (const Shape& s : {Shape{2, 7, 3, 17}, Shape{1, 33, 5, 37}, Shape{3, 1, 7, 2}}) {
    for (const Order& order : {Order{0, 2, 1, 3}, Order{2, 1, 0, 3}, Order{1, 0, 2, 3}}) {
      INFO("shape " << s.to_string() << " order " << order[0] << order[1] << order[2] << order[3]);
      Graph g;
      auto x = g.parameter(f32, s, "x");
      auto b = g.parameter(f32, {s[3]}, "b");
      g.result(g.transpose(g.add(g.relu(x), b), order), "out");
      const CompiledKernel k = compile(g, {.isa = x64::Isa::avx2});
      CHECK(k.signature().outputs[0].shape == transposed(s, order));
      check_jit(g, inputs_of(g), {.threads = {1, 2}, .unroll = {1, 4}});
    }
  }
  // [B,S,H,D] -> [0,2,1,3] -> exp -> [0,2,1,3] back: both folded, the kernel walks [B,H,S,D]
  Graph g;
  const Shape bshd{2, 17, 3, 33};
  auto x = g.parameter(f32, bshd, "x");
  auto y = g.exp(g.transpose(x, {0, 2, 1, 3}));
  g.result(g.transpose(y, {0, 2, 1, 3}), "out");
  const Graph canonical = passes::DefaultDataFlow{}.run(g);
  CHECK(count_ops(canonical, "Transpose") == 0);
  check_jit(g, inputs_of(g), {.tol = {2, 1e-6}, .threads = {1, 2}});
  // a bf16 output keeps its layout through the Convert that AlignElementTypes puts before it
  Graph h;
  auto z = h.parameter(ElementType::bf16, bshd, "z");
  h.result(h.transpose(h.relu(z), {0, 2, 1, 3}), "out");
  check_jit(h, inputs_of(h), {.threads = {1, 2}});
}

TEST_CASE("tokenize: a Transpose that keeps the last axis last ends the Subgraph before a "
          "model output") {
  Graph m;
  auto x = m.parameter(f32, {2, 7, 3, 5}, "x");
  m.result(m.transpose(m.relu(x), {0, 2, 1, 3}), "out");
  const Graph t = passes::tokenize(m);
  CHECK(count_ops(t, "Subgraph") == 1);
  CHECK(count_ops(t, "Transpose") == 0);
  const Program<> program(m);
  REQUIRE(program.steps().size() == 1);
  CHECK(program.steps()[0].kind == Program<>::StepKind::kernel);
  const std::vector<Tensor> in = inputs_of(m);
  CHECK(compare(program.run(in, with_threads(2))[0], reference::evaluate(m, in)[0], exact) == "");
}

TEST_CASE("a Result layout is refused where it cannot be honoured: a Program's outputs, a body "
          "with an input layout, a strided innermost dimension") {
  Graph m;
  auto x = m.parameter(f32, {2, 3, 4}, "x");
  m.make(ir::Result{Layout::permuted({1, 0, 2})}, {m.relu(x)}, "out");
  CHECK(error_id([&] { Program<> p(m); }) == "snippets.program.layout_unsupported");
  // compiled directly, the layout is the output buffer's: [3,2,4]
  const CompiledKernel k = compile(m);
  CHECK(k.signature().outputs[0].shape == Shape{3, 2, 4});
  Graph g;
  auto a = g.parameter(f32, {1, 3, 4, 5}, "a", Layout::channels_last(4));
  g.make(ir::Result{Layout::permuted({0, 2, 1, 3})}, {g.relu(a)}, "out");
  CHECK(error_id([&] { (void)compile(g); }) == "snippets.canonicalize.layout_conflict");
  // [3,5,1] by [1,0,2] keeps the last axis last, but that axis has extent 1: the axis of 5
  // would be written with a stride (an internal assert before)
  Graph s;
  s.make(ir::Result{Layout::permuted({1, 0, 2})}, {s.relu(s.parameter(f32, {3, 5, 1}, "x"))},
         "out");
  CHECK(error_id([&] { (void)compile(s); }) == "snippets.compile.strided_output");
}

TEST_CASE(
    "JIT: 100 random orders and shapes, transposed inputs and outputs, against the reference") {
  Rng rng(2026);
  const Dim sizes[] = {1, 2, 3, 5, 7, 17, 16, 32};
  auto permutation = [&](std::size_t rank) {
    Order o(rank);
    for (std::size_t i = 0; i < rank; ++i) o[i] = i;
    for (std::size_t i = rank; i-- > 1;)
      std::swap(o[i], o[static_cast<std::size_t>(rng.integer(0, static_cast<std::int64_t>(i)))]);
    return o;
  };
  for (int c = 0; c < 100; ++c) {
    const auto rank = static_cast<std::size_t>(rng.integer(2, 5));
    std::vector<Dim> dims;
    for (std::size_t i = 0; i < rank; ++i) dims.push_back(sizes[rng.integer(0, 7)]);
    const Shape s(dims);
    const Order in_order = permutation(rank), out_order = permutation(rank);
    const Shape t = transposed(s, in_order);
    Graph g;
    Value acc = g.transpose(g.parameter(f32, s, "x"), in_order);
    const auto inputs = rng.integer(1, 5); // more transposed inputs: register pressure
    for (std::int64_t i = 0; i < inputs; ++i)
      acc = g.add(acc, g.transpose(g.parameter(f32, s), in_order));
    std::vector<Dim> bdims(t.begin(), t.end());
    bdims[static_cast<std::size_t>(rng.integer(0, static_cast<std::int64_t>(rank) - 1))] = 1;
    acc = g.relu(g.multiply(acc, g.parameter(f32, Shape(bdims), "b"))); // broadcast somewhere
    const bool out_folds = passes::FuseTransposeIntoResult::keeps_innermost(t, out_order);
    g.result(out_folds ? g.transpose(acc, out_order) : acc);
    INFO("case " << c << ": " << s.to_string() << ", inputs transposed by " << ir::to_string(g));
    check_jit(g, inputs_of(g, static_cast<std::uint64_t>(c)),
              {.threads = {1, 2}, .fma = false, .round_each_node = true}); // bit for bit
  }
}
