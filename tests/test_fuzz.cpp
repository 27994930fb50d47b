// tests/test_fuzz.cpp: seeded differential fuzzing of whole models (tests/fuzz_graph.hpp).
//
// Every graph is tokenized, compiled and run as a Program on both ISAs and compared with the
// reference interpreter. A failure prints the seed and the shrunk graph; add the seed to
// `regressions` below once it is fixed. SNIPPETS_FUZZ_GRAPHS=<n> changes the volume.
#include <doctest/doctest.h>

#include <cstdlib>

#include "fuzz_graph.hpp"

using namespace snippets;
using namespace snippets::fuzz;

namespace {
int graphs_per_isa() {
  const char* env = std::getenv("SNIPPETS_FUZZ_GRAPHS");
  return env ? std::atoi(env) : 2000;
}

/// Seeds that once failed, kept so they never fail again: 1592590339 (a Subgraph made only of
/// dead ops had no output; see the tokenizer's dead-op test).
constexpr std::uint64_t regressions[] = {1592590339};
} // namespace

TEST_CASE("fuzz: random models of correctly rounded ops match the reference bit for bit") {
  const int n = graphs_per_isa();
  std::vector<std::uint64_t> seeds(std::begin(regressions), std::end(regressions));
  for (int i = 0; i < n; ++i) seeds.push_back(0x5eed0000u + static_cast<std::uint64_t>(i));
  jit_test::for_each_isa([&](x64::Isa isa) {
    int failures = 0, kernels = 0;
    for (const std::uint64_t seed : seeds) {
      const Graph model = random_model(seed);
      const Outcome outcome = run_differential(model, isa, seed, jit_test::exact, false);
      kernels += outcome.kernels;
      if (outcome.failure.empty()) continue;
      const Graph small = shrink(model, [&](const Graph& g) {
        return !run_differential(g, isa, seed, jit_test::exact, false).failure.empty();
      });
      FAIL_CHECK("seed " << seed << ": " << outcome.failure << "\nshrunk graph:\n"
                         << ir::to_string(small) << "its failure: "
                         << run_differential(small, isa, seed, jit_test::exact, false).failure);
      if (++failures == 3) break; // enough to debug
    }
    MESSAGE(x64::to_string(isa) << ": " << seeds.size() << " random models, " << kernels
                                << " JIT kernels, " << failures << " failures");
  });
}
