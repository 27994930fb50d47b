// snippets/passes/align_element_types.hpp: AlignElementTypes (the seed's precision
// alignment, data flow).
//
// Kernels compute floating point in f32. This pass makes that explicit: every f16/bf16
// Parameter is followed by Convert(f32), f16/bf16 Scalars and Constants become f32 holding
// the same (already rounded) values, an inner Convert to f16/bf16 is followed by Convert(f32)
// (so its rounding is kept), and a Result whose type was f16/bf16 gets a Convert back to it.
// The body's inputs, outputs and values are unchanged; only where the rounding happens is
// spelled out. Integer and boolean values are left alone.
#pragma once

#include "snippets/passes/data_flow.hpp"

namespace snippets::passes {

struct AlignElementTypes {
  using pass_tag = data_flow_pass_tag;
  static constexpr std::string_view name = "AlignElementTypes";

  template <class T> ir::Graph<T> run(const ir::Graph<T>& body) const {
    constexpr ElementType f32 = ElementType::f32;
    auto narrow = [](ElementType t) { return t == ElementType::f16 || t == ElementType::bf16; };
    return rebuild(
        body,
        [&](ir::Graph<T>& out, const ir::Node<T>& n,
            std::span<const ir::Value> in) -> std::optional<std::vector<ir::Value>> {
          auto widen = [&](ir::Value v) {
            return out.make(ir::Convert{f32}, {v}, n.name + "/f32")[0];
          };
          if (const auto* s = std::get_if<ir::Scalar>(&n.op); s && narrow(s->output.type))
            return std::vector{
                out.scalar(f32, round_to(s->output.type, s->value), s->output.shape, n.name)};
          if (const auto* c = std::get_if<ir::Constant>(&n.op); c && narrow(c->output.type)) {
            std::vector<double> values = c->values;
            for (double& v : values) v = round_to(c->output.type, v);
            return std::vector{out.constant(f32, c->output.shape, std::move(values), n.name)};
          }
          if (ir::is<ir::Result>(n.op)) {
            const ElementType want = body.type(n.inputs[0]).type;
            if (out.type(in[0]).type == want) return std::nullopt;
            const auto back = out.make(ir::Convert{want}, {in[0]},
                                       n.name + "/" + std::string(to_string(want)))[0];
            out.result(back, n.name);
            return std::vector<ir::Value>{};
          }
          if (!ir::is<ir::Parameter>(n.op) && !ir::is<ir::Convert>(n.op)) return std::nullopt;
          if (!narrow(n.outputs[0].type)) return std::nullopt;
          const auto v = out.make(n.op, in, n.name)[0];
          return std::vector{widen(v)};
        });
  }
};

} // namespace snippets::passes
