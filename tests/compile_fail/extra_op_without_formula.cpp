// SPDX-License-Identifier: Apache-2.0
// A user op without a reference formula stops the build.
// expected-error: an op in extra_ops needs its reference semantics next to it
#include "extra_ops_traits.hpp"

namespace user {
struct Cube { // no formula(const Cube&, double)
  static constexpr std::string_view name = "Cube";
  static constexpr snippets::ir::OpCategory category = snippets::ir::OpCategory::unary;
  static constexpr bool float_only = true;
  bool operator==(const Cube&) const = default;
};
} // namespace user

int main() { return build_graph<TraitsWith<snippets::ir::TypeList<user::Cube>>>(); }
