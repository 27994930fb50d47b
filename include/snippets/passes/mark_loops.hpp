// SPDX-License-Identifier: Apache-2.0
// snippets/passes/mark_loops.hpp: MarkLoops groups expressions that can run in one loop nest.
//
// Walking the LIR in order, consecutive loop-body expressions that share the scheduling
// domain form one group; each group gets a loop nest over the domain (one LoopInfo per
// dimension, outermost first; the innermost steps by `lanes`, the others by 1). The outermost
// loop is the parallel one: its work amount is the executor's chunk, passed at run time. In a
// dynamic LIR every loop's work amount is passed at run time.
// Parameters, Results and Scalars stay outside the loops.
// A body with reductions (ReduceSum, ReduceMax, ReduceMin, ReduceProd) over its row (the last
// LinearIR::row_dims dimensions, usually one) runs row by row: one nest of the outer
// dimensions holds everything, and the row is walked by one nest of loops per stage. Stage 0
// holds the values computed from the inputs alone; a value that needs a reduction's result is
// computed in a later stage (the stage after the reduction's input) because the row must be
// complete first. Values of one element per row (reduction results and what is computed from
// them alone) sit between the row's loop nests. Expressions are reordered stage by stage:
// per-row values, then the stage's loop nest. A reduction keeps the ids of the loops that
// accumulate it and sits where its result is ready (right after them); DecomposeReductions
// lowers it there. With LinearIR::columns the row's last dimension is one vector of columns
// the reductions keep: a value that is 1 along the others is per-row.
#pragma once

#include <map>

#include "snippets/passes/lir_queries.hpp"
#include "snippets/passes/pass.hpp"
#include "snippets/passes/properties.hpp"

namespace snippets::passes {

struct MarkLoops {
  using pass_tag = lir_pass_tag;
  static constexpr std::string_view name = "MarkLoops";
  using before = Properties<property::LoopsMarked>;
  using establishes = Properties<property::LoopsMarked>;

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

  template <class T> void run(ir::LinearIR<T>& lir, PassContext<T>& ctx) const {
    for (auto& e : lir)
      if (is_reduction(*e)) {
        mark_rows(lir, ctx.config);
        return;
      }
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
  }

private:
  template <class T> static void mark_rows(ir::LinearIR<T>& lir, const LoweringConfig& cfg) {
    const std::size_t rank = lir.domain.size(), first_row_dim = rank - lir.row_dims;
    std::vector<std::size_t> outer = make_nest(lir, cfg);
    // the row's loops: one nest of them per stage (the first stage's are the ones made here)
    const std::vector<std::size_t> spare(outer.begin() + std::ptrdiff_t(first_row_dim),
                                         outer.end());
    outer.resize(first_row_dim);
    std::map<std::size_t, std::vector<std::size_t>> stage_loops;
    auto loops_of = [&](std::size_t s) -> const std::vector<std::size_t>& {
      if (!stage_loops.count(s)) {
        std::vector<std::size_t> ids = spare;
        if (!stage_loops.empty())
          for (std::size_t& id : ids) id = lir.loops().add(lir.loops().at(id));
        stage_loops[s] = ids;
      }
      return stage_loops[s];
    };
    // not one value per row (rows of one element: everything is in the row); with columns
    // (passes/tile_columns.hpp) a per-row value is a vector, a value per column
    const std::size_t row_end = lir.columns ? rank - 1 : rank;
    auto in_row = [&](const ir::PortDescriptor& d) {
      bool walked = false;
      for (std::size_t i = first_row_dim; i < row_end; ++i) {
        if (d.shape[i] != 1 && lir.domain[i] != 1) return true;
        walked = walked || lir.domain[i] != 1;
      }
      return !walked;
    };
    std::map<const ir::Expression<T>*, std::size_t> stage;
    struct Key {
      std::size_t stage, part; // part 0: per-row values, 1: the stage's row loops
      auto operator<=>(const Key&) const = default;
    };
    std::vector<std::pair<Key, ir::Expression<T>*>> body;
    for (auto& e : lir) {
      if (!is_loop_body(*e)) continue;
      std::size_t s = 0;
      for (std::size_t i = 0; i < e->num_inputs(); ++i) {
        const auto it = stage.find(&e->input_expr(i));
        if (it != stage.end()) s = std::max(s, it->second + (is_reduction(*it->first) ? 1 : 0));
      }
      stage[e.get()] = s;
      const bool per_row = !in_row(e->out_desc(0));
      e->loop_ids = outer;
      if (!per_row || is_reduction(*e)) {
        const auto& row = loops_of(s);
        e->loop_ids.insert(e->loop_ids.end(), row.begin(), row.end());
      }
      body.push_back({is_reduction(*e) ? Key{s + 1, 0} : Key{s, per_row ? 0u : 1u}, e.get()});
    }
    std::stable_sort(body.begin(), body.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    auto anchor = lir.begin(); // the first Result: the loop body goes before it
    while (anchor != lir.end() && !std::holds_alternative<ir::Result>((*anchor)->op)) ++anchor;
    for (const auto& [key, e] : body) lir.move(*e, anchor);
  }
};

} // namespace snippets::passes
