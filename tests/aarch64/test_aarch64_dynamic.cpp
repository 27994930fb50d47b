// SPDX-License-Identifier: Apache-2.0
// tests/aarch64/test_aarch64_dynamic.cpp: dynamic shapes on the AArch64 target under
// qemu-aarch64: bodies with `dynamic` dimensions compile once and run on any shapes (the
// kernel reads its work amounts and run-time pointer increments, and moves the tail's run-time
// count of elements lane by lane). Every result is checked against the reference interpreter
// (each node rounded to f32 where the ops are exact, bit for bit) with 1, 2 and 3 threads;
// compilations() proves new shapes cost no compilation; guard pages prove the run-time tails
// touch no byte outside a tensor.
#include <doctest/doctest.h>

#include <cstring>

#include "aarch64/a64_test_util.hpp"

using namespace snippets;
using namespace snippets::a64_test;

namespace {

constexpr Dim Q = dynamic;

void check_shapes(const CompiledKernel& k, const G& g, const std::vector<Shape>& shapes,
                  std::uint64_t seed, Tolerance tol, bool round_each_node,
                  const std::vector<ElementType>& types = {}) {
  std::vector<Tensor> inputs;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    Tensor t = make_tensor(shapes[i], ++seed, Pattern::finite);
    if (i < types.size() && types[i] != f32) {
      std::vector<double> v;
      for (std::size_t j = 0; j < t.size(); ++j) v.push_back(std::round(t.at(j) * 8));
      t = Tensor::from_values(types[i], shapes[i], v);
    }
    inputs.push_back(std::move(t));
  }
  reference::Options ro;
  ro.round_each_node = round_each_node;
  check_runs(k, inputs, reference::evaluate(g, std::span<const Tensor>(inputs), ro), tol,
             {1, 2, 3});
}

/// Compiles g once (no FMA: exact against the reference rounded per node), runs every call's
/// shapes twice and checks how many kernels that compiled.
void check_sequence(const G& g, const std::vector<std::vector<Shape>>& calls,
                    std::uint64_t compiles, CompileOptions opt = {}) {
  opt.fma = false;
  const std::uint64_t before = compilations();
  const CompiledKernel k = compile(g, opt);
  CHECK(k.is_dynamic());
  std::uint64_t seed = 7000;
  for (int pass = 0; pass < 2; ++pass)
    for (const auto& shapes : calls) {
      INFO("shapes " << shapes[0].to_string() << " ...");
      check_shapes(k, g, shapes, seed += 10, exact, true);
    }
  CHECK(compilations() - before == compiles);
}

G add_graph(const Shape& x, const Shape& y) {
  G g;
  const auto a = g.parameter(f32, x);
  const auto b = g.parameter(f32, y);
  g.result(g.add(a, b));
  return g;
}

} // namespace

TEST_CASE("aarch64 dynamic: the seed's Add sequence and flipping broadcasts run on one kernel") {
  const std::vector<std::vector<Shape>> calls = {{Shape{1, 3, 1, 10}, Shape{1, 3, 10, 1}},
                                                 {Shape{1, 3, 10, 10}, Shape{1, 3, 1, 1}},
                                                 {Shape{1, 3, 1, 10}, Shape{1, 3, 10, 1}}};
  check_sequence(add_graph(Shape{1, 3, Q, Q}, Shape{1, 3, Q, 1}), calls, 1);
  check_sequence(add_graph(Shape{Q, Q, Q, Q}, Shape{Q, Q, Q, 1}), calls, 1);
  // both inputs broadcast along the innermost axis in turn: one kernel per pattern
  check_sequence(add_graph(Shape{Q, Q}, Shape{Q, Q}),
                 {{Shape{4, 1}, Shape{4, 9}},
                  {Shape{4, 9}, Shape{4, 1}},
                  {Shape{4, 9}, Shape{4, 9}},
                  {Shape{4, 1}, Shape{4, 9}}},
                 3);
}

TEST_CASE("aarch64 dynamic: every innermost size from 1 to 67, unrolled or not") {
  G g;
  const auto x = g.parameter(f32, {Q, Q}), y = g.parameter(f32, {Q, Q}),
             b = g.parameter(f32, {1, Q});
  g.result(g.maximum(g.subtract(g.multiply(x, y), b), g.scalar(f32, -0.25)));
  std::vector<std::vector<Shape>> calls;
  for (Dim n = 1; n <= 67; ++n) calls.push_back({Shape{3, n}, Shape{3, n}, Shape{1, n}});
  calls.push_back({Shape{2, 1000}, Shape{2, 1000}, Shape{1, 1000}});
  for (const int unroll : {1, 2, 4}) {
    INFO("unroll = " << unroll);
    check_sequence(g, calls, 1, {.unroll = unroll});
  }
  // a static innermost extent of whole vectors under dynamic rows
  for (const Dim n : {4, 8, 16, 20})
    check_sequence(add_graph(Shape{Q, n}, Shape{Q, 1}),
                   {{Shape{5, n}, Shape{5, 1}}, {Shape{1, n}, Shape{1, 1}}}, 1, {.unroll = 2});
}

TEST_CASE("aarch64 dynamic: transcendental ops, the general Power and converting I/O") {
  std::uint64_t seed = 300;
  { // emitters with scratch registers and constants inside the run-time tail
    G g;
    const auto x = g.parameter(f32, {Q, Q}), y = g.parameter(f32, {Q});
    g.result(g.add(g.sigmoid(x), g.gelu(g.multiply(x, y))));
    g.result(g.power(g.add(g.abs(x), g.scalar(f32, 0.5)), y));
    const CompiledKernel k = compile(g);
    for (const Dim n : {1, 3, 4, 5, 11, 37})
      check_shapes(k, g, {Shape{3, n}, Shape{n}}, seed += 10, Tolerance{8, 1e-6}, false);
  }
  for (const ElementType t :
       {ElementType::f16, ElementType::bf16, ElementType::i32, ElementType::i8, ElementType::u8}) {
    INFO("type " << to_string(t));
    G g;
    const auto x = g.parameter(t, {Q, Q}), y = g.parameter(f32, {Q, Q});
    g.result(g.convert(g.add(g.convert(x, f32), y), t));
    g.result(g.multiply(g.convert(x, f32), y));
    const CompiledKernel k = compile(g, {.fma = false});
    for (const Dim n : {1, 2, 3, 5, 6, 7, 9, 17, 66})
      check_shapes(k, g, {Shape{2, n}, Shape{2, n}}, seed += 10, exact_any_zero, true, {t, f32});
  }
}

TEST_CASE("aarch64 dynamic: empty tensors and single elements") {
  const G g = add_graph(Shape{Q, Q}, Shape{Q, 1});
  const CompiledKernel k = compile(g);
  CHECK(k.run({make_tensor(Shape{0, 5}, 1), make_tensor(Shape{0, 1}, 2)}).at(0).shape() ==
        Shape{0, 5});
  check_shapes(k, g, {Shape{1, 1}, Shape{1, 1}}, 3, exact, true);
}

TEST_CASE("aarch64 dynamic: run-time tails never read or write outside a tensor (guard "
          "pages), for every element type") {
  for (const ElementType t : {ElementType::f32, ElementType::f16, ElementType::bf16,
                              ElementType::i32, ElementType::i8, ElementType::u8}) {
    G g;
    const auto x = g.convert(g.parameter(t, {Q, Q}), f32);
    const auto y = g.convert(g.parameter(t, {Q, 1}), f32);
    g.result(g.convert(g.add(g.multiply(x, y), x), t));
    const CompiledKernel k = compile(g, {.fma = false});
    reference::Options ro;
    ro.round_each_node = true;
    for (const Dim n : {1, 2, 3, 5, 6, 7, 17, 33})
      for (const Guard where : {Guard::after, Guard::before}) {
        INFO(to_string(t) << ", n = " << n << (where == Guard::after ? ", after" : ", before"));
        std::vector<Tensor> in;
        for (const Shape& s : {Shape{3, n}, Shape{3, 1}}) {
          std::vector<double> v = make_values(static_cast<std::size_t>(s.element_count()), 5 + n);
          for (double& d : v) d = std::isfinite(d) ? std::round(std::fmod(d * 3, 10)) : 2;
          in.push_back(Tensor::from_values(t, s, v));
        }
        const Tensor want = reference::evaluate(g, std::span<const Tensor>(in), ro).at(0);
        for (const int threads : {1, 2}) {
          const std::string report =
              compare(run_guarded(k, in, want, where, threads), want, exact_any_zero);
          CHECK_MESSAGE(report.empty(), report);
        }
      }
  }
}
