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

struct CallArgs {
  const void* data[max_kernel_args]; // inputs then outputs, offset to this call's chunk
  std::int64_t work;                 // work amount of the parallel (outermost) loop
};
using KernelFn = void (*)(const CallArgs*);

} // namespace snippets::x64
