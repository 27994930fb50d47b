// SPDX-License-Identifier: Apache-2.0
// snippets/passes/move_reduced_axes_last.hpp: MoveReducedAxesLast (data flow, on a model), a
// reduction over axes that are not the last ones of its input written as one over the last
// ones, the form a kernel computes (passes/decompose_softmax.hpp: row_axes), with the
// elementwise ops around it where its result is broadcast back against its input.
//
// One reduction alone:
//
//   ReduceX(x, axes S)  ->  Reshape(ReduceX(Transpose(x, perm), the last |S| axes, keep_dims))
//   ReduceX(x, axes S, keep_dims false)  ->  ReduceX(Transpose(x, perm), the last |S| axes)
//
// perm lists the other axes in their order, then S in its order; on a backend that reduces
// columns, the kept axes after the last of S stay last (kept_last): perm lists the other kept
// axes, S, then those, and the reduction is over one run of middle axes (a kernel of columns,
// passes/tile_columns.hpp, whose loads and stores keep the innermost axis: `[0, 2]` of NCHW is
// computed as `[C, N, H, W]`). The reduced tensor holds the same values in the same order either
// way (its reduced axes have extent 1 and the others keep their order), so the Reshape to the
// op's shape (S kept as 1) only renames it; without keep_dims the result is the op's already.
// The tokenizer takes the Transpose as the first op on a Subgraph input, folded into the
// kernel's loads (FuseTransposeIntoParameter gathers x along S), and the reduction as the
// kernel's row; the Reshape of the small result is a Program's host step. A max over axes 0 and
// 2 of NCHW so runs in a kernel instead of the reference interpreter. (A sum over the channels
// alone is one run of middle axes: a backend that reduces columns takes it as it is, below.)
//
// A region: ONNX MeanVarianceNormalization (axes [0, 2, 3] by default) is
// (x - mean(x)) / sqrt(mean(x * x) - mean(x)^2): reductions over S whose results are broadcast
// back against x. Rewritten one by one, the ops after the reductions would read x as it is and
// the reductions' Reshapes, in other kernels. So the whole region is computed in the transposed
// domain X' = Transpose(X, perm), as one kernel:
//
//   every reader of x in the region reads its own Transpose(x, perm) (the tokenizer takes
//   several of one input into one Subgraph, FuseTransposeIntoParameter folds them into one load:
//   one shared Transpose would be a value that several greedy groups need); the reductions
//   reduce X''s last |S| axes with keep_dims; what leaves the region goes back to its shape:
//   Transpose(inverse perm), folded into the kernel's store, or a Reshape where the axes that
//   are not 1 keep their order (a reduced value; a reduction without keep_dims keeps its form,
//   the op's).
//
// The region of a seed reduction R over S of x [static shape X, no axis of extent 0]: x's
// producers that are elementwise ops of shape X (walked back while they are), R, and, following
// the users in topological order, each op that reads a value of the region and
//  - is elementwise (unary, binary, comparison, logical, Select, Convert, FakeQuantize,
//    Quantize), a kernel computes it (passes/fusability.hpp), its output has X's rank and each
//    axis X's extent or 1, and its other inputs are static of rank <= X's: those are read
//    Transposed by perm too (a Reshape where the axes that are not 1 keep their order; as they
//    are when they hold one value);
//  - or is a reduction the backend fuses, over the same axes S of a value whole along them
//    (without keep_dims its result leaves the region: the ops that read it are not in it).
// The values of shape X that x's producers in the region start from (x itself when it has
// none) are values of the region too: the region reads them, transposed, and their readers join.
// An op of the region that is no reduction, depends on none and feeds no op that stays in it
// leaves it again (a reader of x beside the region stays as it was). Each value of the region
// has X's rank; its form in the domain is its shape permuted by perm.
//
// The rewrite is made when a value of the region depends on a reduction and is whole along S (a
// result broadcast back: the ops after the reductions join their kernel), and every value the
// region gives to other ops goes back by a Reshape or by a Transpose that keeps the innermost
// axis innermost (FuseTransposeIntoResult folds only those into a store: without kept_last, a
// sum over axes 0 and 2 of NCHW followed by x - s would need a scatter, so it stays as one
// reduction alone, and the subtraction in a kernel of its own). It is repeated while such a region
// is found, then the reductions left are rewritten alone.
//
// A Softmax over another axis than the last is written over the last one of the transposed
// input, and its output transposed back:
//
//   Softmax(x, axis a)  ->  Transpose(Softmax(Transpose(x, perm), -1), inverse perm)
//
// perm moves a last. The kernel gathers x along a (the first Transpose folded into its loads)
// and writes its rows contiguously; the Transpose back, which moves the innermost axis, is a
// Program's host step (a copy of the tensor). Two steps instead of the reference interpreter.
//
// With dynamic dimensions the same rewrites are made: a value goes back by a Reshape where it
// has at most one dynamic dimension (the Reshape's -1), else by a Transpose (a reduction alone
// that keeps its axes: the kept axes of 1 move back into place, the same bytes; a value of a
// region: as above, folded into the store), and a reduction without keep_dims needs neither;
// an input of a region with dynamic dimensions has X's rank or at most one of them. A Program
// compiles the kernels per set of input shapes (StepKind::kernel_per_shape):
// MeanVarianceNormalization over a dynamic batch is one kernel.
//
// Left alone: reductions over the last axes already, reductions and Softmaxes over one run of
// middle axes where the backend reduces columns (backend_column_reductions: the tokenizer
// takes them with their ops into one kernel, passes/tile_columns.hpp, and a Program compiles it
// per set of shapes when they are dynamic), rank < 2, and reductions and Softmaxes the backend
// does not fuse.
// A Program runs it on its model before the tokenizer.
#pragma once

#include <map>
#include <optional>
#include <set>

#include "snippets/passes/data_flow.hpp"
#include "snippets/passes/decompose_softmax.hpp"
#include "snippets/passes/fusability.hpp"
#include "snippets/passes/fuse_transpose_into_result.hpp"
#include "snippets/passes/properties.hpp"

namespace snippets::passes {

struct MoveReducedAxesLast {
  using pass_tag = data_flow_pass_tag;
  static constexpr std::string_view name = "MoveReducedAxesLast";

  /// Whether `g` holds a reduction this pass rewrites (a Program skips the copy otherwise).
  template <class T> static bool finds_candidates(const ir::Graph<T>& g) {
    for (ir::NodeId id = 0; id < g.size(); ++id)
      if (candidate(g, g.node(id)) || softmax_candidate(g, g.node(id))) return true;
    return false;
  }

  template <class T> ir::Graph<T> run(const ir::Graph<T>& model) const {
    // each rewrite moves the reduced axes of at least one reduction last for good
    const std::optional<ir::Graph<T>> g = rewrite_regions(
        model, [](const ir::Graph<T>& m) { return find_region(m); },
        [](const ir::Graph<T>& m, const Region& r) { return rewrite(m, r); });
    const ir::Graph<T>& current = g ? *g : model;
    return rebuild(current,
                   [&](ir::Graph<T>& out, const ir::Node<T>& n,
                       std::span<const ir::Value> in) -> std::optional<std::vector<ir::Value>> {
                     if (softmax_candidate(current, n)) return softmax_last(current, out, n, in);
                     if (!candidate(current, n)) return std::nullopt;
                     return alone(current, out, n, in);
                   });
  }

private:
  struct Region {
    Shape x;                                         // the seed's input shape
    std::vector<std::size_t> perm;                   // X's axes in the domain's order
    std::vector<bool> reduced;                       // S, per axis of X
    std::size_t kept_last = 0;                       // X's last axes that stay last (kept)
    std::set<ir::Output, detail::OutputLess> values; // read in the domain by the region's ops
    std::set<ir::NodeId> nodes;                      // the region's ops
  };

  /// The permutation that moves the axes of `reduced` last, each part in its order, except the
  /// last `kept_last` axes, which stay last.
  static std::vector<std::size_t> axes_last(const std::vector<bool>& reduced,
                                            std::size_t kept_last = 0) {
    const std::size_t front = reduced.size() - kept_last;
    std::vector<std::size_t> perm;
    for (const bool last : {false, true})
      for (std::size_t d = 0; d < front; ++d)
        if (reduced[d] == last) perm.push_back(d);
    for (std::size_t d = front; d < reduced.size(); ++d) perm.push_back(d);
    return perm;
  }

  /// How many kept axes after the last reduced one stay innermost in the domain: where the
  /// backend reduces columns, all of them (the reduced axes become one run of middle axes, the
  /// loads and stores keep their contiguous innermost axis); else none (the reduced axes last).
  template <class T> static std::size_t kept_last(const std::vector<bool>& reduced) {
    std::size_t t = 0;
    if (backend_column_reductions<T>())
      while (t < reduced.size() && !reduced[reduced.size() - 1 - t]) ++t;
    return t;
  }

  static Shape permuted(const Shape& s, const std::vector<std::size_t>& perm) {
    std::vector<Dim> d;
    for (std::size_t a : perm) d.push_back(s[a]);
    return Shape(std::move(d));
  }

  /// Whether the axes of `s` that are not 1 keep their order in `perm`: then a Reshape moves it.
  static bool order_kept(const Shape& s, const std::vector<std::size_t>& perm) {
    std::size_t last = 0;
    bool any = false;
    for (std::size_t a : perm) {
      if (s[a] == 1) continue;
      if (any && a < last) return false;
      last = a;
      any = true;
    }
    return true;
  }

  /// Whether a value of the region of shape `s` goes back from the domain by a Reshape: the axes
  /// that are not 1 keep their order, and reshape_to(s) makes it.
  static bool reshaped_back(const Shape& s, const Region& r) {
    return order_kept(s, r.perm) && reshapes(s);
  }

  /// Whether reshape_to(s) makes `s` from any shape of its elements: static, or one dynamic
  /// dimension (the Reshape's -1) and no other of extent 0.
  static bool reshapes(const Shape& s) {
    if (s.is_static()) return true;
    const auto dyn = std::count(s.begin(), s.end(), dynamic);
    return dyn == 1 && std::find(s.begin(), s.end(), Dim{0}) == s.end();
  }

  static ir::Reshape reshape_to(const Shape& s) {
    return ir::Reshape{std::vector<std::int64_t>(s.begin(), s.end())};
  }

  template <class T> static bool elementwise_op(const ir::Graph<T>& g, const ir::Node<T>& n) {
    return std::visit([](const auto& tag) { return elementwise_tag<std::decay_t<decltype(tag)>>; },
                      n.op) &&
           n.outputs.size() == 1 && !n.skipped_by_plugin &&
           !fusability(g, n, FusabilityStage::model);
  }

  /// The reduction written alone: its input transposed, the result reshaped.
  template <class T>
  static std::optional<std::vector<ir::Value>> alone(const ir::Graph<T>& g, ir::Graph<T>& out,
                                                     const ir::Node<T>& n,
                                                     std::span<const ir::Value> in) {
    return std::visit(
        [&](const auto& tag) -> std::optional<std::vector<ir::Value>> {
          if constexpr (ir::reduction<std::decay_t<decltype(tag)>>) {
            const std::size_t rank = g.type(n.inputs[0]).shape.rank();
            const std::vector<bool> reduced = axis_mask(tag.axes, rank, n.describe());
            const std::size_t kept = kept_last<T>(reduced);
            const std::vector<std::size_t> perm = axes_last(reduced, kept);
            const ir::Value t = out.make(ir::Transpose{perm}, {in[0]}, n.name + "/axes_last")[0];
            const ir::Value r = out.make(trailing(tag, reduced, kept), {t}, n.name + "/rows")[0];
            if (!tag.keep_dims) return std::vector{r}; // the kept axes, in their order
            if (!reshapes(n.outputs[0].shape)) // kept reduced axes of 1 go back in their place
              return out.make(ir::Transpose{inverse_permutation(perm)}, {r}, n.name);
            return out.make(reshape_to(n.outputs[0].shape), {r}, n.name);
          } else {
            return std::nullopt;
          }
        },
        n.op);
  }

  /// A Softmax over the last axis of its input transposed, the output transposed back.
  template <class T>
  static std::vector<ir::Value> softmax_last(const ir::Graph<T>& g, ir::Graph<T>& out,
                                             const ir::Node<T>& n, std::span<const ir::Value> in) {
    const std::vector<std::size_t> perm = axes_last(axis_mask(
        {std::get<ir::Softmax>(n.op).axis}, g.type(n.inputs[0]).shape.rank(), n.describe()));
    const ir::Value t = out.make(ir::Transpose{perm}, {in[0]}, n.name + "/axis_last")[0];
    const ir::Value s = out.make(ir::Softmax{-1}, {t}, n.name + "/rows")[0];
    return out.make(ir::Transpose{inverse_permutation(perm)}, {s}, n.name);
  }
  /// A Softmax the backend fuses over another axis than the last of its input.
  template <class T> static bool softmax_candidate(const ir::Graph<T>& g, const ir::Node<T>& n) {
    if constexpr (T::template fusable<ir::Softmax>) {
      if (!ir::is<ir::Softmax>(n.op) || n.inputs.size() != 1) return false;
      const Shape& s = g.type(n.inputs[0]).shape;
      const auto rank = std::int64_t(s.rank());
      const std::int64_t a = std::get<ir::Softmax>(n.op).axis;
      return rank >= 2 && a >= -rank && a < rank && a != -1 && a != rank - 1 &&
             (!s.is_static() || s.element_count() > 0) && !columns(g, n);
    } else {
      return false;
    }
  }

  /// `tag` over as many axes as `reduced` holds before the last `kept` ones, keep_dims as it
  /// was: without it the result is the kept axes in their order (perm keeps it), the op's own.
  template <class Tag>
  static Tag trailing(Tag tag, const std::vector<bool>& reduced, std::size_t kept) {
    const auto k = std::int64_t(std::count(reduced.begin(), reduced.end(), true));
    const auto t = std::int64_t(kept);
    tag.axes.clear();
    for (std::int64_t a = -k - t; a < -t; ++a) tag.axes.push_back(a);
    return tag;
  }

  /// Whether `n` is a reduction over axes `reduced` of X (all of them whole in its input).
  template <class T>
  static bool same_reduction(const ir::Graph<T>& g, const ir::Node<T>& n, const Region& r) {
    if (!candidate(g, n)) return false;
    const Shape& s = g.type(n.inputs[0]).shape;
    if (s.rank() != r.x.rank()) return false;
    return std::visit(
        [&](const auto& tag) {
          if constexpr (ir::reduction<std::decay_t<decltype(tag)>>) {
            if (axis_mask(tag.axes, s.rank(), n.describe()) != r.reduced) return false;
            for (std::size_t d = 0; d < s.rank(); ++d)
              if (r.reduced[d] && s[d] != r.x[d]) return false;
            return true;
          } else {
            return false;
          }
        },
        n.op);
  }

  /// Whether elementwise `n` computes in the region's domain: its output has X's rank and each
  /// axis X's extent or 1, its other inputs have rank <= X's (X's, or one that a Reshape
  /// extends, when they have dynamic dimensions).
  template <class T>
  static bool fits(const ir::Graph<T>& g, const ir::Node<T>& n, const Region& r) {
    const Shape& out = n.outputs[0].shape;
    if (out.rank() != r.x.rank()) return false;
    for (std::size_t d = 0; d < out.rank(); ++d)
      if (out[d] != 1 && out[d] != r.x[d]) return false;
    for (const ir::Output& o : n.inputs) {
      const Shape& s = g.type(o).shape;
      if (!r.values.count(o) && (s.rank() > r.x.rank() || (s.rank() < r.x.rank() && !reshapes(s))))
        return false;
    }
    return true;
  }

  /// The first seed whose region is worth the rewrite.
  template <class T> static std::optional<Region> find_region(const ir::Graph<T>& g) {
    const auto order = g.topological_order();
    for (ir::NodeId id : order) {
      const ir::Node<T>& seed = g.node(id);
      if (!candidate(g, seed)) continue;
      Region r;
      r.x = g.type(seed.inputs[0]).shape;
      if (r.x.is_static() && r.x.element_count() == 0) continue;
      std::visit(
          [&](const auto& tag) {
            if constexpr (ir::reduction<std::decay_t<decltype(tag)>>)
              r.reduced = axis_mask(tag.axes, r.x.rank(), seed.describe());
          },
          seed.op);
      r.kept_last = kept_last<T>(r.reduced);
      r.perm = axes_last(r.reduced, r.kept_last);
      // the elementwise ops of shape X that compute the seed's input join too; the values of
      // shape X they start from (x itself when none) are values of the region: their readers
      // join
      std::set<ir::Output, detail::OutputLess> sources;
      for (std::vector<ir::Output> back{seed.inputs[0]}; !back.empty();) {
        const ir::Output o = back.back();
        back.pop_back();
        const ir::Node<T>& n = g.node(o.node);
        if (r.values.count(o) || sources.count(o)) continue;
        if (!elementwise_op(g, n) || n.outputs[0].shape != r.x || !fits(g, n, r)) {
          sources.insert(o);
          continue;
        }
        r.values.insert(o);
        r.nodes.insert(n.id);
        for (const ir::Output& i : n.inputs)
          if (g.type(i).shape == r.x) back.push_back(i);
      }
      r.values.insert(sources.begin(), sources.end());
      std::set<ir::Output, detail::OutputLess> after; // values that depend on a reduction
      bool broadcast_back = false;
      const auto reads_region = [&](const ir::Node<T>& n) {
        return std::any_of(n.inputs.begin(), n.inputs.end(),
                           [&](const ir::Output& o) { return r.values.count(o) > 0; });
      };
      for (std::size_t i = 0; i < order.size(); ++i) {
        const ir::Node<T>& n = g.node(order[i]);
        if (r.nodes.count(n.id) || (n.id != seed.id && !reads_region(n))) continue;
        const ir::Output v{n.id, 0};
        if (same_reduction(g, n, r) && (n.id == seed.id || r.values.count(n.inputs[0]))) {
          r.nodes.insert(n.id);
          if (reduced_dims_kept(n)) {
            r.values.insert(v);
            after.insert(v);
          }
        } else if (elementwise_op(g, n) && fits(g, n, r)) {
          r.nodes.insert(n.id);
          r.values.insert(v);
          if (std::any_of(n.inputs.begin(), n.inputs.end(),
                          [&](const ir::Output& o) { return after.count(o) > 0; })) {
            after.insert(v);
            bool whole = true;
            for (std::size_t d = 0; d < r.x.rank(); ++d)
              whole = whole && (!r.reduced[d] || n.outputs[0].shape[d] == r.x[d]);
            broadcast_back = broadcast_back || whole;
          }
        }
      }
      // an op that neither is a reduction, depends on one nor feeds one (through the region)
      // leaves it: a reader of x beside the region stays as it was
      std::set<ir::NodeId> kept;
      for (auto it = order.rbegin(); it != order.rend(); ++it) {
        if (!r.nodes.count(*it)) continue;
        bool keep = !elementwise_op(g, g.node(*it)) || after.count(ir::Output{*it, 0}) > 0;
        for (const ir::Use& u : g.users(ir::Output{*it, 0})) keep = keep || kept.count(u.node) > 0;
        if (keep) kept.insert(*it);
      }
      for (ir::NodeId id : std::set<ir::NodeId>(r.nodes))
        if (!kept.count(id)) {
          r.nodes.erase(id);
          r.values.erase(ir::Output{id, 0});
        }
      if (broadcast_back && leaves_folded(g, r)) return r;
    }
    return std::nullopt;
  }

  /// Whether every value the region gives to other ops goes back by a Reshape or by a
  /// Transpose a kernel folds into its store.
  template <class T> static bool leaves_folded(const ir::Graph<T>& g, const Region& r) {
    const std::vector<std::size_t> inverse = inverse_permutation(r.perm);
    for (const ir::Output& v : r.values) {
      if (!r.nodes.count(v.node)) continue; // a value from outside stays as it is
      const auto users = g.users(v);
      if (std::all_of(users.begin(), users.end(),
                      [&](const ir::Use& u) { return r.nodes.count(u.node) > 0; }))
        continue;
      const Shape& s = g.type(v).shape;
      if (!reshaped_back(s, r) &&
          !FuseTransposeIntoResult::keeps_innermost(permuted(s, r.perm), inverse))
        return false;
    }
    return true;
  }

  template <class T> static ir::Graph<T> rewrite(const ir::Graph<T>& g, const Region& r) {
    std::map<ir::Output, ir::Value, detail::OutputLess> domain; // region values in the domain
    const std::vector<std::size_t> inverse = inverse_permutation(r.perm);
    return rebuild(g,
                   [&](ir::Graph<T>& out, const ir::Node<T>& n,
                       std::span<const ir::Value> in) -> std::optional<std::vector<ir::Value>> {
                     if (!r.nodes.count(n.id)) return std::nullopt;
                     // the inputs in the domain; one Transpose per reader of a value from outside
                     std::vector<ir::Value> din;
                     std::map<ir::Output, ir::Value, detail::OutputLess> moved;
                     for (std::size_t i = 0; i < n.inputs.size(); ++i) {
                       const ir::Output o = n.inputs[i];
                       if (const auto it = domain.find(o); it != domain.end()) {
                         din.push_back(it->second);
                       } else if (const auto m = moved.find(o); m != moved.end()) {
                         din.push_back(m->second);
                       } else {
                         din.push_back(moved[o] =
                                           into_domain(out, in[i], g.type(o).shape, r,
                                                       n.name + "/input" + std::to_string(i)));
                       }
                     }
                     const ir::Value v = std::visit(
                         [&](const auto& tag) -> ir::Value {
                           using Tag = std::decay_t<decltype(tag)>;
                           if constexpr (ir::reduction<Tag>)
                             return out.make(trailing(tag, r.reduced, r.kept_last), din, n.name)[0];
                           else
                             return out.make(tag, din, n.name)[0];
                         },
                         n.op);
                     const ir::Output self{n.id, 0};
                     const auto users = g.users(self);
                     if (r.values.count(self)) {
                       domain[self] = v;
                       if (std::all_of(users.begin(), users.end(),
                                       [&](const ir::Use& u) { return r.nodes.count(u.node) > 0; }))
                         return std::vector<ir::Value>{v}; // read in the domain only
                     }
                     const Shape& s = n.outputs[0].shape; // back to it
                     if (!reduced_dims_kept(n))
                       return std::vector{v}; // already: the kept axes in their order
                     if (!r.values.count(self) || reshaped_back(s, r))
                       return out.make(reshape_to(s), {v}, n.name + "/shape");
                     return out.make(ir::Transpose{inverse}, {v}, n.name + "/axes_back");
                   });
  }

  /// Value `v` of shape `s` from outside the region, as the region's ops read it.
  template <class T>
  static ir::Value into_domain(ir::Graph<T>& out, ir::Value v, const Shape& s, const Region& r,
                               const std::string& name) {
    if (s.is_static() && s.element_count() == 1) return v; // broadcast the same in any order
    std::vector<Dim> d(r.x.rank() - s.rank(), 1);
    d.insert(d.end(), s.begin(), s.end());
    const Shape full(std::move(d));
    if (const Shape to = permuted(full, r.perm); order_kept(full, r.perm) && reshapes(to))
      return to == s ? v : out.make(reshape_to(to), {v}, name)[0];
    if (full != s) v = out.make(reshape_to(full), {v}, name + "/rank")[0];
    return out.make(ir::Transpose{r.perm}, {v}, name)[0];
  }

  /// Over a run of middle axes, which the backend's kernels reduce as they are
  /// (passes/tile_columns.hpp).
  template <class T> static bool columns(const ir::Graph<T>& g, const ir::Node<T>& n) {
    return backend_column_reductions<T>() && row_form(g, n).kept > 0;
  }

  template <class T> static bool candidate(const ir::Graph<T>& g, const ir::Node<T>& n) {
    return std::visit(
        [&](const auto& tag) {
          using Tag = std::decay_t<decltype(tag)>;
          if constexpr (ir::reduction<Tag> && T::template fusable<Tag>) {
            const Shape& s = g.type(n.inputs[0]).shape;
            return s.rank() >= 2 && !tag.axes.empty() && row_axes(g, n) == 0 && !columns(g, n);
          } else {
            return false;
          }
        },
        n.op);
  }
};

} // namespace snippets::passes
