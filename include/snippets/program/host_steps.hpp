// SPDX-License-Identifier: Apache-2.0
// snippets/program/host_steps.hpp: the data-movement ops a Program runs on the host, byte for
// byte, instead of through the reference interpreter (which decodes every element to double
// and encodes it back).
//
//   Reshape     the same bytes (one memcpy; none when the views share memory)
//   Transpose   a permuted copy
//   Broadcast   a NUMPY broadcast copy
//   Slice       the part along one axis
//
// Each is one strided copy: the output's elements in planar order, read from the input at
// per-dimension element strides (0 along a broadcast dimension), whole rows with memcpy where
// the innermost stride is 1. The values are moved, never converted, so these steps are exact
// for every element type, as the reference is; an op whose output type differs from its
// input's (none of these do) stays on the reference path. Program (program.hpp) marks such
// steps StepKind::host.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <variant>
#include <vector>

#include "snippets/ir/graph.hpp"
#include "snippets/runtime/tensor_view.hpp"

namespace snippets::detail {

/// Whether `op` is a data-movement op a Program moves on the host.
template <class Op> bool host_movable(const Op& op) {
  return std::holds_alternative<ir::Reshape>(op) || std::holds_alternative<ir::Transpose>(op) ||
         std::holds_alternative<ir::Broadcast>(op) || std::holds_alternative<ir::Slice>(op);
}

/// Copies the elements of `out` (planar, `out.shape`) from `src` read at element `strides`
/// per output dimension, starting at element `offset`.
inline void strided_copy(const std::byte* src, std::int64_t offset,
                         const std::vector<std::int64_t>& strides, const TensorView& out) {
  const std::size_t rank = out.shape.rank(), size = size_of(out.type);
  const std::int64_t count = out.shape.element_count();
  if (count == 0) return;
  auto* dst = static_cast<std::byte*>(out.data);
  if (rank == 0) return void(std::memcpy(dst, src + offset * std::int64_t(size), size));
  const std::int64_t row = out.shape[rank - 1], step = strides[rank - 1];
  std::vector<std::int64_t> index(rank, 0);
  std::int64_t at = offset; // element of src at `index`
  for (std::int64_t done = 0; done < count; done += row) {
    const std::byte* from = src + at * std::int64_t(size);
    if (step == 1)
      std::memcpy(dst, from, std::size_t(row) * size);
    else
      for (std::int64_t i = 0; i < row; ++i)
        std::memcpy(dst + i * std::int64_t(size), from + i * step * std::int64_t(size), size);
    dst += row * std::int64_t(size);
    // next row: the odometer over the outer dimensions
    for (std::size_t d = rank - 1; d-- > 0;) {
      at += strides[d];
      if (++index[d] < out.shape[d]) break;
      at -= strides[d] * out.shape[d];
      index[d] = 0;
    }
  }
}

/// Runs a host_movable op: `in` and `out` are planar views of one element type.
template <class Op>
void run_host_step(const Op& op, const ConstTensorView& in, const TensorView& out) {
  const std::size_t rank = in.shape.rank();
  std::vector<std::int64_t> in_strides(rank, 1); // planar strides of the input, in elements
  for (std::size_t d = rank; d-- > 1;) in_strides[d - 1] = in_strides[d] * in.shape[d];
  const auto* src = static_cast<const std::byte*>(in.data);
  if (std::holds_alternative<ir::Reshape>(op)) {
    // an empty tensor's pointers may be null (a dynamic model's arena of 0 bytes)
    const auto bytes = std::size_t(in.shape.element_count()) * size_of(in.type);
    if (bytes > 0 && in.data != out.data) std::memmove(out.data, in.data, bytes);
  } else if (const auto* t = std::get_if<ir::Transpose>(&op)) {
    std::vector<std::int64_t> strides(rank);
    for (std::size_t i = 0; i < rank; ++i) strides[i] = in_strides[t->order[i]];
    strided_copy(src, 0, strides, out);
  } else if (std::holds_alternative<ir::Broadcast>(op)) {
    const std::size_t out_rank = out.shape.rank();
    std::vector<std::int64_t> strides(out_rank, 0); // aligned on the right; 1 -> 0
    for (std::size_t i = 0; i < rank; ++i)
      if (in.shape[i] != 1) strides[out_rank - rank + i] = in_strides[i];
    strided_copy(src, 0, strides, out);
  } else {
    const auto& s = std::get<ir::Slice>(op);
    const std::size_t axis =
        static_cast<std::size_t>(s.axis < 0 ? s.axis + std::int64_t(rank) : s.axis);
    strided_copy(src, s.start * in_strides[axis], in_strides, out);
  }
}

} // namespace snippets::detail
