// SPDX-License-Identifier: Apache-2.0
// A Result has no output Value, so the single-output builder must refuse it at compile time.
// expected-error: a Result has no output Value. use g.result
#include "snippets/ir/graph.hpp"

int main() {
  snippets::ir::Graph<snippets::ReferenceBackend> g;
  auto x = g.parameter(snippets::ElementType::f32, {2});
  g.apply(snippets::ir::Result{}, x);
}
