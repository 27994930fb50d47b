// SPDX-License-Identifier: Apache-2.0
// snippets/passes/multiply_by_reciprocal.hpp: MultiplyByReciprocal, in the relaxed accuracy
// tier, turns a Divide whose divisor is the same along the whole innermost dimension (a
// LayerNorm's deviation, an RMSNorm's root mean square) into a Multiply by 1 / divisor, which
// ExtractLoopInvariants then computes once per row instead of dividing every element.
//
// x * RN(1/b) is within 1.5 ulp of x / b (the reciprocal's rounding and the product's), far
// inside the tier's 128-ulp bound; the standard tier keeps the division, whose result is the
// correctly rounded quotient. An exact variant (the product corrected by two FMAs, with a
// fallback to the division for the vectors where the correction may not hold) was measured
// slower than VDIVPS itself on a Zen 5 (an intrinsics model of bf16 LayerNorm over rows of
// 768: 25.8 against 30.0 GB/s), and was dropped.
// A quotient that is rounded to an integer next (Round, Floor, Ceiling, Convert: a quantization's
// Round(x / scale)) keeps its division: there one ulp at a tie would change the result by a step.
// Special values: b = 0 gives x * inf (inf or NaN as x / 0 does), b = inf gives x * 0 (0, or
// NaN for an infinite x, as x / inf); a subnormal b may overflow its reciprocal to inf where
// x / b was finite, and a b above 2^126 gives a subnormal reciprocal that loses bits: the
// relaxed tier accepts both.
#pragma once

#include "snippets/passes/lir_queries.hpp"
#include "snippets/passes/pass.hpp"
#include "snippets/passes/properties.hpp"

namespace snippets::passes {

struct MultiplyByReciprocal {
  using pass_tag = lir_pass_tag;
  static constexpr std::string_view name = "MultiplyByReciprocal";
  using before = Properties<property::LoopsMarked>;

  template <class T> void run(ir::LinearIR<T>& lir, PassContext<T>&) const {
    if (lir.kept_bits >= 24) return; // the standard tier
    std::vector<ir::Expression<T>*> divides;
    for (auto& e : lir)
      if (std::holds_alternative<ir::Divide>(e->op) && e->in_desc(1).shape.back() == 1 &&
          e->out_desc(0).shape.back() > 1 && !rounded(*e))
        divides.push_back(e.get());
    if (divides.empty()) return;
    // the 1 goes with the other Scalars, before the first computation
    auto first = lir.begin();
    while (first != lir.end() &&
           (holds_io(**first) || std::holds_alternative<ir::Scalar>((*first)->op)))
      ++first;
    const std::vector<Dim> ones(divides.front()->out_desc(0).shape.size(), 1);
    auto& one =
        lir.insert_node(first, ir::Scalar{{ElementType::f32, Shape(ones)}, 1.0}, {}, 1, {}, "one");
    one.out_desc(0).shape = ones;
    for (ir::Expression<T>* div : divides) {
      auto& r =
          lir.insert_node(lir.find(*div), ir::Divide{}, {&one.output(0), &div->input_connector(1)},
                          1, div->loop_ids, div->name + "/rcp");
      r.out_desc(0).shape = div->in_desc(1).shape;
      ir::PortConnector<T>* in[] = {&div->input_connector(0), &r.output(0)};
      lir.replace_with_node(*div, ir::Multiply{}, in);
    }
  }

private:
  /// Whether a consumer rounds the quotient to an integer (a quantization: Round(x / scale)),
  /// where one ulp less at a tie is one step less.
  template <class T> static bool rounded(const ir::Expression<T>& e) {
    for (const auto& use : e.output(0).consumers()) {
      const auto& op = use.owner().op;
      if (std::holds_alternative<ir::Round>(op) || std::holds_alternative<ir::Floor>(op) ||
          std::holds_alternative<ir::Ceiling>(op) || std::holds_alternative<ir::Convert>(op))
        return true;
    }
    return false;
  }
};

} // namespace snippets::passes
