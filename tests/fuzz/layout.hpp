// SPDX-License-Identifier: Apache-2.0
// tests/fuzz/layout.hpp: the layout family: memory orders other than planar, on f32, f16,
// bf16, i8 and u8 tensors, checked bit for bit (the exact ops of fuzz/types.hpp for each type,
// no FMA contraction, every node rounded to its type; +0 matches -0 for integers).
//  - body layouts, compiled directly (a Program takes planar inputs): inputs in one
//    channels-last, permuted or blocked layout (NCHW8c, NCHW16c, NHWC8c; channels that are no
//    multiple of the block), full or broadcast, beside planar inputs whose memory order agrees
//    (their dimensions other than 1 in the layout's order, and 1 on a blocked axis); the outputs
//    come out in that layout;
//  - folded transposes: inputs stored in any order and transposed back (folded into strided
//    loads, gathers where the innermost axis is strided), next to planar and broadcast
//    inputs, and outputs transposed by an order that keeps the innermost axis innermost
//    (folded into the stores): as a Program (the tokenizer takes the Transposes in) or
//    compiled directly with the Result's layout.
// A block's padding lanes are not compared (they hold what the kernel computed from zeros).
#pragma once

#include "fuzz/types.hpp"

namespace snippets::fuzz {

namespace detail {

/// Whether a planar input of `shape` (rank-aligned to `order`) is read in the same memory
/// order as the body's layout: its dimensions other than 1 keep their order in `order`, and it
/// is 1 on a blocked axis.
inline bool agrees(const std::vector<Dim>& shape, const Layout& l) {
  const std::size_t extra = l.order().size() - shape.size();
  if (l.is_blocked() && std::size_t(l.block_axis()) >= extra &&
      shape[std::size_t(l.block_axis()) - extra] != 1)
    return false;
  std::size_t last = 0;
  bool first = true;
  for (std::size_t axis : l.order()) {
    if (axis < extra || shape[axis - extra] == 1) continue;
    if (!first && axis < last) return false;
    last = axis;
    first = false;
  }
  return true;
}

/// The exact ops of fuzz/types.hpp for values of `t`.
inline std::vector<OpMaker> ops_for(ElementType t) {
  static const std::vector<TypedOp> typed = typed_ops();
  std::vector<OpMaker> ops;
  for (const TypedOp& op : typed)
    if (t == ElementType::f32 ? op.f32 : is_float(t) ? op.narrow : op.ints) ops.push_back(op.op);
  return ops;
}

inline Case body_layout_case(Rng& rng, ElementType t) {
  const std::size_t rank = std::size_t(rng.integer(3, 5));
  Layout l;
  switch (rng.integer(0, 4)) {
  case 0: l = Layout::channels_last(rank); break;
  case 1: {
    Order o(rank);
    for (std::size_t i = 0; i < rank; ++i) o[i] = i;
    l = Layout::blocked(o, 1, rng.integer(0, 1) ? 8 : 16);
    break;
  }
  case 2: {
    Order o = Layout::channels_last(rank).order();
    l = Layout::blocked(o, 1, 8);
    break;
  }
  default: { // any order that is not planar
    Order o(rank);
    for (std::size_t i = 0; i < rank; ++i) o[i] = i;
    while (Layout::permuted(o).is_planar())
      for (std::size_t i = rank; i-- > 1;)
        std::swap(o[i], o[std::size_t(rng.integer(0, std::int64_t(i)))]);
    l = Layout::permuted(o);
  }
  }
  std::vector<Dim> out = random_dims(rng, int(rank), 1536);
  constexpr Dim channels[] = {3, 8, 16, 17, 19, 32, 33};
  out[1] = channels[rng.integer(0, 6)];
  maybe_empty(rng, out, 0.03);
  Case c;
  Graph& g = c.model;
  std::vector<Value> pool, full;
  const auto inputs = rng.integer(1, 4);
  for (std::int64_t i = 0; i < inputs; ++i) {
    const std::string name = std::string("in").append(std::to_string(i));
    if (i == 0) {
      full.push_back(g.parameter(t, Shape(out), name, l));
      pool.push_back(full.back());
      continue;
    }
    std::vector<Dim> s = out;
    for (auto& d : s)
      if (rng.integer(0, 2) == 0) d = 1;
    if (rng.integer(0, 1)) { // the body's layout, broadcast
      // an input in a blocked layout broadcast along the blocked axis ([1,1,2,3] in nChw8c
      // beside [1,16,2,3]) is refused (Canonicalize: its block's padding lanes are not
      // channels): such inputs keep the full blocked axis
      if (l.is_blocked()) s[std::size_t(l.block_axis())] = out[std::size_t(l.block_axis())];
      pool.push_back(g.parameter(t, Shape(s), name, l));
      continue;
    }
    if (rng.integer(0, 1)) s.erase(s.begin(), s.begin() + rng.integer(0, std::int64_t(rank) - 1));
    if (!agrees(s, l)) continue; // a planar input in another memory order: layout_conflict
    pool.push_back(g.parameter(t, Shape(s), name));
  }
  if (rng.integer(0, 1)) pool.push_back(g.scalar(t, rng.uniform(-2, 2)));
  const std::vector<OpMaker> ops = ops_for(t);
  // a chain from input 0 (whose shape is the output's) through ops that read the others
  std::vector<Value> chain{pool[0]};
  const auto n_ops = rng.integer(1, 10);
  for (std::int64_t i = 0; i < n_ops; ++i) {
    const OpMaker& op = ops[std::size_t(rng.integer(0, std::int64_t(ops.size()) - 1))];
    std::vector<Value> args{chain.back()};
    if (op.arity == 2)
      args.push_back(pool[std::size_t(rng.integer(0, std::int64_t(pool.size()) - 1))]);
    if (op.arity == 2 && rng.integer(0, 1)) std::swap(args[0], args[1]);
    try {
      chain.push_back(op.make(g, args));
    } catch (const Error&) { // an op these operands cannot take: skipped
    }
  }
  int results = 0;
  for (std::size_t i = chain.size(); i-- > 0 && results < 3;)
    if (results == 0 || rng.integer(0, 2) == 0)
      g.result(chain[i], std::string("out").append(std::to_string(results++)));
  c.program = false;
  c.body_layout = l;
  return c;
}

inline Case transpose_case(Rng& rng, ElementType t) {
  const int rank = int(rng.integer(2, 5));
  std::vector<Dim> out = random_dims(rng, rank, 1536);
  maybe_empty(rng, out, 0.03);
  Case c;
  Graph& g = c.model;
  std::vector<Value> pool;
  const auto inputs = rng.integer(1, 4);
  for (std::int64_t i = 0; i < inputs; ++i) {
    const std::string name = std::string("in").append(std::to_string(i));
    if (i == 0 || rng.integer(0, 1)) {
      Order p(out.size()); // stored in another order, transposed back
      for (std::size_t k = 0; k < p.size(); ++k) p[k] = k;
      // Finding: a Transpose that moves the innermost axis of an input that is not f32 (a
      // gather: VGATHERDPS loads f32 only) is not folded (fuse_transpose_into_parameter.hpp),
      // though README says any order folds; compile() raises unsupported_op and the tokenizer
      // still makes it a Subgraph of its own, which runs on the reference path. Other types
      // keep their innermost axis innermost here.
      const std::size_t shuffled = t == ElementType::f32 ? p.size() : p.size() - 1;
      for (std::size_t k = shuffled; k-- > 1;)
        std::swap(p[k], p[std::size_t(rng.integer(0, std::int64_t(k)))]);
      std::vector<Dim> logical = out;
      if (i > 0 && rng.integer(0, 1)) logical[std::size_t(rng.integer(0, rank - 1))] = 1;
      std::vector<Dim> stored(logical.size());
      for (std::size_t k = 0; k < p.size(); ++k) stored[p[k]] = logical[k];
      pool.push_back(g.transpose(g.parameter(t, Shape(stored), name), p));
    } else {
      pool.push_back(g.parameter(t, broadcast_input(rng, out), name));
    }
  }
  const std::vector<OpMaker> ops = ops_for(t);
  grow_chain(g, rng, ops, rng.integer(1, 8), pool);
  Value y = pool.back();     // depends on input 0 (the chain starts at the last input, which ...)
  y = g.maximum(y, pool[0]); // ... may be broadcast: input 0 gives the output its full shape
  c.program = rng.integer(0, 1) == 0;
  const bool to_bf16 = c.program && rng.integer(0, 3) == 0;
  if (rng.integer(0, 2)) {
    // an output order that keeps the innermost axis innermost
    Order o(std::size_t(rank - 1));
    for (std::size_t k = 0; k < o.size(); ++k) o[k] = k;
    for (std::size_t k = o.size(); k-- > 1;)
      std::swap(o[k], o[std::size_t(rng.integer(0, std::int64_t(k)))]);
    o.push_back(std::size_t(rank - 1));
    if (c.program) {
      y = g.transpose(y, o);
      if (to_bf16) y = g.convert(y, ElementType::bf16);
      g.result(y, "out");
    } else if (passes::FuseTransposeIntoResult::keeps_innermost(Shape(out), o)) {
      g.make(ir::Result{Layout::permuted(o)}, {y}, "out");
    } else {
      // a Result layout that keeps the last axis last while that axis has extent 1 (so the
      // innermost axis of extent > 1 moves: [3,5,1] by [1,0,2]) is refused by compile()
      // (snippets.compile.strided_output, test_transpose_fusion.cpp): not generated
      g.result(y, "out");
    }
  } else {
    g.result(y, "out");
  }
  return c;
}

} // namespace detail

inline Case layout_case(std::uint64_t seed) {
  Rng rng(seed);
  constexpr ElementType types[] = {ElementType::f32,  ElementType::f32, ElementType::f16,
                                   ElementType::bf16, ElementType::i8,  ElementType::u8};
  const ElementType t = types[rng.integer(0, 5)];
  Case c = rng.integer(0, 1) ? detail::body_layout_case(rng, t) : detail::transpose_case(rng, t);
  // an integer has no sign of zero, the reference keeps -0 in its values (docs/math_accuracy.md)
  c.check = is_integer(t) ? Check::exact_any_zero : Check::exact;
  c.threads = 1 + int(seed % 2);
  return c;
}

} // namespace snippets::fuzz
