// SPDX-License-Identifier: Apache-2.0
// tests/fuzz/core.hpp: what every fuzz family shares (tests/test_fuzz.cpp, fuzz/fuzz_models.cpp).
//
//  - Case: one generated test, a model and how to run and check it: as a Program (tokenizer,
//    kernels, Opaque callbacks, memory plan) or as one kernel compiled directly, either with
//    dynamic shapes and several calls with other shapes; input and output layouts, the oracle (bit
//    for bit against the reference with every node rounded to its type, or the error bounds of
//    fuzz/bounds.hpp), the threads and compile options;
//  - deterministic inputs of every element type (make_input), layouts to and from memory order;
//  - run_case: runs a Case on one ISA against reference::evaluate. It also checks that every
//    Subgraph of a Program is a kernel with no note, unless it is the one documented fallback
//    (a body with an empty value whose outputs are not all empty: snippets.compile.empty_value);
//  - shrink: the smallest Case found that fails the same way (fewer Results, ops bypassed,
//    dimensions made smaller), printed with the ir printer.
// Everything is a function of the seed: a failure replays from the seed alone.
#pragma once

#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz/bounds.hpp"

namespace snippets::fuzz {

using ir::Value;
using jit_test::Rng;
using jit_test::Tolerance;
using Order = std::vector<std::size_t>;

/// How a Case is checked against the reference.
enum class Check {
  exact,          // bit for bit (NaN matches NaN), every node rounded to its type
  exact_any_zero, // the same, but +0 matches -0 (a -0 converted through an integer)
  bounds,         // within the per-element bounds of fuzz/bounds.hpp
};

/// What values the inputs hold (floats; integer inputs span their type).
enum class Fill {
  general, // [-8, 8), every 4th a special value: NaN, infinities, signed zeros, huge, tiny
  finite,  // [-8, 8), every 4th a finite special
  unit,    // [-1, 1): products and their sums stay small; `specials` adds NaN and infinities
};

/// A copy of `g` (graphs are move-only).
inline Graph copy_graph(const Graph& g) {
  return passes::rebuild(
      g, [](auto&&...) { return std::optional<std::vector<Value>>{}; }, false);
}

/// How a Case runs and is checked.
struct CaseOptions {
  bool program = true; // run as a Program; false: compile(model) and run the kernel
  /// Dynamic shapes: the input shapes of each call, by Parameter name (empty: one call with
  /// the declared shapes).
  std::vector<std::map<std::string, Shape>> calls;
  /// Kernel mode: the memory order of outputs whose Result has no layout of its own (the
  /// body's layout, from its non-planar inputs).
  std::optional<Layout> body_layout;
  Check check = Check::exact;
  Fill fill = Fill::general;
  bool specials = false; // Fill::unit: one NaN or infinity in some inputs
  bool fma = false;
  bool native_bf16 = true;
  int threads = 1;
  bool reuse_context = false; // Program: run twice more on one context, outputs pre-filled
};

/// One generated test: a model and how it runs.
struct Case : CaseOptions {
  Graph model;
  Case() = default;
  Case(Case&&) = default;
  Case& operator=(Case&&) = default;
  Case(const Case& o) : CaseOptions(o), model(copy_graph(o.model)) {}
  Case& operator=(const Case& o) {
    CaseOptions::operator=(o);
    model = copy_graph(o.model);
    return *this;
  }
};

// ---- inputs ----

/// A tensor of `t` and `shape` from generator seed `seed`.
inline Tensor make_input(ElementType t, const Shape& shape, std::uint64_t seed, Fill fill,
                         bool specials = false) {
  const auto n = static_cast<std::size_t>(shape.element_count());
  std::vector<double> v(n);
  Rng rng(seed);
  switch (t) {
  case ElementType::i8:
    for (double& x : v) x = double(rng.integer(-128, 127));
    break;
  case ElementType::u8:
    for (double& x : v) x = double(rng.integer(0, 255));
    break;
  case ElementType::i32:
    for (double& x : v) {
      const auto k = rng.integer(0, 3); // small, near 2^24 (f32's exact limit), any
      x = k < 2    ? double(rng.integer(-300, 300))
          : k == 2 ? double(rng.integer(16777200, 16777240) * (rng.integer(0, 1) ? 1 : -1))
                   : double(rng.integer(-2147483648LL, 2147483647LL));
    }
    break;
  case ElementType::boolean:
    for (double& x : v) x = double(rng.integer(0, 1));
    break;
  default:
    if (fill == Fill::unit) {
      for (double& x : v) x = rng.integer(0, 15) == 0 ? 0.0 : rng.uniform(-1, 1);
      if (specials && n > 0) {
        const double sp[] = {jit_test::qnan, jit_test::inf, -jit_test::inf};
        v[static_cast<std::size_t>(rng.integer(0, std::int64_t(n) - 1))] = sp[rng.integer(0, 2)];
      }
    } else {
      v = jit_test::make_values(
          n, seed, fill == Fill::finite ? jit_test::Pattern::finite : jit_test::Pattern::general);
    }
  }
  return Tensor::from_values(t, shape, v);
}

/// `logical` laid out in memory as `layout` (padding lanes of a block hold 0).
inline Tensor to_physical(const Tensor& logical, const Layout& layout) {
  const Shape& s = logical.shape();
  Tensor phys(logical.type(), layout.physical_shape(s));
  std::vector<std::int64_t> idx(s.rank(), 0);
  for (std::size_t i = 0; i < logical.size(); ++i) {
    for (std::size_t a = s.rank(), rest = i; a-- > 0; rest /= std::size_t(s[a]))
      idx[a] = std::int64_t(rest % std::size_t(s[a]));
    phys.set(std::size_t(layout.offset(s, idx)), logical.at(i));
  }
  return phys;
}

/// The logical tensor of `shape` that `phys` holds in `layout`.
inline Tensor to_logical(const Tensor& phys, const Layout& layout, const Shape& s) {
  Tensor out(phys.type(), s);
  std::vector<std::int64_t> idx(s.rank(), 0);
  for (std::size_t i = 0; i < out.size(); ++i) {
    for (std::size_t a = s.rank(), rest = i; a-- > 0; rest /= std::size_t(s[a]))
      idx[a] = std::int64_t(rest % std::size_t(s[a]));
    out.set(i, phys.at(std::size_t(layout.offset(s, idx))));
  }
  return out;
}

// ---- Opaque ops of the generated models ----

/// Identity (a kernel on buffers), Twice (x * 2, only a reference::OpaqueFn: the Program runs
/// it on doubles) and Split (x -> x, -x: two outputs, a kernel on buffers).
struct OpaqueOps {
  reference::Options ref;
  ProgramOptions<jit_test::TestedTraits> prog;
  std::map<std::string, OpaqueBoundFn, std::less<>> bounds;
  OpaqueOps() {
    ref.round_each_node = true;
    ref.opaque["Identity"] = [](std::span<const Values> in) { return std::vector<Values>{in[0]}; };
    ref.opaque["Twice"] = [](std::span<const Values> in) {
      Values y = in[0];
      for (double& d : y.v) d *= 2;
      return std::vector<Values>{y};
    };
    ref.opaque["Split"] = [](std::span<const Values> in) {
      Values y = in[0];
      for (double& d : y.v) d = -d;
      return std::vector<Values>{in[0], y};
    };
    prog.reference = ref;
    prog.opaque["Identity"] = [](std::span<const ConstTensorView> in,
                                 std::span<const TensorView> out) {
      const std::size_t bytes = std::size_t(in[0].shape.element_count()) * size_of(in[0].type);
      if (bytes) std::memcpy(out[0].data, in[0].data, bytes); // (empty views may be null)
    };
    prog.opaque["Split"] = [](std::span<const ConstTensorView> in,
                              std::span<const TensorView> out) {
      const std::size_t n = std::size_t(in[0].shape.element_count()), w = size_of(in[0].type);
      for (std::size_t i = 0; i < n; ++i) {
        const double x = decode(in[0].type, static_cast<const std::byte*>(in[0].data) + i * w);
        encode(out[0].type, x, static_cast<std::byte*>(out[0].data) + i * w);
        encode(out[1].type, -x, static_cast<std::byte*>(out[1].data) + i * w);
      }
    };
    bounds["Identity"] = [](std::span<const Bounded> in) { return std::vector<Values>{in[0].e}; };
    bounds["Twice"] = [](std::span<const Bounded> in) {
      Values e = in[0].e;
      for (double& d : e.v) d *= 2;
      return std::vector<Values>{e};
    };
    bounds["Split"] = [](std::span<const Bounded> in) {
      return std::vector<Values>{in[0].e, in[0].e};
    };
  }
};

inline const OpaqueOps& opaque_ops() {
  static const OpaqueOps ops;
  return ops;
}

/// `x` through Opaque `type` (Identity or Twice: one output of x's type).
inline Value opaque(Graph& g, Value x, const std::string& type) {
  return g.make(ir::Opaque{type, {g.type(x)}}, {x}, type)[0];
}

// ---- running and checking ----

struct Outcome {
  std::string failure;       // empty: passed
  int kernels = 0;           // Subgraphs run as JIT kernels (kernel mode: kernels compiled)
  std::size_t elements = 0;  // output elements compared
  std::size_t unchecked = 0; // of those, elements with an infinite bound (Check::bounds)
};

/// Whether `body` holds an empty value that generated code does not take while some output is
/// not empty: the one case where compile() refuses a body for its sizes
/// (snippets.compile.empty_value). The empty operands of a MatMul of depth 0 are taken (the
/// product is its epilogue of zeros), also through Transposes.
inline bool empty_inside(const Graph& body) {
  std::function<bool(ir::NodeId)> operand_only = [&](ir::NodeId id) {
    const auto& n = body.node(id);
    if (n.users.empty() || n.users[0].empty()) return false;
    for (const ir::Use& u : n.users[0]) {
      const auto& user = body.node(u.node).op;
      if (!ir::is<ir::MatMul>(user) && !(ir::is<ir::Transpose>(user) && operand_only(u.node)))
        return false;
    }
    return true;
  };
  bool empty = false, full_output = false;
  for (ir::NodeId id = 0; id < body.size(); ++id)
    for (const auto& t : body.node(id).outputs)
      if (t.shape.is_static() && t.shape.element_count() == 0 && !operand_only(id)) empty = true;
  for (ir::NodeId r : body.results()) { // a dynamic output may hold elements
    const Shape& s = body.type(body.node(r).inputs[0]).shape;
    full_output = full_output || !s.is_static() || s.element_count() != 0;
  }
  return empty && full_output;
}

/// Empty when every Subgraph step of `p` is a kernel with no note, or the documented fallback.
inline std::string check_steps(const Program<>& p, int& kernels) {
  for (const auto& s : p.steps()) {
    const auto* sg = std::get_if<ir::Subgraph<jit_test::TestedTraits>>(&p.graph().node(s.node).op);
    if (!sg) continue;
    if ((s.kind == Program<>::StepKind::kernel && s.note.empty()) ||
        s.kind == Program<>::StepKind::kernel_per_shape) { // checked per plan (check_plan)
      ++kernels;
      continue;
    }
    if (s.note.find("[snippets.compile.empty_value]") != std::string::npos &&
        empty_inside(*sg->body))
      continue;
    return "a Subgraph is not a kernel: " + (s.note.empty() ? std::string("(no note)") : s.note) +
           "\nits body:\n" + ir::to_string(*sg->body);
  }
  return {};
}

/// Empty when `got` equals `want` bit for bit (NaN matches NaN; +0 matches -0 unless
/// `zero_sign`); integers compare exactly.
inline std::string compare_exact(const Tensor& got, const Tensor& want, bool zero_sign) {
  if (std::string m = type_mismatch(got, want); !m.empty()) return m;
  std::ostringstream os;
  os.precision(9);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = got.at(i), w = want.at(i);
    const bool ok = std::isnan(g) || std::isnan(w)
                        ? std::isnan(g) && std::isnan(w)
                        : g == w && (!zero_sign || std::signbit(g) == std::signbit(w));
    if (!ok && bad++ < 5)
      os << "\n  at " << i << " " << jit_test::coordinates(got.shape(), i) << ": got " << g
         << ", want " << w;
  }
  if (bad == 0) return {};
  return std::to_string(bad) + " of " + std::to_string(got.size()) + " elements differ" +
         (zero_sign ? " (bitwise)" : " (bitwise, +0 == -0)") + ":" + os.str();
}

/// Compares the kernel's outputs with the reference on logical `in`; appends to `o`.
inline void check_outputs(const Case& c, const Graph& g, const std::vector<Tensor>& in,
                          const std::vector<Tensor>& got, Outcome& o) {
  const OpaqueOps& ops = opaque_ops();
  for (const Tensor& t : got) o.elements += t.size();
  const auto want = reference::evaluate(g, in, ops.ref);
  if (c.check == Check::bounds) {
    // the bounds walk the graph as evaluate() does: their values are its outputs, bit for bit
    const auto bounds = evaluate_bounds(g, in, ops.ref, ops.bounds);
    for (std::size_t i = 0; i < got.size() && o.failure.empty(); ++i) {
      if (const auto d = compare_exact(Tensor::from(bounds[i].v), want[i], true); !d.empty()) {
        o.failure = "the oracle: output " + std::to_string(i) +
                    " of evaluate_bounds is not evaluate()'s: " + d;
        return;
      }
      if (const auto d = compare_bounded(got[i], want[i], bounds[i].e, o.unchecked); !d.empty())
        o.failure = "output " + std::to_string(i) + ": " + d;
    }
    return;
  }
  for (std::size_t i = 0; i < got.size() && o.failure.empty(); ++i)
    if (auto d = compare_exact(got[i], want[i], c.check == Check::exact); !d.empty())
      o.failure = "output " + std::to_string(i) + ": " + d;
}

inline CompileOptions compile_options(const Case& c, jit_test::TestedVariant isa) {
  CompileOptions co;
  co.isa = isa;
  co.fma = c.fma;
  co.native_bf16 = c.native_bf16;
  return co;
}

/// The shapes of `model`'s inputs in call `call` of `calls` (the declared ones where it names
/// none).
inline std::vector<Shape> call_shapes(const Graph& model,
                                      const std::vector<std::map<std::string, Shape>>& calls,
                                      std::size_t call) {
  std::vector<Shape> out;
  for (ir::NodeId p : model.parameters()) {
    const auto& n = model.node(p);
    const std::map<std::string, Shape>* given = call < calls.size() ? &calls[call] : nullptr;
    const auto it = given ? given->find(n.name) : std::map<std::string, Shape>::const_iterator{};
    out.push_back(given && it != given->end() ? it->second : n.outputs[0].shape);
  }
  return out;
}

/// Empty when the Program's plan for `shapes` runs every kernel_per_shape step as a kernel (or
/// the documented fallback of an empty value).
inline std::string check_plan(const Program<>& p, std::span<const Shape> shapes) {
  const auto plan = p.plan(shapes);
  for (std::size_t i = 0; i < plan->notes.size(); ++i)
    if (!plan->notes[i].empty() &&
        plan->notes[i].find("[snippets.compile.empty_value]") == std::string::npos)
      return "a Subgraph is not a kernel for these shapes: " + plan->notes[i];
  return {};
}

inline void run_program(const Case& c, jit_test::TestedVariant isa, std::uint64_t seed,
                        Outcome& o) {
  const OpaqueOps& ops = opaque_ops();
  ProgramOptions<jit_test::TestedTraits> opt = ops.prog;
  opt.compile = compile_options(c, isa);
  const Program<> program(c.model, opt);
  if (o.failure = check_steps(program, o.kernels); !o.failure.empty()) return;
  auto ctx = program.make_context(); // shared by the calls: a dynamic model's arena grows
  for (std::size_t call = 0; call < std::max<std::size_t>(c.calls.size(), 1) && o.failure.empty();
       ++call) {
    const std::vector<Shape> shapes = call_shapes(c.model, c.calls, call);
    if (program.is_dynamic() && !(o.failure = check_plan(program, shapes)).empty()) return;
    std::vector<Tensor> in;
    for (std::size_t i = 0; i < shapes.size(); ++i)
      in.push_back(make_input(c.model.node(c.model.parameters()[i]).outputs[0].type, shapes[i],
                              seed++, c.fill, c.specials));
    std::vector<Tensor> got = program.run(in, jit_test::with_threads(c.threads));
    if (c.reuse_context) { // twice on one context, over outputs filled with 0x7f bytes
      std::vector<ConstTensorView> views;
      for (const auto& t : in) views.push_back({t.type(), t.shape(), t.data()});
      for (int pass = 0; pass < 2 && o.failure.empty(); ++pass) {
        std::vector<Tensor> out;
        std::vector<TensorView> out_views;
        for (const Tensor& t : got) {
          out.emplace_back(t.type(), t.shape());
          if (t.byte_size()) std::memset(out.back().data(), 0x7f, t.byte_size());
        }
        for (auto& t : out) out_views.push_back({t.type(), t.shape(), t.data()});
        program.run(ctx, views, out_views, jit_test::with_threads(1 + (c.threads + pass) % 3));
        for (std::size_t i = 0; i < out.size() && o.failure.empty(); ++i)
          if (auto d = compare_exact(out[i], got[i], true); !d.empty())
            o.failure = "run " + std::to_string(pass + 2) + " on one context, output " +
                        std::to_string(i) + " differs from the first run: " + d;
      }
    }
    check_outputs(c, c.model, in, got, o);
    if (!o.failure.empty() && c.calls.size() > 1)
      o.failure = "call " + std::to_string(call) + ": " + o.failure;
  }
}

inline void run_kernel(const Case& c, jit_test::TestedVariant isa, std::uint64_t seed, Outcome& o) {
  std::optional<CompiledKernel> k;
  try {
    k = compile(c.model, compile_options(c, isa));
  } catch (const Error& e) {
    if (e.id() == "snippets.compile.empty_value" && empty_inside(c.model)) return;
    throw;
  }
  ++o.kernels;
  for (std::size_t call = 0; call < std::max<std::size_t>(c.calls.size(), 1) && o.failure.empty();
       ++call) {
    std::vector<Tensor> in, phys;
    const std::vector<Shape> shapes = call_shapes(c.model, c.calls, call);
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      const auto& n = c.model.node(c.model.parameters()[i]);
      in.push_back(make_input(n.outputs[0].type, shapes[i], seed++, c.fill, c.specials));
      const Layout& l = std::get<ir::Parameter>(n.op).layout; // the user's buffer's order
      phys.push_back(l.is_planar() ? in.back() : to_physical(in.back(), l));
    }
    const int threads = 1 + int((std::size_t(c.threads) + call) % 3);
    const std::vector<Tensor> raw = k->run(phys, jit_test::with_threads(threads));
    std::vector<Tensor> got;
    for (std::size_t r = 0; r < raw.size(); ++r) {
      const auto& res = c.model.node(c.model.results()[r]);
      const Layout& own = std::get<ir::Result>(res.op).layout;
      const Layout l = !own.is_planar() ? own : c.body_layout.value_or(Layout{});
      // layouts come with static shapes: the value's logical shape is the declared one
      got.push_back(l.is_planar() ? raw[r]
                                  : to_logical(raw[r], l, c.model.type(res.inputs[0]).shape));
    }
    check_outputs(c, c.model, in, got, o);
    if (!o.failure.empty() && c.calls.size() > 1)
      o.failure = "call " + std::to_string(call) + ": " + o.failure;
  }
}

/// Runs `c` on `isa` against the reference; inputs come from `seed`.
inline Outcome run_case(const Case& c, jit_test::TestedVariant isa, std::uint64_t seed) {
  Outcome o;
  try {
    c.program ? run_program(c, isa, seed, o) : run_kernel(c, isa, seed, o);
  } catch (const std::exception& e) {
    o.failure = std::string("threw: ") + e.what();
  }
  return o;
}

/// What kind of failure `f` is, so that shrinking keeps to the same one: the error id of an
/// exception, or the first words of the report.
inline std::string failure_kind(const std::string& f) {
  if (f.starts_with("threw: [")) return f.substr(0, f.find(']') + 1);
  if (f.starts_with("a Subgraph is not a kernel")) {
    const auto at = f.find("[snippets.");
    return at == std::string::npos ? f.substr(0, 26) : f.substr(at, f.find(']', at) - at + 1);
  }
  if (f.find("differs from the first run") != std::string::npos) return "context";
  return f.find("threw") == 0 ? "threw" : "mismatch";
}

// ---- shrinking ----

namespace detail {

using Rewrite = std::function<std::optional<std::vector<Value>>(
    Graph&, const ir::Node<jit_test::TestedTraits>&, std::span<const Value>)>;

/// `g` with every static dimension `from` (in Parameters, Constants, Reshape and Broadcast
/// attributes, Opaque outputs) replaced by `to`; std::nullopt when the result is not a valid
/// graph.
inline std::optional<Graph> resize(const Graph& g, Dim from, Dim to) {
  auto map_shape = [&](const Shape& s) {
    std::vector<Dim> d(s.begin(), s.end());
    for (Dim& x : d)
      if (x == from) x = to;
    return Shape(d);
  };
  try {
    return passes::rebuild(
        g,
        [&](Graph& out, const ir::Node<jit_test::TestedTraits>& n,
            std::span<const Value> in) -> std::optional<std::vector<Value>> {
          auto op = n.op;
          if (auto* p = std::get_if<ir::Parameter>(&op)) {
            p->output.shape = map_shape(p->output.shape);
          } else if (auto* c = std::get_if<ir::Constant>(&op)) {
            c->output.shape = map_shape(c->output.shape);
            c->values.resize(c->values.size() == 1 ? 1
                                                   : std::size_t(c->output.shape.element_count()),
                             c->values.empty() ? 0.0 : c->values[0]);
            if (c->values.empty()) c->values.push_back(0);
          } else if (auto* r = std::get_if<ir::Reshape>(&op)) {
            for (auto& x : r->shape)
              if (x == from) x = to;
          } else if (auto* b = std::get_if<ir::Broadcast>(&op)) {
            b->shape = map_shape(b->shape);
          } else if (auto* o = std::get_if<ir::Opaque>(&op)) {
            for (std::size_t i = 0; i < o->outputs.size(); ++i) o->outputs[i] = out.type(in[0]);
          } else {
            return std::nullopt;
          }
          return out.make(op, in, n.name);
        },
        false);
  } catch (const Error&) {
    return std::nullopt;
  }
}

} // namespace detail

/// The smallest variant of `c` found that still `fails`: fewer Results, ops bypassed by an
/// input of the same type, dead ops removed, dimensions made smaller; at most `max_tries` runs.
inline Case shrink(const Case& c, const std::function<bool(const Case&)>& fails,
                   int max_tries = 500) {
  using detail::Rewrite;
  auto copy = [](const Graph& g, const Rewrite& rewrite) {
    return passes::rebuild(g, rewrite, false);
  };
  auto with = [&](const Case& base, Graph g) {
    Case n = base;
    n.model = std::move(g);
    return n;
  };
  // a candidate is taken only when it is smaller: fewer nodes, or as many with fewer input
  // elements (a rebuilt graph may only list its nodes in another order)
  auto size = [](const Case& x) {
    std::int64_t elements = 0;
    for (ir::NodeId p : x.model.parameters())
      if (x.model.node(p).outputs[0].shape.is_static())
        elements += x.model.node(p).outputs[0].shape.element_count();
    for (const auto& call : x.calls)
      for (const auto& [name, s] : call) elements += s.element_count() + 1;
    return std::pair{std::size_t(x.model.size()), elements};
  };
  Case best = c;
  for (bool progress = true; progress;) {
    progress = false;
    std::vector<Case> candidates;
    candidates.push_back(with(best, passes::remove_dead_nodes(best.model)));
    const Graph& m = best.model;
    for (std::size_t r = 0; m.results().size() > 1 && r < m.results().size(); ++r)
      candidates.push_back(with(
          best, copy(m, [drop = m.results()[r]](Graph&, const auto& n, std::span<const Value>) {
            return n.id == drop ? std::optional{std::vector<Value>{}} : std::nullopt;
          })));
    for (ir::NodeId id = 0; id < m.size(); ++id) {
      const auto& n = m.node(id);
      if (n.inputs.empty() || ir::is<ir::Result>(n.op) || n.outputs.size() != 1) continue;
      for (std::size_t i = 0; i < n.inputs.size(); ++i)
        if (m.type(n.inputs[i]) == n.outputs[0]) {
          candidates.push_back(
              with(best, copy(m, [id, i](Graph&, const auto& x, std::span<const Value> in) {
                     return x.id == id ? std::optional{std::vector<Value>{in[i]}} : std::nullopt;
                   })));
          break;
        }
    }
    for (std::size_t i = 0; best.calls.size() > 1 && i < best.calls.size(); ++i) {
      Case n = best; // one call fewer
      n.calls.erase(n.calls.begin() + std::ptrdiff_t(i));
      candidates.push_back(std::move(n));
    }
    std::vector<Dim> dims; // every static dimension > 1, largest first
    auto note = [&](const Shape& s) {
      for (Dim d : s)
        if (d > 1 && std::find(dims.begin(), dims.end(), d) == dims.end()) dims.push_back(d);
    };
    for (ir::NodeId p : m.parameters()) note(m.node(p).outputs[0].shape);
    for (const auto& call : best.calls)
      for (const auto& [name, s] : call) note(s);
    std::sort(dims.rbegin(), dims.rend());
    for (Dim d : dims)
      for (Dim to : {Dim{1}, d / 2, d - 1}) {
        if (to >= d || (to > 1 && std::find(dims.begin(), dims.end(), to) != dims.end())) continue;
        auto g = detail::resize(m, d, to);
        if (!g) continue;
        Case n = with(best, std::move(*g));
        for (auto& call : n.calls)
          for (auto& [name, s] : call) {
            std::vector<Dim> v(s.begin(), s.end());
            for (Dim& x : v)
              if (x == d) x = to;
            s = Shape(v);
          }
        candidates.push_back(std::move(n));
      }
    for (Case& cand : candidates)
      if (max_tries > 0 && size(cand) < size(best) && max_tries-- > 0 && fails(cand)) {
        best = std::move(cand);
        progress = true;
        break;
      }
  }
  return best;
}

/// How `c` runs, for a failure report.
inline std::string describe(const Case& c) {
  std::ostringstream os;
  os << (c.program ? "Program" : "compile()") << ", threads " << c.threads << ", fma " << c.fma
     << ", native_bf16 " << c.native_bf16 << ", check "
     << (c.check == Check::bounds  ? "bounds"
         : c.check == Check::exact ? "bitwise"
                                   : "bitwise, +0 == -0");
  if (c.body_layout)
    os << ", outputs in layout " << c.body_layout->to_string(c.body_layout->order().size());
  for (std::size_t i = 0; i < c.calls.size(); ++i) {
    os << "\n  call " << i << ":";
    for (const auto& [name, s] : c.calls[i]) os << " " << name << s.to_string();
  }
  return os.str();
}

} // namespace snippets::fuzz
