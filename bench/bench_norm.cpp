// SPDX-License-Identifier: Apache-2.0
// bench/bench_norm.cpp: LayerNorm over the last axis, fused, against the alternatives, in one
// run.
//
// y = (x - mean) / sqrt(var + 1e-5) * gamma + beta over rows of 768 and of 4096, 16 Mi
// elements (f32: 64 MiB, bf16: 32 MiB, both far beyond the caches), f32 and bf16 tensors
// (statistics in f32), 1 and 2 threads. The graph is the decomposition exported models carry
// (ReduceSum / n, Subtract, Multiply, ReduceSum / n, Add, Sqrt, Divide, Multiply, Add). It times:
//   jit      the graph as one JIT kernel (row by row: the mean, the variance and the output,
//            the second and third passes over a row reading it from cache)
//   dyn      the same graph with both dimensions dynamic (one kernel for any rows of any
//            length; n, the row length, an input of shape [1]), run with a configuration
//            computed once
//   unfused  one JIT kernel per op, intermediates in memory
//   onednn   oneDNN's layer_normalization_forward (use_scale | use_shift, inference)
//   copy     the bandwidth ceiling of the same traffic (the tensor read once and written once)
// and prints a table of medians: GB/s of useful traffic, % of the copy ceiling measured in the
// same run, the ratios (dynamic / static: the static kernel's time over the dynamic one's), and
// the largest difference between the JIT's and oneDNN's outputs.
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

std::string name_of(const Size& s, int t) {
  return "layernorm/" + std::to_string(s.rows) + "x" + std::to_string(s.cols) + "/" +
         std::string(to_string(s.type)) + "/" + std::to_string(t) + "t/";
}

/// LayerNorm over the last axis as exported models spell it, on `type` tensors; `dyn`: with
/// dynamic dimensions, and n an input of shape [1] (the last) instead of a scalar.
G layer_norm(const Size& s, bool dyn = false) {
  G g;
  const Dim rows = dyn ? dynamic : s.rows, cols = dyn ? dynamic : s.cols;
  ir::Value x = g.parameter(s.type, {rows, cols});
  const auto gamma = g.parameter(f32, {cols}), beta = g.parameter(f32, {cols});
  if (s.type != f32) x = g.convert(x, f32);
  const auto n = dyn ? g.parameter(f32, {1}) : g.scalar(f32, double(s.cols));
  const auto d = g.subtract(x, g.divide(g.reduce_sum(x, {-1}), n));
  const auto var = g.divide(g.reduce_sum(g.multiply(d, d), {-1}), n);
  ir::Value y = g.divide(d, g.sqrt(g.add(var, g.scalar(f32, 1e-5))));
  y = g.add(g.multiply(y, gamma), beta);
  g.result(s.type != f32 ? g.convert(y, s.type) : y);
  return g;
}

/// oneDNN's layer normalization for one thread count (created and run under that count).
struct Onednn {
  dnnl::layer_normalization_forward prim;
  std::unordered_map<int, dnnl::memory> args;
  std::string impl;
};

struct Case {
  Size size;
  std::unique_ptr<Buffer> in, out, ref_out, gamma, beta, n;
  std::optional<CompiledKernel> jit, dyn;
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

void run_onednn(Case& c, int t) {
  static dnnl::stream stream(engine());
  const int saved = omp_get_max_threads();
  omp_set_num_threads(t);
  Onednn& o = c.onednn.at(t);
  o.prim.execute(stream, o.args);
  stream.wait();
  omp_set_num_threads(saved);
}

std::vector<std::shared_ptr<Case>> cases;

void register_all() {
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
      register_benchmark(base + "dyn", [c, t] {
        const void* in[] = {c->in->p, c->gamma->p, c->beta->p, c->n->p};
        void* out[] = {c->out->p};
        c->dyn->run_configured(*c->dyn_config, in, out, {.threads = t});
      });
      register_benchmark(base + "unfused", [c, t] {
        c->unfused->run({c->in->p, c->gamma->p, c->beta->p}, {c->out->p}, t);
      });
      register_benchmark(base + "onednn", [c, t] { run_onednn(*c, t); });
      register_benchmark(base + "copy",
                         [c, t, floats] { copy_streams({c->in->p}, c->out->p, floats, t, false); });
    }
  }
}

/// The largest |jit - oneDNN| over the outputs (both run once more here).
double max_difference(Case& c) {
  const void* in[] = {c.in->p, c.gamma->p, c.beta->p};
  void* out[] = {c.out->p};
  c.jit->run_unchecked(in, out, {.threads = 1});
  run_onednn(c, 1);
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

void print_table(const MedianReporter& rep) {
  std::printf("\n| shape | threads | jit GB/s | unfused GB/s | oneDNN GB/s | copy GB/s | jit %% of "
              "copy | jit / unfused | jit / oneDNN | dynamic / static | max \\|jit - oneDNN\\| "
              "|\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const auto& c : cases)
    for (int t : {1, 2}) {
      const Size& s = c->size;
      const std::string base = name_of(s, t);
      auto sec = [&](const char* v) { return rep.seconds(base + v); };
      if (sec("jit") == 0) continue;
      const double bytes = 2.0 * double(s.rows * s.cols) * double(size_of(s.type));
      auto gbs = [&](const char* v) { return sec(v) > 0 ? bytes / sec(v) * 1e-9 : 0.0; };
      std::printf(
          "| %s | %d | %.1f | %.1f | %.1f | %.1f | %.0f%% | %.2fx | %.2fx | %.2f | %.2g |\n",
          s.label, t, gbs("jit"), gbs("unfused"), gbs("onednn"), gbs("copy"),
          gbs("copy") > 0 ? 100.0 * gbs("jit") / gbs("copy") : 0.0,
          sec("unfused") > 0 ? sec("unfused") / sec("jit") : 0.0,
          sec("onednn") > 0 ? sec("onednn") / sec("jit") : 0.0,
          sec("dyn") > 0 ? sec("jit") / sec("dyn") : 0.0, max_difference(*c));
    }
  if (!cases.empty())
    std::printf("\noneDNN %s: %s\n", "layer_normalization_forward",
                cases[0]->onednn.at(1).impl.c_str());
}

} // namespace

int main(int argc, char** argv) { return run_benchmarks(argc, argv, register_all, print_table); }
