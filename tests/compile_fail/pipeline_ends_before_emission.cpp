// SPDX-License-Identifier: Apache-2.0
// A lowering pipeline that stops before registers are assigned cannot be emitted.
// expected-error: pipeline_ends_before_what_compile_reads<.*snippets::passes::property::RegistersAssigned>
#include "snippets/snippets.hpp"

int main() {
  snippets::ir::Graph<snippets::x64::Traits> g;
  g.result(g.relu(g.parameter(snippets::ElementType::f32, {8})));
  namespace p = snippets::passes;
  (void)snippets::compile<snippets::x64::Traits, p::DefaultControlFlow>(g);
}
