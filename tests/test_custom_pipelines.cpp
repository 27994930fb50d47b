// SPDX-License-Identifier: Apache-2.0
// The pipelines of examples/custom_pipelines.hpp (a pass removed, a pass replaced, a data-flow
// pass added) change the kernels as they say, and every kernel they build, in a Program too,
// still matches the reference interpreter on every ISA the host has, with one and two threads.
#include <doctest/doctest.h>

#include <algorithm>

#include "custom_pipelines.hpp"
#include "matmul_test_util.hpp"

using namespace snippets;
using namespace snippets::jit_test;
using namespace custom_pipelines;

namespace {
/// compile<T, L, D>(g) for every ISA, run with one and two threads, against the reference.
template <class Lowering, class DataFlow = passes::DefaultDataFlow>
void check_against_reference(const Graph& g, const std::vector<Tensor>& in, Tolerance tol) {
  const auto want = reference::evaluate(g, in);
  for_each_isa([&](x64::Isa isa) {
    const auto k = compile<x64::Traits, Lowering, DataFlow>(g, {.isa = isa});
    for (const int threads : {1, 2}) {
      INFO("threads = " << threads);
      const auto got = k.run(std::span<const Tensor>(in), with_threads(threads));
      for (std::size_t o = 0; o < got.size(); ++o) {
        const std::string report = compare(got[o], want[o], tol);
        CHECK_MESSAGE(report.empty(), report);
      }
    }
  });
}

/// y = exp(x) * s + x and relu(y), on [rows, cols]; s is [rows, 1] if `per_row`.
Graph two_outputs(Dim rows, Dim cols, bool per_row = false) {
  Graph g;
  auto x = g.parameter(f32, {rows, cols});
  auto s = g.parameter(f32, {rows, per_row ? 1 : cols});
  auto y = g.add(g.multiply(g.exp(x), s), x);
  g.result(y);
  g.result(g.relu(y));
  return g;
}
} // namespace

TEST_CASE("NoDomainCollapse keeps the rows and columns as loops; the kernels stay right") {
  for (const auto& [rows, cols] : {std::pair<Dim, Dim>{64, 300}, {7, 37}, {3, 1}}) {
    INFO("shape = [" << rows << "," << cols << "]");
    const Graph g = two_outputs(rows, cols);
    const auto flat = lower(g, x64::Isa::avx2);
    const auto nested = lower<x64::Traits, NoDomainCollapse>(g, x64::Isa::avx2);
    CHECK(flat.domain.size() == 1);
    CHECK(nested.domain.size() == 2);
    check_against_reference<NoDomainCollapse>(
        g, {uniform({rows, cols}, 1, -4, 4), uniform({rows, cols}, 2)}, Tolerance{4, 1e-6});
  }
}

TEST_CASE("UnrollByRowLength replaces InsertSpecificIterations: short rows are not unrolled") {
  for (const Dim cols : {Dim{9}, Dim{1000}}) {
    INFO("cols = " << cols);
    const Graph g = two_outputs(5, cols, true); // rows stay a loop: the domain is [5, cols]
    std::vector<std::string_view> trace;
    const auto lir = lower<x64::Traits, MyUnrolling>(g, x64::Isa::avx2, {.trace = &trace});
    CHECK(std::ranges::count(trace, "UnrollByRowLength") == 1);
    CHECK(std::ranges::count(trace, "InsertSpecificIterations") == 0);
    // one Exp per body copy: 9 = one full vector and the masked tail; 1000 = 8 copies in the
    // main loop (64 elements per iteration), then 40 = 5 full vectors
    CHECK(count<ir::Exp>(lir) == (cols == 9 ? 2 : 13));
    check_against_reference<MyUnrolling>(g, {uniform({5, cols}, 3, -4, 4), uniform({5, 1}, 4)},
                                         Tolerance{4, 1e-6});
  }
}

TEST_CASE("RemoveMultiplyByOne drops x * 1 where it changes nothing, and only there") {
  Graph g;
  auto x = g.parameter(f32, {6, 33});
  auto one = g.constant(f32, {1}, {1.0});
  auto by_one = g.multiply(one, g.sigmoid(x));                   // removed
  auto by_two = g.multiply(by_one, g.constant(f32, {1}, {2.0})); // kept: not a one
  g.result(g.add(by_two, g.parameter(f32, {6, 1})));
  // kept: x * 1 is [6, 33] only through the one (the Add would broadcast it as well, but a
  // pass on one node cannot know that)
  auto widened = g.multiply(g.parameter(f32, {6, 1}), g.constant(f32, {1, 33}, {1.0}));
  g.result(g.add(widened, g.parameter(f32, {6, 33})));
  auto multiplies = [](const Graph& body) {
    int n = 0;
    for (ir::NodeId id = 0; id < body.size(); ++id) n += ir::is<ir::Multiply>(body.node(id).op);
    return n;
  };
  CHECK(multiplies(passes::DataFlowPipeline<passes::DefaultDataFlow>{}.run(g)) == 3);
  CHECK(multiplies(passes::DataFlowPipeline<MyDataFlow>{}.run(g)) == 2);
  check_against_reference<passes::DefaultLowering, MyDataFlow>(
      g, {uniform({6, 33}, 5, -5, 5), uniform({6, 1}, 6), uniform({6, 1}, 7), uniform({6, 33}, 8)},
      Tolerance{4, 1e-6});
}

TEST_CASE("a Program with the custom pipelines: every Subgraph a kernel, the model right") {
  Graph m;
  auto q = m.parameter(f32, {16, 32});
  auto w = m.constant(f32, {32, 8}, std::vector<double>(256, 0.125));
  auto hidden = m.relu(m.matmul(q, w));
  m.result(m.multiply(m.exp(m.negative(hidden)), m.constant(f32, {1}, {1.0})));
  m.result(m.sigmoid(m.multiply(m.parameter(f32, {5, 40}), m.constant(f32, {1}, {1.0}))));
  const Program<x64::Traits, NoDomainCollapse, MyDataFlow> program(m);
  check_steps_are_kernels(program);
  for (const auto& s : program.steps())
    if (s.kernel) CHECK(s.kernel->pipeline().find("RemoveMultiplyByOne") != std::string_view::npos);
  const std::vector<Tensor> in = {uniform({16, 32}, 7), uniform({5, 40}, 8, -6, 6)};
  const auto want = reference::evaluate(m, in);
  for (const int threads : {1, 2}) {
    const auto got = program.run(in, with_threads(threads));
    for (std::size_t o = 0; o < got.size(); ++o) {
      const std::string report = compare(got[o], want[o], Tolerance{64, 1e-5});
      CHECK_MESSAGE(report.empty(), report);
    }
  }
}
