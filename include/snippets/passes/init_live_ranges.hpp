// SPDX-License-Identifier: Apache-2.0
// snippets/passes/init_live_ranges.hpp: InitLiveRanges computes, for every value that needs a
// register, the interval [def, end] of expression positions in which it must stay in it.
//
// `end` is the last consumer's position, extended to the LoopEnd of every loop that contains
// a consumer but not the definition: a value defined before a loop and read inside it is
// needed again on the next iteration. Results go to Analyses::live_ranges.
#pragma once

#include "snippets/passes/lir_queries.hpp"
#include "snippets/passes/pass.hpp"
#include "snippets/passes/properties.hpp"

namespace snippets::passes {

struct InitLiveRanges {
  using pass_tag = lir_pass_tag;
  static constexpr std::string_view name = "InitLiveRanges";
  using needs = Properties<property::LoopsInserted>;
  using establishes = Properties<property::LiveRangesKnown>;

  template <class T> void run(ir::LinearIR<T>& lir, PassContext<T>& ctx) const {
    lir.renumber();
    std::map<std::size_t, std::size_t> loop_end; // loop id -> position of its LoopEnd
    for (auto& e : lir)
      if (const auto* le = std::get_if<ir::LoopEnd>(&e->op)) loop_end[le->loop_id] = e->order;
    auto& ranges = ctx.analyses.live_ranges;
    ranges.clear();
    for (auto& e : lir) {
      if (!defines_vector(*e) && !std::holds_alternative<ir::LoopBegin>(e->op)) continue;
      LiveRange r{e->order, e->order};
      for (auto& use : e->output(0).consumers()) {
        const auto& u = use.owner();
        r.end = std::max(r.end, u.order);
        for (std::size_t id : u.loop_ids)
          if (std::find(e->loop_ids.begin(), e->loop_ids.end(), id) == e->loop_ids.end() &&
              loop_end.count(id))
            r.end = std::max(r.end, loop_end[id]);
      }
      ranges[&e->output(0)] = r;
    }
  }
};

} // namespace snippets::passes
