// SPDX-License-Identifier: Apache-2.0
// Removing MarkLoops leaves the passes after it without marked loops: one error naming the
// first pass that needs them and the property.
// expected-error: pass_runs_before_a_property_it_needs<snippets::passes::DecomposeReductions, snippets::passes::property::LoopsMarked>
#include "snippets/snippets.hpp"

int main() {
  snippets::ir::Graph<snippets::x64::Traits> g;
  g.result(g.relu(g.parameter(snippets::ElementType::f32, {8})));
  namespace p = snippets::passes;
  using Broken = p::remove_t<p::DefaultLowering, p::MarkLoops>;
  (void)snippets::compile<snippets::x64::Traits, Broken>(g);
}
