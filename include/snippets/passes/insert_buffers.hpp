// SPDX-License-Identifier: Apache-2.0
// snippets/passes/insert_buffers.hpp: InsertBuffers keeps full rows between the innermost
// loops of a row-by-row body (MarkLoops with reductions).
//
// A value computed in one innermost loop and read in a later one (Exp(x - max) of a Softmax,
// read again after the sum) cannot stay in a register: it goes through a Buffer of one row,
// placed after the producing loop. InsertLoadStore then stores it there in the producing loop
// and loads it in each reading loop. Buffers are per-thread scratch memory (one row each, in
// f32); AllocateBuffers places them. Each gets its own data pointer index for now, after the
// kernel arguments. In a kernel of columns an input whose lines of one row fall into few cache
// sets (lines_collide) goes through such a Buffer too, stored from its Load in the first loop.
#pragma once

#include <numeric>

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
      if ((defines_vector(*e) && row_loop(*e) >= 0) ||
          (std::holds_alternative<ir::Parameter>(e->op) && lines_collide(lir, *e)))
        values.push_back(e.get());
    std::size_t count = 0;
    for (ir::Expression<T>* e : values) {
      // a Parameter's first reader in a row loop stands for it (InsertLoadStore loads it there
      // and stores the Buffer from that Load)
      const ir::Expression<T>* first = e;
      if (std::holds_alternative<ir::Parameter>(e->op))
        for (auto& x : lir)
          if (x->loop_ids.size() == rank && reads(*x, *e)) {
            first = x.get();
            break;
          }
      const std::int64_t loop = row_loop(*first);
      std::vector<ir::Operand<T>*> later;
      for (auto& use : e->output(0).consumers())
        if (is_loop_body(use.owner()) && row_loop(use.owner()) != loop) later.push_back(&use);
      if (loop < 0 || later.empty()) continue;
      ir::Expression<T>* last = e;
      for (auto& x : lir)
        if (row_loop(*x) == loop) last = x.get();
      const std::vector<std::size_t> outer(first->loop_ids.begin(),
                                           first->loop_ids.end() - std::ptrdiff_t(lir.row_dims));
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

  /// Lines of one row of a kernel of columns that share cache sets: more than this many per
  /// set of a 64-set, 64-byte-line L1 (the rows at most 256 KiB).
  static constexpr std::int64_t lines_per_set = 8;

private:
  template <class T> static bool reads(const ir::Expression<T>& x, const ir::Expression<T>& p) {
    for (std::size_t i = 0; i < x.num_inputs(); ++i)
      if (&x.input_expr(i) == &p) return true;
    return false;
  }

  /// A Parameter of a kernel of columns (passes/tile_columns.hpp) whose lines of one row (one
  /// per reduced element, a channel stride apart) fall into few cache sets: a power-of-two
  /// stride puts 64 channels 16 KiB apart into one L1 set and a few L2 sets, so the passes after
  /// the first would read the row from L3. It goes through a Buffer of one row instead
  /// (contiguous: every set), written by the first pass as it loads it from memory.
  template <class T>
  static bool lines_collide(const ir::LinearIR<T>& lir, const ir::Expression<T>& p) {
    const std::size_t rank = lir.domain.size();
    if (!lir.columns || lir.row_dims != 2 || rank < 3) return false;
    const ir::PortDescriptor& d = p.out_desc(0);
    const std::size_t reduced = rank - 2;
    if (d.shape[reduced] == 1 || d.shape[rank - 1] == 1 || !d.memory.empty()) return false;
    const std::int64_t bytes = std::int64_t(size_of(arg_type(lir, p.data_index))),
                       stride = stride_along(d, reduced) * bytes, lines = lir.domain[reduced];
    if (stride % 64 != 0 || lines * lir.domain[rank - 1] * 4 > (std::int64_t{256} << 10))
      return false;
    const std::int64_t sets = 64 / std::gcd(stride / 64, std::int64_t{64}); // (gcd(0, 64) = 64)
    return lines > lines_per_set * sets;
  }
};

} // namespace snippets::passes
