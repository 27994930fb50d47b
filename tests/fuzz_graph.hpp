// SPDX-License-Identifier: Apache-2.0
// tests/fuzz_graph.hpp: whole-model differential fuzzing for tests that need one call, such as
// tests/test_concurrency.cpp: random_model(seed) (tests/fuzz/elementwise.hpp) and
// run_differential, which runs a model as a Program and compares it with the reference. The
// families of tests/test_fuzz.cpp live in tests/fuzz/.
#pragma once

#include "fuzz/elementwise.hpp"

namespace snippets::fuzz {

/// Runs `model` as a Program on `isa` and compares it with the reference interpreter: bit for
/// bit when `tol` is exact (+0 == -0 when it says so), within the bounds of fuzz/bounds.hpp
/// otherwise. `threads` = 0 alternates 1 and 2 threads by seed.
inline Outcome run_differential(const Graph& model, x64::Isa isa, std::uint64_t seed, Tolerance tol,
                                bool fma, int threads = 0) {
  Case c;
  c.model = copy_graph(model);
  c.check = tol.max_ulp > 0 || tol.abs > 0 ? Check::bounds
            : tol.zero_sign                ? Check::exact
                                           : Check::exact_any_zero;
  c.fma = fma;
  c.threads = threads ? threads : 1 + int(seed % 2);
  return run_case(c, isa, seed);
}

} // namespace snippets::fuzz
