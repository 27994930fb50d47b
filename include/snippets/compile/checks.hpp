// SPDX-License-Identifier: Apache-2.0
// snippets/compile/checks.hpp: what compile() checks a Subgraph body for before it lowers it,
// each failure a snippets::Error ([snippets.compile.*]) naming the node and what to do:
//  - check_dynamic_body: a body with dynamic dimensions is planar, of a rank the call
//    arguments describe, without MatMul or Slice, and reduces (the reductions, Softmax) only
//    over the innermost axis, on a backend whose code generator takes dynamic rows;
//  - check_body: inputs + outputs within the traits' data pointers, every node fusable
//    (passes/fusability.hpp, the rules the tokenizer follows too: ops the traits fuse with their
//    attributes, reductions over the innermost axis, computation in f32), kernel I/O types the
//    traits read and write, i32 inputs only converted, no empty value inside a kernel that
//    writes something, MatMul matrices the Brgemm code can address.
#pragma once

#include <algorithm>
#include <limits>
#include <string>

#include "snippets/backend_traits.hpp"
#include "snippets/ir/graph.hpp"
#include "snippets/passes/decompose_softmax.hpp"
#include "snippets/passes/fusability.hpp"
#include "snippets/runtime/kernel_abi.hpp"
#include "snippets/target/codegen.hpp"

namespace snippets::detail {

template <class T> bool has_dynamic_shapes(const ir::Graph<T>& body) {
  for (ir::NodeId id = 0; id < body.size(); ++id)
    for (const auto& t : body.node(id).outputs)
      if (!t.shape.is_static()) return true;
  return false;
}

/// Dynamic bodies: planar inputs and a rank the call arguments can describe.
template <class T> void check_dynamic_body(const ir::Graph<T>& body) {
  for (ir::NodeId id = 0; id < body.size(); ++id) {
    const auto& op = body.node(id).op;
    if (ir::is<ir::MatMul>(op))
      raise("snippets.compile.dynamic_matmul",
            body.node(id).describe() +
                ": MatMul kernels take static shapes for now; give the body static shapes "
                "(compile one kernel per shape, the kernel cache keeps them)");
    if (ir::is<ir::Slice>(op))
      raise("snippets.compile.dynamic_layout",
            body.node(id).describe() +
                ": kernels with dynamic dimensions read whole planar inputs, not parts of them; "
                "slice outside the subgraph, or give the body static shapes");
    const bool reduction =
        ir::is<ir::Softmax>(op) ||
        std::visit([](const auto& tag) { return ir::reduction<std::decay_t<decltype(tag)>>; }, op);
    if (reduction && !backend_dynamic_reductions<T>())
      raise("snippets.compile.dynamic_reduce",
            body.node(id).describe() + ": " + std::string(T::name) +
                " kernels with reductions take static shapes; give the body static shapes "
                "(compile one kernel per shape, the kernel cache keeps them)");
    if (reduction &&
        (passes::row_axes(body, body.node(id)) != 1 || !passes::reduced_dims_kept(body.node(id))))
      raise("snippets.compile.dynamic_reduce",
            body.node(id).describe() +
                ": kernels with dynamic dimensions reduce over the innermost axis only, keeping "
                "it; reduce several axes or drop them with static shapes (a Program compiles one "
                "kernel per shape set), "
                "or outside the subgraph");
  }
  for (ir::NodeId id = 0; id < body.size(); ++id)
    for (const auto& t : body.node(id).outputs)
      if (t.shape.rank() > std::size_t(max_dynamic_rank))
        raise("snippets.compile.dynamic_rank",
              body.node(id).describe() + " has rank " + std::to_string(t.shape.rank()) +
                  "; kernels with dynamic dimensions take ranks up to " +
                  std::to_string(max_dynamic_rank) + " (reshape, or give static shapes)");
  for (ir::NodeId p : body.parameters())
    if (!std::get<ir::Parameter>(body.node(p).op).layout.is_planar())
      raise("snippets.compile.dynamic_layout",
            body.node(p).describe() +
                " has a non-planar layout; kernels with dynamic dimensions take planar inputs "
                "(transpose outside the subgraph, or give static shapes)");
  for (ir::NodeId id = 0; id < body.size(); ++id)
    if (const auto* t = std::get_if<ir::Transpose>(&body.node(id).op);
        t && t->order != Layout::planar(t->order.size()).order())
      raise("snippets.compile.dynamic_layout",
            body.node(id).describe() +
                " reads its input in another order; kernels with dynamic dimensions take planar "
                "inputs only (transpose outside the subgraph, or give static shapes)");
  for (ir::NodeId r : body.results())
    if (!std::get<ir::Result>(body.node(r).op).layout.is_planar())
      raise("snippets.compile.dynamic_layout",
            body.node(r).describe() +
                " has a non-planar layout; kernels with dynamic dimensions write planar outputs "
                "(transpose outside the subgraph, or give static shapes)");
}

/// Kernels read an i32 input as the f32 nearest to it (exact up to 2^24), which is what a
/// Convert to f32, f16, i8, u8 or boolean needs. A copy or a Convert to i32 or bf16 (two
/// roundings) would not match the input's exact value.
template <class T> void check_i32_input(const ir::Graph<T>& body, const ir::Node<T>& p) {
  for (const ir::Use& u : p.users[0]) {
    const ir::Node<T>& user = body.node(u.node);
    const auto* c = std::get_if<ir::Convert>(&user.op);
    if (c && c->to != ElementType::i32 && c->to != ElementType::bf16) continue;
    raise("snippets.compile.unsupported_type",
          p.describe() + " is i32 and feeds " + user.describe() +
              "; kernels read i32 inputs as f32 (exact up to 2^24), so inside a kernel an i32 "
              "input may only be converted to f32, f16, i8, u8 or boolean (copy it or convert it "
              "to i32 or bf16 outside the subgraph)");
  }
}

/// Whether the (empty) value of `n` is read only as an operand of MatMuls of depth 0 (whose
/// products are not empty), directly or through Converts (bf16 operands widened to f32).
template <class T> bool operand_of_depth_zero(const ir::Graph<T>& body, const ir::Node<T>& n) {
  for (const ir::Use& u : n.users[0]) {
    const ir::Node<T>& user = body.node(u.node);
    if (ir::is<ir::MatMul>(user.op) && user.outputs[0].shape.element_count() != 0) continue;
    if (!ir::is<ir::Convert>(user.op) || !operand_of_depth_zero(body, user)) return false;
  }
  return !n.users[0].empty();
}

/// In a kernel that writes something, every value is non-empty but the operands of a MatMul
/// of depth 0 (its product is zeros): loops and register tiles of no elements are not emitted.
template <class T> void check_not_empty(const ir::Graph<T>& body, const ir::Node<T>& n) {
  if (ir::is<ir::Result>(n.op) || n.outputs.empty() || !n.outputs[0].shape.is_static() ||
      n.outputs[0].shape.element_count() != 0)
    return;
  const bool operand =
      ir::is<ir::Parameter>(n.op) || ir::is<ir::Constant>(n.op) || ir::is<ir::Convert>(n.op);
  for (const ir::Use& u : n.users[0]) {
    const ir::Node<T>& user = body.node(u.node);
    if (operand && ir::is<ir::MatMul>(user.op) && user.outputs[0].shape.element_count() != 0)
      continue; // depth 0
    if (operand && ir::is<ir::Convert>(user.op) && operand_of_depth_zero(body, user)) continue;
    raise("snippets.compile.empty_value",
          n.describe() + " is empty (" + n.outputs[0].to_string() + ") and feeds " +
              user.describe() +
              "; generated code takes empty tensors only as the operands of a MatMul of depth "
              "0 (and compile() needs no code when every output is empty): run this op outside "
              "the subgraph, where the reference interpreter gives its value");
  }
}

/// The Brgemm code addresses one matrix of a product (its last two dimensions: A, B, the
/// result and the epilogue's tensors of the result's shape) with 32-bit displacements; batches
/// and other loops advance their pointers by 64-bit amounts.
template <class T> void check_product_size(const ir::Graph<T>& body, const ir::Node<T>& mm) {
  auto matrix_bytes = [](const ir::TensorType& t) {
    const auto r = t.shape.rank();
    double n = 4; // at most f32 in memory (a double does not wrap)
    for (std::size_t d = r < 2 ? 0 : r - 2; d < r; ++d) n *= static_cast<double>(t.shape[d]);
    return n;
  };
  const double most =
      std::max({matrix_bytes(body.type(mm.inputs[0])), matrix_bytes(body.type(mm.inputs[1])),
                matrix_bytes(mm.outputs[0])});
  if (most > std::numeric_limits<std::int32_t>::max())
    raise("snippets.compile.offset_too_large",
          mm.describe() + " multiplies matrices of up to " +
              std::to_string(static_cast<std::uint64_t>(most)) +
              " bytes; MatMul kernels address one matrix with 32-bit offsets (under 2 GiB): "
              "split the product, or run it outside the subgraph");
}

template <class T> void check_body(const ir::Graph<T>& body) {
  bool matmul = false, slice = false;
  for (ir::NodeId id = 0; id < body.size(); ++id) {
    matmul = matmul || ir::is<ir::MatMul>(body.node(id).op);
    slice = slice || ir::is<ir::Slice>(body.node(id).op);
  }
  if (matmul && slice)
    raise("snippets.compile.unsupported_matmul",
          "the body has a MatMul and a Slice; MatMul kernels read whole inputs: slice outside "
          "the subgraph");
  if (static_cast<int>(body.parameters().size() + body.results().size()) >
      T::data_pointer_registers)
    raise("snippets.compile.too_many_io",
          "the body has " + std::to_string(body.parameters().size()) + " inputs and " +
              std::to_string(body.results().size()) + " outputs but a " + std::string(T::name) +
              " kernel takes at most " + std::to_string(T::data_pointer_registers) +
              " in all; split the subgraph");
  for (ir::NodeId id = 0; id < body.size(); ++id) {
    const auto& n = body.node(id);
    check_not_empty(body, n);
    if constexpr (T::template fusable<ir::MatMul>)
      if (ir::is<ir::MatMul>(n.op)) check_product_size(body, n);
    // the op and its computed types (the kernel's inputs and outputs are checked below)
    if (auto why = passes::fusability(body, n, passes::FusabilityStage::body))
      raise(why->id, why->message);
    const bool io = ir::is<ir::Parameter>(n.op) || ir::is<ir::Result>(n.op);
    const auto& t = ir::is<ir::Result>(n.op) ? body.type(n.inputs[0]) : n.outputs.at(0);
    if (io && !backend_io_type_supported<T>(t.type)) {
      std::string types;
      for (ElementType e : all_element_types)
        if (backend_io_type_supported<T>(e))
          types += (types.empty() ? "" : ", ") + std::string(to_string(e));
      raise("snippets.compile.unsupported_type",
            n.describe() + " is " + t.to_string() + "; " + std::string(T::name) +
                " kernels read and write " + types + " (add a Convert outside the subgraph)");
    }
    if (ir::is<ir::Parameter>(n.op) && t.type == ElementType::i32) check_i32_input(body, n);
  }
}

} // namespace snippets::detail
