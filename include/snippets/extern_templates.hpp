// SPDX-License-Identifier: Apache-2.0
// snippets/extern_templates.hpp: build the heavy templates of the default backend once per
// program, not once per translation unit.
//
// compile(), lower(), tokenize(), Program, Graph (its type inference) and the reference
// interpreter are templates on the backend traits, so every source file that uses them
// instantiates them again: a file that calls compile() spends about 50 s more at -O2 (measured
// on the 2-core CI machine; the headers alone take 8 s). Include this header instead of
// snippets/snippets.hpp to declare the DefaultTraits instantiations `extern`, and define them
// in exactly one source file of your program:
//
//   // snippets_instances.cpp
//   #define SNIPPETS_DEFINE_TEMPLATES
//   #include "snippets/extern_templates.hpp"
//
// (snippets::prebuilt is that file, compiled once: src/prebuilt.cpp.) Only DefaultTraits with
// the default pipelines (and the graphs and reference interpreter of ReferenceBackend) is
// covered; other traits and pipelines are instantiated where they are used, as before.
// Nothing changes at run time.
#pragma once

// a target's traits header declares its own share (its code generator) under this macro, since
// this header names no target
#define SNIPPETS_EXTERN_TEMPLATES 1

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

// what compile() does around its pipelines, and the code generator
namespace detail {
SNIPPETS_DETAIL_EXTERN template void check_body<DefaultTraits>(const ir::Graph<DefaultTraits>&);
SNIPPETS_DETAIL_EXTERN template void
check_dynamic_body<DefaultTraits>(const ir::Graph<DefaultTraits>&);
SNIPPETS_DETAIL_EXTERN template KernelSignature
describe<DefaultTraits>(const ir::Graph<DefaultTraits>&, const ir::Graph<DefaultTraits>&,
                        ir::LinearIR<DefaultTraits>&, DefaultTraits::Variant);
} // namespace detail
namespace passes {
SNIPPETS_DETAIL_EXTERN template ir::LinearIR<DefaultTraits>
convert_to_linear_ir<DefaultTraits>(const ir::Graph<DefaultTraits>&);
} // namespace passes
namespace debug {
SNIPPETS_DETAIL_EXTERN template DotGraph lir_graph<DefaultTraits>(ir::LinearIR<DefaultTraits>&,
                                                                  LirGraphKind);
SNIPPETS_DETAIL_EXTERN template DotGraph body_graph<DefaultTraits>(const ir::Graph<DefaultTraits>&);
} // namespace debug

namespace ir {
SNIPPETS_DETAIL_EXTERN template std::vector<TensorType>
infer_types<ReferenceBackend>(const Op<ReferenceBackend>&, std::span<const TensorType>,
                              std::string_view);
SNIPPETS_DETAIL_EXTERN template std::vector<TensorType>
infer_types<DefaultTraits>(const Op<DefaultTraits>&, std::span<const TensorType>, std::string_view);
SNIPPETS_DETAIL_EXTERN template class Graph<ReferenceBackend>;
SNIPPETS_DETAIL_EXTERN template class Graph<DefaultTraits>;
} // namespace ir

namespace passes {
SNIPPETS_DETAIL_EXTERN template ir::Graph<DefaultTraits>
tokenize<DefaultTraits>(const ir::Graph<DefaultTraits>&, const TokenizeOptions<DefaultTraits>&);

// every pass of the default pipelines: a pipeline of one's own that reuses them (a test's, or
// one edited with insert_after_t) instantiates only its own glue and passes
#define SNIPPETS_DETAIL_LIR_PASS(P)                                                                \
  SNIPPETS_DETAIL_EXTERN template void detail::run_lir_pass<P, DefaultTraits>(                     \
      ir::LinearIR<DefaultTraits>&, PassContext<DefaultTraits>&);
#define SNIPPETS_DETAIL_DATA_FLOW_PASS(P)                                                          \
  SNIPPETS_DETAIL_EXTERN template ir::Graph<DefaultTraits>                                         \
  detail::run_data_flow_pass<P, DefaultTraits>(const ir::Graph<DefaultTraits>&);
SNIPPETS_DETAIL_DATA_FLOW_PASS(FoldDequantizeIntoMatMul)
SNIPPETS_DETAIL_DATA_FLOW_PASS(DecomposeCompositeReductions)
SNIPPETS_DETAIL_DATA_FLOW_PASS(DecomposeSoftmax)
SNIPPETS_DETAIL_DATA_FLOW_PASS(DecomposeQuantization)
SNIPPETS_DETAIL_DATA_FLOW_PASS(FuseTransposeIntoParameter)
SNIPPETS_DETAIL_DATA_FLOW_PASS(FuseTransposeIntoResult)
SNIPPETS_DETAIL_DATA_FLOW_PASS(Canonicalize)
SNIPPETS_DETAIL_DATA_FLOW_PASS(ConvertConstantsToScalars)
SNIPPETS_DETAIL_DATA_FLOW_PASS(ConvertPowerToPowerStatic)
SNIPPETS_DETAIL_DATA_FLOW_PASS(AlignElementTypes)
SNIPPETS_DETAIL_LIR_PASS(OptimizeDomain)
SNIPPETS_DETAIL_LIR_PASS(TileStridedReads)
SNIPPETS_DETAIL_LIR_PASS(MultiplyByReciprocal)
SNIPPETS_DETAIL_LIR_PASS(FuseMultiplyAdd)
SNIPPETS_DETAIL_LIR_PASS(MarkLoops)
SNIPPETS_DETAIL_LIR_PASS(DecomposeReductions)
SNIPPETS_DETAIL_LIR_PASS(FuseLoops)
SNIPPETS_DETAIL_LIR_PASS(InsertBuffers)
SNIPPETS_DETAIL_LIR_PASS(InsertLoadStore)
SNIPPETS_DETAIL_LIR_PASS(InsertBroadcastMove)
SNIPPETS_DETAIL_LIR_PASS(LoadMoveBroadcastToBroadcastLoad)
SNIPPETS_DETAIL_LIR_PASS(ExtractLoopInvariants)
SNIPPETS_DETAIL_LIR_PASS(InitLoops)
SNIPPETS_DETAIL_LIR_PASS(AllocateBuffers)
SNIPPETS_DETAIL_LIR_PASS(CleanRepeatedDataPointerShifts)
SNIPPETS_DETAIL_LIR_PASS(InsertLoops)
SNIPPETS_DETAIL_LIR_PASS(InitLiveRanges)
SNIPPETS_DETAIL_LIR_PASS(InsertRegSpills)
SNIPPETS_DETAIL_LIR_PASS(AssignRegisters)
SNIPPETS_DETAIL_LIR_PASS(InsertSpecificIterations)
SNIPPETS_DETAIL_LIR_PASS(PrefetchNextRows)
SNIPPETS_DETAIL_LIR_PASS(CleanupLoopOffsets)
SNIPPETS_DETAIL_LIR_PASS(OptimizeLoopSingleEvaluation)
SNIPPETS_DETAIL_LIR_PASS(LowerBrgemm)
#undef SNIPPETS_DETAIL_LIR_PASS
#undef SNIPPETS_DETAIL_DATA_FLOW_PASS
} // namespace passes

namespace reference {
SNIPPETS_DETAIL_EXTERN template std::vector<Values>
evaluate_values<ReferenceBackend>(const ir::Graph<ReferenceBackend>&, std::span<const Values>,
                                  const Options&);
SNIPPETS_DETAIL_EXTERN template std::vector<Values>
evaluate_values<DefaultTraits>(const ir::Graph<DefaultTraits>&, std::span<const Values>,
                               const Options&);
SNIPPETS_DETAIL_EXTERN template std::vector<Values>
detail::eval_node<ReferenceBackend>(const ir::Node<ReferenceBackend>&, std::span<const Values>,
                                    const Options&);
SNIPPETS_DETAIL_EXTERN template std::vector<Values>
detail::eval_node<DefaultTraits>(const ir::Node<DefaultTraits>&, std::span<const Values>,
                                 const Options&);
} // namespace reference

SNIPPETS_DETAIL_EXTERN template class Program<DefaultTraits>;

} // namespace snippets

#undef SNIPPETS_DETAIL_EXTERN
