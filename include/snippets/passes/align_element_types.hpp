// SPDX-License-Identifier: Apache-2.0
// snippets/passes/align_element_types.hpp: AlignElementTypes (the seed's precision
// alignment, data flow).
//
// Kernels compute in f32. This pass makes that explicit:
//  - every f16, bf16, i8 and u8 Parameter is followed by Convert(f32); Scalars and Constants
//    of those types become f32 holding the same (already rounded) values;
//  - an inner Convert to one of those types is followed by Convert(f32), so its rounding,
//    truncation and saturation are kept (one that only Results read is left as it is);
//  - an op on i8/u8 values is computed on their f32 values and, when its result is i8/u8,
//    followed by Convert to that type and back: exact, because these ops on integers of at
//    most 8 bits give results f32 holds exactly (or that truncate to the same integer), so the
//    Convert applies the integer semantics of ir/op_tags.hpp. Other ops (Power) keep their
//    integer inputs, and compile() rejects them;
//  - a MatMul of i8/u8 operands (an i32 product) multiplies their f32 values and is followed
//    by Convert(i32): the kernel still reads the bytes (LowerBrgemm takes the operand types
//    from the kernel's arguments) and sums them exactly in int32;
//  - a Result whose type was narrowed gets a Convert back to it.
// i32 values are left alone: f32 does not hold every i32, so integer arithmetic on i32 stays
// outside kernels, and an i32 input needs an explicit Convert. Boolean values are left alone,
// but for a boolean Scalar or Constant, whose values become 0 or 1 (any non-zero value is true,
// as the reference rounds them; a kernel would hold 0.5 as 0.5).
// The body's inputs, outputs and values are unchanged; only where the rounding happens is
// spelled out.
#pragma once

#include "snippets/passes/data_flow.hpp"
#include "snippets/passes/properties.hpp"

namespace snippets::passes {

namespace detail {
template <class Tag, class... Ops> inline constexpr bool one_of = (std::is_same_v<Tag, Ops> || ...);

/// Ops whose f32 result on i8/u8 operands, converted back to the integer type, is the integer
/// result (see the file comment).
template <class Tag>
inline constexpr bool exact_on_small_integers =
    one_of<Tag, ir::Abs, ir::Negative, ir::Relu, ir::Clamp, ir::Floor, ir::Ceiling, ir::Round,
           ir::Add, ir::Subtract, ir::Multiply, ir::Divide, ir::Maximum, ir::Minimum,
           ir::SquaredDifference, ir::FloorMod, ir::Mod, ir::PRelu, ir::Equal, ir::NotEqual,
           ir::Greater, ir::GreaterEqual, ir::Less, ir::LessEqual, ir::Select, ir::Slice>;
} // namespace detail

struct AlignElementTypes {
  using pass_tag = data_flow_pass_tag;
  static constexpr std::string_view name = "AlignElementTypes";
  using establishes = Properties<property::ComputesInF32>;

  /// The types computed in f32 and converted back where their values are formed.
  static constexpr bool widened(ElementType t) {
    return t == ElementType::f16 || t == ElementType::bf16 || t == ElementType::i8 ||
           t == ElementType::u8;
  }

  /// A value only Results read stays as it is (a Convert right before the Results is folded
  /// into their stores when the body is lowered).
  template <class T> static bool only_results(const ir::Graph<T>& body, const ir::Node<T>& n) {
    if (n.users.empty() || n.users[0].empty()) return false;
    for (const ir::Use& u : n.users[0])
      if (!ir::is<ir::Result>(body.node(u.node).op)) return false;
    return true;
  }

  template <class T> ir::Graph<T> run(const ir::Graph<T>& body) const {
    constexpr ElementType f32 = ElementType::f32, boolean = ElementType::boolean;
    auto small_int = [](ElementType t) { return t == ElementType::i8 || t == ElementType::u8; };
    return rebuild(
        body,
        [&](ir::Graph<T>& out, const ir::Node<T>& n,
            std::span<const ir::Value> in) -> std::optional<std::vector<ir::Value>> {
          auto widen = [&](ir::Value v) {
            return out.make(ir::Convert{f32}, {v}, n.name + "/f32")[0];
          };
          if (const auto* s = std::get_if<ir::Scalar>(&n.op); s && widened(s->output.type))
            return std::vector{
                out.scalar(f32, round_to(s->output.type, s->value), s->output.shape, n.name)};
          if (const auto* s = std::get_if<ir::Scalar>(&n.op); s && s->output.type == boolean)
            return std::vector{
                out.scalar(boolean, round_to(boolean, s->value), s->output.shape, n.name)};
          if (const auto* c = std::get_if<ir::Constant>(&n.op); c && c->output.type == boolean) {
            std::vector<double> values = c->values;
            for (double& v : values) v = round_to(boolean, v);
            return std::vector{out.constant(boolean, c->output.shape, std::move(values), n.name)};
          }
          if (const auto* c = std::get_if<ir::Constant>(&n.op); c && widened(c->output.type)) {
            std::vector<double> values = c->values;
            for (double& v : values) v = round_to(c->output.type, v);
            return std::vector{out.constant(f32, c->output.shape, std::move(values), n.name)};
          }
          if (ir::is<ir::Result>(n.op)) {
            const ElementType want = body.type(n.inputs[0]).type;
            if (out.type(in[0]).type == want) return std::nullopt;
            const auto back = out.make(ir::Convert{want}, {in[0]},
                                       n.name + "/" + std::string(to_string(want)))[0];
            out.make(n.op, {back}, n.name); // the Result as it was (its layout too)
            return std::vector<ir::Value>{};
          }
          if (ir::is<ir::Parameter>(n.op) || ir::is<ir::Convert>(n.op)) {
            if (!widened(n.outputs[0].type) || only_results(body, n)) return std::nullopt;
            return std::vector{widen(out.make(n.op, in, n.name)[0])};
          }
          // an integer product: computed on the f32 values of its bytes (exact in the
          // reference's double; LowerBrgemm multiplies the bytes themselves in int32), its i32
          // value formed by a Convert
          if (ir::is<ir::MatMul>(n.op) && n.outputs[0].type == ElementType::i32)
            return out.make(ir::Convert{ElementType::i32}, {out.make(n.op, in, n.name)[0]},
                            n.name + "/i32");
          // an op on i8/u8 values
          bool on_small_int = n.outputs.size() == 1 && small_int(n.outputs[0].type);
          for (const ir::Output& o : n.inputs) on_small_int |= small_int(body.type(o).type);
          if (!on_small_int) return std::nullopt;
          const bool exact = std::visit(
              [](const auto& tag) {
                return detail::exact_on_small_integers<std::decay_t<decltype(tag)>>;
              },
              n.op);
          std::vector<ir::Value> args(in.begin(), in.end());
          if (!exact) { // back to the integer types: compile() names the op
            for (std::size_t i = 0; i < args.size(); ++i)
              if (const ElementType t = body.type(n.inputs[i]).type; out.type(args[i]).type != t)
                args[i] = out.make(ir::Convert{t}, {args[i]}, n.name + "/in")[0];
            return out.make(n.op, args, n.name);
          }
          const ir::Value v = out.make(n.op, args, n.name)[0];
          if (!small_int(n.outputs[0].type)) return std::vector{v};
          const ElementType t = n.outputs[0].type;
          return std::vector{
              widen(out.make(ir::Convert{t}, {v}, n.name + "/" + std::string(to_string(t)))[0])};
        });
  }
};

} // namespace snippets::passes
