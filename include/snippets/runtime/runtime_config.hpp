// SPDX-License-Identifier: Apache-2.0
// snippets/runtime/runtime_config.hpp: the run-time configurator of dynamic kernels.
//
// compile() of a body with dynamic dimensions gives one shape-agnostic kernel: a loop nest of
// fixed rank R whose work amounts (CallArgs::work) and outer-loop pointer increments
// (CallArgs::config) are read at run time, with masked innermost tails of any length. Before a
// call, configure() turns the actual input shapes into those numbers:
//  - domain: the NUMPY broadcast of the inputs, checked against every static dimension;
//  - collapse: dimension d merges into the next dimension n > d of extent > 1 when every
//    argument is full in both or 1 in both (OptimizeDomain's rule, at run time) and no argument
//    the kernel broadcasts along n (a static 1 there) would stop being 1. Positions never move:
//    d becomes 1, so the kernel's compile-time facts about each dimension still hold. Nor
//    does a merge make an input broadcast along the innermost dimension that was not before.
//    Full inputs of [1,3,10,10] run as [1,1,1,300]: one innermost loop of 300.
//  - table: for each outer dimension d < R-1 and argument a, the bytes loop d advances a's
//    pointer per iteration (elements times a's element size): a's stride along d minus what the
//    loop inside it moved (D[d+1] times the stride along d+1; for the innermost loop, the whole
//    vectors it walked); then, at d = R-1, a's stride along R-2 in bytes, how far the next row
//    is (0 above 64 KiB): the prefetch distance of a kernel that reduces rows
//    (passes/prefetch_next_rows.hpp);
//  - split: the outermost dimension of extent > 1, which the executor divides among threads;
//  - variant: the inputs whose innermost extent is 1 while the domain's is not, and which the
//    kernel was compiled to read as full vectors (their innermost dimension was dynamic). Such
//    a call needs the kernel compiled with that extent fixed to 1; CompiledKernel compiles it
//    once per distinct set and keeps it.
// A kernel that reduces rows (the reductions and Softmax over the innermost axis;
// DynamicLayout::rows) walks each row with several innermost loops, and:
//  - no dimension merges into the innermost one (a row stays a row), and threads split an outer
//    dimension only (with every outer extent 1, one thread runs the single row);
//  - an output's innermost extent is that of the inputs it reads along the row, not through a
//    reduction (DynamicLayout::row_inputs), as NUMPY broadcasting gives it: 1 for a
//    reduction's result (and what is computed from it alone), the row's length otherwise
//    (RuntimeConfig::one_per_row); its other extents are the domain's;
//  - a row of 0 elements still gives each reduced output its value (the sum 0, the max -inf):
//    the kernel runs whenever an output has elements;
//  - its Buffers are rows of scratch: rows of the innermost extent, each padded to 64 bytes
//    (row_bytes()), at the rows DynamicLayout::buffer_rows names.
// Errors ([snippets.run.shape_mismatch]) name the argument, its shape and what was compiled.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "snippets/error.hpp"
#include "snippets/ir/lowered_ops.hpp"
#include "snippets/ir/shape.hpp"
#include "snippets/runtime/kernel_abi.hpp"

namespace snippets {

/// What the configurator needs to know about a dynamic kernel (filled by compile()).
struct DynamicLayout {
  /// Each argument's compiled shape right-aligned to the domain rank (leading 1s; `dynamic`
  /// where unknown): inputs, then outputs.
  std::vector<std::vector<Dim>> args;
  std::vector<std::size_t> own_rank;       // each argument's rank before alignment
  std::vector<std::int64_t> element_bytes; // each argument's element size in memory
  std::size_t inputs = 0;
  std::int64_t lanes = 8;                // elements per vector
  std::int64_t step = 32;                // elements per main-loop iteration (lanes times unroll)
  bool rows = false;                     // the kernel reduces its innermost dimension (see above)
  std::vector<std::uint32_t> row_inputs; // rows: per output, the inputs (bit i) it reads along
                                         // the row
  std::vector<std::int64_t> buffer_rows; // per buffer pointer: the scratch row it starts at
  std::int64_t scratch_rows = 0;         // rows of scratch a thread needs
  std::size_t rank() const { return args.empty() ? 0 : args[0].size(); }
  bool operator==(const DynamicLayout&) const = default;
};

/// One call's shapes, as a dynamic kernel reads them. Plain data on the caller's stack; compute
/// it once per shape set (CompiledKernel::configure) and reuse it for calls with those shapes.
struct RuntimeConfig {
  static constexpr std::size_t max_rank = max_dynamic_rank;
  static constexpr std::size_t max_args = max_kernel_args;
  std::size_t rank = 0, args = 0;
  std::array<Dim, max_rank> logical{}; // broadcast domain, before collapsing (the outputs' shape)
  std::array<Dim, max_rank> domain{};  // after collapsing: the work amount of each loop
  std::array<std::array<Dim, max_rank>, max_args> shapes{}; // each argument, collapsed
  std::array<std::int64_t, max_rank * max_args> table{};    // CallArgs::config
  std::size_t split = 0;                                    // the dimension threads divide
  std::uint32_t variant = 0;     // inputs broadcast along the innermost dimension at run time
  std::uint32_t one_per_row = 0; // outputs (bit o) of one element per row (rows kernels)
  std::int64_t elements = 0;     // of the domain
  bool writes = false;           // some output has elements: the kernel must run

  /// Elements between consecutive indices of dimension d for argument a (0: broadcast).
  std::int64_t stride(std::size_t a, std::size_t d) const {
    if (shapes[a][d] == 1) return 0;
    std::int64_t s = 1;
    for (std::size_t k = d + 1; k < rank; ++k) s *= shapes[a][k];
    return s;
  }
  /// The shape output `o` must have (rank `own_rank`).
  Shape output_shape(std::size_t own_rank, std::size_t o = 0) const {
    std::vector<Dim> dims(logical.begin() + std::ptrdiff_t(rank - own_rank),
                          logical.begin() + std::ptrdiff_t(rank));
    if ((one_per_row >> o & 1u) && !dims.empty()) dims.back() = 1;
    return Shape(std::move(dims));
  }
  /// Bytes of one scratch row of a row-reducing kernel (f32, padded to 64 bytes).
  std::int64_t row_bytes() const { return (domain[rank - 1] * 4 + 63) / 64 * 64; }
};

namespace detail {

[[noreturn]] inline void shape_error(std::size_t input, const Shape& got,
                                     const std::vector<Dim>& want, std::size_t own_rank,
                                     const std::string& why) {
  const Shape compiled(std::vector<Dim>(want.end() - std::ptrdiff_t(own_rank), want.end()));
  raise("snippets.run.shape_mismatch", "input " + std::to_string(input) + " has shape " +
                                           got.to_string() + " but the kernel was compiled for " +
                                           compiled.to_string() + ": " + why);
}

} // namespace detail

/// Fills `c` for inputs of shapes shape_of(0..layout.inputs-1) (each a Shape).
template <class ShapeOf>
void configure(const DynamicLayout& layout, ShapeOf&& shape_of, RuntimeConfig& c) {
  const std::size_t R = layout.rank(), A = layout.args.size(), r = R - 1;
  SNIPPETS_ASSERT(R >= 1 && R <= RuntimeConfig::max_rank && A <= RuntimeConfig::max_args)
      << "dynamic layout of rank " << R << " with " << A << " arguments";
  c.rank = R;
  c.args = A;
  // inputs: rank and static dimensions, then right-aligned
  for (std::size_t i = 0; i < layout.inputs; ++i) {
    const Shape& s = shape_of(i);
    const std::size_t own = layout.own_rank[i];
    if (s.rank() != own) detail::shape_error(i, s, layout.args[i], own, "the rank differs");
    for (std::size_t d = 0; d < R; ++d) {
      const Dim got = d < R - own ? 1 : s[d - (R - own)];
      const Dim want = layout.args[i][d];
      if (got < 0) detail::shape_error(i, s, layout.args[i], own, "give every dimension a value");
      if (want != dynamic && got != want)
        detail::shape_error(i, s, layout.args[i], own,
                            "dimension " + std::to_string(d - (R - own)) + " is static");
      c.shapes[i][d] = got;
    }
  }
  // the broadcast domain; outputs have its shape
  c.elements = 1;
  bool overflow = false, empty = false; // inputs that fit may broadcast to outputs that do not
  std::int64_t bytes = 0;
  for (std::size_t d = 0; d < R; ++d) {
    Dim D = 1;
    for (std::size_t i = 0; i < layout.inputs; ++i) {
      const Dim x = c.shapes[i][d];
      if (x == 1 || x == D) continue;
      if (D != 1)
        detail::shape_error(i, shape_of(i), layout.args[i], layout.own_rank[i],
                            "it does not broadcast with the other inputs (" + std::to_string(D) +
                                " against " + std::to_string(x) + " in aligned dimension " +
                                std::to_string(d) + ")");
      D = x;
    }
    for (std::size_t o = layout.inputs; o < A; ++o) {
      Dim O = D; // the output's extent: the domain's, or along a row, its row inputs'
      if (layout.rows && d == r) {
        O = 1;
        for (std::size_t i = 0; i < layout.inputs; ++i)
          if ((layout.row_inputs[o - layout.inputs] >> i & 1u) && c.shapes[i][r] != 1)
            O = c.shapes[i][r];
      }
      const Dim want = layout.args[o][d];
      if (want != dynamic && O != want)
        raise("snippets.run.shape_mismatch",
              "the inputs broadcast to " + std::to_string(O) + " in aligned dimension " +
                  std::to_string(d) + " of output " + std::to_string(o - layout.inputs) +
                  " but the kernel's outputs were compiled with " + std::to_string(want));
      c.shapes[o][d] = O;
    }
    c.logical[d] = c.domain[d] = D;
    overflow |= __builtin_mul_overflow(c.elements, D, &c.elements) ||
                __builtin_mul_overflow(c.elements, std::int64_t{8}, &bytes);
    empty |= D == 0;
  }
  if (empty) c.elements = 0;
  c.one_per_row = 0;
  c.writes = false;
  for (std::size_t o = layout.inputs; o < A; ++o) {
    if (layout.rows && c.shapes[o][r] == 1) c.one_per_row |= 1u << (o - layout.inputs);
    bool some = true;
    for (std::size_t d = 0; d < R; ++d) some = some && c.shapes[o][d] != 0;
    c.writes = c.writes || some;
  }
  if (overflow && !empty)
    raise("snippets.shape.too_many_elements",
          "the inputs broadcast to more bytes than int64 can count; use smaller tensors");
  // collapse, innermost pairs first; positions stay
  for (std::size_t d = r; d-- > 0;) {
    if (c.domain[d] == 1) continue;
    std::size_t n = d + 1;
    while (n < r && c.domain[n] == 1) ++n;
    bool ok = !(layout.rows && n == r); // a row stays a row
    for (std::size_t a = 0; a < A && ok; ++a) {
      const auto& s = c.shapes[a];
      const bool full = s[d] == c.domain[d] && s[n] == c.domain[n];
      const bool one = s[d] == 1 && s[n] == 1;
      ok = (full || one) && (layout.args[a][n] != 1 || s[d] == 1);
      // nor would an input read as full vectors become broadcast along the innermost dim (it
      // would need another kernel; [3,1] with [1,1] runs as 3 rows of one element instead)
      if (n == r && a < layout.inputs && one && c.domain[n] == 1 && layout.args[a][r] != 1)
        ok = false;
    }
    if (!ok) continue;
    c.domain[n] *= c.domain[d];
    c.domain[d] = 1;
    for (std::size_t a = 0; a < A; ++a) {
      c.shapes[a][n] *= c.shapes[a][d];
      c.shapes[a][d] = 1;
    }
  }
  c.variant = 0;
  for (std::size_t i = 0; i < layout.inputs; ++i)
    if (c.shapes[i][r] == 1 && c.domain[r] != 1 && layout.args[i][r] != 1) c.variant |= 1u << i;
  c.split = layout.rows ? 0 : r; // rows: never split a row (r >= 1: OptimizeDomain)
  for (std::size_t d = 0; d < (layout.rows ? r : R); ++d)
    if (c.domain[d] != 1) {
      c.split = d;
      break;
    }
  const std::int64_t walked = c.domain[r] / layout.lanes * layout.lanes; // by whole vectors
  for (std::size_t d = 0; d < r; ++d)
    for (std::size_t a = 0; a < A; ++a) {
      const std::int64_t inner =
          d + 1 < r ? c.domain[d + 1] * c.stride(a, d + 1) : walked * c.stride(a, r);
      c.table[d * A + a] = (c.stride(a, d) - inner) * layout.element_bytes[a];
    }
  for (std::size_t a = 0; r > 0 && a < A; ++a) { // the row strides
    const std::int64_t bytes = c.stride(a, r - 1) * layout.element_bytes[a];
    c.table[r * A + a] = bytes <= ir::max_prefetch_distance ? bytes : 0;
  }
}

} // namespace snippets
