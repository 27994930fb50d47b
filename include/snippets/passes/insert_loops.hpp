// SPDX-License-Identifier: Apache-2.0
// snippets/passes/insert_loops.hpp: InsertLoops makes loops explicit with LoopBegin/LoopEnd.
//
// For each loop, outermost first, a LoopBegin goes before its first expression and a
// LoopEnd after its last. LoopBegin defines the loop's counter (a general-purpose register);
// LoopEnd consumes it, so the counter lives exactly as long as the loop.
// @pre expressions of one loop are contiguous (MarkLoops/FuseLoops guarantee it).
#pragma once

#include "snippets/passes/pass.hpp"
#include "snippets/passes/properties.hpp"

namespace snippets::passes {

struct InsertLoops {
  using pass_tag = lir_pass_tag;
  static constexpr std::string_view name = "InsertLoops";
  using needs = Properties<property::LoopsMarked, property::LoopPortsInitialized>;
  using before = Properties<property::LoopsInserted>;
  using establishes = Properties<property::LoopsInserted>;

  template <class T> void run(ir::LinearIR<T>& lir, PassContext<T>&) const {
    // loops ordered by nesting depth so outer bounds are placed first
    std::vector<std::pair<std::size_t, std::size_t>> by_depth; // (depth, id)
    std::vector<bool> used(lir.loops().size(), false);
    for (auto& e : lir)
      for (std::size_t d = 0; d < e->loop_ids.size(); ++d)
        if (!used[e->loop_ids[d]]) {
          used[e->loop_ids[d]] = true;
          by_depth.push_back({d, e->loop_ids[d]});
        }
    std::stable_sort(by_depth.begin(), by_depth.end());
    for (auto [depth, id] : by_depth) {
      ir::Expression<T>* first = nullptr;
      ir::Expression<T>* last = nullptr;
      std::vector<std::size_t> outer;
      for (auto& e : lir) {
        const auto& ids = e->loop_ids;
        if (ids.size() > depth && ids[depth] == id) {
          if (!first)
            first = e.get(), outer.assign(ids.begin(), ids.begin() + std::ptrdiff_t(depth));
          last = e.get();
        }
      }
      auto& begin = lir.insert_node(lir.find(*first), ir::LoopBegin{id}, {}, 1, outer);
      auto& end = lir.insert_node(std::next(lir.find(*last)), ir::LoopEnd{id}, {&begin.output(0)},
                                  0, outer);
      (void)end;
    }
  }
};

} // namespace snippets::passes
