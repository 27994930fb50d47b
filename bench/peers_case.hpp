// bench/peers_case.hpp: the workloads of bench_peers, their data and the correctness gate.
//
//  - Workload: the five elementwise graphs every peer implements (enum + table of facts);
//  - build_graph: the workload as a snippets Graph ([rows, C] tensors, a bias is [C]), with
//    the dedicated activation op (fused kernel, reference) or decomposed (the unfused run);
//  - Case: input and output buffers of one workload at one size, inputs filled with
//    deterministic pseudo-random values in the workload's range;
//  - Gate: the reference interpreter's result (double precision, rounded once to f32) for
//    every row of a small case, or 64 sampled rows of a large one, and check(), which runs a
//    peer and exits the program with a message when any sampled value is off by more than
//    the workload's tolerance: |peer - ref| <= tol * max(|ref|, 1);
// Header-only and tied to bench_peers.cpp; not part of the library.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "bench_util.hpp"

namespace snippets::bench::peers {

enum class Workload { chain, bias_sigmoid, gelu_tanh, swish, two_outputs };

inline constexpr Dim channels = 256;      // C: the innermost dimension of every tensor
inline constexpr float bias_scale = 0.5f; // s in sigmoid((x + bias) * s)
inline constexpr float gelu_k = 0.7978845608028654f, gelu_c = 0.044715f; // sqrt(2/pi), cubic

struct WorkloadInfo {
  Workload id;
  const char* name;    // benchmark-name prefix and --workloads key (no spaces, no '/')
  const char* formula; // for the tables
  int full_inputs;     // inputs of shape [rows, C]
  bool bias;           // one more input of shape [C]
  int outputs;         // outputs of shape [rows, C]
  float lo, hi;        // range of the full-size inputs
  double tolerance;    // |peer - ref| <= tolerance * max(|ref|, 1)
};

/// Arithmetic workloads: 1e-6 (one FMA contraction or one reassociation); transcendental ones:
/// 1e-5 (each peer's own exp/tanh/sigmoid approximation).
inline const std::vector<WorkloadInfo>& workloads() {
  static const std::vector<WorkloadInfo> w = {
      {Workload::chain, "chain", "y = relu(a*b + c)", 3, false, 1, -2.f, 2.f, 1e-6},
      {Workload::bias_sigmoid, "bias_sigmoid", "y = sigmoid((x[N,C] + bias[C]) * 0.5)", 1, true, 1,
       -16.f, 16.f, 1e-5},
      {Workload::gelu_tanh, "gelu_tanh", "y = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))", 1,
       false, 1, -8.f, 8.f, 1e-5},
      {Workload::swish, "swish", "y = x * sigmoid(x)", 1, false, 1, -8.f, 8.f, 1e-5},
      {Workload::two_outputs, "two_outputs", "y1 = a + b, y2 = (a + b) * c", 3, false, 2, -2.f, 2.f,
       1e-6},
  };
  return w;
}
inline const WorkloadInfo& info(Workload w) { return workloads()[std::size_t(w)]; }

/// The workload on `rows` rows. `decomposed`: Gelu and Swish written with primitive ops (the
/// form the unfused run executes op by op). Parameters in input order: full inputs, then bias.
inline G build_graph(Workload w, Dim rows, bool decomposed = false) {
  G g;
  const WorkloadInfo& wi = info(w);
  std::vector<ir::Value> in;
  for (int k = 0; k < wi.full_inputs; ++k) in.push_back(g.parameter(f32, {rows, channels}));
  if (wi.bias) in.push_back(g.parameter(f32, {channels}));
  auto s = [&](double v) { return g.scalar(f32, v); };
  switch (w) {
  case Workload::chain: g.result(g.relu(g.add(g.multiply(in[0], in[1]), in[2]))); break;
  case Workload::bias_sigmoid:
    g.result(g.sigmoid(g.multiply(g.add(in[0], in[1]), s(bias_scale))));
    break;
  case Workload::gelu_tanh: {
    const ir::Value x = in[0];
    if (!decomposed) {
      g.result(g.gelu(x, ir::GeluApproximation::tanh));
      break;
    }
    auto inner = g.add(x, g.multiply(g.multiply(g.multiply(x, x), x), s(gelu_c)));
    auto t = g.tanh(g.multiply(inner, s(gelu_k)));
    g.result(g.multiply(g.multiply(x, g.add(t, s(1.0))), s(0.5)));
    break;
  }
  case Workload::swish:
    g.result(decomposed ? g.multiply(in[0], g.sigmoid(in[0])) : g.swish(in[0]));
    break;
  case Workload::two_outputs: {
    auto sum = g.add(in[0], in[1]);
    g.result(sum, "y1");
    g.result(g.multiply(sum, in[2]), "y2");
    break;
  }
  }
  return g;
}

/// Uniform values in [lo, hi) from a hash of the index (no period the hardware could exploit,
/// the same values on every run); written by the threads that use them (first touch).
inline void fill_uniform(float* p, std::size_t n, float lo, float hi, std::uint64_t seed) {
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t z = (seed << 40) + i + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    p[i] = lo + (hi - lo) * float(double(z >> 40) * 0x1.0p-24);
  }
}

/// Buffers of one workload at one size: full inputs [rows, C], the bias [C], outputs [rows, C].
struct Case {
  Workload w;
  Dim rows = 0;
  std::size_t n = 0; // elements of a full tensor
  std::vector<std::unique_ptr<Buffer>> in, out;
  std::vector<const float*> in_ptrs; // full inputs, then the bias
  std::vector<float*> out_ptrs;
  double bytes = 0; // each input read once, each output written once

  Case(Workload w_, Dim rows_) : w(w_), rows(rows_), n(std::size_t(rows_ * channels)) {
    const WorkloadInfo& wi = info(w);
    for (int k = 0; k < wi.full_inputs; ++k) {
      in.push_back(std::make_unique<Buffer>(n));
      fill_uniform(in.back()->p, n, wi.lo, wi.hi, std::uint64_t(k + 1));
    }
    if (wi.bias) {
      in.push_back(std::make_unique<Buffer>(std::size_t(channels)));
      fill_uniform(in.back()->p, std::size_t(channels), -1.f, 1.f, 99);
    }
    for (auto& b : in) {
      in_ptrs.push_back(b->p);
      bytes += 4.0 * double(b->n);
    }
    for (int k = 0; k < wi.outputs; ++k) {
      out.push_back(std::make_unique<Buffer>(n));
      out_ptrs.push_back(out.back()->p);
      bytes += 4.0 * double(n);
    }
  }
  /// The full-size input streams (what the bandwidth ceiling reads; a bias stays in cache).
  std::vector<const float*> full_inputs() const {
    return {in_ptrs.begin(), in_ptrs.begin() + info(w).full_inputs};
  }
};

/// A peer's timed call: computes the case's outputs with `threads` threads.
using Runner = std::function<void(int threads)>;

/// Distance of two finite floats in units in the last place (+0 and -0 are 0 apart).
inline std::int64_t ulp_distance(float a, float b) {
  auto ordered = [](float f) {
    const auto i = static_cast<std::int64_t>(std::bit_cast<std::int32_t>(f));
    return i >= 0 ? i : std::int64_t{std::numeric_limits<std::int32_t>::min()} - i;
  };
  const std::int64_t d = ordered(a) - ordered(b);
  return d < 0 ? -d : d;
}

/// The reference result on sampled rows of a case, and the check every peer passes first.
class Gate {
public:
  /// Every row when the case has at most 1024 rows; otherwise 64 rows spread evenly, the
  /// first and the last among them.
  explicit Gate(const Case& c) : c_(c) {
    const std::size_t rows = std::size_t(c.rows);
    if (rows <= 1024) {
      for (std::size_t r = 0; r < rows; ++r) rows_.push_back(r);
    } else {
      for (std::size_t k = 0; k < 64; ++k) rows_.push_back(k * (rows - 1) / 63);
    }
    const WorkloadInfo& wi = info(c.w);
    const Dim k = Dim(rows_.size());
    const std::size_t C = std::size_t(channels);
    std::vector<reference::Tensor> in;
    for (int i = 0; i < wi.full_inputs; ++i) {
      std::vector<double> v;
      v.reserve(rows_.size() * C);
      for (std::size_t r : rows_)
        for (std::size_t j = 0; j < C; ++j) v.push_back(c.in_ptrs[std::size_t(i)][r * C + j]);
      in.push_back(reference::Tensor::from_values(f32, {k, channels}, v));
    }
    if (wi.bias) {
      std::vector<double> v(c.in_ptrs.back(), c.in_ptrs.back() + C);
      in.push_back(reference::Tensor::from_values(f32, {channels}, v));
    }
    const G g = build_graph(c.w, k);
    for (const reference::Tensor& t : reference::evaluate(g, in)) {
      ref_.emplace_back(t.size());
      for (std::size_t i = 0; i < t.size(); ++i) ref_.back()[i] = t.at(i);
    }
  }

  struct Result {
    double err = 0;       // max |peer - ref| / max(|ref|, 1): what the tolerance bounds
    std::int64_t ulp = 0; // max distance in f32 ulps where |ref| >= 1e-4 (informative)
  };
  /// Fills the outputs with NaN, runs `run(threads)` and compares the sampled rows with the
  /// reference. Prints the first bad value and exits(1) if an error exceeds the workload's
  /// tolerance (a NaN anywhere in the sample counts as infinite error).
  Result check(const std::string& peer, const Runner& run, int threads) const {
    const std::size_t C = std::size_t(channels);
    for (float* o : c_.out_ptrs) std::fill(o, o + c_.n, std::numeric_limits<float>::quiet_NaN());
    run(threads);
    const WorkloadInfo& wi = info(c_.w);
    Result worst;
    for (std::size_t o = 0; o < ref_.size(); ++o)
      for (std::size_t s = 0; s < rows_.size(); ++s)
        for (std::size_t j = 0; j < C; ++j) {
          const std::size_t at = rows_[s] * C + j;
          const double got = c_.out_ptrs[o][at], want = ref_[o][s * C + j];
          double err = std::fabs(got - want) / std::max(std::fabs(want), 1.0);
          if (std::isnan(err)) err = std::numeric_limits<double>::infinity();
          worst.err = std::max(worst.err, err);
          if (std::fabs(want) >= 1e-4)
            worst.ulp = std::max(worst.ulp, ulp_distance(float(got), float(want)));
          if (err > wi.tolerance) {
            std::fprintf(stderr,
                         "bench_peers: %s is wrong on %s (%zu rows, %d threads): output %zu, "
                         "element %zu (row %zu, column %zu) is %.9g, the reference says %.9g "
                         "(error %.3g > tolerance %.1g); not timing it\n",
                         peer.c_str(), wi.name, std::size_t(c_.rows), threads, o, at, rows_[s], j,
                         got, want, err, wi.tolerance);
            std::exit(1);
          }
        }
    return worst;
  }
  std::size_t sampled_rows() const { return rows_.size(); }

private:
  const Case& c_;
  std::vector<std::size_t> rows_;
  std::vector<std::vector<double>> ref_; // per output: sampled rows x C
};

} // namespace snippets::bench::peers
