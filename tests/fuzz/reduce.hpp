// SPDX-License-Identifier: Apache-2.0
// tests/fuzz/reduce.hpp: the reduction family: ReduceSum, ReduceMax (NaN propagating or
// ignoring), ReduceMin, ReduceMean and Softmax over the innermost axis with keep_dims (and sum,
// max and mean over the last two axes: the tokenizer keeps them from the others; and over the
// axis before the last, kernels of columns), inside
// random chains of elementwise ops before and after them (a reduced value broadcast back along the
// row, a second reduction of a value that used the first: layer-norm style), rows of 1 to 129
// elements, an empty row now and then (the reduction of an empty row runs on the reference
// path: snippets.compile.empty_value), run as Programs with FMA contraction. Oracle:
// fuzz/bounds.hpp (another order of additions, exp's error, the sum and the reciprocal).
#pragma once

#include "fuzz/elementwise.hpp"

namespace snippets::fuzz {

inline std::vector<OpMaker> reduce_ops() {
  std::vector<OpMaker> ops = exact_ops();
  const std::vector<OpMaker> more = {
      {"ReduceSum", 1,
       [](Graph& g, std::span<const Value> v) { return g.reduce_sum(v[0], {-1}, true); }},
      {"ReduceMax", 1,
       [](Graph& g, std::span<const Value> v) { return g.reduce_max(v[0], {-1}, true); }},
      {"ReduceMin", 1,
       [](Graph& g, std::span<const Value> v) { return g.reduce_min(v[0], {-1}, true); }},
      {"ReduceMean", 1,
       [](Graph& g, std::span<const Value> v) { return g.reduce_mean(v[0], {-1}, true); }},
      {"ReduceMaxIgnoreNaN", 1,
       [](Graph& g, std::span<const Value> v) {
         return g.apply(ir::ReduceMax{{-1}, true, true}, v[0]);
       }},
      {"Softmax", 1, [](Graph& g, std::span<const Value> v) { return g.softmax(v[0], -1); }},
      {"SoftmaxLastAxis", 1, // the innermost axis by its positive index
       [](Graph& g, std::span<const Value> v) {
         return g.softmax(v[0], std::int64_t(g.type(v[0]).shape.rank()) - 1);
       }},
      unary("Exp", ir::Exp{}),
      unary("Sigmoid", ir::Sigmoid{}),
      unary("Tanh", ir::Tanh{}),
  };
  for (int i = 0; i < 2; ++i) ops.insert(ops.end(), more.begin(), more.end());
  return ops;
}

/// Reductions over the last two axes (the last one of a rank-1 value), for static models: a
/// kernel walks the two as its row, as one dimension or as two (a value broadcast along one).
inline std::vector<OpMaker> trailing_reduce_ops() {
  auto last_two = [](Graph& g, Value v) {
    const auto rank = std::int64_t(g.type(v).shape.rank());
    std::vector<std::int64_t> axes;
    for (std::int64_t a = -std::min<std::int64_t>(rank, 2); a < 0; ++a) axes.push_back(a);
    return axes;
  };
  auto reduce = [=](auto tag) {
    return [=](Graph& g, std::span<const Value> v) {
      if (g.type(v[0]).shape.rank() == 0) return g.abs(v[0]); // a scalar has no axis
      auto t = tag;
      t.axes = last_two(g, v[0]);
      return g.apply(t, v[0]);
    };
  };
  return {{"ReduceSumLast2", 1, reduce(ir::ReduceSum{})},
          {"ReduceMaxLast2", 1, reduce(ir::ReduceMax{})},
          {"ReduceMeanLast2", 1, reduce(ir::ReduceMean{})}};
}

/// Reductions and Softmax over the axis before the last (the last one of a rank-1 value): a
/// kernel of columns (passes/tile_columns.hpp), whose vectors hold 1 to 16 columns.
inline std::vector<OpMaker> column_reduce_ops() {
  auto middle = [](Graph& g, Value v) { return g.type(v).shape.rank() >= 2 ? -2 : -1; };
  auto reduce = [=](auto tag) {
    return [=](Graph& g, std::span<const Value> v) {
      if (g.type(v[0]).shape.rank() == 0) return g.abs(v[0]); // a scalar has no axis
      auto t = tag;
      t.axes = {middle(g, v[0])};
      return g.apply(t, v[0]);
    };
  };
  return {{"ReduceSumColumns", 1, reduce(ir::ReduceSum{})},
          {"ReduceMaxColumns", 1, reduce(ir::ReduceMax{})},
          {"ReduceMeanColumns", 1, reduce(ir::ReduceMean{})},
          {"SoftmaxColumns", 1, [=](Graph& g, std::span<const Value> v) {
             if (g.type(v[0]).shape.rank() == 0) return g.abs(v[0]);
             return g.softmax(v[0], middle(g, v[0]));
           }}};
}

inline Case reduce_case(std::uint64_t seed) {
  static const ModelSpec spec = [] {
    ModelSpec s;
    s.ops = reduce_ops();
    for (const OpMaker& op : trailing_reduce_ops()) s.ops.push_back(op);
    for (const OpMaker& op : column_reduce_ops()) s.ops.push_back(op);
    s.max_ops = 14;
    s.max_rank = 4;
    s.max_elements = 1024;
    s.empty_probability = 0.06;
    return s;
  }();
  Case c;
  c.model = random_model(seed, spec);
  c.check = Check::bounds;
  c.fill = seed % 4 == 0 ? Fill::general : Fill::finite; // some rows with NaN and infinities
  c.fma = true;
  c.threads = 1 + int(seed % 3);
  return c;
}

} // namespace snippets::fuzz
