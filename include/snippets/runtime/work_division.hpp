// SPDX-License-Identifier: Apache-2.0
// snippets/runtime/work_division.hpp: which part of a kernel's domain each thread runs.
//
// The executor (CompiledKernel::run_unchecked, run_configured) asks divide_work() and runs
// exactly its shares, so what the tests check (tests/test_work_division.cpp) is what runs.
// The index space is one domain dimension the kernel walks at run time, `outer` (the parallel
// loop), times optionally the next one, `inner`, when the kernel can run a part of it:
//  - a static MatMul kernel with one batch dimension (attention's heads): outer = the batch
//    index, inner = rows in blocks of the Brgemm's m_blk (its M loop reads work[1]);
//  - a static MatMul kernel without batch dimensions whose last product can take a range of
//    B's column panels (a GEMM, an MLP chain): outer = rows in blocks of m_blk, inner = the
//    last product's columns in panels (its Brgemm reads work[1] and CallArgs::inner_begin);
//  - a dynamic kernel: outer = RuntimeConfig::split, inner = the next dimension of extent > 1
//    (not the row of a kernel that reduces rows), in main-loop steps when it is the innermost.
// Units are `outer_unit` outer indices (1-D) or `outer_unit` outer indices times `inner_unit`
// inner ones (2-D; the last unit of each may be shorter). 1-D is taken whenever it is
// already balanced (the units a multiple of the threads, or at least four per thread): then
// every thread makes one call on a contiguous chunk, as before this division existed, and 1
// and 2 threads run exactly as they did. Otherwise the units are numbered outer-major and each
// thread takes a contiguous range of them, made of at most three calls, each a rectangle: the
// end of one outer unit's inner range, whole outer units, the start of another's.
// A call that takes a part of the inner dimension takes one outer unit, so the kernel never
// moves its pointers to a next outer unit from the middle of the inner one, except where the
// inner dimension is a MatMul's columns (WorkSpace::rectangles): there every row block of a call
// takes the same columns, and the 2-D division is a grid, one rectangle of row blocks times
// panels per thread, the grid whose largest rectangle is the least work (a B input is packed
// once per call, so a thread packs only its own panels, once). Where such a call
// repeats work (WorkSpace::shared: an MLP chain computes all columns of the products before
// its last), 2-D is taken only when its largest share is less work on paper than 1-D's.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "snippets/runtime/kernel_signature.hpp"
#include "snippets/runtime/runtime_config.hpp"

namespace snippets {

/// The index space one run divides (see the file comment).
struct WorkSpace {
  std::int64_t outer = 1;      // extent of the split dimension
  std::int64_t outer_unit = 1; // its indices per unit when only it is divided
  std::int64_t inner = 1;      // extent of the next dimension, when a call can take a part
  std::int64_t inner_unit = 0; // its indices per unit; 0: calls take all of it (1-D only)
  /// The part of an outer index's work that a call taking a part of inner repeats (an MLP
  /// chain's products before the last; KernelSignature::inner_shared): 0 for most kernels.
  double shared = 0;
  /// A call may take several outer units with a part of inner (inner is a MatMul's columns:
  /// KernelSignature::inner_columns): 2-D divisions are then a grid of rectangles.
  bool rectangles = false;
  std::int64_t items() const { return outer * inner; }
};

/// One kernel call: outer indices [outer_begin, +outer_count) times inner [inner_begin,
/// +inner_count) (all of inner when the division is 1-D). A 2-D call that takes a part of
/// inner takes one outer unit, except in a grid (WorkSpace::rectangles).
struct WorkCall {
  std::int64_t outer_begin = 0, outer_count = 0, inner_begin = 0, inner_count = 0;
  std::int64_t items() const { return outer_count * inner_count; }
  /// Its work on paper, in items: what it takes, and for a part of inner the shared work too.
  double load(const WorkSpace& s) const {
    if (inner_count == s.inner) return double(items());
    return double(outer_count) * (s.shared * double(s.inner) + (1 - s.shared) * inner_count);
  }
};

/// One thread's calls, in order.
struct WorkShare {
  std::array<WorkCall, 3> calls{};
  int size = 0;
  std::int64_t items() const {
    std::int64_t n = 0;
    for (int c = 0; c < size; ++c) n += calls[std::size_t(c)].items();
    return n;
  }
  double load(const WorkSpace& s) const {
    double n = 0;
    for (int c = 0; c < size; ++c) n += calls[std::size_t(c)].load(s);
    return n;
  }
};

/// The threads of one run and each one's share (computed on demand: no allocation).
class WorkDivision {
public:
  WorkDivision(const WorkSpace& space, int threads, bool two_d)
      : s_(space), threads_(threads), two_d_(two_d) {}
  /// A grid: `rows` groups of outer units times `cols` groups of inner units, one rectangle per
  /// thread (WorkSpace::rectangles).
  static WorkDivision grid(const WorkSpace& space, std::int64_t rows, std::int64_t cols) {
    WorkDivision w(space, int(rows * cols), true);
    w.grid_cols_ = cols;
    return w;
  }
  /// Threads to start; each gets a non-empty share when the space has items.
  int threads() const { return threads_; }
  /// True when calls may take a part of the inner dimension.
  bool two_d() const { return two_d_; }
  const WorkSpace& space() const { return s_; }
  std::int64_t units() const { return two_d_ ? units_1d(s_) * per_outer() : units_1d(s_); }
  /// Groups of inner units of a grid division (0: not a grid).
  std::int64_t grid_cols() const { return grid_cols_; }
  /// The largest share's work on paper (WorkCall::load), in items.
  double max_load() const {
    double most = 0;
    for (int i = 0; i < threads_; ++i) most = std::max(most, share(i).load(s_));
    return most;
  }

  WorkShare share(int i) const {
    WorkShare w;
    if (!two_d_) {
      const std::int64_t u = units_1d(s_), unit = s_.outer_unit;
      const std::int64_t lo = u * i / threads_ * unit;
      const std::int64_t hi = std::min(s_.outer, u * (i + 1) / threads_ * unit);
      if (hi > lo) w.calls[0] = {lo, hi - lo, 0, s_.inner}, w.size = 1;
      return w;
    }
    const std::int64_t per = per_outer();
    if (grid_cols_ > 0) { // rectangle i: row group i / cols, column group i % cols
      const std::int64_t rows = threads_ / grid_cols_, r = i / grid_cols_, c = i % grid_cols_;
      const std::int64_t u = units_1d(s_);
      const std::int64_t ob = u * r / rows * s_.outer_unit,
                         oe = std::min(s_.outer, u * (r + 1) / rows * s_.outer_unit);
      const std::int64_t b = per * c / grid_cols_ * s_.inner_unit,
                         e = std::min(s_.inner, per * (c + 1) / grid_cols_ * s_.inner_unit);
      if (oe > ob && e > b) w.calls[0] = {ob, oe - ob, b, e - b}, w.size = 1;
      return w;
    }
    const std::int64_t u = units_1d(s_) * per;
    const std::int64_t lo = u * i / threads_, hi = u * (i + 1) / threads_;
    std::int64_t o = lo / per, c = lo % per; // where the share starts: outer unit o, unit c
    const std::int64_t o_end = hi / per, c_end = hi % per;
    // `count` outer units from `outer`, inner units [from, to)
    auto add = [&](std::int64_t outer, std::int64_t count, std::int64_t from, std::int64_t to) {
      const std::int64_t b = from * s_.inner_unit, e = std::min(s_.inner, to * s_.inner_unit);
      const std::int64_t ob = outer * s_.outer_unit,
                         oe = std::min(s_.outer, (outer + count) * s_.outer_unit);
      if (count > 0 && e > b && oe > ob) w.calls[std::size_t(w.size++)] = {ob, oe - ob, b, e - b};
    };
    if (o == o_end) { // within one outer unit
      add(o, 1, c, c_end);
      return w;
    }
    if (c > 0) add(o++, 1, c, per); // the end of a started outer unit
    add(o, o_end - o, 0, per);      // whole outer units
    add(o_end, 1, 0, c_end);        // the start of the last one
    return w;
  }

private:
  static std::int64_t units_1d(const WorkSpace& s) {
    return (s.outer + s.outer_unit - 1) / s.outer_unit;
  }
  std::int64_t per_outer() const { return (s_.inner + s_.inner_unit - 1) / s_.inner_unit; }
  WorkSpace s_;
  int threads_ = 1;
  bool two_d_ = false;
  std::int64_t grid_cols_ = 0;
};

namespace detail {
/// The grid of at most `n` rectangles whose largest is the least work on paper (ties: more
/// groups of columns, so each packs fewer of a B input's panels), by the largest group of
/// each side.
inline WorkDivision best_grid(const WorkSpace& s, std::int64_t units, std::int64_t per,
                              std::int64_t n) {
  std::int64_t best_rows = 1, best_cols = 1;
  double best = -1;
  for (std::int64_t cols = 1; cols <= std::min(per, n); ++cols) {
    const std::int64_t rows = std::min(units, n / cols);
    const double outer = double(std::min(s.outer, (units + rows - 1) / rows * s.outer_unit));
    const std::int64_t inner = std::min(s.inner, (per + cols - 1) / cols * s.inner_unit);
    const double load = WorkCall{0, std::int64_t(outer), 0, inner}.load(s);
    if (best < 0 || load <= best) best = load, best_rows = rows, best_cols = cols;
  }
  return WorkDivision::grid(s, best_rows, best_cols);
}
} // namespace detail

/// Divides `space` among at most `threads` threads (see the file comment). With shared work
/// (WorkSpace::shared), 2-D only where its largest share is less work on paper than 1-D's.
inline WorkDivision divide_work(const WorkSpace& space, int threads) {
  const std::int64_t n = std::max(threads, 1);
  const std::int64_t units = (space.outer + space.outer_unit - 1) / space.outer_unit;
  const bool balanced = units >= n && (units % n == 0 || units >= 4 * n);
  if (space.inner_unit <= 0 || space.inner_unit >= space.inner || balanced || space.items() == 0)
    return WorkDivision(space, int(std::clamp<std::int64_t>(units, 1, n)), false);
  const std::int64_t per = (space.inner + space.inner_unit - 1) / space.inner_unit;
  const WorkDivision one_d(space, int(std::clamp<std::int64_t>(units, 1, n)), false);
  const WorkDivision two_d =
      space.rectangles
          ? detail::best_grid(space, units, per, n)
          : WorkDivision(space, int(std::clamp<std::int64_t>(units * per, 1, n)), true);
  if (space.shared > 0 && two_d.max_load() >= one_d.max_load()) return one_d;
  return two_d;
}

/// The index space of a static kernel (KernelSignature::domain, chunk_unit, inner_unit).
inline WorkSpace work_space(const KernelSignature& sig) {
  WorkSpace s;
  s.outer = sig.domain.empty() ? 0 : sig.domain[0];
  s.outer_unit = sig.chunk_unit;
  if (sig.inner_unit > 0 && sig.domain.size() > 1) {
    s.inner = sig.domain[1];
    s.inner_unit = sig.inner_unit;
    s.shared = sig.inner_shared;
    s.rectangles = sig.inner_columns;
  }
  return s;
}

/// The dimension of a dynamic call a call may take a part of besides `cfg.split` (the next
/// one of extent > 1; never the row of a kernel that reduces rows), or cfg.rank when none.
inline std::size_t inner_dim(const DynamicLayout& layout, const RuntimeConfig& cfg) {
  const std::size_t last = layout.rows ? cfg.rank - 1 : cfg.rank; // rows: not the row
  for (std::size_t d = cfg.split + 1; d < last; ++d)
    if (cfg.domain[d] != 1) return d;
  return cfg.rank;
}

/// The index space of a dynamic kernel's call with configuration `cfg`.
inline WorkSpace work_space(const KernelSignature& sig, const RuntimeConfig& cfg) {
  const std::size_t r = cfg.rank - 1, in = inner_dim(*sig.dynamic, cfg);
  WorkSpace s;
  s.outer = cfg.domain[cfg.split];
  s.outer_unit = cfg.split == r ? sig.dynamic->step : 1;
  if (in < cfg.rank) {
    s.inner = cfg.domain[in];
    s.inner_unit = in == r ? sig.dynamic->step : 1;
  }
  return s;
}

/// The division of a static kernel's run on `threads` threads.
inline WorkDivision divide_work(const KernelSignature& sig, int threads) {
  return divide_work(work_space(sig), threads);
}
/// The division of a dynamic kernel's call with configuration `cfg` on `threads` threads.
inline WorkDivision divide_work(const KernelSignature& sig, const RuntimeConfig& cfg, int threads) {
  return divide_work(work_space(sig, cfg), threads);
}

} // namespace snippets
