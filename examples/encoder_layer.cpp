// SPDX-License-Identifier: Apache-2.0
// The main demo: one transformer encoder layer (BERT-mini's shape) as a whole model.
//
//   q, k, v = x Wq + bq, x Wk + bk, x Wv + bv      x [512 tokens, 256], each split into 4 heads
//   a  = softmax(q k^T / sqrt(64)) v               per head, then the heads joined again
//   x1 = norm(a Wo + bo + x)                       output projection, residual, LayerNorm
//   y  = norm(gelu(x1 W1 + b1) W2 + b2 + x1)       the MLP (hidden 1024), residual, LayerNorm
//
// norm is LayerNorm over the width as exported models spell it (mean, variance of the
// deviations, (x - mean) / sqrt(var + 1e-12) * gamma + beta): the tokenizer makes each one
// kernel that reads its row once.
// The weights are Constants, packed when the kernels are compiled. The model is tokenized and
// compiled (the steps of the Program and the fusion statistics are printed), run, checked
// against the double-precision reference interpreter, and timed against the same model run
// one kernel per op (unfused), whole and part by part.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "snippets/snippets.hpp"

namespace {
using namespace snippets;
using G = ir::Graph<x64::Traits>;
constexpr auto f32 = ElementType::f32;
constexpr Dim tokens = 512, width = 256, heads = 4, head_size = width / heads, hidden = 4 * width;
constexpr int runs = 11; // timed runs per figure; the median is printed

std::vector<double> random_values(Dim n, unsigned seed, double scale) {
  std::vector<double> v(static_cast<std::size_t>(n));
  for (auto& e : v) {
    seed = seed * 1664525u + 1013904223u;
    e = scale * (double(seed >> 8) / double(1u << 24) - 0.5);
  }
  return v;
}

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

/// The layer. Every op is named "part.op" so that the steps and the timing can say which part
/// of the layer a kernel computes.
G encoder_layer() {
  G g;
  unsigned seed = 100;
  auto op = [&](ir::Op<x64::Traits> tag, std::initializer_list<ir::Value> in, std::string name) {
    return g.make(std::move(tag), in, std::move(name))[0];
  };
  // weights scaled by 1/sqrt(fan-in), as initialised for training: values stay O(1)
  auto linear = [&](ir::Value in, Dim n, const std::string& part) {
    const Dim k = g.type(in.output).shape[1];
    const auto w = g.constant(f32, {k, n}, random_values(k * n, ++seed, 2 / std::sqrt(k)));
    const auto b = g.constant(f32, {n}, random_values(n, ++seed, 0.2));
    return op(ir::Add{}, {op(ir::MatMul{}, {in, w}, part + ".matmul"), b}, part + ".bias");
  };
  auto layer_norm = [&](ir::Value in, const std::string& which) {
    const std::string part = "norm." + which;
    const auto n = g.scalar(f32, double(width));
    auto mean_of = [&](ir::Value v, const std::string& what) {
      return op(ir::Divide{}, {op(ir::ReduceSum{{-1}, true}, {v}, part + "." + what + "_sum"), n},
                part + "." + what);
    };
    const auto d = op(ir::Subtract{}, {in, mean_of(in, "mean")}, part + ".center");
    const auto var = mean_of(op(ir::Multiply{}, {d, d}, part + ".square"), "variance");
    const auto inv =
        op(ir::Divide{},
           {g.scalar(f32, 1.0),
            op(ir::Sqrt{}, {op(ir::Add{}, {var, g.scalar(f32, 1e-12)}, part + ".epsilon")},
               part + ".std")},
           part + ".inv_std");
    std::vector<double> gamma_values = random_values(width, ++seed, 0.4);
    for (double& v : gamma_values) v += 1.0; // scales around 1, as trained ones are
    const auto gamma = g.constant(f32, {width}, gamma_values);
    const auto beta = g.constant(f32, {width}, random_values(width, ++seed, 0.2));
    const auto scaled =
        op(ir::Multiply{}, {op(ir::Multiply{}, {d, inv}, part + ".normalize"), gamma},
           part + ".scale");
    return op(ir::Add{}, {scaled, beta}, part + ".shift");
  };
  const auto x = g.parameter(f32, {tokens, width}, "x");
  // [tokens, width] -> [tokens, heads, head_size]: the attention reads it through a Transpose
  auto split = [&](const std::string& part) {
    return op(ir::Reshape{{tokens, heads, head_size}}, {linear(x, width, part)}, part + ".heads");
  };
  const auto q = op(ir::Transpose{{1, 0, 2}}, {split("q")}, "attention.q");
  const auto k = op(ir::Transpose{{1, 2, 0}}, {split("k")}, "attention.k_t");
  const auto v = op(ir::Transpose{{1, 0, 2}}, {split("v")}, "attention.v");
  const auto scores = op(ir::Multiply{},
                         {op(ir::MatMul{}, {q, k}, "attention.scores"),
                          g.scalar(f32, 1 / std::sqrt(double(head_size)))},
                         "attention.scale");
  const auto p = op(ir::Softmax{-1}, {scores}, "attention.softmax");
  const auto a = op(ir::Transpose{{1, 0, 2}}, {op(ir::MatMul{}, {p, v}, "attention.context")},
                    "attention.out");
  const auto joined = op(ir::Reshape{{tokens, width}}, {a}, "attention.join");
  const auto x1 =
      layer_norm(op(ir::Add{}, {linear(joined, width, "output"), x}, "output.residual"), "1");
  const auto h = op(ir::Gelu{}, {linear(x1, hidden, "mlp.fc1")}, "mlp.gelu");
  g.result(layer_norm(op(ir::Add{}, {linear(h, width, "mlp.fc2"), x1}, "mlp.residual"), "2"), "y");
  return g;
}

std::string part_of(const std::string& op_name) {
  const std::string part = op_name.substr(0, op_name.find('.'));
  return part == "q" || part == "k" || part == "v" ? "qkv" : part;
}

int count_subgraphs(const G& tokenized) {
  int n = 0;
  for (ir::NodeId id = 0; id < tokenized.size(); ++id)
    n += std::holds_alternative<ir::Subgraph<x64::Traits>>(tokenized.node(id).op);
  return n;
}

/// Tokenizes and compiles `model`, printing the progress.
Program<> compile_program(const G& model, bool fuse) {
  const auto start = std::chrono::steady_clock::now();
  const G tokenized = passes::tokenize(model, {.fuse = fuse});
  std::cout << "compiling " << count_subgraphs(tokenized) << " kernels ("
            << (fuse ? "fused" : "unfused: one op per kernel") << ") ..." << std::flush;
  Program<> program(tokenized, {.tokenized = true});
  std::printf(" done in %.0f ms\n", ms_since(start));
  return program;
}

void print_steps(const Program<>& program) {
  const G& g = program.graph();
  for (const auto& step : program.steps()) {
    const auto& node = g.node(step.node);
    const char* kind = step.kind == Program<>::StepKind::kernel ? "kernel"
                       : step.kind == Program<>::StepKind::host ? "host copy"
                                                                : "reference";
    std::printf("  %-9s %-16s", kind, node.name.c_str());
    if (const auto* sg = std::get_if<ir::Subgraph<x64::Traits>>(&node.op)) {
      for (const ir::NodeId id : sg->body->topological_order())
        if (const auto& n = sg->body->node(id);
            !ir::is<ir::Parameter>(n.op) && !ir::is<ir::Result>(n.op) &&
            !ir::is<ir::Constant>(n.op) && !ir::is<ir::Scalar>(n.op))
          std::printf(" %s", std::string(n.op_name()).c_str());
    } else {
      std::printf(step.kind == Program<>::StepKind::host ? " %s: its bytes copied on the host"
                                                         : " %s: run by the reference interpreter",
                  std::string(node.op_name()).c_str());
    }
    std::printf("\n");
    if (!step.note.empty()) std::printf("    note: %s\n", step.note.c_str());
  }
}

/// Median milliseconds of `run` over `runs` calls, after one to warm up.
template <class F> double median_ms(F run) {
  run();
  std::vector<double> times;
  for (int r = 0; r < runs; ++r) {
    const auto start = std::chrono::steady_clock::now();
    run();
    times.push_back(ms_since(start));
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

struct PartTime {
  int kernels = 0;
  double ms = 0;
};

/// Each kernel step alone on one thread (on inputs of its types holding small values), summed
/// per part of the layer.
std::map<std::string, PartTime> time_parts(const Program<>& program) {
  std::map<std::string, PartTime> parts;
  for (const auto& step : program.steps()) {
    if (step.kind != Program<>::StepKind::kernel) continue;
    std::vector<reference::Tensor> in;
    for (const std::size_t value : step.inputs) {
      const auto& t = program.values()[value].type;
      in.push_back(reference::Tensor::from_values(t.type, t.shape,
                                                  random_values(t.shape.element_count(), 7, 1.0)));
    }
    PartTime& part = parts[part_of(program.graph().node(step.node).name)];
    part.kernels += 1;
    part.ms += median_ms([&] { (void)step.kernel->run(in, {.threads = 1}); });
  }
  return parts;
}

/// One head split, a Reshape of x, as the Program runs it: a host copy (program/host_steps.hpp).
double reshape_ms() {
  G g;
  g.result(g.reshape(g.parameter(f32, {tokens, width}), {tokens, heads, head_size}));
  const Program<> program(g);
  const std::vector<reference::Tensor> in{reference::Tensor(f32, {tokens, width})};
  return median_ms([&] { (void)program.run(in); });
}
} // namespace

int main() {
  std::printf("transformer encoder layer: %ld tokens, width %ld, %ld heads of %ld, MLP hidden "
              "%ld, f32, weights as Constants\n",
              long(tokens), long(width), long(heads), long(head_size), long(hidden));
  const G model = encoder_layer();
  const Program<> fused = compile_program(model, true);
  std::printf("steps of the fused program:\n");
  print_steps(fused);
  debug::print_statistics(std::cout, fused.graph());

  const std::vector<reference::Tensor> in{
      reference::Tensor::from_values(f32, {tokens, width}, random_values(tokens * width, 1, 2.0))};
  std::cout << "running it, and the reference interpreter in double precision ..." << std::flush;
  auto start = std::chrono::steady_clock::now();
  const auto out = fused.run(in);
  const auto want = reference::evaluate(model, in);
  std::printf(" done in %.1f s\n", ms_since(start) / 1000);
  double error = 0, largest = 0;
  for (std::size_t i = 0; i < out[0].size(); ++i) {
    error = std::max(error, std::fabs(out[0].at(i) - want[0].at(i)));
    largest = std::max(largest, std::fabs(want[0].at(i)));
  }
  // The kernels sum in f32, the reference in double. A sum of K products rounds to about
  // sqrt(K) 2^-24 of the sum of their magnitudes (K 2^-24 at worst), and with weights below
  // 1/sqrt(K) in size that sum is at most sqrt(K) times the largest value read: about
  // K 2^-24 |value| per product. Allow it four times (four products in a row) for the longest
  // sum, K = hidden, on values the size of y. A lost row, head or bias is off by 1e-2 or more.
  const double tolerance = 4.0 * double(hidden) * 0x1p-24 * largest;
  const bool ok = error <= tolerance;
  std::printf("%s: largest difference from the reference %.2e (|y| up to %.2f, tolerance %.2e)\n",
              ok ? "ok" : "MISMATCH", error, largest, tolerance);

  const Program<> unfused = compile_program(model, false);
  std::cout << "timing, median of " << runs << " runs ..." << std::flush;
  const auto fused_parts = time_parts(fused), unfused_parts = time_parts(unfused);
  const double reshapes = 4 * reshape_ms();
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<int> thread_counts{1};
  if (cores > 1) thread_counts.push_back(cores);
  std::vector<std::pair<double, double>> whole; // {fused, unfused} per thread count
  reference::Tensor y(f32, {tokens, width});
  const ConstTensorView x_view{f32, in[0].shape(), in[0].data()};
  const TensorView y_view{f32, y.shape(), y.data()};
  for (const int threads : thread_counts) {
    auto time = [&](const Program<>& program) {
      ExecutionContext ctx = program.make_context();
      return median_ms([&] {
        program.run(ctx, std::span(&x_view, 1), std::span(&y_view, 1), {.threads = threads});
      });
    };
    whole.emplace_back(time(fused), time(unfused));
  }
  std::printf(" done\n\n");

  std::printf("%-44s %-21s %-21s %s\n", "one thread, each step alone", "fused", "unfused",
              "speedup");
  auto row = [](const char* label, int fused_kernels, double f, int unfused_kernels, double u) {
    std::printf("%-44s %2d kernel%s %7.2f ms  %2d kernel%s %7.2f ms  %5.2fx\n", label,
                fused_kernels, fused_kernels == 1 ? " " : "s", f, unfused_kernels,
                unfused_kernels == 1 ? " " : "s", u, u / f);
  };
  const std::pair<const char*, const char*> parts[] = {
      {"qkv", "Q, K, V projections, bias"},
      {"attention", "attention: QK^T, scale, softmax, PV"},
      {"output", "output projection, bias, residual"},
      {"mlp", "MLP: fc1, bias, GELU, fc2, bias, residual"},
      {"norm", "LayerNorm, twice"}};
  for (const auto& [part, label] : parts) {
    const PartTime f = fused_parts.at(part), u = unfused_parts.at(part);
    row(label, f.kernels, f.ms, u.kernels, u.ms);
  }
  std::printf("%-44s 4 Reshapes %7.2f ms  4 Reshapes %7.2f ms  (host copies in both)\n",
              "heads split and joined", reshapes, reshapes);
  std::printf("\n%-44s %-21s %-21s %s\n", "whole layer", "fused", "unfused", "speedup");
  for (std::size_t i = 0; i < whole.size(); ++i)
    std::printf("%-44s %2zu steps  %7.2f ms  %2zu steps  %7.2f ms  %5.2fx\n",
                (std::to_string(thread_counts[i]) + (i ? " threads" : " thread")).c_str(),
                fused.steps().size(), whole[i].first, unfused.steps().size(), whole[i].second,
                whole[i].second / whole[i].first);
  if (whole.size() > 1 && whole[1].first > whole[0].first)
    std::printf("(slower on %d threads than on one: other work holds the cores, and each kernel "
                "waits for its slowest thread; read the one-thread figures)\n",
                thread_counts[1]);
  return ok ? 0 : 1;
}
