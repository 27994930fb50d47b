// SPDX-License-Identifier: Apache-2.0
// Traits that claim an op is fusable without an emitter for it fail to compile, naming the fix.
// expected-error: the backend traits call this op fusable but it has no emitter
#include "snippets/snippets.hpp"

struct ClaimsBroadcast : snippets::x64::Traits {
  template <class Op>
  static constexpr bool fusable =
      snippets::x64::Traits::fusable<Op> || std::is_same_v<Op, snippets::ir::Broadcast>;
};

int main() {
  snippets::ir::Graph<ClaimsBroadcast> g;
  const auto a = g.parameter(snippets::ElementType::f32, {1, 8});
  g.result(g.make(snippets::ir::Broadcast{snippets::Shape{8, 8}}, {a})[0]);
  (void)snippets::compile(g);
}
