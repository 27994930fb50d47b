// SPDX-License-Identifier: Apache-2.0
// A traits type without the `fusable` variable template must stop at the static_assert that
// shows the declaration to add.
// expected-error: backend traits need .template <class Op> static constexpr bool fusable
#include "snippets/ir/graph.hpp"

struct NoFusable {
  static constexpr std::string_view name = "no_fusable";
  static constexpr int data_pointer_registers = 12;
  static bool host_supported() { return true; }
};

int main() {
  snippets::ir::Graph<NoFusable> g;
  return static_cast<int>(g.size());
}
