// SPDX-License-Identifier: Apache-2.0
// bench/peers_halide.hpp: Halide 14 (Debian's libhalide14-0-dev) JIT-compiled as a peer.
//
// Each workload is one Halide Func over (x = channel, y = row) on ImageParams bound to the
// case's buffers; the two-output workload is one Func returning a Tuple (both outputs in one
// loop). Schedule: vectorize(x, 16) (AVX-512 f32 lanes); with 2 threads also rows split in
// two tasks (parallel over y in steps of rows / 2) on Halide's own thread pool (its default
// size is the number of cores, 2 here; the calling thread takes part), with 1 thread no
// parallel loop. Softmax is four Funcs per row, computed at the output's row loop: the
// maximum over an RDom of the row, exp(x - max) (a row kept in a constant-size buffer: the
// output's x is bounded to [0, C)), the sum over the RDom, and the output exp * (1 / sum);
// both reductions are vectorised over the RDom (atomic(), so lanes reduce horizontally at the
// end). bf16 is Halide's BFloat(16) type: inputs cast to f32, the result cast back to bf16
// (rounded to nearest even).
// Compiled once per case and thread count with compile_jit(get_host_target()) and timed
// through Pipeline::realize on the bound output buffers.
// Transcendentals: Halide::exp is Halide's own vectorised polynomial, Halide::tanh calls
// libm's tanhf once per lane (scalar). So GELU has two variants: "halide" (the formula with
// Halide::tanh) and "halide_exp" (the same function written as x / (1 + exp(-2 u)), which is
// 0.5 x (1 + tanh(u)) exactly, on the vectorised exp).
// Header-only and tied to bench_peers.cpp; not part of the library.
#pragma once

#include <Halide.h>

#include <string>

#include "peers_case.hpp"

namespace snippets::bench::peers {

inline const Halide::Target& halide_target() {
  static const Halide::Target t = Halide::get_host_target();
  return t;
}

/// "Halide 14, target x86-64-linux-avx512-..." (the JIT target of every pipeline). Halide 14's
/// headers carry no version macro; 14 is the Debian package's (libhalide14-0-dev).
inline std::string halide_version() { return "Halide 14, target " + halide_target().to_string(); }

/// The compiled pipeline of one case and thread count, its inputs bound.
struct HalidePlan {
  Halide::Pipeline pipeline;
  std::vector<Halide::Buffer<>> outputs;
  std::vector<Halide::ImageParam> params; // kept alive with their bound buffers
};

inline HalidePlan make_halide_plan(const Case& c, int threads, bool exp_form) {
  using Halide::Expr;
  const WorkloadInfo& wi = info(c.w);
  const int C = int(c.cols), R = int(c.rows);
  const Halide::Type type = c.type == f32 ? Halide::Float(32) : Halide::BFloat(16);
  HalidePlan p;
  for (int k = 0; k < wi.full_inputs; ++k) {
    p.params.emplace_back(type, 2);
    p.params.back().set(Halide::Buffer<>(type, const_cast<void*>(c.in_ptrs[std::size_t(k)]), C, R));
  }
  if (wi.bias) {
    p.params.emplace_back(type, 1);
    p.params.back().set(Halide::Buffer<>(type, const_cast<void*>(c.in_ptrs.back()), C));
  }
  for (void* o : c.out_ptrs) p.outputs.emplace_back(type, o, C, R);
  Halide::Var x("x"), y("y"), yo("yo"), yi("yi");
  // the inputs as f32, the result in the workload's type
  auto f32_of = [&](const Expr& e) { return c.type == f32 ? e : Halide::cast<float>(e); };
  auto in = [&](int k) { return f32_of(p.params[std::size_t(k)](x, y)); };
  auto out = [&](const Expr& e) { return c.type == f32 ? e : Halide::cast(type, e); };
  Halide::Func f(wi.name);
  // Softmax: the row's producers, computed per row once the schedule's row loop is known
  std::vector<Halide::Func> per_row;
  switch (c.w) {
  case Workload::chain: f(x, y) = Halide::max(in(0) * in(1) + in(2), 0.0f); break;
  case Workload::bias_sigmoid:
  case Workload::bias_sigmoid_bf16: {
    const Expr v = (in(0) + f32_of(p.params[1](x))) * bias_scale;
    f(x, y) = out(1.0f / (1.0f + Halide::exp(-v)));
    break;
  }
  case Workload::gelu_tanh: {
    const Expr v = in(0), u = gelu_k * (v + gelu_c * v * v * v);
    f(x, y) = exp_form ? v / (1.0f + Halide::exp(-2.0f * u)) : 0.5f * v * (1.0f + Halide::tanh(u));
    break;
  }
  case Workload::swish: f(x, y) = in(0) / (1.0f + Halide::exp(-in(0))); break;
  case Workload::two_outputs: {
    const Expr s = in(0) + in(1);
    f(x, y) = Halide::Tuple(s, s * in(2));
    break;
  }
  case Workload::softmax1024:
  case Workload::softmax37: {
    const Halide::RDom r(0, C);
    const Halide::ImageParam& xs = p.params[0];
    Halide::Func mx("mx"), e("e"), sum("sum");
    mx(y) = xs(0, y);
    mx(y) = Halide::max(mx(y), xs(r, y));
    e(x, y) = Halide::exp(xs(x, y) - mx(y));
    sum(y) = 0.0f;
    sum(y) += e(r, y);
    f(x, y) = e(x, y) * (1.0f / sum(y));
    f.bound(x, 0, C);
    mx.update().atomic().vectorize(r, 16);
    e.vectorize(x, 16, Halide::TailStrategy::GuardWithIf);
    sum.update().atomic().vectorize(r, 16);
    per_row = {mx, e, sum};
    break;
  }
  }
  f.vectorize(x, 16);
  Halide::Var row = y;
  if (threads > 1) {
    f.split(y, yo, yi, (R + threads - 1) / threads).parallel(yo);
    row = yi;
  }
  for (Halide::Func& g : per_row) g.compute_at(f, row);
  p.pipeline = Halide::Pipeline(f);
  p.pipeline.compile_jit(halide_target());
  return p;
}

/// The Halide peer (`exp_form` only changes GELU); compiles for 1 and 2 threads.
inline Runner make_halide(const Case& c, bool exp_form = false) {
  auto plans = std::make_shared<std::vector<HalidePlan>>();
  for (int t : {1, 2}) plans->push_back(make_halide_plan(c, t, exp_form));
  return [plans](int t) {
    HalidePlan& p = (*plans)[std::size_t(t - 1)];
    if (p.outputs.size() == 1)
      p.pipeline.realize(p.outputs[0], halide_target());
    else
      p.pipeline.realize({p.outputs[0], p.outputs[1]}, halide_target());
  };
}

} // namespace snippets::bench::peers
