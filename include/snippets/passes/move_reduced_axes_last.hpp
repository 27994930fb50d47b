// SPDX-License-Identifier: Apache-2.0
// snippets/passes/move_reduced_axes_last.hpp: MoveReducedAxesLast (data flow, on a model), a
// reduction over axes that are not the last ones of its input written as one over the last
// ones, the form a kernel computes (passes/decompose_softmax.hpp: row_axes):
//
//   ReduceX(x, axes S)  ->  Reshape(ReduceX(Transpose(x, perm), the last |S| axes, keep_dims))
//
// perm lists the other axes in their order, then S in its order. The reduced tensor holds the
// same values in the same order either way (its reduced axes have extent 1 and the others keep
// their order), so the Reshape to the op's shape (S kept as 1, or dropped) only renames it.
// The tokenizer takes the Transpose as the first op on a Subgraph input, folded into the
// kernel's loads (FuseTransposeIntoParameter gathers x along S), and the reduction as the
// kernel's row; the Reshape of the small result is a Program's host step. A sum over the channels
// of NCHW, or ONNX MeanVarianceNormalization's default axes [0, 2, 3], so run in kernels instead
// of the reference interpreter.
// Left alone: reductions over the last axes already, inputs with dynamic dimensions (the
// gather and the Reshape need static shapes), rank < 2, reductions the backend does not fuse,
// and Softmax (its output would need the transposition back: a copy of the whole tensor).
// A Program runs it on its model before the tokenizer.
#pragma once

#include "snippets/passes/data_flow.hpp"
#include "snippets/passes/decompose_softmax.hpp"
#include "snippets/passes/properties.hpp"

namespace snippets::passes {

struct MoveReducedAxesLast {
  using pass_tag = data_flow_pass_tag;
  static constexpr std::string_view name = "MoveReducedAxesLast";

  /// Whether `g` holds a reduction this pass rewrites (a Program skips the copy otherwise).
  template <class T> static bool finds_candidates(const ir::Graph<T>& g) {
    for (ir::NodeId id = 0; id < g.size(); ++id)
      if (candidate(g, g.node(id))) return true;
    return false;
  }

  template <class T> ir::Graph<T> run(const ir::Graph<T>& model) const {
    return rebuild(
        model,
        [&](ir::Graph<T>& out, const ir::Node<T>& n,
            std::span<const ir::Value> in) -> std::optional<std::vector<ir::Value>> {
          if (!candidate(model, n)) return std::nullopt;
          return std::visit(
              [&](const auto& tag) -> std::optional<std::vector<ir::Value>> {
                if constexpr (ir::reduction<std::decay_t<decltype(tag)>>) {
                  const std::size_t rank = model.type(n.inputs[0]).shape.rank();
                  const std::vector<bool> reduced = axis_mask(tag.axes, rank, n.describe());
                  std::vector<std::size_t> perm;
                  for (const bool last : {false, true})
                    for (std::size_t d = 0; d < rank; ++d)
                      if (reduced[d] == last) perm.push_back(d);
                  const auto k = std::int64_t(std::count(reduced.begin(), reduced.end(), true));
                  auto trailing = tag;
                  trailing.axes.clear();
                  for (std::int64_t a = -k; a < 0; ++a) trailing.axes.push_back(a);
                  trailing.keep_dims = true;
                  const ir::Value t =
                      out.make(ir::Transpose{perm}, {in[0]}, n.name + "/axes_last")[0];
                  const ir::Value r = out.make(trailing, {t}, n.name + "/rows")[0];
                  const Shape& s = n.outputs[0].shape;
                  return out.make(ir::Reshape{std::vector<std::int64_t>(s.begin(), s.end())}, {r},
                                  n.name);
                } else {
                  return std::nullopt;
                }
              },
              n.op);
        });
  }

private:
  template <class T> static bool candidate(const ir::Graph<T>& g, const ir::Node<T>& n) {
    return std::visit(
        [&](const auto& tag) {
          using Tag = std::decay_t<decltype(tag)>;
          if constexpr (ir::reduction<Tag> && T::template fusable<Tag>) {
            const Shape& s = g.type(n.inputs[0]).shape;
            return s.is_static() && s.rank() >= 2 && !tag.axes.empty() && row_axes(g, n) == 0;
          } else {
            return false;
          }
        },
        n.op);
  }
};

} // namespace snippets::passes
