// SPDX-License-Identifier: Apache-2.0
// snippets/passes/optimize_domain.hpp: OptimizeDomain collapses dimensions that need no loop
// of their own.
//
// Two adjacent domain dimensions merge when every kernel argument is either full in both or
// broadcast (1) in both: then walking them as one dimension touches the same elements in the
// same order. Dimensions of extent 1 are dropped. [1,16,29,7] with a [1,16,29,1] input
// becomes [464, 7]; a plain elementwise op on [8,3,224,224] becomes [1204224]. An argument
// with a memory order (a strided read, PortDescriptor::layout) that is full in both must
// also hold them next to each other in memory, outer one first; its order is collapsed too.
// An argument that is a part of a larger tensor (PortDescriptor::memory, a folded Slice) keeps
// a dimension where it is not whole apart from the one before it, and its memory extents are
// collapsed alike.
// Reductions count as arguments (their outputs, 1 along the reduced dimensions). They reduce
// the last k dimensions (the same k for all, passes/decompose_softmax.hpp: row_axes): those
// are a row, merged by the same rule among themselves but never with the dimensions before
// ([2,3,4,5] reduced over the last two: [6, 20]; with a [4,1] scale along the row: [6, 4, 5],
// a row of two dimensions, LinearIR::row_dims). A domain with reductions keeps a dimension
// before the row: the loops of the row walk it, the outer one the rows (and is the one the
// threads split).
// Reductions over middle axes (LinearIR::kept_axes: they keep the last ones) make a row of the
// reduced dimensions, merged alike, and of the kept ones, which must merge into one (else
// [snippets.compile.reduce_axis]): [2,64,56,56] summed over the 64 is [2, 64, 3136], rows of
// [64, 3136] whose last dimension is columns (LinearIR::columns; passes/tile_columns.hpp).
// A dynamic LIR keeps its domain: the run-time configurator collapses the actual shapes the
// same way (runtime/runtime_config.hpp), so the kernel's loop nest fits every shape; with
// reductions it too gets a leading 1 if it has one dimension only.
// @post lir.domain and every port shape have the collapsed rank (at least 1).
#pragma once

#include <algorithm>

#include "snippets/passes/decompose_softmax.hpp"
#include "snippets/passes/lir_queries.hpp"
#include "snippets/passes/pass.hpp"
#include "snippets/passes/properties.hpp"

namespace snippets::passes {

struct OptimizeDomain {
  using pass_tag = lir_pass_tag;
  static constexpr std::string_view name = "OptimizeDomain";
  using before = Properties<property::LoopsMarked>;

  template <class T> void run(ir::LinearIR<T>& lir, PassContext<T>&) const {
    if (lir.dynamic) return add_row_dimension(lir);
    const std::vector<Dim> dom = lir.domain;
    std::vector<ir::PortDescriptor> io; // the kernel arguments and the row reductions
    bool reductions = false;
    std::size_t row_axes = 1; // the trailing dimensions a row holds (convert_to_linear_ir: one
                              // count for every reduction)
    for (auto& e : lir) {
      if (holds_io(*e))
        io.push_back(std::holds_alternative<ir::Parameter>(e->op) ? e->out_desc(0) : e->in_desc(0));
      if (is_reduction(*e)) {
        io.push_back(e->out_desc(0)), reductions = true;
        row_axes = std::min(reduced_axes(*e), dom.size());
      }
    }
    // groups[g] = the original dims merged into new dim g
    std::vector<std::vector<std::size_t>> groups;
    // a dimension along which a part is not its whole tensor: its memory extent must stay
    auto partial = [&](std::size_t d) {
      return std::any_of(io.begin(), io.end(), [&](const ir::PortDescriptor& desc) {
        return !desc.memory.empty() && desc.memory[d] != desc.shape[d];
      });
    };
    // walking `prev` and then `d` as one dimension touches every argument's elements in order
    auto mergeable = [&](std::size_t prev, std::size_t d) {
      if (partial(d)) return false;
      for (const auto& desc : io) {
        const auto& s = desc.shape;
        const bool full_prev = s[prev] == dom[prev], full_d = s[d] == dom[d];
        const bool one_prev = s[prev] == 1, one_d = s[d] == 1;
        if (!((full_prev && full_d) || (one_prev && one_d))) return false;
        if (full_d && !one_d && !desc.layout.empty() && !next_in_memory(desc, prev, d))
          return false;
      }
      return true;
    };
    const std::size_t kept = reductions ? std::min(lir.kept_axes, dom.size() - row_axes) : 0;
    const std::size_t row_end = dom.size() - kept,
                      row_begin = reductions ? row_end - row_axes : dom.size();
    for (std::size_t d = 0; d < row_begin; ++d) {
      if (dom[d] == 1 && !partial(d)) continue;
      if (!groups.empty() && mergeable(groups.back().back(), d))
        groups.back().push_back(d);
      else
        groups.push_back({d});
    }
    std::size_t row_groups = 1;
    if (reductions) { // the row: its dimensions merged where every argument allows it
      const std::size_t first = groups.size();
      auto segment = [&](std::size_t begin, std::size_t end) {
        const std::size_t start = groups.size();
        for (std::size_t d = begin; d < end; ++d) {
          if (dom[d] == 1 && !partial(d)) continue;
          if (groups.size() > start && mergeable(groups.back().back(), d))
            groups.back().push_back(d);
          else
            groups.push_back({d});
        }
        return groups.size() - start;
      };
      if (segment(row_begin, row_end) == 0) groups.push_back({row_end - 1});
      const std::size_t columns = segment(row_end, dom.size()); // the kept axes: one vector
      if (columns > 1)
        raise("snippets.compile.reduce_axis",
              "the reductions keep the last " + std::to_string(kept) +
                  " axes, which an input or output walks apart (broadcast along some of them, "
                  "or a strided layout); a kernel reduces columns of one run of kept axes: "
                  "reshape that argument, or reduce outside the subgraph");
      lir.columns = columns == 1;
      row_groups = groups.size() - first;
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
    // a memory order: the groups ordered by where their first non-1 dimension sits
    auto collapse_layout = [&](const ir::PortDescriptor& desc) {
      std::vector<std::size_t> out;
      if (desc.layout.empty()) return out;
      std::vector<std::size_t> pos(desc.layout.size());
      for (std::size_t p = 0; p < desc.layout.size(); ++p) pos[desc.layout[p]] = p;
      std::vector<std::size_t> key;
      for (const auto& g : groups) {
        std::size_t k = pos[g.front()];
        for (std::size_t d : g)
          if (desc.shape[d] != 1) {
            k = pos[d];
            break;
          }
        key.push_back(k);
        out.push_back(out.size());
      }
      std::sort(out.begin(), out.end(),
                [&](std::size_t a, std::size_t b) { return key[a] < key[b]; });
      return out;
    };
    auto collapse_desc = [&](ir::PortDescriptor& desc) {
      desc.layout = collapse_layout(desc);
      desc.shape = collapse(desc.shape);
      if (!desc.memory.empty()) desc.memory = collapse(desc.memory);
      if (!reductions || lir.columns || desc.shape.size() >= row_groups + 1) return;
      desc.shape.insert(desc.shape.begin(), 1); // one row
      if (!desc.memory.empty()) desc.memory.insert(desc.memory.begin(), 1);
      if (desc.layout.empty()) return;
      for (std::size_t& d : desc.layout) ++d;
      desc.layout.insert(desc.layout.begin(), 0);
    };
    lir.domain = collapse(dom);
    lir.row_dims = row_groups;
    if (reductions && !lir.columns && lir.domain.size() < row_groups + 1)
      lir.domain.insert(lir.domain.begin(), 1); // (TileColumns adds the blocks of columns)
    for (auto& e : lir) {
      for (std::size_t i = 0; i < e->num_inputs(); ++i) collapse_desc(e->in_desc(i));
      for (std::size_t i = 0; i < e->num_outputs(); ++i) collapse_desc(e->out_desc(i));
      if (is_reduction(*e))
        set_row_axes(*e, {row_groups - (lir.columns ? 1 : 0), lir.columns ? 1u : 0u});
    }
  }

private:
  template <class T> static std::size_t reduced_axes(const ir::Expression<T>& e) {
    return std::visit(
        [](const auto& tag) -> std::size_t {
          if constexpr (requires { tag.axes; })
            return tag.axes.size();
          else
            return 1;
        },
        e.op);
  }
  template <class T> static void set_row_axes(ir::Expression<T>& e, const RowForm& form) {
    std::visit(
        [&](auto& tag) {
          if constexpr (requires { tag.axes; }) tag.axes = form.axes();
        },
        e.op);
  }

  /// A dynamic domain of one dimension with reductions: [1, W], one row.
  template <class T> static void add_row_dimension(ir::LinearIR<T>& lir) {
    bool reductions = false;
    for (auto& e : lir) reductions = reductions || is_reduction(*e);
    if (!reductions || lir.domain.size() >= 2) return;
    lir.domain.insert(lir.domain.begin(), 1);
    auto widen = [](ir::PortDescriptor& desc) {
      desc.shape.insert(desc.shape.begin(), 1);
      SNIPPETS_ASSERT(desc.layout.empty() && desc.memory.empty()) << "dynamic kernels are planar";
    };
    for (auto& e : lir) {
      for (std::size_t i = 0; i < e->num_inputs(); ++i) widen(e->in_desc(i));
      for (std::size_t i = 0; i < e->num_outputs(); ++i) widen(e->out_desc(i));
    }
  }

  /// Whether dimension `d` follows `prev` in `desc`'s memory order, past dimensions of 1.
  static bool next_in_memory(const ir::PortDescriptor& desc, std::size_t prev, std::size_t d) {
    const auto& order = desc.layout;
    auto it = std::find(order.begin(), order.end(), prev);
    for (++it; it != order.end() && desc.shape[*it] == 1 && *it != d; ++it) {
    }
    return it != order.end() && *it == d;
  }
};

} // namespace snippets::passes
