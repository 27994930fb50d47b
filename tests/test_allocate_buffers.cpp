// SPDX-License-Identifier: Apache-2.0
// Tests of passes/allocate_buffers.hpp (clusters, pointer groups, scratch placement) and of the
// graph colouring it uses (ir/graph_view.hpp), plus the JIT results with planning on and off.
#include <set>

#include "jit_test_util.hpp"

using namespace snippets;
using namespace snippets::jit_test;

namespace {

using LIR = ir::LinearIR<x64::Traits>;

/// The LIR after the control-flow passes (buffers placed, before tails and registers).
LIR control_flow(const Graph& g, bool optimize = true) {
  return lower<x64::Traits, passes::DefaultControlFlow>(g, x64::Isa::avx512,
                                                        {.optimize_buffers = optimize});
}

struct Placed {
  std::int64_t offset = 0, bytes = 0;
  std::size_t group = 0, def = 0, end = 0;
};

/// Every Buffer's bytes, pointer group and lifetime (its Store to its last Load).
std::vector<Placed> buffers(LIR& lir) {
  lir.renumber();
  std::vector<Placed> out;
  for (auto& e : lir) {
    const auto* b = std::get_if<ir::Buffer>(&e->op);
    if (!b) continue;
    Placed p{b->offset, b->elements * 4, b->reg_group, e->input_expr(0).order, 0};
    for (auto& use : e->output(0).consumers()) p.end = std::max(p.end, use.owner().order);
    CHECK(e->data_index == lir.num_inputs + lir.num_outputs + b->reg_group);
    out.push_back(p);
  }
  return out;
}

Graph softmax_chain(int depth, Dim n, int extra_inputs = 0) {
  Graph g;
  auto x = g.parameter(f32, Shape{3, n});
  for (int i = 0; i < extra_inputs; ++i) x = g.add(x, g.parameter(f32, Shape{3, n}));
  for (int i = 0; i < depth; ++i) x = g.softmax(x, -1);
  g.result(x);
  return g;
}

} // namespace

TEST_CASE("colour_vertices: adjacent vertices differ, few colours") {
  using ir::detail::colour_vertices;
  CHECK(colour_vertices(3, {}) == std::vector<std::size_t>{0, 0, 0});
  const auto triangle = colour_vertices(3, {{0, 1}, {1, 2}, {0, 2}});
  CHECK(std::set<std::size_t>(triangle.begin(), triangle.end()).size() == 3);
  CHECK(colour_vertices(4, {{0, 1}, {1, 2}, {2, 3}}) == std::vector<std::size_t>{0, 1, 0, 1});
  Rng rng(5);
  for (int trial = 0; trial < 100; ++trial) {
    const auto n = static_cast<std::size_t>(rng.integer(1, 30));
    ir::detail::EdgeList edges;
    for (std::int64_t k = rng.integer(0, 60); k > 0; --k) {
      const auto a = static_cast<std::uint32_t>(rng.integer(0, std::int64_t(n) - 1));
      const auto b = static_cast<std::uint32_t>(rng.integer(0, std::int64_t(n) - 1));
      if (a != b) edges.push_back({a, b});
    }
    const auto colour = colour_vertices(n, edges);
    std::size_t max_degree = 0;
    std::vector<std::size_t> degree(n, 0);
    for (const auto& [a, b] : edges) {
      CHECK(colour[a] != colour[b]);
      max_degree = std::max({max_degree, ++degree[a], ++degree[b]});
    }
    CHECK(*std::max_element(colour.begin(), colour.end()) <= max_degree); // greedy bound
  }
}

TEST_CASE("allocate buffers: Softmax keeps one row of exponentials per thread") {
  LIR lir = control_flow(softmax_chain(1, 1000));
  const auto b = buffers(lir);
  REQUIRE(b.size() == 1);
  CHECK(lir.buffer_pointers == 1);
  CHECK(lir.scratch_bytes == 4000 + 32); // one row, padded to 64 bytes
}

TEST_CASE("allocate buffers: a buffer written where another is last read reuses it in place") {
  // softmax(softmax(softmax(x))): five buffers (three rows of exponentials, two softmax outputs
  // read by two loops each), each written in the loop that last reads the one before
  LIR opt = control_flow(softmax_chain(3, 100));
  const auto placed = buffers(opt);
  REQUIRE(placed.size() == 5);
  CHECK(opt.buffer_pointers == 1);
  CHECK(opt.scratch_bytes == 448); // 400 bytes padded: one row for all five
  for (const auto& p : placed) CHECK(p.offset == 0);

  LIR debug = control_flow(softmax_chain(3, 100), false);
  const auto apart = buffers(debug);
  CHECK(debug.buffer_pointers == 5);
  CHECK(debug.scratch_bytes == 5 * 448);
  std::set<std::int64_t> offsets;
  for (const auto& p : apart) offsets.insert(p.offset);
  CHECK(offsets.size() == 5);
}

TEST_CASE("allocate buffers: property: live buffers never share bytes") {
  for (int depth = 1; depth <= 4; ++depth)
    for (Dim n : {Dim{7}, Dim{64}, Dim{130}})
      for (const bool optimize : {true, false}) {
        INFO("depth = " << depth << ", n = " << n << ", optimize = " << optimize);
        LIR lir = control_flow(softmax_chain(depth, n), optimize);
        const auto placed = buffers(lir);
        for (std::size_t i = 0; i < placed.size(); ++i) {
          CHECK(placed[i].offset + placed[i].bytes <= lir.scratch_bytes);
          for (std::size_t j = 0; j < i; ++j) {
            // a Store that follows the last Load of another buffer (in place) is not overlap
            const Placed &a = placed[i], &b = placed[j];
            if (a.def > b.end || b.def > a.end) continue;
            CHECK((a.offset + a.bytes <= b.offset || b.offset + b.bytes <= a.offset));
          }
        }
      }
}

TEST_CASE("allocate buffers: chained Softmax is right with planning on and off") {
  const Graph g = softmax_chain(3, 37);
  Rng rng(3);
  Tensor x(f32, Shape{3, 37});
  for (std::size_t i = 0; i < x.size(); ++i) x.set(i, rng.uniform(-8, 8));
  const Tensor want = reference::evaluate(g, {x})[0];
  for_each_isa([&](x64::Isa isa) {
    for (const bool optimize : {true, false}) {
      INFO("optimize_buffers = " << optimize);
      const auto got = compile(g, {.isa = isa, .optimize_buffers = optimize}).run({x});
      const std::string report = compare(got[0], want, {16, 1e-9});
      CHECK_MESSAGE(report.empty(), report);
    }
  });
}

TEST_CASE("allocate buffers: too many buffer pointers for the registers") {
  const Graph g = softmax_chain(3, 16, 8); // 9 inputs, 1 output, 5 buffers
  CHECK(error_id([&] { compile(g, {.optimize_buffers = false}); }) ==
        "snippets.compile.too_many_buffers");
  CHECK(error_id([&] { compile(g); }) == "no error"); // planned: one pointer
}
