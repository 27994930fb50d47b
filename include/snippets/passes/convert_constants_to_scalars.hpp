// SPDX-License-Identifier: Apache-2.0
// snippets/passes/convert_constants_to_scalars.hpp: ConvertConstantsToScalars (data flow).
//
// A Constant whose values are all equal becomes a Scalar of its type, with a shape of 1s of
// the Constant's rank (the seed's [1,1,1,1]): the kernel keeps it in a register instead of
// reading memory. Constants with different values are left alone (they are kernel inputs),
// and so are the operands of a MatMul (its weights keep their shape: passes/lower_brgemm.hpp).
#pragma once

#include "snippets/passes/data_flow.hpp"

namespace snippets::passes {

template <class T> bool feeds_matmul(const ir::Graph<T>& g, const ir::Node<T>& n) {
  for (const ir::Use& u : n.users.at(0))
    if (ir::is<ir::MatMul>(g.node(u.node).op)) return true;
  return false;
}

struct ConvertConstantsToScalars {
  using pass_tag = data_flow_pass_tag;
  static constexpr std::string_view name = "ConvertConstantsToScalars";

  template <class T> ir::Graph<T> run(const ir::Graph<T>& body) const {
    return rebuild(body,
                   [&body](ir::Graph<T>& out, const ir::Node<T>& n,
                           std::span<const ir::Value>) -> std::optional<std::vector<ir::Value>> {
                     const auto* c = std::get_if<ir::Constant>(&n.op);
                     const auto value = detail::uniform_value<T>(n.op);
                     if (!c || !value || feeds_matmul(body, n)) return std::nullopt;
                     const Shape ones(std::vector<Dim>(c->output.shape.rank(), 1));
                     return std::vector<ir::Value>{
                         out.scalar(c->output.type, *value, ones, n.name)};
                   });
  }
};

} // namespace snippets::passes
