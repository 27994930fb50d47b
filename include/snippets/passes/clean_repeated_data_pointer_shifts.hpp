// SPDX-License-Identifier: Apache-2.0
// snippets/passes/clean_repeated_data_pointer_shifts.hpp: CleanRepeatedDataPointerShifts
// keeps one pointer shift per data pointer and loop. Two accesses to the same kernel argument
// in one loop (a Load and a BroadcastLoad of one input, say) share its register, so shifting
// it twice would skip data; the later ports are dropped after checking they agree.
#pragma once

#include "snippets/passes/pass.hpp"
#include "snippets/passes/properties.hpp"

namespace snippets::passes {

struct CleanRepeatedDataPointerShifts {
  using pass_tag = lir_pass_tag;
  static constexpr std::string_view name = "CleanRepeatedDataPointerShifts";
  using needs = Properties<property::LoopPortsInitialized, property::BuffersAllocated>;
  using establishes = Properties<property::PointerShiftsUnique>;

  template <class T> void run(ir::LinearIR<T>& lir, PassContext<T>&) const {
    for (std::size_t id = 0; id < lir.loops().size(); ++id) {
      auto& ports = lir.loops().at(id).ports;
      std::vector<ir::LoopPort> kept;
      for (const auto& p : ports) {
        auto same = std::find_if(kept.begin(), kept.end(), [&](const ir::LoopPort& k) {
          return k.data_index == p.data_index;
        });
        if (same == kept.end()) {
          kept.push_back(p);
          continue;
        }
        SNIPPETS_ASSERT(same->ptr_increment == p.ptr_increment &&
                        same->finalization_offset == p.finalization_offset)
            << "loop " << id << " shifts argument " << p.data_index << " in two different ways";
      }
      ports = std::move(kept);
    }
  }
};

} // namespace snippets::passes
