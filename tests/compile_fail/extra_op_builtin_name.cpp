// SPDX-License-Identifier: Apache-2.0
// A user op named like a built-in one (here Relu) stops the build.
// expected-error: an op in extra_ops has the name of a built-in op
#include "extra_ops_traits.hpp"

namespace user {
struct MyRelu {
  static constexpr std::string_view name = "Relu";
  static constexpr snippets::ir::OpCategory category = snippets::ir::OpCategory::unary;
  static constexpr bool float_only = true;
  bool operator==(const MyRelu&) const = default;
};
inline double formula(const MyRelu&, double x) { return x > 0 ? x : 0; }
} // namespace user

int main() { return build_graph<TraitsWith<snippets::ir::TypeList<user::MyRelu>>>(); }
