// SPDX-License-Identifier: Apache-2.0
// Tests of the SSE4.1 backend of examples/custom_backend/ (sse41::Traits), a second code
// generator written against the public backend seam only.
//
//  - every op alone against the reference interpreter, over inputs with NaN, infinities,
//    signed zeros, subnormals and huge values, for innermost sizes 1..9, 17, 33 and a broadcast
//    [3,n] + [3,1], with 1 and 2 threads: bit for bit except Exp and Sigmoid (ulp bounds);
//  - the accuracy of Exp and Sigmoid over a sweep of f32 bit patterns;
//  - a seeded differential fuzzer of random elementwise models run through a Program;
//  - guard pages: no tail reads or writes a byte outside a tensor;
//  - W^X code pages, the kernel cache, and the bodies the backend refuses.
#include <doctest/doctest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "custom_backend/sse41_traits.hpp"
#include "error_id.hpp"
#include "jit_test_util.hpp"

using namespace snippets;
using namespace snippets::jit_test; // Tolerance, compare, Rng (its graphs are x64's; ours below)

namespace {

using G = ir::Graph<sse41::Traits>;
using Backend = sse41::Traits;

/// The largest ulp distance between finite pairs.
std::int64_t max_ulp(const Tensor& got, const Tensor& want) {
  std::int64_t worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const auto g = static_cast<float>(got.at(i)), w = static_cast<float>(want.at(i));
    if (std::isfinite(g) && std::isfinite(w)) worst = std::max(worst, ulp_distance(g, w));
  }
  return worst;
}

RunOptions threads(int n) {
  RunOptions o;
  o.threads = n;
  return o;
}

/// jit_test::Rng with a draw below n (the sequence of integer(0, n - 1)).
struct Draws : Rng {
  using Rng::Rng;
  std::size_t below(std::size_t n) {
    return static_cast<std::size_t>(integer(0, static_cast<std::int64_t>(n) - 1));
  }
};

/// Measured on this backend over the sweeps of "sse41 backend: Exp and Sigmoid accuracy".
constexpr Tolerance exp_tol{.max_ulp = 2};
constexpr Tolerance sigmoid_tol{.max_ulp = 2};

bool host_has_sse41() {
  if (Backend::host_supported()) return true;
  MESSAGE("skipped: this host lacks SSE4.1");
  return false;
}

/// Random values in [-8, 8), every 3rd one a value where f32 semantics are decided: signed
/// zeros, NaN, infinities, subnormals, the largest floats, halves, the limits of Exp and of
/// an i32 conversion.
std::vector<double> values(std::size_t n, std::uint64_t seed) {
  static const std::vector<double> specials = {
      0.0,     -0.0,         qnan,   inf,           -inf, 1e-45, -1e-45, 1.17e-38, -1e-39, 3.4e38,
      -3.4e38, 2147483520.0, 2.2e9,  -2147483648.0, -3e9, 88.72, 88.73,  -87.4,    -103.2, -103.4,
      -110.0,  100.0,        -100.0, 0.5,           -2.5, 3.0,   1e30,   -1e-30};
  Draws rng(seed);
  const std::size_t offset = rng.below(specials.size());
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = i % 3 == 0 ? specials[(i / 3 + offset) % specials.size()] : rng.uniform(-8, 8);
  return v;
}

Tensor tensor(const Shape& s, std::uint64_t seed) {
  return Tensor::from_values(f32, s, values(static_cast<std::size_t>(s.element_count()), seed));
}

/// Compiles `g` for the SSE4.1 backend, runs it with 1 and 2 threads and compares each output
/// with the reference interpreter.
void check_kernel(const G& g, const std::vector<Tensor>& in, Tolerance tol) {
  const std::vector<Tensor> want = reference::evaluate(g, std::span<const Tensor>(in));
  const CompiledKernel k = compile(g);
  for (const int t : {1, 2}) {
    INFO("threads = " << t);
    const std::vector<Tensor> got = k.run(std::span<const Tensor>(in), threads(t));
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      const std::string report = compare(got[i], want[i], tol);
      CHECK_MESSAGE(report.empty(), report);
    }
  }
}

struct OpCase {
  std::string name;
  int inputs;
  std::function<ir::Value(G&, ir::Value, ir::Value)> build;
  Tolerance tol = exact;
};

std::vector<OpCase> op_cases() {
  using V = ir::Value;
  return {
      {"Add", 2, [](G& g, V a, V b) { return g.add(a, b); }},
      {"Subtract", 2, [](G& g, V a, V b) { return g.subtract(a, b); }},
      {"Multiply", 2, [](G& g, V a, V b) { return g.multiply(a, b); }},
      {"Divide", 2, [](G& g, V a, V b) { return g.divide(a, b); }},
      {"Maximum", 2, [](G& g, V a, V b) { return g.maximum(a, b); }},
      {"Minimum", 2, [](G& g, V a, V b) { return g.minimum(a, b); }},
      // contracted into a FusedMulAdd, computed on f64 lanes: the reference's rounding
      {"Multiply -> Add", 2, [](G& g, V a, V b) { return g.add(g.multiply(a, b), a); }},
      {"Relu", 1, [](G& g, V a, V) { return g.relu(a); }},
      {"Abs", 1, [](G& g, V a, V) { return g.abs(a); }},
      {"Negative", 1, [](G& g, V a, V) { return g.negative(a); }},
      {"Clamp(-1.5, 2.5)", 1, [](G& g, V a, V) { return g.clamp(a, -1.5, 2.5); }},
      {"Clamp(0, 6)", 1, [](G& g, V a, V) { return g.clamp(a, 0.0, 6.0); }},
      {"Clamp(-3, -0)", 1, [](G& g, V a, V) { return g.clamp(a, -3.0, -0.0); }},
      {"Sqrt", 1, [](G& g, V a, V) { return g.sqrt(a); }},
      {"Convert i32 -> f32", 1,
       [](G& g, V a, V) { return g.convert(g.convert(a, ElementType::i32), f32); }, exact_any_zero},
      {"Exp", 1, [](G& g, V a, V) { return g.exp(a); }, exp_tol},
      {"Sigmoid", 1, [](G& g, V a, V) { return g.sigmoid(a); }, sigmoid_tol},
  };
}

} // namespace

TEST_CASE("sse41 backend: every op alone matches the reference for every tail length") {
  if (!host_has_sse41()) return;
  std::vector<Dim> sizes = {1, 2, 3, 4, 5, 6, 7, 8, 9, 17, 33};
  std::uint64_t seed = 100;
  for (const OpCase& op : op_cases()) {
    INFO("op: " << op.name);
    for (const Dim n : sizes) {
      for (const bool broadcast : {false, true}) {
        if (broadcast && op.inputs == 1) continue;
        INFO("n = " << n << std::string(broadcast ? ", [3,n] with [3,1]" : ", [2,n]"));
        G g;
        const Shape a_shape = broadcast ? Shape{3, n} : Shape{2, n};
        const Shape b_shape = broadcast ? Shape{3, 1} : Shape{2, n};
        const ir::Value a = g.parameter(f32, a_shape);
        std::vector<Tensor> in{tensor(a_shape, ++seed)};
        ir::Value b = a;
        if (op.inputs == 2) {
          b = g.parameter(f32, b_shape);
          in.push_back(tensor(b_shape, ++seed));
        }
        g.result(op.build(g, a, b));
        check_kernel(g, in, op.tol);
      }
    }
  }
}

TEST_CASE("sse41 backend: Exp and Sigmoid accuracy over f32 bit patterns") {
  if (!host_has_sse41()) return;
  // every 257th bit pattern (all exponents, both signs, subnormals, inf, NaN), then the
  // ranges where the results are decided, densely
  std::vector<double> x;
  for (std::uint64_t b = 0; b < (std::uint64_t{1} << 32); b += 1021)
    x.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(b)));
  for (double v = -110; v <= 90; v += 1.0 / 1024) x.push_back(v);
  const Shape shape{static_cast<Dim>(x.size())};
  const Tensor in = Tensor::from_values(f32, shape, x);
  for (const bool sigmoid : {false, true}) {
    const std::string name = sigmoid ? "Sigmoid" : "Exp";
    INFO(name);
    G g;
    const auto p = g.parameter(f32, shape);
    g.result(sigmoid ? g.sigmoid(p) : g.exp(p));
    const Tensor got = compile(g).run({in})[0];
    const Tensor want = reference::evaluate(g, std::span<const Tensor>(&in, 1))[0];
    const Tolerance tol = sigmoid ? sigmoid_tol : exp_tol;
    MESSAGE(name << ": max " << max_ulp(got, want) << " ulp over " << x.size() << " values");
    const std::string report = compare(got, want, tol);
    CHECK_MESSAGE(report.empty(), report);
  }
}

namespace {

// ---- the differential fuzzer ----

enum class Kind {
  add,
  subtract,
  multiply,
  divide,
  maximum,
  minimum,
  relu,
  abs,
  negative,
  clamp,
  sqrt,
  exp,
  sigmoid,
  convert,
  tanh
};
constexpr Kind binary_kinds[] = {Kind::add,    Kind::subtract, Kind::multiply,
                                 Kind::divide, Kind::maximum,  Kind::minimum};
constexpr Kind unary_kinds[] = {Kind::relu, Kind::abs, Kind::negative, Kind::clamp,
                                Kind::sqrt, Kind::exp, Kind::sigmoid,  Kind::convert};

bool is_binary(Kind k) { return k <= Kind::minimum; }

/// One step of a random model: `kind` applied to values a (and b) of the model so far.
struct Step {
  Kind kind;
  std::size_t a = 0, b = 0;
};

ir::Value apply(G& g, Kind k, ir::Value a, ir::Value b) {
  switch (k) {
  case Kind::add: return g.add(a, b);
  case Kind::subtract: return g.subtract(a, b);
  case Kind::multiply: return g.multiply(a, b);
  case Kind::divide: return g.divide(a, b);
  case Kind::maximum: return g.maximum(a, b);
  case Kind::minimum: return g.minimum(a, b);
  case Kind::relu: return g.relu(a);
  case Kind::abs: return g.abs(a);
  case Kind::negative: return g.negative(a);
  case Kind::clamp: return g.clamp(a, -2.0, 0.0);
  case Kind::sqrt: return g.sqrt(a);
  case Kind::exp: return g.exp(a);
  case Kind::sigmoid: return g.sigmoid(a);
  case Kind::convert: return g.convert(g.convert(a, ElementType::i32), f32);
  case Kind::tanh: return g.tanh(a);
  }
  return a;
}

/// The value of one step computed alone on f32 operands: by the reference interpreter, except
/// Exp and Sigmoid, by single-op SSE4.1 kernels (their accuracy is checked above). A zero
/// through an integer is +0, as in the kernel (exact_any_zero).
Tensor step_oracle(const Step& s, const Tensor& a, const Tensor& b) {
  G g;
  const auto pa = g.parameter(f32, a.shape());
  const auto pb = is_binary(s.kind) ? g.parameter(f32, b.shape()) : pa;
  g.result(apply(g, s.kind, pa, pb));
  std::vector<Tensor> in{a};
  if (is_binary(s.kind)) in.push_back(b);
  if (s.kind == Kind::exp || s.kind == Kind::sigmoid)
    return compile_cached(g).run(std::span<const Tensor>(in))[0];
  Tensor out = reference::evaluate(g, std::span<const Tensor>(in))[0];
  if (s.kind == Kind::convert)
    for (std::size_t i = 0; i < out.size(); ++i) out.set(i, out.at(i) + 0.0);
  return out;
}

Shape random_shape(Draws& rng) {
  static constexpr Dim dims[] = {1, 2, 3, 4, 5, 7, 9, 13, 17, 33};
  std::vector<Dim> s(1 + rng.below(3));
  for (Dim& d : s) d = dims[rng.below(std::size(dims))];
  return Shape(s);
}

/// `full` with some dimensions 1 and sometimes fewer leading ones: NUMPY-broadcastable to it.
Shape broadcast_of(Draws& rng, const Shape& full) {
  std::vector<Dim> s;
  const std::size_t drop = rng.below(4) == 0 ? rng.below(full.rank() + 1) : 0;
  for (std::size_t i = drop; i < full.rank(); ++i) s.push_back(rng.below(3) == 0 ? 1 : full[i]);
  return Shape(s);
}

} // namespace

TEST_CASE("sse41 backend: random elementwise models through a Program match the reference op "
          "by op") {
  if (!host_has_sse41()) return;
  // Program kernels compute op by op in f32 (fma = false: no contraction), so the oracle is
  // each op alone on f32 operands (step_oracle) and every output must match bit for bit
  // (zero signs through an integer aside), whatever the mix of ops
  constexpr int models = 500;
  Draws rng(20260101);
  KernelCache cache(64);
  ProgramOptions<Backend> opt;
  opt.compile.fma = false;
  opt.cache = &cache;
  int kernels = 0, tanh_models = 0;
  for (int m = 0; m < models; ++m) {
    const Shape full = random_shape(rng);
    const std::size_t n_inputs = 1 + rng.below(3);
    std::vector<Shape> shapes{full};
    for (std::size_t i = 1; i < n_inputs; ++i) shapes.push_back(broadcast_of(rng, full));
    const std::size_t n_steps = 2 + rng.below(7);
    std::vector<Step> steps;
    for (std::size_t i = 0; i < n_steps; ++i) {
      const std::size_t values = n_inputs + i;
      Step s{rng.below(2) ? binary_kinds[rng.below(std::size(binary_kinds))]
                          : unary_kinds[rng.below(std::size(unary_kinds))]};
      if (rng.below(12) == 0) s.kind = Kind::tanh; // no SSE4.1 emitter
      s.a = i == 0 ? 0 : values - 1 - rng.below(std::min<std::size_t>(values, 3));
      s.b = rng.below(values);
      steps.push_back(s);
    }
    std::string recipe;
    for (const Step& s : steps)
      recipe += std::to_string(static_cast<int>(s.kind)) + "(" + std::to_string(s.a) + "," +
                std::to_string(s.b) + ") ";
    INFO("model " << m << ": inputs " << n_inputs << ", steps " << recipe);

    G g;
    std::vector<ir::Value> vals;
    std::vector<Tensor> want;
    for (const Shape& s : shapes) {
      vals.push_back(g.parameter(f32, s));
      want.push_back(tensor(s, rng.next()));
    }
    const std::vector<Tensor> inputs(want);
    for (const Step& s : steps) {
      vals.push_back(apply(g, s.kind, vals[s.a], vals[s.b]));
      want.push_back(step_oracle(s, want[s.a], want[s.b]));
    }
    g.result(vals.back());
    const bool second_output = rng.below(4) == 0 && n_steps > 2;
    if (second_output) g.result(vals[n_inputs]);

    const Program<Backend> program(g, opt);
    for (const auto& step : program.steps())
      if (std::holds_alternative<ir::Subgraph<Backend>>(program.graph().node(step.node).op)) {
        CHECK_MESSAGE(step.kind == Program<Backend>::StepKind::kernel, step.note);
        ++kernels;
      }
    // Tanh has no SSE4.1 emitter: no Subgraph body holds one
    for (ir::NodeId id = 0; id < program.graph().size(); ++id)
      if (const auto* sg = std::get_if<ir::Subgraph<Backend>>(&program.graph().node(id).op))
        for (ir::NodeId b = 0; b < sg->body->size(); ++b)
          CHECK_FALSE(std::holds_alternative<ir::Tanh>(sg->body->node(b).op));
    const bool has_tanh =
        std::any_of(steps.begin(), steps.end(), [](const Step& s) { return s.kind == Kind::tanh; });
    tanh_models += has_tanh;

    const std::vector<Tensor> got =
        program.run(std::span<const Tensor>(inputs), threads(1 + static_cast<int>(m % 2)));
    REQUIRE(got.size() == (second_output ? 2u : 1u));
    const std::string report = compare(got[0], want.back(), exact_any_zero);
    CHECK_MESSAGE(report.empty(), report);
    if (second_output) {
      const std::string r2 = compare(got[1], want[n_inputs], exact_any_zero);
      CHECK_MESSAGE(r2.empty(), r2);
    }
  }
  MESSAGE(models << " models, " << kernels << " kernels, " << tanh_models << " with Tanh");
}

TEST_CASE("sse41 backend: tails never read or write outside a tensor (guard pages)") {
  if (!host_has_sse41()) return;
  for (Dim n = 1; n <= 7; ++n) {
    // [3,n] with [3,1] and [n]: a broadcast load per row and a tail per row; the flat [2n]
    // body with a multiply-add: one tail for the whole tensor
    for (const bool flat : {false, true}) {
      INFO("n = " << n << (flat ? std::string(", flat") : std::string(", rows")));
      G g;
      std::vector<Shape> shapes =
          flat ? std::vector<Shape>{{2 * n}, {2 * n}} : std::vector<Shape>{{3, n}, {3, 1}, {n}};
      std::vector<ir::Value> p;
      for (const Shape& s : shapes) p.push_back(g.parameter(f32, s));
      if (flat) {
        g.result(g.relu(g.add(g.multiply(p[0], p[1]), p[0])));
      } else {
        g.result(g.subtract(p[0], p[1]));
        g.result(g.maximum(p[0], g.sigmoid(g.multiply(p[1], p[2]))));
      }
      std::vector<Tensor> in;
      for (const Shape& s : shapes) in.push_back(tensor(s, 900 + static_cast<std::uint64_t>(n)));
      // rows: the kernel rounds the product before the Sigmoid; flat: the multiply-add is
      // contracted and computed as the reference does, in double
      reference::Options ro;
      ro.round_each_node = !flat;
      const std::vector<Tensor> want = reference::evaluate(g, std::span<const Tensor>(in), ro);
      const CompiledKernel k = compile(g);
      for (const bool at_end : {true, false})
        for (const int t : {1, 2}) {
          INFO(std::string(at_end ? "guard after" : "guard before") << ", threads = " << t);
          std::vector<std::unique_ptr<GuardedBuffer>> bufs;
          std::vector<ConstTensorView> in_views;
          std::vector<TensorView> out_views;
          for (const Tensor& x : in) {
            bufs.push_back(std::make_unique<GuardedBuffer>(x.byte_size(),
                                                           at_end ? Guard::after : Guard::before));
            std::memcpy(bufs.back()->data(), x.data(), x.byte_size());
            in_views.push_back({f32, x.shape(), bufs.back()->data()});
          }
          for (const Tensor& y : want) {
            bufs.push_back(std::make_unique<GuardedBuffer>(y.byte_size(),
                                                           at_end ? Guard::after : Guard::before));
            out_views.push_back({f32, y.shape(), bufs.back()->data()});
          }
          k.run(in_views, out_views, threads(t));
          for (std::size_t o = 0; o < want.size(); ++o) {
            Tensor got =
                Tensor::from_values(f32, want[o].shape(), std::vector<double>(want[o].size()));
            std::memcpy(got.data(), out_views[o].data, want[o].byte_size());
            const std::string report = compare(got, want[o], o == 1 ? sigmoid_tol : exact);
            CHECK_MESSAGE(report.empty(), report);
          }
        }
    }
  }
}

TEST_CASE("sse41 backend: code pages are never writable and executable at once (W^X)") {
  if (!host_has_sse41()) return;
  G g;
  const auto a = g.parameter(f32, {3, 17}), b = g.parameter(f32, {3, 1});
  g.result(g.exp(g.add(g.multiply(a, b), a)));
  const CompiledKernel k = compile(g);
  REQUIRE(!k.code().empty());
  const auto code = reinterpret_cast<std::uintptr_t>(k.code().data());
  std::ifstream maps("/proc/self/maps");
  std::string line;
  bool found = false;
  while (std::getline(maps, line)) {
    INFO(line);
    std::istringstream is(line);
    std::string range, perms;
    is >> range >> perms;
    CHECK_FALSE((perms[1] == 'w' && perms[2] == 'x'));
    const auto dash = range.find('-');
    const std::uintptr_t lo = std::stoull(range.substr(0, dash), nullptr, 16),
                         hi = std::stoull(range.substr(dash + 1), nullptr, 16);
    if (lo <= code && code < hi) {
      found = true;
      CHECK(perms == "r-xp");
      CHECK(code + k.code().size() <= hi); // the code and its constant table
    }
  }
  CHECK(found);
}

TEST_CASE("sse41 backend: equal bodies share one cached kernel") {
  if (!host_has_sse41()) return;
  auto body = [](const std::string& name) {
    G g;
    const auto a = g.parameter(f32, {4, 9}, name);
    g.result(g.sigmoid(g.clamp(a, -1.0, 3.0)));
    return g;
  };
  KernelCache cache(4);
  const CompiledKernel first = compile_cached(body("a"), {}, &cache);
  const CompiledKernel second = compile_cached(body("b"), {}, &cache);
  CHECK(cache.stats().misses == 1);
  CHECK(cache.stats().hits == 1);
  CHECK(first.code().data() == second.code().data());
  CHECK(first.signature().isa == "sse41");
}

TEST_CASE("sse41 backend: what it cannot do stays outside its kernels or is refused") {
  if (!host_has_sse41()) return;
  SUBCASE("ops without an emitter are left to the reference path") {
    static_assert(!Backend::fusable<ir::Tanh> && !Backend::fusable<ir::ReduceSum> &&
                  Backend::fusable<ir::Exp>);
    CHECK_FALSE(Backend::supports(ir::Convert{ElementType::f16}));
    G g;
    const auto a = g.parameter(f32, {2, 6});
    g.result(g.exp(g.tanh(g.relu(a))));
    const Program<Backend> program(g);
    int kernels = 0;
    for (const auto& s : program.steps()) kernels += s.kind == Program<Backend>::StepKind::kernel;
    CHECK(kernels == 2);
  }
  SUBCASE("dynamic shapes raise a codegen error") {
    G g;
    const auto a = g.parameter(f32, {dynamic, 8});
    g.result(g.relu(a));
    CHECK(error_id([&] { (void)compile(g); }) == "snippets.compile.codegen");
  }
}
