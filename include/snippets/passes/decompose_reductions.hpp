// SPDX-License-Identifier: Apache-2.0
// snippets/passes/decompose_reductions.hpp: DecomposeReductions lowers ReduceSum, ReduceMax,
// ReduceMin and ReduceProd over the row (the seed's reduce decomposition).
//
// MarkLoops left each reduction with the ids of the row's loops that walk its input (one per
// row dimension, LinearIR::row_dims), at the place its result is ready (after them). It becomes
//   acc = ReduceInit            before those loops (0, -inf, +inf or 1: the neutral element),
//   ReduceAccumulate(acc, x)    at the end of the innermost one's body (masked in tail
//                               iterations; the outer row loops carry acc from one to the next),
//   HorizonReduce(acc)          where the reduction was (the row's value in every lane; with
//                               LinearIR::columns, a value per lane: acc as it is).
// The accumulator is defined before the loop and read after it, so it keeps its register
// through the loop and ReduceAccumulate may update it in place.
#pragma once

#include "snippets/passes/lir_queries.hpp"
#include "snippets/passes/pass.hpp"
#include "snippets/passes/properties.hpp"

namespace snippets::passes {

struct DecomposeReductions {
  using pass_tag = lir_pass_tag;
  static constexpr std::string_view name = "DecomposeReductions";
  using needs = Properties<property::LoopsMarked>;
  using before = Properties<property::LoadsStoresInserted>;
  using establishes = Properties<property::ReductionsDecomposed>;

  template <class T> void run(ir::LinearIR<T>& lir, PassContext<T>& ctx) const {
    std::vector<ir::Expression<T>*> reductions;
    for (auto& e : lir)
      if (is_reduction(*e)) reductions.push_back(e.get());
    for (ir::Expression<T>* r : reductions) {
      ir::ReduceKind kind = ir::ReduceKind::sum;
      if (const auto* m = std::get_if<ir::ReduceMax>(&r->op))
        kind = m->ignore_nan ? ir::ReduceKind::max_ignore_nan : ir::ReduceKind::max;
      if (std::holds_alternative<ir::ReduceMin>(r->op)) kind = ir::ReduceKind::min;
      if (std::holds_alternative<ir::ReduceProd>(r->op)) kind = ir::ReduceKind::prod;
      const std::vector<std::size_t> loop = r->loop_ids;
      SNIPPETS_ASSERT(!loop.empty()) << r->name << " is in no loop (run MarkLoops first)";
      SNIPPETS_ASSERT(loop.size() >= lir.row_dims) << r->name << " is outside its row's loops";
      const std::vector<std::size_t> outer(loop.begin(), loop.end() - std::ptrdiff_t(lir.row_dims));
      ir::Expression<T>*first = nullptr, *last = nullptr; // the loop's body before r
      for (auto& e : lir) {
        if (e.get() == r) break;
        if (e->loop_ids == loop) last = e.get(), first = first ? first : e.get();
      }
      auto& init = lir.insert_node(lir.find(first ? *first : *r), ir::ReduceInit{kind}, {}, 1,
                                   outer, r->name);
      init.out_desc(0).shape = r->out_desc(0).shape;
      lir.insert_node(last ? std::next(lir.find(*last)) : lir.find(*r),
                      ir::ReduceAccumulate{kind, ctx.config.lanes},
                      {&init.output(0), &r->input_connector(0)}, 0, loop, r->name);
      r->loop_ids = outer;
      ir::PortConnector<T>* acc = &init.output(0);
      lir.replace_with_node(*r, ir::HorizonReduce{kind, lir.columns}, std::span(&acc, 1));
    }
  }
};

} // namespace snippets::passes
