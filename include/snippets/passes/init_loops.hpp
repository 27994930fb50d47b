// SPDX-License-Identifier: Apache-2.0
// snippets/passes/init_loops.hpp: InitLoops fills each loop's ports: the memory accesses
// inside it, with their pointer increment per iteration (stride along the loop's dimension
// times the increment; 0 where the tensor is broadcast) and the finalization offset that
// returns the pointer after the loop (minus the stride times the work amount).
// In a dynamic LIR the outer loops' ports are `runtime` (their increments come from the
// run-time configuration, which also accounts for what the inner loops advanced), and the
// innermost loop's ports keep their static increment (1 or 0 elements per lane: the kernel is
// compiled for a known innermost broadcast) with no finalization offset. A Buffer (one row of
// per-thread scratch) stays at its row in the outer loops of a dynamic LIR: increment 0, and its
// innermost loops move it back to the row's start (CleanupLoopOffsets).
#pragma once

#include "snippets/passes/lir_queries.hpp"
#include "snippets/passes/pass.hpp"
#include "snippets/passes/properties.hpp"

namespace snippets::passes {

struct InitLoops {
  using pass_tag = lir_pass_tag;
  static constexpr std::string_view name = "InitLoops";
  using needs = Properties<property::LoadsStoresInserted>;
  using establishes = Properties<property::LoopPortsInitialized>;

  template <class T> void run(ir::LinearIR<T>& lir, PassContext<T>&) const {
    for (std::size_t id = 0; id < lir.loops().size(); ++id) {
      auto& info = lir.loops().at(id);
      info.ports.clear();
      for (auto& e : lir) {
        if (!is_memory_access(*e)) continue;
        if (std::find(e->loop_ids.begin(), e->loop_ids.end(), id) == e->loop_ids.end()) continue;
        const auto& desc =
            std::holds_alternative<ir::Store>(e->op) ? e->out_desc(0) : e->in_desc(0);
        const std::int64_t stride = stride_along(desc, info.dim);
        ir::LoopPort port;
        port.expr = e.get();
        port.data_index = e->data_index;
        port.element_size = static_cast<std::int64_t>(size_of(memory_type(*e)));
        const bool buffer = e->data_index >= lir.num_inputs + lir.num_outputs;
        if (lir.dynamic && info.dim + 1 < lir.domain.size() && !buffer) {
          port.runtime = true;
        } else {
          port.ptr_increment = stride * info.increment;
          port.finalization_offset = lir.dynamic ? 0 : -stride * info.work_amount;
        }
        info.ports.push_back(port);
      }
    }
  }
};

} // namespace snippets::passes
