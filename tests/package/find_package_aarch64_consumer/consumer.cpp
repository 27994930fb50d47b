// SPDX-License-Identifier: Apache-2.0
// The program of package.find_package_aarch64: built for AArch64 through snippets::aarch64 of
// the installed package and run under qemu-aarch64. It compiles one kernel, relu(x + b) with b
// broadcast over the rows, and exits non-zero when the kernel's values differ from the same
// formula in plain C++ (exact: one f32 add and a max), when DefaultTraits is not the AArch64
// target, or when an Xbyak header came in.
#include <cstdio>
#include <type_traits>
#include <vector>

#include "snippets/snippets.hpp"

#if defined(XBYAK_XBYAK_H_)
#error "an Xbyak header was included in the AArch64 consumer"
#endif
#ifndef _OPENMP
#error "snippets::aarch64 must carry the OpenMP compile flags to its consumers"
#endif
static_assert(std::is_same_v<snippets::DefaultTraits, snippets::aarch64::Traits>,
              "a program compiled for AArch64 gets the AArch64 target by default");

int main() {
  using namespace snippets;
  constexpr auto f32 = ElementType::f32;
  constexpr int rows = 3, cols = 7; // 7: one vector of 4 lanes and a tail of 3

  ir::Graph<DefaultTraits> g;
  auto x = g.parameter(f32, {rows, cols}, "x");
  auto b = g.parameter(f32, {1, cols}, "b");
  g.result(g.relu(g.add(x, b)), "y");

  std::vector<double> xs, bs;
  for (int i = 0; i < rows * cols; ++i) {
    xs.push_back(0.25 * (i % 11) - 1.5);
  }
  for (int j = 0; j < cols; ++j) {
    bs.push_back(0.5 * j - 1.0);
  }
  const auto out = compile(g)
                       .run({reference::Tensor::from_values(f32, {rows, cols}, xs),
                             reference::Tensor::from_values(f32, {1, cols}, bs)})
                       .at(0);

  int failures = 0;
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < cols; ++j) {
      const float sum = static_cast<float>(xs[i * cols + j]) + static_cast<float>(bs[j]);
      const float want = sum > 0.0f ? sum : 0.0f;
      const double got = out.at(static_cast<std::size_t>(i * cols + j));
      if (got != want) {
        std::printf("relu(x + b)[%d][%d] = %g, expected %g\n", i, j, got, double(want));
        ++failures;
      }
    }
  }
  std::printf("%s: relu(x + b) of %dx%d values in an AArch64 kernel\n", failures ? "FAILED" : "ok",
              rows, cols);
  return failures ? 1 : 0;
}
