// SPDX-License-Identifier: Apache-2.0
// bench/bench_mha.cpp: one attention block as one snippets kernel against the same block
// unfused in oneDNN (matmul, softmax, matmul), in one run.
//
// Workload (f32, one and two threads): Q, K, V [1,128,12,64] (batch, sequence, heads, head
// size), mask [1,12,128,128]:
//   out = transpose(softmax(transpose(Q) transpose(K)^T * 0.125 + mask) transpose(V))
// snippets: the graph compiled to one kernel (the tokenizer makes it one Subgraph, test_jit_mha)
//   whose transposes are strides, with the scores of a block of rows in per-thread scratch.
// oneDNN: three primitives, the strongest unfused form it offers: a matmul reading Q and K
//   through strided memory descriptors (no transposes in memory) with the scale as an output
//   scale and the mask as a binary-add post-op, writing the scores [12,128,128]; an in-place
//   softmax over the last axis; a matmul of the probabilities with V, writing the output
//   through strides.
// Both results are compared before timing. The table gives time, GFLOP/s (2 products of
// 2*12*128*128*64 flops) and oneDNN time over snippets time (above 1: snippets is faster).
// Dynamic sequence (one thread): the same block with the sequence length dynamic in Q, K, V
// and the mask, run through a Program (a kernel_per_shape step: compiled at the first run with
// each length, program/program.hpp), against the Program of the static graph of each length,
// both through Program::run on views, for lengths 1 to 512; the first run's time (plan and
// compilation) is measured once per length.
// Quantized attention (OpenVINO's MHAQuant, one kernel: test_jit_mha_int8): u8 Q, i8 K and V
// [1,128,12,64] with the f32 mask, Q K^T summed in int32 (VPDPBUSD), dequantized, Softmax in
// f32, the probabilities quantized to u8 (scale 1/255) and multiplied with V in int32, the
// output dequantized to f32; against the f32 kernel above (same layout, same mask), in the same
// run. Its output is checked against the reference interpreter before timing.
// Usage: ./build/bench/bench_mha [--benchmark_repetitions=N]
#include <omp.h>

#include <chrono>
#include <cmath>
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

constexpr Dim B = 1, S = 128, H = 12, D = 64;
constexpr float scale = 0.125f;

struct Case {
  Buffer q{std::size_t(B * S * H * D), -1.0f, 1.0f}, k{std::size_t(B * S * H * D), -1.0f, 1.0f},
      v{std::size_t(B * S * H * D), -1.0f, 1.0f}, mask{std::size_t(B * H * S * S), -1.0f, 1.0f};
  Buffer out{std::size_t(B * S * H * D)}, ref{std::size_t(B * S * H * D)};
  Buffer scores{std::size_t(B * H * S * S)};
  std::optional<CompiledKernel> jit;
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{eng};
  struct Primitives {
    dnnl::matmul qk, pv;
    dnnl::softmax_forward softmax;
    std::unordered_map<int, dnnl::memory> qk_args, pv_args, softmax_args;
  };
  std::vector<Primitives> dnnl_by_threads; // 1 and 2 threads
};

/// The block for sequence length `seq` (`dynamic`: any).
G attention_graph(Dim seq = S) {
  G g;
  const auto q = g.transpose(g.parameter(f32, {B, seq, H, D}, "q"), {0, 2, 1, 3});
  const auto k = g.transpose(g.parameter(f32, {B, seq, H, D}, "k"), {0, 2, 3, 1});
  const auto v = g.transpose(g.parameter(f32, {B, seq, H, D}, "v"), {0, 2, 1, 3});
  auto s = g.multiply(g.matmul(q, k), g.constant(f32, {1}, {scale}, "scale"));
  s = g.add(s, g.parameter(f32, {B, H, seq, seq}, "mask"));
  g.result(g.transpose(g.matmul(g.softmax(s, -1), v), {0, 2, 1, 3}), "out");
  return g;
}

Case::Primitives onednn(Case& c, int threads) {
  using dt = dnnl::memory::data_type;
  using md = dnnl::memory::desc;
  const int saved = omp_get_max_threads();
  omp_set_num_threads(threads);
  // [heads, rows, cols] views of the [1, S, H, D] tensors: element (h, s, d) at s*H*D + h*D + d
  const md q_md({H, S, D}, dt::f32, {D, H * D, 1});
  const md kt_md({H, D, S}, dt::f32, {D, 1, H * D});
  const md v_md({H, S, D}, dt::f32, {D, H * D, 1});
  const md scores_md({H, S, S}, dt::f32, {S * S, S, 1});
  dnnl::primitive_attr qk_attr;
  qk_attr.set_output_scales(0, {scale});
  dnnl::post_ops po;
  po.append_binary(dnnl::algorithm::binary_add, scores_md);
  qk_attr.set_post_ops(po);
  const dnnl::matmul::primitive_desc qk_pd(dnnl::matmul::desc(q_md, kt_md, scores_md), qk_attr,
                                           c.eng);
  const dnnl::softmax_forward::primitive_desc sm_pd(
      dnnl::softmax_forward::desc(dnnl::prop_kind::forward_inference, scores_md, 2), c.eng);
  const dnnl::matmul::primitive_desc pv_pd(dnnl::matmul::desc(scores_md, v_md, q_md), c.eng);
  const dnnl::memory scores(scores_md, c.eng, c.scores.p);
  Case::Primitives p{dnnl::matmul(qk_pd),
                     dnnl::matmul(pv_pd),
                     dnnl::softmax_forward(sm_pd),
                     {{DNNL_ARG_SRC, dnnl::memory(q_md, c.eng, c.q.p)},
                      {DNNL_ARG_WEIGHTS, dnnl::memory(kt_md, c.eng, c.k.p)},
                      {DNNL_ARG_DST, scores},
                      {DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1,
                       dnnl::memory(scores_md, c.eng, c.mask.p)}},
                     {{DNNL_ARG_SRC, scores},
                      {DNNL_ARG_WEIGHTS, dnnl::memory(v_md, c.eng, c.v.p)},
                      {DNNL_ARG_DST, dnnl::memory(q_md, c.eng, c.ref.p)}},
                     {{DNNL_ARG_SRC, scores}, {DNNL_ARG_DST, scores}}};
  omp_set_num_threads(saved);
  return p;
}

void run_onednn(Case& c, int threads) {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(threads);
  auto& p = c.dnnl_by_threads[std::size_t(threads - 1)];
  p.qk.execute(c.stream, p.qk_args);
  p.softmax.execute(c.stream, p.softmax_args);
  p.pv.execute(c.stream, p.pv_args);
  c.stream.wait();
  omp_set_num_threads(saved);
}

void run_jit(Case& c, int threads) {
  const void* in[] = {c.q.p, c.k.p, c.v.p, c.mask.p};
  void* out[] = {c.out.p};
  c.jit->run_unchecked(in, out, {.threads = threads});
}

/// Quantized attention on byte inputs (see the file comment).
G quantized_attention_graph() {
  G g;
  const auto q = g.transpose(g.parameter(ElementType::u8, {B, S, H, D}, "q"), {0, 2, 1, 3});
  const auto k = g.transpose(g.parameter(ElementType::i8, {B, S, H, D}, "k"), {0, 2, 3, 1});
  const auto v = g.transpose(g.parameter(ElementType::i8, {B, S, H, D}, "v"), {0, 2, 1, 3});
  // Q's scale x K's x 1/sqrt(D): scores of a few units
  auto s = g.multiply(g.convert(g.matmul(q, k), f32), g.scalar(f32, 1.0 / 16384));
  s = g.add(s, g.parameter(f32, {B, H, S, S}, "mask"));
  const auto p =
      g.quantize(g.softmax(s, -1), g.scalar(f32, 1.0 / 255), g.scalar(f32, 0.0), ElementType::u8);
  const auto o = g.multiply(g.convert(g.matmul(p, v), f32), g.scalar(f32, 0.02 / 255));
  g.result(g.transpose(o, {0, 2, 1, 3}), "out");
  return g;
}

struct QuantizedCase {
  std::vector<std::uint8_t> q = bytes<std::uint8_t>(0, 256, 7);
  std::vector<std::int8_t> k = bytes<std::int8_t>(-128, 256, 11),
                           v = bytes<std::int8_t>(-128, 256, 13);
  Buffer mask{std::size_t(B * H * S * S), -1.0f, 1.0f}, out{std::size_t(B * S * H * D)};
  CompiledKernel jit = compile(quantized_attention_graph());

  /// B*S*H*D bytes lo + (i * step mod span): every value of the type, in no row's order.
  template <class Byte> static std::vector<Byte> bytes(int lo, int span, int step) {
    std::vector<Byte> b(std::size_t(B * S * H * D));
    for (std::size_t i = 0; i < b.size(); ++i)
      b[i] = static_cast<Byte>(lo + int((i * std::size_t(step) + i / 97) % std::size_t(span)));
    return b;
  }
  void run(int threads) {
    const void* in[] = {q.data(), k.data(), v.data(), mask.p};
    void* o[] = {out.p};
    jit.run_unchecked(in, o, {.threads = threads});
  }
  /// The largest difference from the reference interpreter, over the output's largest value.
  double relative_error() {
    run(2);
    auto tensor = [](ElementType t, auto first, auto last) {
      return reference::Tensor::from_values(t, {B, S, H, D}, std::vector<double>(first, last));
    };
    const std::vector<reference::Tensor> in{
        tensor(ElementType::u8, q.begin(), q.end()), tensor(ElementType::i8, k.begin(), k.end()),
        tensor(ElementType::i8, v.begin(), v.end()),
        reference::Tensor::from_values(f32, {B, H, S, S},
                                       std::vector<double>(mask.p, mask.p + mask.n))};
    const reference::Tensor want =
        reference::evaluate(quantized_attention_graph(), std::span<const reference::Tensor>(in))[0];
    double worst = 0, largest = 0;
    for (std::size_t i = 0; i < out.n; ++i) {
      worst = std::max(worst, std::fabs(double(out.p[i]) - want.at(i)));
      largest = std::max(largest, std::fabs(want.at(i)));
    }
    return worst / largest;
  }
};

std::vector<double>& first_run_ms() {
  static std::vector<double> ms;
  return ms;
}

constexpr Dim sweep[] = {1, 16, 64, 100, 128, 256, 384, 512};
constexpr Dim max_seq = 512;

/// Q, K, V, mask and output of the longest sequence; shorter ones use their beginnings.
struct DynamicCase {
  Buffer q{std::size_t(B * max_seq * H * D), -1.0f, 1.0f},
      k{std::size_t(B * max_seq * H * D), -1.0f, 1.0f},
      v{std::size_t(B * max_seq * H * D), -1.0f, 1.0f},
      mask{std::size_t(B * H * max_seq * max_seq), -1.0f, 1.0f},
      out{std::size_t(B * max_seq * H * D)};
  Program<> dynamic_program{attention_graph(dynamic)};
  std::vector<std::unique_ptr<Program<>>> static_programs; // one per length of the sweep
  std::vector<std::unique_ptr<ExecutionContext>> static_contexts;
  ExecutionContext dynamic_ctx = dynamic_program.make_context();
  std::vector<double> first_run_ms; // per length: the dynamic Program's plan and compilation
};

void run_program(DynamicCase& c, const Program<>& p, ExecutionContext& ctx, Dim seq) {
  const Shape qkv{B, seq, H, D};
  const ConstTensorView in[] = {{f32, qkv, c.q.p},
                                {f32, qkv, c.k.p},
                                {f32, qkv, c.v.p},
                                {f32, Shape{B, H, seq, seq}, c.mask.p}};
  const TensorView out[] = {{f32, qkv, c.out.p}};
  p.run(ctx, in, out, {.threads = 1});
}

void register_dynamic() {
  auto c = std::make_shared<DynamicCase>();
  for (const Dim seq : sweep) { // first: the static Programs would put its kernels in the cache
    const auto start = std::chrono::steady_clock::now();
    run_program(*c, c->dynamic_program, c->dynamic_ctx, seq);
    c->first_run_ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
  }
  for (const Dim seq : sweep) {
    c->static_programs.push_back(std::make_unique<Program<>>(attention_graph(seq)));
    c->static_contexts.push_back(
        std::make_unique<ExecutionContext>(c->static_programs.back()->make_context()));
  }
  for (std::size_t i = 0; i < std::size(sweep); ++i) {
    const Dim seq = sweep[i];
    const std::string base = "mha_dynamic/" + std::to_string(seq) + "/";
    register_benchmark(base + "static_program", [c, i, seq] {
      run_program(*c, *c->static_programs[i], *c->static_contexts[i], seq);
    });
    register_benchmark(base + "dynamic_program",
                       [c, seq] { run_program(*c, c->dynamic_program, c->dynamic_ctx, seq); });
  }
  first_run_ms() = c->first_run_ms;
}

void register_all() {
  register_dynamic();
  auto c = std::make_shared<Case>();
  c->jit.emplace(compile(attention_graph()));
  for (int t : {1, 2}) c->dnnl_by_threads.push_back(onednn(*c, t));
  // no peer is fast because it is wrong: the two agree before anything is timed
  run_jit(*c, 2);
  run_onednn(*c, 2);
  double worst = 0;
  for (std::size_t i = 0; i < c->out.n; ++i)
    worst = std::max(worst, double(std::fabs(c->out.p[i] - c->ref.p[i])));
  std::printf("snippets vs oneDNN: max |difference| %.3g\n", worst);
  if (!(worst < 1e-4)) {
    std::fprintf(stderr, "bench_mha: snippets and oneDNN disagree (%.3g); not timing\n", worst);
    std::exit(1);
  }
  auto qc = std::make_shared<QuantizedCase>();
  // a level of the probabilities off here and there (test_jit_mha_int8), nothing more
  const double rel = qc->relative_error();
  std::printf("quantized attention vs the reference: max |difference| / max |output| %.3g\n", rel);
  if (!(rel < 0.02)) {
    std::fprintf(stderr, "bench_mha: the quantized kernel disagrees with the reference; not "
                         "timing\n");
    std::exit(1);
  }
  for (int t : {1, 2}) {
    const std::string base = "mha_1x128x12x64/" + std::to_string(t) + "t/";
    register_benchmark(base + "jit", [c, t] { run_jit(*c, t); });
    register_benchmark(base + "jit_int8", [qc, t] { qc->run(t); });
    register_benchmark(base + "onednn_unfused", [c, t] { run_onednn(*c, t); });
  }
}

void print_table(const MedianReporter& rep) {
  std::printf("\n| workload | threads | snippets us | oneDNN unfused us | snippets GFLOP/s | "
              "oneDNN GFLOP/s | oneDNN / snippets |\n|---|---|---|---|---|---|---|\n");
  const double flops = 2 * 2.0 * double(B * H) * double(S) * double(S) * double(D);
  for (int t : {1, 2}) {
    const std::string base = "mha_1x128x12x64/" + std::to_string(t) + "t/";
    const double jit = rep.seconds(base + "jit"), dnnl = rep.seconds(base + "onednn_unfused");
    if (jit <= 0 || dnnl <= 0) continue;
    std::printf("| MHA [1,128,12,64] | %d | %.1f | %.1f | %.1f | %.1f | %.2fx |\n", t, jit * 1e6,
                dnnl * 1e6, flops / jit * 1e-9, flops / dnnl * 1e-9, dnnl / jit);
  }
  std::printf("\n| workload | threads | f32 kernel us | quantized kernel us | f32 / quantized "
              "|\n|---|---|---|---|---|\n");
  for (int t : {1, 2}) {
    const std::string base = "mha_1x128x12x64/" + std::to_string(t) + "t/";
    const double f = rep.seconds(base + "jit"), q = rep.seconds(base + "jit_int8");
    if (f <= 0 || q <= 0) continue;
    std::printf("| MHA [1,128,12,64] | %d | %.1f | %.1f | %.2fx |\n", t, f * 1e6, q * 1e6, f / q);
  }
  std::printf("\n| sequence | static Program us | dynamic Program us | dynamic / static | dynamic "
              "GFLOP/s | first run ms (plan + compile) |\n|---|---|---|---|---|---|\n");
  for (std::size_t i = 0; i < std::size(sweep); ++i) {
    const std::string base = "mha_dynamic/" + std::to_string(sweep[i]) + "/";
    const double st = rep.seconds(base + "static_program"),
                 dy = rep.seconds(base + "dynamic_program");
    if (st <= 0 || dy <= 0) continue;
    const double f = 2 * 2.0 * double(B * H) * double(sweep[i]) * double(sweep[i]) * double(D);
    std::printf("| %lld | %.1f | %.1f | %.2f | %.1f | %.1f |\n", static_cast<long long>(sweep[i]),
                st * 1e6, dy * 1e6, dy / st, f / dy * 1e-9,
                i < first_run_ms().size() ? first_run_ms()[i] : 0.0);
  }
}

} // namespace

int main(int argc, char** argv) { return run_benchmarks(argc, argv, register_all, print_table); }
