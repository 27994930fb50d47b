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
    // a Subgraph made only of dead ops had no output (see the tokenizer's dead-op test)
    {"elementwise", 1592590339},
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

TEST_CASE("fuzz: reductions and Softmax over the innermost axis stay within their bounds") {
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
