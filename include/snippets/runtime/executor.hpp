// SPDX-License-Identifier: Apache-2.0
// snippets/runtime/executor.hpp: parallel execution of a kernel over its scheduling domain.
//
// Each thread runs the kernel on its share of the domain (work_division.hpp: contiguous
// chunks of the outermost dimension, or, when those are too few for the threads, blocks of
// a finer dimension as well) in at most three calls: the kernel loops over the rest, so the
// call overhead stays off small tensors. OpenMP is the default executor; a runtime plugs in
// its own pool by passing any callable with the ParallelFor signature.
#pragma once

#include <omp.h>

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

} // namespace snippets
