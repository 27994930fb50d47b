// bench/bench_matmul.cpp: MatMul kernels (Brgemm with fused epilogues) against oneDNN's matmul
// primitive, and the machine's FMA peak, in one run.
//
// Workloads (f32, one and two threads):
//   gemm 1024      [1024,1024] x [1024,1024], B an input (packed by the kernel each call)
//   mlp layer      [128,512] x [512,256] + bias + Relu; snippets with the weights a Constant
//                  (packed at compile time) and as an input; oneDNN matmul with a bias and an
//                  eltwise relu post-op, weights in its preferred (any) format, reordered once
// It also measures the FMA peak: 24 independent chains of vfmadd231ps (zmm) per thread (JIT,
// registers only), the most this core retires. The table gives GFLOP/s, % of that peak and snippets
// / oneDNN (oneDNN time over snippets time: above 1 is faster). Usage:
//   ./build/bench/bench_matmul [--benchmark_repetitions=N] [--benchmark_filter=...]
#include <omp.h>
#include <xbyak/xbyak.h>

#include <cstdio>
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
};
constexpr Workload workloads[] = {{"gemm1024", 1024, 1024, 1024, false},
                                  {"mlp128x512x256", 128, 512, 256, true}};

/// 24 independent chains of vfmadd231ps zmm per loop step, `iters` steps: 2 * 16 * 24 * iters
/// flops. JIT-built so that no compiler keeps the accumulators in memory.
struct FmaPeak : Xbyak::CodeGenerator {
  FmaPeak() {
    using namespace Xbyak::util;
    for (int i = 0; i < 24; ++i) vxorps(Xbyak::Zmm(i), Xbyak::Zmm(i), Xbyak::Zmm(i));
    Xbyak::Label loop;
    L(loop);
    for (int i = 0; i < 24; ++i) vfmadd231ps(Xbyak::Zmm(i), zmm30, zmm31);
    dec(rdi);
    jnz(loop);
    vzeroupper();
    ret();
  }
};
void fma_chains(long iters) {
  static const FmaPeak code;
  code.getCode<void (*)(long)>()(iters);
}
constexpr long peak_iters = 1 << 20;

struct Case {
  std::unique_ptr<Buffer> a, b, bias, out;
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
  const dnnl::memory::desc a_md({w.m, w.k}, dt::f32, tag::ab), c_md({w.m, w.n}, dt::f32, tag::ab);
  const dnnl::memory::desc b_any({w.k, w.n}, dt::f32, tag::any);
  const dnnl::memory::desc bias_md({1, w.n}, dt::f32, tag::ab);
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
  dnnl::memory b_user({{w.k, w.n}, dt::f32, tag::ab}, c.eng, c.b->p);
  dnnl::memory b_mem = b_user;
  if (pd.weights_desc() != b_user.get_desc()) { // reorder the weights once, as a runtime would
    b_mem = dnnl::memory(pd.weights_desc(), c.eng);
    dnnl::reorder(b_user, b_mem).execute(c.stream, b_user, b_mem);
    c.stream.wait();
  }
  std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, dnnl::memory(a_md, c.eng, c.a->p)},
                                             {DNNL_ARG_WEIGHTS, b_mem},
                                             {DNNL_ARG_DST, dnnl::memory(c_md, c.eng, c.out->p)}};
  if (w.epilogue) args[DNNL_ARG_BIAS] = dnnl::memory(bias_md, c.eng, c.bias->p);
  c.dnnl_by_threads.emplace_back(dnnl::matmul(pd), std::move(args));
  omp_set_num_threads(saved);
}

G graph_of(const Workload& w, const Case& c, bool constant_weights) {
  G g;
  const auto a = g.parameter(f32, {w.m, w.k}, "A");
  ir::Value b;
  if (constant_weights) {
    std::vector<double> v(static_cast<std::size_t>(w.k * w.n));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = c.b->p[i];
    b = g.constant(f32, {w.k, w.n}, std::move(v), "W");
  } else {
    b = g.parameter(f32, {w.k, w.n}, "B");
  }
  ir::Value y = g.matmul(a, b);
  if (w.epilogue) y = g.relu(g.add(y, g.parameter(f32, {w.n}, "bias")));
  g.result(y);
  return g;
}

void register_all() {
  for (int t : {1, 2})
    register_benchmark("fma_peak/" + std::to_string(t) + "t/", [t] {
#pragma omp parallel num_threads(t)
      fma_chains(peak_iters);
    });
  for (const Workload& w : workloads) {
    auto c = std::make_shared<Case>();
    c->a = std::make_unique<Buffer>(std::size_t(w.m * w.k), -1.0f, 1.0f);
    c->b = std::make_unique<Buffer>(std::size_t(w.k * w.n), -1.0f, 1.0f);
    c->bias = std::make_unique<Buffer>(std::size_t(w.n), -1.0f, 1.0f);
    c->out = std::make_unique<Buffer>(std::size_t(w.m * w.n));
    c->jit.emplace(compile(graph_of(w, *c, false)));
    if (w.epilogue) c->jit_const.emplace(compile(graph_of(w, *c, true)));
    for (int t : {1, 2}) {
      add_onednn(*c, w, t);
      const std::string base = name_of(w, t);
      register_benchmark(base + "jit", [c, t] {
        const void* in[] = {c->a->p, c->b->p, c->bias->p};
        void* out[] = {c->out->p};
        c->jit->run_unchecked(in, out, {.threads = t});
      });
      if (c->jit_const)
        register_benchmark(base + "jit_const", [c, t] {
          const void* in[] = {c->a->p, c->bias->p};
          void* out[] = {c->out->p};
          c->jit_const->run_unchecked(in, out, {.threads = t});
        });
      const std::size_t i = c->dnnl_by_threads.size() - 1;
      register_benchmark(base + "onednn", [c, t, i] {
        const int saved = omp_get_max_threads();
        omp_set_num_threads(t);
        c->dnnl_by_threads[i].first.execute(c->stream, c->dnnl_by_threads[i].second);
        c->stream.wait();
        omp_set_num_threads(saved);
      });
    }
  }
}

void print_table(const MedianReporter& rep) {
  std::printf("\n| workload | threads | jit GFLOP/s | jit const-W GFLOP/s | oneDNN GFLOP/s | FMA "
              "peak GFLOP/s | jit %% of peak | jit / oneDNN | const-W / oneDNN |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  for (const Workload& w : workloads)
    for (int t : {1, 2}) {
      const std::string base = name_of(w, t);
      auto sec = [&](const char* v) { return rep.seconds(base + v); };
      const double flops = 2.0 * double(w.m) * double(w.k) * double(w.n);
      auto gf = [&](const char* v) { return sec(v) > 0 ? flops / sec(v) * 1e-9 : 0.0; };
      const double peak_s = rep.seconds("fma_peak/" + std::to_string(t) + "t/");
      const double peak = peak_s > 0 ? 2.0 * 16 * 24 * double(peak_iters) * t / peak_s * 1e-9 : 0;
      std::printf("| %s | %d | %.1f | %.1f | %.1f | %.1f | %.0f%% | %.2fx | %.2fx |\n", w.name, t,
                  gf("jit"), gf("jit_const"), gf("onednn"), peak,
                  peak > 0 ? 100.0 * gf("jit") / peak : 0.0,
                  sec("jit") > 0 ? sec("onednn") / sec("jit") : 0.0,
                  sec("jit_const") > 0 ? sec("onednn") / sec("jit_const") : 0.0);
    }
}

} // namespace

int main(int argc, char** argv) { return run_benchmarks(argc, argv, register_all, print_table); }
