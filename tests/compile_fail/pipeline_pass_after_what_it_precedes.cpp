// SPDX-License-Identifier: Apache-2.0
// OptimizeDomain reshapes the domain, so it must run before the loops are marked.
// expected-error: pass_runs_after_a_property_it_must_precede<snippets::passes::OptimizeDomain, snippets::passes::property::LoopsMarked>
#include "snippets/snippets.hpp"

int main() {
  snippets::ir::Graph<snippets::x64::Traits> g;
  g.result(g.relu(g.parameter(snippets::ElementType::f32, {8})));
  namespace p = snippets::passes;
  using Broken = p::insert_after_t<p::DefaultLowering, p::InsertLoops, p::OptimizeDomain>;
  (void)snippets::compile<snippets::x64::Traits, Broken>(g);
}
