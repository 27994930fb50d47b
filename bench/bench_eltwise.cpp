// bench/bench_eltwise.cpp: fused JIT kernels against the alternatives, in one run.
//
// For each workload, size and thread count it times:
//   jit      the fused kernel from snippets::compile (best ISA of the host)
//   unfused  the same graph one op at a time (one JIT kernel per op, intermediates in memory)
//   loop     a hand-written fused loop, compiled with -O3 -march=native, OpenMP threads
//   copy     the bandwidth ceiling for the same streams (R reads + 1 write), ordinary stores
//   copy_nt  the same with non-temporal (streaming) stores
// and prints a table of medians: GB/s of useful traffic (each tensor read or written once),
// % of the best same-stream ceiling, and the ratios. Usage:
//   ./build/bench/bench_eltwise [--benchmark_repetitions=N] [--benchmark_filter=...]
#include <benchmark/benchmark.h>
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "snippets/snippets.hpp"

namespace {

using namespace snippets;
using G = ir::Graph<x64::Traits>;
constexpr auto f32 = ElementType::f32;

struct Buffer {
  float* p = nullptr;
  std::size_t n = 0;
  explicit Buffer(std::size_t count) : n(count) {
    p = static_cast<float*>(std::aligned_alloc(64, (count * 4 + 63) / 64 * 64 + 64));
#pragma omp parallel for schedule(static) // first touch by the threads that will use it
    for (std::size_t i = 0; i < count; ++i) p[i] = 0.001f * float(i % 1000) - 0.3f;
  }
  ~Buffer() { std::free(p); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
};

using LoopFn = std::function<void(const std::vector<const float*>&, float*, std::size_t, int)>;

struct Workload {
  std::string name;
  std::function<std::vector<Shape>(Dim)> inputs; // input shapes for an n-element output
  std::function<ir::Value(G&, const std::vector<ir::Value>&)> build;
  LoopFn loop; // hand-written fused loop over n output elements with `threads` threads
};

Shape flat(Dim n) { return Shape{n}; }
constexpr Dim channels = 64;

std::vector<Workload> workloads() {
  return {
      {"relu(a*b+c)",
       [](Dim n) {
         return std::vector{flat(n), flat(n), flat(n)};
       },
       [](G& g, const std::vector<ir::Value>& in) {
         return g.relu(g.add(g.multiply(in[0], in[1]), in[2]));
       },
       [](const std::vector<const float*>& in, float* y, std::size_t n, int t) {
         const float *a = in[0], *b = in[1], *c = in[2];
#pragma omp parallel for num_threads(t) schedule(static)
         for (std::size_t i = 0; i < n; ++i) y[i] = std::max(a[i] * b[i] + c[i], 0.0f);
       }},
      {"(a+bias[C,1])*s",
       [](Dim n) {
         return std::vector{Shape{channels, n / channels}, Shape{channels, 1}};
       },
       [](G& g, const std::vector<ir::Value>& in) {
         return g.multiply(g.add(in[0], in[1]), g.scalar(f32, 0.5));
       },
       [](const std::vector<const float*>& in, float* y, std::size_t n, int t) {
         const float *a = in[0], *bias = in[1];
         const std::size_t m = n / channels;
#pragma omp parallel for num_threads(t) schedule(static)
         for (std::size_t r = 0; r < std::size_t(channels); ++r)
           for (std::size_t i = r * m; i < (r + 1) * m; ++i) y[i] = (a[i] + bias[r]) * 0.5f;
       }},
      {"4-op chain", [](Dim n) { return std::vector{flat(n)}; },
       [](G& g, const std::vector<ir::Value>& in) {
         auto t = g.add(g.multiply(in[0], g.scalar(f32, 2.0)), g.scalar(f32, 1.0));
         auto r = g.relu(t);
         return g.multiply(r, r);
       },
       [](const std::vector<const float*>& in, float* y, std::size_t n, int t) {
         const float* x = in[0];
#pragma omp parallel for num_threads(t) schedule(static)
         for (std::size_t i = 0; i < n; ++i) {
           const float r = std::max(x[i] * 2.0f + 1.0f, 0.0f);
           y[i] = r * r;
         }
       }},
  };
}

/// y = sum of `reads` arrays: the bandwidth ceiling for that many read streams and one write.
void copy_streams(const std::vector<const float*>& in, float* y, std::size_t n, int t, bool nt) {
#pragma omp parallel num_threads(t)
  {
    const int id = omp_get_thread_num(), nth = omp_get_num_threads();
    std::size_t lo = n * std::size_t(id) / std::size_t(nth) / 16 * 16;
    std::size_t hi = id + 1 == nth ? n : n * std::size_t(id + 1) / std::size_t(nth) / 16 * 16;
    std::size_t i = lo;
    for (; i + 16 <= hi; i += 16) {
      __m512 v = _mm512_loadu_ps(in[0] + i);
      for (std::size_t k = 1; k < in.size(); ++k) v = _mm512_add_ps(v, _mm512_loadu_ps(in[k] + i));
      if (nt)
        _mm512_stream_ps(y + i, v);
      else
        _mm512_storeu_ps(y + i, v);
    }
    for (; i < hi; ++i) {
      float v = in[0][i];
      for (std::size_t k = 1; k < in.size(); ++k) v += in[k][i];
      y[i] = v;
    }
    if (nt) _mm_sfence();
  }
}

struct Case {
  std::vector<std::unique_ptr<Buffer>> in;
  std::unique_ptr<Buffer> out;
  std::vector<const float*> ptrs;
  std::size_t n = 0;
  double bytes = 0; // useful traffic per run
};

Case make_case(const Workload& w, Dim n) {
  Case c;
  c.n = static_cast<std::size_t>(n);
  for (const Shape& s : w.inputs(n)) {
    c.in.push_back(std::make_unique<Buffer>(static_cast<std::size_t>(s.element_count())));
    c.ptrs.push_back(c.in.back()->p);
    c.bytes += 4.0 * double(s.element_count());
  }
  c.out = std::make_unique<Buffer>(c.n);
  c.bytes += 4.0 * double(n);
  return c;
}

/// The graph as one kernel per op, intermediates in memory.
struct Unfused {
  std::vector<CompiledKernel> kernels;
  std::vector<std::vector<int>> args; // per kernel: buffer ids (inputs..., output)
  std::vector<std::unique_ptr<Buffer>> temps;
};

Unfused make_unfused(const Workload& w, Dim n) {
  G whole;
  std::vector<ir::Value> params;
  for (const Shape& s : w.inputs(n)) params.push_back(whole.parameter(f32, s));
  whole.result(w.build(whole, params));
  Unfused u;
  std::map<ir::NodeId, int> buffer_of; // node -> buffer id (<0: input -(k+1))
  for (std::size_t k = 0; k < params.size(); ++k) buffer_of[params[k].output.node] = -int(k) - 1;
  for (ir::NodeId id : whole.topological_order()) {
    const auto& node = whole.node(id);
    if (ir::is<ir::Parameter>(node.op) || ir::is<ir::Result>(node.op) ||
        ir::is<ir::Scalar>(node.op))
      continue;
    G one;
    std::vector<ir::Value> ins;
    std::vector<int> ids;
    for (const ir::Output& o : node.inputs) {
      const auto& src = whole.node(o.node);
      if (const auto* s = std::get_if<ir::Scalar>(&src.op)) {
        ins.push_back(one.scalar(f32, s->value));
      } else {
        ins.push_back(one.parameter(f32, whole.type(o).shape));
        ids.push_back(buffer_of.at(o.node));
      }
    }
    one.result(one.make(node.op, ins)[0]);
    u.kernels.push_back(compile(one));
    u.temps.push_back(
        std::make_unique<Buffer>(static_cast<std::size_t>(node.outputs[0].shape.element_count())));
    ids.push_back(int(u.temps.size()) - 1);
    buffer_of[id] = ids.back();
    u.args.push_back(ids);
  }
  return u;
}

std::map<std::string, double> g_median_seconds; // filled by the reporter

class TableReporter : public benchmark::ConsoleReporter {
public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs)
      if (r.run_type == Run::RT_Aggregate && r.aggregate_name == "median")
        g_median_seconds[r.run_name.function_name] = r.GetAdjustedRealTime() * 1e-6; // kMicrosecond
  }
};

struct Row {
  std::string workload;
  Dim n;
  int threads;
  double bytes;
};
std::vector<Row> g_rows;

void register_all() {
  static std::vector<Workload> ws = workloads();
  const Dim small = 64 * 1024, large = 16 * 1024 * 1024; // 256 KiB and 64 MiB per tensor
  for (const Workload& w : ws)
    for (Dim n : {small, large})
      for (int t : {1, 2}) {
        const std::string base =
            w.name + "/" + (n == small ? "L2" : "64MiB") + "/" + std::to_string(t) + "t/";
        auto c = std::make_shared<Case>(make_case(w, n));
        g_rows.push_back({w.name, n, t, c->bytes});
        auto kernel = std::make_shared<CompiledKernel>([&] {
          G g;
          std::vector<ir::Value> params;
          for (const Shape& s : w.inputs(n)) params.push_back(g.parameter(f32, s));
          g.result(w.build(g, params));
          return compile(g);
        }());
        auto unfused = std::make_shared<Unfused>(make_unfused(w, n));
        auto reg = [&](const std::string& variant, std::function<void()> fn) {
          benchmark::RegisterBenchmark((base + variant).c_str(),
                                       [fn](benchmark::State& st) {
                                         for (auto _ : st) fn();
                                       })
              ->UseRealTime()
              ->Unit(benchmark::kMicrosecond);
        };
        reg("jit", [c, kernel, t] {
          void* out[] = {c->out->p};
          kernel->run_unchecked(reinterpret_cast<const void* const*>(c->ptrs.data()), out,
                                {.threads = t});
        });
        reg("unfused", [c, unfused, t] {
          for (std::size_t k = 0; k < unfused->kernels.size(); ++k) {
            std::vector<const void*> in;
            const auto& ids = unfused->args[k];
            for (std::size_t a = 0; a + 1 < ids.size(); ++a)
              in.push_back(ids[a] < 0 ? c->ptrs[std::size_t(-ids[a] - 1)]
                                      : unfused->temps[std::size_t(ids[a])]->p);
            void* out[] = {unfused->temps[std::size_t(ids.back())]->p};
            unfused->kernels[k].run_unchecked(in.data(), out, {.threads = t});
          }
        });
        const LoopFn loop = w.loop;
        reg("loop", [c, loop, t] { loop(c->ptrs, c->out->p, c->n, t); });
        // the ceiling streams the full-size inputs only (a bias is tiny and stays in cache)
        auto full = std::make_shared<std::vector<const float*>>();
        for (std::size_t k = 0; k < c->in.size(); ++k)
          if (c->in[k]->n == c->n) full->push_back(c->ptrs[k]);
        reg("copy", [c, full, t] { copy_streams(*full, c->out->p, c->n, t, false); });
        reg("copy_nt", [c, full, t] { copy_streams(*full, c->out->p, c->n, t, true); });
      }
}

void print_table() {
  std::printf(
      "\n| workload | size/tensor | threads | jit GB/s | unfused GB/s | loop GB/s | ceiling GB/s "
      "(store / nt) | jit %% of best ceiling | jit / unfused | jit / loop |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  for (const Row& r : g_rows) {
    const std::string base = r.workload + "/" + (r.n == 64 * 1024 ? "L2" : "64MiB") + "/" +
                             std::to_string(r.threads) + "t/";
    auto t = [&](const char* v) {
      auto it = g_median_seconds.find(base + v);
      return it == g_median_seconds.end() ? 0.0 : it->second;
    };
    if (t("jit") == 0) continue;
    auto gbs = [&](const char* v) { return t(v) > 0 ? r.bytes / t(v) * 1e-9 : 0.0; };
    const double best = std::max(gbs("copy"), gbs("copy_nt"));
    std::printf("| %s | %s | %d | %.1f | %.1f | %.1f | %.1f / %.1f | %.0f%% | %.2fx | %.2fx |\n",
                r.workload.c_str(), r.n == 64 * 1024 ? "256 KiB" : "64 MiB", r.threads, gbs("jit"),
                gbs("unfused"), gbs("loop"), gbs("copy"), gbs("copy_nt"), 100.0 * gbs("jit") / best,
                t("unfused") / t("jit"), t("loop") / t("jit"));
  }
}

} // namespace

int main(int argc, char** argv) {
  std::vector<char*> args(argv, argv + argc);
  std::string reps = "--benchmark_repetitions=5";
  bool has_reps = false;
  for (int i = 1; i < argc; ++i)
    has_reps |= std::string(argv[i]).rfind("--benchmark_repetitions", 0) == 0;
  if (!has_reps) args.push_back(reps.data());
  std::string agg = "--benchmark_report_aggregates_only=true";
  args.push_back(agg.data());
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  std::printf("snippets %d.%d.%d, ISA %s, %d OpenMP threads max\n", version_major, version_minor,
              version_patch, std::string(x64::to_string(x64::best_host_isa())).c_str(),
              omp_get_max_threads());
  register_all();
  TableReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  print_table();
  benchmark::Shutdown();
}
