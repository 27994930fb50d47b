// SPDX-License-Identifier: Apache-2.0
// The main demo: a transformer block's MLP tail as a whole model.
//
//   h = gelu_tanh(x @ W1 + b1)           MatMul is an Opaque op run by a callback
//   y = clamp((h @ W2 + b2 + x) * s, -8, 8)
//
// The model is tokenized (the elementwise parts become Subgraphs, each one JIT kernel), the
// Subgraphs and the fusion statistics are printed, the Program runs, its output is checked
// against the double-precision reference interpreter, and the time is compared with the same
// model run one kernel per op (unfused).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <vector>

#include "snippets/snippets.hpp"

namespace {
using namespace snippets;
constexpr auto f32 = ElementType::f32;
constexpr Dim tokens = 2048, width = 256, hidden = 1024;
double matmul_ms = 0; // time spent in the MatMul callback, to separate it from the kernels

/// y = a @ b for planar f32 a [M, K], b [K, N] (i-k-j order, so the compiler vectorises it).
void matmul(std::span<const ConstTensorView> in, std::span<const TensorView> out) {
  const auto start = std::chrono::steady_clock::now();
  const auto* a = static_cast<const float*>(in[0].data);
  const auto* b = static_cast<const float*>(in[1].data);
  auto* y = static_cast<float*>(out[0].data);
  const Dim m = in[0].shape[0], k = in[0].shape[1], n = in[1].shape[1];
#pragma omp parallel for
  for (Dim i = 0; i < m; ++i) {
    float* row = y + i * n;
    std::fill(row, row + n, 0.0f);
    for (Dim l = 0; l < k; ++l)
      for (Dim j = 0; j < n; ++j) row[j] += a[i * k + l] * b[l * n + j];
  }
  matmul_ms +=
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

/// The same for the reference interpreter, on doubles (rounded to f32 like the callback).
std::vector<reference::Values> matmul_values(std::span<const reference::Values> in) {
  const Dim m = in[0].shape[0], k = in[0].shape[1], n = in[1].shape[1];
  reference::Values y{f32, {m, n}, std::vector<double>(static_cast<std::size_t>(m * n))};
  for (Dim i = 0; i < m; ++i)
    for (Dim j = 0; j < n; ++j) {
      double s = 0;
      for (Dim l = 0; l < k; ++l)
        s += in[0].v[static_cast<std::size_t>(i * k + l)] *
             in[1].v[static_cast<std::size_t>(l * n + j)];
      y.v[static_cast<std::size_t>(i * n + j)] = static_cast<float>(s);
    }
  return {y};
}

reference::Tensor random_tensor(Shape shape, unsigned seed, double scale) {
  std::vector<double> v(static_cast<std::size_t>(shape.element_count()));
  for (auto& e : v) {
    seed = seed * 1664525u + 1013904223u;
    e = scale * (double(seed >> 8) / double(1u << 24) - 0.5);
  }
  return reference::Tensor::from_values(f32, std::move(shape), v);
}

/// Best of 7 runs: {whole model, elementwise part} in milliseconds.
std::pair<double, double> best_ms(const Program<>& program,
                                  const std::vector<reference::Tensor>& in) {
  std::vector<ConstTensorView> views;
  for (const auto& t : in) views.push_back({t.type(), t.shape(), t.data()});
  reference::Tensor out(f32, {tokens, width});
  const TensorView out_view{f32, out.shape(), out.data()};
  ExecutionContext ctx = program.make_context();
  std::pair<double, double> best{1e30, 1e30};
  for (int rep = 0; rep < 7; ++rep) {
    matmul_ms = 0;
    const auto start = std::chrono::steady_clock::now();
    program.run(ctx, views, std::span(&out_view, 1));
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    best = {std::min(best.first, ms), std::min(best.second, ms - matmul_ms)};
  }
  return best;
}
} // namespace

int main() {
  ir::Graph<x64::Traits> g;
  const auto x = g.parameter(f32, {tokens, width}, "x");
  const auto w1 = g.parameter(f32, {width, hidden}, "W1");
  const auto b1 = g.parameter(f32, {hidden}, "b1");
  const auto w2 = g.parameter(f32, {hidden, width}, "W2");
  const auto b2 = g.parameter(f32, {width}, "b2");
  auto mm = [&](ir::Value a, ir::Value b, Dim n, const char* name) {
    return g.make(ir::Opaque{"MatMul", {{f32, {tokens, n}}}}, {a, b}, name)[0];
  };
  const auto h = g.gelu(g.add(mm(x, w1, hidden, "fc1"), b1), ir::GeluApproximation::tanh);
  const auto y = g.add(g.add(mm(h, w2, width, "fc2"), b2), x);
  g.result(g.clamp(g.multiply(y, g.scalar(f32, 0.125)), -8.0, 8.0), "y");

  ProgramOptions<x64::Traits> opt;
  opt.opaque["MatMul"] = matmul;
  opt.reference.opaque["MatMul"] = matmul_values;
  const Program<> program(g, opt);
  std::cout << "tokenized model:\n" << ir::to_string(program.graph()) << '\n';
  debug::print_statistics(std::cout, program.graph());
  for (const auto& step : program.steps())
    if (!step.note.empty()) std::cout << "note: " << step.note << '\n';
  std::cout << "intermediate memory: " << program.arena_bytes() << " B planned, "
            << program.unplanned_bytes() << " B without reuse\n";

  const std::vector<reference::Tensor> in{
      random_tensor({tokens, width}, 1, 4.0), random_tensor({width, hidden}, 2, 0.2),
      random_tensor({hidden}, 3, 1.0), random_tensor({hidden, width}, 4, 0.1),
      random_tensor({width}, 5, 1.0)};
  const auto out = program.run(in);
  const auto ref = reference::evaluate(g, in, opt.reference);
  double max_abs = 0;
  for (std::size_t i = 0; i < out[0].size(); ++i)
    max_abs = std::max(max_abs, std::fabs(out[0].at(i) - ref[0].at(i)));
  // the MatMul callback sums in f32, the reference in double: allow its rounding
  const bool ok = max_abs < 1e-3;
  std::printf("%s: largest absolute difference from the double-precision reference %.2e\n",
              ok ? "ok" : "MISMATCH", max_abs);

  ProgramOptions<x64::Traits> unfused_opt = opt;
  unfused_opt.tokenize.fuse = false;
  const Program<> unfused(g, unfused_opt);
  const auto [fused_ms, fused_eltwise] = best_ms(program, in);
  const auto [unfused_ms, unfused_eltwise] = best_ms(unfused, in);
  std::printf("fused:   %2zu steps, %7.2f ms in all, %6.2f ms outside the MatMuls\n",
              program.steps().size(), fused_ms, fused_eltwise);
  std::printf("unfused: %2zu steps, %7.2f ms in all, %6.2f ms outside the MatMuls (one kernel "
              "per op)\n",
              unfused.steps().size(), unfused_ms, unfused_eltwise);
  std::printf("fusion speeds up the elementwise part %.2fx (best of 7 runs each)\n",
              unfused_eltwise / fused_eltwise);
  return ok ? 0 : 1;
}
