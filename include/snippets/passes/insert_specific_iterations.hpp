// SPDX-License-Identifier: Apache-2.0
// snippets/passes/insert_specific_iterations.hpp: InsertSpecificIterations gives each
// innermost loop its specific iterations: an unrolled main body, then one straight-line
// remainder block (a few full vectors and a masked tail, no scalar loop).
//
// For work W, vector length L and unroll U (LoweringConfig::unroll, reduced so the main body
// runs at least once), the main loop steps by U*L with U copies of the body at element offsets
// 0, L, ..., (U-1)L; the remainder block holds (W mod U*L) / L full copies and, when
// W mod L != 0, one copy with Loads and Stores of W mod L elements.
// It runs after register assignment and copies the registers: the copies run one after the
// other with the same data flow, so the assignment stays valid, and the CPU renames the
// reused registers, so unrolled copies still overlap. A reduction's accumulator is the
// exception (each copy would wait for the one before): where free vector registers allow, copy j
// accumulates into its own, initialized before the loop and folded into the first after it.
// For the run-time (parallel) loop the executor hands every thread a multiple of U*L except
// the last, whose remainder is then exactly the static one; the block runs iff work is left
// (`tail_of`).
// A dynamic LIR does not know W: its innermost loop becomes the unrolled main loop, then a
// one-vector loop and a masked tail whose Loads and Stores move `runtime_count` elements; both
// continue the main loop's counter (`tail_of`) and neither moves a pointer the configurator
// does not account for (runtime/runtime_config.hpp).
#pragma once

#include <map>

#include "snippets/passes/lir_queries.hpp"
#include "snippets/passes/pass.hpp"
#include "snippets/passes/properties.hpp"

namespace snippets::passes {

struct InsertSpecificIterations {
  using pass_tag = lir_pass_tag;
  static constexpr std::string_view name = "InsertSpecificIterations";
  using needs = Properties<property::RegistersAssigned, property::LoopsInserted>;
  using before = Properties<property::TailsSpecialized>;
  using establishes = Properties<property::TailsSpecialized>;
  using invalidates = Properties<property::LiveRangesKnown>;

  template <class T> void run(ir::LinearIR<T>& lir, PassContext<T>& ctx) const {
    const std::size_t inner_dim = lir.domain.size() - 1;
    const std::size_t n_loops = lir.loops().size();
    for (std::size_t id = 0; id < n_loops; ++id) {
      ir::LoopInfo& info = lir.loops().at(id);
      if (info.dim != inner_dim || info.is_tail) continue;
      const std::int64_t w = lir.domain[inner_dim], lanes = info.increment;
      auto [begin, end] = bounds(lir, id);
      std::vector<ir::Expression<T>*> body;
      for (auto it = std::next(begin); it != end; ++it) body.push_back(it->get());
      if (lir.dynamic) {
        add_dynamic_remainder(lir, body, id, begin, end);
        unroll_main(lir, body, id, end, lanes, ctx.config.unroll, ctx.config);
        continue;
      }
      if (w < lanes && !info.runtime_work_amount) { // the whole loop is one short iteration
        for (auto* e : body) set_count(e->op, lanes, w);
        scale_increments(info, w);
        info.increment = info.work_amount = w;
        continue;
      }
      const std::int64_t unroll = std::clamp<std::int64_t>(w / lanes, 1, ctx.config.unroll);
      const std::int64_t step = unroll * lanes, full = w % step / lanes, tail = w % lanes;
      const std::int64_t rest = full * lanes + tail;
      if (rest > 0) {
        ir::LoopInfo r = info;
        scale_increments(r, rest);
        r.is_tail = r.evaluate_once = true;
        r.runtime_work_amount = false;
        r.tail_of = info.runtime_work_amount ? static_cast<std::int64_t>(id) : -1;
        r.work_amount = r.increment = rest;
        const std::size_t rid = lir.loops().add(r);
        const auto pos = std::next(end);
        auto& rb = lir.insert_node(pos, ir::LoopBegin{rid}, {}, 1, (*begin)->loop_ids);
        rb.out_desc(0) = (*begin)->out_desc(0);
        std::map<const void*, const void*> first_copy;
        for (std::int64_t j = 0; j < full; ++j)
          copy_body(lir, body, pos, id, rid, j * lanes, lanes, lanes, j ? nullptr : &first_copy);
        if (tail)
          copy_body(lir, body, pos, id, rid, full * lanes, lanes, tail,
                    full ? nullptr : &first_copy);
        lir.insert_node(pos, ir::LoopEnd{rid}, {&rb.output(0)}, 0, (*begin)->loop_ids)
            .in_desc(0)
            .reg = rb.out_desc(0).reg;
        for (auto& p : lir.loops().at(rid).ports) p.expr = first_copy.at(p.expr);
        ir::LoopInfo& main = lir.loops().at(id);
        for (auto& p : main.ports) p.finalization_offset = 0; // the remainder continues from there
        if (!main.runtime_work_amount) main.work_amount = w - rest;
      }
      unroll_main(lir, body, id, end, lanes, unroll, ctx.config);
    }
  }

private:
  /// U-1 more copies of the body in loop `id`, which then steps by U vectors. A reduction's
  /// copies accumulate into accumulators of their own where free vector registers allow, added
  /// into the first after the loop (before the remainder): U independent chains instead of one.
  template <class T>
  static void unroll_main(ir::LinearIR<T>& lir, const std::vector<ir::Expression<T>*>& body,
                          std::size_t id, typename ir::LinearIR<T>::iterator end,
                          std::int64_t lanes, std::int64_t unroll, const LoweringConfig& cfg) {
    std::vector<std::vector<ir::Expression<T>*>> copies;
    for (std::int64_t j = 1; j < unroll; ++j)
      copies.push_back(copy_body(lir, body, end, id, id, j * lanes, lanes, lanes, nullptr));
    split_accumulators(lir, body, copies, id, end, lanes, cfg);
    ir::LoopInfo& main = lir.loops().at(id);
    scale_increments(main, unroll * lanes);
    main.increment = unroll * lanes;
  }

  /// Gives copy j of each ReduceAccumulate of `body` an accumulator of its own (a register no
  /// expression of the kernel uses, below the emitters' reserved ones), filled by a ReduceInit
  /// before loop `id` and folded into the first accumulator right after it. Nothing when there
  /// are not enough free registers for all of them.
  template <class T>
  static void split_accumulators(ir::LinearIR<T>& lir, const std::vector<ir::Expression<T>*>& body,
                                 const std::vector<std::vector<ir::Expression<T>*>>& copies,
                                 std::size_t id, typename ir::LinearIR<T>::iterator end,
                                 std::int64_t lanes, const LoweringConfig& cfg) {
    std::vector<std::size_t> accumulations; // positions in `body`
    for (std::size_t i = 0; i < body.size(); ++i)
      if (std::holds_alternative<ir::ReduceAccumulate>(body[i]->op)) accumulations.push_back(i);
    if (accumulations.empty() || copies.empty()) return;
    std::vector<bool> used(std::size_t(std::max(cfg.vector_registers, 0)), false);
    auto mark = [&](const ir::PortDescriptor& d) {
      if (d.reg.kind == ir::RegKind::vec && d.reg.index >= 0 &&
          std::size_t(d.reg.index) < used.size())
        used[std::size_t(d.reg.index)] = true;
    };
    for (auto& e : lir) {
      for (std::size_t i = 0; i < e->num_inputs(); ++i) mark(e->in_desc(i));
      for (std::size_t i = 0; i < e->num_outputs(); ++i) mark(e->out_desc(i));
    }
    std::vector<int> free;
    for (int r = 0; r < cfg.vector_registers - cfg.reserved_vector_registers; ++r)
      if (!used[std::size_t(r)]) free.push_back(r);
    if (free.size() < accumulations.size() * copies.size()) return;
    const auto begin = bounds(lir, id).first;
    const std::vector<std::size_t> outer = (*begin)->loop_ids;
    const auto after = std::next(end);
    std::size_t next = 0;
    for (std::size_t i : accumulations) {
      ir::Expression<T>& first = *body[i];
      const ir::ReduceKind kind = std::get<ir::ReduceAccumulate>(first.op).kind;
      for (const auto& copy : copies) {
        const ir::Reg reg{ir::RegKind::vec, free[next++]};
        auto& init = lir.insert_node(begin, ir::ReduceInit{kind}, {}, 1, outer, first.name);
        init.out_desc(0) = first.in_desc(0);
        init.out_desc(0).reg = reg;
        ir::Expression<T>& mine = *copy[i];
        mine.input(0).set(&init.output(0));
        mine.in_desc(0).reg = reg;
        auto& fold =
            lir.insert_node(after, ir::ReduceAccumulate{kind, lanes},
                            {&first.input_connector(0), &init.output(0)}, 0, outer, first.name);
        fold.in_desc(0) = first.in_desc(0);
        fold.in_desc(1) = init.out_desc(0);
      }
    }
  }

  /// After dynamic loop `id`: a loop of one vector per iteration, then a masked tail of the
  /// remaining count, both on `id`'s counter.
  template <class T>
  static void add_dynamic_remainder(ir::LinearIR<T>& lir,
                                    const std::vector<ir::Expression<T>*>& body, std::size_t id,
                                    typename ir::LinearIR<T>::iterator begin,
                                    typename ir::LinearIR<T>::iterator end) {
    const std::int64_t lanes = lir.loops().at(id).increment;
    const auto pos = std::next(end);
    for (const bool masked : {false, true}) {
      ir::LoopInfo r = lir.loops().at(id);
      r.is_tail = true;
      r.evaluate_once = masked;
      r.runtime_work_amount = false;
      r.tail_of = static_cast<std::int64_t>(id);
      if (masked)
        for (auto& p : r.ports) p.ptr_increment = 0; // the last block: pointers stay
      const std::size_t rid = lir.loops().add(r);
      auto& rb = lir.insert_node(pos, ir::LoopBegin{rid}, {}, 1, (*begin)->loop_ids);
      rb.out_desc(0) = (*begin)->out_desc(0);
      std::map<const void*, const void*> copies;
      copy_body(lir, body, pos, id, rid, 0, lanes, masked ? ir::runtime_count : lanes, &copies);
      lir.insert_node(pos, ir::LoopEnd{rid}, {&rb.output(0)}, 0, (*begin)->loop_ids)
          .in_desc(0)
          .reg = rb.out_desc(0).reg;
      for (auto& p : lir.loops().at(rid).ports) p.expr = copies.at(p.expr);
    }
  }

  template <class T> static auto bounds(ir::LinearIR<T>& lir, std::size_t id) {
    typename ir::LinearIR<T>::iterator b = lir.end(), e = lir.end();
    for (auto it = lir.begin(); it != lir.end(); ++it) {
      if (const auto* lb = std::get_if<ir::LoopBegin>(&(*it)->op); lb && lb->loop_id == id) b = it;
      if (const auto* le = std::get_if<ir::LoopEnd>(&(*it)->op); le && le->loop_id == id) e = it;
    }
    SNIPPETS_ASSERT(b != lir.end() && e != lir.end()) << "loop " << id << " has no bounds";
    return std::pair(b, e);
  }

  template <class Op> static void set_count(Op& op, std::int64_t full, std::int64_t count) {
    if (auto* l = std::get_if<ir::Load>(&op); l && l->count == full) l->count = count;
    if (auto* s = std::get_if<ir::Store>(&op); s && s->count == full) s->count = count;
    if (auto* a = std::get_if<ir::ReduceAccumulate>(&op); a && a->count == full) a->count = count;
  }

  /// Per-iteration pointer increments for a new number of elements per iteration.
  static void scale_increments(ir::LoopInfo& info, std::int64_t per_iteration) {
    for (auto& p : info.ports) p.ptr_increment = p.ptr_increment / info.increment * per_iteration;
  }

  /// Copies `body` before `pos` as loop `to` (in place of `from`), with memory offsets
  /// advanced by `offset` elements of the loop's dimension and full accesses of `lanes`
  /// elements narrowed to `count`. Registers are copied. Returns the copies, in `body`'s order.
  template <class T>
  static std::vector<ir::Expression<T>*>
  copy_body(ir::LinearIR<T>& lir, const std::vector<ir::Expression<T>*>& body,
            typename ir::LinearIR<T>::iterator pos, std::size_t from, std::size_t to,
            std::int64_t offset, std::int64_t lanes, std::int64_t count,
            std::map<const void*, const void*>* expr_map) {
    const std::size_t dim = lir.loops().at(from).dim;
    const auto copies = ir::copy_expressions(
        lir, std::span<ir::Expression<T>* const>(body), pos, from, to,
        [&](const ir::Expression<T>& src, ir::LirOp<T>& op) {
          std::int64_t shift = 0;
          if (is_memory_access(src)) {
            const bool store = std::holds_alternative<ir::Store>(op);
            shift = offset * stride_along(store ? src.out_desc(0) : src.in_desc(0), dim);
          }
          std::visit(
              [&](auto& tag) {
                using Tag = std::decay_t<decltype(tag)>;
                if constexpr (requires { tag.offset; }) tag.offset += shift;
                if constexpr (std::is_same_v<Tag, ir::LoopBegin> ||
                              std::is_same_v<Tag, ir::LoopEnd>)
                  if (tag.loop_id == from) tag.loop_id = to;
              },
              op);
          set_count(op, lanes, count);
        });
    if (expr_map)
      for (std::size_t i = 0; i < body.size(); ++i) (*expr_map)[body[i]] = copies[i];
    return copies;
  }
};

} // namespace snippets::passes
