// snippets/passes/insert_reg_spills.hpp: InsertRegSpills keeps the number of simultaneously
// live vector values within the register file by spilling some to the stack.
//
// Walking the live ranges (InitLiveRanges), at the first expression where the values live
// across it plus its own result exceed the registers left after emitter scratch, the value
// not read there whose range ends last is spilled: a Spill right after its definition stores
// it to a new stack slot, and a Reload right before each consumer brings it back in a fresh,
// short-lived value. Repeats until every position fits. Loop counters and reduction
// accumulators (updated in place) are not spilled.
// @post LinearIR::spill_slots holds the number of stack slots; live ranges are current.
#pragma once

#include "snippets/passes/init_live_ranges.hpp"

namespace snippets::passes {

struct InsertRegSpills {
  using pass_tag = lir_pass_tag;
  static constexpr std::string_view name = "InsertRegSpills";

  template <class T> Preserved run(ir::LinearIR<T>& lir, PassContext<T>& ctx) const {
    const std::size_t available = static_cast<std::size_t>(ctx.config.vector_registers -
                                                           ctx.config.reserved_vector_registers);
    for (;;) {
      InitLiveRanges{}.run(lir, ctx);
      ir::PortConnector<T>* victim = nullptr;
      for (auto& e : lir) {
        if (!defines_vector(*e)) continue;
        const std::size_t p = e->order;
        std::size_t live = 1; // the value defined here
        std::size_t victim_end = 0;
        for (auto& [conn, r] : ctx.analyses.live_ranges) {
          if (r.def >= p || r.end <= p ||
              std::holds_alternative<ir::LoopBegin>(conn->source_expr().op))
            continue;
          ++live;
          bool read_here = false;
          for (std::size_t i = 0; i < e->num_inputs(); ++i)
            read_here |= e->input(i).connector() == conn;
          const bool accumulator = std::holds_alternative<ir::ReduceInit>(conn->source_expr().op);
          if (!read_here && !accumulator && r.end > victim_end) {
            victim_end = r.end;
            victim = &conn->source_expr().output(0);
          }
        }
        if (live <= available) {
          victim = nullptr;
          continue;
        }
        if (!victim)
          raise("snippets.compile.register_pressure",
                "'" + e->name +
                    "' reads more vector values at once than the target has registers; "
                    "split the subgraph");
        break;
      }
      if (!victim) return Preserved::none;
      spill(lir, *victim, lir.spill_slots++);
    }
  }

private:
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
