// Traits that claim an op is fusable without an emitter for it fail to compile, naming the fix.
// expected-error: the backend traits call this op fusable but it has no emitter
#include "snippets/compile.hpp"

struct ClaimsSoftmax : snippets::x64::Traits {
  template <class Op>
  static constexpr bool fusable =
      snippets::x64::Traits::fusable<Op> || std::is_same_v<Op, snippets::ir::Softmax>;
};

int main() {
  snippets::ir::Graph<ClaimsSoftmax> g;
  g.result(g.softmax(g.parameter(snippets::ElementType::f32, {8})));
  (void)snippets::compile(g);
}
