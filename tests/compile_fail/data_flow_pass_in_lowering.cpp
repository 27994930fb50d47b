// SPDX-License-Identifier: Apache-2.0
// A data-flow pass inserted into a Linear IR pipeline says where it belongs.
// expected-error: pass_of_the_other_kind_in_this_pipeline<.*snippets::passes::Canonicalize>
#include "snippets/snippets.hpp"

int main() {
  snippets::ir::Graph<snippets::x64::Traits> g;
  g.result(g.relu(g.parameter(snippets::ElementType::f32, {8})));
  namespace p = snippets::passes;
  using Broken = p::insert_after_t<p::DefaultLowering, p::InsertLoops, p::Canonicalize>;
  (void)snippets::compile<snippets::x64::Traits, Broken>(g);
}
