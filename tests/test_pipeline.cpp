// SPDX-License-Identifier: Apache-2.0
// Compile-time pipelines: composition, editing at any depth, the order check from declared
// properties, describe(), and a user pass that reaches every kind of kernel (the compile-fail
// tests pin the errors of pipelines out of order: tests/compile_fail/pipeline_*.cpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <type_traits>

#include "error_id.hpp"
#include "matmul_test_util.hpp"
#include "snippets/compile.hpp"
#include "snippets/program/program.hpp"

using namespace snippets;
using namespace snippets::jit_test;
namespace p = snippets::passes;

namespace {
/// Counts the expressions it sees; proves a user pass runs where it was inserted.
struct CountExpressions {
  using pass_tag = p::lir_pass_tag;
  static constexpr std::string_view name = "CountExpressions";
  static inline std::size_t seen = 0, runs = 0;
  template <class T> void run(ir::LinearIR<T>& lir, p::PassContext<T>&) const {
    seen = lir.size();
    ++runs;
  }
};

// a user's own property: one pass establishes it, another needs it
struct Tagged {};
struct Tag {
  using pass_tag = p::lir_pass_tag;
  static constexpr std::string_view name = "Tag";
  using establishes = p::Properties<Tagged>;
  template <class T> void run(ir::LinearIR<T>&, p::PassContext<T>&) const {}
};
struct NeedsTag {
  using pass_tag = p::lir_pass_tag;
  static constexpr std::string_view name = "NeedsTag";
  using needs = p::Properties<Tagged>;
  template <class T> void run(ir::LinearIR<T>&, p::PassContext<T>&) const {}
};

template <class P, class Needed = p::Properties<>> constexpr bool in_order() {
  return p::detail::order_ok<P, p::Properties<>, Needed>();
}

Graph relu_body(Dim n) {
  Graph g;
  g.result(g.relu(g.parameter(f32, {n})));
  return g;
}

/// relu(x W + b): a MatMul body with an epilogue.
Graph matmul_body() {
  Graph g;
  auto x = g.parameter(f32, {12, 40});
  auto w = g.parameter(f32, {40, 24});
  auto b = g.parameter(f32, {1, 24});
  g.result(g.relu(g.add(g.matmul(x, w), b)));
  return g;
}
} // namespace

// ---- composition ----
static_assert(std::is_same_v<decltype(p::MarkLoops{} | p::FuseLoops{}),
                             p::Pipeline<p::MarkLoops, p::FuseLoops>>);
static_assert(std::is_same_v<decltype(p::Pipeline<p::MarkLoops>{} |
                                      p::Pipeline<p::FuseLoops, p::InitLoops>{}),
                             p::Pipeline<p::MarkLoops, p::FuseLoops, p::InitLoops>>);
static_assert(std::is_same_v<decltype(p::Canonicalize{} | p::AlignElementTypes{}),
                             p::DataFlowPipeline<p::Canonicalize, p::AlignElementTypes>>);

// ---- editing, flat and nested ----
static_assert(std::is_same_v<p::insert_after_t<p::Pipeline<p::MarkLoops, p::InitLoops>,
                                               p::MarkLoops, p::FuseLoops>,
                             p::Pipeline<p::MarkLoops, p::FuseLoops, p::InitLoops>>);
static_assert(std::is_same_v<p::insert_before_t<p::Pipeline<p::MarkLoops, p::InitLoops>,
                                                p::InitLoops, p::FuseLoops>,
                             p::Pipeline<p::MarkLoops, p::FuseLoops, p::InitLoops>>);
static_assert(
    std::is_same_v<p::remove_t<p::Pipeline<p::MarkLoops, p::FuseLoops, p::InitLoops>, p::FuseLoops>,
                   p::Pipeline<p::MarkLoops, p::InitLoops>>);
static_assert(std::is_same_v<
              p::replace_t<p::Pipeline<p::MarkLoops, p::FuseLoops>, p::FuseLoops, p::InitLoops>,
              p::Pipeline<p::MarkLoops, p::InitLoops>>);
// inside nested pipelines, keeping their nesting
static_assert(std::is_same_v<p::insert_after_t<p::Pipeline<p::Pipeline<p::MarkLoops>, p::InitLoops>,
                                               p::MarkLoops, p::FuseLoops>,
                             p::Pipeline<p::Pipeline<p::MarkLoops, p::FuseLoops>, p::InitLoops>>);
// in both branches of a Select: InsertLoops is in the MatMul stage and in the loop lowering
using WithCounter = p::insert_after_t<p::DefaultLowering, p::InsertLoops, CountExpressions>;
static_assert(std::is_same_v<WithCounter::then_type,
                             p::Pipeline<p::FuseMultiplyAdd, p::LowerBrgemm, p::InsertLoops,
                                         CountExpressions, p::InitLiveRanges, p::AssignRegisters>>);
static_assert(p::detail::Count<WithCounter, CountExpressions>::value == 2);
// a whole stage is an anchor too
static_assert(std::is_same_v<p::replace_t<p::DefaultLowering, p::BrgemmLowering, p::LoopLowering>,
                             p::Select<p::HasMatMul, p::LoopLowering, p::LoopLowering>>);
// data-flow pipelines are edited the same way
static_assert(std::is_same_v<p::remove_t<p::DataFlowPipeline<p::Canonicalize, p::AlignElementTypes>,
                                         p::AlignElementTypes>,
                             p::DataFlowPipeline<p::Canonicalize>>);

// ---- the order check ----
static_assert(in_order<p::DefaultLowering, p::EmissionNeeds>());
static_assert(in_order<p::BrgemmLowering, p::EmissionNeeds>());
static_assert(in_order<p::LoopLowering, p::EmissionNeeds>());
static_assert(in_order<p::DataFlowPipeline<p::DefaultDataFlow>, p::LinearIRNeeds>());
static_assert(in_order<WithCounter, p::EmissionNeeds>()); // an observer needs nothing
static_assert(in_order<p::DefaultControlFlow>());         // lower() may stop early
static_assert(in_order<p::Pipeline<Tag, NeedsTag>>());
// removing a pass nothing needs keeps the order; what InsertSpecificIterations invalidates
// (live ranges) nothing after it reads
static_assert(in_order<p::remove_t<p::DefaultLowering, p::OptimizeDomain>, p::EmissionNeeds>());
static_assert(in_order<p::remove_t<p::DefaultLowering, p::FuseLoops>, p::EmissionNeeds>());
// what a Select holds after it is what both branches establish
static_assert(std::is_same_v<p::props::Intersect<p::Properties<Tagged, p::property::LoopsMarked>,
                                                 p::Properties<p::property::LoopsMarked>>::type,
                             p::Properties<p::property::LoopsMarked>>);

TEST_CASE("describe() lists the passes in run order and shows a Select's branches") {
  CHECK(p::describe<p::Pipeline<p::Pipeline<p::MarkLoops, p::FuseLoops>, p::InitLoops>>() ==
        "MarkLoops\nFuseLoops\nInitLoops\n");
  const std::string& text = p::describe<WithCounter>();
  CHECK(text.starts_with(
      "if HasMatMul:\n  FuseMultiplyAdd\n  LowerBrgemm\n  InsertLoops\n  CountExpressions\n"));
  CHECK(text.find("else:\n  OptimizeDomain\n") != std::string::npos);
  CHECK(text.find("  InsertLoops\n  CountExpressions\n  InitLiveRanges\n  InsertRegSpills\n") !=
        std::string::npos);
}

TEST_CASE("a user pass inserted after InsertLoops runs there and the kernel still works") {
  std::vector<std::string_view> trace;
  auto k = compile<x64::Traits, WithCounter>(relu_body(20), {.trace = &trace});
  auto it = std::find(trace.begin(), trace.end(), "InsertLoops");
  REQUIRE(it != trace.end());
  CHECK(*(it + 1) == "CountExpressions");
  CHECK(CountExpressions::seen > 0);
  CHECK(k.pipeline().find("CountExpressions") != std::string_view::npos);
  std::vector<double> v(20);
  for (int i = 0; i < 20; ++i) v[std::size_t(i)] = i - 10;
  auto out = k.run({reference::Tensor::from_values(ElementType::f32, {20}, v)});
  for (int i = 0; i < 20; ++i) CHECK(out[0].at(std::size_t(i)) == std::max(0, i - 10));
}

TEST_CASE("the user's pipeline reaches MatMul bodies: the pass runs in the Brgemm stage") {
  const Graph g = matmul_body();
  const std::vector<Tensor> in = {uniform({12, 40}, 1), uniform({40, 24}, 2), uniform({1, 24}, 3)};
  const auto want = reference::evaluate(g, in);
  for_each_isa([&](x64::Isa isa) {
    std::vector<std::string_view> trace;
    auto k = compile<x64::Traits, WithCounter>(g, {.isa = isa, .trace = &trace});
    auto it = std::find(trace.begin(), trace.end(), "LowerBrgemm");
    REQUIRE(it != trace.end());
    CHECK(*(it + 1) == "InsertLoops");
    CHECK(*(it + 2) == "CountExpressions");
    const std::string report = compare(k.run(in)[0], want[0], Tolerance{64, 1e-5});
    CHECK_MESSAGE(report.empty(), report);
  });
}

TEST_CASE("a lowering pipeline without LowerBrgemm refuses a MatMul body with a clear error") {
  CHECK(error_id([] { compile<x64::Traits, p::LoopLowering>(matmul_body()); }) ==
        "snippets.compile.unsupported_matmul");
  // the same pipeline compiles bodies without a MatMul
  CHECK_NOTHROW(compile<x64::Traits, p::LoopLowering>(relu_body(9)));
}

TEST_CASE("a kernel says which pipelines built it") {
  const auto k = compile(relu_body(8));
  CHECK(k.pipeline() == "data flow:\n" + p::describe<p::DataFlowPipeline<p::DefaultDataFlow>>() +
                            "lowering:\n" + p::describe<p::DefaultLowering>());
  CHECK(compile(relu_body(0)).pipeline() == k.pipeline()); // a kernel without code too
}

TEST_CASE("Program compiles every Subgraph with its pipelines; the cache keeps them apart") {
  Graph m;
  auto x = m.parameter(f32, {16, 32});
  auto w = m.constant(f32, {32, 8}, std::vector<double>(256, 0.25));
  auto h = m.relu(m.matmul(x, w));
  m.result(m.sigmoid(m.add(h, m.parameter(f32, {16, 8}))));
  m.result(m.exp(m.parameter(f32, {7, 5})));
  const std::vector<Tensor> in = {uniform({16, 32}, 4), uniform({16, 8}, 5), uniform({7, 5}, 6)};
  KernelCache cache;
  CountExpressions::runs = 0;
  const Program<x64::Traits, WithCounter> mine(m, {.cache = &cache});
  check_steps_are_kernels(mine);
  std::size_t kernels = 0;
  for (const auto& s : mine.steps())
    if (s.kernel) {
      ++kernels;
      CHECK(s.kernel->pipeline().find("CountExpressions") != std::string_view::npos);
    }
  CHECK(kernels >= 2);
  CHECK(CountExpressions::runs == kernels);    // the MatMul kernel and the elementwise one
  const Program<> plain(m, {.cache = &cache}); // same bodies, other pipeline: compiled anew
  CHECK(cache.stats().size == 2 * kernels);
  const auto want = reference::evaluate(m, in);
  const auto got = mine.run(in);
  for (std::size_t o = 0; o < got.size(); ++o) {
    const std::string report = compare(got[o], want[o], Tolerance{64, 1e-5});
    CHECK_MESSAGE(report.empty(), report);
  }
}
