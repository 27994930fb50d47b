// SPDX-License-Identifier: Apache-2.0
// snippets/extern_templates.hpp: build the heavy templates of the default backend once per
// program, not once per
// translation unit.
//
// compile(), lower(), tokenize() and the reference interpreter are templates on the backend
// traits, so every source file that calls them instantiates them again: a file that calls
// compile() spends about 30 s more at -O3 (measured on the 2-core CI machine; the headers
// alone take 10 s). Include this header instead of snippets/snippets.hpp to declare the
// DefaultTraits instantiations `extern`, and define them in exactly one source file of your
// program:
//
//   // snippets_instances.cpp
//   #define SNIPPETS_DEFINE_TEMPLATES
//   #include "snippets/extern_templates.hpp"
//
// Only DefaultTraits with the default pipelines (and the reference interpreter for
// ReferenceBackend) is covered; other traits and pipelines are instantiated where they are
// used, as before. Nothing changes at run time.
#pragma once

#include "snippets/snippets.hpp"

#ifdef SNIPPETS_DEFINE_TEMPLATES
#define SNIPPETS_DETAIL_EXTERN
#else
#define SNIPPETS_DETAIL_EXTERN extern
#endif

namespace snippets {

SNIPPETS_DETAIL_EXTERN template CompiledKernel
compile<DefaultTraits, passes::DefaultLowering, passes::DefaultDataFlow>(
    const ir::Graph<DefaultTraits>&, const CompileOptions&);

SNIPPETS_DETAIL_EXTERN template ir::LinearIR<DefaultTraits>
lower<DefaultTraits, passes::DefaultLowering, passes::DefaultDataFlow>(
    const ir::Graph<DefaultTraits>&, DefaultTraits::Variant, const CompileOptions&);

namespace passes {
SNIPPETS_DETAIL_EXTERN template ir::Graph<DefaultTraits>
tokenize<DefaultTraits>(const ir::Graph<DefaultTraits>&, const TokenizeOptions<DefaultTraits>&);
} // namespace passes

namespace reference {
SNIPPETS_DETAIL_EXTERN template std::vector<Values>
evaluate_values<ReferenceBackend>(const ir::Graph<ReferenceBackend>&, std::span<const Values>,
                                  const Options&);
SNIPPETS_DETAIL_EXTERN template std::vector<Values>
evaluate_values<DefaultTraits>(const ir::Graph<DefaultTraits>&, std::span<const Values>,
                               const Options&);
} // namespace reference

} // namespace snippets

#undef SNIPPETS_DETAIL_EXTERN
