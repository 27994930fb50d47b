// bench/bench_matmul.cpp: MatMul kernels (Brgemm with fused epilogues) against oneDNN's matmul
// primitive, and the machine's FMA peak, in one run.
//
// Workloads (one and two threads):
//   gemm 1024      [1024,1024] x [1024,1024] f32, B an input (packed by the kernel each call)
//   mlp layer      [128,512] x [512,256] + bias + Relu, f32, and bf16 (A, B, bias and output
//                  bf16, f32 accumulation); snippets with the weights a Constant (packed at
//                  compile time) and as an input; oneDNN matmul with a bias and an eltwise relu
//                  post-op, weights in its preferred (any) format, reordered once
// Before timing, every variant's output is compared with oneDNN's (relative to the largest
// output: 1e-4 for f32, 2^-7 for bf16, one bf16 ulp); a mismatch stops the run.
// It also measures the peaks: 24 independent chains of vfmadd231ps (f32) or vdpbf16ps (bf16,
// two products per lane) on zmm per thread (JIT, registers only), the most this core retires.
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

/// 24 independent chains of vfmadd231ps (or vdpbf16ps) zmm per loop step, `iters` steps:
/// 2 * 16 * 24 * iters flops (twice that for vdpbf16ps). JIT-built so that no compiler keeps
/// the accumulators in memory.
struct Peak : Xbyak::CodeGenerator {
  explicit Peak(bool bf16) {
    using namespace Xbyak::util;
    for (int i = 0; i < 24; ++i) vxorps(Xbyak::Zmm(i), Xbyak::Zmm(i), Xbyak::Zmm(i));
    Xbyak::Label loop;
    L(loop);
    for (int i = 0; i < 24; ++i)
      bf16 ? vdpbf16ps(Xbyak::Zmm(i), zmm30, zmm31) : vfmadd231ps(Xbyak::Zmm(i), zmm30, zmm31);
    dec(rdi);
    jnz(loop);
    vzeroupper();
    ret();
  }
};
void peak_chains(long iters, bool bf16) {
  static const Peak fma(false), dp(true);
  (bf16 ? dp : fma).getCode<void (*)(long)>()(iters);
}
constexpr long peak_iters = 1 << 20;
std::string peak_name(bool bf16, int t) {
  return std::string(bf16 ? "bf16_peak/" : "fma_peak/") + std::to_string(t) + "t/";
}

float from_bf16(std::uint16_t h) { return static_cast<float>(from_bf16_bits(h)); }

/// A Buffer's values as bf16 (the Buffer keeps the same values, rounded).
std::vector<std::uint16_t> as_bf16(Buffer& b) {
  std::vector<std::uint16_t> out(b.n);
  for (std::size_t i = 0; i < b.n; ++i) b.p[i] = from_bf16(out[i] = bf16_bits(b.p[i]));
  return out;
}

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
  std::vector<std::pair<dnnl::matmul, std::unordered_map<int, dnnl::memory>>> dnnl_by_threads;
};

std::string name_of(const Workload& w, int t) {
  return std::string(w.name) + "/" + std::to_string(t) + "t/";
}

void add_onednn(Case& c, const Workload& w, int t) {
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  const int saved = omp_get_max_threads();
  omp_set_num_threads(t);
  const dt type = w.bf16 ? dt::bf16 : dt::f32;
  const dnnl::memory::desc a_md({w.m, w.k}, type, tag::ab), c_md({w.m, w.n}, type, tag::ab);
  const dnnl::memory::desc b_any({w.k, w.n}, type, tag::any);
  const dnnl::memory::desc bias_md({1, w.n}, type, tag::ab);
  dnnl::primitive_attr attr;
  if (w.epilogue) {
    dnnl::post_ops po;
    po.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    attr.set_post_ops(po);
  }
  const auto pd = w.epilogue
                      ? dnnl::matmul::primitive_desc(dnnl::matmul::desc(a_md, b_any, bias_md, c_md),
                                                     attr, c.eng)
                      : dnnl::matmul::primitive_desc(dnnl::matmul::desc(a_md, b_any, c_md), c.eng);
  dnnl::memory b_user({{w.k, w.n}, type, tag::ab}, c.eng, c.b_p());
  dnnl::memory b_mem = b_user;
  if (pd.weights_desc() != b_user.get_desc()) { // reorder the weights once, as a runtime would
    b_mem = dnnl::memory(pd.weights_desc(), c.eng);
    dnnl::reorder(b_user, b_mem).execute(c.stream, b_user, b_mem);
    c.stream.wait();
  }
  std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, dnnl::memory(a_md, c.eng, c.a_p())},
                                             {DNNL_ARG_WEIGHTS, b_mem},
                                             {DNNL_ARG_DST, dnnl::memory(c_md, c.eng, c.out_p())}};
  if (w.epilogue) args[DNNL_ARG_BIAS] = dnnl::memory(bias_md, c.eng, c.bias_p());
  c.dnnl_by_threads.emplace_back(dnnl::matmul(pd), std::move(args));
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

/// Runs `f` once on one thread and compares the output with oneDNN's (`want`); stops the run
/// on a mismatch (see the header).
void check_against(const Workload& w, Case& c, const std::vector<float>& want, const char* who,
                   const std::function<void()>& f) {
  std::fill_n(c.out->p, c.out->n, std::nanf("")); // nothing left from the run before
  std::fill(c.out16.begin(), c.out16.end(), std::uint16_t{0x7fc0});
  f();
  double largest = 0, worst = 0;
  for (float x : want) largest = std::max(largest, std::fabs(double(x)));
  const double tol = (w.bf16 ? 0x1p-7 : 1e-4) * largest;
  std::size_t bad = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double d = std::fabs(double(c.out_at(i)) - double(want[i]));
    bad += !(d <= tol); // NaN too
    worst = std::max(worst, d);
  }
  std::printf("check %s %s: max |difference| to oneDNN %.3g (tolerance %.3g)\n", w.name, who, worst,
              tol);
  if (bad) {
    std::fprintf(stderr, "%s: %s differs from oneDNN; not timing a wrong result\n", w.name, who);
    std::exit(1);
  }
}

void register_all() {
  for (const bool bf16 : {false, true})
    for (int t : {1, 2})
      register_benchmark(peak_name(bf16, t), [t, bf16] {
#pragma omp parallel num_threads(t)
        peak_chains(peak_iters, bf16);
      });
  for (const Workload& w : workloads) {
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
      add_onednn(*c, w, t);
      const std::string base = name_of(w, t);
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
      auto onednn = [c, t, i] {
        const int saved = omp_get_max_threads();
        omp_set_num_threads(t);
        c->dnnl_by_threads[i].first.execute(c->stream, c->dnnl_by_threads[i].second);
        c->stream.wait();
        omp_set_num_threads(saved);
      };
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
}

void print_table(const MedianReporter& rep) {
  std::printf("\n| workload | threads | jit GFLOP/s | jit const-W GFLOP/s | oneDNN GFLOP/s | "
              "peak GFLOP/s | jit %% of peak | jit / oneDNN | const-W / oneDNN |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  for (const Workload& w : workloads)
    for (int t : {1, 2}) {
      const std::string base = name_of(w, t);
      auto sec = [&](const char* v) { return rep.seconds(base + v); };
      const double flops = 2.0 * double(w.m) * double(w.k) * double(w.n);
      auto gf = [&](const char* v) { return sec(v) > 0 ? flops / sec(v) * 1e-9 : 0.0; };
      const double peak_s = rep.seconds(peak_name(w.bf16, t));
      const double per_step = (w.bf16 ? 4.0 : 2.0) * 16 * 24; // flops of one loop step
      const double peak = peak_s > 0 ? per_step * double(peak_iters) * t / peak_s * 1e-9 : 0;
      std::printf("| %s | %d | %.1f | %.1f | %.1f | %.1f | %.0f%% | %.2fx | %.2fx |\n", w.name, t,
                  gf("jit"), gf("jit_const"), gf("onednn"), peak,
                  peak > 0 ? 100.0 * gf("jit") / peak : 0.0,
                  sec("jit") > 0 ? sec("onednn") / sec("jit") : 0.0,
                  sec("jit_const") > 0 ? sec("onednn") / sec("jit_const") : 0.0);
    }
}

} // namespace

int main(int argc, char** argv) { return run_benchmarks(argc, argv, register_all, print_table); }
