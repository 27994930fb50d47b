// SPDX-License-Identifier: Apache-2.0
// `static constexpr bool fusable` (not a template) must reach the same fix-it message rather
// than a hard error inside the concept.
// expected-error: backend traits need .template <class Op> static constexpr bool fusable
#include "snippets/ir/graph.hpp"

struct PlainFusable {
  static constexpr std::string_view name = "plain_fusable";
  static constexpr int data_pointer_registers = 12;
  static bool host_supported() { return true; }
  static constexpr bool fusable = true;
};

int main() {
  snippets::ir::Graph<PlainFusable> g;
  return static_cast<int>(g.size());
}
