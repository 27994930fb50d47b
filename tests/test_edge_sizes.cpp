// SPDX-License-Identifier: Apache-2.0
// tests/test_edge_sizes.cpp: tensors at the ends of the size range, through compile(),
// run() and Program (issue 26):
//  - empty tensors where an op turns them into non-empty values (a MatMul of depth 0, a
//    reduction over an empty axis) or where a product has no rows, columns or batches;
//  - shapes whose element or byte count int64 cannot hold, static and dynamic;
//  - a dimension of 2^31 elements or more (64-bit loop counts and pointer steps).
#include <doctest/doctest.h>
#include <sys/mman.h>

#include <cstdint>
#include <string>
#include <vector>

#include "jit_test_util.hpp"

using namespace snippets;
using namespace snippets::jit_test;

namespace {

/// relu(a @ b + bias) in `t`: a product with an epilogue, so depth 0 shows the epilogue of
/// zeros. `b_constant`: B is a Constant (packed at compile time), else an input (packed per
/// call).
Graph product(const Shape& a, const Shape& b, bool b_constant, ElementType t) {
  Graph g;
  const auto x = g.parameter(t, a, "a");
  const auto y = b_constant ? g.constant(t, b, {0.5}, "b") : g.parameter(t, b, "b");
  const auto m = g.matmul(x, y);
  const Shape out = g.type(m).shape;
  const auto bias = g.parameter(t, Shape{out.rank() ? out.back() : 1}, "bias");
  g.result(g.relu(g.add(m, bias)), "y");
  return g;
}

std::vector<Tensor> inputs_of(const Graph& g, std::uint64_t seed) {
  std::vector<Tensor> in;
  for (ir::NodeId p : g.parameters()) {
    const ir::TensorType& t = g.node(p).outputs[0];
    in.push_back(Tensor::from_values(t.type, t.shape, make_tensor(t.shape, seed++).values().v));
  }
  return in;
}

/// Outputs of `p` on `in`, written over buffers filled with NaN (a step that writes nothing
/// shows).
std::vector<Tensor> run_over_nan(const Program<>& p, const std::vector<Tensor>& in) {
  std::vector<ConstTensorView> views;
  for (const auto& t : in) views.push_back({t.type(), t.shape(), t.data()});
  std::vector<Tensor> out;
  std::vector<TensorView> out_views;
  for (ir::NodeId r : p.graph().results()) {
    const auto t = p.graph().type(p.graph().node(r).inputs[0]);
    out.push_back(Tensor::from_values(t.type, t.shape, {qnan}));
  }
  for (auto& t : out) out_views.push_back({t.type(), t.shape(), t.data()});
  auto ctx = p.make_context();
  p.run(ctx, views, out_views);
  return out;
}

} // namespace

TEST_CASE("edge sizes: a MatMul with an empty dimension gives an empty output, or its epilogue "
          "of zeros at depth 0, in compile() and Program, in f32 and bf16") {
  const std::pair<Shape, Shape> shapes[] = {{{4, 0}, {0, 5}},
                                            {{0, 3}, {3, 5}},
                                            {{4, 3}, {3, 0}},
                                            {{0, 4, 3}, {3, 5}},
                                            {{2, 3, 0}, {0, 9}}};
  for (const ElementType t : {f32, ElementType::bf16})
    for (const auto& [a, b] : shapes)
      for (const bool b_constant : {false, true}) {
        INFO(to_string(t) << " a = " << a.to_string() << ", b = " << b.to_string()
                          << ", constant B: " << b_constant);
        const Graph g = product(a, b, b_constant, t);
        const std::vector<Tensor> in = inputs_of(g, 7);
        const auto want = reference::evaluate(g, in);
        for_each_isa([&](x64::Isa isa) {
          const CompiledKernel k = compile(g, {.isa = isa});
          for (const int threads : {1, 2}) {
            const auto got = k.run(std::span<const Tensor>(in), with_threads(threads));
            CHECK(compare(got.at(0), want.at(0), exact) == "");
          }
        });
        const Program<> p(g);
        check_steps_are_kernels(p);
        CHECK(compare(run_over_nan(p, in).at(0), want.at(0), exact) == "");
      }
}

TEST_CASE("edge sizes: attention over zero keys is refused by compile() and runs on the "
          "reference path in a Program") {
  Graph g;
  const auto q = g.parameter(f32, {2, 8, 16}, "q"), k = g.parameter(f32, {2, 0, 16}, "k"),
             v = g.parameter(f32, {2, 0, 16}, "v");
  const auto s = g.softmax(g.matmul(q, k, false, true), -1);
  g.result(g.matmul(s, v), "y");
  const std::vector<Tensor> in = inputs_of(g, 3);
  CHECK(error_id([&] { compile(g); }) == "snippets.compile.empty_value");
  const Program<> p(g);
  bool fell_back = false;
  for (const auto& step : p.steps())
    fell_back = fell_back || step.note.find("snippets.compile.empty_value") != std::string::npos;
  CHECK(fell_back);
  const auto want = reference::evaluate(g, in);
  CHECK(want.at(0).shape() == Shape{2, 8, 16});
  CHECK(compare(run_over_nan(p, in).at(0), want.at(0), exact) == "");
}

TEST_CASE("edge sizes: reductions over an empty row give -inf and 0 through a Program, and "
          "compile() refuses them") {
  Graph g;
  const auto x = g.parameter(f32, {3, 0}, "x");
  g.result(g.reduce_max(x, {1}, true), "max");
  g.result(g.reduce_sum(x, {1}, true), "sum");
  const std::vector<Tensor> in{Tensor(f32, {3, 0})};
  const auto want = reference::evaluate(g, in);
  CHECK(want.at(0).at(0) == -inf);
  CHECK(want.at(1).at(0) == 0);
  CHECK(error_id([&] { compile(g); }) == "snippets.compile.empty_value");
  const Program<> p(g);
  const auto got = run_over_nan(p, in);
  CHECK(compare(got.at(0), want.at(0), exact) == "");
  CHECK(compare(got.at(1), want.at(1), exact) == "");
}

TEST_CASE("edge sizes: shapes whose bytes int64 cannot count are refused on every path") {
  const Dim huge = Dim{1} << 40;
  Graph g;
  CHECK(error_id([&] { g.parameter(f32, {huge, huge}); }) == "snippets.shape.too_many_elements");
  CHECK(g.size() == 0); // nothing was added
  const auto a = g.parameter(f32, {huge, 1}), b = g.parameter(f32, {1, huge});
  CHECK(error_id([&] { g.add(a, b); }) == "snippets.shape.too_many_elements");
  // elements that fit int64 but bytes that do not
  CHECK(error_id([&] { g.parameter(f32, {Dim{1} << 62}); }) == "snippets.shape.too_many_elements");
  CHECK(ir::TensorType{ElementType::u8, Shape{Dim{1} << 62}}.countable());

  // a dynamic kernel checks the shapes it is run with before it touches memory
  Graph d;
  const auto x = d.parameter(f32, {dynamic, dynamic}, "x"), y = d.parameter(f32, {dynamic}, "y");
  d.result(d.add(x, y), "z");
  const CompiledKernel k = compile(d);
  const NoAccessPage page;
  auto run_with = [&](Shape sx, Shape sy, Shape sz) {
    const ConstTensorView in[] = {{f32, sx, page.data()}, {f32, sy, page.data()}};
    const TensorView out[] = {{f32, sz, page.data()}};
    return error_id([&] { k.run(in, out); });
  };
  const Dim e62 = Dim{1} << 62, e32 = Dim{1} << 32;
  CHECK(run_with({3, e62}, {e62}, {3, e62}) == "snippets.shape.too_many_elements");
  CHECK(run_with({e32, e32}, {e32}, {e32, e32}) == "snippets.shape.too_many_elements");
  CHECK(error_id([&] {
          k.configure(std::vector<Shape>{{e32, 1}, {e32}});
        }) == "snippets.shape.too_many_elements");
}

TEST_CASE("edge sizes: a dimension of 2^31 elements or more compiles, and a row of 2^31 + 5 "
          "elements is summed exactly") {
  const Dim n = (Dim{1} << 31) + 5;
  Graph g;
  const auto x = g.parameter(f32, {2, n}, "x"), b = g.parameter(f32, {2, 1}, "b");
  g.result(g.add(x, b), "y");
  for_each_isa(
      [&](x64::Isa isa) { CHECK(error_id([&] { compile(g, {.isa = isa}); }) == "no error"); });

  // u8 rows of zero pages (reading them commits no memory) with a few values set
  Graph r;
  const auto u = r.parameter(ElementType::u8, {2, n}, "u");
  r.result(r.reduce_sum(r.convert(u, f32), {1}, true), "sum");
  const std::size_t bytes = static_cast<std::size_t>(2 * n);
  void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  REQUIRE(mem != MAP_FAILED);
  auto* row = static_cast<std::uint8_t*>(mem);
  row[0] = 3;
  row[n - 1] = 7;               // the last element of row 0
  row[n] = 11;                  // the first of row 1
  row[n + (Dim{1} << 31)] = 13; // past 2^31 in row 1
  row[2 * n - 1] = 17;
  for_each_isa([&](x64::Isa isa) {
    const CompiledKernel k = compile(r, {.isa = isa});
    Tensor out(f32, {2, 1});
    const ConstTensorView in[] = {{ElementType::u8, {2, n}, mem}};
    const TensorView outs[] = {{f32, {2, 1}, out.data()}};
    k.run(in, outs, with_threads(2));
    CHECK(out.at(0) == 10);
    CHECK(out.at(1) == 41);
  });
  munmap(mem, bytes);
}

TEST_CASE("edge sizes: a MatMul of a matrix of 2 GiB or more is refused with its id") {
  Graph g;
  const auto a = g.parameter(f32, {Dim{1} << 16, Dim{1} << 15}, "a");
  g.result(g.matmul(a, g.parameter(f32, {Dim{1} << 15, 8}, "b")), "y");
  CHECK(error_id([&] { compile(g); }) == "snippets.compile.offset_too_large");
}
