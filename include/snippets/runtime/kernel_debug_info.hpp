// SPDX-License-Identifier: Apache-2.0
// snippets/runtime/kernel_debug_info.hpp: what a CompiledKernel keeps for debugging.
//
//  - CodeMap: which bytes of the machine code each Linear IR expression produced (recorded by
//    the kernel emitter when CompileOptions::debug asks for it; nothing is recorded, and no
//    instruction differs, otherwise). debug::disassemble annotates with it, the segfault
//    detector names the faulting expression with it.
//  - KernelDebugInfo: the kernel's name, ISA and pipeline, which instrumentation it carries, and
//  the
//    totals of its performance counters.
//  - ActiveCall: the kernel call the current thread is in, when the kernel is instrumented;
//    the SIGSEGV handler (debug/segfault_detector.hpp) reads it.
// How counters add up across threads: an instrumented kernel writes its counters into the
// call frame (runtime/compiled_kernel.hpp), which lives on the calling thread's stack, so
// threads never share a counter while the kernel runs. After each call the runtime adds the
// frame's values to the kernel's totals with one relaxed atomic add per counter. Totals are
// therefore sums over threads (CPU time, like `perf stat`), and the wall time of each run is
// kept apart.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace snippets::debug {

/// Per-kernel timing (debug/perf_counters.hpp reports it).
///  - cycles: the InsertPerfCounters pass wraps the whole kernel and every loop in RDTSC
///    reads; ticks are summed over threads. Each call is also timed with steady_clock.
///  - chrono: no extra instructions; each call (one per thread chunk) and each run are timed
///    with std::chrono::steady_clock.
enum class Counters { off, cycles, chrono };

/// One piece of generated code: an expression, or code the kernel adds around expressions.
struct CodeRecord {
  static constexpr std::size_t not_an_expression = static_cast<std::size_t>(-1);
  std::size_t order = not_an_expression; // the expression's position in the Linear IR
  std::string text;                      // its line in the LIR dump, or what the code is
  std::string emitter;                   // which emitter produced it, and how
  std::uint32_t begin = 0, end = 0;      // byte offsets in the kernel's code
};

struct CodeMap {
  std::vector<CodeRecord> records; // in code order; prologue first, epilogue last
  std::uint32_t text_bytes = 0;    // instructions; the constant table follows

  /// The expression record with this LIR order, or nullptr. Async-signal-safe (no allocation).
  const CodeRecord* find_order(std::size_t order) const noexcept {
    for (const auto& r : records)
      if (r.order == order) return &r;
    return nullptr;
  }
  /// The record whose code holds byte `offset`, or nullptr. Async-signal-safe.
  const CodeRecord* find_offset(std::uint64_t offset) const noexcept {
    for (const auto& r : records)
      if (offset >= r.begin && offset < r.end) return &r;
    return nullptr;
  }
};

/// A region timed in `cycles` mode (the whole kernel is region 0).
struct CounterRegionInfo {
  std::string name;
  int parent = -1;
  int depth = 0;
};

/// Running totals, shared by the copies of a CompiledKernel. All atomics, updated relaxed.
struct CounterTotals {
  explicit CounterTotals(std::size_t regions) : ticks(regions), entries(regions) {}
  std::vector<std::atomic<std::uint64_t>> ticks, entries; // per region, summed over threads
  std::atomic<std::uint64_t> runs{0}, run_ns{0};          // run() calls and their wall time
  std::atomic<std::uint64_t> calls{0}, call_ns{0};        // kernel calls (one per chunk)
};

struct KernelDebugInfo {
  std::string name;
  std::string isa;
  std::string pipeline; // the data-flow and lowering passes that built it (passes::describe)
  Counters counters = Counters::off;
  bool segfault_detector = false;
  std::vector<CounterRegionInfo> regions; // cycles mode
  std::shared_ptr<CounterTotals> totals;  // counters != off
  bool instrumented() const { return counters != Counters::off || segfault_detector; }
};

/// The instrumented kernel call running on this thread (innermost first).
struct ActiveCall {
  const KernelDebugInfo* info = nullptr;
  const CodeMap* map = nullptr;
  const std::uint8_t* code = nullptr;
  std::size_t code_bytes = 0;
  const volatile std::int64_t* expr_slot = nullptr; // written by the kernel
  const ActiveCall* outer = nullptr;
};

namespace detail {
inline thread_local const ActiveCall* active_call = nullptr;
} // namespace detail

} // namespace snippets::debug
