// SPDX-License-Identifier: Apache-2.0
// snippets/passes/cleanup_loop_offsets.hpp: CleanupLoopOffsets folds each inner loop's
// finalization offsets into its parent's pointer increments (one add per pointer per outer
// iteration instead of two) and zeroes the offsets of outermost loops, after which the kernel
// returns and the pointers are dead. An inner loop followed (in the same parent iteration) by
// another access to the same pointer keeps its offset: the next innermost loop of a row-by-row
// body reads the row from its start again.
// A dynamic LIR's innermost loops walk a run-time number of elements; the configurator's
// increments of the outer loops account for one walk per row (runtime/runtime_config.hpp). So
// the last piece of such a loop (its masked tail) moves back by what the loop walked
// (LoopPort::rewind) each pointer that is accessed again later in the row, and every Buffer
// pointer, which stays at its row.
#pragma once

#include <set>

#include "snippets/passes/lir_queries.hpp"
#include "snippets/passes/pass.hpp"
#include "snippets/passes/properties.hpp"

namespace snippets::passes {

struct CleanupLoopOffsets {
  using pass_tag = lir_pass_tag;
  static constexpr std::string_view name = "CleanupLoopOffsets";
  using needs = Properties<property::TailsSpecialized>;

  template <class T> void run(ir::LinearIR<T>& lir, PassContext<T>&) const {
    for (auto it = lir.begin(); it != lir.end(); ++it) {
      auto& e = *it;
      const auto* end = std::get_if<ir::LoopEnd>(&e->op);
      if (!end) continue;
      auto& inner = lir.loops().at(end->loop_id);
      if (lir.dynamic && inner.is_tail && inner.evaluate_once && inner.tail_of >= 0) {
        mark_rewinds(lir, inner, std::next(it), e->loop_ids);
        continue;
      }
      if (e->loop_ids.empty()) { // outermost
        for (auto& p : inner.ports) p.finalization_offset = 0;
        continue;
      }
      auto& parent = lir.loops().at(e->loop_ids.back());
      const std::set<std::size_t> later = accessed_later(lir, std::next(it), e->loop_ids.back());
      for (auto& p : inner.ports) {
        if (p.finalization_offset == 0 || later.count(p.data_index)) continue;
        for (auto& q : parent.ports)
          if (q.data_index == p.data_index) {
            q.ptr_increment += p.finalization_offset;
            p.finalization_offset = 0;
            break;
          }
      }
    }
  }

private:
  /// The masked tail `tail` of a dynamic innermost loop ends right before `from`, in the loops
  /// `outer`: set the rewinds of its pointers (per element, from the main loop's increments).
  template <class T>
  static void mark_rewinds(ir::LinearIR<T>& lir, ir::LoopInfo& tail,
                           typename ir::LinearIR<T>::iterator from,
                           const std::vector<std::size_t>& outer) {
    const ir::LoopInfo& main = lir.loops().at(static_cast<std::size_t>(tail.tail_of));
    const std::set<std::size_t> later =
        outer.empty() ? std::set<std::size_t>{} : accessed_later(lir, from, outer.back());
    SNIPPETS_ASSERT(main.ports.size() == tail.ports.size()) << "a tail of another body";
    for (std::size_t i = 0; i < tail.ports.size(); ++i) {
      ir::LoopPort& p = tail.ports[i];
      const bool buffer = p.data_index >= lir.num_inputs + lir.num_outputs;
      if (!buffer && !later.count(p.data_index)) continue;
      p.rewind = main.ports[i].ptr_increment / main.increment * p.element_size;
    }
  }

  /// Data pointers accessed from `from` up to the end of loop `parent`.
  template <class T>
  static std::set<std::size_t> accessed_later(ir::LinearIR<T>& lir,
                                              typename ir::LinearIR<T>::iterator from,
                                              std::size_t parent) {
    std::set<std::size_t> out;
    for (auto it = from; it != lir.end(); ++it) {
      const auto* end = std::get_if<ir::LoopEnd>(&(*it)->op);
      if (end && end->loop_id == parent) break;
      if (is_memory_access(**it)) out.insert((*it)->data_index);
    }
    return out;
  }
};

} // namespace snippets::passes
