// SPDX-License-Identifier: Apache-2.0
// Behaviour of the control-flow and preparation passes, observed on lowered LIRs.
#include <doctest/doctest.h>

#include "snippets/compile.hpp"
#include "snippets/ir/lir_printer.hpp"

using namespace snippets;
using G = ir::Graph<x64::Traits>;
constexpr auto f32 = ElementType::f32;

namespace {
template <class Tag> int count(ir::LinearIR<x64::Traits>& lir) {
  int n = 0;
  for (auto& e : lir) n += std::holds_alternative<Tag>(e->op);
  return n;
}
} // namespace

TEST_CASE("OptimizeDomain collapses the seed's [1,16,29,7] with a [1,16,29,1] input into [464,7]") {
  G g;
  auto a = g.parameter(f32, {1, 16, 29, 7});
  auto b = g.parameter(f32, {1, 16, 29, 1});
  g.result(g.add(a, b));
  auto lir = lower(g, x64::Isa::avx512);
  CHECK(lir.domain == std::vector<Dim>{464, 7});
}

TEST_CASE("OptimizeDomain flattens a plain elementwise op to one dimension") {
  G g;
  auto a = g.parameter(f32, {8, 3, 5, 7});
  g.result(g.relu(a));
  auto lir = lower(g, x64::Isa::avx2);
  CHECK(lir.domain == std::vector<Dim>{840});
}

TEST_CASE("OptimizeDomain keeps dimensions apart where broadcasting differs") {
  G g;
  auto a = g.parameter(f32, {2, 3, 4, 5});
  auto bias = g.parameter(f32, {3, 1, 1});
  g.result(g.add(a, bias));
  auto lir = lower(g, x64::Isa::avx2);
  CHECK(lir.domain == std::vector<Dim>{2, 3, 20});
}

TEST_CASE("FuseMultiplyAdd contracts a Multiply feeding only an Add, and not when fma is off") {
  G g;
  auto a = g.parameter(f32, {64});
  auto b = g.parameter(f32, {64});
  g.result(g.add(g.multiply(a, b), a));
  auto on = lower(g, x64::Isa::avx2, {.unroll = 1});
  CHECK(count<ir::FusedMulAdd>(on) == 1);
  CHECK(count<ir::Multiply>(on) == 0);
  auto off = lower(g, x64::Isa::avx2, {.fma = false, .unroll = 1});
  CHECK(count<ir::FusedMulAdd>(off) == 0);
}

TEST_CASE("a Multiply with a second consumer is not contracted") {
  G g;
  auto a = g.parameter(f32, {64});
  auto m = g.multiply(a, a);
  g.result(g.add(m, a));
  g.result(m);
  auto lir = lower(g, x64::Isa::avx2);
  CHECK(count<ir::FusedMulAdd>(lir) == 0);
}

TEST_CASE("an input broadcast along the innermost dimension becomes one BroadcastLoad") {
  G g;
  auto a = g.parameter(f32, {4, 32});
  auto b = g.parameter(f32, {4, 1});
  g.result(g.add(a, b));
  auto lir = lower(g, x64::Isa::avx512);
  CHECK(count<ir::BroadcastLoad>(lir) == 1); // no tail: 32 is two full vectors
  CHECK(count<ir::BroadcastMove>(lir) == 0);
}

TEST_CASE("InsertSpecificIterations adds one masked tail only when the work is not a multiple") {
  for (Dim n : {16, 17, 5}) {
    G g; // the per-row input keeps the domain two-dimensional
    g.result(g.add(g.parameter(f32, {3, n}), g.parameter(f32, {3, 1})));
    auto lir = lower(g, x64::Isa::avx512);
    int tails = 0;
    for (const auto& l : lir.loops().loops()) tails += l.is_tail;
    CAPTURE(n);
    CHECK(tails == (n == 17 ? 1 : 0)); // n = 5 is one short iteration of the loop itself
    CHECK(count<ir::LoopBegin>(lir) == (n == 17 ? 3 : 2));
  }
}

TEST_CASE("AssignRegisters reuses a register once its last reader has run") {
  G g;
  auto x = g.parameter(f32, {1024});
  auto y = x;
  for (int i = 0; i < 40; ++i) y = g.abs(g.negative(y)); // 80 values in a chain
  g.result(y);
  auto lir = lower(g, x64::Isa::avx2);
  int max_reg = -1;
  for (auto& e : lir)
    for (std::size_t i = 0; i < e->num_outputs(); ++i)
      if (e->out_desc(i).reg.kind == ir::RegKind::vec)
        max_reg = std::max(max_reg, e->out_desc(i).reg.index);
  CHECK(max_reg == 0); // a chain needs one register
}

TEST_CASE("CleanupLoopOffsets folds the inner loop's rewind into the outer increment") {
  G g;
  auto a = g.parameter(f32, {5, 33});
  auto b = g.parameter(f32, {1, 33}); // broadcast across rows: rewinds every row
  g.result(g.add(a, b));
  auto lir = lower(g, x64::Isa::avx2);
  const auto& outer = lir.loops().at(0);
  REQUIRE(outer.ports.size() == 3);
  CHECK(outer.ports[0].ptr_increment == 0);   // a: the inner loops walked the whole row
  CHECK(outer.ports[1].ptr_increment == -33); // b: back to the row start
  for (const auto& p : outer.ports) CHECK(p.finalization_offset == 0);
}

TEST_CASE("the verifier accepts every stage of the default pipeline") {
  G g;
  auto a = g.parameter(f32, {2, 3, 9});
  auto c = g.parameter(f32, {3, 1});
  auto s = g.select(g.greater(a, c), g.sqrt(g.abs(a)), g.negative(c));
  g.result(g.maximum(s, g.scalar(f32, -1.0)));
  CHECK_NOTHROW(lower(g, x64::Isa::avx2, {.verify = true}));
  CHECK_NOTHROW(lower(g, x64::Isa::avx512, {.verify = true}));
}

namespace {
/// The Loads of input 0, in program order: (loop nesting depth, Load::prefetch).
std::vector<std::pair<std::size_t, std::int64_t>> input_loads(ir::LinearIR<x64::Traits>& lir) {
  std::vector<std::pair<std::size_t, std::int64_t>> loads;
  for (auto& e : lir)
    if (const auto* l = std::get_if<ir::Load>(&e->op); l && e->data_index == 0)
      loads.emplace_back(e->loop_ids.size(), l->prefetch);
  return loads;
}
/// (x - mean(x)) / sqrt(mean((x - mean)^2) + eps) over rows of `cols`: two passes read x.
G layer_norm(ElementType type, Dim rows, Dim cols) {
  G g;
  auto x = g.convert(g.parameter(type, {rows, cols}), f32);
  auto n = g.scalar(f32, double(cols));
  auto d = g.subtract(x, g.divide(g.reduce_sum(x, {-1}), n));
  auto var = g.divide(g.reduce_sum(g.multiply(d, d), {-1}), n);
  g.result(g.divide(d, g.sqrt(g.add(var, g.scalar(f32, 1e-5)))));
  return g;
}
} // namespace

TEST_CASE("PrefetchNextRows: the last pass that reads a row prefetches the next row") {
  for (auto isa : {x64::Isa::avx2, x64::Isa::avx512})
    for (Dim cols : {4096, 4100, 40}) {
      auto g = layer_norm(ElementType::bf16, 7, cols);
      auto lir = lower(g, isa);
      const auto loads = input_loads(lir);
      CAPTURE(cols);
      REQUIRE(loads.size() >= 2);
      CHECK(loads.front().second == 0); // the first pass reads from memory: no prefetch
      CHECK(loads.back().second == 2 * cols);
      for (const auto& [depth, prefetch] : loads) CHECK((prefetch == 0 || prefetch == 2 * cols));
    }
}

TEST_CASE("PrefetchNextRows leaves one-pass kernels and long rows alone") {
  G eltwise;
  eltwise.result(eltwise.add(eltwise.parameter(f32, {64, 4096}), eltwise.parameter(f32, {4096})));
  auto long_rows = layer_norm(f32, 3, 20000); // 80 KB a row: past ir::max_prefetch_distance
  for (G* g : {&eltwise, &long_rows}) {
    auto lir = lower(*g, x64::Isa::avx512);
    for (const auto& [depth, prefetch] : input_loads(lir)) CHECK(prefetch == 0);
  }
}

TEST_CASE("PrefetchNextRows: a dynamic kernel prefetches one run-time row stride on") {
  // the configurator gives each pointer's row stride after the loops' increments, 0 past
  // ir::max_prefetch_distance or where the input is one row for all
  G dyn;
  auto x = dyn.parameter(f32, {dynamic, dynamic});
  auto scale = dyn.parameter(f32, {dynamic});
  dyn.result(dyn.multiply(dyn.subtract(x, dyn.reduce_max(x, {-1})), scale));
  auto lir = lower(dyn, x64::Isa::avx512);
  const auto loads = input_loads(lir);
  REQUIRE(loads.size() >= 2);
  // both passes are a main loop and two remainders (one vector, then masked): the first
  // reads from memory, every load of the second prefetches, its main loop's too
  const auto prefetching = std::count_if(
      loads.begin(), loads.end(), [](const auto& l) { return l.second == ir::runtime_prefetch; });
  CHECK(2 * prefetching == std::ssize(loads));
  CHECK(
      std::is_partitioned(loads.begin(), loads.end(), [](const auto& l) { return l.second == 0; }));
  for (auto& e : lir) // the scale, one row for every row, is not prefetched
    if (const auto* l = std::get_if<ir::Load>(&e->op); l && e->data_index == 1)
      CHECK(l->prefetch == 0);
  const CompiledKernel k = compile(dyn, {.isa = x64::Isa::avx2});
  for (const auto& [cols, stride] : {std::pair<Dim, std::int64_t>{40, 160}, {20000, 0}}) {
    CAPTURE(cols);
    const std::vector<Shape> shapes{Shape{3, cols}, Shape{cols}};
    const RuntimeConfig c = k.configure(shapes);
    const std::size_t args = 3; // x, scale, the output
    CHECK(c.table[1 * args + 0] == stride);
    CHECK(c.table[1 * args + 1] == 0);
  }
}

TEST_CASE("MultiplyByReciprocal: the relaxed tier divides once per row, the standard one per "
          "element") {
  auto g = layer_norm(f32, 7, 40);
  auto row_divides = [](ir::LinearIR<x64::Traits>& lir) {
    int n = 0;
    for (auto& e : lir)
      n += std::holds_alternative<ir::Divide>(e->op) && e->out_desc(0).shape.back() == 40;
    return n;
  };
  auto standard = lower(g, x64::Isa::avx512, {.unroll = 1});
  CHECK(row_divides(standard) > 0);
  auto relaxed = lower(g, x64::Isa::avx512, {.unroll = 1, .accuracy = Accuracy::relaxed});
  CHECK(row_divides(relaxed) == 0);
  int reciprocals = 0; // 1 / deviation, once per row
  for (auto& e : relaxed)
    reciprocals += std::holds_alternative<ir::Divide>(e->op) && e->name.ends_with("/rcp") &&
                   e->out_desc(0).shape.back() == 1;
  CHECK(reciprocals == 1);
  G q; // a quantization's Round(x / scale) keeps its division: 1 ulp at a tie is one step
  q.result(q.round(q.divide(q.parameter(f32, {7, 40}), q.parameter(f32, {7, 1}))));
  auto quantized = lower(q, x64::Isa::avx512, {.unroll = 1, .accuracy = Accuracy::relaxed});
  CHECK(row_divides(quantized) > 0);
}
