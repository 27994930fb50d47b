// SPDX-License-Identifier: Apache-2.0
// tests/fuzz/elementwise.hpp: the elementwise family (correctly rounded f32 ops, checked bit
// for bit) and the shape and model builders the other families reuse.
//
//  - random_dims: a shape within an element cap whose innermost dimension is picked first,
//    among wide sizes, so high ranks keep wide rows (the outer dimensions share the rest);
//  - broadcast_input: a shape that broadcasts into a given one (1s, fewer leading dims);
//  - random_model(seed, spec): 1-4 inputs broadcasting into a random output shape of rank 1-6
//    (now and then with a zero dimension), a chain of random ops from spec.ops that favours
//    recent values but reaches back (diamonds), scalar and row constants, Opaque identities in
//    between (they split Subgraphs) and 1-3 Results (multi-output Subgraphs). The model runs as
//    a Program; with exact ops and no FMA contraction the kernels match the reference bit for
//    bit (each node rounded to f32).
#pragma once

#include <string>
#include <vector>

#include "fuzz/core.hpp"

namespace snippets::fuzz {

/// One op the generator may emit: its arity and how to build it.
struct OpMaker {
  const char* name;
  int arity;
  std::function<Value(Graph&, std::span<const Value>)> make;
};

template <class Tag> OpMaker unary(const char* name, Tag tag) {
  return {name, 1, [tag](Graph& g, std::span<const Value> v) { return g.apply(tag, v[0]); }};
}
template <class Tag> OpMaker binary(const char* name, Tag tag) {
  return {name, 2, [tag](Graph& g, std::span<const Value> v) { return g.apply(tag, v[0], v[1]); }};
}

/// Correctly rounded ops (one IEEE rounding or none): the JIT must match bit for bit.
inline std::vector<OpMaker> exact_ops() {
  return {
      binary("Add", ir::Add{}),
      binary("Subtract", ir::Subtract{}),
      binary("Multiply", ir::Multiply{}),
      binary("Divide", ir::Divide{}),
      binary("Maximum", ir::Maximum{}),
      binary("Minimum", ir::Minimum{}),
      unary("Abs", ir::Abs{}),
      unary("Negative", ir::Negative{}),
      unary("Relu", ir::Relu{}),
      unary("Clamp", ir::Clamp{-2.5, 3.0}),
      unary("Floor", ir::Floor{}),
      unary("Ceiling", ir::Ceiling{}),
      unary("Round", ir::Round{}),
      unary("RoundAway", ir::Round{ir::RoundMode::half_away_from_zero}),
      unary("Sqrt", ir::Sqrt{}),
      unary("Square", ir::PowerStatic{2.0}),
      {"Select>", 2,
       [](Graph& g, std::span<const Value> v) {
         return g.select(g.greater(v[0], v[1]), v[0], v[1]);
       }},
      {"Select==", 2,
       [](Graph& g, std::span<const Value> v) {
         return g.select(g.logical_or(g.equal(v[0], v[1]), g.less_equal(v[1], v[0])), v[1], v[0]);
       }},
      {"Select!", 2,
       [](Graph& g, std::span<const Value> v) {
         return g.select(
             g.logical_not(g.logical_xor(g.less(v[0], v[1]), g.greater_equal(v[0], v[1]))), v[0],
             v[1]);
       }},
  };
}

// ---- shapes ----

/// `rank` dimensions with at most `max_elements` elements: the innermost first, among wide
/// sizes (leaving at least 2 per outer dimension), then each outer one within an even share of
/// what is left.
/// Appends `n` ops drawn from `ops` to `pool`, each reading the newest value (and a random
/// one of the pool for a binary op); an op its operands cannot take is skipped.
inline void grow_chain(Graph& g, Rng& rng, const std::vector<OpMaker>& ops, std::int64_t n,
                       std::vector<Value>& pool) {
  for (std::int64_t i = 0; i < n; ++i) {
    const OpMaker& op = ops[std::size_t(rng.integer(0, std::int64_t(ops.size()) - 1))];
    std::vector<Value> args{pool.back()};
    if (op.arity == 2)
      args.push_back(pool[std::size_t(rng.integer(0, std::int64_t(pool.size()) - 1))]);
    try {
      pool.push_back(op.make(g, args));
    } catch (const Error&) {
    }
  }
}

inline std::vector<Dim> random_dims(Rng& rng, int rank, std::int64_t max_elements) {
  static constexpr Dim inner[] = {3, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 47, 64, 65, 100, 129};
  static constexpr Dim outer[] = {1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17};
  std::vector<Dim> d(std::size_t(rank), 1);
  if (rank == 0) return d;
  const std::int64_t inner_cap = std::max<std::int64_t>(3, max_elements >> (rank - 1));
  Dim n = 1;
  if (rng.integer(0, 19) != 0)
    for (int tries = 0; tries < 8 && (n == 1 || n > inner_cap); ++tries)
      n = inner[rng.integer(0, std::size(inner) - 1)];
  if (n > inner_cap) n = 3;
  d.back() = n;
  std::int64_t elements = n;
  for (int i = rank - 2; i >= 0; --i) {
    const double share = std::pow(double(max_elements) / double(elements), 1.0 / (i + 1));
    const auto cap = std::max<std::int64_t>(1, std::int64_t(share));
    Dim x = outer[rng.integer(0, std::size(outer) - 1)];
    if (x > cap || rng.integer(0, 3) == 0) x = rng.integer(1, std::min<std::int64_t>(cap, 3));
    d[std::size_t(i)] = x;
    elements *= x;
  }
  return d;
}

/// With probability `p`, one dimension of `d` becomes 0 (an empty tensor).
inline void maybe_empty(Rng& rng, std::vector<Dim>& d, double p) {
  if (!d.empty() && rng.uniform(0, 1) < p)
    d[std::size_t(rng.integer(0, std::int64_t(d.size()) - 1))] = 0;
}

/// A shape that broadcasts into `out`: some dimensions 1, sometimes fewer leading ones.
inline Shape broadcast_input(Rng& rng, const std::vector<Dim>& out, int one_in = 4) {
  std::vector<Dim> s = out;
  for (auto& d : s)
    if (rng.integer(0, one_in - 1) == 0) d = 1;
  if (!s.empty() && rng.integer(0, 2) == 0) // fewer leading dims
    s.erase(s.begin(), s.begin() + rng.integer(0, std::int64_t(s.size()) - 1));
  return Shape(s);
}

// ---- models ----

struct ModelSpec {
  std::vector<OpMaker> ops = exact_ops();
  int min_ops = 3, max_ops = 24;
  int min_rank = 1, max_rank = 6;
  std::int64_t max_elements = 2048;
  double opaque_probability = 0.08; // an Opaque Identity (or Twice) after an op
  double empty_probability = 0.03;  // a zero dimension in the output shape
  int max_inputs = 4;
  ElementType type = ElementType::f32;
  bool twice = false; // Opaque Twice (x * 2, run on doubles by the Program) besides Identity
};

/// A random model of `spec.ops` (see the header).
inline Graph random_model(std::uint64_t seed, const ModelSpec& spec = {}) {
  Rng rng(seed);
  const int rank = int(rng.integer(spec.min_rank, spec.max_rank));
  std::vector<Dim> out = random_dims(rng, rank, spec.max_elements);
  maybe_empty(rng, out, spec.empty_probability);
  Graph g;
  std::vector<Value> pool;
  std::vector<bool> constant; // per pool value: computed from constants alone
  const int inputs = int(rng.integer(1, spec.max_inputs));
  for (int i = 0; i < inputs; ++i)
    pool.push_back(g.parameter(spec.type, broadcast_input(rng, out),
                               std::string("in").append(std::to_string(i))));
  constant.assign(pool.size(), false);
  if (rng.integer(0, 2) == 0) {
    pool.push_back(g.scalar(spec.type, rng.uniform(-3, 3)));
    constant.push_back(true);
  }
  if (rank > 0 && out.back() > 0 && rng.integer(0, 3) == 0) {
    std::vector<double> row(std::size_t(out.back()));
    for (auto& v : row) v = rng.uniform(-4, 4);
    pool.push_back(g.constant(spec.type, {out.back()}, row, "row"));
    constant.push_back(true);
  }
  const int n_ops = int(rng.integer(spec.min_ops, spec.max_ops));
  for (int i = 0; i < n_ops; ++i) {
    const OpMaker& op = spec.ops[std::size_t(rng.integer(0, std::int64_t(spec.ops.size()) - 1))];
    // favour recent values, so chains grow long, but reach back sometimes (diamonds)
    auto pick = [&] {
      const auto n = std::int64_t(pool.size());
      return std::size_t(rng.integer(0, 1) ? n - 1 : rng.integer(0, n - 1));
    };
    std::vector<Value> args;
    bool all_constant = true;
    for (int a = 0; a < op.arity; ++a) {
      const std::size_t k = pick();
      args.push_back(pool[k]);
      all_constant = all_constant && constant[k];
    }
    // ops on constants alone are left out: the tokenizer drops a Subgraph of them alone, but
    // one that also computes on inputs and has such a value as an output is refused by compile()
    // (constant_output) and runs on the reference path
    if (all_constant) continue;
    Value v;
    try { // an op these operands cannot take (types, shapes) is skipped: the graph is unchanged
      v = op.make(g, args);
    } catch (const Error&) {
      continue;
    }
    if (rng.uniform(0, 1) < spec.opaque_probability)
      v = opaque(g, v, spec.twice && rng.integer(0, 1) ? "Twice" : "Identity");
    pool.push_back(v);
    constant.push_back(false);
  }
  // the last value, and up to two others that are not graph inputs or constants
  std::vector<Value> computed;
  for (std::size_t k = std::size_t(inputs); k < pool.size(); ++k)
    if (!constant[k]) computed.push_back(pool[k]);
  g.result(computed.empty() ? pool[0] : computed.back(), "out0");
  const int extra = computed.empty() ? 0 : int(rng.integer(0, 2));
  for (int i = 0; i < extra; ++i) {
    const Value v = computed[std::size_t(rng.integer(0, std::int64_t(computed.size()) - 1))];
    g.result(v, std::string("out").append(std::to_string(i + 1)));
  }
  return g;
}

/// The elementwise family: exact ops, bit for bit, 1-3 threads.
inline Case elementwise_case(std::uint64_t seed) {
  Case c;
  c.model = random_model(seed);
  c.threads = 1 + int(seed % 3);
  return c;
}

} // namespace snippets::fuzz
