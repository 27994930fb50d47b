// SPDX-License-Identifier: Apache-2.0
// snippets/passes/assign_registers.hpp: AssignRegisters gives every value an abstract register
// by linear scan over the live ranges: vector values and general-purpose values (loop
// counters) from separate pools. A register is free again once the last expression reading it
// has started, so an expression may write its result over an input it is the last reader of
// (emitters are written to allow that). The register lands in the source port's descriptor
// and in every consumer's input descriptor. Loop counters beyond the general-purpose registers
// go to stack slots, outermost loops first.
// @throws [snippets.compile.register_pressure] when values outlive the pool and no spill pass
// ran first; InsertRegSpills prevents that for vector values.
#pragma once

#include <set>

#include "snippets/passes/init_live_ranges.hpp"
#include "snippets/passes/properties.hpp"

namespace snippets::passes {

struct AssignRegisters {
  using pass_tag = lir_pass_tag;
  static constexpr std::string_view name = "AssignRegisters";
  using needs = Properties<property::LiveRangesKnown>;
  using establishes = Properties<property::RegistersAssigned>;

  template <class T> void run(ir::LinearIR<T>& lir, PassContext<T>& ctx) const {
    const auto& cfg = ctx.config;
    struct Pool {
      int size;
      std::set<int> free;
      std::vector<std::pair<std::size_t, int>> active; // (end, reg)
    };
    Pool vec{cfg.vector_registers - cfg.reserved_vector_registers, {}, {}};
    Pool gpr{cfg.gp_registers, {}, {}};
    for (Pool* p : {&vec, &gpr})
      for (int i = 0; i < p->size; ++i) p->free.insert(i);
    // Nested loops need one counter per level at once; when the levels outnumber the GPRs,
    // the outermost levels (which run least often) count in stack slots.
    std::size_t levels = 0;
    for (auto& e : lir)
      if (std::holds_alternative<ir::LoopBegin>(e->op))
        levels = std::max(levels, e->loop_ids.size() + 1);
    const std::size_t in_memory =
        levels > std::size_t(gpr.size) ? levels - std::size_t(gpr.size) : 0;
    lir.counter_slots = in_memory;
    for (auto& e : lir) {
      if (e->num_outputs() == 0) continue;
      const auto it = ctx.analyses.live_ranges.find(&e->output(0));
      if (it == ctx.analyses.live_ranges.end()) continue;
      const LiveRange r = it->second;
      const bool is_gpr = std::holds_alternative<ir::LoopBegin>(e->op);
      if (is_gpr && e->loop_ids.size() < in_memory) {
        const ir::Reg slot{ir::RegKind::stack, static_cast<int>(e->loop_ids.size())};
        e->out_desc(0).reg = slot;
        for (auto& use : e->output(0).consumers()) use.owner().in_desc(use.index()).reg = slot;
        continue;
      }
      Pool& pool = is_gpr ? gpr : vec;
      std::erase_if(pool.active, [&](const auto& a) {
        if (a.first > r.def) return false;
        pool.free.insert(a.second);
        return true;
      });
      if (pool.free.empty())
        raise("snippets.compile.register_pressure",
              std::string("the kernel needs more ") + (is_gpr ? "general-purpose" : "vector") +
                  " registers than the target has (" + std::to_string(pool.size) + ") at '" +
                  e->name + "'; split the subgraph or use a target with more registers");
      const int reg = *pool.free.begin();
      pool.free.erase(pool.free.begin());
      pool.active.push_back({r.end, reg});
      const ir::Reg assigned{is_gpr ? ir::RegKind::gpr : ir::RegKind::vec, reg};
      e->out_desc(0).reg = assigned;
      for (auto& use : e->output(0).consumers()) use.owner().in_desc(use.index()).reg = assigned;
    }
  }
};

} // namespace snippets::passes
