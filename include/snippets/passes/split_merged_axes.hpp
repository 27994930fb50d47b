// SPDX-License-Identifier: Apache-2.0
// snippets/passes/split_merged_axes.hpp: SplitMergedAxes (data flow, on a model), the ops
// between Reshapes that merge and split axes computed over the finer axes both shapes share,
// so that the Reshapes leave the middle of a fusable chain. PyTorch exports GroupNorm as
//
//   x [N, C, H, W] -> Reshape [N, G, C/G*H*W] -> InstanceNormalization (over the last axis)
//     -> Reshape [N, C, H, W] -> * scale [C, 1, 1] -> + bias [C, 1, 1]
//
// which, with the Reshapes in the middle, is two kernels. Rewritten over the common refinement
// of the two shapes, F = [N, G, C/G, H, W]:
//
//   x -> Reshape F -> the norm over F's last three axes, * scale as [G, C/G, 1, 1], + bias
//     -> Reshape [N, C, H, W]
//
// it is one kernel (a reduction over several trailing axes: passes/decompose_softmax.hpp,
// row_axes) between two Reshapes that a Program runs as views of the same memory.
//
// How. A Reshape from A to B (static, not empty) is a seed when A and B have a common
// refinement F (every boundary between the axes of either is one of F's: [4, 6] and [6, 4]
// have none). Each value of the region grown from it has a logical shape (its own) and a map of
// its axes onto ranges of F's axes; its form in F has F's extents on the ranges of its axes of
// full extent and 1 elsewhere (reduced or broadcast axes, axes of extent 1). Following the
// users in topological order, an op joins when one of its inputs is in the region and
//  - it is elementwise (unary, binary, comparison, logical, Select, Convert, FakeQuantize,
//    Quantize) on the region's map: its region inputs share one map of the output's rank, and
//    each output axis has extent 1 or the full extent of its range; the other inputs are
//    reshaped into F's form (a view of a Constant or a Parameter);
//  - it is a reduction whose reduced axes cover at least one of F's axes (rewritten over those,
//    keep_dims; without keep_dims the reduced axes leave the output's map);
//  - it is a Softmax whose axis is one axis of F;
//  - it is a Reshape of a value of full extent to a shape that also coarsens F: it goes away.
// Every other user reads the value through a Reshape back to its logical shape. The rewrite is
// made when the region holds a Reshape with region ops both before and after it (the two
// kernels become one), and repeated while one is found. Left alone: dynamic shapes, empty
// tensors, Reshapes of other element counts (none), and regions without such a Reshape.
// A Program runs it on its model before the tokenizer.
#pragma once

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <variant>
#include <vector>

#include "snippets/passes/data_flow.hpp"

namespace snippets::passes {

struct SplitMergedAxes {
  using pass_tag = data_flow_pass_tag;
  static constexpr std::string_view name = "SplitMergedAxes";

  /// Whether `g` holds a Reshape this pass rewrites around (a Program skips the copy otherwise).
  template <class T> static bool finds_candidates(const ir::Graph<T>& g) {
    return find_region(g).has_value();
  }

  template <class T> ir::Graph<T> run(const ir::Graph<T>& model) const {
    // each rewrite takes at least one Reshape out of a region's middle for good
    std::optional<ir::Graph<T>> g = rewrite_regions(
        model, [](const ir::Graph<T>& m) { return find_region(m); },
        [](const ir::Graph<T>& m, const Region& r) { return rewrite(m, r); });
    if (g) return std::move(*g);
    return rebuild(
        model, [](auto&&...) -> std::optional<std::vector<ir::Value>> { return std::nullopt; },
        false);
  }

private:
  using Range = std::pair<std::size_t, std::size_t>; // [begin, end) of F's axes
  using Map = std::vector<Range>;                    // per logical axis
  struct Region {
    std::vector<Dim> fine;                                // F
    std::map<ir::Output, Map, detail::OutputLess> values; // region values: their maps
    std::set<ir::NodeId> nodes;                           // the seed and the ops that joined
  };

  /// F: the common refinement of two shapes of one element count (axes of extent 1 left out).
  static std::optional<std::vector<Dim>> refinement(const Shape& a, const Shape& b) {
    std::set<Dim> cuts; // products of leading extents
    for (const Shape* s : {&a, &b}) {
      Dim p = 1;
      for (Dim d : *s) cuts.insert(p *= d);
    }
    std::vector<Dim> fine;
    Dim p = 1;
    for (Dim c : cuts) {
      if (c == 1) continue;
      if (c % p != 0) return std::nullopt;
      fine.push_back(c / p);
      p = c;
    }
    return fine;
  }

  /// The map of `s`'s axes onto F when `s` is F with some neighbours merged (and axes of
  /// extent 1 anywhere).
  static std::optional<Map> coarsening(const Shape& s, const std::vector<Dim>& fine) {
    Map map;
    std::size_t j = 0;
    for (Dim d : s) {
      const std::size_t begin = j;
      Dim p = 1;
      while (p < d && j < fine.size()) p *= fine[j++];
      if (p != d) return std::nullopt;
      map.push_back({begin, j});
    }
    if (j != fine.size()) return std::nullopt;
    return map;
  }

  static Dim extent(const Range& r, const std::vector<Dim>& fine) {
    Dim p = 1;
    for (std::size_t j = r.first; j < r.second; ++j) p *= fine[j];
    return p;
  }

  /// Whether each axis of `s` has extent 1 or its range's full extent.
  static bool fits(const Shape& s, const Map& map, const std::vector<Dim>& fine) {
    if (s.rank() != map.size()) return false;
    for (std::size_t k = 0; k < map.size(); ++k)
      if (s[k] != 1 && s[k] != extent(map[k], fine)) return false;
    return true;
  }

  /// `s` (aligned on the right with `map`'s axes, NUMPY) in F's form.
  static Shape fine_form(const Shape& s, const Map& map, const std::vector<Dim>& fine) {
    std::vector<Dim> d(fine.size(), 1);
    const std::size_t offset = map.size() - s.rank();
    for (std::size_t k = 0; k < s.rank(); ++k)
      if (s[k] != 1)
        for (std::size_t j = map[offset + k].first; j < map[offset + k].second; ++j) d[j] = fine[j];
    return Shape(std::move(d));
  }

  static std::size_t position(const std::vector<ir::NodeId>& order, ir::NodeId id) {
    return std::size_t(std::find(order.begin(), order.end(), id) - order.begin());
  }

  template <class T> static bool elementwise_op(const ir::Node<T>& n) {
    return std::visit([](const auto& tag) { return elementwise_tag<std::decay_t<decltype(tag)>>; },
                      n.op);
  }

  /// The map of `n`'s output when it joins a region, or nothing.
  template <class T>
  static std::optional<Map> join(const ir::Graph<T>& g, const ir::Node<T>& n, const Region& r) {
    if (n.outputs.size() != 1 || !n.outputs[0].shape.is_static() ||
        n.outputs[0].shape.element_count() == 0)
      return std::nullopt;
    const Shape& out = n.outputs[0].shape;
    const auto in_map = [&](std::size_t i) -> const Map* {
      const auto it = r.values.find(n.inputs[i]);
      return it == r.values.end() ? nullptr : &it->second;
    };
    return std::visit(
        [&](const auto& tag) -> std::optional<Map> {
          using Tag = std::decay_t<decltype(tag)>;
          if constexpr (elementwise_tag<Tag>) {
            const Map* map = nullptr;
            for (std::size_t i = 0; i < n.inputs.size(); ++i) {
              const Map* m = in_map(i);
              if (!m) continue;
              if ((map && *m != *map) || g.type(n.inputs[i]).shape.rank() != out.rank())
                return std::nullopt;
              map = m;
            }
            for (std::size_t i = 0; i < n.inputs.size(); ++i)
              if (!in_map(i) && !g.type(n.inputs[i]).shape.is_static()) return std::nullopt;
            if (!fits(out, *map, r.fine)) return std::nullopt;
            return *map;
          } else if constexpr (ir::reduction<Tag>) {
            const Map* map = in_map(0);
            const std::size_t rank = map->size();
            const std::vector<bool> reduced = axis_mask(tag.axes, rank, n.describe());
            Map kept;
            bool covers = false;
            for (std::size_t k = 0; k < rank; ++k) {
              covers = covers || (reduced[k] && (*map)[k].first < (*map)[k].second);
              if (!reduced[k] || tag.keep_dims) kept.push_back((*map)[k]);
            }
            if (!covers) return std::nullopt;
            return kept;
          } else if constexpr (std::is_same_v<Tag, ir::Softmax>) {
            const Map* map = in_map(0);
            const Range axis = (*map)[normalize_axis(tag.axis, map->size(), n.describe())];
            if (axis.second != axis.first + 1) return std::nullopt;
            return *map;
          } else if constexpr (std::is_same_v<Tag, ir::Reshape>) {
            const Map* map = in_map(0);
            if (fine_form(g.type(n.inputs[0]).shape, *map, r.fine) != Shape(r.fine))
              return std::nullopt;
            return coarsening(out, r.fine);
          } else {
            return std::nullopt;
          }
        },
        n.op);
  }

  /// The first seed whose region is worth the rewrite.
  template <class T> static std::optional<Region> find_region(const ir::Graph<T>& g) {
    const auto order = g.topological_order();
    for (std::size_t at = 0; at < order.size(); ++at) {
      const ir::Node<T>& seed = g.node(order[at]);
      if (!ir::is<ir::Reshape>(seed.op)) continue;
      const Shape& a = g.type(seed.inputs[0]).shape;
      const Shape& b = seed.outputs[0].shape;
      if (!a.is_static() || !b.is_static() || a.element_count() == 0) continue;
      Region r;
      const auto fine = refinement(a, b);
      if (!fine || fine->empty()) continue; // one element: nothing to split
      r.fine = *fine;
      r.values[{seed.id, 0}] = *coarsening(b, r.fine);
      r.nodes.insert(seed.id);
      // elementwise ops that compute the seed's input, on its shape, join too
      std::size_t first = at;
      for (std::vector<ir::Output> back{seed.inputs[0]}; !back.empty();) {
        const ir::Output o = back.back();
        back.pop_back();
        const ir::Node<T>& n = g.node(o.node);
        if (r.values.count(o) || !elementwise_op(n) || n.outputs.size() != 1 ||
            n.outputs[0].shape != a)
          continue;
        r.values[o] = *coarsening(a, r.fine);
        r.nodes.insert(n.id);
        first = std::min(first, position(order, n.id));
        for (const ir::Output& i : n.inputs)
          if (g.type(i).shape == a) back.push_back(i);
      }
      for (std::size_t i = first + 1; i < order.size(); ++i) {
        const ir::Node<T>& n = g.node(order[i]);
        if (r.nodes.count(n.id) ||
            std::none_of(n.inputs.begin(), n.inputs.end(),
                         [&](const ir::Output& o) { return r.values.count(o) > 0; }))
          continue;
        if (const auto map = join(g, n, r)) {
          r.values[{n.id, 0}] = *map;
          r.nodes.insert(n.id);
        }
      }
      // a Reshape of the region (the seed too) with an op of the region before it and one
      // after it, through other Reshapes of the region: the rewrite fuses them
      const auto reshape_of_region = [&](ir::NodeId id) {
        return r.nodes.count(id) > 0 && ir::is<ir::Reshape>(g.node(id).op);
      };
      const auto op_of_region = [&](ir::NodeId id) {
        return r.nodes.count(id) > 0 && !ir::is<ir::Reshape>(g.node(id).op);
      };
      const auto op_after = [&](auto& self, ir::NodeId id) -> bool {
        for (const ir::Use& u : g.users(ir::Output{id, 0}))
          if (op_of_region(u.node) || (reshape_of_region(u.node) && self(self, u.node)))
            return true;
        return false;
      };
      for (ir::NodeId id : r.nodes) {
        if (!ir::is<ir::Reshape>(g.node(id).op)) continue;
        ir::NodeId before = g.node(id).inputs[0].node;
        while (reshape_of_region(before)) before = g.node(before).inputs[0].node;
        if (op_of_region(before) && op_after(op_after, id)) return r;
      }
    }
    return std::nullopt;
  }

  template <class T> static ir::Graph<T> rewrite(const ir::Graph<T>& g, const Region& r) {
    std::map<ir::Output, ir::Value, detail::OutputLess> fine_value; // region values in F's form
    return rebuild(
        g,
        [&](ir::Graph<T>& out, const ir::Node<T>& n,
            std::span<const ir::Value> in) -> std::optional<std::vector<ir::Value>> {
          if (!r.nodes.count(n.id)) return std::nullopt;
          const Map& map = r.values.at({n.id, 0});
          const auto reshaped = [&](ir::Value v, const Shape& to, const std::string& name) {
            if (out.type(v.output).shape == to) return v;
            return out.make(ir::Reshape{std::vector<std::int64_t>(to.begin(), to.end())}, {v},
                            name)[0];
          };
          std::vector<ir::Value> fin; // the inputs in F's form
          for (std::size_t i = 0; i < n.inputs.size(); ++i) {
            if (const auto it = fine_value.find(n.inputs[i]); it != fine_value.end()) {
              fin.push_back(it->second);
            } else if (ir::is<ir::Reshape>(n.op)) { // the seed
              fin.push_back(reshaped(in[i], Shape(r.fine), n.name));
            } else {
              fin.push_back(reshaped(in[i], fine_form(g.type(n.inputs[i]).shape, map, r.fine),
                                     n.name + "/input" + std::to_string(i)));
            }
          }
          const ir::Value v = std::visit(
              [&](const auto& tag) -> ir::Value {
                using Tag = std::decay_t<decltype(tag)>;
                if constexpr (ir::reduction<Tag>) {
                  const Map& from = r.values.at(n.inputs[0]);
                  const std::size_t rank = from.size();
                  const std::vector<bool> reduced = axis_mask(tag.axes, rank, n.describe());
                  Tag fine_tag = tag;
                  fine_tag.axes.clear();
                  fine_tag.keep_dims = true;
                  for (std::size_t k = 0; k < rank; ++k)
                    for (std::size_t j = from[k].first; reduced[k] && j < from[k].second; ++j)
                      fine_tag.axes.push_back(std::int64_t(j));
                  std::sort(fine_tag.axes.begin(), fine_tag.axes.end());
                  return out.make(fine_tag, fin, n.name)[0];
                } else if constexpr (std::is_same_v<Tag, ir::Softmax>) {
                  const std::size_t axis = normalize_axis(tag.axis, map.size(), n.describe());
                  return out.make(ir::Softmax{std::int64_t(map[axis].first)}, fin, n.name)[0];
                } else if constexpr (std::is_same_v<Tag, ir::Reshape>) {
                  return fin[0];
                } else {
                  return out.make(tag, fin, n.name)[0];
                }
              },
              n.op);
          fine_value[{n.id, 0}] = v;
          const auto users = g.users(ir::Output{n.id, 0});
          if (std::all_of(users.begin(), users.end(),
                          [&](const ir::Use& u) { return r.nodes.count(u.node) > 0; }))
            return std::vector<ir::Value>{v}; // read in F's form only
          return std::vector<ir::Value>{reshaped(v, n.outputs[0].shape, n.name + "/shape")};
        });
  }
};

} // namespace snippets::passes
