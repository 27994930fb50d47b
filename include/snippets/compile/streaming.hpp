// SPDX-License-Identifier: Apache-2.0
// snippets/compile/streaming.hpp: when compile() also emits the variant with non-temporal
// stores (large f32 outputs of a kernel bound by memory).
#pragma once

#include <cstddef>
#include <cstdint>

#include "snippets/compile/options.hpp"
#include "snippets/runtime/compiled_kernel.hpp"
#include "snippets/runtime/kernel_abi.hpp"

namespace snippets {

namespace detail {

/// Streaming stores pay off once the outputs are much larger than the caches, and need every
/// full-vector store aligned: rows must be whole vectors (or the domain flat). Only f32 outputs
/// are written with them (a converting store writes part of a vector), and only by kernels
/// bound by memory (CompileOptions::streaming_max_code_bytes: `code`'s bytes per vector in the
/// loops that store outputs, per full-size stream: the outputs and the inputs of their shape).
inline bool use_streaming(const KernelSignature& sig, const KernelCode& code,
                          const CompileOptions& opt) {
  const std::int64_t threshold_bytes = opt.streaming_threshold_bytes;
  if (threshold_bytes <= 0 || sig.outputs.empty()) return false;
  for (const auto& o : sig.outputs)
    if (o.type != ElementType::f32) return false;
  if (opt.streaming_max_code_bytes >= 0) {
    std::size_t streams = sig.outputs.size();
    for (const auto& in : sig.inputs)
      if (in.shape == sig.outputs.front().shape) ++streams;
    if (code.store_loop_bytes_per_vector >
        static_cast<double>(opt.streaming_max_code_bytes) * static_cast<double>(streams))
      return false;
  }
  if (sig.dynamic) return true; // run() decides per shape
  std::int64_t elements = 1;
  for (Dim d : sig.domain) elements *= d;
  const std::int64_t out_bytes = elements * 4 * static_cast<std::int64_t>(sig.outputs.size());
  const bool rows_aligned =
      sig.domain.size() == 1 || (sig.domain.back() * 4) % sig.vector_bytes == 0;
  return out_bytes >= threshold_bytes && rows_aligned;
}

} // namespace detail

} // namespace snippets
