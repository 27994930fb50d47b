// SPDX-License-Identifier: Apache-2.0
// For the extra_op*.cpp compile-fail tests: a graph-only traits type with a given extra_ops
// list, a correct op to list, and the graph whose construction checks the traits. Each test adds
// exactly one mistake.
#pragma once

#include "snippets/ir/graph.hpp"

namespace user {
struct Square {
  static constexpr std::string_view name = "Square";
  static constexpr snippets::ir::OpCategory category = snippets::ir::OpCategory::unary;
  static constexpr bool float_only = true;
  bool operator==(const Square&) const = default;
};
inline double formula(const Square&, double x) { return x * x; }
} // namespace user

template <class ExtraOps> struct TraitsWith {
  static constexpr std::string_view name = "with_extra_ops";
  static constexpr int data_pointer_registers = 4;
  static bool host_supported() { return true; }
  template <class Op> static constexpr bool fusable = false;
  using extra_ops = ExtraOps;
};

template <class Traits> int build_graph() {
  snippets::ir::Graph<Traits> g;
  return static_cast<int>(g.size());
}
