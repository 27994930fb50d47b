// SPDX-License-Identifier: Apache-2.0
// snippets/passes/extract_loop_invariants.hpp: ExtractLoopInvariants moves expressions whose
// value does not change across a loop's iterations out of that loop.
//
// Invariant in loop L: an expression directly in L (in no loop nested inside it) that is a
// BroadcastLoad whose tensor is broadcast along L's dimension (its pointer does not move in
// L), or a computation all of whose inputs are defined outside L or are themselves invariant.
// Stores and the reductions' accumulators never move. Innermost loops are treated first, so a
// per-channel bias in an [N, C, HW] domain leaves the HW loop but stays in the C loop. The moved
// expression goes right before L's first expression and leaves L (and every loop nested inside L);
// its register then lives across the loop (InitLiveRanges sees to that).
#pragma once

#include <set>

#include "snippets/passes/lir_queries.hpp"
#include "snippets/passes/pass.hpp"
#include "snippets/passes/properties.hpp"

namespace snippets::passes {

struct ExtractLoopInvariants {
  using pass_tag = lir_pass_tag;
  static constexpr std::string_view name = "ExtractLoopInvariants";
  using needs = Properties<property::LoadsStoresInserted>;
  using before = Properties<property::LoopsInserted>;
  using invalidates = Properties<property::LoopPortsInitialized, property::LiveRangesKnown>;

  template <class T> void run(ir::LinearIR<T>& lir, PassContext<T>&) const {
    std::size_t depth = 0;
    for (auto& e : lir) depth = std::max(depth, e->loop_ids.size());
    for (std::size_t level = depth; level-- > 0;) {
      std::set<std::size_t> loops;
      for (auto& e : lir)
        if (e->loop_ids.size() > level) loops.insert(e->loop_ids[level]);
      for (std::size_t id : loops) hoist(lir, id, level);
    }
  }

private:
  template <class T> static void hoist(ir::LinearIR<T>& lir, std::size_t id, std::size_t level) {
    const std::size_t dim = lir.loops().at(id).dim;
    auto in_loop = [&](const ir::Expression<T>& e) {
      return e.loop_ids.size() > level && e.loop_ids[level] == id;
    };
    std::vector<ir::Expression<T>*> body;
    for (auto& e : lir)
      if (in_loop(*e)) body.push_back(e.get());
    if (body.empty()) return;
    // hoisted expressions go before `anchor`, the first expression still in the loop
    auto anchor = lir.find(*body.front());
    std::set<const ir::Expression<T>*> invariant;
    for (ir::Expression<T>* e : body) {
      bool inv;
      if (e->loop_ids.size() != level + 1)
        inv = false; // still varies in an inner loop
      else if (std::holds_alternative<ir::BroadcastLoad>(e->op))
        inv = stride_along(e->in_desc(0).shape, dim) == 0;
      else if (is_memory_access(*e) || !defines_vector(*e) ||
               std::holds_alternative<ir::ReduceInit>(e->op) ||
               std::holds_alternative<ir::HorizonReduce>(e->op))
        inv = false; // an accumulator changes in the loops after it
      else {
        inv = true;
        for (std::size_t i = 0; i < e->num_inputs(); ++i) {
          const auto& src = e->input_expr(i);
          if (in_loop(src) && !invariant.count(&src)) inv = false;
        }
      }
      if (!inv) continue;
      invariant.insert(e);
      if (anchor->get() == e)
        ++anchor;
      else
        lir.move(*e, anchor);
      e->loop_ids.resize(level);
    }
  }
};

} // namespace snippets::passes
