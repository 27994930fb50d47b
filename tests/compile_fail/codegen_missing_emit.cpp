// SPDX-License-Identifier: Apache-2.0
// Everything but the code generator itself.
// expected-error: to compile kernels, backend traits need .template <class Self> static KernelCode emit
#include "codegen_traits.hpp"

int main() { return compile_graph<WithRegisterModel>(); }
