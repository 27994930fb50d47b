// SPDX-License-Identifier: Apache-2.0
// snippets/support/kernel_limits.hpp: the limits every kernel keeps, whatever its backend:
// graphs and the tokenizer bound a Subgraph by them (backend_traits.hpp), the runtime sizes its
// call arguments by them (runtime/kernel_abi.hpp).
#pragma once

namespace snippets {

/// Most inputs + outputs + scratch pointers of one kernel (a backend's
/// data_pointer_registers is at most this).
inline constexpr int max_kernel_args = 16;
/// Highest domain rank of a dynamic kernel (one work amount per loop dimension).
inline constexpr int max_dynamic_rank = 8;

} // namespace snippets
