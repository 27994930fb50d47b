// SPDX-License-Identifier: Apache-2.0
// snippets/passes/insert_broadcast_move.hpp: InsertBroadcastMove fills a vector with one
// element where an expression combines a value broadcast along the innermost dimension with
// full vectors.
//
// A value whose innermost extent is 1 while its consumer's output is wider holds one useful
// lane; a BroadcastMove between them repeats it across the register. Scalars, BroadcastLoads
// and HorizonReduces already fill the whole register and need none. A Store counts as such an
// expression: a value broadcast along the row's innermost dimension that a later loop of the row
// reads goes through a Buffer of whole rows (InsertBuffers), so it is stored broadcast.
#pragma once

#include "snippets/passes/lir_queries.hpp"
#include "snippets/passes/pass.hpp"
#include "snippets/passes/properties.hpp"

namespace snippets::passes {

struct InsertBroadcastMove {
  using pass_tag = lir_pass_tag;
  static constexpr std::string_view name = "InsertBroadcastMove";
  using needs = Properties<property::LoadsStoresInserted>;
  using before = Properties<property::BroadcastsExplicit>;
  using establishes = Properties<property::BroadcastsExplicit>;

  template <class T> void run(ir::LinearIR<T>& lir, PassContext<T>&) const {
    std::vector<ir::Expression<T>*> exprs;
    for (auto& e : lir)
      if (is_loop_body(*e) && e->num_outputs() == 1 &&
          (!is_memory_access(*e) || std::holds_alternative<ir::Store>(e->op)))
        exprs.push_back(e.get());
    for (auto* e : exprs) {
      if (e->out_desc(0).shape.back() == 1) continue;
      for (std::size_t i = 0; i < e->num_inputs(); ++i) {
        auto& src = e->input_expr(i);
        if (e->in_desc(i).shape.back() != 1 || std::holds_alternative<ir::Scalar>(src.op) ||
            std::holds_alternative<ir::BroadcastLoad>(src.op) ||
            std::holds_alternative<ir::HorizonReduce>(src.op) ||
            std::holds_alternative<ir::BroadcastMove>(src.op))
          continue;
        auto& mv = lir.insert_node(lir.find(*e), ir::BroadcastMove{}, {&e->input_connector(i)}, 1,
                                   e->loop_ids, src.name);
        auto shape = e->in_desc(i).shape;
        shape.back() = e->out_desc(0).shape.back();
        mv.out_desc(0).shape = shape;
        e->input(i).set(&mv.output(0));
        e->in_desc(i).shape = shape;
      }
    }
  }
};

} // namespace snippets::passes
