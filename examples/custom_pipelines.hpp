// SPDX-License-Identifier: Apache-2.0
// Pipelines configured at compile time: one pass removed, one replaced, one data-flow pass
// added. Each is a type alias over the default pipelines, checked for order when it compiles
// (a pass placed before what it needs does not build), and each reaches every kernel kind,
// MatMul bodies and the kernels of a whole Program included (custom_pipelines.cpp,
// tests/test_custom_pipelines.cpp).
#pragma once

#include <algorithm>
#include <optional>
#include <span>
#include <vector>

#include "snippets/snippets.hpp"

namespace custom_pipelines {
namespace ir = snippets::ir;
namespace passes = snippets::passes;

/// 1. Without domain collapsing: a [64, 300] elementwise body keeps two loops (rows and
/// columns) where OptimizeDomain walks 19200 elements in one, which the LIR dump then shows.
/// OptimizeDomain establishes no property, so removing it is legal.
using NoDomainCollapse = passes::remove_t<passes::DefaultLowering, passes::OptimizeDomain>;

/// 2. A different unroll policy, in place of InsertSpecificIterations: short rows are not
/// unrolled (the copies would run once, if at all, and only grow the code); long rows, and
/// loops whose length is known only at run time, get 8 copies. Deriving from the replaced
/// pass keeps its declared properties (needs, establishes, invalidates), so the pipeline still
/// checks.
struct UnrollByRowLength : passes::InsertSpecificIterations {
  static constexpr std::string_view name = "UnrollByRowLength";

  template <class T> void run(ir::LinearIR<T>& lir, passes::PassContext<T>& ctx) const {
    bool long_rows = true;
    for (const auto& loop : lir.loops().loops()) // the innermost loops step by whole vectors
      if (loop.increment == ctx.config.lanes && !loop.runtime_work_amount)
        long_rows = long_rows && loop.work_amount >= 16 * ctx.config.lanes;
    const int saved = ctx.config.unroll;
    ctx.config.unroll = long_rows ? 8 : 1;
    passes::InsertSpecificIterations::run(lir, ctx);
    ctx.config.unroll = saved;
  }
};
using MyUnrolling =
    passes::replace_t<passes::DefaultLowering, passes::InsertSpecificIterations, UnrollByRowLength>;

/// 3. An algebraic rewrite on the Subgraph body: x * 1 -> x, when x already has the product's
/// shape and type (a one that broadcasts x stays). It reads the shapes of the constants, which
/// ConvertConstantsToScalars drops, so it declares that it runs before that pass.
struct RemoveMultiplyByOne {
  using pass_tag = passes::data_flow_pass_tag;
  static constexpr std::string_view name = "RemoveMultiplyByOne";
  using before = passes::Properties<passes::property::ConstantsAsScalars>;

  template <class T> ir::Graph<T> run(const ir::Graph<T>& body) const {
    auto is_one = [&](ir::Output o) {
      const ir::Op<T>& op = body.node(o.node).op;
      if (const auto* s = std::get_if<ir::Scalar>(&op)) return s->value == 1.0;
      const auto* c = std::get_if<ir::Constant>(&op);
      return c && !c->values.empty() &&
             std::ranges::all_of(c->values, [](double v) { return v == 1.0; });
    };
    return passes::rebuild(
        body,
        [&](ir::Graph<T>&, const ir::Node<T>& n,
            std::span<const ir::Value> in) -> std::optional<std::vector<ir::Value>> {
          if (!ir::is<ir::Multiply>(n.op)) return std::nullopt;
          for (std::size_t keep : {0u, 1u})
            if (is_one(n.inputs[1 - keep]) && body.type(n.inputs[keep]) == n.outputs[0])
              return std::vector<ir::Value>{in[keep]};
          return std::nullopt;
        });
  }
};
using MyDataFlow = passes::insert_before_t<passes::DefaultDataFlow,
                                           passes::ConvertConstantsToScalars, RemoveMultiplyByOne>;

/// Counts what a pipeline left in a Linear IR.
template <class Op, class T> int count(const ir::LinearIR<T>& lir) {
  return static_cast<int>(std::count_if(
      lir.begin(), lir.end(), [](const auto& e) { return std::holds_alternative<Op>(e->op); }));
}

} // namespace custom_pipelines
