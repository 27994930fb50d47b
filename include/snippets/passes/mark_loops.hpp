// snippets/passes/mark_loops.hpp: MarkLoops groups expressions that can run in one loop nest.
//
// Walking the LIR in order, consecutive loop-body expressions that share the scheduling
// domain form one group; each group gets a loop nest over the domain (one LoopInfo per
// dimension, outermost first; the innermost steps by `lanes`, the others by 1). The outermost
// loop is the parallel one: its work amount is the executor's chunk, passed at run time. In a
// dynamic LIR every loop's work amount is passed at run time.
// Parameters, Results and Scalars stay outside the loops.
#pragma once

#include "snippets/passes/lir_queries.hpp"
#include "snippets/passes/pass.hpp"

namespace snippets::passes {

struct MarkLoops {
  using pass_tag = lir_pass_tag;
  static constexpr std::string_view name = "MarkLoops";

  template <class T>
  static std::vector<std::size_t> make_nest(ir::LinearIR<T>& lir, const LoweringConfig& cfg) {
    std::vector<std::size_t> ids;
    for (std::size_t d = 0; d < lir.domain.size(); ++d) {
      ir::LoopInfo info;
      info.dim = d;
      // a dynamic kernel's configurator may collapse dims: no extent is known here
      info.work_amount = lir.dynamic ? dynamic : lir.domain[d];
      info.increment = d + 1 == lir.domain.size() ? cfg.lanes : 1;
      info.runtime_work_amount = d == 0 || lir.dynamic;
      ids.push_back(lir.loops().add(info));
    }
    return ids;
  }

  template <class T> Preserved run(ir::LinearIR<T>& lir, PassContext<T>& ctx) const {
    std::vector<std::size_t> nest;
    bool in_group = false;
    for (auto& e : lir) {
      if (!is_loop_body(*e)) {
        in_group = false;
        continue;
      }
      if (!in_group) nest = make_nest(lir, ctx.config);
      in_group = true;
      e->loop_ids = nest;
    }
    return Preserved::none;
  }
};

} // namespace snippets::passes
