// SPDX-License-Identifier: Apache-2.0
// tests/jit_test_util.hpp: shared helpers of the JIT tests (test_jit_*.cpp).
//
//  - for_each_isa: runs a check once per x64 ISA this host can execute (AVX2, AVX-512), with
//    the ISA in doctest's INFO context;
//  - deterministic inputs: a splitmix64 generator with fixed seeds and input patterns that mix
//    random values with the values where elementwise semantics are decided (signed zeros,
//    halves, NaN, infinities, huge and tiny numbers);
//  - comparison against the reference interpreter: bit equality (NaN matches any NaN) or an
//    ulp budget, with a report of the first mismatches (index, coordinates, values, bits);
//  - GuardedBuffer: memory placed against a PROT_NONE page, so a kernel that reads or writes
//    one byte past (or before) a tensor crashes the test instead of passing silently;
//  - accuracy sweeps: f32 bit-pattern sweeps, the f32 special values, and the maximum ulp /
//    absolute error of a result against the reference (measure_accuracy).
// Everything here is deterministic: the same seed gives the same tensors on every run.
// Compiled for AArch64 (tests/aarch64/), the x64 parts (for_each_isa, check_jit,
// check_steps_are_kernels) are left out and the rest serves the emulated tests.
#pragma once

#include <doctest/doctest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <limits>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "error_id.hpp"
#include "host_skips.hpp"
#include "snippets/snippets.hpp"

namespace snippets::jit_test {

using reference::Tensor;
/// The backend under test: x64::Traits, or aarch64::Traits when compiled for AArch64
/// (tests/aarch64/, which reuses the fuzz families through these names).
using TestedTraits = DefaultTraits;
using TestedVariant = TestedTraits::Variant;
using Graph = ir::Graph<TestedTraits>;

inline constexpr ElementType f32 = ElementType::f32;
inline constexpr double inf = std::numeric_limits<double>::infinity();
inline constexpr double qnan = std::numeric_limits<double>::quiet_NaN();

#if !defined(__aarch64__)
// ---- ISAs ----

inline constexpr x64::Isa all_isas[] = {x64::Isa::avx2, x64::Isa::avx512};

/// Calls f(isa) for AVX2 and AVX-512; an ISA the host cannot run is skipped and reported
/// (host_skips.hpp).
template <class F> void for_each_isa(F&& f) {
  for (const x64::Isa isa : all_isas) {
    if (!x64::host_supports(isa)) {
      test::skip_on_host(x64::to_string(isa));
      continue;
    }
    INFO("isa = " << x64::to_string(isa));
    f(isa);
  }
}

#endif // !__aarch64__

// ---- deterministic inputs ----

/// splitmix64: tiny, fast, and the same sequence on every platform and standard library.
class Rng {
public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  /// Uniform in [lo, hi).
  double uniform(double lo, double hi) {
    return lo + (hi - lo) * static_cast<double>(next() >> 11) * 0x1.0p-53;
  }
  /// Uniform integer in [lo, hi].
  std::int64_t integer(std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(hi - lo + 1));
  }

private:
  std::uint64_t state_;
};

/// Which values an input holds besides its random ones.
enum class Pattern {
  general,  // random in [-8, 8); every 4th element a special value (see specials())
  finite,   // random in [-8, 8); every 4th element a finite special (zeros, halves, +-3)
  halves,   // k / 2 for random k: ties for Round; every 4th element a special value
  positive, // random in [0.25, 8)
};

/// The values where elementwise semantics are decided: signed zeros, halves (Round), the
/// HSwish/HSigmoid knees (+-3), NaN, infinities, huge and tiny (denormal) numbers, and the
/// largest halves a float holds.
inline const std::vector<double>& specials() {
  static const std::vector<double> v = {0.0,       -0.0,       0.5,       -0.5,       1.5,   -1.5,
                                        2.5,       -2.5,       3.0,       -3.0,       qnan,  inf,
                                        -inf,      1e30,       -1e30,     1e-3,       -1e-3, 1e-40,
                                        8388607.5, -4194302.5, 0.4999999, -0.4999999, 6.0,   -6.0};
  return v;
}
inline const std::vector<double>& finite_specials() {
  static const std::vector<double> v = {0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.0, -3.0};
  return v;
}

/// `n` values of `pattern` from generator seed `seed`.
inline std::vector<double> make_values(std::size_t n, std::uint64_t seed,
                                       Pattern pattern = Pattern::general) {
  Rng rng(seed);
  std::vector<double> v(n);
  const auto& sp = pattern == Pattern::finite ? finite_specials() : specials();
  const std::size_t offset = static_cast<std::size_t>(rng.next() % sp.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (pattern != Pattern::positive && i % 4 == 0) {
      v[i] = sp[(i / 4 + offset) % sp.size()];
      continue;
    }
    switch (pattern) {
    case Pattern::halves: v[i] = static_cast<double>(rng.integer(-41, 41)) / 2; break;
    case Pattern::positive: v[i] = rng.uniform(0.25, 8); break;
    default: v[i] = rng.uniform(-8, 8); break;
    }
  }
  return v;
}

/// An f32 tensor of `shape` filled by make_values.
inline Tensor make_tensor(const Shape& shape, std::uint64_t seed,
                          Pattern pattern = Pattern::general) {
  const auto n = static_cast<std::size_t>(shape.element_count());
  return Tensor::from_values(f32, shape, make_values(n, seed, pattern));
}

/// An f32 tensor of `shape` uniform in [lo, hi) from generator seed `seed` (no specials).
inline Tensor uniform(const Shape& shape, std::uint64_t seed, double lo = -1, double hi = 1) {
  Tensor t(f32, shape);
  Rng rng(seed);
  for (std::size_t i = 0; i < t.size(); ++i) t.set(i, rng.uniform(lo, hi));
  return t;
}

/// A boolean tensor of `shape` whose bytes are 0, 1 and other non-zero values (2, 0x80, 0xff),
/// which kernels must read as true (element_type.hpp decodes any non-zero byte as 1).
inline Tensor make_raw_booleans(const Shape& shape, std::uint64_t seed) {
  static constexpr std::uint8_t bytes[] = {0, 1, 0, 1, 2, 0x80, 0xff, 0, 1};
  Tensor t(ElementType::boolean, shape);
  Rng rng(seed);
  auto* p = static_cast<std::uint8_t*>(t.data());
  for (std::size_t i = 0; i < t.size(); ++i) p[i] = bytes[rng.next() % std::size(bytes)];
  return t;
}

/// `b` with every `every`-th element replaced by `a`'s (same shape), so that comparisons see
/// equal operands too.
inline Tensor share_values(const Tensor& a, Tensor b, std::size_t every = 3) {
  for (std::size_t i = 0; i < b.size() && i < a.size(); i += every) b.set(i, a.at(i));
  return b;
}

// ---- comparison ----

/// How close a JIT result must be to the reference rounded to f32.
/// max_ulp == 0: bit equality (NaN matches any NaN; +0 and -0 differ unless
/// `zero_sign` is false).
/// max_ulp > 0: NaN matches NaN, infinities match exactly, finite values are within max_ulp
/// units in the last place or within `abs` absolutely (for results near zero, where a
/// relative measure means nothing).
struct Tolerance {
  std::int64_t max_ulp = 0;
  double abs = 0;
  bool zero_sign = true;
};
inline constexpr Tolerance exact{};
/// Bit equality except that +0 matches -0: for values whose sign of zero is not defined, such
/// as a -0 converted through an integer (docs/math_accuracy.md), so every other value is still
/// checked bit for bit.
inline constexpr Tolerance exact_any_zero{0, 0, false};
/// FMA contraction (one rounding instead of the reference's double rounding), PowerStatic
/// (repeated squaring, a division for negative exponents), HSwish/HSigmoid/SoftSign (a few
/// f32 roundings): <= 4 ulp, or 1e-6 absolute near zero.
inline constexpr Tolerance approx{4, 1e-6};

inline float as_float(double x) { return static_cast<float>(x); }
inline std::uint32_t bits_of(float f) { return std::bit_cast<std::uint32_t>(f); }

/// Distance in units in the last place of two finite floats (+0 and -0 are 0 apart).
inline std::int64_t ulp_distance(float a, float b) {
  auto ordered = [](float f) {
    const auto i = static_cast<std::int64_t>(std::bit_cast<std::int32_t>(f));
    return i >= 0 ? i : std::int64_t{std::numeric_limits<std::int32_t>::min()} - i;
  };
  const std::int64_t d = ordered(a) - ordered(b);
  return d < 0 ? -d : d;
}

inline bool close_enough(float got, float want, Tolerance tol) {
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got);
  if (!tol.zero_sign && got == 0 && want == 0) return true;
  if (tol.max_ulp == 0) return bits_of(got) == bits_of(want);
  if (std::isinf(want) || std::isinf(got)) return got == want;
  return ulp_distance(got, want) <= tol.max_ulp ||
         std::fabs(static_cast<double>(got) - static_cast<double>(want)) <= tol.abs;
}

inline std::string coordinates(const Shape& shape, std::size_t index) {
  std::vector<std::int64_t> c(shape.rank());
  auto rem = static_cast<std::int64_t>(index);
  for (std::size_t d = shape.rank(); d-- > 0;) {
    c[d] = shape[d] ? rem % shape[d] : 0;
    rem = shape[d] ? rem / shape[d] : 0;
  }
  std::ostringstream os; // appends piecewise: g++ 12 reports false -Wrestrict on "," + ...
  os << '[';
  for (std::size_t d = 0; d < c.size(); ++d) os << (d ? "," : "") << c[d];
  os << ']';
  return os.str();
}

/// "[464,7]": a domain or shape as text, so a failed CHECK shows both sides.
inline std::string dims_string(const std::vector<Dim>& d) { return Shape(d).to_string(); }

inline std::string describe(float f) {
  std::ostringstream os;
  os.precision(9);
  os << f << " (0x" << std::hex << bits_of(f) << ")";
  return os.str();
}

/// Empty when `got` matches `want` (the reference) within `tol`; otherwise a report of the
/// mismatch count and the first `max_report` mismatches. Booleans are compared byte for byte:
/// a kernel writes 0 or 1, as the reference does (a 2 or 0xff would also decode as true).
inline std::string compare(const Tensor& got, const Tensor& want, Tolerance tol,
                           std::size_t max_report = 5) {
  std::ostringstream os;
  if (got.type() != want.type() || got.shape() != want.shape()) {
    os << "got " << to_string(got.type()) << got.shape().to_string() << ", want "
       << to_string(want.type()) << want.shape().to_string();
    return os.str();
  }
  std::size_t bad = 0;
  if (want.type() == ElementType::boolean) {
    const auto* g = static_cast<const std::uint8_t*>(got.data());
    const auto* w = static_cast<const std::uint8_t*>(want.data());
    for (std::size_t i = 0; i < got.size(); ++i)
      if (g[i] != w[i] && bad++ < max_report)
        os << "\n  at " << i << " " << coordinates(got.shape(), i) << ": byte " << int(g[i])
           << ", want " << int(w[i]);
    return bad ? std::to_string(bad) + " of " + std::to_string(got.size()) +
                     " boolean bytes differ:" + os.str()
               : std::string{};
  }
  for (std::size_t i = 0; i < got.size(); ++i) {
    const float g = as_float(got.at(i)), w = as_float(want.at(i));
    if (close_enough(g, w, tol)) continue;
    if (bad++ < max_report) {
      os << "\n  at " << i << " " << coordinates(got.shape(), i) << ": got " << describe(g)
         << ", want " << describe(w);
      if (std::isfinite(g) && std::isfinite(w)) os << ", " << ulp_distance(g, w) << " ulp";
    }
  }
  if (bad == 0) return {};
  std::ostringstream head;
  head << bad << " of " << got.size() << " elements differ";
  if (tol.max_ulp)
    head << " (tolerance " << tol.max_ulp << " ulp)";
  else
    head << (tol.zero_sign ? " (bitwise)" : " (bitwise, +0 == -0)");
  return head.str() + ":" + os.str();
}

// ---- JIT against the reference ----

/// RunOptions with `n` threads and the default executor.
inline RunOptions with_threads(int n) {
  RunOptions o;
  o.threads = n;
  return o;
}

/// Runs `k` on `inputs` with each thread count and checks every output's shape and values
/// against `want` (the reference's) within `tol`.
inline void check_runs(const CompiledKernel& k, const std::vector<Tensor>& inputs,
                       const std::vector<Tensor>& want, Tolerance tol,
                       std::initializer_list<int> threads) {
  for (const int t : threads) {
    INFO("threads = " << t);
    const std::vector<Tensor> got = k.run(std::span<const Tensor>(inputs), with_threads(t));
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      INFO("output " << i);
      CHECK(got[i].shape() == want[i].shape());
      const std::string report = compare(got[i], want[i], tol);
      CHECK_MESSAGE(report.empty(), report);
    }
  }
}

#if !defined(__aarch64__)

struct CheckOptions {
  Tolerance tol = exact;
  std::vector<int> threads = {1};
  bool fma = true;
  /// Reference rounds every intermediate to f32, as a kernel that computes op by op in f32
  /// registers does (bit-exact oracle for chains of exact ops without FMA).
  bool round_each_node = false;
  /// Per-output tolerances; empty: `tol` for every output.
  std::vector<Tolerance> output_tol = {};
  /// CompileOptions::unroll values to compile with; empty: the default only.
  std::vector<int> unroll = {};
};

/// Compiles `g` for every ISA, runs it with every thread count and compares every output
/// with the reference interpreter.
inline void check_jit(const Graph& g, const std::vector<Tensor>& inputs,
                      const CheckOptions& opt = {}) {
  reference::Options ro;
  ro.round_each_node = opt.round_each_node;
  const std::vector<Tensor> want = reference::evaluate(g, std::span<const Tensor>(inputs), ro);
  const std::vector<int> unrolls =
      opt.unroll.empty() ? std::vector<int>{CompileOptions{}.unroll} : opt.unroll;
  for_each_isa([&](x64::Isa isa) {
    for (const int unroll : unrolls) {
      INFO("unroll = " << unroll);
      const CompiledKernel k = compile(g, {.isa = isa, .fma = opt.fma, .unroll = unroll});
      for (const int threads : opt.threads) {
        INFO("threads = " << threads);
        const std::vector<Tensor> got =
            k.run(std::span<const Tensor>(inputs), with_threads(threads));
        REQUIRE(got.size() == want.size());
        for (std::size_t i = 0; i < got.size(); ++i) {
          INFO("output " << i);
          const Tolerance tol = i < opt.output_tol.size() ? opt.output_tol[i] : opt.tol;
          const std::string report = compare(got[i], want[i], tol);
          CHECK_MESSAGE(report.empty(), report);
        }
      }
    }
  });
}

/// Every step of `p` that holds a Subgraph runs as a kernel, with no note: a test comparing a
/// Program with the reference would otherwise pass on the reference fallback.
template <class Lowering, class DataFlow>
void check_steps_are_kernels(const Program<x64::Traits, Lowering, DataFlow>& p) {
  using P = Program<x64::Traits, Lowering, DataFlow>;
  for (const auto& s : p.steps())
    if (std::holds_alternative<ir::Subgraph<x64::Traits>>(p.graph().node(s.node).op)) {
      CHECK_MESSAGE(s.kind == P::StepKind::kernel, s.note);
      CHECK(s.note.empty());
    }
}

/// How many Subgraphs the tokenizer makes of `model`.
inline std::size_t kernels_of(const Graph& model) {
  const Graph tokenized = passes::tokenize(model);
  std::size_t kernels = 0;
  for (ir::NodeId id = 0; id < tokenized.size(); ++id)
    kernels += ir::is<ir::Subgraph<x64::Traits>>(tokenized.node(id).op);
  return kernels;
}

/// (x - mean) / sqrt(var + eps) over `axes` of x, then * scale + shift: a LayerNorm as exported
/// models spell it.
inline ir::Value normalize(Graph& g, ir::Value x, const std::vector<std::int64_t>& axes,
                           ir::Value scale, ir::Value shift) {
  const auto d = g.subtract(x, g.reduce_mean(x, axes, true));
  const auto var = g.reduce_mean(g.multiply(d, d), axes, true);
  const auto y = g.divide(d, g.sqrt(g.add(var, g.scalar(f32, 1e-5))));
  return g.add(g.multiply(y, scale), shift);
}

#endif // !__aarch64__

// ---- accuracy sweeps (test_jit_math_*.cpp) ----

/// Every `stride`-th f32 bit pattern from 0: all exponents of both signs, subnormals,
/// infinities and NaNs, evenly in the encoding (2^32 / stride values).
inline std::vector<double> bit_pattern_sweep(std::uint64_t stride) {
  std::vector<double> v;
  for (std::uint64_t b = 0; b < (std::uint64_t{1} << 32); b += stride)
    v.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(b)));
  return v;
}

/// The values where f32 semantics are decided: +-0, the smallest and largest subnormals,
/// +-FLT_MIN, +-FLT_MAX, +-inf and NaN.
inline std::vector<double> f32_specials() {
  using L = std::numeric_limits<float>;
  std::vector<double> v;
  for (double s : {1.0, -1.0})
    for (double m : {0.0, double(L::denorm_min()), double(std::nextafter(L::min(), 0.0f)),
                     double(L::min()), double(L::max()), inf})
      v.push_back(s * m);
  v.push_back(qnan);
  return v;
}

/// Appends the f32 value of `v` and its `k` f32 neighbours on each side.
inline void add_neighbours(std::vector<double>& out, double v, int k = 3) {
  float lo = static_cast<float>(v), hi = lo;
  out.push_back(lo);
  for (int i = 0; i < k; ++i) {
    lo = std::nextafter(lo, -std::numeric_limits<float>::infinity());
    hi = std::nextafter(hi, std::numeric_limits<float>::infinity());
    out.push_back(lo);
    out.push_back(hi);
  }
}

/// What a sweep measured against the reference (finite pairs only for the ulp figures).
struct AccuracyStats {
  std::int64_t max_ulp = 0;       // over every finite pair
  std::int64_t max_ulp_large = 0; // over the finite pairs whose reference is >= 1e-3 in magnitude
  double max_abs = 0;             // over every finite pair
  std::size_t bad = 0;            // pairs outside the tolerance
  std::string report;             // the first mismatches
};

inline AccuracyStats measure_accuracy(const Tensor& got, const Tensor& want, Tolerance tol,
                                      std::size_t max_report = 5) {
  AccuracyStats st;
  REQUIRE(got.size() == want.size());
  std::ostringstream os;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const float g = as_float(got.at(i)), w = as_float(want.at(i));
    if (std::isfinite(g) && std::isfinite(w)) {
      const std::int64_t d = ulp_distance(g, w);
      st.max_ulp = std::max(st.max_ulp, d);
      if (std::fabs(w) >= 1e-3) st.max_ulp_large = std::max(st.max_ulp_large, d);
      st.max_abs = std::max(st.max_abs, std::fabs(double(g) - double(w)));
    }
    if (close_enough(g, w, tol)) continue;
    if (st.bad++ < max_report) {
      os << "\n  at " << i << ": got " << describe(g) << ", want " << describe(w);
      if (std::isfinite(g) && std::isfinite(w)) os << ", " << ulp_distance(g, w) << " ulp";
    }
  }
  if (st.bad) {
    std::ostringstream head;
    head << st.bad << " of " << got.size() << " elements outside " << tol.max_ulp << " ulp / "
         << tol.abs << " absolute:";
    st.report = head.str() + os.str();
  }
  return st;
}

// ---- guard pages ----

inline std::size_t page_size() { return static_cast<std::size_t>(sysconf(_SC_PAGESIZE)); }

/// Where the inaccessible page sits relative to the buffer.
enum class Guard {
  after,  // the buffer's last byte is the last byte before a PROT_NONE page
  before, // the buffer's first byte is the first byte after a PROT_NONE page
};

/// `bytes` of read-write memory with PROT_NONE pages on both sides, the buffer pushed against
/// the `where` guard. Any access past the end (Guard::after) or before the start
/// (Guard::before) faults. With zero bytes, data() points at the guard itself.
class GuardedBuffer {
public:
  GuardedBuffer(std::size_t bytes, Guard where) : bytes_(bytes) {
    const std::size_t page = page_size();
    const std::size_t body = (bytes + page - 1) / page * page;
    total_ = body + 2 * page;
    void* p = mmap(nullptr, total_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(p != MAP_FAILED);
    base_ = static_cast<char*>(p);
    if (body) REQUIRE(mprotect(base_ + page, body, PROT_READ | PROT_WRITE) == 0);
    data_ = where == Guard::before ? base_ + page : base_ + page + body - bytes;
  }
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;
  ~GuardedBuffer() { munmap(base_, total_); }

  void* data() { return data_; }
  const void* data() const { return data_; }
  std::size_t size() const { return bytes_; }

private:
  std::size_t bytes_, total_ = 0;
  char* base_ = nullptr;
  char* data_ = nullptr;
};

/// Runs `k` on copies of `in` and on an output of `want`'s type and shape, each placed against
/// a PROT_NONE page (`where`), and returns the output: a tail that reads or writes one byte
/// outside a tensor crashes the test.
inline Tensor run_guarded(const CompiledKernel& k, const std::vector<Tensor>& in,
                          const Tensor& want, Guard where, int threads) {
  std::vector<std::unique_ptr<GuardedBuffer>> bufs;
  std::vector<ConstTensorView> views;
  for (const Tensor& t : in) {
    bufs.push_back(std::make_unique<GuardedBuffer>(t.byte_size(), where));
    std::memcpy(bufs.back()->data(), t.data(), t.byte_size());
    views.push_back({t.type(), t.shape(), bufs.back()->data()});
  }
  GuardedBuffer out(want.byte_size(), where);
  const TensorView out_view{want.type(), want.shape(), out.data()};
  k.run(views, std::span(&out_view, 1), with_threads(threads));
  Tensor got(want.type(), want.shape());
  std::memcpy(got.data(), out.data(), want.byte_size());
  return got;
}

/// `bytes` of heap memory whose data() is `offset` bytes past a 64-byte boundary (outputs at
/// offset 0 are aligned for AVX-512 non-temporal stores; a small offset misaligns them).
class AlignedBuffer {
public:
  AlignedBuffer(std::size_t bytes, std::size_t offset = 0)
      : raw_(static_cast<char*>(std::aligned_alloc(64, (bytes + offset + 63) / 64 * 64 + 64))),
        data_(raw_ + offset) {
    REQUIRE(raw_ != nullptr);
  }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  ~AlignedBuffer() { std::free(raw_); }
  void* data() { return data_; }

private:
  char* raw_;
  char* data_;
};

/// One PROT_NONE page: a non-null address that crashes the test if anything touches it.
class NoAccessPage {
public:
  NoAccessPage() {
    void* p = mmap(nullptr, page_size(), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(p != MAP_FAILED);
    p_ = p;
  }
  NoAccessPage(const NoAccessPage&) = delete;
  NoAccessPage& operator=(const NoAccessPage&) = delete;
  ~NoAccessPage() { munmap(p_, page_size()); }
  void* data() const { return p_; }

private:
  void* p_ = nullptr;
};

} // namespace snippets::jit_test
