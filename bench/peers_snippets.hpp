// SPDX-License-Identifier: Apache-2.0
// bench/peers_snippets.hpp: snippets itself as a peer, fused and op by op.
//
//  - make_fused: the workload compiled once into one JIT kernel, timed through run_unchecked;
//    for the host's best ISA ("snippets"), or for the one asked for ("snippets_avx2": the same
//    graph compiled with CompileOptions::isa = avx2), in the standard or the relaxed accuracy
//    tier ("snippets_relaxed": CompileOptions::accuracy = relaxed);
//  - make_unfused: bench_util.hpp's Unfused (one JIT kernel per op, intermediates in memory,
//    the Results in the caller's output buffers, where the correctness gate reads them). Gelu
//    and Swish run in their decomposed form (Tanh, Multiply, Add, ... / Sigmoid, Multiply), as
//    bench_math's unfused column does, and Softmax as ReduceMax, Subtract, Exp, ReduceSum,
//    Divide, as bench_softmax's; the dedicated op alone would be one kernel. Unfused gives
//    every kernel f32 arguments, so it has no bf16 run: an empty Runner for bf16 workloads.
// Header-only and tied to bench_peers.cpp; not part of the library.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "peers_case.hpp"

namespace snippets::bench::peers {

/// `isa`: empty for the host's best. `keep` receives the kernel (its signature for the notes).
inline Runner make_fused(const Case& c, std::optional<x64::Isa> isa = {},
                         std::shared_ptr<CompiledKernel>* keep = nullptr,
                         Accuracy accuracy = Accuracy::standard) {
  auto k = std::make_shared<CompiledKernel>(
      compile(build_graph(c.w, c.rows), {.isa = isa, .accuracy = accuracy}));
  if (keep) *keep = k;
  const Case* cp = &c;
  return
      [k, cp](int t) { k->run_unchecked(cp->in_ptrs.data(), cp->out_ptrs.data(), {.threads = t}); };
}

inline Runner make_unfused(const Case& c, std::size_t* kernels = nullptr) {
  if (c.type != f32) return {};
  auto u = std::make_shared<Unfused>(build_graph(c.w, c.rows, Form::decomposed));
  if (kernels) *kernels = u->kernel_count();
  std::vector<const float*> in;
  std::vector<float*> out;
  for (std::size_t k = 0; k < c.in_ptrs.size(); ++k) in.push_back(c.input(k));
  for (std::size_t k = 0; k < c.out_ptrs.size(); ++k) out.push_back(c.output(k));
  return [u, in, out](int t) { u->run(in, out, t); };
}

} // namespace snippets::bench::peers
