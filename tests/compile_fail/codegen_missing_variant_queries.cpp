// SPDX-License-Identifier: Apache-2.0
// A Variant without the queries that choose one.
// expected-error: to compile kernels, backend traits need .static Variant default_variant
#include "codegen_traits.hpp"

struct VariantOnly : GraphHalf {
  using Variant = Isa;
};

int main() { return compile_graph<VariantOnly>(); }
