// SPDX-License-Identifier: Apache-2.0
// A user op named like a built-in one (here Relu) stops the build.
// expected-error: an op in extra_ops has the name of a built-in op
#include <cmath>

#include "snippets/ir/graph.hpp"

namespace user {
struct MyRelu {
  static constexpr std::string_view name = "Relu";
  static constexpr snippets::ir::OpCategory category = snippets::ir::OpCategory::unary;
  static constexpr bool float_only = true;
  bool operator==(const MyRelu&) const = default;
};
inline double formula(const MyRelu&, double x) { return x > 0 ? x : 0; }
} // namespace user

struct Traits {
  static constexpr std::string_view name = "with_extra_ops";
  static constexpr int data_pointer_registers = 4;
  static bool host_supported() { return true; }
  template <class Op> static constexpr bool fusable = false;
  using extra_ops = snippets::ir::TypeList<user::MyRelu>;
};

int main() {
  snippets::ir::Graph<Traits> g;
  return static_cast<int>(g.size());
}
