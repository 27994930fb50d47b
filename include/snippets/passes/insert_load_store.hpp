// SPDX-License-Identifier: Apache-2.0
// snippets/passes/insert_load_store.hpp: InsertLoadStore makes memory access explicit.
//
// Every Parameter and Buffer is read by Loads: one per loop its consumers are in, right before
// the first of them, in that loop, and those consumers read the Load instead. A Parameter
// broadcast along the innermost domain dimension, or read between innermost loops (one value
// per row), gets a one-element Load (InsertBroadcastMove and LoadMoveBroadcastToBroadcastLoad
// turn the first kind into a BroadcastLoad); with LinearIR::columns a per-row value is one
// vector of the row's columns (lir.domain's last extent). Every Result and Buffer is written by
// a Store right after the producer of its value, in the producer's loops (one element, or one
// vector of columns, for a per-row value), or, when Loads follow the producer in that loop, right
// after the last of them: a load that comes after a store to the same address modulo 4 KiB waits
// for the store (4K aliasing), and tensors allocated on their own pages usually share their page
// offset. Behind a non-temporal store the wait is long: y1 = a + b, y2 = y1 * c on 64 MiB
// tensors took 18.1 ms with c loaded after y1's store and 9.7 with it before (Zen 3). A value
// that reaches a Result without any computation (the input itself) gets a Load first.
// Memory-access expressions carry the kernel argument (or buffer) index in `data_index` and
// its element type in memory (LinearIR::arg_types; Buffers hold f32) as their `type`.
// A Parameter read with a stride along the innermost domain dimension (its
// PortDescriptor::layout) gets a Load with that `stride`, which the emitter turns into a gather.
// A Parameter that is a part of its kernel argument (a folded Slice: PortDescriptor::memory and
// ::offset) gets Loads that start at the part's offset and keep its memory extents.
#pragma once

#include <map>

#include "snippets/passes/lir_queries.hpp"
#include "snippets/passes/mark_loops.hpp"
#include "snippets/passes/pass.hpp"
#include "snippets/passes/properties.hpp"

namespace snippets::passes {

struct InsertLoadStore {
  using pass_tag = lir_pass_tag;
  static constexpr std::string_view name = "InsertLoadStore";
  using needs = Properties<property::LoopsMarked, property::BuffersInserted>;
  using before = Properties<property::LoadsStoresInserted>;
  using establishes = Properties<property::LoadsStoresInserted>;

  template <class T> void run(ir::LinearIR<T>& lir, PassContext<T>& ctx) const {
    const auto lanes = static_cast<std::int64_t>(ctx.config.lanes);
    const std::size_t rank = lir.domain.size();
    // what a value outside the row's loops holds: one element, or one vector of columns
    const std::int64_t per_row = lir.columns ? lir.domain.back() : 1;
    std::vector<ir::Expression<T>*> sources, sinks;
    for (auto& e : lir) {
      if (std::holds_alternative<ir::Parameter>(e->op) || std::holds_alternative<ir::Buffer>(e->op))
        sources.push_back(e.get());
      if (std::holds_alternative<ir::Result>(e->op) || std::holds_alternative<ir::Buffer>(e->op))
        sinks.push_back(e.get());
    }
    for (auto* p : sources) {
      auto& out = p->output(0);
      lir.renumber();
      // loop body consumers by loop; a Result reads the Load of the earliest one
      std::map<std::vector<std::size_t>, std::vector<ir::Operand<T>*>> by_loop;
      std::vector<ir::Operand<T>*> results;
      ir::Expression<T>* earliest = nullptr;
      for (auto& use : out.consumers()) {
        if (!is_loop_body(use.owner())) {
          results.push_back(&use);
          continue;
        }
        by_loop[use.owner().loop_ids].push_back(&use);
        if (!earliest || use.owner().order < earliest->order) earliest = &use.owner();
      }
      auto& with_results = by_loop[earliest ? earliest->loop_ids : std::vector<std::size_t>{}];
      with_results.insert(with_results.end(), results.begin(), results.end());
      const std::int64_t stride = stride_along(p->out_desc(0), rank - 1);
      for (auto& [ids, uses] : by_loop) {
        if (uses.empty()) continue;
        ir::Expression<T>* first = nullptr;
        for (auto* u : uses)
          if (!first || u->owner().order < first->order) first = &u->owner();
        if (first->loop_ids.empty()) first->loop_ids = MarkLoops::make_nest(lir, ctx.config);
        const bool broadcast = p->out_desc(0).shape.back() == 1 && lir.domain.back() != 1;
        const std::int64_t count = broadcast ? 1 : first->loop_ids.size() < rank ? per_row : lanes;
        const ir::Load tag{count, p->out_desc(0).offset, arg_type(lir, p->data_index),
                           std::max<std::int64_t>(stride, 1)};
        auto& load = lir.insert_node(lir.find(*first), tag, {&out}, 1, first->loop_ids, p->name);
        load.data_index = p->data_index;
        load.in_desc(0).layout = p->out_desc(0).layout;
        load.in_desc(0).memory = p->out_desc(0).memory;
        load.in_desc(0).offset = p->out_desc(0).offset;
        load.out_desc(0).shape = p->out_desc(0).shape;
        for (auto* u : uses) u->set(&load.output(0));
      }
    }
    for (auto* r : sinks) {
      auto& producer = r->input_expr(0);
      if (producer.loop_ids.empty())
        raise("snippets.compile.constant_output",
              "output '" + r->name +
                  "' does not depend on any input; compute constants outside "
                  "the subgraph");
      const std::int64_t count = producer.loop_ids.size() < rank ? per_row : lanes;
      // after the Loads that follow the producer in its loop (see the file comment)
      auto at = std::next(lir.find(producer));
      for (auto it = at; it != lir.end() && (*it)->loop_ids == producer.loop_ids; ++it)
        if (std::holds_alternative<ir::Load>((*it)->op) && (*it)->data_index != r->data_index)
          at = std::next(it);
      auto& store = lir.insert_node(at, ir::Store{count, 0, arg_type(lir, r->data_index)},
                                    {&r->input_connector(0)}, 1, producer.loop_ids, r->name);
      store.data_index = r->data_index;
      if (std::holds_alternative<ir::Buffer>(r->op))
        store.out_desc(0).shape = r->out_desc(0).shape;
      else
        store.out_desc(0) = {r->in_desc(0).shape, r->in_desc(0).layout, {}};
      if (stride_along(store.out_desc(0), rank - 1) > 1) // stores write whole vectors of a row
        raise("snippets.compile.strided_output",
              "output '" + r->name +
                  "' would be written with its innermost dimension strided (its layout moves "
                  "the last axis whose extent is not 1); give it a layout that keeps that axis "
                  "innermost, or transpose it outside the subgraph");
      r->input(0).set(&store.output(0));
    }
  }
};

} // namespace snippets::passes
