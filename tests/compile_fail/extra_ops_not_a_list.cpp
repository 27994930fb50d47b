// SPDX-License-Identifier: Apache-2.0
// extra_ops that is not an ir::TypeList stops the build.
// expected-error: backend traits' extra_ops must be .ir::TypeList<MyOp
#include <cmath>

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

struct Traits {
  static constexpr std::string_view name = "with_extra_ops";
  static constexpr int data_pointer_registers = 4;
  static bool host_supported() { return true; }
  template <class Op> static constexpr bool fusable = false;
  using extra_ops = user::Square;
};

int main() {
  snippets::ir::Graph<Traits> g;
  return static_cast<int>(g.size());
}
