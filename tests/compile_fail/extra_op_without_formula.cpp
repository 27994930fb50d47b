// SPDX-License-Identifier: Apache-2.0
// A user op without a reference formula stops the build.
// expected-error: an op in extra_ops needs its reference semantics next to it
#include <cmath>

#include "snippets/ir/graph.hpp"

namespace user {
struct Square {
  static constexpr std::string_view name = "Square";
  static constexpr snippets::ir::OpCategory category = snippets::ir::OpCategory::unary;
  static constexpr bool float_only = true;
  bool operator==(const Square&) const = default;
};
} // namespace user

struct Traits {
  static constexpr std::string_view name = "with_extra_ops";
  static constexpr int data_pointer_registers = 4;
  static bool host_supported() { return true; }
  template <class Op> static constexpr bool fusable = false;
  using extra_ops = snippets::ir::TypeList<user::Square>;
};

int main() {
  snippets::ir::Graph<Traits> g;
  return static_cast<int>(g.size());
}
