// SPDX-License-Identifier: Apache-2.0
// A user op with attributes but no print_attributes (the printer and the cache key need it).
// expected-error: an op in extra_ops needs .static constexpr std::string_view name
#include <cmath>

#include "snippets/ir/graph.hpp"

namespace user {
struct Scaled {
  static constexpr std::string_view name = "Scaled";
  static constexpr snippets::ir::OpCategory category = snippets::ir::OpCategory::unary;
  static constexpr bool float_only = true;
  double factor = 2;
  bool operator==(const Scaled&) const = default;
};
inline double formula(const Scaled& s, double x) { return s.factor * x; }
} // namespace user

struct Traits {
  static constexpr std::string_view name = "with_extra_ops";
  static constexpr int data_pointer_registers = 4;
  static bool host_supported() { return true; }
  template <class Op> static constexpr bool fusable = false;
  using extra_ops = snippets::ir::TypeList<user::Scaled>;
};

int main() {
  snippets::ir::Graph<Traits> g;
  return static_cast<int>(g.size());
}
