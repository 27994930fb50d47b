// SPDX-License-Identifier: Apache-2.0
// snippets/passes/optimize_loop_single_evaluation.hpp: OptimizeLoopSingleEvaluation marks
// loops that run exactly once (static work amount equal to the increment): they get no
// counter and no back-edge, and their per-iteration pointer shifts move into the
// finalization offsets, where they often cancel out.
#pragma once

#include "snippets/passes/pass.hpp"
#include "snippets/passes/properties.hpp"

namespace snippets::passes {

struct OptimizeLoopSingleEvaluation {
  using pass_tag = lir_pass_tag;
  static constexpr std::string_view name = "OptimizeLoopSingleEvaluation";
  using needs = Properties<property::TailsSpecialized>;

  template <class T> void run(ir::LinearIR<T>& lir, PassContext<T>&) const {
    for (std::size_t id = 0; id < lir.loops().size(); ++id) {
      auto& info = lir.loops().at(id);
      if (info.runtime_work_amount || info.work_amount != info.increment) continue;
      info.evaluate_once = true;
      for (auto& p : info.ports) {
        p.finalization_offset += p.ptr_increment;
        p.ptr_increment = 0;
      }
    }
  }
};

} // namespace snippets::passes
