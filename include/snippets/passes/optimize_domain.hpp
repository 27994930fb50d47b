// snippets/passes/optimize_domain.hpp: OptimizeDomain collapses dimensions that need no loop
// of their own.
//
// Two adjacent domain dimensions merge when every kernel argument is either full in both or
// broadcast (1) in both: then walking them as one dimension touches the same elements in the
// same order. Dimensions of extent 1 are dropped. [1,16,29,7] with a [1,16,29,1] input
// becomes [464, 7]; a plain elementwise op on [8,3,224,224] becomes [1204224].
// Reductions over the innermost dimension count as arguments (their [..., 1] outputs), and a
// domain with reductions keeps at least two dimensions: the innermost loop walks a row, the
// outer one the rows (and is the one the threads split).
// A dynamic LIR keeps its domain: the run-time configurator collapses the actual shapes the
// same way (runtime/runtime_config.hpp), so the kernel's loop nest fits every shape.
// @post lir.domain and every port shape have the collapsed rank (at least 1).
#pragma once

#include "snippets/passes/lir_queries.hpp"
#include "snippets/passes/pass.hpp"

namespace snippets::passes {

struct OptimizeDomain {
  using pass_tag = lir_pass_tag;
  static constexpr std::string_view name = "OptimizeDomain";

  template <class T> Preserved run(ir::LinearIR<T>& lir, PassContext<T>&) const {
    if (lir.dynamic) return Preserved::all;
    const std::vector<Dim> dom = lir.domain;
    std::vector<std::vector<Dim>> io; // shapes of the kernel arguments and row reductions
    bool reductions = false;
    for (auto& e : lir) {
      if (holds_io(*e))
        io.push_back(std::holds_alternative<ir::Parameter>(e->op) ? e->out_desc(0).shape
                                                                  : e->in_desc(0).shape);
      if (is_reduction(*e)) io.push_back(e->out_desc(0).shape), reductions = true;
    }
    // groups[g] = the original dims merged into new dim g
    std::vector<std::vector<std::size_t>> groups;
    for (std::size_t d = 0; d < dom.size(); ++d) {
      const bool row = reductions && d + 1 == dom.size(); // stays a dimension of its own
      if (dom[d] == 1 && !row) continue;
      bool merge = !groups.empty() && !row;
      if (merge) {
        const std::size_t prev = groups.back().back();
        for (const auto& s : io) {
          const bool full_prev = s[prev] == dom[prev], full_d = s[d] == dom[d];
          const bool one_prev = s[prev] == 1, one_d = s[d] == 1;
          if (!((full_prev && full_d) || (one_prev && one_d))) merge = false;
        }
      }
      if (merge)
        groups.back().push_back(d);
      else
        groups.push_back({d});
    }
    if (groups.empty()) groups.push_back({dom.size() - 1}); // a one-element domain
    auto collapse = [&](const std::vector<Dim>& s) {
      std::vector<Dim> out;
      for (const auto& g : groups) {
        Dim n = 1;
        for (std::size_t d : g) n *= s[d];
        out.push_back(n);
      }
      return out;
    };
    auto reshape = [&](const std::vector<Dim>& s) {
      std::vector<Dim> out = collapse(s);
      if (reductions && out.size() < 2) out.insert(out.begin(), 1); // one row
      return out;
    };
    lir.domain = reshape(dom);
    for (auto& e : lir) {
      for (std::size_t i = 0; i < e->num_inputs(); ++i)
        e->in_desc(i).shape = reshape(e->in_desc(i).shape);
      for (std::size_t i = 0; i < e->num_outputs(); ++i)
        e->out_desc(i).shape = reshape(e->out_desc(i).shape);
    }
    return Preserved::none;
  }
};

} // namespace snippets::passes
