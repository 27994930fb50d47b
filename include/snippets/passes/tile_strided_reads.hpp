// SPDX-License-Identifier: Apache-2.0
// snippets/passes/tile_strided_reads.hpp: TileStridedReads orders the loops so that a gathered
// input reuses its cache lines.
//
// An input read with a stride along the innermost domain dimension (a folded Transpose such
// as [0,2,3,1]) is gathered: each vector touches `lanes` cache lines, one per row. Walking the
// whole innermost dimension before the next column evicts those lines (with power-of-two-ish
// strides they also share a few cache sets), so every gather misses L1. This pass splits the
// innermost dimension S into blocks of one vector, [S/lanes, lanes], and moves the dimension
// along which that input is contiguous (its smallest stride) inside the block loop:
//   domain [B, HD, S], x gathered along S, contiguous along HD  ->  [B, S/lanes, HD, lanes]
// so consecutive gathers read the next element of the same lines. Every port's shape is
// rewritten the same way and gets a memory order (PortDescriptor::layout) that keeps its
// memory as it was: planar outputs are still written as contiguous vectors.
// Applies to static LIRs without reductions whose innermost extent is a multiple of `lanes`
// above one vector (no tails appear inside the tile); anything else is left as it is.
// @pre OptimizeDomain ran (the domain is collapsed); @post lir.domain has one more dimension.
#pragma once

#include <optional>

#include "snippets/passes/lir_queries.hpp"
#include "snippets/passes/pass.hpp"
#include "snippets/passes/properties.hpp"

namespace snippets::passes {

/// Splits the innermost of the n dimensions of `desc` into blocks of `width` elements: n + 1
/// dimensions, dimension d < n - 1 at to[d], the blocks at `block` and the elements of one at
/// `lane` (1 and 1 where `desc` is broadcast along it). Its memory order keeps the memory as it
/// was: the blocks and then their elements where the innermost dimension was.
inline void split_innermost(ir::PortDescriptor& desc, const std::vector<std::size_t>& to,
                            std::size_t block, std::size_t lane, Dim width) {
  const std::size_t n = desc.shape.size();
  const std::vector<Dim> old = desc.shape;
  std::vector<std::size_t> order = desc.layout;
  if (order.empty())
    for (std::size_t d = 0; d < n; ++d) order.push_back(d);
  std::vector<Dim> shape(n + 1);
  for (std::size_t d = 0; d + 1 < n; ++d) shape[to[d]] = old[d];
  shape[block] = old[n - 1] == 1 ? 1 : old[n - 1] / width;
  shape[lane] = old[n - 1] == 1 ? 1 : width;
  std::vector<std::size_t> memory;
  for (std::size_t d : order) {
    if (d + 1 == n) {
      memory.push_back(block);
      memory.push_back(lane);
    } else {
      memory.push_back(to[d]);
    }
  }
  desc.shape = std::move(shape);
  desc.layout = std::move(memory);
}

/// split_innermost on the domain and on every port of `lir`.
template <class T>
void split_innermost(ir::LinearIR<T>& lir, const std::vector<std::size_t>& to, std::size_t block,
                     std::size_t lane, Dim width) {
  ir::PortDescriptor domain{lir.domain, {}, {}};
  split_innermost(domain, to, block, lane, width);
  lir.domain = domain.shape;
  for (auto& e : lir) {
    for (std::size_t i = 0; i < e->num_inputs(); ++i)
      split_innermost(e->in_desc(i), to, block, lane, width);
    for (std::size_t i = 0; i < e->num_outputs(); ++i)
      split_innermost(e->out_desc(i), to, block, lane, width);
  }
}

struct TileStridedReads {
  using pass_tag = lir_pass_tag;
  static constexpr std::string_view name = "TileStridedReads";
  using before = Properties<property::LoopsMarked>;

  template <class T> void run(ir::LinearIR<T>& lir, PassContext<T>& ctx) const {
    const std::size_t n = lir.domain.size();
    const Dim lanes = ctx.config.lanes;
    if (lir.dynamic || n < 2 || lir.domain[n - 1] <= lanes || lir.domain[n - 1] % lanes != 0)
      return;
    for (auto& e : lir) // a row-by-row kernel keeps its rows whole
      if (is_reduction(*e)) return;
    const ir::PortDescriptor* gathered = nullptr;
    for (auto& e : lir)
      if (std::holds_alternative<ir::Parameter>(e->op) && stride_along(e->out_desc(0), n - 1) > 1) {
        gathered = &e->out_desc(0);
        break;
      }
    if (!gathered) return;
    std::optional<std::size_t> inner; // where the gathered input is contiguous, or closest
    std::int64_t best = 0;
    for (std::size_t d = 0; d + 1 < n; ++d)
      if (const std::int64_t s = stride_along(*gathered, d); s > 0 && (!inner || s < best))
        inner = d, best = s;
    if (!inner) return;
    // new positions: the other dims in order, then the block loop, `inner`, the lanes
    std::vector<std::size_t> to(n - 1);
    std::size_t k = 0;
    for (std::size_t d = 0; d + 1 < n; ++d)
      if (d != *inner) to[d] = k++;
    const std::size_t block = k, lane = k + 2;
    to[*inner] = k + 1;
    split_innermost(lir, to, block, lane, lanes);
  }
};

} // namespace snippets::passes
