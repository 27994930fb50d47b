// tests/fuzz_graph.hpp: differential fuzzing of whole models (tokenizer + JIT + Program)
// against the reference interpreter.
//
//  - random_model(seed, spec): a random valid model: 1-4 inputs whose shapes broadcast into a
//    random output shape of rank 1-6 (odd sizes, 1s for broadcasting), a chain of 3-24 random
//    ops picked from spec.ops, Opaque identity ops in between (they split Subgraphs), scalar
//    and tensor constants, and 1-3 Results (so multi-output Subgraphs occur);
//  - run_differential(model, isa): builds a Program, runs it on deterministic inputs (with
//    NaN, infinities, signed zeros) and compares every output with the reference interpreter;
//  - shrink(model, fails): removes Results and bypasses ops while the failure persists, so a
//    failing case is reported as the smallest graph found.
// In exact mode (every op correctly rounded, FMA contraction off) the JIT must match the
// reference bit for bit: the reference rounds each node to f32, as the kernel does.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "jit_test_util.hpp"

namespace snippets::fuzz {

using ir::Value;
using jit_test::Graph;
using jit_test::Rng;
using jit_test::Tensor;
using jit_test::Tolerance;

/// One op the generator may emit: its arity and how to build it.
struct OpMaker {
  const char* name;
  int arity;
  std::function<Value(Graph&, std::span<const Value>)> make;
};

/// Correctly rounded ops (one IEEE rounding or none): the JIT must match bit for bit.
inline std::vector<OpMaker> exact_ops() {
  auto unary = [](auto tag) {
    return [tag](Graph& g, std::span<const Value> v) { return g.apply(tag, v[0]); };
  };
  auto binary = [](auto tag) {
    return [tag](Graph& g, std::span<const Value> v) { return g.apply(tag, v[0], v[1]); };
  };
  return {
      {"Add", 2, binary(ir::Add{})},
      {"Subtract", 2, binary(ir::Subtract{})},
      {"Multiply", 2, binary(ir::Multiply{})},
      {"Divide", 2, binary(ir::Divide{})},
      {"Maximum", 2, binary(ir::Maximum{})},
      {"Minimum", 2, binary(ir::Minimum{})},
      {"Abs", 1, unary(ir::Abs{})},
      {"Negative", 1, unary(ir::Negative{})},
      {"Relu", 1, unary(ir::Relu{})},
      {"Clamp", 1, unary(ir::Clamp{-2.5, 3.0})},
      {"Floor", 1, unary(ir::Floor{})},
      {"Ceiling", 1, unary(ir::Ceiling{})},
      {"Round", 1, unary(ir::Round{})},
      {"RoundAway", 1, unary(ir::Round{ir::RoundMode::half_away_from_zero})},
      {"Sqrt", 1, unary(ir::Sqrt{})},
      {"Square", 1, unary(ir::PowerStatic{2.0})},
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

struct ModelSpec {
  std::vector<OpMaker> ops = exact_ops();
  int min_ops = 3, max_ops = 24;
  std::int64_t max_elements = 2048;
  double opaque_probability = 0.08; // an Opaque identity after an op
};

/// Registers the Opaque identity ops the generator uses, for the reference and the Program.
inline void register_identity(reference::Options& ref, ProgramOptions<x64::Traits>& prog) {
  ref.opaque["Identity"] = [](std::span<const reference::Values> in) {
    return std::vector<reference::Values>{in[0]};
  };
  prog.opaque["Identity"] = [](std::span<const ConstTensorView> in,
                               std::span<const TensorView> out) {
    std::memcpy(out[0].data, in[0].data,
                static_cast<std::size_t>(in[0].shape.element_count()) * size_of(in[0].type));
  };
}

inline Graph random_model(std::uint64_t seed, const ModelSpec& spec = {}) {
  Rng rng(seed);
  static constexpr Dim sizes[] = {1, 2, 3, 5, 7, 8, 15, 16, 17, 31, 33};
  const int rank = static_cast<int>(rng.integer(1, 6));
  std::vector<Dim> out;
  std::int64_t elements = 1;
  for (int i = 0; i < rank; ++i) {
    Dim d = sizes[rng.integer(0, std::size(sizes) - 1)];
    while (d > 1 && elements * d > spec.max_elements) d = sizes[rng.integer(0, 4)];
    out.push_back(d);
    elements *= d;
  }
  Graph g;
  std::vector<Value> pool;
  const int inputs = static_cast<int>(rng.integer(1, 4));
  for (int i = 0; i < inputs; ++i) {
    std::vector<Dim> s = out;
    for (auto& d : s)
      if (rng.integer(0, 3) == 0) d = 1; // broadcast along this axis
    const std::size_t drop =
        static_cast<std::size_t>(rng.integer(0, rank - 1)) * (rng.integer(0, 2) == 0);
    s.erase(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(drop)); // fewer leading dims
    pool.push_back(
        g.parameter(ElementType::f32, Shape(s), std::string("in").append(std::to_string(i))));
  }
  if (rng.integer(0, 2) == 0) pool.push_back(g.scalar(ElementType::f32, rng.uniform(-3, 3)));
  if (rng.integer(0, 3) == 0) {
    std::vector<double> row(static_cast<std::size_t>(out.back()));
    for (auto& v : row) v = rng.uniform(-4, 4);
    pool.push_back(g.constant(ElementType::f32, {out.back()}, row, "row"));
  }
  const int n_ops = static_cast<int>(rng.integer(spec.min_ops, spec.max_ops));
  for (int i = 0; i < n_ops; ++i) {
    const OpMaker& op = spec.ops[static_cast<std::size_t>(rng.integer(0, spec.ops.size() - 1))];
    // favour recent values, so chains grow long, but reach back sometimes (diamonds)
    auto pick = [&] {
      const auto n = static_cast<std::int64_t>(pool.size());
      return pool[static_cast<std::size_t>(rng.integer(0, 1) ? n - 1 : rng.integer(0, n - 1))];
    };
    std::vector<Value> args;
    for (int a = 0; a < op.arity; ++a) args.push_back(pick());
    Value v = op.make(g, args);
    if (rng.uniform(0, 1) < spec.opaque_probability)
      v = g.make(ir::Opaque{"Identity", {g.type(v)}}, {v}, "Identity")[0];
    pool.push_back(v);
  }
  // the last value, and up to two others that are not graph inputs
  g.result(pool.back(), "out0");
  const int extra = static_cast<int>(rng.integer(0, 2));
  for (int i = 0; i < extra; ++i) {
    const Value v = pool[static_cast<std::size_t>(rng.integer(inputs, pool.size() - 1))];
    g.result(v, std::string("out").append(std::to_string(i + 1)));
  }
  return g;
}

struct Outcome {
  std::string failure; // empty: passed
  int kernels = 0;     // Subgraphs run as JIT kernels
};

/// Runs `model` as a Program on `isa` and compares with the reference interpreter.
/// `threads` = 0 alternates 1 and 2 threads by seed.
inline Outcome run_differential(const Graph& model, x64::Isa isa, std::uint64_t seed, Tolerance tol,
                                bool fma, int threads = 0) {
  ProgramOptions<x64::Traits> opt;
  reference::Options ref;
  ref.round_each_node = true; // the kernel rounds every op to f32
  register_identity(ref, opt);
  opt.compile.isa = isa;
  opt.compile.fma = fma;
  Outcome outcome;
  try {
    const Program<> program(model, opt);
    for (const auto& step : program.steps()) {
      outcome.kernels += step.kind == Program<>::StepKind::kernel;
      if (!step.note.empty()) outcome.failure = "unexpected fallback: " + step.note;
    }
    std::vector<Tensor> in;
    for (ir::NodeId p : model.parameters())
      in.push_back(jit_test::make_tensor(model.node(p).outputs[0].shape, seed++));
    const auto got =
        program.run(in, jit_test::with_threads(threads ? threads : 1 + static_cast<int>(seed % 2)));
    const auto want = reference::evaluate(model, in, ref);
    for (std::size_t i = 0; i < got.size() && outcome.failure.empty(); ++i)
      if (auto diff = jit_test::compare(got[i], want[i], tol); !diff.empty())
        outcome.failure = "output " + std::to_string(i) + ": " + diff;
  } catch (const std::exception& e) {
    outcome.failure = std::string("threw: ") + e.what();
  }
  return outcome;
}

/// The smallest variant of `model` (dead ops removed, fewer Results, ops bypassed by an input
/// of the same type) that still fails.
inline Graph shrink(const Graph& model, const std::function<bool(const Graph&)>& fails) {
  using Rewrite = std::function<std::optional<std::vector<Value>>(
      Graph&, const ir::Node<x64::Traits>&, std::span<const Value>)>;
  auto copy = [](const Graph& g, const Rewrite& rewrite) {
    return passes::rebuild(g, rewrite, false);
  };
  Graph best = copy(model, [](auto&&...) { return std::optional<std::vector<Value>>{}; });
  for (bool progress = true; progress;) {
    progress = false;
    std::vector<Graph> candidates;
    candidates.push_back(passes::remove_dead_nodes(best));
    for (std::size_t r = 0; best.results().size() > 1 && r < best.results().size(); ++r)
      candidates.push_back(
          copy(best, [&, drop = best.results()[r]](Graph&, const ir::Node<x64::Traits>& n,
                                                   std::span<const Value>) {
            return n.id == drop ? std::optional<std::vector<Value>>{std::vector<Value>{}}
                                : std::nullopt;
          }));
    for (ir::NodeId id = 0; id < best.size(); ++id) {
      const auto& n = best.node(id);
      if (n.inputs.empty() || ir::is<ir::Result>(n.op) || n.outputs.size() != 1) continue;
      for (std::size_t i = 0; i < n.inputs.size(); ++i)
        if (best.type(n.inputs[i]) == n.outputs[0]) {
          candidates.push_back(copy(
              best, [&, id, i](Graph&, const ir::Node<x64::Traits>& m, std::span<const Value> in) {
                return m.id == id ? std::optional<std::vector<Value>>{std::vector<Value>{in[i]}}
                                  : std::nullopt;
              }));
          break;
        }
    }
    for (Graph& c : candidates)
      if (ir::to_string(c) != ir::to_string(best) && fails(c)) {
        best = std::move(c);
        progress = true;
        break;
      }
  }
  return best;
}

} // namespace snippets::fuzz
