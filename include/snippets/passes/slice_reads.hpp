// SPDX-License-Identifier: Apache-2.0
// snippets/passes/slice_reads.hpp: which Slices a kernel folds into the reads of its inputs.
//
// A Slice of the innermost axis of a kernel input (ONNX Split's parts, an ONNX Slice of
// step 1) costs no pass over memory: the kernel reads the part where it lies, at the part's
// offset with the whole input's row stride. In a body, such a Slice reads a Parameter
// directly or through Converts to f32 (AlignElementTypes widens narrow inputs first; the loads
// convert), and every reader of that Parameter is such a Slice: the LIR then has one Parameter
// expression per part, all reading the same kernel argument (convert_to_linear_ir.hpp), each
// with the part's shape, the input's extents in memory and the part's offset
// (ir::PortDescriptor::memory, ::offset). Two parts of one input in one kernel share its data
// pointer (CleanRepeatedDataPointerShifts keeps one shift per pointer and loop).
//
//   x [N, 2C] --Slice(-1, 0, C)--> a [N, C]      GLU: y = a * sigmoid(b), one kernel over
//             --Slice(-1, C, C)--> b [N, C]           [N, C] that reads x twice per row
//
// The tokenizer takes a Slice on these terms (passes/tokenize.hpp: the Slice reads a Subgraph
// input that only Slices read inside it), passes::fusability judges it (the innermost axis of
// a tensor, then a Parameter only Slices read), and a backend opts in with fusable<ir::Slice>.
#pragma once

#include <vector>

#include "snippets/ir/graph.hpp"

namespace snippets::passes {

/// Whether `n` is a Slice of the innermost axis of its input.
template <class T> bool innermost_slice(const ir::Graph<T>& g, const ir::Node<T>& n) {
  const auto* s = std::get_if<ir::Slice>(&n.op);
  if (!s) return false;
  const std::size_t rank = g.type(n.inputs[0]).shape.rank();
  return rank > 0 && (s->axis == -1 || s->axis == static_cast<std::int64_t>(rank) - 1);
}

namespace detail {
template <class T> bool is_f32_convert(const ir::Node<T>& n) {
  const auto* c = std::get_if<ir::Convert>(&n.op);
  return c && c->to == ElementType::f32;
}
/// Appends the readers of `n` (through Converts to f32) to `slices` and `converts`; false when
/// one of them is neither an innermost Slice nor such a Convert.
template <class T>
bool collect_slice_reads(const ir::Graph<T>& g, const ir::Node<T>& n,
                         std::vector<const ir::Node<T>*>& slices,
                         std::vector<const ir::Node<T>*>& converts) {
  for (const ir::Use& u : g.users(ir::Output{n.id, 0})) {
    const ir::Node<T>& user = g.node(u.node);
    if (innermost_slice(g, user)) {
      slices.push_back(&user);
    } else if (is_f32_convert(user)) {
      converts.push_back(&user);
      if (!collect_slice_reads(g, user, slices, converts)) return false;
    } else {
      return false;
    }
  }
  return true;
}
} // namespace detail

/// The parts of Parameter `p` a kernel reads in place of `p`: the innermost Slices that read
/// it (directly or through Converts to f32) when they are all its readers and have one length
/// (parts of one shape move one data pointer alike); else nothing. `converts` receives the
/// Converts in between (the LIR does without them).
template <class T>
std::vector<const ir::Node<T>*> slice_reads(const ir::Graph<T>& g, const ir::Node<T>& p,
                                            std::vector<const ir::Node<T>*>* converts = nullptr) {
  std::vector<const ir::Node<T>*> slices, between;
  if (!ir::is<ir::Parameter>(p.op) || !detail::collect_slice_reads(g, p, slices, between))
    return {};
  for (const ir::Node<T>* s : slices)
    if (std::get<ir::Slice>(s->op).length != std::get<ir::Slice>(slices[0]->op).length) return {};
  if (converts) *converts = std::move(between);
  return slices;
}

/// Whether a kernel folds Slice `n` into the reads of an input: an innermost Slice of a
/// planar Parameter (through Converts to f32) that only such Slices, of one length, read.
template <class T> bool folds_into_parameter(const ir::Graph<T>& g, const ir::Node<T>& n) {
  if (!innermost_slice(g, n)) return false;
  const ir::Node<T>* src = &g.node(n.inputs[0].node);
  while (detail::is_f32_convert(*src)) src = &g.node(src->inputs[0].node);
  const auto* param = std::get_if<ir::Parameter>(&src->op);
  return param && param->layout.is_planar() && !slice_reads(g, *src).empty();
}

} // namespace snippets::passes
