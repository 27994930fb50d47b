// snippets/passes/lir_queries.hpp: small questions passes ask about expressions.
#pragma once

#include "snippets/ir/linear_ir.hpp"

namespace snippets::passes {

template <class T> bool holds_io(const ir::Expression<T>& e) {
  return std::holds_alternative<ir::Parameter>(e.op) || std::holds_alternative<ir::Result>(e.op);
}
template <class T> bool is_loop_marker(const ir::Expression<T>& e) {
  return std::holds_alternative<ir::LoopBegin>(e.op) || std::holds_alternative<ir::LoopEnd>(e.op);
}
/// Expressions that read or write a kernel argument's memory.
template <class T> bool is_memory_access(const ir::Expression<T>& e) {
  return std::holds_alternative<ir::Load>(e.op) || std::holds_alternative<ir::Store>(e.op) ||
         std::holds_alternative<ir::BroadcastLoad>(e.op);
}
/// Expressions that run once per element and so belong inside the loops.
template <class T> bool is_loop_body(const ir::Expression<T>& e) {
  return !holds_io(e) && !is_loop_marker(e) && !std::holds_alternative<ir::Scalar>(e.op);
}
/// Expressions whose output is a vector register.
template <class T> bool defines_vector(const ir::Expression<T>& e) {
  return (is_loop_body(e) && !std::holds_alternative<ir::Store>(e.op) &&
          !std::holds_alternative<ir::Spill>(e.op)) ||
         std::holds_alternative<ir::Scalar>(e.op);
}
/// Elements between consecutive indices of domain dimension `dim` in a planar tensor whose
/// domain-aligned shape is `shape`; 0 when the tensor is broadcast along `dim`.
inline std::int64_t stride_along(const std::vector<Dim>& shape, std::size_t dim) {
  if (shape[dim] == 1) return 0;
  std::int64_t s = 1;
  for (std::size_t d = dim + 1; d < shape.size(); ++d) s *= shape[d];
  return s;
}
/// As above for a tensor with a memory order (PortDescriptor::layout; empty: planar).
inline std::int64_t stride_along(const ir::PortDescriptor& desc, std::size_t dim) {
  if (desc.layout.empty()) return stride_along(desc.shape, dim);
  if (desc.shape[dim] == 1) return 0;
  std::int64_t s = 1;
  for (auto it = desc.layout.rbegin(); it != desc.layout.rend() && *it != dim; ++it)
    s *= desc.shape[*it];
  return s;
}

} // namespace snippets::passes
