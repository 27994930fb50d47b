// SPDX-License-Identifier: Apache-2.0
// Variants without the register model the passes allocate with.
// expected-error: to compile kernels, backend traits need .static RegisterModel registers
#include "codegen_traits.hpp"

int main() { return compile_graph<WithVariantQueries>(); }
