// SPDX-License-Identifier: Apache-2.0
// InsertRegSpills: kernels with more live vector values than registers spill and stay exact.
#include <doctest/doctest.h>

#include "snippets/compile.hpp"
#include "snippets/reference/interpreter.hpp"

#include "jit_test_util.hpp"

using namespace snippets;
constexpr auto f32 = ElementType::f32;

namespace {
/// 40 distinct constants, each live across the whole loop: more than either ISA's registers.
ir::Graph<x64::Traits> many_constants(Dim n) {
  ir::Graph<x64::Traits> g;
  auto x = g.parameter(f32, {n});
  std::vector<ir::Value> c;
  for (int i = 0; i < 40; ++i) c.push_back(g.scalar(f32, 0.5 + i * 0.03125));
  auto y = x;
  for (int i = 0; i < 40; ++i)
    y = g.maximum(g.subtract(y, c[std::size_t(i)]), c[std::size_t(39 - i)]);
  g.result(y);
  return g;
}
} // namespace

TEST_CASE("values beyond the register file are spilled to the stack") {
  auto g = many_constants(100);
  auto lir = lower(g, x64::Isa::avx2, {.verify = true});
  CHECK(lir.spill_slots > 0);
  int spills = 0, reloads = 0;
  for (auto& e : lir) {
    spills += std::holds_alternative<ir::Spill>(e->op);
    reloads += std::holds_alternative<ir::Reload>(e->op);
  }
  CHECK(spills == int(lir.spill_slots));
  CHECK(reloads >= spills);
}

TEST_CASE("a kernel with spills matches the reference on both ISAs") {
  jit_test::for_each_isa([](x64::Isa isa) {
    for (Dim n : {Dim{1}, Dim{37}, Dim{1000}}) {
      CAPTURE(n);
      auto g = many_constants(n);
      auto k = compile(g, {.isa = isa});
      std::vector<double> v(static_cast<std::size_t>(n));
      for (std::size_t i = 0; i < v.size(); ++i) v[i] = double(i % 23) - 11.5;
      const auto in = reference::Tensor::from_values(f32, {n}, v);
      const auto out = k.run({in}, {.threads = 2});
      const auto ref = reference::evaluate(g, {in}, {.round_each_node = true});
      int bad = 0;
      for (std::size_t i = 0; i < v.size(); ++i) bad += out[0].at(i) != ref[0].at(i);
      CHECK(bad == 0);
    }
  });
}

TEST_CASE("a kernel that fits in registers has no spill slots") {
  ir::Graph<x64::Traits> g;
  auto x = g.parameter(f32, {64});
  g.result(g.relu(g.add(x, g.scalar(f32, 1.0))));
  CHECK(lower(g, x64::Isa::avx2).spill_slots == 0);
}
