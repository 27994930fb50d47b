// SPDX-License-Identifier: Apache-2.0
// A Pipeline element that is not a pass gives one error that says what to add.
// expected-error: this Pipeline element is not a pass; add .using pass_tag
#include "snippets/snippets.hpp"

struct NotAPass {};

int main() {
  snippets::ir::Graph<snippets::x64::Traits> g;
  g.result(g.relu(g.parameter(snippets::ElementType::f32, {8})));
  namespace p = snippets::passes;
  using Broken = p::insert_after_t<p::DefaultLowering, p::InsertLoops, NotAPass>;
  (void)snippets::compile<snippets::x64::Traits, Broken>(g);
}
