// SPDX-License-Identifier: Apache-2.0
// snippets/ir/lowered_ops.hpp: the ops that exist only in the Linear IR.
//
// The control-flow passes insert them; each has an emitter in every target:
//  - Load / Store: move `count` elements between memory and a vector register. `count` is the
//    loop increment (a full vector) or, in a tail iteration, fewer elements (masked access).
//    `offset` (elements) is added to the data pointer: unrolled copies of a loop body use it.
//    `count == runtime_count`: the masked tail of a dynamic loop, whose element count is the
//    loop counter's value at run time. A Load's `stride` (elements between lanes) is 1 but
//    for a strided read of an input along the innermost dimension: then it is a gather.
//    `prefetch` (bytes, 0: none): also bring the memory that far past the loaded elements
//    into the cache, the same place one row on (passes/prefetch_next_rows.hpp);
//    `runtime_prefetch`: as far as the row's stride, which a dynamic kernel reads at run time
//    (RuntimeConfig::table's row of row strides).
//  - BroadcastLoad: load one element (at `offset`) and fill a vector register with it.
//  - `type` (Load, Store, BroadcastLoad): the element type in memory. Registers always hold
//    f32: a load converts to f32 exactly (i32 rounds to nearest), a store converts from f32
//    as Convert does (ir/op_tags.hpp: round to nearest even; integers truncate and saturate,
//    NaN -> 0). `offset` counts elements of this type.
//  - BroadcastMove: fill a vector register with lane 0 of another.
//  - LoopBegin / LoopEnd: the bounds of loop `loop_id` (see LoopManager); LoopEnd takes the
//    data pointers the loop advances as inputs.
//  - FusedMulAdd: a * b + c with one rounding (FMA contraction of Multiply -> Add).
//  - Spill / Reload: save a vector value to stack slot `slot` / load it back (InsertRegSpills).
//  - ReduceInit / ReduceAccumulate / HorizonReduce: a ReduceSum, ReduceMax, ReduceMin or
//    ReduceProd over the innermost dimension (passes/decompose_reductions.hpp; the seed's reduce
//    decomposition). ReduceInit fills a vector accumulator with the neutral element (0, -inf,
//    +inf or 1) before the innermost loop;
//    ReduceAccumulate(acc, x) folds x into acc in place (it has no output: acc stays live until
//    the HorizonReduce after the loop); in a tail iteration only its first `count` lanes count
//    (the seed's Fill). HorizonReduce (the seed's HorizonSum / HorizonMax) reduces the lanes and
//    broadcasts the result to every lane; with `columns` (a reduction over middle axes,
//    passes/tile_columns.hpp) each lane is a column's value already: it copies the accumulator.
//  - Buffer: per-thread scratch memory between two innermost loops of one row (InsertBuffers):
//    a Store writes it, Loads in later loops read it. `elements` per row; AllocateBuffers gives
//    it a place in the scratchpad (`offset`, bytes) and a data pointer (`reg_group`).
//  - Brgemm / BrgemmCopyB: a MatMul (passes/lower_brgemm.hpp). See BrgemmShape.
//  - SoftmaxRows: a Softmax over whole rows in memory, in place, between the two Brgemms of an
//    attention kernel (or after the one of a MatMul -> Softmax kernel).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "snippets/ir/op_tags.hpp"

namespace snippets::ir {

#define SNIPPETS_LOWERED_TAG(Name, Members)                                                        \
  struct Name {                                                                                    \
    static constexpr std::string_view name = #Name;                                                \
    static constexpr OpCategory category = OpCategory::special;                                    \
    static constexpr bool float_only = false;                                                      \
    Members bool operator==(const Name&) const = default;                                          \
  }

SNIPPETS_LOWERED_TAG(Load, std::int64_t count = 0; std::int64_t offset = 0;
                     ElementType type = ElementType::f32; std::int64_t stride = 1;
                     std::int64_t prefetch = 0;);
SNIPPETS_LOWERED_TAG(Store, std::int64_t count = 0; std::int64_t offset = 0;
                     ElementType type = ElementType::f32;);
SNIPPETS_LOWERED_TAG(BroadcastLoad, std::int64_t offset = 0; ElementType type = ElementType::f32;);
SNIPPETS_LOWERED_TAG(BroadcastMove, );
SNIPPETS_LOWERED_TAG(LoopBegin, std::size_t loop_id = 0;);
SNIPPETS_LOWERED_TAG(LoopEnd, std::size_t loop_id = 0;);
SNIPPETS_LOWERED_TAG(FusedMulAdd, );
SNIPPETS_LOWERED_TAG(Spill, std::size_t slot = 0;);
SNIPPETS_LOWERED_TAG(Reload, std::size_t slot = 0;);

/// max_ignore_nan: ReduceMax::ignore_nan (NaN lanes left out).
enum class ReduceKind : std::uint8_t { sum, max, max_ignore_nan, min, prod };
SNIPPETS_LOWERED_TAG(ReduceInit, ReduceKind kind = ReduceKind::sum;);
SNIPPETS_LOWERED_TAG(ReduceAccumulate, ReduceKind kind = ReduceKind::sum; std::int64_t count = 0;);
SNIPPETS_LOWERED_TAG(HorizonReduce, ReduceKind kind = ReduceKind::sum; bool columns = false;);
SNIPPETS_LOWERED_TAG(Buffer, std::int64_t elements = 0; std::int64_t offset = -1;
                     std::size_t reg_group = 0;);

/// The blocking of one Brgemm: a register tile of `m_r` rows by `n_r` vectors, and B repacked
/// into panels of `n_r` vectors: panel p holds rows 0..k-1 of columns [p*w, p*w + w), w =
/// n_r * lanes, zero past n (each row of a panel is one contiguous run of w floats).
/// Strides are in elements: A is read at row * a_row + depth * a_depth (a transposed A swaps
/// them), and B (before packing) at depth * b_depth + column * b_col.
/// A and B are f32 or bf16 in memory (`a_type`, `b_type`). With `pairs` (both bf16, AVX-512
/// with AVX512_BF16) each panel row is a pair of depths: w dwords, each holding the bf16 of
/// depths 2i and 2i + 1 of one column (the second zero past k), multiplied by VDPBF16PS.
/// Otherwise panels hold f32, converted from bf16 when B is bf16.
struct BrgemmShape {
  std::int64_t n = 0, k = 0;
  std::int64_t a_row = 0, a_depth = 1;
  std::int64_t b_depth = 0, b_col = 1;
  int m_r = 1, n_r = 1, lanes = 16;
  ElementType a_type = ElementType::f32, b_type = ElementType::f32;
  bool pairs = false;
  /// u8/i8 operands multiplied as bytes into int32 sums (VPDPBUSD): a panel row holds four
  /// depths of each column as the bytes of a dword (zero past K). VPDPBUSD reads A unsigned,
  /// so an i8 A is read as A + 128; that and A's zero point (MatMul::a_zero_point) make the
  /// panel's last row, int32s -a_offset() times the column's sum over B, that the sums start
  /// from (compensated()).
  bool quads = false;
  /// u8/i8 operands multiplied as 16-bit words into int32 sums (VPMADDWD, where the target has
  /// no byte dot products): a panel row holds two depths of each column as the words of a
  /// dword (B sign-extended, zero past K), A is read as it is (zero- or sign-extended).
  bool words = false;
  /// Quads whose dot product reads A signed and B signed (AArch64's SDOT) rather than A
  /// unsigned (VPDPBUSD): a u8 A is read as A - 128 (its sign bits flipped), an i8 A as it is.
  bool signed_a = false;
  std::int32_t a_zero = 0;
  std::int64_t panel_width() const { return std::int64_t{n_r} * lanes; }
  std::int64_t panels() const { return (n + panel_width() - 1) / panel_width(); }
  /// What the kernel's A exceeds (A - a_zero) by: the zero point, plus 128 for an i8 A read
  /// unsigned or minus 128 for a u8 A read signed (signed_a).
  std::int32_t a_offset() const {
    const ElementType flipped = signed_a ? ElementType::u8 : ElementType::i8;
    return (quads && a_type == flipped ? (signed_a ? -128 : 128) : 0) + a_zero;
  }
  bool compensated() const { return (quads || words) && a_offset() != 0; }
  /// Depths per panel row: 4 (quads), 2 (bf16 pairs, words) or 1.
  int depths_per_row() const { return quads ? 4 : pairs || words ? 2 : 1; }
  /// Panel rows of B's depths: one per depth, pair of depths or group of four.
  std::int64_t depth_rows() const { return (k + depths_per_row() - 1) / depths_per_row(); }
  /// Rows of a panel: the depths', then the compensation row.
  std::int64_t panel_rows() const { return depth_rows() + (compensated() ? 1 : 0); }
  /// 4-byte words of the packed B.
  std::int64_t packed_elements() const { return panels() * panel_rows() * panel_width(); }
  bool operator==(const BrgemmShape&) const = default;
};

/// Brgemm(A, packed B): the product of `m` rows of A (from where A's pointer is now, plus
/// `a_offset` elements) with all of B, and then the `epilogue` expressions that follow it in
/// the LIR (elementwise ops on the product and Stores of their results), computed on the
/// accumulator registers. `b_packed`: B's panels, packed at compile time (constant weights;
/// 4-byte words: f32, bf16 pairs, or quads of bytes);
/// otherwise input 1 is the BrgemmCopyB that packed them into scratch (data pointer
/// `b_pointer`, `b_offset` elements on). `row_scales` >= 0: row r of the product is first
/// multiplied by the element at `row_scales` + r from A's data pointer (a SoftmaxRows left
/// its rows unnormalised).
/// `column_range`: the call's columns only, CallArgs::work[1] of them from column
/// CallArgs::inner_begin (whole panels; the last ones end at N): the epilogue's pointers and a
/// B input's are already there, a constant B's panels start at inner_begin / panel_width().
SNIPPETS_LOWERED_TAG(Brgemm, std::int64_t m = 0; BrgemmShape shape; std::size_t epilogue = 0;
                     std::size_t b_pointer = 0; std::int64_t b_offset = 0;
                     std::int64_t a_offset = 0; std::int64_t row_scales = -1;
                     std::shared_ptr<const std::vector<float>> b_packed;
                     bool column_range = false;);
/// BrgemmCopyB(B): packs B (from where its pointer is now) into the panels of `shape` in the
/// scratch memory of data pointer `b_pointer`, `b_offset` elements on. `column_range`: the
/// call's CallArgs::work[1] columns only (B's pointer is at the first; as Brgemm's).
SNIPPETS_LOWERED_TAG(BrgemmCopyB, BrgemmShape shape; std::size_t b_pointer = 0;
                     std::int64_t b_offset = 0; bool column_range = false;);
/// SoftmaxRows(x): x is in memory (the data pointer of this expression, `offset` elements on):
/// `rows` rows of `n` f32 elements, `row_stride` apart. Each row becomes its softmax, in place:
/// exp(x - max) / sum, max and sum over the row (NaN propagates as in the reference). With
/// `scales` >= 0 the rows keep exp(x - max) and 1 / sum of row r is stored at element
/// `scales` + r instead: the Brgemm that reads them (Brgemm::row_scales) divides its product.
/// With `quantized` >= 0 the probabilities are also quantized as ONNX QuantizeLinear does in
/// f32 steps (Convert_to(Round(p / q_scale) + q_zero), round half to even, saturated, NaN 0)
/// and written as `q_type` (u8 or i8) bytes, `n` a row, from byte 4 x `quantized` on: the A of
/// an integer second product (quantized attention).
SNIPPETS_LOWERED_TAG(SoftmaxRows, std::int64_t rows = 0; std::int64_t n = 0;
                     std::int64_t row_stride = 0; std::int64_t offset = 0; std::int64_t scales = -1;
                     std::int64_t quantized = -1; float q_scale = 1; float q_zero = 0;
                     ElementType q_type = ElementType::u8;);

#undef SNIPPETS_LOWERED_TAG

/// Load/Store count of a dynamic tail: the remaining work, known only at run time.
inline constexpr std::int64_t runtime_count = -1;
/// Load::prefetch of a dynamic kernel: one row's stride on, read at run time.
inline constexpr std::int64_t runtime_prefetch = -1;
/// Rows farther apart than this many bytes are not prefetched: the next row would not stay in
/// cache until its turn.
inline constexpr std::int64_t max_prefetch_distance = std::int64_t{64} << 10;

using LoweredOps = TypeList<Load, Store, BroadcastLoad, BroadcastMove, LoopBegin, LoopEnd,
                            FusedMulAdd, Spill, Reload, ReduceInit, ReduceAccumulate, HorizonReduce,
                            Buffer, Brgemm, BrgemmCopyB, SoftmaxRows>;

} // namespace snippets::ir
