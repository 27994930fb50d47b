// SPDX-License-Identifier: Apache-2.0
// A user op with attributes but no print_attributes (the printer and the cache key need it).
// expected-error: an op in extra_ops needs .static constexpr std::string_view name
#include "extra_ops_traits.hpp"

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

int main() { return build_graph<TraitsWith<snippets::ir::TypeList<user::Scaled>>>(); }
