// SPDX-License-Identifier: Apache-2.0
// A traits type without its argument budget must stop at the static_assert that asks for it.
// expected-error: backend traits need .static constexpr int data_pointer_registers
#include "snippets/ir/graph.hpp"

struct NoBudget {
  static constexpr std::string_view name = "no_budget";
  static bool host_supported() { return true; }
  template <class Op> static constexpr bool fusable = false;
};

int main() {
  snippets::ir::Graph<NoBudget> g;
  return static_cast<int>(g.size());
}
