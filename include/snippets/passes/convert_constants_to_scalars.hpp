// SPDX-License-Identifier: Apache-2.0
// snippets/passes/convert_constants_to_scalars.hpp: ConvertConstantsToScalars (data flow).
//
// A Constant whose values are all equal becomes a Scalar of its type, with a shape of 1s of
// the Constant's rank (the seed's [1,1,1,1]): the kernel keeps it in a register instead of
// reading memory. Constants with different values are left alone (they are kernel inputs),
// and so are the operands of a MatMul (its weights keep their shape: passes/lower_brgemm.hpp).
// So is a constant whose shape an output needs (in y = x[2,1] * ones[1,5] the ones broadcast
// x to [2,5], which a Scalar would not; in y + z[2,5] they need not): compile() refuses it,
// [snippets.compile.tensor_constant], and a Program runs that Subgraph on the reference path.
#pragma once

#include <set>

#include "snippets/passes/data_flow.hpp"
#include "snippets/passes/properties.hpp"

namespace snippets::passes {

template <class T> bool feeds_matmul(const ir::Graph<T>& g, const ir::Node<T>& n) {
  for (const ir::Use& u : n.users.at(0))
    if (ir::is<ir::MatMul>(g.node(u.node).op)) return true;
  return false;
}

struct ConvertConstantsToScalars {
  using pass_tag = data_flow_pass_tag;
  static constexpr std::string_view name = "ConvertConstantsToScalars";
  using establishes = Properties<property::ConstantsAsScalars>;

  template <class T> ir::Graph<T> run(const ir::Graph<T>& body) const {
    std::set<ir::NodeId> scalars;
    for (ir::NodeId id = 0; id < body.size(); ++id) {
      const ir::Node<T>& n = body.node(id);
      if (ir::is<ir::Constant>(n.op) && detail::uniform_value<T>(n.op) && !feeds_matmul(body, n))
        scalars.insert(id);
    }
    ir::Graph<T> all = convert(body, scalars);
    if (same_output_shapes(body, all)) return all; // the usual case: one rebuild
    // some constant gives an output its shape: one constant at a time, each kept as a Scalar
    // only if no output shrinks with it
    std::set<ir::NodeId> kept;
    ir::Graph<T> out = remove_dead_nodes(body);
    for (ir::NodeId id : scalars) {
      kept.insert(id);
      ir::Graph<T> next = convert(body, kept);
      if (same_output_shapes(body, next))
        out = std::move(next);
      else
        kept.erase(id);
    }
    return out;
  }

private:
  template <class T>
  static ir::Graph<T> convert(const ir::Graph<T>& body, const std::set<ir::NodeId>& scalars) {
    return rebuild(body,
                   [&](ir::Graph<T>& out, const ir::Node<T>& n,
                       std::span<const ir::Value>) -> std::optional<std::vector<ir::Value>> {
                     if (!scalars.contains(n.id)) return std::nullopt;
                     const auto& c = std::get<ir::Constant>(n.op);
                     const Shape ones(std::vector<Dim>(c.output.shape.rank(), 1));
                     return std::vector<ir::Value>{
                         out.scalar(c.output.type, *detail::uniform_value<T>(n.op), ones, n.name)};
                   });
  }
  template <class T> static bool same_output_shapes(const ir::Graph<T>& a, const ir::Graph<T>& b) {
    for (std::size_t i = 0; i < a.results().size(); ++i)
      if (a.type(a.node(a.results()[i]).inputs[0]).shape !=
          b.type(b.node(b.results()[i]).inputs[0]).shape)
        return false;
    return true;
  }
};

} // namespace snippets::passes
