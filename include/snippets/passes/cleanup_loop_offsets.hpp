// snippets/passes/cleanup_loop_offsets.hpp: CleanupLoopOffsets folds each inner loop's
// finalization offsets into its parent's pointer increments (one add per pointer per outer
// iteration instead of two) and zeroes the offsets of outermost loops, after which the kernel
// returns and the pointers are dead.
#pragma once

#include "snippets/passes/pass.hpp"

namespace snippets::passes {

struct CleanupLoopOffsets {
  using pass_tag = lir_pass_tag;
  static constexpr std::string_view name = "CleanupLoopOffsets";

  template <class T> Preserved run(ir::LinearIR<T>& lir, PassContext<T>&) const {
    for (auto& e : lir) {
      const auto* end = std::get_if<ir::LoopEnd>(&e->op);
      if (!end) continue;
      auto& inner = lir.loops().at(end->loop_id);
      if (e->loop_ids.empty()) { // outermost
        for (auto& p : inner.ports) p.finalization_offset = 0;
        continue;
      }
      auto& parent = lir.loops().at(e->loop_ids.back());
      for (auto& p : inner.ports) {
        if (p.finalization_offset == 0) continue;
        for (auto& q : parent.ports)
          if (q.data_index == p.data_index) {
            q.ptr_increment += p.finalization_offset;
            p.finalization_offset = 0;
            break;
          }
      }
    }
    return Preserved::none;
  }
};

} // namespace snippets::passes
