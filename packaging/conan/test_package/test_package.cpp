// SPDX-License-Identifier: Apache-2.0
// Conan test_package: relu of four values through the packaged headers; non-zero on a mismatch.
#include <cstdio>

#include "snippets/snippets.hpp"

int main() {
  using namespace snippets;
  constexpr auto f32 = ElementType::f32;
  ir::Graph<ReferenceBackend> g;
  g.result(g.relu(g.parameter(f32, {4})));
  const auto out =
      reference::evaluate(g, {reference::Tensor::from_values(f32, {4}, {-1, 2, -3, 4})});
  const double expected[] = {0, 2, 0, 4};
  for (std::size_t i = 0; i < 4; ++i) {
    if (out[0].at(i) != expected[i]) {
      std::printf("relu(x)[%zu] = %g, expected %g\n", i, out[0].at(i), expected[i]);
      return 1;
    }
  }
  std::printf("snippets %d.%d.%d: ok\n", version_major, version_minor, version_patch);
  return 0;
}
