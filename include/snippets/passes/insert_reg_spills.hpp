// SPDX-License-Identifier: Apache-2.0
// snippets/passes/insert_reg_spills.hpp: InsertRegSpills keeps the number of simultaneously
// live vector values within the register file by spilling some to the stack.
//
// Walking the live ranges (InitLiveRanges), at the first expression where the values live
// across it plus its own result exceed the registers left after emitter scratch, the value
// not read there whose range ends last (of those, the first defined) is spilled: a Spill
// right after its definition stores it to a new stack slot, and a Reload right before each
// consumer brings it back in a fresh, short-lived value. Repeats until every position fits.
// Loop counters and reduction accumulators (updated in place) are not spilled.
// @post LinearIR::spill_slots holds the number of stack slots; live ranges are current.
#pragma once

#include <algorithm>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "snippets/passes/init_live_ranges.hpp"
#include "snippets/passes/properties.hpp"

namespace snippets::passes {

struct InsertRegSpills {
  using pass_tag = lir_pass_tag;
  static constexpr std::string_view name = "InsertRegSpills";
  using needs = Properties<property::LiveRangesKnown>;
  using before = Properties<property::RegistersAssigned>;

  template <class T> void run(ir::LinearIR<T>& lir, PassContext<T>& ctx) const {
    const std::size_t available = static_cast<std::size_t>(ctx.config.vector_registers -
                                                           ctx.config.reserved_vector_registers);
    for (;;) {
      InitLiveRanges{}.run(lir, ctx);
      ir::PortConnector<T>* victim = first_victim(lir, ctx.analyses.live_ranges, available);
      if (!victim) return;
      spill(lir, *victim, lir.spill_slots++);
    }
  }

private:
  /// One sweep over the expressions with the values live across each, latest end first: the
  /// value to spill at the first expression where they do not fit (of those ending last, the
  /// one defined first), or nullptr when they fit everywhere. A sweep, not a scan of every
  /// range at every expression, which made each round cost n^2 in a kernel of n ops.
  template <class T>
  static ir::PortConnector<T>*
  first_victim(ir::LinearIR<T>& lir, const std::map<const ir::PortConnector<T>*, LiveRange>& ranges,
               std::size_t available) {
    struct Live {
      std::size_t end, def;
      const ir::PortConnector<T>* value;
    };
    std::vector<std::pair<LiveRange, const ir::PortConnector<T>*>> by_def;
    for (const auto& [conn, r] : ranges)
      if (!std::holds_alternative<ir::LoopBegin>(conn->source_expr().op))
        by_def.push_back({r, conn});
    std::sort(by_def.begin(), by_def.end(),
              [](const auto& a, const auto& b) { return a.first.def < b.first.def; });
    auto later = [](const Live& a, const Live& b) {
      return a.end != b.end ? a.end > b.end : a.def < b.def;
    };
    std::set<Live, decltype(later)> live(later); // across the current expression
    std::size_t next = 0;
    for (auto& e : lir) {
      const std::size_t p = e->order;
      for (; next < by_def.size() && by_def[next].first.def < p; ++next)
        if (by_def[next].first.end > p)
          live.insert({by_def[next].first.end, by_def[next].first.def, by_def[next].second});
      while (!live.empty() && std::prev(live.end())->end <= p) live.erase(std::prev(live.end()));
      if (!defines_vector(*e) || live.size() + 1 <= available) continue; // + the value it defines
      for (const Live& l : live) {
        bool read_here = false;
        for (std::size_t i = 0; i < e->num_inputs(); ++i)
          read_here |= e->input(i).connector() == l.value;
        if (!read_here && !std::holds_alternative<ir::ReduceInit>(l.value->source_expr().op))
          return &l.value->source_expr().output(0);
      }
      raise("snippets.compile.register_pressure",
            "'" + e->name +
                "' reads more vector values at once than the target has registers; "
                "split the subgraph");
    }
    return nullptr;
  }

  template <class T>
  static void spill(ir::LinearIR<T>& lir, ir::PortConnector<T>& value, std::size_t slot) {
    ir::Expression<T>& def = value.source_expr();
    std::vector<ir::Operand<T>*> uses;
    for (auto& u : value.consumers()) uses.push_back(&u);
    lir.insert_node(std::next(lir.find(def)), ir::Spill{slot}, {&value}, 0, def.loop_ids, def.name);
    for (ir::Operand<T>* u : uses) {
      ir::Expression<T>& user = u->owner();
      auto& reload =
          lir.insert_node(lir.find(user), ir::Reload{slot}, {}, 1, user.loop_ids, def.name);
      reload.out_desc(0).shape = value.source().descriptor().shape;
      u->set(&reload.output(0));
    }
  }
};

} // namespace snippets::passes
