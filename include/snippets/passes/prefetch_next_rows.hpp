// SPDX-License-Identifier: Apache-2.0
// snippets/passes/prefetch_next_rows.hpp: PrefetchNextRows asks the loads of a row-by-row
// kernel's last pass over a row to prefetch the same place in the next row.
//
// A kernel with reductions (LayerNorm, Softmax, MVN) walks each row several times: the first
// loop reads the row from memory, the later ones from cache. While those compute, no load goes
// to memory and the hardware prefetchers, which follow the loads, do not run ahead into the
// next row: the memory stream stops once per row. bf16 LayerNorm over rows of 4096 ran at 37%
// of a copy's bandwidth that way (Zen 5, one thread).
//
// For each kernel input read by two or more passes (a loop and its remainder block) nested in
// one iteration of an enclosing loop L, the Loads of the last such pass get Load::prefetch =
// the bytes L advances that input's pointer per step. The x86-64 emitter then issues a
// PREFETCHT0 of the same place one L step on, once per 64 bytes of the row, so the next row
// arrives while this one is computed. (Prefetching from the first pass, which reads from memory,
// competed with its own loads: 8-10% slower than from the last pass on the same LayerNorm.)
// The AArch64 emitter ignores the field: Debian 12's AsmJit has no PRFM.
// A kernel of columns (passes/tile_columns.hpp) walks blocks of W columns, each a row of C
// vectors one line apart from the next block's: C streams at once, more than the hardware
// prefetchers follow, so its first pass, which reads from memory, prefetches the same lines
// `column_distance` bytes on (whole blocks).
// In a dynamic kernel the row stride is known at run time only: its Loads get
// ir::runtime_prefetch, and the emitter reads the distance from the call's configuration
// (RuntimeConfig::table's row of row strides). Not for strided reads (gathers), inputs
// broadcast along L, or rows of more than ir::max_prefetch_distance bytes, whose next row would
// not stay in cache until its turn (dynamic: the configurator gives 0 for those).
// It runs after InsertSpecificIterations (the unrolled copies carry their offsets) and before
// CleanupLoopOffsets, which folds the inner loops' pointer rewinds into L's increments.
#pragma once

#include <algorithm>
#include <map>

#include "snippets/passes/lir_queries.hpp"
#include "snippets/passes/pass.hpp"
#include "snippets/passes/properties.hpp"

namespace snippets::passes {

struct PrefetchNextRows {
  using pass_tag = lir_pass_tag;
  static constexpr std::string_view name = "PrefetchNextRows";
  using needs = Properties<property::TailsSpecialized>;

  template <class T> void run(ir::LinearIR<T>& lir, PassContext<T>&) const {
    // (enclosing loop, input) -> the passes at the next level that load it, in program order;
    // a pass is a loop and the remainder blocks right after it (tails of the same dimension: a
    // dynamic kernel's one-vector loop and its masked one)
    std::map<std::pair<std::size_t, std::size_t>, std::vector<std::size_t>> readers;
    std::map<std::size_t, std::size_t> pass_of;  // loop -> its pass (the main loop's id)
    std::map<std::size_t, std::size_t> previous; // enclosing loop -> its last sub-loop so far
    for (auto& e : lir) {
      if (!reads_input(lir, *e)) continue;
      for (std::size_t level = 0; level + 1 < e->loop_ids.size(); ++level) {
        const std::size_t outer = e->loop_ids[level], sub = e->loop_ids[level + 1];
        if (!pass_of.count(sub)) {
          const auto prev = previous.find(outer);
          const auto& info = lir.loops().at(sub);
          const bool remainder =
              info.is_tail && prev != previous.end() &&
              (!lir.loops().at(prev->second).is_tail || pass_of.at(prev->second) != prev->second) &&
              lir.loops().at(prev->second).dim == info.dim;
          pass_of[sub] = remainder ? pass_of.at(prev->second) : sub;
          previous[outer] = sub;
        }
        auto& passes = readers[{outer, e->data_index}];
        if (std::find(passes.begin(), passes.end(), pass_of.at(sub)) == passes.end())
          passes.push_back(pass_of.at(sub));
      }
    }
    if (lir.columns) return prefetch_columns(lir, readers, pass_of);
    for (auto& e : lir) {
      if (!reads_input(lir, *e)) continue;
      // the innermost enclosing loop whose iteration reads this input in two passes or more
      for (std::size_t sub = e->loop_ids.size(); sub-- > 1;) {
        const std::size_t outer = e->loop_ids[sub - 1];
        const auto it = readers.find({outer, e->data_index});
        if (it == readers.end() || it->second.size() < 2) continue;
        const ir::LoopInfo& loop = lir.loops().at(outer);
        const auto& shape = e->in_desc(0).shape; // 1: one row for all (a dynamic kernel's too)
        if (pass_of.at(e->loop_ids[sub]) == it->second.back() &&
            (loop.dim >= shape.size() || shape[loop.dim] != 1))
          std::get<ir::Load>(e->op).prefetch = step_bytes(lir, loop, e->data_index);
        break;
      }
    }
  }

  /// How far ahead a kernel of columns prefetches: at least this many bytes, whole blocks.
  static constexpr std::int64_t column_distance = 512;

private:
  /// Columns: the first pass over a block reads its C lines from memory, C streams apart that
  /// the hardware prefetchers do not follow; its Loads prefetch the same lines some blocks on.
  template <class T>
  static void prefetch_columns(
      ir::LinearIR<T>& lir,
      const std::map<std::pair<std::size_t, std::size_t>, std::vector<std::size_t>>& readers,
      const std::map<std::size_t, std::size_t>& pass_of) {
    const std::size_t blocks = lir.domain.size() - lir.row_dims - 1; // the blocks' loop level
    for (auto& e : lir) {
      if (!reads_input(lir, *e) || e->loop_ids.size() <= blocks + 1) continue;
      const std::size_t outer = e->loop_ids[blocks];
      const auto it = readers.find({outer, e->data_index});
      if (it == readers.end() || pass_of.at(e->loop_ids[blocks + 1]) != it->second.front())
        continue;
      if (const std::int64_t step = step_bytes(lir, lir.loops().at(outer), e->data_index); step > 0)
        std::get<ir::Load>(e->op).prefetch = (column_distance + step - 1) / step * step;
    }
  }

  template <class T>
  static bool reads_input(const ir::LinearIR<T>& lir, const ir::Expression<T>& e) {
    const auto* load = std::get_if<ir::Load>(&e.op);
    return load && load->stride == 1 && e.data_index < lir.num_inputs;
  }
  /// Bytes `loop` moves pointer `data` per step; 0 (no prefetch) when it is broadcast along the
  /// loop or too far; ir::runtime_prefetch where a dynamic kernel's loop over the rows reads it
  /// at run time (the configurator gives the row stride, or 0 past the distance).
  template <class T>
  static std::int64_t step_bytes(const ir::LinearIR<T>& lir, const ir::LoopInfo& loop,
                                 std::size_t data) {
    for (const auto& p : loop.ports) {
      if (p.data_index != data) continue;
      if (p.runtime)
        return lir.dynamic && loop.dim + 2 == lir.domain.size() ? ir::runtime_prefetch : 0;
      const std::int64_t bytes = p.ptr_increment * p.element_size;
      return bytes <= 0 || bytes > ir::max_prefetch_distance ? 0 : bytes;
    }
    return 0;
  }
};

} // namespace snippets::passes
