// SPDX-License-Identifier: Apache-2.0
// snippets/debug/insert_perf_counters.hpp: InsertPerfCounters, the pass that chooses what the
// cycle counters time (CompileOptions::debug.counters = cycles, SNIPPETS_PERF_COUNTERS=cycles).
//
// It records counter regions in PassContext::analyses.counter_regions: region 0 is the whole
// kernel body, then one region per loop, from its LoopBegin to its LoopEnd, in LIR order
// (so a loop's region comes after its enclosing loop's and `parent` names that one). The kernel
// emitter reads the regions and brackets each one with RDTSC reads; the IR itself is unchanged.
// Run it last: a later pass that erases or copies expressions would leave regions behind
// (compile() runs it after the lowering pipeline).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "snippets/debug/options.hpp"
#include "snippets/passes/pass.hpp"

namespace snippets::debug {

/// "loop #1 dim 1 work 16 inc 16 once": how dumps and counter reports name a loop.
inline std::string loop_label(std::size_t id, const ir::LoopInfo& l) {
  std::string s = detail::cat("loop #", std::to_string(id));
  s.append(" dim ").append(std::to_string(l.dim)).append(" work ");
  s.append(l.runtime_work_amount ? std::string("runtime") : std::to_string(l.work_amount));
  s.append(" inc ").append(std::to_string(l.increment));
  if (l.is_tail) s.append(" tail");
  if (l.evaluate_once) s.append(" once");
  return s;
}

struct InsertPerfCounters {
  using pass_tag = passes::lir_pass_tag;
  static constexpr std::string_view name = "InsertPerfCounters";

  template <class T> void run(ir::LinearIR<T>& lir, passes::PassContext<T>& ctx) const {
    auto& regions = ctx.analyses.counter_regions;
    regions.clear();
    if (lir.size() == 0) return;
    regions.push_back({"kernel", lir.begin()->get(), std::prev(lir.end())->get(), -1});
    std::vector<int> open{0};
    for (auto& e : lir) {
      if (const auto* b = std::get_if<ir::LoopBegin>(&e->op)) {
        regions.push_back(
            {loop_label(b->loop_id, lir.loops().at(b->loop_id)), e.get(), nullptr, open.back()});
        open.push_back(static_cast<int>(regions.size() - 1));
      } else if (std::holds_alternative<ir::LoopEnd>(e->op)) {
        SNIPPETS_ASSERT(open.size() > 1) << "LoopEnd without LoopBegin: " << e->name;
        regions[static_cast<std::size_t>(open.back())].last = e.get();
        open.pop_back();
      }
    }
  }
};

} // namespace snippets::debug
