// SPDX-License-Identifier: Apache-2.0
// snippets/target/x64/abi.hpp: how x86-64 kernels take their arguments (SysV).
//
// A kernel is `void kernel(const CallArgs*)` (runtime/kernel_abi.hpp); the pointer arrives in
// rdi and stays there. rax is the kernel emitter's scratch. The other 13 general-purpose
// registers (all but rsp, rdi, rax) hold data pointers first, then loop counters; callee-saved
// ones are pushed.
#pragma once

#include "snippets/runtime/kernel_abi.hpp"

namespace snippets::x64 {

inline constexpr int usable_gprs = 13;

} // namespace snippets::x64
