// SPDX-License-Identifier: Apache-2.0
// snippets/passes/fusability.hpp: may a kernel compute this node, and if not, why. The one
// per-node check behind both the tokenizer (passes/tokenize.hpp takes a node iff it has no
// reason) and compile() (compile/checks.hpp raises the reason as a snippets::Error):
//
//   if (auto why = passes::fusability(body, n, passes::FusabilityStage::body))
//     raise(why->id, why->message);
//
// The rules, for a backend with traits T:
//  - Parameter, Result, Constant and Scalar compute nothing: no reason (their types are the
//    kernel's inputs and outputs, checked per body);
//  - an op T does not fuse, a Subgraph among them [snippets.compile.unsupported_op];
//  - a Softmax or a reduction (ReduceSum ... ReduceL2) that does not reduce over the last axes
//    of its input, nor over a run of adjacent axes where T has the column_reductions hook
//    (passes/tile_columns.hpp; in the body only without MatMuls, the tokenizer's rule), or (in
//    the body) drops them and is read by other ops than Results [snippets.compile.reduce_axis];
//  - an op whose attributes T::supports refuses [snippets.compile.unsupported_attribute];
//  - an op computing on types a kernel does not compute on [snippets.compile.unsupported_type].
// The tokenizer asks about model nodes, before the data-flow passes; compile() about the
// canonical body, after them (FusabilityStage). Where those passes change what a node is, the
// model stage judges what they will make of it, and the body stage what they made:
//  - Power with a scalar-constant exponent becomes PowerStatic (ConvertPowerToPowerStatic):
//    in the model it counts as that PowerStatic; in the body a Power left is a Power;
//  - a Transpose is folded into the load of an input or the store of an output
//    (FuseTransposeInto*), which the tokenizer's group rules arrange: in the model any
//    Transpose of a tensor passes (not one of a scalar constant: that is no tensor to load;
//    not one that moves the innermost axis of values other than f32 that more than MatMuls
//    read, which FuseTransposeIntoParameter does not gather), whether T fuses Transpose or not; in
//    the body a Transpose left was not folded, and passes only if T fuses it;
//  - f16, bf16, i8 and u8 values are computed in f32 (AlignElementTypes): in the model an op
//    may compute on them (i8 and u8 only by the ops exact on them), and i32 values only go
//    through a Convert to a type other than i32 and bf16; in the body, where the alignment is
//    done, an op other than Convert reads f32 or boolean values only;
//  - a Slice is folded into the loads of an input (slice_reads.hpp: foldable_slice) when T fuses
//    Slice: in the model any such Slice of a tensor passes (not one of a scalar
//    constant), the tokenizer's group rules arrange the rest; in the body it passes only when
//    folds_into_parameter says the LIR reads it as a part of its input;
//  - FakeQuantize and Quantize become elementwise ops (DecomposeQuantization): in the model
//    they count as those ops when T fuses them, and Quantize's i8 or u8 result is a Convert's;
//    in the body one left was not decomposed;
//  - ReduceMean, ReduceSumSquare, ReduceL1 and ReduceL2 become a ReduceSum and elementwise ops
//    (DecomposeCompositeReductions): in the model they count as such a reduction when T fuses
//    them (its traits say so); in the body one left was not decomposed;
//  - a MatMul becomes a Brgemm (LowerBrgemm): in the model it multiplies f32 or bf16 operands,
//    or u8/i8 A by i8 B (integer_product_types), of rank >= 2 and T's attribute hook is not asked
//    (compile()'s LowerBrgemm names a MatMul it cannot compute:
//    [snippets.compile.unsupported_matmul]); in the body it is an op like the others.
// Not here, because they concern a whole body or Subgraph rather than one node: the number of
// inputs and outputs, the kernel's input and output types, dynamic shapes (the tokenizer forms
// static Subgraphs only; compile() takes dynamic elementwise bodies), i32 inputs, empty values
// and the size of a product (compile/checks.hpp), and the tokenizer's group rules.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "snippets/backend_traits.hpp"
#include "snippets/ir/graph.hpp"
#include "snippets/passes/align_element_types.hpp"
#include "snippets/passes/decompose_softmax.hpp"
#include "snippets/passes/fuse_transpose_into_parameter.hpp"
#include "snippets/passes/matmul_form.hpp"
#include "snippets/passes/slice_reads.hpp"

namespace snippets::passes {

/// Which graph a node is judged in (see the file comment).
enum class FusabilityStage {
  model, // a model node, before the data-flow passes (the tokenizer)
  body,  // a node of a canonical body, after them (compile())
};

/// Why a kernel cannot compute a node: the stable id of the error compile() raises for it, and
/// the message (the node, the rule, what to do).
struct Unfusable {
  std::string_view id;
  std::string message;
};

namespace detail {

template <class T> Unfusable unfusable_op(const ir::Node<T>& n) {
  return {"snippets.compile.unsupported_op", n.describe() + " cannot be fused by the " +
                                                 std::string(T::name) +
                                                 " backend; leave it out of the subgraph"};
}

template <class T> Unfusable unsupported_attributes(const ir::Node<T>& n) {
  return {"snippets.compile.unsupported_attribute",
          n.describe() + " has attributes the " + std::string(T::name) +
              " emitter does not support; run it outside the kernel"};
}

/// A Softmax or a reduction: over trailing axes (in the body also over middle ones), and without
/// keep_dims only as an output (in the model the tokenizer arranges that; in the body
/// DecomposeSoftmax kept the dims of one).
template <class T>
std::optional<Unfusable> reduction_fusability(const ir::Graph<T>& g, const ir::Node<T>& n,
                                              bool model) {
  if (!row_axes(g, n) &&
      (!backend_column_reductions<T>() || row_form(g, n).reduced == 0 || (!model && has_matmul(g))))
    return Unfusable{"snippets.compile.reduce_axis",
                     n.describe() +
                         " does not reduce over the last axes of its input, nor over one run of "
                         "adjacent axes of a body without MatMuls; kernels reduce rows of "
                         "trailing axes, or columns: transpose the axes, or run it outside "
                         "the subgraph"};
  if (!model && !reduced_dims_kept(n))
    return Unfusable{"snippets.compile.reduce_axis",
                     n.describe() +
                         " drops the reduced axes (keep_dims false) and is read by ops of the "
                         "subgraph; a kernel computes that form only as an output: keep the "
                         "dims, or reshape outside the subgraph"};
  return std::nullopt;
}

/// The op rules: fused by T, with attributes it supports, reductions over trailing axes.
template <class T>
std::optional<Unfusable> op_fusability(const ir::Graph<T>& g, const ir::Node<T>& n,
                                       FusabilityStage stage) {
  const bool model = stage == FusabilityStage::model;
  if (model && ir::is<ir::Transpose>(n.op)) { // folded into a load or a store
    if (uniform_value<T>(g.node(n.inputs[0].node).op))
      return Unfusable{"snippets.compile.unsupported_op",
                       n.describe() + " transposes a constant of one value, which is no tensor "
                                      "to load: leave it out of the subgraph"};
    // FuseTransposeIntoParameter gathers an innermost axis that moves from f32 values only
    const ir::TensorType& in = g.type(n.inputs[0]);
    if (std::get<ir::Transpose>(n.op).order.back() + 1 != in.shape.rank() &&
        in.type != ElementType::f32 && !FuseTransposeIntoParameter::only_matmuls(g, {n.id, 0}))
      return Unfusable{"snippets.compile.unsupported_type",
                       n.describe() + " moves the innermost axis of " + in.to_string() +
                           ": a kernel gathers f32 values only (a MatMul reads any strides); "
                           "convert to f32 first, or transpose outside the subgraph"};
    return std::nullopt;
  }
  if (ir::is<ir::Slice>(n.op)) { // folded into the loads of an input
    if (!T::template fusable<ir::Slice>) return unfusable_op(n);
    const bool ok = model ? foldable_slice(g, n) && !uniform_value<T>(g.node(n.inputs[0].node).op)
                          : folds_into_parameter(g, n);
    if (ok) return std::nullopt;
    return Unfusable{"snippets.compile.unsupported_op",
                     n.describe() + " is not folded into the reads of an input: a kernel takes "
                                    "Slices of an input that only such Slices, of one axis and "
                                    "one length, read (of another axis than the innermost: a "
                                    "static input); leave it out of the subgraph"};
  }
  if (!model && (ir::is<ir::FakeQuantize>(n.op) || ir::is<ir::Quantize>(n.op)))
    return Unfusable{"snippets.compile.unsupported_op",
                     n.describe() + " is not decomposed into ops a kernel computes; keep "
                                    "DecomposeQuantization in the data-flow pipeline"};
  if (model && ir::is<ir::MatMul>(n.op)) { // a Brgemm: f32, bf16 or int8 operands, rank >= 2
    const bool integer = integer_product_types(g.type(n.inputs[0]).type, g.type(n.inputs[1]).type);
    for (const ir::Output& o : n.inputs)
      if ((!integer && !product_type(g.type(o).type)) || g.type(o).shape.rank() < 2)
        return Unfusable{"snippets.compile.unsupported_type",
                         n.describe() + " reads " + g.type(o).to_string() +
                             "; kernels multiply f32 or bf16 matrices, or u8/i8 by i8, of rank 2 "
                             "or more (convert or reshape outside the subgraph)"};
    if (!T::template fusable<ir::MatMul>) return unfusable_op(n);
    return std::nullopt;
  }
  if (model && ir::is<ir::Power>(n.op) && !T::template fusable<ir::Power>) { // a PowerStatic
    const auto e = uniform_value<T>(g.node(n.inputs[1].node).op);
    if (e && T::template fusable<ir::PowerStatic> && backend_supports<T>(ir::PowerStatic{*e}))
      return std::nullopt;
    return Unfusable{"snippets.compile.unsupported_op",
                     n.describe() + " cannot be fused by the " + std::string(T::name) +
                         " backend unless its exponent is one constant value it supports as "
                         "PowerStatic; leave it out of the subgraph"};
  }
  return std::visit(
      [&](const auto& tag) -> std::optional<Unfusable> {
        using Tag = std::decay_t<decltype(tag)>;
        if constexpr (std::is_same_v<Tag, ir::Parameter> || std::is_same_v<Tag, ir::Result> ||
                      std::is_same_v<Tag, ir::Constant> || std::is_same_v<Tag, ir::Scalar>) {
          return std::nullopt;
        } else if constexpr (std::is_same_v<Tag, ir::Subgraph<T>>) {
          return unfusable_op(n);
        } else if constexpr (T::template fusable<Tag>) {
          if constexpr (ir::composite_reduction<Tag>)
            if (!model)
              return Unfusable{"snippets.compile.unsupported_op",
                               n.describe() + " is not decomposed into ops a kernel computes; "
                                              "keep DecomposeCompositeReductions in the "
                                              "data-flow pipeline"};
          if constexpr (ir::reduction<Tag> || std::is_same_v<Tag, ir::Softmax>)
            if (auto why = reduction_fusability(g, n, model)) return why;
          if (!backend_supports<T>(tag)) return unsupported_attributes(n);
          return std::nullopt;
        } else if constexpr (std::is_same_v<Tag, ir::Transpose>) { // (the body stage)
          return Unfusable{
              "snippets.compile.unsupported_op",
              n.describe() +
                  " is not folded into memory access: a kernel takes a Transpose only as the "
                  "only consumer of a subgraph input, or as the last op before an output when "
                  "it keeps the innermost axis innermost; move it out of the subgraph or give "
                  "it its own input"};
        } else {
          return unfusable_op(n);
        }
      },
      n.op);
}

/// The type rules of the two stages (see the file comment).
template <class T>
std::optional<Unfusable> type_fusability(const ir::Graph<T>& g, const ir::Node<T>& n,
                                         FusabilityStage stage) {
  if (ir::is<ir::Parameter>(n.op) || ir::is<ir::Result>(n.op)) return std::nullopt;
  const auto* convert = std::get_if<ir::Convert>(&n.op);
  if (stage == FusabilityStage::body) {
    // kernels compute in f32: an integer value may only be converted, never computed on
    if (convert) return std::nullopt;
    for (const ir::Output& o : n.inputs)
      if (const ElementType e = g.type(o).type; e != ElementType::f32 && e != ElementType::boolean)
        return Unfusable{"snippets.compile.unsupported_type",
                         n.describe() + " computes on " + g.type(o).to_string() +
                             "; kernels compute in f32, so run integer arithmetic outside the "
                             "subgraph"};
    return std::nullopt;
  }
  if (ir::is<ir::Quantize>(n.op)) return std::nullopt; // floats in, a Convert's i8 or u8 out
  // a Transpose moves values (folded into a load or a store: op_fusability), exact on any type
  if (ir::is<ir::Transpose>(n.op)) return std::nullopt;
  if (ir::is<ir::MatMul>(n.op) && // bytes in, exact int32 sums out (op_fusability checked them)
      integer_product_types(g.type(n.inputs[0]).type, g.type(n.inputs[1]).type))
    return std::nullopt;
  if (convert) { // a kernel holds an i32 as the f32 nearest to it (exact up to 2^24)
    if (convert->to == ElementType::i32 || convert->to == ElementType::bf16)
      for (const ir::Output& o : n.inputs)
        if (g.type(o).type == ElementType::i32)
          return Unfusable{"snippets.compile.unsupported_type",
                           n.describe() + " converts i32 to " +
                               std::string(to_string(convert->to)) +
                               "; kernels hold i32 values as f32 (exact up to 2^24), so inside a "
                               "kernel an i32 value may only be converted to f32, f16, i8, u8 or "
                               "boolean (convert it outside the subgraph)"};
    return std::nullopt;
  }
  const bool exact_on_bytes = std::visit(
      [](const auto& tag) { return exact_on_small_integers<std::decay_t<decltype(tag)>>; }, n.op);
  auto refused = [&](const ir::TensorType& t) -> std::optional<Unfusable> {
    if (t.type == ElementType::i32)
      return Unfusable{"snippets.compile.unsupported_type",
                       n.describe() + " computes on " + t.to_string() +
                           "; kernels compute in f32, so run integer arithmetic outside the "
                           "subgraph"};
    if ((t.type == ElementType::i8 || t.type == ElementType::u8) && !exact_on_bytes)
      return Unfusable{"snippets.compile.unsupported_type",
                       n.describe() + " computes on " + t.to_string() +
                           "; kernels compute i8 and u8 values in f32, which is exact only for "
                           "the ops of AlignElementTypes: convert the values outside the subgraph"};
    return std::nullopt;
  };
  for (const ir::Output& o : n.inputs)
    if (auto why = refused(g.type(o))) return why;
  for (const auto& t : n.outputs)
    if (auto why = refused(t)) return why;
  return std::nullopt;
}

} // namespace detail

/// Why T's kernels cannot compute node `n` of `g` at `stage`, or nothing when they can: the
/// op rules first, then the type rules (the file comment lists both).
template <class T>
std::optional<Unfusable> fusability(const ir::Graph<T>& g, const ir::Node<T>& n,
                                    FusabilityStage stage) {
  if (auto why = detail::op_fusability(g, n, stage)) return why;
  return detail::type_fusability(g, n, stage);
}

} // namespace snippets::passes
