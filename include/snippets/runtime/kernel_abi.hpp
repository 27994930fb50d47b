// SPDX-License-Identifier: Apache-2.0
// snippets/runtime/kernel_abi.hpp: the contract between the runtime and any backend's code.
//
// Every generated kernel, whatever the target, is `void kernel(const CallArgs*)`: the runtime
// fills CallArgs per call (up to three per thread: runtime/work_division.hpp) and the backend's
// prologue reads it the way its calling convention passes the pointer (x86-64 SysV: rdi; AAPCS64:
// x0). A kernel compiled with instrumentation gets a DebugFrame instead: CallArgs, then slots the
// kernel writes. KernelCode is what a backend's code generator returns: the executable bytes (kept
// alive by `owner`, which also unmaps them), the entry point and what the debug tools read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "snippets/runtime/kernel_debug_info.hpp"
#include "snippets/support/kernel_limits.hpp"

namespace snippets {

struct CallArgs {
  const void* data[max_kernel_args]; // inputs then outputs, offset to this call's chunk
  /// Work amount per domain dimension. A static kernel reads work[0] (its parallel loop), and
  /// work[1] when its signature has an inner_unit (the rows of a batch index a call takes, or
  /// the columns of a product); a dynamic kernel reads every dimension's
  /// (runtime/work_division.hpp).
  std::int64_t work[max_dynamic_rank];
  /// Dynamic kernels: the run-time configuration table (RuntimeConfig::table), bytes each
  /// outer loop advances each data pointer per iteration, then each pointer's row stride.
  /// Unused by static kernels.
  const std::int64_t* config;
  /// The first index of domain dim 1 the call takes, when its signature has an inner_unit (the
  /// data pointers are already there; a product's constant B panels are found from it).
  std::int64_t inner_begin;
};
using KernelFn = void (*)(const CallArgs*);
static_assert(sizeof(CallArgs) % 8 == 0);

/// The call frame of an instrumented kernel: CallArgs, then the debug slots the kernel writes
/// (the argument pointer points at it). The runtime allocates it per call, on the calling
/// thread, zeroed.
struct DebugFrame {
  /// int64: LIR order of the memory access running now (-1 before the first one).
  static constexpr int expr_slot = static_cast<int>(sizeof(CallArgs));
  /// A word the backend may use while it reads a counter (x86-64: RDTSC clobbers rdx).
  static constexpr int scratch_slot = expr_slot + 8;
  static constexpr int counters = expr_slot + 16; // per region: start, ticks, entries (uint64)
  static constexpr int start(std::size_t r) { return counters + 24 * static_cast<int>(r); }
  static constexpr int ticks(std::size_t r) { return start(r) + 8; }
  static constexpr int entries(std::size_t r) { return start(r) + 16; }
  static constexpr std::size_t words(std::size_t regions) {
    return static_cast<std::size_t>(start(regions)) / 8;
  }
};

/// One generated kernel: its code and entry point. Empty (no `fn`) for a kernel without code,
/// or one a backend only describes (a recording backend's text).
struct KernelCode {
  std::shared_ptr<const void> owner;         // keeps `bytes` mapped and executable
  std::span<const std::uint8_t> bytes;       // instructions, then the constant table
  KernelFn fn = nullptr;                     // the entry point inside `bytes`
  std::uint32_t text_bytes = 0;              // instructions; the constant table follows
  std::shared_ptr<const debug::CodeMap> map; // which code each expression produced (debug)
  std::shared_ptr<const void> constants;     // data the code points at (packed MatMul weights)
  double store_loop_bytes_per_vector = 0;    // code bytes per vector in loops that store outputs

  bool empty() const { return bytes.empty(); }
};

} // namespace snippets
