// SPDX-License-Identifier: Apache-2.0
// snippets/passes/fuse_transpose_into_parameter.hpp: FuseTransposeIntoParameter folds the
// Transposes of kernel inputs into the way the kernel reads them.
//
//   before: x = Parameter(f32, [B,S,H,D])          after: x = Parameter(f32, [B,H,D,S],
//           t = Transpose(x, order=[0,2,3,1])              layout=adbc, strided_read=true)
//           ... uses of t ...                              ... uses of x ...
//
// Contract:
//  - a Transpose whose input is a Parameter it is the only consumer of disappears; the
//    Parameter takes the Transpose's output shape and a Layout whose memory is exactly the
//    user's buffer (order = the inverse of the Transpose's order; physical_shape() gives back
//    the Parameter's old shape), marked `strided_read`: the body keeps computing in logical
//    order and only this input is read with permuted strides (gathers where the innermost
//    dimension is strided);
//  - chains Parameter -> Transpose -> Transpose fold into one Parameter (orders compose), and
//    a Parameter that is already a strided read composes the same way;
//  - several Transposes of one order that are all the readers of a Parameter (or of a folded
//    Transpose) fold together: the Parameter stands for all of them, one load for every reader
//    (MoveReducedAxesLast gives each reader of a transposed input its own Transpose, so the
//    tokenizer's greedy groups do not see one shared value that several of them need);
//  - a gathered innermost axis (the last axis strided) of an input that is not f32 is folded
//    only when MatMuls are its only readers, directly or through a Convert to f32 or bf16
//    (they read any strides; gathers load f32 only);
//  - an identity Transpose anywhere is removed;
//  - anything else is left as it was: a Parameter with other consumers, a Transpose of a
//    computed value, a Parameter whose layout is blocked or taken by the body (not a strided
//    read). compile() then rejects the Transpose with a message that says why.
// The Parameters keep their positions and names, so the kernel signature is unchanged: the
// kernel's input is still the user's planar buffer (compile.hpp describe()).
// Runs before Canonicalize (default_pipelines.hpp), which rank-aligns the new layouts.
#pragma once

#include <algorithm>
#include <set>

#include "snippets/passes/data_flow.hpp"
#include "snippets/passes/properties.hpp"

namespace snippets::passes {

struct FuseTransposeIntoParameter {
  using pass_tag = data_flow_pass_tag;
  static constexpr std::string_view name = "FuseTransposeIntoParameter";
  using before = Properties<property::RanksAligned>;
  using establishes = Properties<property::InputTransposesFolded>;

  template <class T> ir::Graph<T> run(const ir::Graph<T>& body) const {
    std::map<ir::NodeId, ir::Parameter> folded_params; // Parameter -> its replacement
    std::set<ir::NodeId> folded;                       // Transposes that disappear
    for (ir::NodeId p : body.parameters()) {
      const auto& param = std::get<ir::Parameter>(body.node(p).op);
      if (param.layout.is_blocked() || !(param.layout.is_planar() || param.strided_read)) continue;
      ir::Parameter q = param;
      const std::size_t rank = q.output.shape.rank();
      std::vector<std::size_t> memory = identity(rank); // memory order of the logical axes
      if (!param.layout.order().empty()) memory = param.layout.order();
      std::vector<ir::Output> ends{{p, 0}}; // the values the folded Parameter stands for
      std::vector<ir::NodeId> chain;
      while (ends.size() == 1) {
        const auto uses = body.users(ends.front());
        if (uses.empty()) break;
        const ir::Node<T>& user = body.node(uses.front().node);
        const auto* t = std::get_if<ir::Transpose>(&user.op);
        if (!t || !std::all_of(uses.begin(), uses.end(), [&](const ir::Use& u) {
              const auto* o = std::get_if<ir::Transpose>(&body.node(u.node).op);
              return o && o->order == t->order;
            }))
          break;
        // new logical axis i is old axis t[i]: the axis in memory slot s becomes inverse(t)[.]
        const std::vector<std::size_t> inv = inverse_permutation(t->order);
        for (std::size_t& a : memory) a = inv[a];
        q.output.shape = user.outputs[0].shape;
        ends.clear();
        for (const ir::Use& u : uses) {
          chain.push_back(u.node);
          ends.push_back(ir::Output{u.node, 0});
        }
      }
      if (chain.empty()) continue;
      // a gathered innermost axis is read with VGATHERDPS, which loads f32 only; MatMuls read
      // their operands through any strides (Brgemm, BrgemmCopyB)
      if (memory.back() != rank - 1 && q.output.type != ElementType::f32 &&
          !std::all_of(ends.begin(), ends.end(),
                       [&](const ir::Output& e) { return only_matmuls(body, e); }))
        continue;
      folded.insert(chain.begin(), chain.end());
      q.layout = memory == identity(rank) ? Layout{} : Layout::permuted(memory);
      q.strided_read = !q.layout.is_planar();
      folded_params.emplace(p, std::move(q));
    }
    return rebuild(body,
                   [&](ir::Graph<T>& out, const ir::Node<T>& n,
                       std::span<const ir::Value> in) -> std::optional<std::vector<ir::Value>> {
                     if (const auto it = folded_params.find(n.id); it != folded_params.end())
                       return out.make(it->second, std::span<const ir::Value>(), n.name);
                     const auto* t = std::get_if<ir::Transpose>(&n.op);
                     if (t && (folded.count(n.id) || t->order == identity(t->order.size())))
                       return std::vector<ir::Value>{in[0]};
                     return std::nullopt;
                   });
  }

  /// MatMuls read `v`, directly or through Converts between f32 and bf16 (the products
  /// widen such an operand as they pack or broadcast it). Also the tokenizer's question
  /// (passes/fusability.hpp): whether a gather of a value that is not f32 can be folded.
  template <class T> static bool only_matmuls(const ir::Graph<T>& body, ir::Output v) {
    const auto uses = body.users(v);
    return std::all_of(uses.begin(), uses.end(), [&](const ir::Use& u) {
      const ir::Node<T>& n = body.node(u.node);
      if (const auto* c = std::get_if<ir::Convert>(&n.op))
        return (c->to == ElementType::f32 || c->to == ElementType::bf16) &&
               only_matmuls(body, ir::Output{n.id, 0});
      return std::holds_alternative<ir::MatMul>(n.op);
    });
  }

private:
  static std::vector<std::size_t> identity(std::size_t rank) {
    std::vector<std::size_t> v(rank);
    for (std::size_t i = 0; i < rank; ++i) v[i] = i;
    return v;
  }
};

} // namespace snippets::passes
