// snippets/passes/insert_load_store.hpp: InsertLoadStore makes memory access explicit.
//
// For each Parameter, one Load sits right before its first consumer, in that consumer's
// loops, and all loop-body consumers read the Load instead. A Parameter broadcast along the
// innermost domain dimension gets a one-element Load (InsertBroadcastMove and
// LoadMoveBroadcastToBroadcastLoad turn it into a BroadcastLoad). For each Result, a Store
// sits right after the producer of its value, in the producer's loops; a value that reaches
// a Result without any computation (the input itself) gets a Load first.
// Memory-access expressions carry the kernel argument index in `data_index`. A Parameter read
// with a stride along the innermost domain dimension (its PortDescriptor::layout) gets a Load
// with that `stride`, which the emitter turns into a gather.
#pragma once

#include "snippets/passes/lir_queries.hpp"
#include "snippets/passes/mark_loops.hpp"
#include "snippets/passes/pass.hpp"

namespace snippets::passes {

struct InsertLoadStore {
  using pass_tag = lir_pass_tag;
  static constexpr std::string_view name = "InsertLoadStore";

  template <class T> Preserved run(ir::LinearIR<T>& lir, PassContext<T>& ctx) const {
    const auto lanes = static_cast<std::int64_t>(ctx.config.lanes);
    std::vector<ir::Expression<T>*> params, results;
    for (auto& e : lir) {
      if (std::holds_alternative<ir::Parameter>(e->op)) params.push_back(e.get());
      if (std::holds_alternative<ir::Result>(e->op)) results.push_back(e.get());
    }
    for (auto* p : params) {
      auto& out = p->output(0);
      if (out.consumers().empty()) continue;
      lir.renumber();
      ir::Expression<T>* first = nullptr;
      for (auto& use : out.consumers())
        if (!first || use.owner().order < first->order) first = &use.owner();
      if (first->loop_ids.empty()) first->loop_ids = MarkLoops::make_nest(lir, ctx.config);
      const bool inner_broadcast = p->out_desc(0).shape.back() == 1 && lir.domain.back() != 1;
      const std::int64_t stride = stride_along(p->out_desc(0), lir.domain.size() - 1);
      ir::PortConnector<T>* src = &out;
      auto& load = lir.insert_node(
          lir.find(*first),
          ir::Load{inner_broadcast ? 1 : lanes, 0, std::max<std::int64_t>(stride, 1)}, {src}, 1,
          first->loop_ids, p->name);
      load.data_index = p->data_index;
      load.in_desc(0).layout = p->out_desc(0).layout;
      load.out_desc(0).shape = p->out_desc(0).shape;
      std::vector<ir::Operand<T>*> uses;
      for (auto& use : out.consumers())
        if (&use.owner() != &load) uses.push_back(&use);
      for (auto* u : uses) u->set(&load.output(0));
    }
    for (auto* r : results) {
      auto& producer = r->input_expr(0);
      if (producer.loop_ids.empty())
        raise("snippets.compile.constant_output",
              "output '" + r->name +
                  "' does not depend on any input; compute constants outside "
                  "the subgraph");
      auto& store = lir.insert_node(std::next(lir.find(producer)), ir::Store{lanes},
                                    {&r->input_connector(0)}, 1, producer.loop_ids, r->name);
      store.data_index = r->data_index;
      store.out_desc(0) = {r->in_desc(0).shape, r->in_desc(0).layout, {}};
      SNIPPETS_ASSERT(stride_along(store.out_desc(0), lir.domain.size() - 1) <= 1)
          << "output '" << r->name << "' is written with a strided innermost dimension";
      r->input(0).set(&store.output(0));
    }
    return Preserved::none;
  }
};

} // namespace snippets::passes
