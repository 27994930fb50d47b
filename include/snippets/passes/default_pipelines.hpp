// SPDX-License-Identifier: Apache-2.0
// snippets/passes/default_pipelines.hpp: the pass pipelines compile() runs by default.
//
// Users and backends derive theirs with insert_after_t / insert_before_t / replace_t / remove_t
// (pipeline.hpp), which find their anchor at any depth, e.g.
//   using Mine = passes::insert_after_t<passes::DefaultLowering, passes::InsertLoops, MyPass>;
//   using NoFusion = passes::remove_t<passes::DefaultLowering, passes::FuseLoops>;
//   using MyDataFlow = passes::insert_after_t<passes::DefaultDataFlow, passes::Canonicalize, R>;
// and pass them to compile<T, Lowering, DataFlow>, compile_cached or Program<T, Lowering,
// DataFlow>. describe<DefaultLowering>() prints this file's pipelines pass by pass.
#pragma once

#include "snippets/passes/align_element_types.hpp"
#include "snippets/passes/allocate_buffers.hpp"
#include "snippets/passes/assign_registers.hpp"
#include "snippets/passes/canonicalize.hpp"
#include "snippets/passes/clean_repeated_data_pointer_shifts.hpp"
#include "snippets/passes/cleanup_loop_offsets.hpp"
#include "snippets/passes/convert_constants_to_scalars.hpp"
#include "snippets/passes/convert_power_to_power_static.hpp"
#include "snippets/passes/data_flow.hpp"
#include "snippets/passes/decompose_composite_reductions.hpp"
#include "snippets/passes/decompose_quantization.hpp"
#include "snippets/passes/decompose_reductions.hpp"
#include "snippets/passes/decompose_softmax.hpp"
#include "snippets/passes/extract_loop_invariants.hpp"
#include "snippets/passes/fold_dequantize_into_matmul.hpp"
#include "snippets/passes/fuse_loops.hpp"
#include "snippets/passes/fuse_multiply_add.hpp"
#include "snippets/passes/fuse_transpose_into_parameter.hpp"
#include "snippets/passes/fuse_transpose_into_result.hpp"
#include "snippets/passes/init_live_ranges.hpp"
#include "snippets/passes/init_loops.hpp"
#include "snippets/passes/insert_broadcast_move.hpp"
#include "snippets/passes/insert_buffers.hpp"
#include "snippets/passes/insert_load_store.hpp"
#include "snippets/passes/insert_loops.hpp"
#include "snippets/passes/insert_reg_spills.hpp"
#include "snippets/passes/insert_specific_iterations.hpp"
#include "snippets/passes/load_move_broadcast_to_broadcast_load.hpp"
#include "snippets/passes/lower_brgemm.hpp"
#include "snippets/passes/mark_loops.hpp"
#include "snippets/passes/multiply_by_reciprocal.hpp"
#include "snippets/passes/optimize_domain.hpp"
#include "snippets/passes/optimize_loop_single_evaluation.hpp"
#include "snippets/passes/pipeline.hpp"
#include "snippets/passes/prefetch_next_rows.hpp"
#include "snippets/passes/tile_columns.hpp"
#include "snippets/passes/tile_strided_reads.hpp"

namespace snippets::passes {

/// Data flow, on the Subgraph body: QDQ MatMuls as int8 products, ReduceMean and the other
/// composite reductions, Softmax, FakeQuantize and Quantize, transposes of inputs and outputs into
/// their loads and stores, layouts and ranks, scalars, PowerStatic, f32 compute.
using DefaultDataFlow =
    DataFlowPipeline<FoldDequantizeIntoMatMul, DecomposeCompositeReductions, DecomposeSoftmax,
                     DecomposeQuantization, FuseTransposeIntoParameter, FuseTransposeIntoResult,
                     Canonicalize, ConvertConstantsToScalars, ConvertPowerToPowerStatic,
                     AlignElementTypes>;

/// Control flow: loops (row by row around reductions), memory access, buffers, broadcasting,
/// pointer shifts.
using DefaultControlFlow =
    Pipeline<OptimizeDomain, TileColumns, TileStridedReads, MultiplyByReciprocal, FuseMultiplyAdd,
             MarkLoops, DecomposeReductions, FuseLoops, InsertBuffers, InsertLoadStore,
             InsertBroadcastMove, LoadMoveBroadcastToBroadcastLoad, ExtractLoopInvariants,
             InitLoops, AllocateBuffers, CleanRepeatedDataPointerShifts, InsertLoops>;

/// Generator preparation: registers, tails, prefetches, final pointer arithmetic.
using DefaultPreparation =
    Pipeline<InitLiveRanges, InsertRegSpills, AssignRegisters, InsertSpecificIterations,
             PrefetchNextRows, CleanupLoopOffsets, OptimizeLoopSingleEvaluation>;

/// Lowering of MatMul kernels (MatMul, attention and MLP-chain bodies): FMAs in the epilogues,
/// the Brgemm loops, then loop bounds and counter registers.
using BrgemmLowering =
    Pipeline<FuseMultiplyAdd, LowerBrgemm, InsertLoops, InitLiveRanges, AssignRegisters>;

/// Lowering of every other kernel: loop nests over the domain, then registers and tails.
using LoopLowering = Pipeline<DefaultControlFlow, DefaultPreparation>;

/// Selects the bodies BrgemmLowering takes: those with a MatMul.
struct HasMatMul {
  static constexpr std::string_view name = "HasMatMul";
  template <class T> static bool test(const ir::LinearIR<T>& lir) { return has_brgemm(lir); }
};

/// Everything between the Linear IR and emission.
using DefaultLowering = Select<HasMatMul, BrgemmLowering, LoopLowering>;

} // namespace snippets::passes
