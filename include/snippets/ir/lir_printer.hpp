// snippets/ir/lir_printer.hpp: the text dump of a Linear IR (the seed's debug_print), used by
// golden tests and SNIPPETS_DUMP_LIR. One expression per line, in control-flow order,
// indented by loop depth; then one line per loop:
//   5:     FusedMulAdd 'Add_4' (%2 v0, %3 v1, %4 v2) -> [3,17] v0
//   loop 1: dim 1 work 17 inc 8 | arg0 +8 fin -17, ...
#pragma once

#include <map>
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
  for (std::size_t i = 0; i < d.size(); ++i) os << (i ? "," : "") << d[i];
  os << ']';
  return os.str();
}
} // namespace detail

template <class T> std::string to_string(LinearIR<T>& lir) {
  lir.renumber();
  std::ostringstream os;
  os << "domain " << detail::dims(lir.domain) << '\n';
  for (auto& e : lir) {
    os << e->order << ": " << std::string(2 * e->loop_ids.size(), ' ') << e->op_name();
    std::visit(
        [&](const auto& tag) {
          using Tag = std::decay_t<decltype(tag)>;
          if constexpr (std::is_same_v<Tag, Load> || std::is_same_v<Tag, Store>)
            os << " x" << tag.count;
          if constexpr (requires { tag.offset; })
            if (tag.offset) os << " @" << tag.offset;
          if constexpr (std::is_same_v<Tag, LoopBegin> || std::is_same_v<Tag, LoopEnd>)
            os << " #" << tag.loop_id;
          if constexpr (std::is_same_v<Tag, Scalar>) os << ' ' << tag.value;
        },
        e->op);
    if (!e->name.empty()) os << " '" << e->name << "'";
    if (e->num_inputs()) {
      os << " (";
      for (std::size_t i = 0; i < e->num_inputs(); ++i)
        os << (i ? ", " : "") << '%' << e->input_expr(i).order
           << detail::reg_name(e->in_desc(i).reg);
      os << ')';
    }
    for (std::size_t i = 0; i < e->num_outputs(); ++i)
      os << " -> " << detail::dims(e->out_desc(i).shape) << detail::reg_name(e->out_desc(i).reg);
    os << '\n';
  }
  for (std::size_t id = 0; id < lir.loops().size(); ++id) {
    const LoopInfo& l = lir.loops().at(id);
    os << "loop " << id << ": dim " << l.dim << " work "
       << (l.runtime_work_amount ? "runtime" : std::to_string(l.work_amount)) << " inc "
       << l.increment << (l.is_tail ? " tail" : "") << (l.evaluate_once ? " once" : "");
    if (l.tail_of >= 0) os << " tail_of " << l.tail_of;
    os << " |";
    for (std::size_t p = 0; p < l.ports.size(); ++p)
      os << (p ? ", " : " ") << "arg" << l.ports[p].data_index << " +" << l.ports[p].ptr_increment
         << " fin " << l.ports[p].finalization_offset;
    os << '\n';
  }
  return os.str();
}

} // namespace snippets::ir
