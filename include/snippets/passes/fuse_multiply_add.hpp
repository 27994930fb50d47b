// SPDX-License-Identifier: Apache-2.0
// snippets/passes/fuse_multiply_add.hpp: FuseMultiplyAdd contracts a Multiply whose only
// consumer is an Add into one FusedMulAdd (a * b + c, one rounding: never less accurate).
// It runs before InsertBroadcastMove, so broadcast operands get their moves as usual; the
// Multiply must already produce the Add's shape. Off when LoweringConfig::fma is false.
#pragma once

#include "snippets/passes/pass.hpp"
#include "snippets/passes/properties.hpp"

namespace snippets::passes {

struct FuseMultiplyAdd {
  using pass_tag = lir_pass_tag;
  static constexpr std::string_view name = "FuseMultiplyAdd";
  using before = Properties<property::BroadcastsExplicit>;

  template <class T> void run(ir::LinearIR<T>& lir, PassContext<T>& ctx) const {
    if (!ctx.config.fma) return;
    std::vector<ir::Expression<T>*> adds;
    for (auto& e : lir)
      if (std::holds_alternative<ir::Add>(e->op)) adds.push_back(e.get());
    for (auto* add : adds) {
      for (std::size_t i = 0; i < 2; ++i) {
        auto& mul = add->input_expr(i);
        if (!std::holds_alternative<ir::Multiply>(mul.op) || mul.output(0).num_consumers() != 1 ||
            mul.loop_ids != add->loop_ids || mul.out_desc(0).shape != add->out_desc(0).shape)
          continue;
        ir::PortConnector<T>* in[] = {&mul.input_connector(0), &mul.input_connector(1),
                                      &add->input_connector(1 - i)};
        lir.replace_with_node(*add, ir::FusedMulAdd{}, in);
        lir.erase(mul);
        break;
      }
    }
  }
};

} // namespace snippets::passes
