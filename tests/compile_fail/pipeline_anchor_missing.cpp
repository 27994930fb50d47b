// SPDX-License-Identifier: Apache-2.0
// Editing a pipeline around a pass it does not hold (at any depth) is an error.
// expected-error: the anchor pass is not in this pipeline
#include "snippets/snippets.hpp"

int main() {
  namespace p = snippets::passes;
  using Broken = p::insert_after_t<p::DefaultLowering, p::Canonicalize, p::MarkLoops>;
  (void)Broken{};
}
