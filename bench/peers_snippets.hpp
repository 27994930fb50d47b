// bench/peers_snippets.hpp: snippets itself as a peer, fused and op by op.
//
//  - make_fused: the workload compiled once into one JIT kernel (best ISA of the host), timed
//    through run_unchecked;
//  - make_unfused: bench_util.hpp's Unfused (one JIT kernel per op, intermediates in memory,
//    the Results in the caller's output buffers, where the correctness gate reads them). Gelu
//    and Swish run in their decomposed form (Tanh, Multiply, Add, ... / Sigmoid, Multiply), as
//    bench_math's unfused column does; the dedicated op alone would be one kernel.
// Header-only and tied to bench_peers.cpp; not part of the library.
#pragma once

#include <memory>
#include <vector>

#include "peers_case.hpp"

namespace snippets::bench::peers {

inline Runner make_fused(const Case& c, std::shared_ptr<CompiledKernel>* keep = nullptr) {
  auto k = std::make_shared<CompiledKernel>(compile(build_graph(c.w, c.rows)));
  if (keep) *keep = k;
  const Case* cp = &c;
  return [k, cp](int t) {
    k->run_unchecked(reinterpret_cast<const void* const*>(cp->in_ptrs.data()),
                     reinterpret_cast<void* const*>(cp->out_ptrs.data()), {.threads = t});
  };
}

inline Runner make_unfused(const Case& c, std::size_t* kernels = nullptr) {
  auto u = std::make_shared<Unfused>(build_graph(c.w, c.rows, /*decomposed=*/true));
  if (kernels) *kernels = u->kernel_count();
  const Case* cp = &c;
  return [u, cp](int t) { u->run(cp->in_ptrs, cp->out_ptrs, t); };
}

} // namespace snippets::bench::peers
