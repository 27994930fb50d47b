// SPDX-License-Identifier: Apache-2.0
// snippets/target/x64/abi.hpp: the calling convention of generated kernels (SysV x86-64).
//
// A kernel is `void kernel(const CallArgs*)`; the pointer arrives in rdi and stays there.
// rax is the kernel emitter's scratch. The other 13 general-purpose registers (all but rsp,
// rdi, rax) hold data pointers first, then loop counters; callee-saved ones are pushed.
#pragma once

#include <cstdint>

namespace snippets::x64 {

inline constexpr int usable_gprs = 13;
inline constexpr int max_kernel_args = 16;
/// Highest domain rank of a dynamic kernel (one work amount per loop dimension).
inline constexpr int max_dynamic_rank = 8;

struct CallArgs {
  const void* data[max_kernel_args]; // inputs then outputs, offset to this call's chunk
  /// Work amount per domain dimension. A static kernel reads work[0] only (its parallel loop);
  /// a dynamic kernel reads every dimension's (this thread's chunk in the split dimension).
  std::int64_t work[max_dynamic_rank];
  /// Dynamic kernels: the run-time configuration table (RuntimeConfig::table), bytes each
  /// outer loop advances each data pointer per iteration. Unused by static kernels.
  const std::int64_t* config;
};
using KernelFn = void (*)(const CallArgs*);

} // namespace snippets::x64
