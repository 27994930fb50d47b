// SPDX-License-Identifier: Apache-2.0
// snippets/passes/load_move_broadcast_to_broadcast_load.hpp: LoadMoveBroadcastToBroadcastLoad
// fuses a one-element Load followed by BroadcastMove into one BroadcastLoad (a single
// vbroadcastss from memory). All BroadcastMoves of the same Load share the new expression.
#pragma once

#include "snippets/passes/lir_queries.hpp"
#include "snippets/passes/pass.hpp"
#include "snippets/passes/properties.hpp"

namespace snippets::passes {

struct LoadMoveBroadcastToBroadcastLoad {
  using pass_tag = lir_pass_tag;
  static constexpr std::string_view name = "LoadMoveBroadcastToBroadcastLoad";
  using needs = Properties<property::BroadcastsExplicit>;
  using invalidates = Properties<property::LoopPortsInitialized>;

  template <class T> void run(ir::LinearIR<T>& lir, PassContext<T>&) const {
    std::vector<ir::Expression<T>*> loads;
    for (auto& e : lir) {
      const auto* l = std::get_if<ir::Load>(&e->op);
      if (!l || l->count != 1 || e->output(0).consumers().empty()) continue;
      bool only_moves = true;
      for (auto& use : e->output(0).consumers())
        only_moves &= std::holds_alternative<ir::BroadcastMove>(use.owner().op);
      if (only_moves) loads.push_back(e.get());
    }
    for (auto* load : loads) {
      std::vector<ir::Expression<T>*> moves;
      for (auto& use : load->output(0).consumers()) moves.push_back(&use.owner());
      auto& bl = lir.insert_node(
          lir.find(*load),
          ir::BroadcastLoad{std::get<ir::Load>(load->op).offset, std::get<ir::Load>(load->op).type},
          {&load->input_connector(0)}, 1, load->loop_ids, load->name);
      bl.data_index = load->data_index;
      bl.in_desc(0).layout = load->in_desc(0).layout; // a strided or tiled input's memory order
      bl.in_desc(0).memory = load->in_desc(0).memory; // a part of a larger input (a folded Slice)
      bl.in_desc(0).offset = load->in_desc(0).offset;
      bl.out_desc(0).shape = moves.front()->out_desc(0).shape;
      for (auto* m : moves) {
        m->output(0).replace_all_uses_with(&bl.output(0));
        lir.erase(*m);
      }
      lir.erase(*load);
    }
  }
};

} // namespace snippets::passes
