// SPDX-License-Identifier: Apache-2.0
// snippets/target/aarch64/abi.hpp: the registers of the AAPCS64 call as the AArch64 kernels use
// them.
//
// A kernel is `void kernel(const CallArgs*)`: the pointer arrives in x0 and stays there. x16 and
// x17 (IP0/IP1, free for any code between calls) are the kernel emitter's own scratch: addresses
// past an immediate's reach, constants, counters kept on the stack. x18 (the platform register)
// and x29/x30 (frame pointer, link register) are never touched. The pool of data pointers and
// loop counters is the other 25: the caller-saved x1-x15 first, then the callee-saved x19-x28,
// which the prologue saves when a kernel uses them. The vector registers v0-v31 hold 4 f32 lanes
// each; the low halves of v8-v15 (d8-d15) are callee-saved, so a kernel that uses any of them
// saves all eight.
#pragma once

#include <array>
#include <cstdint>

namespace snippets::aarch64 {

inline constexpr int lanes = 4;
inline constexpr int vector_registers = 32;
inline constexpr int usable_gprs = 25;
/// Register numbers of the pool, in the order data pointers and then counters take them.
inline constexpr std::array<std::uint32_t, usable_gprs> gpr_pool = {
    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28};
inline constexpr std::uint32_t args_gpr = 0, scratch_gpr = 16, scratch2_gpr = 17;
inline constexpr bool callee_saved_gpr(std::uint32_t id) { return id >= 19 && id <= 28; }
inline constexpr bool callee_saved_vec(std::uint32_t id) { return id >= 8 && id <= 15; }

} // namespace snippets::aarch64
