// SPDX-License-Identifier: Apache-2.0
// snippets/passes/tile_columns.hpp: TileColumns makes a reduction over middle axes one over a
// vector of columns at a time.
//
// A sum over the channels of NCHW, s = ReduceSum(x, axes {1}, keep_dims), y = x - s: OptimizeDomain
// made the domain [N, C, HW], rows of [C, HW] whose last dimension the reductions keep
// (LinearIR::columns). Each element of s is a column of x, C elements HW apart. Reducing a
// row's columns one by one would gather; instead the kept dimension is split into blocks of W
// columns, and the blocks go before the row:
//   [N, C, HW]  ->  [N, HW / W, C, W]
// Each row of the new domain is C vectors of W adjacent columns (one vector load each, HW
// apart); a reduction adds them lane by lane, so its accumulator holds the W columns' values
// (no horizontal fold: HorizonReduce::columns) and the ops after it use them as vectors, a
// lane per column. The second pass over the row reads its C vectors from cache.
// W is the largest divisor of HW not above the vector's lanes: 16 of 3136 (56 x 56) on
// AVX-512, 14 of 196, 7 of 49. Below `lanes` every vector of the row is a masked tail
// (passes/insert_specific_iterations.hpp), which wastes lanes but stays one kernel.
// Every port is rewritten as TileStridedReads does (split_innermost): planar memory stays as
// it was, through the ports' memory orders. The blocks are walked by the loop before the row
// (the threads split the outermost dimension: the blocks when N is 1 and OptimizeDomain
// dropped it, in units that keep each thread's part of a channel whole cache lines,
// compile/signature.hpp's column_chunk_unit).
// Applies to static LIRs with LinearIR::columns; a part of an input (a folded Slice) is not
// split [snippets.compile.reduce_axis].
// @pre OptimizeDomain ran; @post lir.domain has one more dimension, row_dims is unchanged
// (the reduced dimensions and the columns of one block).
#pragma once

#include "snippets/error.hpp"
#include "snippets/passes/pass.hpp"
#include "snippets/passes/properties.hpp"
#include "snippets/passes/tile_strided_reads.hpp"

namespace snippets::passes {

struct TileColumns {
  using pass_tag = lir_pass_tag;
  static constexpr std::string_view name = "TileColumns";
  using before = Properties<property::LoopsMarked>;

  template <class T> void run(ir::LinearIR<T>& lir, PassContext<T>& ctx) const {
    if (!lir.columns) return;
    SNIPPETS_ASSERT(!lir.dynamic) << "columns are static";
    const std::size_t n = lir.domain.size(), first_row = n - lir.row_dims;
    const Dim columns = lir.domain[n - 1];
    Dim width = std::min<Dim>(columns, Dim(ctx.config.lanes));
    while (columns % width != 0) --width;
    for (auto& e : lir)
      if (std::holds_alternative<ir::Parameter>(e->op) && !e->out_desc(0).memory.empty())
        raise("snippets.compile.reduce_axis",
              "'" + e->name +
                  "' reads a part of an input in a kernel that reduces over middle axes; "
                  "slice outside the subgraph");
    // new positions: the dims before the row, the blocks of columns, the row's, the columns
    std::vector<std::size_t> to(n - 1);
    for (std::size_t d = 0; d + 1 < n; ++d) to[d] = d < first_row ? d : d + 1;
    split_innermost(lir, to, first_row, n, width);
  }
};

} // namespace snippets::passes
