// SPDX-License-Identifier: Apache-2.0
// bench/peers_case.hpp: the workloads of bench_peers, their data and the correctness gate.
//
//  - Workload: the graphs every peer implements (enum + table of facts): five elementwise ones
//    on [rows, 256] f32, Softmax over the last axis with rows of 1024 and of 37, and the bias
//    + sigmoid graph on bf16 tensors (bf16 inputs and output, f32 compute);
//  - rows_for: the rows of a workload's tensors at a size (256 KiB or 64 MiB per full tensor,
//    whatever its element type and channel count; with 37 channels rounded down to whole rows);
//  - build_graph: the workload as a snippets Graph ([rows, C] tensors, a bias is [C]), with
//    the dedicated op (fused kernel), decomposed into primitive ops (the unfused run), or as
//    the reference evaluates it (bf16 outputs left unrounded, in f32);
//  - Case: input and output buffers of one workload at one size (64-byte aligned, first
//    touched by the OpenMP threads), inputs filled with deterministic pseudo-random values in
//    the workload's range (bf16: rounded to nearest even), and the bandwidth ceiling of its
//    streams;
//  - Gate: the reference interpreter's result (double precision, rounded once to f32) for
//    every row of the 256 KiB case, or 64 sampled rows of the 64 MiB one, and check(), which
//    runs a peer and exits the program with a message when any sampled value is off by more
//    than the workload's tolerance: |peer - ref| <= tol * max(|ref|, 1). bf16 outputs are
//    compared with the reference before its rounding to bf16, and their tolerance adds 2^-8
//    (rounding to the nearest bf16 moves a value by at most 2^-8 of it).
// Header-only and tied to bench_peers.cpp; not part of the library.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
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

enum class Workload {
  chain,
  bias_sigmoid,
  gelu_tanh,
  swish,
  two_outputs,
  softmax1024,
  softmax37,
  bias_sigmoid_bf16
};

inline constexpr auto bf16 = ElementType::bf16;
inline constexpr float bias_scale = 0.5f; // s in sigmoid((x + bias) * s)
inline constexpr float gelu_k = 0.7978845608028654f, gelu_c = 0.044715f; // sqrt(2/pi), cubic

struct WorkloadInfo {
  Workload id;
  const char* name;    // benchmark-name prefix and --workloads key (no spaces, no '/')
  const char* formula; // for the tables
  int full_inputs;     // inputs of shape [rows, C]
  bool bias;           // one more input of shape [C]
  int outputs;         // outputs of shape [rows, C]
  Dim channels;        // C: the innermost dimension of every tensor
  ElementType type;    // of every input and output: f32, or bf16 (computed in f32)
  float lo, hi;        // range of the full-size inputs
  double tolerance;    // of the f32 result: |peer - ref| <= tolerance * max(|ref|, 1)
};

/// Arithmetic workloads: 1e-6 (one FMA contraction or one reassociation); transcendental ones
/// and Softmax: 1e-5 (each peer's own exp/tanh/sigmoid approximation; Softmax's outputs are at
/// most 1, so there the bound is absolute).
inline const std::vector<WorkloadInfo>& workloads() {
  static const std::vector<WorkloadInfo> w = {
      {Workload::chain, "chain", "y = relu(a*b + c)", 3, false, 1, 256, f32, -2.f, 2.f, 1e-6},
      {Workload::bias_sigmoid, "bias_sigmoid", "y = sigmoid((x[N,C] + bias[C]) * 0.5)", 1, true, 1,
       256, f32, -16.f, 16.f, 1e-5},
      {Workload::gelu_tanh, "gelu_tanh", "y = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))", 1,
       false, 1, 256, f32, -8.f, 8.f, 1e-5},
      {Workload::swish, "swish", "y = x * sigmoid(x)", 1, false, 1, 256, f32, -8.f, 8.f, 1e-5},
      {Workload::two_outputs, "two_outputs", "y1 = a + b, y2 = (a + b) * c", 3, false, 2, 256, f32,
       -2.f, 2.f, 1e-6},
      {Workload::softmax1024, "softmax1024", "y = softmax(x[N,1024], axis=-1)", 1, false, 1, 1024,
       f32, -8.f, 8.f, 1e-5},
      {Workload::softmax37, "softmax37", "y = softmax(x[N,37], axis=-1)", 1, false, 1, 37, f32,
       -8.f, 8.f, 1e-5},
      {Workload::bias_sigmoid_bf16, "bias_sigmoid_bf16",
       "y = sigmoid((x[N,C] + bias[C]) * 0.5), x, bias and y bf16, f32 compute", 1, true, 1, 256,
       bf16, -16.f, 16.f, 1e-5},
  };
  return w;
}
inline const WorkloadInfo& info(Workload w) { return workloads()[std::size_t(w)]; }

inline bool is_softmax(Workload w) {
  return w == Workload::softmax1024 || w == Workload::softmax37;
}

/// What the gate allows: the f32 tolerance, plus 2^-8 for bf16 outputs (rounding to the
/// nearest bf16, 8 significant bits, moves a value by at most 2^-8 of it).
inline double gate_tolerance(const WorkloadInfo& wi) {
  return wi.tolerance + (wi.type == bf16 ? 0x1p-8 : 0.0);
}

/// Rows of the workload's tensors when a full tensor has the bytes of `size` f32 elements
/// (bench_util's small or large): 256 KiB or 64 MiB, rounded down to whole rows.
inline Dim rows_for(const WorkloadInfo& wi, Dim size) {
  return size * 4 / (Dim(size_of(wi.type)) * wi.channels);
}

/// How build_graph writes a workload: with its dedicated op (Gelu, Swish, Softmax), as the
/// unfused run executes it op by op, or as the gate's reference (bf16 outputs not rounded).
enum class Form { fused, decomposed, reference };

/// The workload on `rows` rows. Parameters in input order: full inputs, then bias. bf16
/// inputs are converted to f32 and the results back to bf16 (unless Form::reference).
inline G build_graph(Workload w, Dim rows, Form form = Form::fused) {
  G g;
  const WorkloadInfo& wi = info(w);
  const Dim C = wi.channels;
  std::vector<ir::Value> in;
  for (int k = 0; k < wi.full_inputs; ++k) in.push_back(g.parameter(wi.type, {rows, C}));
  if (wi.bias) in.push_back(g.parameter(wi.type, {C}));
  if (wi.type != f32)
    for (ir::Value& v : in) v = g.convert(v, f32);
  auto out = [&](ir::Value v, std::string name = {}) {
    g.result(wi.type == f32 || form == Form::reference ? v : g.convert(v, wi.type),
             std::move(name));
  };
  auto s = [&](double v) { return g.scalar(f32, v); };
  const bool decomposed = form == Form::decomposed;
  switch (w) {
  case Workload::chain: out(g.relu(g.add(g.multiply(in[0], in[1]), in[2]))); break;
  case Workload::bias_sigmoid:
  case Workload::bias_sigmoid_bf16:
    out(g.sigmoid(g.multiply(g.add(in[0], in[1]), s(bias_scale))));
    break;
  case Workload::gelu_tanh: {
    const ir::Value x = in[0];
    if (!decomposed) {
      out(g.gelu(x, ir::GeluApproximation::tanh));
      break;
    }
    auto inner = g.add(x, g.multiply(g.multiply(g.multiply(x, x), x), s(gelu_c)));
    auto t = g.tanh(g.multiply(inner, s(gelu_k)));
    out(g.multiply(g.multiply(x, g.add(t, s(1.0))), s(0.5)));
    break;
  }
  case Workload::swish:
    out(decomposed ? g.multiply(in[0], g.sigmoid(in[0])) : g.swish(in[0]));
    break;
  case Workload::two_outputs: {
    auto sum = g.add(in[0], in[1]);
    out(sum, "y1");
    out(g.multiply(sum, in[2]), "y2");
    break;
  }
  case Workload::softmax1024:
  case Workload::softmax37: {
    const ir::Value x = in[0];
    if (!decomposed) {
      out(g.softmax(x, -1));
      break;
    }
    const auto e = g.exp(g.subtract(x, g.reduce_max(x, {-1})));
    out(g.divide(e, g.reduce_sum(e, {-1})));
    break;
  }
  }
  return g;
}

/// 64-byte aligned storage for `n` elements of f32 or bf16 (its 16 bits as std::uint16_t),
/// zeroed by the OpenMP threads that will use it (first touch).
struct Storage {
  Storage(ElementType t, std::size_t count)
      : type(t), n(count), bytes(count * size_of(t)),
        p(std::aligned_alloc(64, (bytes + 63) / 64 * 64)) {
    auto* b = static_cast<unsigned char*>(p);
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < bytes; ++i) b[i] = 0;
  }
  ~Storage() { std::free(p); }
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  ElementType type;
  std::size_t n, bytes;
  void* p;
};

/// Uniform values in [lo, hi) from a hash of the index (no period the hardware could exploit,
/// the same values on every run), rounded to the storage's type (bf16: to nearest even).
inline void fill_uniform(Storage& s, float lo, float hi, std::uint64_t seed) {
  float* f = s.type == f32 ? static_cast<float*>(s.p) : nullptr;
  auto* b = static_cast<std::uint16_t*>(s.p);
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < s.n; ++i) {
    std::uint64_t z = (seed << 40) + i + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    const float v = lo + (hi - lo) * float(double(z >> 40) * 0x1.0p-24);
    if (f)
      f[i] = v;
    else
      b[i] = bf16_bits(v);
  }
}

/// Buffers of one workload at one size: full inputs [rows, C], the bias [C], outputs [rows, C],
/// all of the workload's element type.
struct Case {
  Workload w;
  Dim size;          // bench_util's small or large: 256 KiB or 64 MiB per full tensor
  Dim rows, cols;    // cols = C
  ElementType type;  // of every input and output
  std::size_t n = 0; // elements of a full tensor
  std::vector<std::unique_ptr<Storage>> in, out;
  std::vector<const void*> in_ptrs; // full inputs, then the bias
  std::vector<void*> out_ptrs;
  double bytes = 0; // each input read once, each output written once

  Case(Workload w_, Dim size_)
      : w(w_), size(size_), rows(rows_for(info(w_), size_)), cols(info(w_).channels),
        type(info(w_).type), n(std::size_t(rows * cols)) {
    const WorkloadInfo& wi = info(w);
    for (int k = 0; k < wi.full_inputs; ++k) {
      in.push_back(std::make_unique<Storage>(type, n));
      fill_uniform(*in.back(), wi.lo, wi.hi, std::uint64_t(k + 1));
    }
    if (wi.bias) {
      in.push_back(std::make_unique<Storage>(type, std::size_t(cols)));
      fill_uniform(*in.back(), -1.f, 1.f, 99);
    }
    for (int k = 0; k < wi.outputs; ++k) out.push_back(std::make_unique<Storage>(type, n));
    for (const auto& s : in) {
      in_ptrs.push_back(s->p);
      bytes += double(s->bytes);
    }
    for (const auto& s : out) {
      out_ptrs.push_back(s->p);
      bytes += double(s->bytes);
    }
    for (int k = 0; k < wi.full_inputs; ++k)
      full_words_.push_back(static_cast<const float*>(in_ptrs[std::size_t(k)]));
    for (void* o : out_ptrs) out_words_.push_back(static_cast<float*>(o));
  }

  /// Input or output k as an array of T (float for f32, std::uint16_t for bf16).
  template <class T = float> const T* input(std::size_t k) const {
    return static_cast<const T*>(in_ptrs[k]);
  }
  template <class T = float> T* output(std::size_t k) const { return static_cast<T*>(out_ptrs[k]); }

  /// The bandwidth ceiling of the same streams (bench_util's copy_streams): the full inputs
  /// read, the outputs written (a bias is tiny and stays in cache). bf16 tensors are streamed
  /// as the f32 words holding their bytes.
  void copy(int t, bool nt) const {
    copy_streams(full_words_, out_words_, n * size_of(type) / 4, t, nt);
  }

private:
  std::vector<const float*> full_words_;
  std::vector<float*> out_words_;
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
  /// Every row of the 256 KiB case; of the 64 MiB one 64 rows spread evenly, the first and
  /// the last among them.
  explicit Gate(const Case& c) : c_(c) {
    const std::size_t rows = std::size_t(c.rows), C = std::size_t(c.cols);
    if (c.size == small) {
      for (std::size_t r = 0; r < rows; ++r) rows_.push_back(r);
    } else {
      for (std::size_t k = 0; k < 64; ++k) rows_.push_back(k * (rows - 1) / 63);
    }
    const WorkloadInfo& wi = info(c.w);
    const Dim k = Dim(rows_.size());
    std::vector<reference::Tensor> in;
    for (int i = 0; i < wi.full_inputs; ++i) {
      std::vector<double> v;
      v.reserve(rows_.size() * C);
      for (std::size_t r : rows_)
        for (std::size_t j = 0; j < C; ++j)
          v.push_back(value(c.in_ptrs[std::size_t(i)], r * C + j));
      in.push_back(reference::Tensor::from_values(c.type, {k, c.cols}, v));
    }
    if (wi.bias) {
      std::vector<double> v;
      for (std::size_t j = 0; j < C; ++j) v.push_back(value(c.in_ptrs.back(), j));
      in.push_back(reference::Tensor::from_values(c.type, {c.cols}, v));
    }
    const G g = build_graph(c.w, k, Form::reference);
    for (const reference::Tensor& t : reference::evaluate(g, in)) {
      ref_.emplace_back(t.size());
      for (std::size_t i = 0; i < t.size(); ++i) ref_.back()[i] = t.at(i);
    }
  }

  struct Result {
    double err = 0;       // max |peer - ref| / max(|ref|, 1): what the tolerance bounds
    std::int64_t ulp = 0; // max distance in ulps of the output type where |ref| >= 1e-4
  };
  /// Fills the outputs with NaN, runs `run(threads)` and compares the sampled rows with the
  /// reference. Prints the first bad value and exits(1) if an error exceeds the workload's
  /// tolerance (a NaN anywhere in the sample counts as infinite error). The ulp distance of a
  /// bf16 output is to the reference rounded to bf16, in bf16 ulps (informative).
  Result check(const std::string& peer, const Runner& run, int threads) const {
    const std::size_t C = std::size_t(c_.cols);
    for (void* o : c_.out_ptrs) {
      if (c_.type == f32)
        std::fill_n(static_cast<float*>(o), c_.n, std::numeric_limits<float>::quiet_NaN());
      else
        std::fill_n(static_cast<std::uint16_t*>(o), c_.n,
                    bf16_bits(std::numeric_limits<double>::quiet_NaN()));
    }
    run(threads);
    const WorkloadInfo& wi = info(c_.w);
    // the relaxed tier's bound: 128 ulp, at most 1.5e-5 relative (docs/math_accuracy.md)
    const double tol = std::max(gate_tolerance(wi), peer == "snippets_relaxed" ? 1.6e-5 : 0.0);
    Result worst;
    for (std::size_t o = 0; o < ref_.size(); ++o)
      for (std::size_t s = 0; s < rows_.size(); ++s)
        for (std::size_t j = 0; j < C; ++j) {
          const std::size_t at = rows_[s] * C + j;
          const double got = value(c_.out_ptrs[o], at), want = ref_[o][s * C + j];
          double err = std::fabs(got - want) / std::max(std::fabs(want), 1.0);
          if (std::isnan(err)) err = std::numeric_limits<double>::infinity();
          worst.err = std::max(worst.err, err);
          if (std::fabs(want) >= 1e-4)
            worst.ulp = std::max(worst.ulp,
                                 c_.type == f32
                                     ? ulp_distance(float(got), float(want))
                                     // a bf16 value is an f32 whose 16 low bits are zero
                                     : ulp_distance(float(got), float(round_to(bf16, want))) >> 16);
          if (err > tol) {
            std::fprintf(stderr,
                         "bench_peers: %s is wrong on %s (%zu rows, %d threads): output %zu, "
                         "element %zu (row %zu, column %zu) is %.9g, the reference says %.9g "
                         "(error %.3g > tolerance %.3g); not timing it\n",
                         peer.c_str(), wi.name, std::size_t(c_.rows), threads, o, at, rows_[s], j,
                         got, want, err, tol);
            std::exit(1);
          }
        }
    return worst;
  }
  std::size_t sampled_rows() const { return rows_.size(); }

private:
  /// Element i of an input or output of the case, as a double.
  double value(const void* p, std::size_t i) const {
    return decode(c_.type, static_cast<const std::byte*>(p) + i * size_of(c_.type));
  }

  const Case& c_;
  std::vector<std::size_t> rows_;
  std::vector<std::vector<double>> ref_; // per output: sampled rows x C
};

} // namespace snippets::bench::peers
