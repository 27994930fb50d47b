// fuzz/fuzz_models.cpp: libFuzzer entry for whole-model differential fuzzing (scripts/fuzz).
//
// The input bytes choose a generator seed and the ISA; the model is built by
// tests/fuzz_graph.hpp, run as a Program and compared bit for bit with the reference
// interpreter. A mismatch prints the seed and the shrunk graph and aborts, so libFuzzer saves
// the input; add the seed to `regressions` in tests/test_fuzz.cpp to keep it in CI.
#define DOCTEST_CONFIG_DISABLE // fuzz_graph.hpp shares helpers with the doctest suite
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "fuzz_graph.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::uint64_t seed = 0;
  std::memcpy(&seed, data, std::min(size, sizeof seed));
  using snippets::x64::Isa;
  const Isa isa = (size > 8 && (data[8] & 1)) || !snippets::x64::host_supports(Isa::avx512)
                      ? Isa::avx2
                      : Isa::avx512;
  const auto model = snippets::fuzz::random_model(seed);
  auto fails = [&](const snippets::fuzz::Graph& g) {
    return !snippets::fuzz::run_differential(g, isa, seed, snippets::jit_test::exact, false)
                .failure.empty();
  };
  if (!fails(model)) return 0;
  const auto small = snippets::fuzz::shrink(model, fails);
  std::fprintf(stderr, "seed %llu (%s) fails:\n%s\n%s\n", static_cast<unsigned long long>(seed),
               std::string(snippets::x64::to_string(isa)).c_str(),
               snippets::ir::to_string(small).c_str(),
               snippets::fuzz::run_differential(small, isa, seed, snippets::jit_test::exact, false)
                   .failure.c_str());
  std::abort();
}
