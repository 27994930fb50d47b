// SPDX-License-Identifier: Apache-2.0
// A traits type without `name` must stop at the one static_assert that says what to write.
// expected-error: backend traits need .static constexpr std::string_view name
#include "snippets/ir/graph.hpp"

struct NoName {
  static constexpr int data_pointer_registers = 12;
  static bool host_supported() { return true; }
  template <class Op> static constexpr bool fusable = false;
};

int main() {
  snippets::ir::Graph<NoName> g;
  return static_cast<int>(g.size());
}
