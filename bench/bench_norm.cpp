// SPDX-License-Identifier: Apache-2.0
// bench/bench_norm.cpp: LayerNorm over the last axis and over the channels, GroupNorm and MVN,
// alternatives, in one run.
//
// y = (x - mean) / sqrt(var + 1e-5) * gamma + beta over rows of 768 and of 4096, 16 Mi
// elements (f32: 64 MiB, bf16: 32 MiB, both far beyond the caches), f32 and bf16 tensors
// (statistics in f32), 1 and 2 threads. The graph is the decomposition exported models carry
// (ReduceSum / n, Subtract, Multiply, ReduceSum / n, Add, Sqrt, Divide, Multiply, Add). It times:
//   jit      the graph as one JIT kernel (row by row: the mean, the variance and the output,
//            the second and third passes over a row reading it from cache)
//   relaxed  the same kernel in the relaxed accuracy tier (CompileOptions::accuracy): the
//            deviation's reciprocal once per row instead of a division per element
//   onnx     the norm as ONNX's LayerNormalization defines it (its function body: the
//            deviation times Reciprocal(StdDev); the importer's form, and oneDNN's), in the
//            standard tier: the reciprocal once per row, correctly rounded, then a product
//   dyn      the same graph with both dimensions dynamic (one kernel for any rows of any
//            length; n, the row length, an input of shape [1]), run with a configuration
//            computed once
//   unfused  one JIT kernel per op, intermediates in memory
//   onednn   oneDNN's layer_normalization_forward (use_scale | use_shift, inference)
//   copy     the bandwidth ceiling of the same traffic (the tensor read once and written once)
// and prints a table of medians: GB/s of useful traffic, % of the copy ceiling measured in the
// same run, the ratios (dynamic / static: the static kernel's time over the dynamic one's), and
// the largest difference between the JIT's and oneDNN's outputs.
// GroupNorm [N=16, G=32, C/G=8, H=64, W=64] f32 (64 MiB), a scale and shift per channel, is
// timed the same way against a hand-written loop (oneDNN 2.6 has no group normalization: it
// came in 3.3): per (n, g) group of 128 KiB, a pass for the sums and one for the output,
// OpenMP over the groups, compiled with the benchmark's flags; "PyTorch form" is the same
// norm written as PyTorch exports it (Reshapes to [N, G, C/G*H*W] and back) run by a Program.
// ONNX MeanVarianceNormalization at its default axes [0, 2, 3], [8, 64, 128, 256] f32 (64 MiB),
// run by a Program (one kernel over the transposed input), against oneDNN's batch
// normalization computing its statistics (the same per-channel mean and variance).
// LayerNorm2d (ConvNeXt: LayerNorm over the channels of NCHW, a scale and shift per channel), f32,
// from a ConvNeXt stage in cache to 64 MiB, run by a Program as one kernel of columns
// (passes/tile_columns.hpp), against the same Program on the backend without its
// column_reductions hook (the norm computed over the transposed input, as before: "transposed")
// and the same norm over channels-last data (rows of C, one kernel: what the layout costs).
// Usage (built when oneDNN is installed, as bench_peers):
//   ./build/bench/bench_norm [--benchmark_repetitions=N] [--benchmark_filter=...]
#include <oneapi/dnnl/dnnl.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "bench_util.hpp"

namespace {

using namespace snippets;
using namespace snippets::bench;

struct Size {
  Dim rows, cols;
  ElementType type;
  const char* label;
};
constexpr Size sizes[] = {{21845, 768, f32, "[21845,768] f32 64 MiB"},
                          {4096, 4096, f32, "[4096,4096] f32 64 MiB"},
                          {21845, 768, ElementType::bf16, "[21845,768] bf16 32 MiB"},
                          {4096, 4096, ElementType::bf16, "[4096,4096] bf16 32 MiB"}};

/// The largest |a[i] - b[i]| over `n` floats.
double max_abs_difference(const float* a, const float* b, std::size_t n) {
  double worst = 0;
  for (std::size_t i = 0; i < n; ++i) worst = std::max(worst, double(std::fabs(a[i] - b[i])));
  return worst;
}

std::string name_of(const Size& s, int t) {
  return "layernorm/" + std::to_string(s.rows) + "x" + std::to_string(s.cols) + "/" +
         std::string(to_string(s.type)) + "/" + std::to_string(t) + "t/";
}

/// LayerNorm over the last axis as exported models spell it, on `type` tensors; `dyn`: with
/// dynamic dimensions, and n an input of shape [1] (the last) instead of a scalar; `onnx`: as
/// ONNX's LayerNormalization defines it, d * (1 / sqrt(var + eps)) instead of d / sqrt(..).
G layer_norm(const Size& s, bool dyn = false, bool onnx = false) {
  G g;
  const Dim rows = dyn ? dynamic : s.rows, cols = dyn ? dynamic : s.cols;
  ir::Value x = g.parameter(s.type, {rows, cols});
  const auto gamma = g.parameter(f32, {cols}), beta = g.parameter(f32, {cols});
  if (s.type != f32) x = g.convert(x, f32);
  const auto n = dyn ? g.parameter(f32, {1}) : g.scalar(f32, double(s.cols));
  const auto d = g.subtract(x, g.divide(g.reduce_sum(x, {-1}), n));
  const auto var = g.divide(g.reduce_sum(g.multiply(d, d), {-1}), n);
  const auto deviation = g.sqrt(g.add(var, g.scalar(f32, 1e-5)));
  ir::Value y =
      onnx ? g.multiply(d, g.divide(g.scalar(f32, 1.0), deviation)) : g.divide(d, deviation);
  y = g.add(g.multiply(y, gamma), beta);
  g.result(s.type != f32 ? g.convert(y, s.type) : y);
  return g;
}

/// A oneDNN primitive for one thread count (created and run under that count).
struct Onednn {
  dnnl::primitive prim;
  std::unordered_map<int, dnnl::memory> args;
  std::string impl;
};

struct Case {
  Size size;
  std::unique_ptr<Buffer> in, out, ref_out, gamma, beta, n;
  std::optional<CompiledKernel> jit, relaxed, onnx, dyn;
  std::optional<RuntimeConfig> dyn_config;
  std::unique_ptr<Unfused> unfused;
  std::unordered_map<int, Onednn> onednn; // by thread count
};

dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

Onednn make_onednn(Case& c, int t) {
  using tag = dnnl::memory::format_tag;
  const auto dt = c.size.type == f32 ? dnnl::memory::data_type::f32 : dnnl::memory::data_type::bf16;
  const dnnl::memory::desc md({c.size.rows, c.size.cols}, dt, tag::ab);
  const dnnl::memory::desc sd({c.size.cols}, dnnl::memory::data_type::f32, tag::a);
  const int saved = omp_get_max_threads();
  omp_set_num_threads(t);
  const dnnl::layer_normalization_forward::desc d(dnnl::prop_kind::forward_inference, md, 1e-5f,
                                                  dnnl::normalization_flags::use_scale |
                                                      dnnl::normalization_flags::use_shift);
  const dnnl::layer_normalization_forward::primitive_desc pd(d, engine());
  Onednn o{dnnl::layer_normalization_forward(pd),
           {{DNNL_ARG_SRC, dnnl::memory(md, engine(), c.in->p)},
            {DNNL_ARG_DST, dnnl::memory(md, engine(), c.ref_out->p)},
            {DNNL_ARG_SCALE, dnnl::memory(sd, engine(), c.gamma->p)},
            {DNNL_ARG_SHIFT, dnnl::memory(sd, engine(), c.beta->p)}},
           pd.impl_info_str()};
  // the statistics the primitive writes even for inference, when it asks for them
  if (pd.mean_desc().get_size() != 0) {
    o.args.emplace(DNNL_ARG_MEAN, dnnl::memory(pd.mean_desc(), engine()));
    o.args.emplace(DNNL_ARG_VARIANCE, dnnl::memory(pd.variance_desc(), engine()));
  }
  omp_set_num_threads(saved);
  return o;
}

void run_onednn(Onednn& o, int t) {
  static dnnl::stream stream(engine());
  const int saved = omp_get_max_threads();
  omp_set_num_threads(t);
  o.prim.execute(stream, o.args);
  stream.wait();
  omp_set_num_threads(saved);
}

std::vector<std::shared_ptr<Case>> cases;

// ---- GroupNorm ----

constexpr Dim gn_n = 16, gn_groups = 32, gn_per_group = 8, gn_hw = 64 * 64;
constexpr std::size_t gn_elements = std::size_t(gn_n * gn_groups * gn_per_group * gn_hw);

/// GroupNorm over [N, G, C/G, H, W]: the statistics over the last three axes, a scale and a
/// shift per channel ([G, C/G, 1, 1]).
G group_norm() {
  G g;
  const auto x = g.parameter(f32, {gn_n, gn_groups, gn_per_group, 64, 64});
  const auto scale = g.parameter(f32, {gn_groups, gn_per_group, 1, 1});
  const auto shift = g.parameter(f32, {gn_groups, gn_per_group, 1, 1});
  const std::vector<std::int64_t> axes{2, 3, 4};
  const auto n = g.scalar(f32, double(gn_per_group * gn_hw));
  const auto d = g.subtract(x, g.divide(g.reduce_sum(x, axes), n));
  const auto var = g.divide(g.reduce_sum(g.multiply(d, d), axes), n);
  const auto y = g.divide(d, g.sqrt(g.add(var, g.scalar(f32, 1e-5))));
  g.result(g.add(g.multiply(y, scale), shift));
  return g;
}

/// The same GroupNorm as PyTorch exports it: x [N, C, H, W] reshaped to [N, G, C/G*H*W], the
/// statistics over the last axis, reshaped back, a scale and shift per channel ([C, 1, 1]).
/// A Program runs it as one kernel between two views (passes/split_merged_axes.hpp).
G group_norm_pytorch() {
  G g;
  constexpr Dim channels = gn_groups * gn_per_group;
  const auto x = g.parameter(f32, {gn_n, channels, 64, 64});
  const auto scale = g.parameter(f32, {channels, 1, 1});
  const auto shift = g.parameter(f32, {channels, 1, 1});
  const auto rows = g.reshape(x, {gn_n, gn_groups, -1});
  const auto n = g.scalar(f32, double(gn_per_group * gn_hw));
  const auto d = g.subtract(rows, g.divide(g.reduce_sum(rows, {-1}), n));
  const auto var = g.divide(g.reduce_sum(g.multiply(d, d), {-1}), n);
  const auto y = g.divide(d, g.sqrt(g.add(var, g.scalar(f32, 1e-5))));
  const auto back = g.reshape(y, {gn_n, channels, 64, 64});
  g.result(g.add(g.multiply(back, scale), shift));
  return g;
}

/// The hand-written peer: per group, the mean, the variance of the deviations (as the graph),
/// then the output with one reciprocal of the deviation per group.
void group_norm_loop(const float* x, const float* scale, const float* shift, float* y, int t) {
  constexpr std::size_t group = std::size_t(gn_per_group * gn_hw);
#pragma omp parallel for num_threads(t) schedule(static)
  for (std::int64_t ng = 0; ng < gn_n * gn_groups; ++ng) {
    const float* in = x + std::size_t(ng) * group;
    float* out = y + std::size_t(ng) * group;
    float sum = 0;
#pragma omp simd reduction(+ : sum)
    for (std::size_t i = 0; i < group; ++i) sum += in[i];
    const float mean = sum / float(group);
    float sq = 0;
#pragma omp simd reduction(+ : sq)
    for (std::size_t i = 0; i < group; ++i) sq += (in[i] - mean) * (in[i] - mean);
    const float inv = 1.0f / std::sqrt(sq / float(group) + 1e-5f);
    const std::size_t c0 = std::size_t(ng % gn_groups) * std::size_t(gn_per_group);
    for (std::size_t c = 0; c < std::size_t(gn_per_group); ++c) {
      const float a = inv * scale[c0 + c], b = shift[c0 + c] - mean * a;
      const float* ic = in + c * std::size_t(gn_hw);
      float* oc = out + c * std::size_t(gn_hw);
#pragma omp simd
      for (std::size_t i = 0; i < std::size_t(gn_hw); ++i) oc[i] = ic[i] * a + b;
    }
  }
}

struct GroupNormCase {
  std::unique_ptr<Buffer> in, out, ref_out, scale, shift;
  std::optional<CompiledKernel> jit;
  std::unique_ptr<Unfused> unfused;
  std::optional<Program<>> pytorch;
  std::optional<ExecutionContext> context;
};
std::shared_ptr<GroupNormCase> gn;

std::string gn_name(int t) { return "groupnorm/" + std::to_string(t) + "t/"; }

void register_group_norm() {
  gn = std::make_shared<GroupNormCase>();
  const auto channels = static_cast<std::size_t>(gn_groups * gn_per_group);
  gn->in = std::make_unique<Buffer>(gn_elements, -3.0f, 5.0f);
  gn->out = std::make_unique<Buffer>(gn_elements);
  gn->ref_out = std::make_unique<Buffer>(gn_elements);
  gn->scale = std::make_unique<Buffer>(channels, 0.5f, 1.5f);
  gn->shift = std::make_unique<Buffer>(channels, -0.25f, 0.25f);
  const G g = group_norm();
  gn->jit.emplace(compile(g));
  gn->unfused = std::make_unique<Unfused>(g);
  gn->pytorch.emplace(group_norm_pytorch());
  gn->context.emplace(gn->pytorch->make_context());
  for (int t : {1, 2}) {
    auto c = gn;
    register_benchmark(gn_name(t) + "pytorch", [c, t] {
      const Shape channel{gn_groups * gn_per_group, 1, 1};
      const ConstTensorView in[] = {{f32, Shape{gn_n, gn_groups * gn_per_group, 64, 64}, c->in->p},
                                    {f32, channel, c->scale->p},
                                    {f32, channel, c->shift->p}};
      const TensorView out[] = {{f32, Shape{gn_n, gn_groups * gn_per_group, 64, 64}, c->out->p}};
      c->pytorch->run(*c->context, in, out, {.threads = t});
    });
    register_benchmark(gn_name(t) + "jit", [c, t] {
      const void* in[] = {c->in->p, c->scale->p, c->shift->p};
      void* out[] = {c->out->p};
      c->jit->run_unchecked(in, out, {.threads = t});
    });
    register_benchmark(gn_name(t) + "unfused", [c, t] {
      c->unfused->run({c->in->p, c->scale->p, c->shift->p}, {c->out->p}, t);
    });
    register_benchmark(gn_name(t) + "loop", [c, t] {
      group_norm_loop(c->in->p, c->scale->p, c->shift->p, c->ref_out->p, t);
    });
    register_benchmark(gn_name(t) + "copy",
                       [c, t] { copy_streams({c->in->p}, c->out->p, gn_elements, t, false); });
  }
}

void print_group_norm(const MedianReporter& rep) {
  if (!gn || rep.seconds(gn_name(1) + "jit") == 0) return;
  const void* in[] = {gn->in->p, gn->scale->p, gn->shift->p};
  void* out[] = {gn->out->p};
  gn->jit->run_unchecked(in, out, {.threads = 1});
  group_norm_loop(gn->in->p, gn->scale->p, gn->shift->p, gn->ref_out->p, 1);
  const double worst = max_abs_difference(gn->out->p, gn->ref_out->p, gn_elements);
  std::printf(
      "\n| GroupNorm [16,32,8,64,64] f32 64 MiB | jit GB/s | PyTorch form GB/s | unfused GB/s | "
      "loop GB/s | copy GB/s | jit %% of copy | jit / unfused | jit / loop | "
      "max \\|jit - loop\\| |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  for (int t : {1, 2}) {
    auto sec = [&](const char* v) { return rep.seconds(gn_name(t) + v); };
    const double bytes = 2.0 * double(gn_elements) * 4;
    auto gbs = [&](const char* v) { return sec(v) > 0 ? bytes / sec(v) * 1e-9 : 0.0; };
    std::printf(
        "| %d thread(s) | %.1f | %.1f | %.1f | %.1f | %.1f | %.0f%% | %.2fx | %.2fx | %.2g |\n", t,
        gbs("jit"), gbs("pytorch"), gbs("unfused"), gbs("loop"), gbs("copy"),
        gbs("copy") > 0 ? 100.0 * gbs("jit") / gbs("copy") : 0.0, sec("unfused") / sec("jit"),
        sec("loop") / sec("jit"), worst);
  }
}

// ---- MeanVarianceNormalization ----

constexpr Dim mvn_n = 8, mvn_c = 64, mvn_h = 128, mvn_w = 256;
constexpr std::size_t mvn_elements = std::size_t(mvn_n * mvn_c * mvn_h * mvn_w);

/// ONNX MeanVarianceNormalization at its default axes [0, 2, 3] of NCHW, as the importer writes
/// it: (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9). A Program computes the statistics and the
/// output in one kernel over the transposed input (passes/move_reduced_axes_last.hpp).
G mean_variance_normalization() {
  G g;
  const auto x = g.parameter(f32, {mvn_n, mvn_c, mvn_h, mvn_w});
  const std::vector<std::int64_t> axes{0, 2, 3};
  const auto mean = g.reduce_mean(x, axes, true);
  const auto var = g.subtract(g.reduce_mean(g.multiply(x, x), axes, true), g.multiply(mean, mean));
  g.result(g.divide(g.subtract(x, mean), g.add(g.sqrt(var), g.scalar(f32, 1e-9))));
  return g;
}

struct MvnCase {
  std::unique_ptr<Buffer> in, out, ref_out;
  std::optional<Program<>> program;
  std::optional<ExecutionContext> context;
  std::unordered_map<int, Onednn> onednn; // batch normalization, statistics computed
};
std::shared_ptr<MvnCase> mvn;

std::string mvn_name(int t) { return "mvn/" + std::to_string(t) + "t/"; }

/// oneDNN's batch normalization computing its statistics (forward_training: the mean and the
/// variance over N, H and W of each channel, written beside the output), no scale or shift:
/// the same traffic and the same result but for where the 1e-9 goes (inside the square root).
Onednn make_onednn_mvn(MvnCase& c, int t) {
  using tag = dnnl::memory::format_tag;
  const dnnl::memory::desc md({mvn_n, mvn_c, mvn_h, mvn_w}, dnnl::memory::data_type::f32,
                              tag::abcd);
  const int saved = omp_get_max_threads();
  omp_set_num_threads(t);
  const dnnl::batch_normalization_forward::desc d(dnnl::prop_kind::forward_training, md, 1e-9f,
                                                  dnnl::normalization_flags::none);
  const dnnl::batch_normalization_forward::primitive_desc pd(d, engine());
  Onednn o{dnnl::batch_normalization_forward(pd),
           {{DNNL_ARG_SRC, dnnl::memory(md, engine(), c.in->p)},
            {DNNL_ARG_DST, dnnl::memory(md, engine(), c.ref_out->p)},
            {DNNL_ARG_MEAN, dnnl::memory(pd.mean_desc(), engine())},
            {DNNL_ARG_VARIANCE, dnnl::memory(pd.variance_desc(), engine())}},
           pd.impl_info_str()};
  omp_set_num_threads(saved);
  return o;
}

void register_mvn() {
  mvn = std::make_shared<MvnCase>();
  mvn->in = std::make_unique<Buffer>(mvn_elements, -3.0f, 5.0f);
  mvn->out = std::make_unique<Buffer>(mvn_elements);
  mvn->ref_out = std::make_unique<Buffer>(mvn_elements);
  mvn->program.emplace(mean_variance_normalization());
  mvn->context.emplace(mvn->program->make_context());
  for (int t : {1, 2}) {
    auto c = mvn;
    c->onednn.emplace(t, make_onednn_mvn(*c, t));
    register_benchmark(mvn_name(t) + "program", [c, t] {
      const Shape s{mvn_n, mvn_c, mvn_h, mvn_w};
      const ConstTensorView in[] = {{f32, s, c->in->p}};
      const TensorView out[] = {{f32, s, c->out->p}};
      c->program->run(*c->context, in, out, {.threads = t});
    });
    register_benchmark(mvn_name(t) + "onednn", [c, t] { run_onednn(c->onednn.at(t), t); });
    register_benchmark(mvn_name(t) + "copy",
                       [c, t] { copy_streams({c->in->p}, c->out->p, mvn_elements, t, false); });
  }
}

void print_mvn(const MedianReporter& rep) {
  if (!mvn || rep.seconds(mvn_name(1) + "program") == 0) return;
  const Shape s{mvn_n, mvn_c, mvn_h, mvn_w};
  const ConstTensorView in[] = {{f32, s, mvn->in->p}};
  const TensorView out[] = {{f32, s, mvn->out->p}}; // the copy ceiling wrote over it
  mvn->program->run(*mvn->context, in, out, {.threads = 1});
  run_onednn(mvn->onednn.at(1), 1);
  const double worst = max_abs_difference(mvn->out->p, mvn->ref_out->p, mvn_elements);
  std::printf("\n| MVN [8,64,128,256] f32 64 MiB, axes [0,2,3] | Program GB/s | oneDNN GB/s | "
              "copy GB/s | Program %% of copy | Program / oneDNN | max \\|Program - oneDNN\\| "
              "|\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (int t : {1, 2}) {
    auto sec = [&](const char* v) { return rep.seconds(mvn_name(t) + v); };
    const double bytes = 2.0 * double(mvn_elements) * 4;
    auto gbs = [&](const char* v) { return sec(v) > 0 ? bytes / sec(v) * 1e-9 : 0.0; };
    std::printf("| %d thread(s) | %.1f | %.1f | %.1f | %.0f%% | %.2fx | %.2g |\n", t,
                gbs("program"), gbs("onednn"), gbs("copy"),
                gbs("copy") > 0 ? 100.0 * gbs("program") / gbs("copy") : 0.0,
                sec("onednn") > 0 ? sec("onednn") / sec("program") : 0.0, worst);
  }
  std::printf("oneDNN batch_normalization_forward: %s; the Program's steps: %zu\n",
              mvn->onednn.at(1).impl.c_str(), mvn->program->steps().size());
}

// LayerNorm over the channels of NCHW (ConvNeXt's LayerNorm2d): the statistics over C of each
// pixel, a scale and shift per channel.
struct ChannelShape {
  Dim n, c, h, w;
  const char* label;
};
constexpr ChannelShape channel_shapes[] = {{1, 96, 56, 56, "[1,96,56,56] 1.1 MiB"},
                                           {1, 768, 7, 7, "[1,768,7,7] 147 KiB"},
                                           {16, 96, 56, 56, "[16,96,56,56] 18 MiB"},
                                           {8, 64, 128, 256, "[8,64,128,256] 64 MiB"}};

/// Runs on the x86-64 backend without the column_reductions hook: a Program then computes the
/// norm over the transposed input (passes/move_reduced_axes_last.hpp), as before it had it.
struct NoColumns : x64::Traits {
  static constexpr bool column_reductions = false;
};

template <class T> ir::Graph<T> channel_layer_norm(const ChannelShape& s) {
  ir::Graph<T> g;
  const auto x = g.parameter(f32, {s.n, s.c, s.h, s.w});
  const auto gamma = g.parameter(f32, {s.c, 1, 1}), beta = g.parameter(f32, {s.c, 1, 1});
  const auto n = g.scalar(f32, double(s.c));
  const auto d = g.subtract(x, g.divide(g.reduce_sum(x, {1}, true), n));
  const auto var = g.divide(g.reduce_sum(g.multiply(d, d), {1}, true), n);
  const auto y = g.divide(d, g.sqrt(g.add(var, g.scalar(f32, 1e-5))));
  g.result(g.add(g.multiply(y, gamma), beta));
  return g;
}

struct ChannelCase {
  ChannelShape shape;
  std::unique_ptr<Buffer> in, out, ref_out, gamma, beta;
  std::optional<Program<>> columns;
  std::optional<Program<NoColumns>> transposed;
  std::optional<ExecutionContext> columns_context, transposed_context;
  std::optional<CompiledKernel> rows; // the same norm on channels-last data
};
std::vector<std::shared_ptr<ChannelCase>> channel_cases;

std::string channel_name(const ChannelShape& s, int t) {
  return "layernorm2d/" + std::to_string(s.n) + "x" + std::to_string(s.c) + "x" +
         std::to_string(s.h) + "x" + std::to_string(s.w) + "/" + std::to_string(t) + "t/";
}

void register_channel_norms() {
  for (const ChannelShape& s : channel_shapes) {
    auto c = std::make_shared<ChannelCase>();
    c->shape = s;
    const auto elements = static_cast<std::size_t>(s.n * s.c * s.h * s.w);
    c->in = std::make_unique<Buffer>(elements, -3.0f, 5.0f);
    c->out = std::make_unique<Buffer>(elements);
    c->ref_out = std::make_unique<Buffer>(elements);
    c->gamma = std::make_unique<Buffer>(static_cast<std::size_t>(s.c), 0.5f, 1.5f);
    c->beta = std::make_unique<Buffer>(static_cast<std::size_t>(s.c), -0.25f, 0.25f);
    c->columns.emplace(channel_layer_norm<x64::Traits>(s));
    c->columns_context.emplace(c->columns->make_context());
    c->transposed.emplace(channel_layer_norm<NoColumns>(s));
    c->transposed_context.emplace(c->transposed->make_context());
    c->rows.emplace(compile(layer_norm({s.n * s.h * s.w, s.c, f32, ""})));
    channel_cases.push_back(c);
    const Shape x{s.n, s.c, s.h, s.w}, per_channel{s.c, 1, 1};
    for (int t : {1, 2}) {
      const std::string base = channel_name(s, t);
      auto program = [c, t, x, per_channel](auto& p, ExecutionContext& ctx, float* y) {
        const ConstTensorView in[] = {
            {f32, x, c->in->p}, {f32, per_channel, c->gamma->p}, {f32, per_channel, c->beta->p}};
        const TensorView out[] = {{f32, x, y}};
        p.run(ctx, in, out, {.threads = t});
      };
      register_benchmark(base + "columns",
                         [c, t, program] { program(*c->columns, *c->columns_context, c->out->p); });
      register_benchmark(base + "transposed", [c, t, program] {
        program(*c->transposed, *c->transposed_context, c->ref_out->p);
      });
      register_benchmark(base + "rows", [c, t] {
        const void* in[] = {c->in->p, c->gamma->p, c->beta->p};
        void* out[] = {c->out->p};
        c->rows->run_unchecked(in, out, {.threads = t});
      });
      register_benchmark(base + "copy", [c, t, elements] {
        copy_streams({c->in->p}, c->out->p, elements, t, false);
      });
    }
  }
}

void print_channel_norms(const MedianReporter& rep) {
  if (channel_cases.empty()) return;
  std::printf("\n| LayerNorm2d f32 | threads | columns GB/s | transposed GB/s | channels-last "
              "rows GB/s | copy GB/s | columns %% of copy | columns / transposed | columns / "
              "rows | max \\|columns - transposed\\| |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  for (const auto& c : channel_cases) {
    const ChannelShape& s = c->shape;
    const auto elements = static_cast<std::size_t>(s.n * s.c * s.h * s.w);
    for (int t : {1, 2}) {
      const std::string base = channel_name(s, t);
      auto sec = [&](const char* v) { return rep.seconds(base + v); };
      if (sec("columns") == 0) continue;
      const double bytes = 2.0 * double(elements) * 4;
      auto gbs = [&](const char* v) { return sec(v) > 0 ? bytes / sec(v) * 1e-9 : 0.0; };
      const Shape x{s.n, s.c, s.h, s.w}, per_channel{s.c, 1, 1};
      const ConstTensorView in[] = {
          {f32, x, c->in->p}, {f32, per_channel, c->gamma->p}, {f32, per_channel, c->beta->p}};
      const TensorView out[] = {{f32, x, c->out->p}}, ref[] = {{f32, x, c->ref_out->p}};
      c->columns->run(*c->columns_context, in, out, {.threads = 1});
      c->transposed->run(*c->transposed_context, in, ref, {.threads = 1});
      std::printf("| %s | %d | %.1f | %.1f | %.1f | %.1f | %.0f%% | %.2fx | %.2fx | %.2g |\n",
                  s.label, t, gbs("columns"), gbs("transposed"), gbs("rows"), gbs("copy"),
                  gbs("copy") > 0 ? 100.0 * gbs("columns") / gbs("copy") : 0.0,
                  sec("transposed") / sec("columns"), sec("rows") / sec("columns"),
                  max_abs_difference(c->out->p, c->ref_out->p, elements));
    }
  }
}

void register_all() {
  register_group_norm();
  register_mvn();
  register_channel_norms();
  for (const Size& s : sizes) {
    const auto n = static_cast<std::size_t>(s.rows * s.cols);
    auto c = std::make_shared<Case>();
    c->size = s;
    // bf16 tensors take half the floats' bytes: the buffers are sized in floats and hold the
    // bf16 values of a ramp (the top halves of its f32 values)
    const std::size_t floats = s.type == f32 ? n : n / 2;
    c->in = std::make_unique<Buffer>(floats, -3.0f, 5.0f);
    if (s.type != f32) {
      const Buffer ramp(n, -3.0f, 5.0f);
      auto* h = reinterpret_cast<std::uint16_t*>(c->in->p);
      for (std::size_t i = 0; i < n; ++i) {
        std::uint32_t bits;
        std::memcpy(&bits, ramp.p + i, 4);
        h[i] = static_cast<std::uint16_t>(bits >> 16);
      }
    }
    c->out = std::make_unique<Buffer>(floats);
    c->ref_out = std::make_unique<Buffer>(floats);
    c->gamma = std::make_unique<Buffer>(static_cast<std::size_t>(s.cols), 0.5f, 1.5f);
    c->beta = std::make_unique<Buffer>(static_cast<std::size_t>(s.cols), -0.25f, 0.25f);
    const G g = layer_norm(s);
    c->jit.emplace(compile(g));
    c->relaxed.emplace(compile(g, {.accuracy = Accuracy::relaxed}));
    c->onnx.emplace(compile(layer_norm(s, false, true)));
    c->n = std::make_unique<Buffer>(1, float(s.cols), float(s.cols));
    c->dyn.emplace(compile(layer_norm(s, true)));
    c->dyn_config.emplace(c->dyn->configure(
        std::vector<Shape>{Shape{s.rows, s.cols}, Shape{s.cols}, Shape{s.cols}, Shape{1}}));
    c->unfused = std::make_unique<Unfused>(g);
    for (int t : {1, 2}) c->onednn.emplace(t, make_onednn(*c, t));
    cases.push_back(c);
    for (int t : {1, 2}) {
      const std::string base = name_of(s, t);
      register_benchmark(base + "jit", [c, t] {
        const void* in[] = {c->in->p, c->gamma->p, c->beta->p};
        void* out[] = {c->out->p};
        c->jit->run_unchecked(in, out, {.threads = t});
      });
      register_benchmark(base + "relaxed", [c, t] {
        const void* in[] = {c->in->p, c->gamma->p, c->beta->p};
        void* out[] = {c->out->p};
        c->relaxed->run_unchecked(in, out, {.threads = t});
      });
      register_benchmark(base + "onnx", [c, t] {
        const void* in[] = {c->in->p, c->gamma->p, c->beta->p};
        void* out[] = {c->out->p};
        c->onnx->run_unchecked(in, out, {.threads = t});
      });
      register_benchmark(base + "dyn", [c, t] {
        const void* in[] = {c->in->p, c->gamma->p, c->beta->p, c->n->p};
        void* out[] = {c->out->p};
        c->dyn->run_configured(*c->dyn_config, in, out, {.threads = t});
      });
      register_benchmark(base + "unfused", [c, t] {
        c->unfused->run({c->in->p, c->gamma->p, c->beta->p}, {c->out->p}, t);
      });
      register_benchmark(base + "onednn", [c, t] { run_onednn(c->onednn.at(t), t); });
      register_benchmark(base + "copy",
                         [c, t, floats] { copy_streams({c->in->p}, c->out->p, floats, t, false); });
    }
  }
}

/// The largest |c.out - c.ref_out| over the elements of c's type.
double max_output_difference(const Case& c) {
  const std::size_t n = static_cast<std::size_t>(c.size.rows * c.size.cols);
  double worst = 0;
  for (std::size_t i = 0; i < n; ++i) {
    float a, b;
    if (c.size.type == f32) {
      a = c.out->p[i], b = c.ref_out->p[i];
    } else {
      std::uint32_t x = std::uint32_t(reinterpret_cast<std::uint16_t*>(c.out->p)[i]) << 16,
                    y = std::uint32_t(reinterpret_cast<std::uint16_t*>(c.ref_out->p)[i]) << 16;
      std::memcpy(&a, &x, 4);
      std::memcpy(&b, &y, 4);
    }
    worst = std::max(worst, double(std::fabs(a - b)));
  }
  return worst;
}

/// The largest |jit - oneDNN| over the outputs of the jit and ONNX-form kernels (all run once
/// more here).
double max_difference(Case& c) {
  run_onednn(c.onednn.at(1), 1);
  double worst = 0;
  for (const CompiledKernel* k : {&*c.jit, &*c.onnx}) {
    const void* in[] = {c.in->p, c.gamma->p, c.beta->p};
    void* out[] = {c.out->p};
    k->run_unchecked(in, out, {.threads = 1});
    worst = std::max(worst, max_output_difference(c));
  }
  return worst;
}

void print_table(const MedianReporter& rep) {
  print_group_norm(rep);
  print_mvn(rep);
  print_channel_norms(rep);
  std::printf("\n| shape | threads | jit GB/s | relaxed GB/s | ONNX form GB/s | unfused GB/s | "
              "oneDNN GB/s | copy GB/s | jit %% of copy | jit / unfused | jit / oneDNN | relaxed / "
              "oneDNN | ONNX form / oneDNN | dynamic / static | max \\|jit - oneDNN\\| |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const auto& c : cases)
    for (int t : {1, 2}) {
      const Size& s = c->size;
      const std::string base = name_of(s, t);
      auto sec = [&](const char* v) { return rep.seconds(base + v); };
      if (sec("jit") == 0) continue;
      const double bytes = 2.0 * double(s.rows * s.cols) * double(size_of(s.type));
      auto gbs = [&](const char* v) { return sec(v) > 0 ? bytes / sec(v) * 1e-9 : 0.0; };
      auto over_onednn = [&](const char* v) {
        return sec("onednn") > 0 && sec(v) > 0 ? sec("onednn") / sec(v) : 0.0;
      };
      std::printf(
          "| %s | %d | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.0f%% | %.2fx | %.2fx | %.2fx | "
          "%.2fx | %.2f | %.2g |\n",
          s.label, t, gbs("jit"), gbs("relaxed"), gbs("onnx"), gbs("unfused"), gbs("onednn"),
          gbs("copy"), gbs("copy") > 0 ? 100.0 * gbs("jit") / gbs("copy") : 0.0,
          sec("unfused") > 0 ? sec("unfused") / sec("jit") : 0.0,
          sec("onednn") > 0 ? sec("onednn") / sec("jit") : 0.0, over_onednn("relaxed"),
          over_onednn("onnx"), sec("dyn") > 0 ? sec("jit") / sec("dyn") : 0.0, max_difference(*c));
    }
  if (!cases.empty())
    std::printf("\noneDNN %s: %s\n", "layer_normalization_forward",
                cases[0]->onednn.at(1).impl.c_str());
}

} // namespace

int main(int argc, char** argv) { return run_benchmarks(argc, argv, register_all, print_table); }
