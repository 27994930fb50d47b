// Traits that claim an op is fusable without an emitter for it fail to compile, naming the fix.
// expected-error: the backend traits call this op fusable but it has no emitter
#include "snippets/compile.hpp"

struct ClaimsExp : snippets::x64::Traits {
  template <class Op>
  static constexpr bool fusable =
      snippets::x64::Traits::fusable<Op> || std::is_same_v<Op, snippets::ir::Exp>;
};

int main() {
  snippets::ir::Graph<ClaimsExp> g;
  g.result(g.exp(g.parameter(snippets::ElementType::f32, {8})));
  (void)snippets::compile(g);
}
