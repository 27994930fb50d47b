// SPDX-License-Identifier: Apache-2.0
// tests/fuzz/families.hpp: every fuzz family, for tests/test_fuzz.cpp and fuzz/fuzz_models.cpp.
//
// A family is a generator (seed -> Case: the model, how it runs, its oracle; the shrinker of
// fuzz/core.hpp works on every Case) and its volume: the models per ISA of one CI run.
#pragma once

#include <span>
#include <string_view>

#include "fuzz/elementwise.hpp"
#include "fuzz/layout.hpp"
#include "fuzz/math.hpp"
#include "fuzz/matmul.hpp"
#include "fuzz/program.hpp"
#include "fuzz/quantized.hpp"
#include "fuzz/reduce.hpp"
#include "fuzz/types.hpp"

namespace snippets::fuzz {

/// The elementwise family's CI volume: SNIPPETS_FUZZ_GRAPHS=<n> scales every family by
/// n / reference_volume (tests/test_fuzz.cpp).
inline constexpr int reference_volume = 2000;

struct Family {
  std::string_view name;
  int per_isa;             // models per ISA on every CI run (SNIPPETS_FUZZ_GRAPHS scales it)
  std::uint64_t seed_base; // model i of a run has seed seed_base + i
  Case (*make)(std::uint64_t seed);
};

inline std::span<const Family> families() {
  static const Family all[] = {
      {"elementwise", reference_volume, 0x5eed0000u, elementwise_case},
      {"math", 1000, 0x3a700000u, math_case},
      {"types", 600, 0x7e900000u, types_case},
      {"dynamic", 600, 0xd1900000u, dynamic_case},
      {"reduce", 1000, 0x4ed00000u, reduce_case},
      {"matmul", 1000, 0x3a3a0000u, matmul_case},
      {"layout", 600, 0x1a900000u, layout_case},
      {"program", 600, 0x9a0a0000u, program_case},
      {"dynamic_program", 200, 0xd9a00000u, dynamic_program_case},
      {"quantized", 600, 0x9a470000u, quantized_case},
  };
  return all;
}

inline const Family* find_family(std::string_view name) {
  for (const Family& f : families())
    if (f.name == name) return &f;
  return nullptr;
}

} // namespace snippets::fuzz
