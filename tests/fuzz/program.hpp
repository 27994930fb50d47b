// SPDX-License-Identifier: Apache-2.0
// tests/fuzz/program.hpp: the whole-Program family: models that mix everything a Program runs,
// in stages over a value [rows..., width]: elementwise chains of exact and transcendental ops
// with broadcast inputs, Opaque ops (Identity and Split, two outputs, as callbacks on buffers;
// Twice only as a reference callable, which the Program runs on doubles), reductions and
// Softmax combined back with the row, MatMuls with a bias and an activation that change the
// width, Transposes (folded into a kernel's loads, or left to the reference path), Reshapes (of
// the leading dims, or a split of the last axis and back around ops),
// round trips through bf16 or f16, reductions over other axes than the last ones broadcast back
// (MeanVarianceNormalization's form), Softmax over another axis than the last (a kernel over the
// transposed value, a copy back), and halves of a middle axis read in place (a GLU over them). 1-4
// outputs, 1-3 threads, and every model runs three times: once on fresh buffers, then twice on one
// ExecutionContext into outputs filled with garbage (the arena reused, every output written), which
// must give the first run's bits. Oracle: fuzz/bounds.hpp. The dynamic-program family takes the
// same models with their leading extent dynamic (in every input that has it) and runs each one with
// three sizes, 0 now and then, on one context: dynamic kernels, MatMul Subgraphs compiled per size,
// host copies and reference steps all take the plan's shapes.
#pragma once

#include "fuzz/math.hpp"
#include "fuzz/matmul.hpp"

namespace snippets::fuzz {

/// `x` [rows, width] or [a, b, width] through a reduction over other axes than the last ones
/// broadcast back, with ops before and after it (a second reduction of a value that used it:
/// MeanVarianceNormalization's form), which a Program computes over the transposed value, as
/// one kernel where the transposition back folds into its store
/// (passes/move_reduced_axes_last.hpp). Over [rows, width] the rows; over [a, b, width] mostly
/// a and the width (the innermost axis reduced: one kernel), or a run of axes without the width
/// (a kernel of columns with the ops around it, passes/tile_columns.hpp).
inline Value reduce_other_axes(Graph& g, Rng& rng, Value x) {
  using Axes = std::vector<std::int64_t>;
  const std::vector<Axes> choices =
      g.type(x).shape.rank() == 2 ? std::vector<Axes>{{0}}
                                  : std::vector<Axes>{{0, 2}, {0, 2}, {0, 2}, {0}, {1}, {0, 1}};
  const Axes axes = choices[std::size_t(rng.integer(0, std::int64_t(choices.size()) - 1))];
  const Value in = rng.integer(0, 1) ? g.abs(x) : x;
  const Value m = rng.integer(0, 1) ? g.reduce_mean(in, axes, true) : g.reduce_max(in, axes, true);
  Value y = g.subtract(x, m);
  if (rng.integer(0, 1)) {
    const Value v = g.reduce_mean(g.multiply(y, y), axes, true);
    y = g.divide(y, g.sqrt(g.add(v, g.scalar(ElementType::f32, 1))));
  }
  return rng.integer(0, 1) ? g.relu(y) : g.multiply(y, g.scalar(ElementType::f32, 0.5));
}

/// `x` [a, b, width] seen as [a, 2, b / 2, width] (b even) through a mean over axes 0 and 2,
/// which are not one run and leave the innermost axis out, broadcast back: a Program computes it
/// over [2, a, b / 2, width], a kernel of columns whose folded Transposes keep the width
/// innermost (MoveReducedAxesLast's kept_last); then seen as [a, b, width] again. Sometimes also
/// a max over the same axes without keep_dims, an output of [2, width] (the kernel's own form).
inline Value reduce_apart_axes(Graph& g, Rng& rng, Value x, std::vector<Value>& outputs) {
  const Shape& s = g.type(x).shape;
  const Value v = g.reshape(x, {s[0], 2, s[1] / 2, s[2]});
  if (rng.integer(0, 2) == 0) outputs.push_back(g.reduce_max(v, {0, 2}, false));
  Value y = g.subtract(v, g.reduce_mean(v, {0, 2}, true));
  if (rng.integer(0, 1)) y = g.relu(y);
  return g.reshape(y, {s[0], s[1], s[2]});
}

inline Case program_case(std::uint64_t seed) {
  Rng rng(seed);
  Rng side(seed ^ 0x6d766eu);    // reduce_other_axes's draws: the other stages stay as they were
  Rng axes(seed ^ 0x736c6963u);  // the Softmax and Slice draws below, likewise
  Rng apart(seed ^ 0x61706172u); // reduce_apart_axes's, likewise
  static const std::vector<OpMaker> ops = math_ops();
  Case c;
  Graph& g = c.model;
  const Dim width = detail::pick(rng, {1, 7, 16, 17, 33, 64});
  std::vector<Dim> dims = random_dims(rng, int(rng.integer(1, 2)), 128);
  dims.push_back(width);
  maybe_empty(rng, dims, 0.03);
  int inputs = 0;
  auto input = [&](const Shape& s) {
    return g.parameter(ElementType::f32, s, std::string("in").append(std::to_string(inputs++)));
  };
  Value x = input(Shape(dims));
  std::vector<Value> outputs;
  const auto stages = rng.integer(2, 7);
  for (std::int64_t s = 0; s < stages; ++s) {
    const std::vector<Dim> cur(g.type(x).shape.begin(), g.type(x).shape.end());
    if (side.integer(0, 5) == 0 && std::find(cur.begin(), cur.end(), 0) == cur.end())
      x = reduce_other_axes(g, side, x); // keeps x's shape
    if (apart.integer(0, 7) == 0 && cur.size() == 3 && cur[1] % 2 == 0 &&
        std::find(cur.begin(), cur.end(), 0) == cur.end())
      x = reduce_apart_axes(g, apart, x, outputs);  // keeps x's shape
    if (axes.integer(0, 7) == 0 && cur.size() >= 2) // over the rows, or the middle axis
      x = g.softmax(g.multiply(x, g.scalar(ElementType::f32, 0.25)),
                    axes.integer(0, std::int64_t(cur.size()) - 2));
    if (axes.integer(0, 7) == 0 && cur.size() == 3 && cur[1] % 2 == 0 && cur[1] > 0) {
      const Value a = g.slice(x, 1, 0, cur[1] / 2), b = g.slice(x, 1, cur[1] / 2, cur[1] / 2);
      outputs.push_back(g.multiply(a, g.relu(b))); // read in place: x is in memory by now
    }
    switch (rng.integer(0, 8)) {
    case 0:
    case 1: { // an elementwise chain with broadcast inputs
      std::vector<Value> pool{x, input(broadcast_input(rng, cur))};
      grow_chain(g, rng, ops, rng.integer(1, 5), pool);
      x = g.add(pool.back(), x); // keeps x's shape
      break;
    }
    case 2: { // Opaque ops
      const auto k = rng.integer(0, 2);
      if (k == 2) {
        const auto v = g.make(ir::Opaque{"Split", {g.type(x), g.type(x)}}, {x}, "Split");
        if (rng.integer(0, 1)) outputs.push_back(v[1]);
        x = g.maximum(v[0], g.relu(v[1]));
      } else {
        x = opaque(g, x, k ? "Twice" : "Identity");
      }
      break;
    }
    case 3: { // a reduction combined back with the row
      if (rng.integer(0, 1)) {
        x = g.softmax(g.multiply(x, g.scalar(ElementType::f32, 0.5)), -1);
        break;
      }
      const Value r = rng.integer(0, 1) ? g.reduce_max(x, {-1}, true) : g.reduce_sum(x, {-1}, true);
      x = g.subtract(x, r);
      if (rng.integer(0, 2) == 0) outputs.push_back(r);
      break;
    }
    case 4: { // a MatMul that changes the width
      const Dim k = cur.back(), n = detail::pick(rng, {1, 8, 16, 17, 24});
      const Shape ws{k, n};
      const Value w =
          rng.integer(0, 1)
              ? g.constant(ElementType::f32, ws, detail::weights(rng, ws.element_count(), 0.5), "w")
              : input(ws);
      x = g.add(g.matmul(x, w), input(Shape{n}));
      x = rng.integer(0, 1) ? g.relu(x) : g.gelu(x, ir::GeluApproximation::tanh);
      break;
    }
    case 5: { // a Transpose: of the rows (folded where it is a kernel's input), or of the last axis
      if (cur.size() >= 2) {
        Order o(cur.size());
        for (std::size_t i = 0; i < o.size(); ++i) o[i] = i;
        std::swap(o[o.size() - 2], o[rng.integer(0, 1) ? o.size() - 1 : 0]);
        x = g.relu(g.transpose(x, o));
      }
      break;
    }
    case 6: { // Reshapes: one that merges the leading dims (a view), or a split of the last axis
              // and back around a reduction and a broadcast input, which a Program computes
              // over the split axes (passes/split_merged_axes.hpp)
      const Dim w = cur.back(), part = w % 4 == 0 ? 4 : w % 2 == 0 ? 2 : 1;
      const bool empty = std::find(cur.begin(), cur.end(), 0) != cur.end(); // -1 is ambiguous
      if (part > 1 && !empty && rng.integer(0, 1)) {
        std::vector<std::int64_t> split(cur.begin(), cur.end() - 1), back(cur.begin(), cur.end());
        split[0] = back[0] = -1; // the leading extent may be dynamic
        split.push_back(w / part);
        split.push_back(part);
        Value y = g.reshape(x, split);
        y = g.subtract(y, rng.integer(0, 1) ? g.reduce_max(y, {-1}, true)
                                            : g.reduce_mean(y, {-2, -1}, true));
        y = g.multiply(y, input(Shape{w / part, part}));
        x = g.add(g.reshape(y, back), x);
      } else if (cur.size() >= 3 && !empty) {
        x = g.reshape(x, {-1, cur.back()});
      }
      break;
    }
    case 7: { // a round trip through a narrow type
      x = g.convert(
          g.convert(g.sigmoid(x), rng.integer(0, 1) ? ElementType::bf16 : ElementType::f16),
          ElementType::f32);
      break;
    }
    default: outputs.push_back(x); break;
    }
  }
  outputs.push_back(x);
  if (outputs.size() > 4) outputs.erase(outputs.begin(), outputs.end() - 4);
  for (std::size_t i = 0; i < outputs.size(); ++i)
    g.result(outputs[i], std::string("out").append(std::to_string(i)));
  c.check = Check::bounds;
  c.fill = Fill::finite;
  c.fma = true;
  c.threads = 1 + int(seed % 3);
  c.reuse_context = true;
  return c;
}

/// `g` with inputs of `types`, and the outputs of its Opaque ops (Identity, Twice, Split: each
/// output has its input's shape) typed like their inputs.
inline Graph with_input_types(const Graph& g, std::span<const ir::TensorType> types) {
  std::size_t next = 0;
  return passes::rebuild(
      g,
      [&](Graph& out, const ir::Node<jit_test::TestedTraits>& node,
          std::span<const Value> in) -> std::optional<std::vector<Value>> {
        if (const auto* p = std::get_if<ir::Parameter>(&node.op)) {
          ir::Parameter typed = *p;
          typed.output = types[next++];
          return out.make(typed, {}, node.name);
        }
        const auto* op = std::get_if<ir::Opaque>(&node.op);
        if (!op) return std::nullopt;
        ir::Opaque typed = *op;
        for (auto& t : typed.outputs) t = out.type(in[0]);
        return out.make(typed, in, node.name);
      },
      false);
}

inline Case dynamic_program_case(std::uint64_t seed) {
  Case c = program_case(seed);
  Rng rng(seed ^ 0xd7a3u);
  const Graph& g = c.model;
  const Dim n = g.node(g.parameters()[0]).outputs[0].shape[0];
  const std::size_t rank = g.node(g.parameters()[0]).outputs[0].shape.rank();
  std::vector<ir::TensorType> types;
  std::vector<bool> leading; // inputs whose leading extent is the model's
  for (ir::NodeId p : g.parameters()) {
    ir::TensorType t = g.node(p).outputs[0];
    leading.push_back(t.shape.rank() == rank && t.shape[0] == n && rank >= 2);
    if (leading.back()) {
      std::vector<Dim> d(t.shape.begin(), t.shape.end());
      d[0] = dynamic;
      t.shape = Shape(std::move(d));
    }
    types.push_back(t);
  }
  Graph dyn = with_input_types(g, types);
  for (const Dim size : {n, Dim(rng.integer(1, 9)), rng.integer(0, 5) ? n + 3 : 0}) {
    std::map<std::string, Shape> call;
    std::vector<ir::TensorType> concrete;
    for (std::size_t i = 0; i < types.size(); ++i) {
      std::vector<Dim> d(types[i].shape.begin(), types[i].shape.end());
      if (leading[i]) d[0] = size;
      concrete.push_back({types[i].type, Shape(d)});
      call[dyn.node(dyn.parameters()[i]).name] = Shape(std::move(d));
    }
    try { // a size the model cannot take (a Reshape that needs whole rows of another extent)
      (void)with_input_types(dyn, concrete);
    } catch (const Error&) {
      continue;
    }
    c.calls.push_back(std::move(call));
  }
  c.model = std::move(dyn);
  return c;
}

} // namespace snippets::fuzz
