// SPDX-License-Identifier: Apache-2.0
// extra_ops that is not an ir::TypeList stops the build.
// expected-error: backend traits' extra_ops must be .ir::TypeList<MyOp
#include "extra_ops_traits.hpp"

int main() { return build_graph<TraitsWith<user::Square>>(); }
