// SPDX-License-Identifier: Apache-2.0
// A traits type without the register budget must stop at the static_assert that lists it.
// expected-error: backend traits need .static constexpr int vector_registers, vector_bytes
#include "snippets/ir/graph.hpp"

struct NoRegisters {
  static constexpr std::string_view name = "no_registers";
  static bool host_supported() { return true; }
  template <class Op> static constexpr bool fusable = false;
};

int main() {
  snippets::ir::Graph<NoRegisters> g;
  return static_cast<int>(g.size());
}
