// SPDX-License-Identifier: Apache-2.0
// snippets/ir/lir_printer.hpp: the text dump of a Linear IR (the seed's debug_print), used by
// golden tests, SNIPPETS_DUMP_LIR and disassembly annotations. One expression per line, in
// control-flow order, indented by loop depth; then one line per loop:
//   5:     FusedMulAdd 'Add_4' (%2 v0, %3 v1, %4 v2) -> [3,17] v0
//   loop 1: dim 1 work 17 inc 8 | arg0 +8 fin -17, ...
// `%n` is the expression at position n that defines the input (its connector's source), `vN`,
// `gN`, `sN` are vector registers, loop-counter registers and counter stack slots.
// With {.detailed = true} each line also shows the input descriptors' shapes, the loops the
// expression is in and the consumers of each output (the connector's use list), and a header
// line gives the kernel's arguments, spill slots and reserved registers:
//   7:     FusedMulAdd 'Add_4' (%6 [3,17] v2, ...) -> [3,17] v2 uses(%8) loops(0,1)
#pragma once

#include <map>
#include <ostream>
#include <sstream>
#include <string>

#include "snippets/ir/linear_ir.hpp"

namespace snippets::ir {

namespace detail {
// Streams, not string concatenation: g++ 12 reports false -Wstringop-overflow on the latter.
inline std::string reg_name(const Reg& r) {
  if (r.kind == RegKind::none) return {};
  std::ostringstream os;
  os << (r.kind == RegKind::vec ? " v" : r.kind == RegKind::gpr ? " g" : " s") << r.index;
  return os.str();
}
inline std::string dims(const std::vector<Dim>& d) {
  std::ostringstream os;
  os << '[';
  for (std::size_t i = 0; i < d.size(); ++i)
    os << (i ? "," : "") << (d[i] == dynamic ? std::string("?") : std::to_string(d[i]));
  os << ']';
  return os.str();
}
} // namespace detail

struct LirPrintOptions {
  bool detailed = false; // input shapes, loops, consumers, and a header with the frame
};

namespace detail {
/// One expression's line, without the newline; `order` of it and its inputs must be current
/// (LinearIR::renumber).
template <class T>
void print_expression(std::ostream& os, const Expression<T>& e, const LirPrintOptions& opt) {
  os << e.order << ": " << std::string(2 * e.loop_ids.size(), ' ') << e.op_name();
  std::visit(
      [&](const auto& tag) {
        using Tag = std::decay_t<decltype(tag)>;
        if constexpr (std::is_same_v<Tag, Load> || std::is_same_v<Tag, Store> ||
                      std::is_same_v<Tag, ReduceAccumulate>)
          os << " x" << (tag.count == runtime_count ? std::string("?") : std::to_string(tag.count));
        if constexpr (requires { tag.offset; })
          if (tag.offset) os << " @" << tag.offset;
        if constexpr (std::is_same_v<Tag, Load> || std::is_same_v<Tag, Store> ||
                      std::is_same_v<Tag, BroadcastLoad>)
          if (tag.type != ElementType::f32) os << ' ' << snippets::to_string(tag.type);
        if constexpr (std::is_same_v<Tag, Load>)
          if (tag.stride != 1) os << " stride " << tag.stride;
        if constexpr (std::is_same_v<Tag, Load>) {
          if (tag.prefetch == runtime_prefetch)
            os << " prefetch +row";
          else if (tag.prefetch)
            os << " prefetch +" << tag.prefetch;
        }
        if constexpr (std::is_same_v<Tag, LoopBegin> || std::is_same_v<Tag, LoopEnd>)
          os << " #" << tag.loop_id;
        if constexpr (std::is_same_v<Tag, Spill> || std::is_same_v<Tag, Reload>)
          os << " slot" << tag.slot;
        if constexpr (std::is_same_v<Tag, Scalar>) os << ' ' << tag.value;
        if constexpr (requires { tag.kind; })
          os << (tag.kind == ReduceKind::sum    ? " sum"
                 : tag.kind == ReduceKind::max  ? " max"
                 : tag.kind == ReduceKind::min  ? " min"
                 : tag.kind == ReduceKind::prod ? " prod"
                                                : " max_ignore_nan");
        if constexpr (std::is_same_v<Tag, Brgemm>)
          os << " m" << tag.m << " n" << tag.shape.n << " k" << tag.shape.k << " tile "
             << tag.shape.m_r << 'x' << tag.shape.n_r << " epilogue " << tag.epilogue
             << (tag.b_packed ? " packed" : "") << (tag.shape.pairs ? " bf16 pairs" : "");
        if constexpr (std::is_same_v<Tag, SoftmaxRows>)
          os << " rows" << tag.rows << " n" << tag.n << " stride " << tag.row_stride;
        if constexpr (std::is_same_v<Tag, Buffer>)
          os << " row" << tag.elements << " g" << tag.reg_group;
      },
      e.op);
  if (!e.name.empty()) os << " '" << e.name << "'";
  if (e.num_inputs()) {
    os << " (";
    for (std::size_t i = 0; i < e.num_inputs(); ++i) {
      os << (i ? ", " : "") << '%' << e.input_expr(i).order;
      if (opt.detailed) os << ' ' << dims(e.in_desc(i).shape);
      os << reg_name(e.in_desc(i).reg);
    }
    os << ')';
  }
  for (std::size_t i = 0; i < e.num_outputs(); ++i) {
    os << " -> " << dims(e.out_desc(i).shape) << reg_name(e.out_desc(i).reg);
    if (opt.detailed && !e.output(i).consumers().empty()) {
      os << " uses(";
      bool first = true;
      for (const auto& use : e.output(i).consumers()) {
        os << (first ? "" : ",") << '%' << use.owner().order;
        if (use.owner().num_inputs() > 1) os << '.' << use.index();
        first = false;
      }
      os << ')';
    }
  }
  if (opt.detailed && !e.loop_ids.empty()) {
    os << " loops(";
    for (std::size_t i = 0; i < e.loop_ids.size(); ++i) os << (i ? "," : "") << e.loop_ids[i];
    os << ')';
  }
}
} // namespace detail

/// The line of one expression, as in to_string(lir); numbers the LIR first.
template <class T>
std::string expression_to_string(LinearIR<T>& lir, const Expression<T>& e,
                                 const LirPrintOptions& opt = {}) {
  lir.renumber();
  std::ostringstream os;
  detail::print_expression(os, e, opt);
  return os.str();
}

template <class T> std::string to_string(LinearIR<T>& lir, const LirPrintOptions& opt = {}) {
  lir.renumber();
  std::ostringstream os;
  os << "domain " << detail::dims(lir.domain);
  if (opt.detailed)
    os << " | args " << lir.num_inputs << " in " << lir.num_outputs << " out, spill slots "
       << lir.spill_slots << ", counter slots " << lir.counter_slots
       << ", reserved vector registers " << lir.reserved_vector_registers;
  os << '\n';
  for (auto& e : lir) {
    detail::print_expression(os, *e, opt);
    os << '\n';
  }
  for (std::size_t id = 0; id < lir.loops().size(); ++id) {
    const LoopInfo& l = lir.loops().at(id);
    os << "loop " << id << ": dim " << l.dim << " work "
       << (l.runtime_work_amount ? "runtime" : std::to_string(l.work_amount)) << " inc "
       << l.increment << (l.is_tail ? " tail" : "") << (l.evaluate_once ? " once" : "");
    if (l.tail_of >= 0) os << " tail_of " << l.tail_of;
    os << " |";
    for (std::size_t p = 0; p < l.ports.size(); ++p) {
      os << (p ? ", " : " ") << "arg" << l.ports[p].data_index;
      if (l.ports[p].runtime)
        os << " +config";
      else
        os << " +" << l.ports[p].ptr_increment << " fin " << l.ports[p].finalization_offset;
      if (l.ports[p].rewind) os << " rewind " << l.ports[p].rewind << "B/walked";
      if (opt.detailed) os << " x" << l.ports[p].element_size << 'B';
    }
    os << '\n';
  }
  return os.str();
}

} // namespace snippets::ir
