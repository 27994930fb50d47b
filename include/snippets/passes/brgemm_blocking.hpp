// SPDX-License-Identifier: Apache-2.0
// snippets/passes/brgemm_blocking.hpp: how a Brgemm is blocked, shared by LowerBrgemm (which
// chooses it) and the backend's Brgemm emitter (which follows it).
//
//  - brgemm_shape(): the element strides of A and B (transposes and folded layouts included)
//    and the extents N and K of one product;
//  - ProductStrides: where an epilogue tensor's elements are, per row and per column;
//  - EpiloguePlan: the vector temporaries an epilogue needs beside the accumulators;
//  - choose_tile() / block_rows() / row_split_blocks(): the register tile and the rows per
//    Brgemm (fewer when threads share the rows of a batch index);
//  - column_split(): whether calls may take a range of the last product's column panels;
//  - pack_b(): constant weights in the panel layout (f32, bf16 pairs or quads of bytes), at
//    compile time.
#pragma once

#include <algorithm>
#include <bit>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <vector>

#include "snippets/ir/linear_ir.hpp"
#include "snippets/passes/lir_queries.hpp"
#include "snippets/passes/pass.hpp"

namespace snippets::passes {

/// Elements between rows and between columns of the product in a tensor seen through this
/// port (its domain-aligned shape and memory order): 0 along a broadcast dimension.
struct ProductStrides {
  std::int64_t row, col;
  explicit ProductStrides(const ir::PortDescriptor& d)
      : row(stride_along(d, d.shape.size() - 2)), col(stride_along(d, d.shape.size() - 1)) {}
};

/// The extents and strides of `mm` reading A and B through these ports (shapes right-aligned
/// to the product's rank), of types `a_type` and `b_type` (f32 or bf16; u8 or i8: quads). `lanes`:
/// elements per vector register; `pairs`: VDPBF16PS is there (`byte_dot`: u8/i8 operands are
/// multiplied as bytes, quads, else as 16-bit words). Two bf16 operands are multiplied in
/// pairs of depths when A's depths are contiguous and B's pairs can be packed (rows contiguous, or
/// columns contiguous with an even depth and column stride, read as dwords).
inline ir::BrgemmShape brgemm_shape(const ir::MatMul& mm, const ir::PortDescriptor& a,
                                    const ir::PortDescriptor& b, int lanes, ElementType a_type,
                                    ElementType b_type, bool pairs, bool byte_dot = true) {
  const std::size_t R = a.shape.size();
  const std::size_t a_row = mm.transpose_a ? R - 1 : R - 2, a_depth = R + R - 3 - a_row;
  const std::size_t b_depth = mm.transpose_b ? R - 1 : R - 2, b_col = R + R - 3 - b_depth;
  ir::BrgemmShape s;
  s.n = b.shape[b_col];
  s.k = a.shape[a_depth];
  s.a_row = stride_along(a, a_row);
  s.a_depth = stride_along(a, a_depth);
  s.b_depth = stride_along(b, b_depth);
  s.b_col = stride_along(b, b_col);
  if (s.n == 1) s.b_col = 1; // a stride along an extent of 1 is never taken
  if (s.k == 1) s.a_depth = s.b_depth = 1;
  s.lanes = lanes;
  s.a_type = a_type;
  s.b_type = b_type;
  const bool bf16 = a_type == ElementType::bf16 && b_type == ElementType::bf16;
  const bool b_pairs = s.b_col == 1 || (s.b_depth == 1 && s.k % 2 == 0 && s.b_col % 2 == 0);
  s.pairs = pairs && bf16 && s.a_depth == 1 && b_pairs;
  const bool integer = is_byte_integer(a_type) && is_byte_integer(b_type);
  s.quads = integer && byte_dot;
  s.words = integer && !byte_dot;
  s.a_zero = mm.a_zero_point;
  return s;
}

/// Vector temporaries of a Brgemm epilogue: the output of each op, and a register for each
/// input read from memory (an input tensor, a scalar) while its op runs (the output may reuse
/// it, or the temporary of an input read for the last time). `temp` maps an op to its output's
/// temporary and `(op, input)` to the loaded input's; `peak` is how many are live at once. The
/// emitter follows this plan; LowerBrgemm sizes the register tile with it.
template <class T> struct EpiloguePlan {
  std::map<const ir::Expression<T>*, int> temp;
  std::map<std::pair<const ir::Expression<T>*, std::size_t>, int> loaded;
  int peak = 0;

  EpiloguePlan(const ir::Expression<T>& brgemm, std::span<ir::Expression<T>* const> ops) {
    std::map<const ir::Expression<T>*, std::size_t> last_use;
    for (std::size_t i = 0; i < ops.size(); ++i)
      for (std::size_t j = 0; j < ops[i]->num_inputs(); ++j) last_use[&ops[i]->input_expr(j)] = i;
    std::set<int> free;
    int next = 0;
    auto take = [&] {
      int t = next;
      if (free.empty())
        ++next;
      else
        t = *free.begin(), free.erase(free.begin());
      peak = std::max(peak, next - static_cast<int>(free.size()));
      return t;
    };
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const ir::Expression<T>* op = ops[i];
      std::vector<int> released;
      for (std::size_t j = 0; j < op->num_inputs(); ++j) {
        const auto* src = &op->input_expr(j);
        if (src == &brgemm || temp.count(src)) {
          if (temp.count(src) && last_use[src] == i) released.push_back(temp[src]);
          continue;
        }
        const int t = take(); // read from memory for this op only
        loaded[{op, j}] = t;
        released.push_back(t);
      }
      // the emitters write their output after reading their inputs (emitter.hpp), so the
      // output may take the temporary of its last input that dies here (FMA's addend: no copy)
      for (int t : released) free.insert(t);
      if (std::holds_alternative<ir::Store>(op->op)) continue;
      if (!released.empty()) free.erase(released.back());
      temp[op] = released.empty() ? take() : released.back();
    }
  }
};

/// The Convert(i32) of an integer product's sums (AlignElementTypes): the accumulators hold it
/// already (their conversion to f32 is an integer within [-2^31, 2^31] and not NaN, what that
/// Convert would make of it), so an epilogue skips it.
template <class T> bool sums_as_i32(const ir::Expression<T>& x, const ir::Expression<T>& brgemm) {
  const auto* c = std::get_if<ir::Convert>(&x.op);
  return c && c->to == ElementType::i32 && &x.input_expr(0) == &brgemm;
}

/// A Store of an i32 output of an integer product's sums, or of their Convert to i32: it takes
/// the int32 accumulator as it is, exact beyond f32's 2^24.
template <class T> bool raw_i32_store(const ir::Expression<T>& x, const ir::Expression<T>& brgemm) {
  const auto* st = std::get_if<ir::Store>(&x.op);
  if (!st || st->type != ElementType::i32) return false;
  const ir::Expression<T>* src = &x.input_expr(0);
  return src == &brgemm || sums_as_i32(*src, brgemm);
}

/// The register tile whose calls cost least on a model of the micro-kernel, among those whose
/// accumulators, B vectors and epilogue fit the registers. A depth step of a tile of r rows by
/// c vectors issues r x c multiply-adds (two a cycle) and r + c loads, and costs, in
/// multiply-add slots, the most of: its r x c products; 8, the chains that hide a multiply-add's
/// latency (4 cycles); and, when its panel of B is over 16 KiB (it does not stay in L1 beside
/// A), its B vectors streamed from L2, 3/8 of a slot per lane of a vector; plus a quarter slot per
/// load that it cannot hide entirely. Every row tile of a panel streams B again, so rows that leave
/// a short last tile (M = 8 in tiles of 6) cost more than tiles that divide them; with many rows
/// the 6 x 4 tile wins (fewest loads per product). Candidates: up to `max_rows` rows (at most
/// cfg.max_tile_rows) by 4 vectors with 32 vector registers (AVX-512, NEON), by 2 with 16 (AVX2).
/// On Zen 5 (f32, [8,256] x [256,256], one thread) 8 x 3 tiles run 1.07x faster than 6 x 4
/// (docs/matmul.md, "Register tiles"). `M`: rows of the product.
template <class T>
void choose_tile(ir::BrgemmShape& s, Dim M, const ir::Expression<T>& mm,
                 std::span<ir::Expression<T>* const> epilogue, const LoweringConfig& cfg,
                 int max_rows) {
  const int vectors = static_cast<int>(std::max<std::int64_t>(1, (s.n + s.lanes - 1) / s.lanes));
  const int temps = EpiloguePlan<T>(mm, epilogue).peak;
  const int for_epilogue = cfg.vector_registers - cfg.reserved_vector_registers - temps;
  const int loop_temps = s.words ? 2 : 1; // A's broadcast, and the products of words
  const int max_n = std::min(cfg.vector_registers >= 32 ? 4 : 2, vectors);
  const Dim rows = std::max<Dim>(M, 1);
  auto fits = [&](int r, int c) {
    return r * c + c + loop_temps <= cfg.vector_registers && r * c <= for_epilogue;
  };
  auto step_cost = [&](std::int64_t r, std::int64_t c) {
    const bool streamed = s.depth_rows() * c * s.lanes * 4 > (std::int64_t{16} << 10);
    const double busy = std::max({double(r * c), 8.0, streamed ? 0.375 * double(c * s.lanes) : 0});
    return busy + 0.25 * double(r + c);
  };
  auto cost = [&](int r, int c) { // a depth step of every tile of every panel
    double total = 0;
    for (int at = 0; at < vectors; at += c) {
      const std::int64_t width = std::min(c, vectors - at);
      total += double(rows / r) * step_cost(r, width) + (rows % r ? step_cost(rows % r, width) : 0);
    }
    return total;
  };
  s.m_r = 0;
  double best = 0;
  for (int c = max_n; c >= 1; --c)
    for (int r = static_cast<int>(std::min<Dim>(max_rows, rows)); r >= 1; --r) {
      if (!fits(r, c)) continue;
      const double k = cost(r, c);
      if (s.m_r == 0 || k < best) s.m_r = r, s.n_r = c, best = k; // a tie keeps the earlier
    }
  if (s.m_r == 0)
    raise("snippets.compile.register_pressure",
          "the epilogue of MatMul '" + mm.name + "' needs " + std::to_string(temps) +
              " vector registers beside its accumulators; split the epilogue into another "
              "subgraph");
}

/// Rows per Brgemm: about 128 KiB of `row_bytes` rows (of A, and of the scores between the
/// products of an attention kernel), whole tiles of `m_r`, and (when the rows are the parallel
/// loop) at least four blocks to share out.
inline std::int64_t block_rows(int m_r, Dim M, std::int64_t row_bytes, bool parallel_rows) {
  // a product of depth 0 reads no rows: the budget limits nothing
  std::int64_t rows =
      row_bytes > 0 ? std::max<std::int64_t>(1, (std::int64_t{128} << 10) / row_bytes) : M;
  if (parallel_rows) rows = std::min<std::int64_t>(rows, (M + 3) / 4);
  rows = std::max<std::int64_t>(m_r, rows / m_r * m_r);
  return std::min<std::int64_t>(rows, M);
}

/// The blocks of rows a kernel with one batch dimension aims to offer the threads
/// (runtime/work_division.hpp shares out batch indices times blocks of rows): about four
/// for each of 192 threads, the largest servers the division is planned for.
inline constexpr std::int64_t row_split_units = 768;

/// Rows per Brgemm when threads may take blocks of rows of one batch index (a kernel with one
/// batch dimension of `outer` indices, attention's heads): `cache_rows` (block_rows()) unless
/// `outer` x blocks would give fewer than row_split_units blocks; then fewer rows, whole tiles,
/// and at least 8 (below two tiles of m_r rows: blocks of 8 rows in tiles of 8 or of at most 4,
/// so a block has no short tile). `stages`: each has a `shape` (BrgemmShape) whose m_r may shrink.
template <class Stages>
std::int64_t row_split_blocks(Stages& stages, Dim M, Dim outer, std::int64_t cache_rows) {
  const std::int64_t want = (M * outer + row_split_units - 1) / row_split_units;
  if (want >= cache_rows) return cache_rows;
  const int m_r = stages.front().shape.m_r;
  std::int64_t rows = std::max<std::int64_t>(8, want);
  if (rows >= 2 * m_r) {
    rows = rows / m_r * m_r;
  } else {
    rows = 8;
    for (auto& s : stages) // a tile that divides the block stays (8 rows), others take 4 at most
      if (rows % s.shape.m_r != 0) s.shape.m_r = std::min(s.shape.m_r, 4);
  }
  return std::min<std::int64_t>(rows, M);
}

/// Whether a call of a kernel without batch dimensions or Softmax (a GEMM, an MLP chain) may
/// take a range of its last product's column panels: the target's Brgemm reads them from the
/// call (LinearIR::column_ranges) and the last B has two panels or more. Then sets
/// LinearIR::column_unit (one panel), column_stride_bytes (per argument, bytes per column: the
/// last stage's outputs and epilogue inputs, 0 where they broadcast along the columns, and its
/// B input, whose BrgemmCopyB packs the call's panels only) and column_shared (the products
/// before the last compute all their columns in every call, as the next reads whole rows:
/// their share of a row's multiply-adds). Not when an argument whose pointer would move is also
/// read where it must not: A (a residual), or by a product before the last. `stages`: each has
/// `mm`, `b`, `shape`, `b_offset` (-1: constant B) and `epilogue` (lower_brgemm.hpp).
template <class T, class Stages>
bool column_split(ir::LinearIR<T>& lir, const Stages& stages, std::size_t n_args) {
  const auto& last = stages.back();
  if (!lir.column_ranges || last.shape.panels() < 2) return false;
  std::vector<std::int64_t> bytes(n_args, -1); // -1: not read by the last stage
  std::vector<bool> fixed(n_args, false);      // read where the columns do not move
  auto uses = [&](const auto& s, auto&& f) {   // f(index, elements per column)
    if (s.b_offset >= 0) f(s.b->data_index, s.shape.b_col);
    for (const ir::Expression<T>* e : s.epilogue) {
      if (std::holds_alternative<ir::Store>(e->op))
        f(e->data_index, ProductStrides(e->out_desc(0)).col);
      for (std::size_t i = 0; i < e->num_inputs(); ++i)
        if (const auto& in = e->input_expr(i); std::holds_alternative<ir::Parameter>(in.op))
          f(in.data_index, ProductStrides(e->in_desc(i)).col);
    }
  };
  fixed.at(stages.front().mm->input_expr(0).data_index) = true;
  for (std::size_t i = 0; i + 1 < stages.size(); ++i)
    uses(stages[i], [&](std::size_t index, std::int64_t) {
      if (index < n_args) fixed[index] = true;
    });
  bool ok = true;
  uses(last, [&](std::size_t index, std::int64_t col) {
    if (index >= n_args) return; // scratch
    const std::int64_t b = col * static_cast<std::int64_t>(size_of(lir.arg_types.at(index)));
    ok = ok && !(fixed[index] && b != 0) && (bytes[index] < 0 || bytes[index] == b);
    bytes[index] = b;
  });
  if (!ok) return false;
  for (std::int64_t& b : bytes) b = std::max<std::int64_t>(b, 0);
  std::int64_t all = 0; // multiply-adds per row
  for (const auto& s : stages) all += s.shape.k * s.shape.n;
  const std::int64_t before = all - last.shape.k * last.shape.n;
  lir.column_unit = last.shape.panel_width();
  lir.column_stride_bytes = std::move(bytes);
  lir.column_shared = all > 0 ? double(before) / double(all) : 0.0;
  return true;
}

/// B (planar values of a [K, N] or transposed [N, K] constant) in the panels of `s` (f32,
/// bf16 pairs or quads of bytes bit-cast into the 4-byte words, and the compensation row).
inline std::shared_ptr<const std::vector<float>> pack_b(const std::vector<double>& values,
                                                        const ir::BrgemmShape& s) {
  auto out = std::make_shared<std::vector<float>>(std::size_t(s.packed_elements()), 0.0f);
  const std::int64_t w = s.panel_width(), rows = s.panel_rows(), depths = s.depth_rows();
  auto value = [&](std::int64_t k, std::int64_t col) {
    if (k >= s.k) return 0.0;
    return values.size() == 1 ? values[0] : values[std::size_t(k * s.b_depth + col * s.b_col)];
  };
  auto quad = [&](std::int64_t r, std::int64_t col) { // the bytes of depths 4r .. 4r + 3
    std::uint32_t bits = 0;
    for (int i = 0; i < 4; ++i)
      bits |= std::uint32_t(std::uint8_t(std::int8_t(value(4 * r + i, col)))) << (8 * i);
    return bits;
  };
  auto word_pair = [&](std::int64_t r, std::int64_t col) { // the words of depths 2r, 2r + 1
    return std::uint32_t(std::uint16_t(std::int16_t(value(2 * r, col)))) |
           std::uint32_t(std::uint16_t(std::int16_t(value(2 * r + 1, col)))) << 16;
  };
  auto compensation = [&](std::int64_t col) { // -a_offset x the column's sum (BrgemmShape)
    std::uint32_t sum = 0;                    // modulo 2^32, as the kernel's sums
    for (std::int64_t k = 0; k < s.k; ++k)
      sum += static_cast<std::uint32_t>(static_cast<std::int32_t>(value(k, col)));
    return std::uint32_t(0) - static_cast<std::uint32_t>(s.a_offset()) * sum;
  };
  for (std::int64_t p = 0; p < s.panels(); ++p)
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < w && p * w + c < s.n; ++c) {
        const std::int64_t col = p * w + c;
        float& word = (*out)[std::size_t((p * rows + r) * w + c)];
        if (s.quads || s.words)
          word = std::bit_cast<float>(r < depths ? (s.quads ? quad(r, col) : word_pair(r, col))
                                                 : compensation(col));
        else if (s.pairs)
          word = std::bit_cast<float>(std::uint32_t{bf16_bits(value(2 * r, col))} |
                                      std::uint32_t{bf16_bits(value(2 * r + 1, col))} << 16);
        else
          word = static_cast<float>(value(r, col));
      }
  return out;
}

} // namespace snippets::passes
