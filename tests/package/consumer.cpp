// SPDX-License-Identifier: Apache-2.0
// The program every package consumer builds: it includes the umbrella header through the
// snippets::snippets target (or snippets::prebuilt), evaluates relu on a known input with the
// reference interpreter (and, linking snippets::prebuilt: CONSUMER_JIT, with a JIT kernel), and
// exits non-zero when a value, the header version, or the propagated OpenMP flags are wrong.
//
// CONSUMER_EXPECTED_VERSION_{MAJOR,MINOR,PATCH} come from the consumer's CMakeLists.txt (the
// version CMake saw for the package), so a drift between project(VERSION) and version.hpp
// fails here.
#include <cstdio>

#include "snippets/snippets.hpp"

#ifndef _OPENMP
#error "snippets::snippets must carry the OpenMP compile flags to its consumers"
#endif

int main() {
  using namespace snippets;
  constexpr auto f32 = ElementType::f32;

  int failures = 0;
  if (version_major != CONSUMER_EXPECTED_VERSION_MAJOR ||
      version_minor != CONSUMER_EXPECTED_VERSION_MINOR ||
      version_patch != CONSUMER_EXPECTED_VERSION_PATCH) {
    std::printf("version.hpp says %d.%d.%d, the CMake package says %d.%d.%d\n", version_major,
                version_minor, version_patch, CONSUMER_EXPECTED_VERSION_MAJOR,
                CONSUMER_EXPECTED_VERSION_MINOR, CONSUMER_EXPECTED_VERSION_PATCH);
    ++failures;
  }

  ir::Graph<ReferenceBackend> g;
  auto x = g.parameter(f32, {4}, "x");
  g.result(g.relu(x), "y");
  const auto out =
      reference::evaluate(g, {reference::Tensor::from_values(f32, {4}, {-1, 2, -3, 4})});

  const double expected[] = {0, 2, 0, 4};
  if (out.size() != 1 || out[0].size() != 4) {
    std::printf("expected one output of 4 values\n");
    return 1;
  }
  for (std::size_t i = 0; i < 4; ++i) {
    if (out[0].at(i) != expected[i]) {
      std::printf("relu(x)[%zu] = %g, expected %g\n", i, out[0].at(i), expected[i]);
      ++failures;
    }
  }
#if CONSUMER_JIT // the same through a kernel: compile() is what snippets::prebuilt instantiates
  ir::Graph<x64::Traits> jg;
  jg.result(jg.relu(jg.parameter(f32, {4}, "x")), "y");
  const auto jit =
      compile(jg).run({reference::Tensor::from_values(f32, {4}, {-1, 2, -3, 4})}).at(0);
  for (std::size_t i = 0; i < 4; ++i) {
    if (jit.at(i) != expected[i]) {
      std::printf("kernel relu(x)[%zu] = %g, expected %g\n", i, jit.at(i), expected[i]);
      ++failures;
    }
  }
#endif
  std::printf("%s: relu of 4 values through snippets %d.%d.%d\n", failures ? "FAILED" : "ok",
              version_major, version_minor, version_patch);
  return failures ? 1 : 0;
}
