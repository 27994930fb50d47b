// SPDX-License-Identifier: Apache-2.0
// A traits type without `host_supported()` must stop at the static_assert that names it.
// expected-error: backend traits need .static bool host_supported
#include "snippets/ir/graph.hpp"

struct NoHostQuery {
  static constexpr std::string_view name = "no_host_query";
  static constexpr int data_pointer_registers = 12;
  template <class Op> static constexpr bool fusable = false;
};

int main() {
  snippets::ir::Graph<NoHostQuery> g;
  return static_cast<int>(g.size());
}
