// SPDX-License-Identifier: Apache-2.0
// snippets/runtime/executor.hpp: parallel execution of a kernel over its scheduling domain.
//
// The outermost domain dimension is split into one contiguous chunk per thread and each
// thread runs the kernel once over its chunk (the kernel loops over it), so the call
// overhead stays off small tensors. For a one-dimensional domain, chunks are multiples of the
// main loop's step (vector length times unroll) except the last, which carries the static
// remainder. OpenMP is the default executor; a
// runtime plugs in its own pool by passing any callable with the ParallelFor signature.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <functional>

namespace snippets {

/// Runs body(i) for i in [0, n), possibly in parallel.
using ParallelFor = std::function<void(int n, const std::function<void(int)>& body)>;

/// The default executor: an OpenMP parallel loop with `n` threads.
/// A template, so the default path calls `body` directly: no std::function on each run.
template <class Body> void openmp_parallel_for(int n, const Body& body) {
  if (n == 1) return body(0);
#pragma omp parallel for num_threads(n) schedule(static, 1)
  for (int i = 0; i < n; ++i) body(i);
}

/// [begin, begin + count) of chunk `i` of `n` over `work` items, in units of `unit` items
/// (the last chunk takes the remainder).
struct Chunk {
  std::int64_t begin = 0, count = 0;
};
inline Chunk chunk_of(std::int64_t work, std::int64_t unit, int n, int i) {
  const std::int64_t units = (work + unit - 1) / unit;
  const std::int64_t lo = units * i / n * unit, hi = std::min(work, units * (i + 1) / n * unit);
  return {lo, std::max<std::int64_t>(hi - lo, 0)};
}

} // namespace snippets
