// SPDX-License-Identifier: Apache-2.0
// `|` joins passes of one kind: a data-flow pass and a Linear IR pass do not mix.
// expected-error: `|` joins passes of one kind
#include "snippets/snippets.hpp"

int main() {
  namespace p = snippets::passes;
  auto mixed = p::Canonicalize{} | p::MarkLoops{};
  (void)mixed;
}
