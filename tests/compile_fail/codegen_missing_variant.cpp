// SPDX-License-Identifier: Apache-2.0
// Graph traits without a code generator cannot compile(): the first missing piece is Variant.
// expected-error: to compile kernels, backend traits need .using Variant = MyIsa
#include "codegen_traits.hpp"

int main() { return compile_graph<GraphHalf>(); }
