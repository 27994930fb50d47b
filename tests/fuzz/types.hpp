// SPDX-License-Identifier: Apache-2.0
// tests/fuzz/types.hpp: the element-type family and the dynamic-shape family.
//
// typed_model builds a random model over inputs of every kernel I/O type (f32, f16, bf16, i8,
// u8, i32, boolean): i32 inputs go through a Convert to f32, f16, i8 or u8 first (what README
// and the tokenizer allow in a kernel), Converts between the types (to i32 and back too),
// Selects whose condition is a boolean input or a comparison (of any compute type, booleans
// too), Results converted to any I/O type (a boolean output: value != 0). Arithmetic runs on f32
// values, and on i8 and u8 values with the ops exact on small integers (AlignElementTypes computes
// them in f32 and converts back after each op); f16 and bf16 values take only the ops whose result
// they hold exactly (Abs, Negative, Relu, Clamp, Floor, Ceiling, Round, Maximum, Minimum, Mod,
// Select): a kernel keeps an f16/bf16 op's result in f32 until a Convert or a store rounds it, as
// the reference keeps it in double, and where a Program stores it between two kernels it is
// rounded, so only these ops have one exact result. So the kernels match the reference (every node
// rounded to its type) bit for bit, except the sign of a zero that went through an integer
// (docs/math_accuracy.md). Divide is left out: the reference keeps that -0 in its integer
// values, and a division by it gives -inf where a kernel gives +inf.
//
//  - types: the model as a Program, 1-3 threads, bf16 stores by VCVTNEPS2BF16 or by integer
//    rounding (native_bf16) on AVX-512;
//  - dynamic: the model with dynamic dimensions (rank up to 8) compiled once into one kernel
//    and run on 3-5 calls of random shapes, broadcasts that change from call to call (a
//    dynamic dimension that is 1 at run time), zero-sized calls (empty rows too), 1-3
//    threads. A third of its models reduce rows instead (f32 inputs, the ops of the reduction
//    family, fuzz/reduce.hpp, with one reduction or Softmax at least): they are checked within
//    the bounds of fuzz/bounds.hpp, with FMA contraction.
#pragma once

#include "fuzz/elementwise.hpp"
#include "fuzz/reduce.hpp"

namespace snippets::fuzz {

constexpr ElementType io_types[] = {ElementType::f32,    ElementType::f16, ElementType::bf16,
                                    ElementType::i8,     ElementType::u8,  ElementType::i32,
                                    ElementType::boolean};

/// Exact ops for typed values: which types they may run on (see the header).
struct TypedOp {
  OpMaker op;
  bool f32 = true, narrow = true, ints = true; // f32; f16 and bf16; i8 and u8
};

inline std::vector<TypedOp> typed_ops() {
  std::vector<TypedOp> ops;
  for (OpMaker& m : exact_ops()) {
    const std::string_view name = m.name;
    const bool rounds = name == "Add" || name == "Subtract" || name == "Multiply" ||
                        name == "Sqrt" || name == "Square";
    if (name != "Divide")
      ops.push_back({std::move(m), true, !rounds, name != "Sqrt" && name != "Square"});
  }
  ops.push_back({binary("SquaredDifference", ir::SquaredDifference{}), false, false, true});
  ops.push_back({binary("Mod", ir::Mod{}), true, true, true});
  ops.push_back({binary("FloorMod", ir::FloorMod{}), true, false, true});
  return ops;
}

/// A model over Parameters of `shapes` and `types` (see the header). With `full_results`, every
/// Result depends on input 0 (whose shape is the output's: a kernel's outputs all have it).
inline Graph typed_model(Rng& rng, const std::vector<Shape>& shapes,
                         const std::vector<ElementType>& types, bool full_results) {
  static const std::vector<TypedOp> ops = typed_ops();
  Graph g;
  struct Entry {
    Value v;
    bool full;             // depends on input 0
    bool constant = false; // computed from constants alone
  };
  std::vector<Entry> pool;
  auto type_of = [&](Value v) { return g.type(v).type; };
  auto some_type = [&] { // a compute type: not i32 (kernels keep i32 values to Converts)
    return io_types[rng.integer(0, 4)];
  };
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    Value p = g.parameter(types[i], shapes[i], std::string("in").append(std::to_string(i)));
    if (types[i] == ElementType::i32) { // only Converts read an i32 input in a kernel
      constexpr ElementType to[] = {ElementType::f32, ElementType::f16, ElementType::i8,
                                    ElementType::u8};
      p = g.convert(p, to[rng.integer(0, 3)]);
    } else if (rng.integer(0, 2) == 0) {
      p = g.convert(p, some_type());
    }
    pool.push_back({p, i == 0});
  }
  if (rng.integer(0, 1)) pool.push_back({g.scalar(some_type(), rng.uniform(-5, 5)), false, true});
  const int n_ops = int(rng.integer(2, 14));
  for (int i = 0; i < n_ops; ++i) {
    auto pick = [&] {
      const auto n = std::int64_t(pool.size());
      return pool[std::size_t(rng.integer(0, 1) ? n - 1 : rng.integer(0, n - 1))];
    };
    const auto kind = rng.integer(0, 11);
    Entry a = pick();
    // ops on constants alone stay on the reference path (the tokenizer drops such Subgraphs;
    // the elementwise family builds them): not generated here, where every op is to be fused
    if (a.constant && kind < 2) continue;
    try {
      if (kind >= 10) { // a Select on a boolean value or on a comparison of two values
        // `like` as type t: itself, a new Scalar of t for a constant (see above), or a Convert
        auto as = [&](const Entry& e, ElementType t) {
          return type_of(e.v) == t ? e.v
                 : e.constant      ? g.scalar(t, rng.uniform(-5, 5))
                                   : g.convert(e.v, t);
        };
        const ElementType t = type_of(a.v);
        Entry b = pick(), x = pick(), y = pick();
        if (a.constant && b.constant) continue;
        Value cond = a.v; // a boolean value itself, or compared (false < true) with another
        bool full = a.full || x.full || y.full;
        if (t != ElementType::boolean || kind == 11) {
          cond = kind == 10 ? g.greater(a.v, as(b, t)) : g.equal(a.v, as(b, t));
          full = full || b.full;
        }
        const ElementType xt =
            type_of(x.v) == ElementType::boolean && rng.integer(0, 1) ? some_type() : type_of(x.v);
        pool.push_back({g.select(cond, as(x, xt), as(y, xt)), full});
      } else if (kind == 0) { // a Convert to another compute type
        pool.push_back({g.convert(a.v, some_type()), a.full});
      } else if (kind == 1) { // through i32 and back (saturating at 2^31, as an f32 holds it)
        const ElementType back = some_type();
        pool.push_back({g.convert(g.convert(a.v, ElementType::i32), back), a.full});
      } else {
        const TypedOp& op = ops[std::size_t(rng.integer(0, std::int64_t(ops.size()) - 1))];
        const ElementType t = type_of(a.v);
        if (!(t == ElementType::f32 ? op.f32 : is_float(t) ? op.narrow : op.ints)) continue;
        std::vector<Value> args{a.v};
        bool full = a.full;
        bool constant = a.constant;
        if (op.op.arity == 2) {
          Entry b = pick();
          full = full || b.full;
          constant = constant && b.constant;
          if (constant) continue; // see the finding above
          // a constant of another type: a new Scalar of t, not a Convert of it (see above)
          args.push_back(type_of(b.v) == t ? b.v
                         : b.constant      ? g.scalar(t, rng.uniform(-5, 5))
                                           : g.convert(b.v, t));
        } else if (constant) {
          continue;
        }
        pool.push_back({op.op.make(g, args), full});
      }
    } catch (const Error&) { // shapes or types the op cannot take: skip it
    }
  }
  std::vector<Value> outs;
  for (auto it = pool.rbegin(); it != pool.rend() && outs.size() < 3; ++it)
    if (!it->constant && (it->full || !full_results) && (outs.empty() || rng.integer(0, 2) == 0))
      outs.push_back(it->v);
  for (std::size_t i = 0; i < outs.size(); ++i) {
    Value v = outs[i];
    if (rng.integer(0, 1)) v = g.convert(v, io_types[rng.integer(0, 6)]);
    g.result(v, std::string("out").append(std::to_string(i)));
  }
  return g;
}

inline std::vector<ElementType> random_types(Rng& rng, std::size_t n) {
  std::vector<ElementType> t(n);
  for (auto& x : t) x = io_types[rng.integer(0, 6)];
  return t;
}

/// The types family (see the header).
inline Case types_case(std::uint64_t seed) {
  Rng rng(seed);
  std::vector<Dim> out = random_dims(rng, int(rng.integer(1, 4)), 1024);
  maybe_empty(rng, out, 0.03);
  std::vector<Shape> shapes;
  const auto inputs = rng.integer(1, 4);
  for (std::int64_t i = 0; i < inputs; ++i)
    shapes.push_back(i == 0 ? Shape(out) : broadcast_input(rng, out));
  Case c;
  c.model = typed_model(rng, shapes, random_types(rng, shapes.size()), false);
  c.check = Check::exact_any_zero;
  c.threads = 1 + int(seed % 3);
  c.native_bf16 = rng.integer(0, 1) == 0;
  return c;
}

/// A dynamic model's shapes: each input's partial shape (input 0 follows the domain in every
/// dimension; the others are 1 here and there, static or only in some calls, and may drop
/// leading dimensions); calls() draws the input shapes of 3-5 calls (now and then an empty one).
class DynamicShapes {
public:
  DynamicShapes(Rng& rng, int rank) : fixed_(std::size_t(rank), dynamic) {
    // per dimension: a static extent (the same in every call) or dynamic
    for (Dim& d : fixed_)
      if (rng.integer(0, 4) == 0) d = rng.integer(1, 5);
    // per input and dimension: follows the domain, or is 1 (static, or at run time in some
    // calls)
    const auto inputs = rng.integer(1, 4);
    for (std::int64_t i = 0; i < inputs; ++i) {
      std::vector<Kind> k(std::size_t(rank), follow);
      std::size_t drop = 0;
      if (i > 0) {
        for (auto& x : k) x = rng.integer(0, 4) < 2 ? follow : Kind(rng.integer(1, 2));
        if (rng.integer(0, 2) == 0) drop = std::size_t(rng.integer(0, rank - 1));
      }
      std::vector<Dim> p;
      for (std::size_t d = drop; d < std::size_t(rank); ++d) {
        if (fixed_[d] != dynamic && k[d] == dyn_one) k[d] = one; // static everywhere
        p.push_back(k[d] == one ? 1 : k[d] == dyn_one ? dynamic : fixed_[d]);
      }
      kinds_.push_back(k);
      dropped_.push_back(drop);
      partial.emplace_back(p);
    }
  }

  std::vector<Shape> partial;

  std::vector<std::map<std::string, Shape>> calls(Rng& rng) const {
    std::vector<std::map<std::string, Shape>> out;
    const auto calls = rng.integer(3, 5);
    for (std::int64_t call = 0; call < calls; ++call) {
      std::vector<Dim> dom = random_dims(rng, int(fixed_.size()), 2048);
      for (std::size_t d = 0; d < dom.size(); ++d)
        if (fixed_[d] != dynamic) dom[d] = fixed_[d];
      if (rng.integer(0, 9) == 0) { // an empty call: a dynamic dimension of 0
        for (std::size_t d = 0; d < dom.size(); ++d)
          if (fixed_[d] == dynamic) {
            dom[d] = 0;
            break;
          }
      }
      std::map<std::string, Shape> shapes;
      for (std::size_t i = 0; i < partial.size(); ++i) {
        std::vector<Dim> s;
        for (std::size_t d = dropped_[i]; d < dom.size(); ++d) {
          const Kind k = kinds_[i][d];
          s.push_back(k == one || (k == dyn_one && rng.integer(0, 1)) ? 1 : dom[d]);
        }
        shapes[std::string("in").append(std::to_string(i))] = Shape(s);
      }
      out.push_back(std::move(shapes));
    }
    return out;
  }

private:
  enum Kind { follow, one, dyn_one };
  std::vector<Dim> fixed_;
  std::vector<std::vector<Kind>> kinds_;
  std::vector<std::size_t> dropped_;
};

/// A dynamic model of f32 inputs of `partial` shapes that reduces rows: a chain of
/// reduce_ops() (exact ops, reductions, Softmax, Exp, Sigmoid, Tanh), one reduction or Softmax
/// of its newest value whatever the chain drew, more of the chain, and 1-3 Results among the
/// values computed from input 0, which have the domain's outer extents (a row or one value per
/// row in every call).
inline Graph dynamic_reduce_model(Rng& rng, const std::vector<Shape>& partial) {
  static const std::vector<OpMaker> ops = reduce_ops();
  std::vector<OpMaker> reductions;
  for (const OpMaker& op : ops)
    if (std::string_view(op.name).starts_with("Reduce") ||
        std::string_view(op.name).starts_with("Softmax"))
      reductions.push_back(op);
  Graph g;
  std::vector<Value> pool;
  if (rng.integer(0, 2) == 0) pool.push_back(g.scalar(ElementType::f32, rng.uniform(-3, 3)));
  for (std::size_t i = partial.size(); i-- > 0;) // input 0 last: the chain starts from it
    pool.push_back(
        g.parameter(ElementType::f32, partial[i], std::string("in").append(std::to_string(i))));
  const Value in0 = pool.back();
  grow_chain(g, rng, ops, rng.integer(0, 5), pool);
  grow_chain(g, rng, reductions, 1, pool);
  grow_chain(g, rng, ops, rng.integer(0, 6), pool);
  std::vector<bool> from_in0(g.size(), false);
  for (ir::NodeId id = 0; id < g.size(); ++id) {
    from_in0[id] = id == in0.output.node;
    for (const ir::Output& in : g.node(id).inputs) from_in0[id] = from_in0[id] || from_in0[in.node];
  }
  std::vector<Value> outs;
  for (auto it = pool.rbegin(); it != pool.rend() && outs.size() < 3; ++it)
    if (*it != in0 && from_in0[it->output.node] && (outs.empty() || rng.integer(0, 2) == 0))
      outs.push_back(*it);
  if (outs.empty()) outs.push_back(g.softmax(in0, -1));
  for (std::size_t i = 0; i < outs.size(); ++i)
    g.result(outs[i], std::string("out").append(std::to_string(i)));
  return g;
}

/// The dynamic family (see the header): a third of its models reduce rows.
inline Case dynamic_case(std::uint64_t seed) {
  Rng rng(seed);
  const bool rows = seed % 3 == 2;
  const int rank = rng.integer(0, 5) == 0 ? int(rng.integer(7, 8)) : int(rng.integer(1, 6));
  const DynamicShapes shapes(rng, rank);
  Case c;
  c.program = false;
  c.threads = 1 + int(seed % 3); // each call of the case runs with another count too
  if (rows) {
    c.model = dynamic_reduce_model(rng, shapes.partial);
    c.check = Check::bounds;
    c.fill = seed % 4 == 0 ? Fill::general : Fill::finite; // some rows with NaN and infinities
    c.fma = true;
  } else {
    c.model = typed_model(rng, shapes.partial, random_types(rng, shapes.partial.size()), true);
    c.check = Check::exact_any_zero;
  }
  c.calls = shapes.calls(rng);
  return c;
}

} // namespace snippets::fuzz
