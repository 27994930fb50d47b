// SPDX-License-Identifier: Apache-2.0
// snippets/passes/insert_buffers.hpp: InsertBuffers keeps full rows between the innermost
// loops of a row-by-row body (MarkLoops with reductions).
//
// A value computed in one innermost loop and read in a later one (Exp(x - max) of a Softmax,
// read again after the sum) cannot stay in a register: it goes through a Buffer of one row,
// placed after the producing loop. InsertLoadStore then stores it there in the producing loop
// and loads it in each reading loop. Buffers are per-thread scratch memory (one row each, in
// f32); AllocateBuffers places them. Each gets its own data pointer index for now, after the
// kernel arguments.
#pragma once

#include "snippets/passes/lir_queries.hpp"
#include "snippets/passes/pass.hpp"
#include "snippets/passes/properties.hpp"

namespace snippets::passes {

struct InsertBuffers {
  using pass_tag = lir_pass_tag;
  static constexpr std::string_view name = "InsertBuffers";
  using needs = Properties<property::LoopsMarked>;
  using before = Properties<property::LoadsStoresInserted>;
  using establishes = Properties<property::BuffersInserted>;

  template <class T> void run(ir::LinearIR<T>& lir, PassContext<T>&) const {
    const std::size_t rank = lir.domain.size();
    auto row_loop = [&](const ir::Expression<T>& e) -> std::int64_t {
      return e.loop_ids.size() == rank ? static_cast<std::int64_t>(e.loop_ids.back()) : -1;
    };
    std::vector<ir::Expression<T>*> values;
    for (auto& e : lir)
      if (defines_vector(*e) && row_loop(*e) >= 0) values.push_back(e.get());
    std::size_t count = 0;
    for (ir::Expression<T>* e : values) {
      const std::int64_t loop = row_loop(*e);
      std::vector<ir::Operand<T>*> later;
      for (auto& use : e->output(0).consumers())
        if (is_loop_body(use.owner()) && row_loop(use.owner()) != loop) later.push_back(&use);
      if (later.empty()) continue;
      ir::Expression<T>* last = e;
      for (auto& x : lir)
        if (row_loop(*x) == loop) last = x.get();
      const std::vector<std::size_t> outer(e->loop_ids.begin(),
                                           e->loop_ids.end() - std::ptrdiff_t(lir.row_dims));
      std::vector<Dim> row(rank, 1);
      Dim elements = 1;
      for (std::size_t d = rank - lir.row_dims; d < rank; ++d) elements *= row[d] = lir.domain[d];
      auto& buffer = lir.insert_node(std::next(lir.find(*last)), ir::Buffer{elements},
                                     {&e->output(0)}, 1, outer, e->name);
      buffer.out_desc(0).shape = row;
      buffer.data_index = lir.num_inputs + lir.num_outputs + count++;
      for (ir::Operand<T>* u : later) {
        u->set(&buffer.output(0));
        u->owner().in_desc(u->index()).shape = row;
      }
    }
  }
};

} // namespace snippets::passes
