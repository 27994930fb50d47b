// SPDX-License-Identifier: Apache-2.0
// bench/bench_matmul.cpp: MatMul kernels (Brgemm with fused epilogues) against oneDNN's matmul
// primitive, and the machine's FMA peak, in one run.
//
// Workloads (one and two threads):
//   gemm 1024      [1024,1024] x [1024,1024] f32, B an input (packed by the kernel each call)
//   mlp layer      [128,512] x [512,256] + bias + Relu, f32, and bf16 (A, B, bias and output
//                  bf16, f32 accumulation); snippets with the weights a Constant (packed at
//                  compile time) and as an input; oneDNN matmul with a bias and an eltwise relu
//                  post-op, weights in its preferred (any) format, reordered once
//   gemm int8      [1024,1024] u8 x [1024,1024] s8 -> s32, B an input and constant weights,
//                  against oneDNN's int8 matmul (s8 weights reordered once); outputs compared
//                  bit for bit; its peak: chains of vpdpbusd (8 integer ops a lane), GOPS,
//                  where the host has VPDPBUSD (AVX512_VNNI, or AVX-VNNI with AVX2; without
//                  it the kernels multiply 16-bit words and no peak is shown); `words`: the
//                  same GEMM as 16-bit words (CompileOptions::native_int8 = false)
//   qmlp layer     quantize(relu(dequant(x W) + b)) to u8, x u8 [128,512], W s8 [512,256]
//                  constant: one snippets kernel against oneDNN's int8 matmul with an output
//                  scale, f32 bias, relu and linear post-ops and a u8 destination (outputs agree
//                  within one u8 step), and against the f32 and bf16 MLP layers of this run;
//                  `jit_qdq`: the same layer written as a QDQ MatMul (DequantizeLinear of x and
//                  W around an f32 MatMul), folded into the same int8 kernel
//   mlp chain      three layers of relu(x W + b), [m,256] -> 256 -> 256 -> 256, m = 8 and 128,
//                  constant weights: snippets as one kernel (the hidden activations stay in
//                  the thread's scratch), snippets as one kernel per layer, and oneDNN as a
//                  matmul with a bias and a relu post-op per layer
// Before timing, every variant's output is compared with oneDNN's (relative to the largest
// output: 1e-4 for f32, 2^-7 for bf16, one bf16 ulp); a mismatch stops the run.
// It also measures the peaks: 24 independent chains of vfmadd231ps (f32) or vdpbf16ps (bf16,
// two products per lane) on zmm per thread (JIT, registers only; 12 chains on ymm on a host
// without AVX-512), the most this core retires. bf16 workloads need AVX512_BF16 (skipped
// without it).
// The table gives GFLOP/s, % of that peak and snippets / oneDNN (oneDNN time over snippets
// time: above 1 is faster). Usage:
//   ./build/bench/bench_matmul [--benchmark_repetitions=N] [--benchmark_filter=...]
#include <omp.h>
#include <xbyak/xbyak.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "bench_util.hpp"

namespace {

using namespace snippets;
using namespace snippets::bench;

struct Workload {
  const char* name;
  Dim m, k, n;
  bool epilogue; // + bias, Relu
  bool bf16;
};
constexpr Workload workloads[] = {{"gemm1024", 1024, 1024, 1024, false, false},
                                  {"mlp128x512x256", 128, 512, 256, true, false},
                                  {"mlp128x512x256_bf16", 128, 512, 256, true, true}};

const bool avx512 = x64::host_supports(x64::Isa::avx512);
/// Lanes and independent accumulator chains of the peak loop: zmm x 24, or ymm x 12 on a host
/// without AVX-512 (16 registers; 12 chains cover the FMA latency of two pipes).
const int peak_lanes = avx512 ? 16 : 8, peak_chains_n = avx512 ? 24 : 12;

/// What the peak loop issues: vfmadd231ps (2 flops a lane), vdpbf16ps (4) or vpdpbusd (8
/// integer ops: four products of bytes and their sum).
enum class PeakKind { fma, bf16, vnni };

/// `peak_chains_n` independent chains of vfmadd231ps (or vdpbf16ps, vpdpbusd) per loop step,
/// `iters` steps: 2 * lanes * chains * iters flops (twice that for vdpbf16ps, four times for
/// vpdpbusd). JIT-built so that no compiler keeps the accumulators in memory.
struct Peak : Xbyak::CodeGenerator {
  explicit Peak(PeakKind kind) {
    using namespace Xbyak::util;
    auto reg = [](int i) -> Xbyak::Xmm {
      if (avx512) return Xbyak::Zmm(i);
      return Xbyak::Ymm(i);
    };
    const Xbyak::Xmm x = reg(avx512 ? 30 : 14), y = reg(avx512 ? 31 : 15);
    for (int i = 0; i < peak_chains_n; ++i) vxorps(reg(i), reg(i), reg(i));
    Xbyak::Label loop;
    L(loop);
    for (int i = 0; i < peak_chains_n; ++i)
      if (kind == PeakKind::vnni)
        vpdpbusd(reg(i), x, y, avx512 ? Xbyak::EvexEncoding : Xbyak::VexEncoding);
      else if (kind == PeakKind::bf16)
        vdpbf16ps(reg(i), x, y);
      else
        vfmadd231ps(reg(i), x, y);
    dec(rdi);
    jnz(loop);
    vzeroupper();
    ret();
  }
};
void peak_chains(long iters, PeakKind kind) {
  static const Peak fma(PeakKind::fma), dp(PeakKind::bf16), vnni(PeakKind::vnni);
  const Peak& p = kind == PeakKind::vnni ? vnni : kind == PeakKind::bf16 ? dp : fma;
  p.getCode<void (*)(long)>()(iters);
}
constexpr long peak_iters = 1 << 20;
std::string peak_name(PeakKind kind, int t) {
  const char* names[] = {"fma_peak/", "bf16_peak/", "vnni_peak/"};
  return std::string(names[static_cast<int>(kind)]) + std::to_string(t) + "t/";
}
std::string peak_name(bool bf16, int t) {
  return peak_name(bf16 ? PeakKind::bf16 : PeakKind::fma, t);
}

float from_bf16(std::uint16_t h) { return static_cast<float>(from_bf16_bits(h)); }

/// A Buffer's values as bf16 (the Buffer keeps the same values, rounded).
std::vector<std::uint16_t> as_bf16(Buffer& b) {
  std::vector<std::uint16_t> out(b.n);
  for (std::size_t i = 0; i < b.n; ++i) b.p[i] = from_bf16(out[i] = bf16_bits(b.p[i]));
  return out;
}

using DnnlStep = std::pair<dnnl::matmul, std::unordered_map<int, dnnl::memory>>;

struct Case {
  std::unique_ptr<Buffer> a, b, bias, out;
  std::vector<std::uint16_t> a16, b16, bias16, out16; // bf16 workloads
  void* ptr(Buffer& f, std::vector<std::uint16_t>& h) const {
    return h.empty() ? static_cast<void*>(f.p) : static_cast<void*>(h.data());
  }
  void* a_p() { return ptr(*a, a16); }
  void* b_p() { return ptr(*b, b16); }
  void* bias_p() { return ptr(*bias, bias16); }
  void* out_p() { return ptr(*out, out16); }
  float out_at(std::size_t i) const { return out16.empty() ? out->p[i] : from_bf16(out16[i]); }
  std::optional<CompiledKernel> jit, jit_const;
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{eng};
  std::vector<std::vector<DnnlStep>> dnnl_by_threads; // one step
};

/// "<workload>/<t>t/": the prefix of a workload's benchmark names.
std::string name_of(const char* workload, int t) {
  return std::string(workload) + "/" + std::to_string(t) + "t/";
}

/// Planar weights [k,n] of `type` at `b`, reordered once into the format `pd` prefers (as a
/// runtime would), or used in place when it takes them as they are.
dnnl::memory onednn_weights(const dnnl::matmul::primitive_desc& pd, const dnnl::engine& eng,
                            dnnl::stream& stream, Dim k, Dim n, dnnl::memory::data_type type,
                            void* b) {
  dnnl::memory user({{k, n}, type, dnnl::memory::format_tag::ab}, eng, b);
  if (pd.weights_desc() == user.get_desc()) return user;
  dnnl::memory packed(pd.weights_desc(), eng);
  dnnl::reorder(user, packed).execute(stream, user, packed);
  stream.wait();
  return packed;
}

/// A oneDNN matmul out = a [m,k] x b [k,n] (+ bias [n], relu post-op with `epilogue`) created
/// for `t` threads, weights reordered once into its preferred format, as a runtime would.
DnnlStep onednn_matmul(const dnnl::engine& eng, dnnl::stream& stream, Dim m, Dim k, Dim n,
                       bool bf16, bool epilogue, void* a, void* b, void* bias, void* out, int t) {
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  const int saved = omp_get_max_threads();
  omp_set_num_threads(t);
  const dt type = bf16 ? dt::bf16 : dt::f32;
  const dnnl::memory::desc a_md({m, k}, type, tag::ab), c_md({m, n}, type, tag::ab);
  const dnnl::memory::desc b_any({k, n}, type, tag::any);
  const dnnl::memory::desc bias_md({1, n}, type, tag::ab);
  dnnl::primitive_attr attr;
  if (epilogue) {
    dnnl::post_ops po;
    po.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    attr.set_post_ops(po);
  }
  const auto pd =
      epilogue
          ? dnnl::matmul::primitive_desc(dnnl::matmul::desc(a_md, b_any, bias_md, c_md), attr, eng)
          : dnnl::matmul::primitive_desc(dnnl::matmul::desc(a_md, b_any, c_md), eng);
  const dnnl::memory b_mem = onednn_weights(pd, eng, stream, k, n, type, b);
  std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, dnnl::memory(a_md, eng, a)},
                                             {DNNL_ARG_WEIGHTS, b_mem},
                                             {DNNL_ARG_DST, dnnl::memory(c_md, eng, out)}};
  if (epilogue) args[DNNL_ARG_BIAS] = dnnl::memory(bias_md, eng, bias);
  // the primitive too is created under `t` threads: oneDNN's primitive cache keys on the
  // thread count at creation, and a 1-thread matmul created under 2 threads was handed back as
  // the 2-thread one (which then ran on one thread: the peer did not scale)
  dnnl::matmul prim(pd);
  omp_set_num_threads(saved);
  return {std::move(prim), std::move(args)};
}

/// Executes oneDNN steps one after the other on `t` threads.
void run_onednn(dnnl::stream& stream, std::vector<DnnlStep>& steps, int t) {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(t);
  for (auto& [prim, args] : steps) prim.execute(stream, args);
  stream.wait();
  omp_set_num_threads(saved);
}

G graph_of(const Workload& w, const Case& c, bool constant_weights) {
  G g;
  const ElementType type = w.bf16 ? ElementType::bf16 : f32;
  const auto a = g.parameter(type, {w.m, w.k}, "A");
  ir::Value b;
  if (constant_weights) {
    std::vector<double> v(static_cast<std::size_t>(w.k * w.n));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = c.b->p[i];
    b = g.constant(type, {w.k, w.n}, std::move(v), "W");
  } else {
    b = g.parameter(type, {w.k, w.n}, "B");
  }
  ir::Value y = g.matmul(a, b);
  if (w.epilogue) y = g.relu(g.add(y, g.parameter(type, {w.n}, "bias")));
  g.result(y);
  return g;
}

/// Stops the run when `got(i)` differs from oneDNN's `want` by more than `rel` times the
/// largest |want| (NaN too): no variant is timed with a wrong result.
void check_output(const char* workload, const char* who, const std::vector<float>& want, double rel,
                  const std::function<float(std::size_t)>& got) {
  double largest = 0, worst = 0;
  for (float x : want) largest = std::max(largest, std::fabs(double(x)));
  const double tol = rel * largest;
  std::size_t bad = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double d = std::fabs(double(got(i)) - double(want[i]));
    bad += !(d <= tol); // NaN too
    worst = std::max(worst, d);
  }
  std::printf("check %s %s: max |difference| to oneDNN %.3g (tolerance %.3g)\n", workload, who,
              worst, tol);
  if (largest == 0) { // an all-zero output would pass any kernel
    std::fprintf(stderr, "%s: oneDNN's output is all zero; the check proves nothing\n", workload);
    std::exit(1);
  }
  if (bad) {
    std::fprintf(stderr, "%s: %s differs from oneDNN; not timing a wrong result\n", workload, who);
    std::exit(1);
  }
}

/// Runs `f` once on one thread and compares the output with oneDNN's (`want`; see the header).
void check_against(const Workload& w, Case& c, const std::vector<float>& want, const char* who,
                   const std::function<void()>& f) {
  std::fill_n(c.out->p, c.out->n, std::nanf("")); // nothing left from the run before
  std::fill(c.out16.begin(), c.out16.end(), std::uint16_t{0x7fc0});
  f();
  check_output(w.name, who, want, w.bf16 ? 0x1p-7 : 1e-4,
               [&](std::size_t i) { return c.out_at(i); });
}

// ---- MLP chains: `layers` x relu(x W + b), [m, width] -> width, constant weights ----

struct ChainWorkload {
  const char* name;
  Dim m, width;
  int layers;
};
constexpr ChainWorkload chain_workloads[] = {{"mlp3x256_m8", 8, 256, 3},
                                             {"mlp3x256_m128", 128, 256, 3}};

struct Chain {
  std::unique_ptr<Buffer> x, out;
  std::vector<std::unique_ptr<Buffer>> w, b, hidden; // hidden: the activations between layers
  std::optional<CompiledKernel> fused;               // the whole chain, one kernel
  std::vector<CompiledKernel> per_layer;             // a kernel per layer
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{eng};
  std::vector<std::vector<DnnlStep>> dnnl_by_threads; // a matmul (bias, relu) per layer
  float* layer_in(int l) const { return l == 0 ? x->p : hidden[std::size_t(l - 1)]->p; }
  float* layer_out(int l, int layers) const {
    return l + 1 == layers ? out->p : hidden[std::size_t(l)]->p;
  }
};

/// Layers [first, first + count) of the chain as one graph: x, then a bias per layer.
G chain_graph(const Chain& c, const ChainWorkload& w, int first, int count) {
  G g;
  ir::Value x = g.parameter(f32, {w.m, w.width}, "x");
  for (int l = first; l < first + count; ++l) {
    const Buffer& wl = *c.w[std::size_t(l)];
    const auto weights =
        g.constant(f32, {w.width, w.width}, std::vector<double>(wl.p, wl.p + wl.n), "W");
    x = g.relu(g.add(g.matmul(x, weights), g.parameter(f32, {w.width}, "b")));
  }
  g.result(x);
  return g;
}

/// A buffer of uniform random values in [lo, hi): a ramp's rows are nearly parallel, and three
/// layers of relu(x W + b) on ramps leave nothing but zeros.
std::unique_ptr<Buffer> noise(std::size_t n, float lo, float hi, unsigned seed) {
  auto b = std::make_unique<Buffer>(n);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  for (std::size_t i = 0; i < n; ++i) b->p[i] = u(rng);
  return b;
}

void register_chain(const ChainWorkload& w) {
  auto c = std::make_shared<Chain>();
  const std::size_t act = std::size_t(w.m * w.width), weights = std::size_t(w.width * w.width);
  c->x = noise(act, -1.0f, 1.0f, 1);
  c->out = std::make_unique<Buffer>(act);
  const float scale = 1.7f / std::sqrt(float(w.width)); // activations stay of order 1
  for (int l = 0; l < w.layers; ++l) {
    c->w.push_back(noise(weights, -scale, scale, 10 + unsigned(l)));
    c->b.push_back(noise(std::size_t(w.width), -0.5f, 0.5f, 20 + unsigned(l)));
    if (l + 1 < w.layers) c->hidden.push_back(std::make_unique<Buffer>(act));
  }
  c->fused.emplace(compile(chain_graph(*c, w, 0, w.layers)));
  for (int l = 0; l < w.layers; ++l) c->per_layer.push_back(compile(chain_graph(*c, w, l, 1)));
  std::vector<float> want;
  for (int t : {1, 2}) {
    std::vector<DnnlStep> steps;
    for (int l = 0; l < w.layers; ++l)
      steps.push_back(onednn_matmul(c->eng, c->stream, w.m, w.width, w.width, false, true,
                                    c->layer_in(l), c->w[std::size_t(l)]->p,
                                    c->b[std::size_t(l)]->p, c->layer_out(l, w.layers), t));
    c->dnnl_by_threads.push_back(std::move(steps));
    const std::size_t i = c->dnnl_by_threads.size() - 1;
    auto fused = [c, t, layers = w.layers] {
      std::vector<const void*> in{c->x->p};
      for (int l = 0; l < layers; ++l) in.push_back(c->b[std::size_t(l)]->p);
      void* out[] = {c->out->p};
      c->fused->run_unchecked(in.data(), out, {.threads = t});
    };
    auto per_layer = [c, t, layers = w.layers] {
      for (int l = 0; l < layers; ++l) {
        const void* in[] = {c->layer_in(l), c->b[std::size_t(l)]->p};
        void* out[] = {c->layer_out(l, layers)};
        c->per_layer[std::size_t(l)].run_unchecked(in, out, {.threads = t});
      }
    };
    auto onednn = [c, t, i] { run_onednn(c->stream, c->dnnl_by_threads[i], t); };
    if (t == 1) {
      onednn();
      want.assign(c->out->p, c->out->p + act);
      for (const auto& [who, f] : {std::pair<const char*, std::function<void()>>{"fused", fused},
                                   {"per-layer", per_layer}}) {
        std::fill_n(c->out->p, act, std::nanf(""));
        f();
        check_output(w.name, who, want, 1e-4, [&](std::size_t j) { return c->out->p[j]; });
      }
    }
    register_benchmark(name_of(w.name, t) + "fused", fused);
    register_benchmark(name_of(w.name, t) + "per_layer", per_layer);
    register_benchmark(name_of(w.name, t) + "onednn", onednn);
  }
}

/// bf16 workloads and the bf16 peak need VDPBF16PS (and oneDNN a bf16 matmul): AVX512_BF16.
bool runs(bool bf16) { return !bf16 || x64::host_has_avx512_bf16(); }

// ---- int8 GEMM: [1024,1024] u8 x [1024,1024] s8 -> s32 ----

/// int8 products run everywhere (as 16-bit words without VNNI); the VPDPBUSD peak needs it on
/// the ISA the kernels are compiled for (AVX512_VNNI with AVX-512, AVX-VNNI with AVX2).
bool runs_int8() { return x64::Traits::int8_products(x64::best_host_isa()); }
bool has_vnni() { return x64::Traits::int8_dot(x64::best_host_isa()); }

constexpr Dim int8_m = 1024, int8_k = 1024, int8_n = 1024;
constexpr const char* int8_name = "gemm1024_u8s8s32";

struct Int8Case {
  std::vector<std::uint8_t> a;
  std::vector<std::int8_t> b;
  std::vector<std::int32_t> out;
  std::optional<CompiledKernel> jit, jit_const, jit_words; // words: native_int8 = false
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{eng};
  std::vector<std::vector<DnnlStep>> dnnl_by_threads;
};

/// oneDNN's int8 matmul (u8 source, s8 weights in its preferred format, s32 destination),
/// created under `t` threads as onednn_matmul does.
DnnlStep onednn_int8_matmul(Int8Case& c, int t) {
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  const int saved = omp_get_max_threads();
  omp_set_num_threads(t);
  const dnnl::memory::desc a_md({int8_m, int8_k}, dt::u8, tag::ab);
  const dnnl::memory::desc c_md({int8_m, int8_n}, dt::s32, tag::ab);
  const dnnl::memory::desc b_any({int8_k, int8_n}, dt::s8, tag::any);
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_any, c_md), c.eng);
  const dnnl::memory b_mem =
      onednn_weights(pd, c.eng, c.stream, int8_k, int8_n, dt::s8, c.b.data());
  std::unordered_map<int, dnnl::memory> args{
      {DNNL_ARG_SRC, dnnl::memory(a_md, c.eng, c.a.data())},
      {DNNL_ARG_WEIGHTS, b_mem},
      {DNNL_ARG_DST, dnnl::memory(c_md, c.eng, c.out.data())}};
  dnnl::matmul prim(pd);
  omp_set_num_threads(saved);
  return {std::move(prim), std::move(args)};
}

/// A [m,k] u8 x B [k,n] s8 -> s32, B an input (packed by the kernel each call) or constant.
G int8_graph(const Int8Case& c, bool constant_weights) {
  G g;
  const auto a = g.parameter(ElementType::u8, {int8_m, int8_k}, "A");
  const ir::Value b = constant_weights
                          ? g.constant(ElementType::i8, {int8_k, int8_n},
                                       std::vector<double>(c.b.begin(), c.b.end()), "W")
                          : g.parameter(ElementType::i8, {int8_k, int8_n}, "B");
  g.result(g.matmul(a, b));
  return g;
}

/// Runs `f` once and stops the run unless its s32 output is oneDNN's (`want`), bit for bit.
void check_int8(Int8Case& c, const std::vector<std::int32_t>& want, const char* who,
                const std::function<void()>& f) {
  std::fill(c.out.begin(), c.out.end(), 0x55555555);
  f();
  std::size_t bad = 0;
  for (std::size_t i = 0; i < want.size(); ++i) bad += c.out[i] != want[i];
  std::printf("check %s %s: %zu of %zu s32 results differ from oneDNN's\n", int8_name, who, bad,
              want.size());
  if (bad) {
    std::fprintf(stderr, "%s: %s differs from oneDNN; not timing a wrong result\n", int8_name, who);
    std::exit(1);
  }
}

void register_int8() {
  if (!runs_int8()) {
    std::printf("%s: skipped, this target has no int8 products\n", int8_name);
    return;
  }
  for (int t : {1, 2})
    if (has_vnni())
      register_benchmark(peak_name(PeakKind::vnni, t), [t] {
#pragma omp parallel num_threads(t)
        peak_chains(peak_iters, PeakKind::vnni);
      });
  auto c = std::make_shared<Int8Case>();
  c->a.resize(std::size_t(int8_m * int8_k));
  c->b.resize(std::size_t(int8_k * int8_n));
  c->out.resize(std::size_t(int8_m * int8_n));
  std::mt19937 rng(31);
  for (auto& x : c->a) x = static_cast<std::uint8_t>(rng());
  for (auto& x : c->b) x = static_cast<std::int8_t>(rng());
  c->jit.emplace(compile(int8_graph(*c, false)));
  c->jit_const.emplace(compile(int8_graph(*c, true)));
  c->jit_words.emplace(compile(int8_graph(*c, false), {.native_int8 = false}));
  std::vector<std::int32_t> want;
  for (int t : {1, 2}) {
    c->dnnl_by_threads.push_back({onednn_int8_matmul(*c, t)});
    const std::size_t i = c->dnnl_by_threads.size() - 1;
    auto jit = [c, t] {
      const void* in[] = {c->a.data(), c->b.data()};
      void* out[] = {c->out.data()};
      c->jit->run_unchecked(in, out, {.threads = t});
    };
    auto jit_const = [c, t] {
      const void* in[] = {c->a.data()};
      void* out[] = {c->out.data()};
      c->jit_const->run_unchecked(in, out, {.threads = t});
    };
    auto jit_words = [c, t] {
      const void* in[] = {c->a.data(), c->b.data()};
      void* out[] = {c->out.data()};
      c->jit_words->run_unchecked(in, out, {.threads = t});
    };
    auto onednn = [c, t, i] { run_onednn(c->stream, c->dnnl_by_threads[i], t); };
    if (t == 1) {
      onednn();
      want = c->out;
      check_int8(*c, want, "jit", jit);
      check_int8(*c, want, "jit const-W", jit_const);
      check_int8(*c, want, "jit words", jit_words);
    }
    const std::string base = name_of(int8_name, t);
    register_benchmark(base + "jit", jit);
    register_benchmark(base + "jit_const", jit_const);
    register_benchmark(base + "jit_words", jit_words);
    register_benchmark(base + "onednn", onednn);
  }
}

// ---- quantized MLP layer: quantize(relu(dequant(x W) + b)), u8 [128,512] x s8 [512,256] ----

constexpr Dim q_m = 128, q_k = 512, q_n = 256;
constexpr const char* qmlp_name = "qmlp128x512x256_u8";
/// Dequantization scale (x's times W's), and the output's QuantizeLinear scale and zero point:
/// chosen so that most outputs land inside [0, 255], not on its ends.
constexpr float q_scale = 0x1p-16f, q_out_scale = 0.05f, q_out_zero = 3.0f;

struct QmlpCase {
  std::vector<std::uint8_t> x, out;
  std::vector<std::int8_t> w;
  std::vector<float> bias;
  std::vector<float> bias_dnnl; // in units of the sums: oneDNN 2.x adds it before the scale
  std::optional<CompiledKernel> jit, jit_qdq;
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{eng};
  std::vector<std::vector<DnnlStep>> dnnl_by_threads;
};

/// The layer as one snippets kernel: the int32 sums dequantized, biased, relu'd and quantized to
/// u8 on the accumulators (constant weights, packed at compile time).
G qmlp_graph(const QmlpCase& c) {
  G g;
  const auto x = g.parameter(ElementType::u8, {q_m, q_k}, "x");
  const auto bias = g.parameter(f32, {q_n}, "bias");
  const auto w =
      g.constant(ElementType::i8, {q_k, q_n}, std::vector<double>(c.w.begin(), c.w.end()), "W");
  const auto acc = g.convert(g.matmul(x, w), f32);
  const auto y = g.relu(g.add(g.multiply(acc, g.scalar(f32, q_scale)), bias));
  g.result(g.quantize(y, g.scalar(f32, q_out_scale), g.scalar(f32, q_out_zero), ElementType::u8));
  return g;
}

/// The same layer as quantization tools export it (QDQ): DequantizeLinear of x (scale 2^-8) and
/// of the s8 weights (2^-8), an f32 MatMul, bias, relu, QuantizeLinear; compile() folds the
/// dequantizations into the int8 product (passes/fold_dequantize_into_matmul.hpp), so it is the
/// kernel of qmlp_graph.
G qmlp_qdq_graph(const QmlpCase& c) {
  G g;
  const auto x = g.parameter(ElementType::u8, {q_m, q_k}, "x");
  const auto bias = g.parameter(f32, {q_n}, "bias");
  const auto w =
      g.constant(ElementType::i8, {q_k, q_n}, std::vector<double>(c.w.begin(), c.w.end()), "W");
  auto dequantize = [&](auto v) { return g.multiply(g.convert(v, f32), g.scalar(f32, 0x1p-8)); };
  const auto y = g.relu(g.add(g.matmul(dequantize(x), dequantize(w)), bias));
  g.result(g.quantize(y, g.scalar(f32, q_out_scale), g.scalar(f32, q_out_zero), ElementType::u8));
  return g;
}

/// oneDNN's int8 matmul with the same layer as attributes: output scale, f32 bias (which oneDNN
/// 2.x adds to the sums before scaling them, so it is given divided by the scale), relu and a
/// linear post-op (x / scale + zero point) before the u8 destination (rounded to nearest even).
DnnlStep onednn_qmlp(QmlpCase& c, int t) {
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  const int saved = omp_get_max_threads();
  omp_set_num_threads(t);
  const dnnl::memory::desc a_md({q_m, q_k}, dt::u8, tag::ab), c_md({q_m, q_n}, dt::u8, tag::ab);
  const dnnl::memory::desc b_any({q_k, q_n}, dt::s8, tag::any), bias_md({1, q_n}, dt::f32, tag::ab);
  dnnl::primitive_attr attr;
  attr.set_output_scales(0, {q_scale});
  dnnl::post_ops po;
  po.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
  po.append_eltwise(1.0f, dnnl::algorithm::eltwise_linear, 1.0f / q_out_scale, q_out_zero);
  attr.set_post_ops(po);
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_any, bias_md, c_md), attr,
                                        c.eng);
  const dnnl::memory b_mem = onednn_weights(pd, c.eng, c.stream, q_k, q_n, dt::s8, c.w.data());
  std::unordered_map<int, dnnl::memory> args{
      {DNNL_ARG_SRC, dnnl::memory(a_md, c.eng, c.x.data())},
      {DNNL_ARG_WEIGHTS, b_mem},
      {DNNL_ARG_BIAS, dnnl::memory(bias_md, c.eng, c.bias_dnnl.data())},
      {DNNL_ARG_DST, dnnl::memory(c_md, c.eng, c.out.data())}};
  dnnl::matmul prim(pd);
  omp_set_num_threads(saved);
  return {std::move(prim), std::move(args)};
}

void register_qmlp() {
  if (!runs_int8()) return;
  auto c = std::make_shared<QmlpCase>();
  c->x.resize(std::size_t(q_m * q_k));
  c->w.resize(std::size_t(q_k * q_n));
  c->bias.resize(std::size_t(q_n));
  c->out.resize(std::size_t(q_m * q_n));
  std::mt19937 rng(131);
  for (auto& v : c->x) v = static_cast<std::uint8_t>(rng());
  for (auto& v : c->w) v = static_cast<std::int8_t>(rng());
  for (auto& v : c->bias) v = float(int(rng() % 2001) - 1000) / 1000.0f;
  for (float v : c->bias) c->bias_dnnl.push_back(v / q_scale); // exact: a power of two
  c->jit.emplace(compile(qmlp_graph(*c)));
  c->jit_qdq.emplace(compile(qmlp_qdq_graph(*c)));
  std::vector<std::uint8_t> want;
  for (int t : {1, 2}) {
    c->dnnl_by_threads.push_back({onednn_qmlp(*c, t)});
    const std::size_t i = c->dnnl_by_threads.size() - 1;
    auto jit = [c, t] {
      const void* in[] = {c->x.data(), c->bias.data()};
      void* out[] = {c->out.data()};
      c->jit->run_unchecked(in, out, {.threads = t});
    };
    auto jit_qdq = [c, t] {
      const void* in[] = {c->x.data(), c->bias.data()};
      void* out[] = {c->out.data()};
      c->jit_qdq->run_unchecked(in, out, {.threads = t});
    };
    auto onednn = [c, t, i] { run_onednn(c->stream, c->dnnl_by_threads[i], t); };
    if (t == 1) { // the f32 steps differ (x / s against x * (1 / s)): a u8 step at most
      onednn();
      want = c->out;
      std::fill(c->out.begin(), c->out.end(), std::uint8_t{0});
      jit();
      std::size_t off = 0, far = 0, inside = 0;
      for (std::size_t j = 0; j < want.size(); ++j) {
        const int d = std::abs(int(c->out[j]) - int(want[j]));
        off += d != 0, far += d > 1, inside += want[j] > 3 && want[j] < 255;
      }
      std::printf("check %s jit: %zu of %zu u8 results differ from oneDNN's by 1, %zu by more; "
                  "%zu inside (3, 255)\n",
                  qmlp_name, off - far, want.size(), far, inside);
      if (far || inside < want.size() / 4) {
        std::fprintf(stderr, "%s: jit differs from oneDNN, or the data proves nothing\n",
                     qmlp_name);
        std::exit(1);
      }
      const std::vector<std::uint8_t> fused = c->out; // the QDQ form folds into the same kernel
      std::fill(c->out.begin(), c->out.end(), std::uint8_t{0});
      jit_qdq();
      std::size_t qdq_off = 0;
      for (std::size_t j = 0; j < want.size(); ++j) qdq_off += c->out[j] != fused[j];
      std::printf("check %s jit_qdq: %zu of %zu u8 results differ from the int8 kernel's\n",
                  qmlp_name, qdq_off, want.size());
      if (qdq_off) {
        std::fprintf(stderr, "%s: the QDQ form differs from the int8 kernel\n", qmlp_name);
        std::exit(1);
      }
    }
    const std::string base = name_of(qmlp_name, t);
    register_benchmark(base + "jit_const", jit);
    register_benchmark(base + "jit_qdq", jit_qdq);
    register_benchmark(base + "onednn", onednn);
  }
}

void register_all() {
  for (const bool bf16 : {false, true})
    for (int t : {1, 2})
      if (runs(bf16))
        register_benchmark(peak_name(bf16, t), [t, bf16] {
#pragma omp parallel num_threads(t)
          peak_chains(peak_iters, bf16 ? PeakKind::bf16 : PeakKind::fma);
        });
  register_int8();
  register_qmlp();
  for (const Workload& w : workloads) {
    if (!runs(w.bf16)) {
      std::printf("%s: skipped, this host has no AVX512_BF16\n", w.name);
      continue;
    }
    auto c = std::make_shared<Case>();
    c->a = std::make_unique<Buffer>(std::size_t(w.m * w.k), -1.0f, 1.0f);
    c->b = std::make_unique<Buffer>(std::size_t(w.k * w.n), -1.0f, 1.0f);
    c->bias = std::make_unique<Buffer>(std::size_t(w.n), -1.0f, 1.0f);
    c->out = std::make_unique<Buffer>(std::size_t(w.m * w.n));
    if (w.bf16) {
      c->a16 = as_bf16(*c->a), c->b16 = as_bf16(*c->b), c->bias16 = as_bf16(*c->bias);
      c->out16 = as_bf16(*c->out);
    }
    c->jit.emplace(compile(graph_of(w, *c, false)));
    if (w.epilogue) c->jit_const.emplace(compile(graph_of(w, *c, true)));
    std::vector<float> want;
    for (int t : {1, 2}) {
      c->dnnl_by_threads.push_back(
          {onednn_matmul(c->eng, c->stream, w.m, w.k, w.n, w.bf16, w.epilogue, c->a_p(), c->b_p(),
                         c->bias_p(), c->out_p(), t)});
      const std::string base = name_of(w.name, t);
      auto jit = [c, t] {
        const void* in[] = {c->a_p(), c->b_p(), c->bias_p()};
        void* out[] = {c->out_p()};
        c->jit->run_unchecked(in, out, {.threads = t});
      };
      auto jit_const = [c, t] {
        const void* in[] = {c->a_p(), c->bias_p()};
        void* out[] = {c->out_p()};
        c->jit_const->run_unchecked(in, out, {.threads = t});
      };
      const std::size_t i = c->dnnl_by_threads.size() - 1;
      auto onednn = [c, t, i] { run_onednn(c->stream, c->dnnl_by_threads[i], t); };
      if (t == 1) {
        onednn();
        for (std::size_t j = 0; j < c->out->n; ++j) want.push_back(c->out_at(j));
        check_against(w, *c, want, "jit", jit);
        if (c->jit_const) check_against(w, *c, want, "jit const-W", jit_const);
      }
      register_benchmark(base + "jit", jit);
      if (c->jit_const) register_benchmark(base + "jit_const", jit_const);
      register_benchmark(base + "onednn", onednn);
    }
  }
  for (const ChainWorkload& w : chain_workloads) register_chain(w);
}

/// `v` printed with `fmt`, or "-" where nothing was measured.
std::string cell(double v, const char* fmt) {
  if (!(v > 0)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

/// The measured FMA (VDPBF16PS, VPDPBUSD) peak on `t` threads, GFLOP/s (GOPS); 0 if it was
/// not run.
double peak_gflops(const MedianReporter& rep, PeakKind kind, int t) {
  const double s = rep.seconds(peak_name(kind, t));
  const double ops = kind == PeakKind::vnni ? 8.0 : kind == PeakKind::bf16 ? 4.0 : 2.0;
  const double per_step = ops * peak_lanes * peak_chains_n; // one loop step
  return s > 0 ? per_step * double(peak_iters) * t / s * 1e-9 : 0;
}
double peak_gflops(const MedianReporter& rep, bool bf16, int t) {
  return peak_gflops(rep, bf16 ? PeakKind::bf16 : PeakKind::fma, t);
}

void print_qmlp_table(const MedianReporter& rep) {
  std::printf("\n| quantized MLP layer | threads | jit us | QDQ jit us | oneDNN us | jit GOPS | "
              "jit / oneDNN | QDQ / oneDNN | f32 const-W us | bf16 const-W us | int8 / f32 | "
              "int8 / bf16 |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (int t : {1, 2}) {
    auto sec = [&](const char* w, const char* v) { return rep.seconds(name_of(w, t) + v); };
    const double jit = sec(qmlp_name, "jit_const"), onednn = sec(qmlp_name, "onednn"),
                 qdq = sec(qmlp_name, "jit_qdq");
    if (jit <= 0) continue;
    const double f32_s = sec("mlp128x512x256", "jit_const"),
                 bf16_s = sec("mlp128x512x256_bf16", "jit_const");
    const double ops = 2.0 * double(q_m) * double(q_k) * double(q_n);
    std::printf("| %s | %d | %.1f | %s | %s | %.1f | %s | %s | %s | %s | %s | %s |\n", qmlp_name, t,
                jit * 1e6, cell(qdq * 1e6, "%.1f").c_str(), cell(onednn * 1e6, "%.1f").c_str(),
                ops / jit * 1e-9, cell(onednn > 0 ? onednn / jit : 0.0, "%.2fx").c_str(),
                cell(onednn > 0 && qdq > 0 ? onednn / qdq : 0.0, "%.2fx").c_str(),
                cell(f32_s * 1e6, "%.1f").c_str(), cell(bf16_s * 1e6, "%.1f").c_str(),
                cell(f32_s > 0 ? f32_s / jit : 0.0, "%.2fx").c_str(),
                cell(bf16_s > 0 ? bf16_s / jit : 0.0, "%.2fx").c_str());
  }
}

void print_int8_table(const MedianReporter& rep) {
  std::printf("\n| int8 workload | threads | jit GOPS | jit const-W GOPS | oneDNN GOPS | "
              "VPDPBUSD peak GOPS | jit %% of peak | jit / oneDNN | const-W / oneDNN | "
              "words GOPS |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  for (int t : {1, 2}) {
    const std::string base = name_of(int8_name, t);
    auto sec = [&](const char* v) { return rep.seconds(base + v); };
    if (sec("jit") <= 0 && sec("jit_const") <= 0 && sec("onednn") <= 0) continue;
    const double ops = 2.0 * double(int8_m) * double(int8_k) * double(int8_n);
    auto gops = [&](const char* v) { return sec(v) > 0 ? ops / sec(v) * 1e-9 : 0.0; };
    const double peak = peak_gflops(rep, PeakKind::vnni, t);
    auto vs_onednn = [&](const char* v) { return sec(v) > 0 ? sec("onednn") / sec(v) : 0.0; };
    std::printf("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", int8_name, t,
                cell(gops("jit"), "%.1f").c_str(), cell(gops("jit_const"), "%.1f").c_str(),
                cell(gops("onednn"), "%.1f").c_str(), cell(peak, "%.1f").c_str(),
                cell(peak > 0 ? 100.0 * gops("jit") / peak : 0.0, "%.0f%%").c_str(),
                cell(vs_onednn("jit"), "%.2fx").c_str(),
                cell(vs_onednn("jit_const"), "%.2fx").c_str(),
                cell(gops("jit_words"), "%.1f").c_str());
  }
}

void print_table(const MedianReporter& rep) {
  std::printf("\n| workload | threads | jit GFLOP/s | jit const-W GFLOP/s | oneDNN GFLOP/s | "
              "peak GFLOP/s | jit %% of peak | jit / oneDNN | const-W / oneDNN |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  for (const Workload& w : workloads)
    for (int t : {1, 2}) {
      if (!runs(w.bf16)) continue;
      const std::string base = name_of(w.name, t);
      auto sec = [&](const char* v) { return rep.seconds(base + v); };
      const double flops = 2.0 * double(w.m) * double(w.k) * double(w.n);
      auto gf = [&](const char* v) { return sec(v) > 0 ? flops / sec(v) * 1e-9 : 0.0; };
      const double peak = peak_gflops(rep, w.bf16, t);
      auto vs_onednn = [&](const char* v) { return sec(v) > 0 ? sec("onednn") / sec(v) : 0.0; };
      std::printf("| %s | %d | %s | %s | %s | %s | %s | %s | %s |\n", w.name, t,
                  cell(gf("jit"), "%.1f").c_str(), cell(gf("jit_const"), "%.1f").c_str(),
                  cell(gf("onednn"), "%.1f").c_str(), cell(peak, "%.1f").c_str(),
                  cell(peak > 0 ? 100.0 * gf("jit") / peak : 0.0, "%.0f%%").c_str(),
                  cell(vs_onednn("jit"), "%.2fx").c_str(),
                  cell(vs_onednn("jit_const"), "%.2fx").c_str());
    }
  std::printf("\n| MLP chain | threads | fused us | per-layer us | oneDNN us | fused GFLOP/s | "
              "fused %% of peak | per-layer / fused | oneDNN / fused |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  for (const ChainWorkload& w : chain_workloads)
    for (int t : {1, 2}) {
      auto sec = [&](const char* v) { return rep.seconds(name_of(w.name, t) + v); };
      const double fused = sec("fused");
      if (fused <= 0) continue;
      const double gflops = 2.0 * double(w.m) * double(w.width * w.width) * w.layers / fused * 1e-9;
      const double peak = peak_gflops(rep, false, t);
      std::printf("| %s | %d | %.1f | %s | %s | %.1f | %s | %s | %s |\n", w.name, t, fused * 1e6,
                  cell(sec("per_layer") * 1e6, "%.1f").c_str(),
                  cell(sec("onednn") * 1e6, "%.1f").c_str(), gflops,
                  cell(peak > 0 ? 100.0 * gflops / peak : 0.0, "%.0f%%").c_str(),
                  cell(sec("per_layer") / fused, "%.2fx").c_str(),
                  cell(sec("onednn") / fused, "%.2fx").c_str());
    }
  print_int8_table(rep);
  print_qmlp_table(rep);
}

} // namespace

int main(int argc, char** argv) { return run_benchmarks(argc, argv, register_all, print_table); }
