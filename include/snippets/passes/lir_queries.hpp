// SPDX-License-Identifier: Apache-2.0
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
/// The element type in memory of a Load, Store or BroadcastLoad; f32 for any other expression
/// (an access to memory the kernel owns holds f32).
template <class T> ElementType memory_type(const ir::Expression<T>& e) {
  if (const auto* l = std::get_if<ir::Load>(&e.op)) return l->type;
  if (const auto* s = std::get_if<ir::Store>(&e.op)) return s->type;
  if (const auto* b = std::get_if<ir::BroadcastLoad>(&e.op)) return b->type;
  return ElementType::f32;
}
/// Expressions that run once per element and so belong inside the loops.
template <class T> bool is_loop_body(const ir::Expression<T>& e) {
  return !holds_io(e) && !is_loop_marker(e) && !std::holds_alternative<ir::Scalar>(e.op) &&
         !std::holds_alternative<ir::Buffer>(e.op);
}
/// Expressions whose output is a vector register.
template <class T> bool defines_vector(const ir::Expression<T>& e) {
  return (is_loop_body(e) && !std::holds_alternative<ir::Store>(e.op) &&
          !std::holds_alternative<ir::Spill>(e.op) &&
          !std::holds_alternative<ir::ReduceAccumulate>(e.op)) ||
         std::holds_alternative<ir::Scalar>(e.op);
}
/// ReduceSum, ReduceMax, ReduceMin or ReduceProd (before DecomposeReductions lowers them).
template <class T> bool is_reduction(const ir::Expression<T>& e) {
  return ir::is_row_reduction(e.op);
}
/// Elements between consecutive indices of domain dimension `dim` in a planar tensor whose
/// domain-aligned shape is `shape`; 0 when the tensor is broadcast along `dim`.
inline std::int64_t stride_along(const std::vector<Dim>& shape, std::size_t dim) {
  if (shape[dim] == 1) return 0;
  std::int64_t s = 1;
  for (std::size_t d = dim + 1; d < shape.size(); ++d) s *= shape[d];
  return s;
}
/// As above for a tensor with a memory order (PortDescriptor::layout; empty: planar), or a part
/// of a larger tensor (PortDescriptor::memory: its planar strides; 0 where the part is 1).
inline std::int64_t stride_along(const ir::PortDescriptor& desc, std::size_t dim) {
  if (!desc.memory.empty()) return desc.shape[dim] == 1 ? 0 : stride_along(desc.memory, dim);
  if (desc.layout.empty()) return stride_along(desc.shape, dim);
  if (desc.shape[dim] == 1) return 0;
  std::int64_t s = 1;
  for (auto it = desc.layout.rbegin(); it != desc.layout.rend() && *it != dim; ++it)
    s *= desc.shape[*it];
  return s;
}

/// The element type in memory of kernel argument `index` (LinearIR::arg_types); f32 for a
/// Buffer, or for a LIR built without element types (hand-made LIRs in tests).
template <class T> ElementType arg_type(const ir::LinearIR<T>& lir, std::size_t index) {
  return index < lir.arg_types.size() ? lir.arg_types[index] : ElementType::f32;
}

} // namespace snippets::passes
