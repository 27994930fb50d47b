// snippets/passes/insert_specific_iterations.hpp: InsertSpecificIterations splits an
// innermost loop whose work amount is not a multiple of its increment into the main vector
// body and one masked tail iteration (no scalar loop).
//
// The tail is a copy of the body placed right after the loop, with Loads and Stores of
// `work % increment` elements. It runs after register assignment and copies the registers:
// the tail runs after the body with the same data flow, so the assignment stays valid.
// A loop shorter than one vector becomes its own tail. For the run-time (parallel) loop the
// executor hands every thread a multiple of the increment except the last, whose remainder
// is exactly the static tail; the tail then runs iff the main loop left work (`tail_of`).
#pragma once

#include <map>

#include "snippets/passes/lir_queries.hpp"
#include "snippets/passes/pass.hpp"

namespace snippets::passes {

struct InsertSpecificIterations {
  using pass_tag = lir_pass_tag;
  static constexpr std::string_view name = "InsertSpecificIterations";

  template <class T> Preserved run(ir::LinearIR<T>& lir, PassContext<T>&) const {
    const std::size_t inner_dim = lir.domain.size() - 1;
    const std::size_t n_loops = lir.loops().size();
    for (std::size_t id = 0; id < n_loops; ++id) {
      ir::LoopInfo& info = lir.loops().at(id);
      if (info.dim != inner_dim || info.is_tail) continue;
      const std::int64_t w = lir.domain[inner_dim], inc = info.increment, tail = w % inc;
      if (tail == 0) continue;
      auto [begin, end] = bounds(lir, id);
      if (w < inc && !info.runtime_work_amount) { // the whole loop is one short iteration
        set_counts(begin, std::next(end), inc, tail);
        rescale(info, tail);
        info.increment = info.work_amount = tail;
        continue;
      }
      const std::size_t tail_id = clone_as_tail(lir, id, begin, end, tail);
      ir::LoopInfo& main = lir.loops().at(id);
      if (main.runtime_work_amount) lir.loops().at(tail_id).tail_of = static_cast<std::int64_t>(id);
      else main.work_amount = w - tail;
      for (auto& p : main.ports) p.finalization_offset = 0; // the tail continues from there
    }
    return Preserved::none;
  }

private:
  template <class T> static auto bounds(ir::LinearIR<T>& lir, std::size_t id) {
    typename ir::LinearIR<T>::iterator b = lir.end(), e = lir.end();
    for (auto it = lir.begin(); it != lir.end(); ++it) {
      if (const auto* lb = std::get_if<ir::LoopBegin>(&(*it)->op); lb && lb->loop_id == id) b = it;
      if (const auto* le = std::get_if<ir::LoopEnd>(&(*it)->op); le && le->loop_id == id) e = it;
    }
    SNIPPETS_ASSERT(b != lir.end() && e != lir.end()) << "loop " << id << " has no bounds";
    return std::pair(b, e);
  }

  template <class It> static void set_counts(It first, It last, std::int64_t full, std::int64_t count) {
    for (auto it = first; it != last; ++it) {
      if (auto* l = std::get_if<ir::Load>(&(*it)->op); l && l->count == full) l->count = count;
      if (auto* s = std::get_if<ir::Store>(&(*it)->op); s && s->count == full) s->count = count;
    }
  }

  static void rescale(ir::LoopInfo& info, std::int64_t count) {
    for (auto& p : info.ports) p.ptr_increment = p.ptr_increment / info.increment * count;
  }

  template <class T>
  static std::size_t clone_as_tail(ir::LinearIR<T>& lir, std::size_t id,
                                   typename ir::LinearIR<T>::iterator begin,
                                   typename ir::LinearIR<T>::iterator end, std::int64_t tail) {
    ir::LoopInfo info = lir.loops().at(id);
    const std::int64_t inc = info.increment;
    ir::LoopInfo tinfo = info;
    rescale(tinfo, tail);
    tinfo.is_tail = true;
    tinfo.evaluate_once = true;
    tinfo.runtime_work_amount = false;
    tinfo.work_amount = tinfo.increment = tail;
    const std::size_t tail_id = lir.loops().add(tinfo);
    std::map<const ir::PortConnector<T>*, ir::PortConnector<T>*> remap;
    std::map<const void*, const void*> expr_map;
    const auto pos = std::next(end);
    std::vector<ir::Expression<T>*> body;
    for (auto it = begin; it != pos; ++it) body.push_back(it->get());
    for (ir::Expression<T>* src_ptr : body) {
      ir::Expression<T>& src = *src_ptr;
      auto op = src.op;
      if (auto* lb = std::get_if<ir::LoopBegin>(&op)) lb->loop_id = tail_id;
      if (auto* le = std::get_if<ir::LoopEnd>(&op)) le->loop_id = tail_id;
      std::vector<ir::PortConnector<T>*> in;
      for (std::size_t i = 0; i < src.num_inputs(); ++i) {
        auto* c = &src.input_connector(i);
        in.push_back(remap.count(c) ? remap[c] : c);
      }
      auto ids = src.loop_ids;
      std::replace(ids.begin(), ids.end(), id, tail_id);
      auto& copy = lir.insert_node(pos, std::move(op), in, src.num_outputs(), ids, src.name);
      copy.data_index = src.data_index;
      for (std::size_t i = 0; i < src.num_inputs(); ++i) copy.in_desc(i) = src.in_desc(i);
      for (std::size_t i = 0; i < src.num_outputs(); ++i) {
        copy.out_desc(i) = src.out_desc(i);
        remap[&src.output(i)] = &copy.output(i);
      }
      expr_map[&src] = &copy;
    }
    set_counts(std::next(end), pos, inc, tail);
    ir::LoopInfo& t = lir.loops().at(tail_id);
    for (auto& p : t.ports) p.expr = expr_map.at(p.expr);
    return tail_id;
  }
};

} // namespace snippets::passes
