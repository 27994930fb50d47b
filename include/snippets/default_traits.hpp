// SPDX-License-Identifier: Apache-2.0
// snippets/default_traits.hpp: the backend a Program, a Model or a KernelCache uses when none
// is named: x86-64 (AVX2 / AVX-512 through Xbyak), or AArch64 (NEON through AsmJit) when
// compiling for it. Everything else takes its backend from the graph's traits type; this is
// the one file outside target/ that names a target (scripts/check-seam enforces it).
#pragma once

#if defined(__aarch64__)
#include "snippets/target/aarch64/traits.hpp"
#else
#include "snippets/target/x64/traits.hpp"
#endif

namespace snippets {

#if defined(__aarch64__)
using DefaultTraits = aarch64::Traits;
#else
using DefaultTraits = x64::Traits;
#endif

} // namespace snippets
