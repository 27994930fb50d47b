// SPDX-License-Identifier: Apache-2.0
// snippets/ir/loop_manager.hpp: LoopManager and LoopInfo, the loop facts of a Linear IR.
//
// A loop walks one dimension of the scheduling domain: `work_amount` elements in steps of
// `increment`. Its ports are the memory accesses inside it; each advances its data pointer by
// `ptr_increment` elements per step and by `finalization_offset` elements after the loop
// (usually minus what the loop advanced, so the outer loop finds the pointer where it was).
// `runtime_work_amount` marks the parallel loop whose work amount the executor passes at run
// time (each thread's chunk; every loop of a dynamic kernel). Specific iterations (main body,
// tail) are separate loops that share a `dim`; `is_tail` marks the remainder copies. A dynamic
// kernel's innermost loop has two: a one-vector loop and a masked tail, both continuing the
// main loop's counter (`tail_of`).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "snippets/error.hpp"

namespace snippets::ir {

struct LoopPort {
  const void* expr = nullptr;     // the Load/Store/BroadcastLoad expression
  std::size_t data_index = 0;     // which kernel argument pointer it advances
  std::int64_t ptr_increment = 0; // elements per step (0: broadcast along this loop)
  std::int64_t finalization_offset = 0;
  std::int64_t element_size = 4;
  /// The increment is read from the run-time configuration (outer loops of a dynamic kernel);
  /// ptr_increment and finalization_offset are then 0.
  bool runtime = false;
  /// Dynamic innermost loops: bytes per element the loop walked that the pointer moves back by
  /// after the loop's last piece (its masked tail), so a later loop of the row reads the row
  /// from its start again (CleanupLoopOffsets); 0: it stays where the loop left it.
  std::int64_t rewind = 0;
  bool operator==(const LoopPort&) const = default;
};

struct LoopInfo {
  std::size_t dim = 0; // domain dimension the loop walks
  std::int64_t work_amount = 0;
  std::int64_t increment = 1;
  bool runtime_work_amount = false; // taken from the call arguments (the parallel loop)
  bool is_tail = false;             // the masked last iteration of an innermost loop
  bool evaluate_once = false;       // at most one iteration: no counter, no back-edge
  std::int64_t tail_of = -1;        // tail of a run-time loop: runs iff that loop left work
                                    // (and continues that loop's counter)
  std::vector<LoopPort> ports;
};

class LoopManager {
public:
  std::size_t add(LoopInfo info) {
    loops_.push_back(std::move(info));
    return loops_.size() - 1;
  }
  LoopInfo& at(std::size_t id) {
    SNIPPETS_ASSERT(id < loops_.size()) << "loop id " << id;
    return loops_[id];
  }
  const LoopInfo& at(std::size_t id) const {
    SNIPPETS_ASSERT(id < loops_.size()) << "loop id " << id;
    return loops_[id];
  }
  std::size_t size() const { return loops_.size(); }
  const std::vector<LoopInfo>& loops() const { return loops_; }

private:
  std::vector<LoopInfo> loops_;
};

} // namespace snippets::ir
