// SPDX-License-Identifier: Apache-2.0
// snippets/support/memory_plan.hpp: places buffers with known lifetimes in one arena.
//
// Each request is a size in bytes and a lifetime [def, end] in steps (inclusive: a buffer
// written at step 3 and last read at step 5 is live in steps 3, 4 and 5). Two buffers may
// share bytes only when their lifetimes do not overlap. The planner takes the requests from
// the largest down and puts each at the lowest aligned offset that does not collide with a
// placed buffer whose lifetime overlaps it (greedy best-offset; optimal for intervals in most
// practical cases and never worse than one slot per buffer).
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <span>
#include <vector>

namespace snippets {

struct BufferRequest {
  std::int64_t bytes = 0;
  std::size_t def = 0, end = 0; // first and last step the buffer is live in
};

struct MemoryPlan {
  std::vector<std::int64_t> offsets; // per request, aligned to `alignment`
  std::int64_t total_bytes = 0;      // arena size
  std::int64_t alignment = 64;
};

inline bool lifetimes_overlap(const BufferRequest& a, const BufferRequest& b) {
  return a.def <= b.end && b.def <= a.end;
}

inline MemoryPlan plan_memory(std::span<const BufferRequest> requests,
                              std::int64_t alignment = 64) {
  MemoryPlan plan;
  plan.alignment = alignment;
  plan.offsets.assign(requests.size(), 0);
  auto padded = [&](std::int64_t bytes) { return (bytes + alignment - 1) / alignment * alignment; };
  std::vector<std::size_t> order(requests.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return requests[a].bytes > requests[b].bytes;
  });
  std::vector<std::size_t> placed;
  for (std::size_t i : order) {
    // the live neighbours' byte ranges, by offset; take the first gap that fits
    std::vector<std::pair<std::int64_t, std::int64_t>> busy;
    for (std::size_t j : placed)
      if (lifetimes_overlap(requests[i], requests[j]))
        busy.emplace_back(plan.offsets[j], plan.offsets[j] + padded(requests[j].bytes));
    std::sort(busy.begin(), busy.end());
    std::int64_t offset = 0;
    for (const auto& [lo, hi] : busy) {
      if (offset + padded(requests[i].bytes) <= lo) break;
      offset = std::max(offset, hi);
    }
    plan.offsets[i] = offset;
    plan.total_bytes = std::max(plan.total_bytes, offset + padded(requests[i].bytes));
    placed.push_back(i);
  }
  return plan;
}

} // namespace snippets
