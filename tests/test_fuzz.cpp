// SPDX-License-Identifier: Apache-2.0
// tests/test_fuzz.cpp: seeded differential fuzzing of the whole feature surface, one test case
// per family of tests/fuzz/families.hpp.
//
// Every model is built from its seed, run on both ISAs (as a Program, or as one kernel compiled
// directly) and compared with the reference interpreter by the family's oracle. A failure prints
// the family, the seed, the ISA and the shrunk case; add the seed to `regressions` below once it
// is fixed. SNIPPETS_FUZZ_GRAPHS=<n> scales the volume: n models per ISA for the elementwise
// family (2000 on every CI run), the other families in proportion.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>

#include "fuzz/families.hpp"

using namespace snippets;
using namespace snippets::fuzz;

namespace {

/// The family's CI volume, scaled by SNIPPETS_FUZZ_GRAPHS=<n>: the elementwise family (2000 a
/// run) runs n models per ISA and every other family as many more or fewer in proportion (the
/// sanitizer run's 300 runs 15% of the CI volume), at least one.
int models_per_isa(const Family& f) {
  const char* env = std::getenv("SNIPPETS_FUZZ_GRAPHS");
  if (!env) return f.per_isa;
  const double scale = std::atof(env) / reference_volume;
  return std::max(1, int(std::lround(f.per_isa * scale)));
}

/// Seeds that once failed, kept so they never fail again, by family.
struct Regression {
  std::string_view family;
  std::uint64_t seed;
};
constexpr Regression regressions[] = {
    // a Subgraph made only of dead ops had no output (the tokenizer's dead-op test pins it;
    // the generator has changed since, and the seed builds another model now)
    {"elementwise", 1592590339},
    // the oracle asked a dynamic output of a Subgraph with an empty input for its element count
    {"dynamic_program", 3651142506},
    // a value broadcast along the columns of a reduction over the rows was kept for the last
    // pass in a row Buffer without its broadcast (passes/insert_broadcast_move.hpp)
    {"program", 2584346664},
};

void run_family(std::string_view name) {
  const Family* family = find_family(name);
  REQUIRE(family != nullptr);
  std::vector<std::uint64_t> seeds;
  for (const Regression& r : regressions)
    if (r.family == name) seeds.push_back(r.seed);
  const int n = models_per_isa(*family);
  for (int i = 0; i < n; ++i) seeds.push_back(family->seed_base + std::uint64_t(i));
  jit_test::for_each_isa([&](x64::Isa isa) {
    const auto start = std::chrono::steady_clock::now();
    int failures = 0, kernels = 0;
    std::size_t elements = 0, unchecked = 0;
    for (const std::uint64_t seed : seeds) {
      const Case c = family->make(seed);
      const Outcome outcome = run_case(c, isa, seed);
      kernels += outcome.kernels;
      elements += outcome.elements;
      unchecked += outcome.unchecked;
      if (outcome.failure.empty()) continue;
      const std::string kind = failure_kind(outcome.failure);
      const Case small = shrink(c, [&](const Case& x) {
        const Outcome o = run_case(x, isa, seed);
        return !o.failure.empty() && failure_kind(o.failure) == kind;
      });
      FAIL_CHECK(name << " seed " << seed << " (" << x64::to_string(isa) << "): " << outcome.failure
                      << "\nshrunk case: " << describe(small) << "\n"
                      << ir::to_string(small.model)
                      << "its failure: " << run_case(small, isa, seed).failure);
      if (++failures == 3) break; // enough to debug
    }
    CHECK_MESSAGE(kernels > 0, name << ": the generator made no model that compiles");
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    MESSAGE(name << " [" << x64::to_string(isa) << "]: " << seeds.size() << " models, " << kernels
                 << " kernels, " << elements << " output elements (" << unchecked
                 << " without a finite bound), " << failures << " failures, " << s << " s");
  });
}

} // namespace

TEST_CASE("fuzz: elementwise models of correctly rounded ops match the reference bit for bit") {
  run_family("elementwise");
}

TEST_CASE("fuzz: transcendental and activation ops stay within their documented ulp bounds") {
  run_family("math");
}

TEST_CASE("fuzz: every kernel I/O element type, with Converts inside, matches bit for bit") {
  run_family("types");
}

TEST_CASE("fuzz: one dynamic kernel runs many shapes and broadcasts bit for bit") {
  run_family("dynamic");
}

TEST_CASE("fuzz: reductions and Softmax over rows and columns stay within their bounds") {
  run_family("reduce");
}

TEST_CASE("fuzz: MatMul, attention and MLP chains stay within their K-scaled bounds") {
  run_family("matmul");
}

TEST_CASE("fuzz: blocked, permuted and transposed layouts match the reference bit for bit") {
  run_family("layout");
}

TEST_CASE("fuzz: whole Programs with Opaque ops, several outputs and 1-3 threads") {
  run_family("program");
}

TEST_CASE("fuzz: whole Programs with a dynamic leading extent, three sizes on one context") {
  run_family("dynamic_program");
}

TEST_CASE("fuzz: FakeQuantize and Quantize among exact ops, u8 and i8 outputs, bit for bit") {
  run_family("quantized");
}

TEST_CASE("fuzz oracle: a result off by more than its bound is reported, one within it is not") {
  Graph g;
  const Value x = g.parameter(ElementType::f32, {3, 17}, "x");
  const Value y = g.parameter(ElementType::f32, {17}, "y");
  g.result(g.softmax(g.add(g.sigmoid(x), g.exp(y)), -1), "out");
  const std::vector<Tensor> in = {make_input(ElementType::f32, {3, 17}, 1, Fill::finite),
                                  make_input(ElementType::f32, {17}, 2, Fill::finite)};
  const OpaqueOps& ops = opaque_ops();
  const Tensor want = reference::evaluate(g, in, ops.ref)[0];
  const Values e = evaluate_bounds(g, in, ops.ref, ops.bounds)[0].e;
  std::size_t unchecked = 0;
  for (const double by : {0.5, 2.0}) {
    Tensor got = want;
    for (std::size_t i = 0; i < got.size(); i += 5) got.set(i, want.at(i) + by * e.v[i]);
    CHECK(compare_bounded(got, want, e, unchecked).empty() == (by < 1));
  }
  CHECK(unchecked == 0);
}

TEST_CASE("fuzz shrinker: a failure that needs one op shrinks to that op on small shapes") {
  ModelSpec spec;
  spec.min_ops = 12;
  spec.empty_probability = 0;
  Case c;
  c.model = random_model(7, spec);
  const Value extra = c.model.sqrt(c.model.relu(c.model.parameter(ElementType::f32, {9, 33}, "z")));
  c.model.result(extra, "z_out");
  auto has_sqrt = [](const Case& x) {
    for (ir::NodeId id = 0; id < x.model.size(); ++id)
      if (ir::is<ir::Sqrt>(x.model.node(id).op)) return true;
    return false;
  };
  const Case small = shrink(c, has_sqrt);
  INFO(ir::to_string(small.model));
  CHECK(has_sqrt(small));
  std::size_t ops = 0;
  for (ir::NodeId id = 0; id < small.model.size(); ++id) {
    const auto& op = small.model.node(id).op;
    ops += !ir::is<ir::Parameter>(op) && !ir::is<ir::Result>(op);
  }
  CHECK(ops == 1); // the Sqrt alone
  CHECK(small.model.results().size() == 1);
  for (ir::NodeId p : small.model.parameters()) // and every dimension 1
    CHECK(small.model.node(p).outputs[0].shape.element_count() <= 1);
}
