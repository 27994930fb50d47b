// SPDX-License-Identifier: Apache-2.0
// An op listed twice in extra_ops stops the build.
// expected-error: extra_ops lists two ops of this name
#include "extra_ops_traits.hpp"

int main() { return build_graph<TraitsWith<snippets::ir::TypeList<user::Square, user::Square>>>(); }
