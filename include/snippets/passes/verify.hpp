// SPDX-License-Identifier: Apache-2.0
// snippets/passes/verify.hpp: the LIR verifier run between passes when PassContext::verify.
// Checks: every input is connected to an expression earlier in the order; loop bounds nest.
#pragma once

#include <set>
#include <string>

#include "snippets/ir/linear_ir.hpp"

namespace snippets::passes {

template <class T> void verify(const ir::LinearIR<T>& lir, std::string_view after) {
  std::set<const ir::Expression<T>*> seen;
  std::vector<std::size_t> open;
  for (const auto& e : lir) {
    for (std::size_t i = 0; i < e->num_inputs(); ++i) {
      const auto* c = e->input(i).connector();
      SNIPPETS_ASSERT(c && seen.count(&c->source_expr()))
          << "after " << after << ": input " << i << " of " << e->name << " (" << e->op_name()
          << ") is not defined before it";
    }
    if (const auto* b = std::get_if<ir::LoopBegin>(&e->op)) open.push_back(b->loop_id);
    if (const auto* en = std::get_if<ir::LoopEnd>(&e->op)) {
      SNIPPETS_ASSERT(!open.empty() && open.back() == en->loop_id)
          << "after " << after << ": LoopEnd " << en->loop_id
          << " does not close the innermost loop";
      open.pop_back();
    }
    seen.insert(e.get());
  }
  SNIPPETS_ASSERT(open.empty()) << "after " << after << ": a LoopBegin has no LoopEnd";
}

} // namespace snippets::passes
