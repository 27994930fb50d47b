// SPDX-License-Identifier: Apache-2.0
// snippets/passes/fuse_transpose_into_result.hpp: FuseTransposeIntoResult folds a Transpose
// right before an output into the way the kernel writes that output.
//
//   before: t = Transpose(v [B,H,S,D], order=[0,2,1,3])     after: Result(v, layout=acbd)
//           Result(t)            // buffer [B,S,H,D]                // same buffer [B,S,H,D]
//
// Contract:
//  - a Transpose whose only consumer is a planar Result disappears; the Result takes the
//    Transpose's input and the layout `order` (Layout::permuted), whose physical shape is the
//    Transpose's output shape: the user's output buffer is unchanged, planar in the transposed
//    shape, and the kernel computes in the untransposed order and stores with permuted strides;
//  - only orders that keep the innermost axis innermost are folded (keeps_innermost: the last
//    axis whose extent is not 1 stays the last such axis in memory), so the stores stay
//    contiguous vectors (a scatter would be needed otherwise); chains fold while that holds.
//    In a body with a MatMul, whose kernel stores rows with any row stride, the last axis
//    staying last is enough (a product with N = 1 transposed along its rows);
//  - bodies with an input layout the body takes (channels-last, blocked: Canonicalize) are
//    left alone, as is everything else; compile() then rejects a remaining Transpose.
// The kernel signature is unchanged (compile.hpp describe() reads the original body).
// Runs after FuseTransposeIntoParameter (an input that is transposed and stored as is folds on
// the input side) and before Canonicalize, which rank-aligns the layouts.
#pragma once

#include <set>

#include "snippets/passes/data_flow.hpp"
#include "snippets/passes/properties.hpp"

namespace snippets::passes {

struct FuseTransposeIntoResult {
  using pass_tag = data_flow_pass_tag;
  static constexpr std::string_view name = "FuseTransposeIntoResult";
  using needs = Properties<property::InputTransposesFolded>;
  using before = Properties<property::RanksAligned>;
  using establishes = Properties<property::OutputTransposesFolded>;

  template <class T> ir::Graph<T> run(const ir::Graph<T>& body) const {
    for (ir::NodeId p : body.parameters()) {
      const auto& param = std::get<ir::Parameter>(body.node(p).op);
      if (!param.layout.is_planar() && !param.strided_read) return remove_dead_nodes(body);
    }
    // a MatMul kernel stores rows of the product (or of its Softmax) with any row stride: the
    // last axis staying last is enough, even when its extent is 1
    bool products = false;
    for (ir::NodeId id = 0; id < body.size(); ++id)
      products = products || std::holds_alternative<ir::MatMul>(body.node(id).op);
    std::map<ir::NodeId, Layout> layouts; // Result -> its new layout
    std::set<ir::NodeId> folded;          // Transposes that disappear
    for (ir::NodeId r : body.results()) {
      if (!std::get<ir::Result>(body.node(r).op).layout.is_planar()) continue;
      ir::Output src = body.node(r).inputs[0];
      const std::size_t rank = body.type(src).shape.rank();
      std::vector<std::size_t> memory(rank); // memory order of the value's axes
      for (std::size_t i = 0; i < rank; ++i) memory[i] = i;
      while (rank > 0 && body.users(src).size() == 1) {
        const ir::Node<T>& n = body.node(src.node);
        const auto* t = std::get_if<ir::Transpose>(&n.op);
        if (!t) break;
        // the value before the Transpose: its axis t[i] is the transposed axis i
        std::vector<std::size_t> next(rank);
        for (std::size_t p = 0; p < rank; ++p) next[p] = t->order[memory[p]];
        if (!keeps_innermost(body.type(n.inputs[0]).shape, next) &&
            !(products && next.back() == rank - 1))
          break;
        memory = std::move(next);
        folded.insert(n.id);
        src = n.inputs[0];
      }
      if (folded.empty() || src.node == body.node(r).inputs[0].node) continue;
      bool identity = true;
      for (std::size_t i = 0; i < rank; ++i) identity = identity && memory[i] == i;
      layouts.emplace(r, identity ? Layout{} : Layout::permuted(memory));
    }
    if (folded.empty()) return remove_dead_nodes(body);
    // (the value's shape is the same before every Transpose of a chain, up to the order)
    return rebuild(body,
                   [&](ir::Graph<T>& out, const ir::Node<T>& n,
                       std::span<const ir::Value> in) -> std::optional<std::vector<ir::Value>> {
                     if (folded.count(n.id)) return std::vector<ir::Value>{in[0]};
                     if (const auto it = layouts.find(n.id); it != layouts.end()) {
                       out.make(ir::Result{it->second}, in, n.name);
                       return std::vector<ir::Value>{};
                     }
                     return std::nullopt;
                   });
  }

  /// Whether writing a value of `shape` in memory order `memory` keeps its innermost axis (the
  /// last one whose extent is not 1) innermost in memory: then the stores are contiguous.
  static bool keeps_innermost(const Shape& shape, const std::vector<std::size_t>& memory) {
    std::size_t last = shape.rank(), last_in_memory = shape.rank();
    for (std::size_t a = 0; a < shape.rank(); ++a)
      if (shape[a] != 1) last = a;
    for (std::size_t a : memory)
      if (shape[a] != 1) last_in_memory = a;
    return last == last_in_memory;
  }
};

} // namespace snippets::passes
