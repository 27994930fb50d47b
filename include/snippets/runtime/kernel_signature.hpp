// SPDX-License-Identifier: Apache-2.0
// snippets/runtime/kernel_signature.hpp: KernelSignature, what the runtime knows of a kernel:
// its buffers, its domain and how the executor may divide it, scratch, and for a dynamic
// kernel its layout. compile() fills it (compile/signature.hpp); the runtime only reads it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "snippets/ir/op_tags.hpp"
#include "snippets/runtime/runtime_config.hpp"

namespace snippets {

/// The layout facts the executor needs, filled by compile().
struct KernelSignature {
  std::vector<ir::TensorType> inputs, outputs;
  std::vector<Dim> domain;                      // collapsed scheduling domain
  std::vector<std::int64_t> outer_stride_bytes; // per argument: bytes per step of domain dim 0
  std::int64_t chunk_unit = 1;                  // threads split domain dim 0 in multiples of this
  /// Kernels whose calls may take a part of domain dim 1 too (MatMul kernels with one batch
  /// dim: blocks of rows of a batch index, their M loop reading work[1]; without batch dims:
  /// panels of the last product's columns, its Brgemm reading work[1]): indices per unit (0:
  /// calls take all of dim 1 and the kernel reads work[0] only) and, per argument, bytes per
  /// step of dim 1 (runtime/work_division.hpp).
  std::int64_t inner_unit = 0;
  std::vector<std::int64_t> inner_stride_bytes;
  /// The part of an outer index's work a call repeats whatever part of dim 1 it takes (an MLP
  /// chain taking columns of its last product computes all of the products before it).
  double inner_shared = 0;
  /// Dim 1 is a MatMul's columns: a call may take several blocks of rows with a range of them.
  bool inner_columns = false;
  /// Work per domain element, in elementwise elements, for the threads a run asks for by
  /// itself (RunOptions::threads 0): 1, or for a MatMul kernel its multiply-adds per output
  /// element over the vector lanes (attention [1,128,12,64]: 16).
  std::int64_t element_cost = 1;
  std::int64_t vector_bytes = 32;
  std::string isa;
  /// Set for a dynamic kernel: what the run-time configurator needs.
  std::optional<DynamicLayout> dynamic;
  /// Dynamic kernels: outputs of at least this many bytes use the streaming variant.
  std::int64_t streaming_min_bytes = 0;
  /// Data pointers after the arguments that point at the calling thread's scratch memory, and
  /// the bytes of it a call uses (Buffers between the loops of a row-by-row kernel).
  std::size_t buffer_pointers = 0;
  std::int64_t scratch_bytes = 0;
  /// Per input: an output may share its buffer (compiled_kernel.hpp's header comment).
  std::vector<bool> in_place;
  /// False for a kernel compiled with CompileOptions::emit_only for an ISA this host cannot
  /// execute: run() refuses it.
  bool runnable = true;
};

} // namespace snippets
