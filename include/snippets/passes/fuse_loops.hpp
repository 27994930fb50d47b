// SPDX-License-Identifier: Apache-2.0
// snippets/passes/fuse_loops.hpp: FuseLoops merges loop nests that walk the same iteration
// space, so their expressions share one pass over memory.
//
// Two nests fuse when they have the same depth and, level by level, the same dimension, work
// amount and increment, and nothing between them (a Result, say) depends on running the
// first nest to completion. The second nest's expressions move to the first nest's ids;
// expressions of the second nest are moved up to follow the first's, which keeps data
// dependencies because both read only values defined before either nest.
#pragma once

#include "snippets/passes/lir_queries.hpp"
#include "snippets/passes/pass.hpp"
#include "snippets/passes/properties.hpp"

namespace snippets::passes {

struct FuseLoops {
  using pass_tag = lir_pass_tag;
  static constexpr std::string_view name = "FuseLoops";
  using needs = Properties<property::LoopsMarked>;
  using before = Properties<property::LoadsStoresInserted>;

  static bool same_space(const ir::LoopManager& lm, const std::vector<std::size_t>& a,
                         const std::vector<std::size_t>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
      const auto &x = lm.at(a[i]), &y = lm.at(b[i]);
      if (x.dim != y.dim || x.work_amount != y.work_amount || x.increment != y.increment ||
          x.runtime_work_amount != y.runtime_work_amount)
        return false;
    }
    return true;
  }

  template <class T> void run(ir::LinearIR<T>& lir, PassContext<T>&) const {
    std::vector<std::size_t> first;          // the nest expressions are fused into
    ir::Expression<T>* last_fused = nullptr; // where the next fused expression goes after
    std::vector<ir::Expression<T>*> order;
    for (auto& e : lir) order.push_back(e.get());
    for (auto* e : order) {
      if (e->loop_ids.empty()) continue;
      if (first.empty()) first = e->loop_ids;
      if (e->loop_ids != first && same_space(lir.loops(), e->loop_ids, first) &&
          inputs_defined_before(lir, *e, *last_fused)) {
        e->loop_ids = first;
        lir.move(*e, std::next(lir.find(*last_fused)));
      }
      if (e->loop_ids == first) last_fused = e;
    }
  }

private:
  template <class T>
  static bool inputs_defined_before(ir::LinearIR<T>& lir, const ir::Expression<T>& e,
                                    const ir::Expression<T>& pos) {
    lir.renumber();
    for (std::size_t i = 0; i < e.num_inputs(); ++i)
      if (e.input_expr(i).order > pos.order) return false;
    return true;
  }
};

} // namespace snippets::passes
