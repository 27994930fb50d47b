// SPDX-License-Identifier: Apache-2.0
// snippets/passes/slice_reads.hpp: which Slices a kernel folds into the reads of its inputs.
//
// A Slice of a kernel input (ONNX Split's parts, an ONNX Slice of step 1) costs no pass over
// memory: the kernel reads the part where it lies, at the part's offset with the whole input's
// strides. In a body, such a Slice reads a Parameter directly or through Converts to f32
// (AlignElementTypes widens narrow inputs first; the loads convert), and every reader of that
// Parameter is such a Slice, of one axis and one length: the LIR then has one Parameter
// expression per part, all reading the same kernel argument (convert_to_linear_ir.hpp), each
// with the part's shape, the input's extents in memory and the part's first element
// (ir::PortDescriptor::memory, ::offset: the start times the elements after the sliced axis).
// Two parts of one input in one kernel share its data pointer (CleanRepeatedDataPointerShifts
// keeps one shift per pointer and loop).
//
//   x [N, 2C] --Slice(-1, 0, C)--> a [N, C]      GLU: y = a * sigmoid(b), one kernel over
//             --Slice(-1, C, C)--> b [N, C]           [N, C] that reads x twice per row
//
//   x [N, 2C, HW] --Slice(1, 0, C)--> a [N, C, HW]   the same over channels: each part is C
//                 --Slice(1, C, C)--> b [N, C, HW]   rows of HW, 2C rows apart per image
//
// A Slice of another axis than the innermost needs the input's static shape (the offset and
// the strides are compile-time numbers) and an offset of less than 2^30 bytes (the loads'
// displacements are 32-bit).
// The tokenizer takes a Slice on these terms (passes/tokenize.hpp: the Slice reads a Subgraph
// input that only Slices read inside it), passes::fusability judges it (then a Parameter only
// Slices read), and a backend opts in with fusable<ir::Slice>.
#pragma once

#include <vector>

#include "snippets/ir/graph.hpp"

namespace snippets::passes {

/// The axis Slice `n` cuts, counted from the front.
template <class T> std::size_t slice_axis(const ir::Graph<T>& g, const ir::Node<T>& n) {
  return normalize_axis(std::get<ir::Slice>(n.op).axis, g.type(n.inputs[0]).shape.rank(), "Slice");
}

/// The elements between the input's first one and the first one of Slice `n`'s part.
template <class T> std::int64_t slice_offset(const ir::Graph<T>& g, const ir::Node<T>& n) {
  const Shape& s = g.type(n.inputs[0]).shape;
  std::int64_t inner = 1;
  for (std::size_t d = slice_axis(g, n) + 1; d < s.rank(); ++d) inner *= s[d];
  return std::get<ir::Slice>(n.op).start * inner;
}

/// Whether `n` is a Slice whose part a kernel can read in place: of the innermost axis, or of
/// another axis of a static input whose part starts less than 2^30 bytes in.
template <class T> bool foldable_slice(const ir::Graph<T>& g, const ir::Node<T>& n) {
  const auto* s = std::get_if<ir::Slice>(&n.op);
  if (!s) return false;
  const ir::TensorType& in = g.type(n.inputs[0]);
  const auto rank = static_cast<std::int64_t>(in.shape.rank());
  if (rank == 0 || s->axis < -rank || s->axis >= rank) return false;
  if (slice_axis(g, n) + 1 == in.shape.rank()) return true;
  return in.shape.is_static() &&
         slice_offset(g, n) * static_cast<std::int64_t>(size_of(in.type)) < (std::int64_t{1} << 30);
}

namespace detail {
template <class T> bool is_f32_convert(const ir::Node<T>& n) {
  const auto* c = std::get_if<ir::Convert>(&n.op);
  return c && c->to == ElementType::f32;
}
/// Appends the readers of `n` (through Converts to f32) to `slices` and `converts`; false when
/// one of them is neither a foldable Slice nor such a Convert.
template <class T>
bool collect_slice_reads(const ir::Graph<T>& g, const ir::Node<T>& n,
                         std::vector<const ir::Node<T>*>& slices,
                         std::vector<const ir::Node<T>*>& converts) {
  for (const ir::Use& u : g.users(ir::Output{n.id, 0})) {
    const ir::Node<T>& user = g.node(u.node);
    if (foldable_slice(g, user)) {
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

/// The parts of Parameter `p` a kernel reads in place of `p`: the foldable Slices that read
/// it (directly or through Converts to f32) when they are all its readers and cut one axis to
/// one length (parts of one shape move one data pointer alike); else nothing. `converts`
/// receives the Converts in between (the LIR does without them).
template <class T>
std::vector<const ir::Node<T>*> slice_reads(const ir::Graph<T>& g, const ir::Node<T>& p,
                                            std::vector<const ir::Node<T>*>* converts = nullptr) {
  std::vector<const ir::Node<T>*> slices, between;
  if (!ir::is<ir::Parameter>(p.op) || !detail::collect_slice_reads(g, p, slices, between))
    return {};
  for (const ir::Node<T>* s : slices)
    if (std::get<ir::Slice>(s->op).length != std::get<ir::Slice>(slices[0]->op).length ||
        slice_axis(g, *s) != slice_axis(g, *slices[0]))
      return {};
  if (converts) *converts = std::move(between);
  return slices;
}

/// Whether a kernel folds Slice `n` into the reads of an input: a foldable Slice of a planar
/// Parameter (through Converts to f32) that only such Slices, of one axis and length, read.
template <class T> bool folds_into_parameter(const ir::Graph<T>& g, const ir::Node<T>& n) {
  if (!foldable_slice(g, n)) return false;
  const ir::Node<T>* src = &g.node(n.inputs[0].node);
  while (detail::is_f32_convert(*src)) src = &g.node(src->inputs[0].node);
  const auto* param = std::get_if<ir::Parameter>(&src->op);
  return param && param->layout.is_planar() && !slice_reads(g, *src).empty();
}

} // namespace snippets::passes
