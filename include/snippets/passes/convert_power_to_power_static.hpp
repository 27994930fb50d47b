// SPDX-License-Identifier: Apache-2.0
// snippets/passes/convert_power_to_power_static.hpp: ConvertPowerToPowerStatic (data flow).
//
// Power(x, Scalar e) becomes PowerStatic{e}(x), which the emitter expands into multiplies
// (and a square root for half exponents) instead of a general pow; the exponent Scalar goes
// away with it. The rewrite is skipped
// when the Scalar would widen x's shape (a Scalar of higher rank than x).
#pragma once

#include "snippets/passes/data_flow.hpp"
#include "snippets/passes/properties.hpp"

namespace snippets::passes {

struct ConvertPowerToPowerStatic {
  using pass_tag = data_flow_pass_tag;
  static constexpr std::string_view name = "ConvertPowerToPowerStatic";
  using needs = Properties<property::ConstantsAsScalars>;
  using establishes = Properties<property::PowersStatic>;

  template <class T> ir::Graph<T> run(const ir::Graph<T>& body) const {
    // the exponent Scalar is dead afterwards: a second copy drops it
    return remove_dead_nodes(rebuild(
        body,
        [&](ir::Graph<T>& out, const ir::Node<T>& n,
            std::span<const ir::Value> in) -> std::optional<std::vector<ir::Value>> {
          if (!ir::is<ir::Power>(n.op)) return std::nullopt;
          const auto* e = std::get_if<ir::Scalar>(&out.node(in[1]).op);
          if (!e || out.type(in[0]).shape != n.outputs[0].shape) return std::nullopt;
          // a backend with a general Power keeps it for exponents its PowerStatic cannot do
          if (T::template fusable<ir::Power> && !(T::template fusable<ir::PowerStatic> &&
                                                  backend_supports<T>(ir::PowerStatic{e->value})))
            return std::nullopt;
          return out.make(ir::PowerStatic{e->value}, {in[0]}, n.name);
        }));
  }
};

} // namespace snippets::passes
