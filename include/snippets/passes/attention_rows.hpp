// SPDX-License-Identifier: Apache-2.0
// snippets/passes/attention_rows.hpp: what lies between the two products of an attention body,
// as LowerBrgemm (passes/lower_brgemm.hpp) finds it in the LIR of the canonical body:
//  - the Softmax of the first product's value, in the six ops of DecomposeSoftmax
//    (match_softmax);
//  - in quantized attention (OpenVINO's MHAQuant), the quantization of the probabilities that
//    the second, integer, product reads as its u8 or i8 A: ONNX QuantizeLinear with a scale and
//    a zero point of one value each, in the ops of DecomposeQuantization and AlignElementTypes,
//    [Convert_f32](Convert_to(Round(p / scale) [+ zero])) (match_quantized_probabilities).
// SoftmaxRows computes both on the rows of a block (ir/lowered_ops.hpp).
#pragma once

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "snippets/error.hpp"
#include "snippets/ir/linear_ir.hpp"

namespace snippets::passes {

/// The decomposed Softmax of `x`: ReduceMax, Subtract, Exp, ReduceSum, Divide(1, sum), Multiply.
template <class T> struct SoftmaxOps {
  ir::Expression<T>* x = nullptr;
  std::vector<ir::Expression<T>*> ops; // max, sub, exp, sum, rcp, mul (its value)
};

/// The quantization of the probabilities: its ops (the last one the f32 value the second product
/// reads as A), and its scale, zero point and type.
template <class T> struct QuantizedProbabilities {
  std::vector<ir::Expression<T>*> ops; // div, round, [add], convert to u8/i8, [convert to f32]
  float scale = 1, zero = 0;
  ElementType type = ElementType::u8;
};

/// ReduceMax(x) -> Subtract(x, max) -> Exp -> ReduceSum -> Divide(1, sum) -> Multiply.
/// @throws [snippets.compile.unsupported_matmul] when the reduction at `max` is not that.
template <class T> SoftmaxOps<T> match_softmax(ir::Expression<T>& max) {
  using E = ir::Expression<T>;
  auto fail = [&](const std::string& why) {
    raise("snippets.compile.unsupported_matmul", std::string(max.op_name()) + " '" + max.name +
                                                     "' starts a row reduction that is not " + why);
  };
  auto only_user = [&](E& e) -> E& {
    if (e.output(0).num_consumers() != 1)
      fail("a Softmax of the product; a MatMul kernel fuses a Softmax only");
    return (*e.output(0).consumers().begin()).owner();
  };
  auto expect = [&](bool ok) {
    if (!ok) fail("a Softmax of the product");
  };
  SoftmaxOps<T> s;
  s.x = &max.input_expr(0);
  E& sub = only_user(max);
  expect(std::holds_alternative<ir::Subtract>(sub.op) && &sub.input_expr(0) == s.x);
  E& exp = only_user(sub);
  expect(std::holds_alternative<ir::Exp>(exp.op) && exp.output(0).num_consumers() == 2);
  E* sum = nullptr;
  for (const auto& u : exp.output(0).consumers())
    if (std::holds_alternative<ir::ReduceSum>(u.owner().op)) sum = &u.owner();
  expect(sum != nullptr);
  E& rcp = only_user(*sum);
  const auto* one = std::get_if<ir::Scalar>(&rcp.input_expr(0).op);
  expect(std::holds_alternative<ir::Divide>(rcp.op) && one && one->value == 1.0);
  E& mul = only_user(rcp);
  expect(std::holds_alternative<ir::Multiply>(mul.op) &&
         (&mul.input_expr(0) == &exp || &mul.input_expr(1) == &exp));
  expect(s.x->output(0).num_consumers() == 2); // the max and the subtraction
  s.ops = {&max, &sub, &exp, sum, &rcp, &mul};
  return s;
}

/// The quantization of the probabilities `p` (the Softmax's value) read by a MatMul as its A
/// and by nothing else: Divide(p, scale) -> Round (half to even) -> [Add(zero)] ->
/// Convert(u8 or i8) -> [Convert(f32)] -> MatMul, scale and zero Scalars (a finite, nonzero
/// scale). Nothing when the ops after `p` are not that (LowerBrgemm then names them).
template <class T>
std::optional<QuantizedProbabilities<T>> match_quantized_probabilities(ir::Expression<T>& p) {
  using E = ir::Expression<T>;
  auto only_user = [](E& e) -> E* {
    return e.output(0).num_consumers() == 1 ? &(*e.output(0).consumers().begin()).owner() : nullptr;
  };
  auto scalar = [](E& e, std::size_t i) -> std::optional<double> {
    if (const auto* s = std::get_if<ir::Scalar>(&e.input_expr(i).op)) return s->value;
    return std::nullopt;
  };
  QuantizedProbabilities<T> q;
  E* div = only_user(p);
  if (!div || !std::holds_alternative<ir::Divide>(div->op) || &div->input_expr(0) != &p)
    return std::nullopt;
  const auto scale = scalar(*div, 1);
  if (!scale || !std::isfinite(*scale) || *scale == 0) return std::nullopt;
  E* round = only_user(*div);
  const auto* r = round ? std::get_if<ir::Round>(&round->op) : nullptr;
  if (!r || r->mode != ir::RoundMode::half_to_even) return std::nullopt;
  q.ops = {div, round};
  E* next = only_user(*round);
  if (next && std::holds_alternative<ir::Add>(next->op) && &next->input_expr(0) == round) {
    const auto zero = scalar(*next, 1);
    if (!zero) return std::nullopt;
    q.zero = to_f32(*zero);
    q.ops.push_back(next);
    next = only_user(*next);
  }
  const auto* to = next ? std::get_if<ir::Convert>(&next->op) : nullptr;
  if (!to || !is_byte_integer(to->to)) return std::nullopt;
  q.ops.push_back(next);
  E* mm = only_user(*next);
  if (const auto* f32 = mm ? std::get_if<ir::Convert>(&mm->op) : nullptr;
      f32 && f32->to == ElementType::f32) {
    q.ops.push_back(mm);
    mm = only_user(*mm);
  }
  if (!mm || !std::holds_alternative<ir::MatMul>(mm->op) || &mm->input_expr(0) != q.ops.back())
    return std::nullopt;
  q.scale = to_f32(*scale);
  q.type = to->to;
  return q;
}

} // namespace snippets::passes
