// SPDX-License-Identifier: Apache-2.0
// fuzz/fuzz_models.cpp: libFuzzer entry for the differential fuzz families (scripts/fuzz).
//
// The input bytes choose a generator seed (bytes 0-7), the ISA (bit 0 of byte 8) and the
// family (the rest of byte 8; SNIPPETS_FUZZ_FAMILY=<name> fixes it); the Case is built by
// tests/fuzz/families.hpp, run and checked against the reference interpreter by the family's
// oracle, exactly as tests/test_fuzz.cpp does. A failure prints the family, the seed and the
// shrunk case and aborts, so libFuzzer saves the input; add the seed to `regressions` in
// tests/test_fuzz.cpp to keep it in CI.
#define DOCTEST_CONFIG_DISABLE // the fuzz headers share helpers with the doctest suite
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "fuzz/families.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace snippets;
  using namespace snippets::fuzz;
  std::uint64_t seed = 0;
  std::memcpy(&seed, data, std::min(size, sizeof seed));
  const std::uint8_t choice = size > 8 ? data[8] : 0;
  const x64::Isa isa =
      (choice & 1) || !x64::host_supports(x64::Isa::avx512) ? x64::Isa::avx2 : x64::Isa::avx512;
  const Family* family = nullptr;
  if (const char* name = std::getenv("SNIPPETS_FUZZ_FAMILY")) {
    family = find_family(name);
    if (!family) {
      std::fprintf(stderr, "SNIPPETS_FUZZ_FAMILY=%s names no family\n", name);
      std::abort();
    }
  } else {
    family = &families()[std::size_t(choice >> 1) % families().size()];
  }
  const Case c = family->make(seed);
  const Outcome outcome = run_case(c, isa, seed);
  if (outcome.failure.empty()) return 0;
  const std::string kind = failure_kind(outcome.failure);
  const Case small = shrink(c, [&](const Case& x) {
    const Outcome o = run_case(x, isa, seed);
    return !o.failure.empty() && failure_kind(o.failure) == kind;
  });
  std::fprintf(stderr, "%s seed %llu (%s) fails: %s\nshrunk case: %s\n%sits failure: %s\n",
               std::string(family->name).c_str(), static_cast<unsigned long long>(seed),
               std::string(x64::to_string(isa)).c_str(), outcome.failure.c_str(),
               describe(small).c_str(), ir::to_string(small.model).c_str(),
               run_case(small, isa, seed).failure.c_str());
  std::abort();
}
