// SPDX-License-Identifier: Apache-2.0
// snippets/ir/layout.hpp: how a logical tensor is laid out in memory.
//
// A Layout is a dimension order (a permutation of the logical axes, outermost first) plus an
// optional blocking of one axis, as in NCHW16c: order {0,1,2,3} with axis 1 blocked by 16 has
// the physical shape [N, ceil(C/16), H, W, 16]. Planar is the identity order with no block;
// channels-last (NHWC) is order {0,2,3,1}.
//
// Invariants: `order` is a permutation of 0..rank-1; a block has size >= 2 on a valid axis.
#pragma once

#include <cstdint>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include "snippets/ir/shape.hpp"

namespace snippets {

class Layout {
public:
  /// Planar (identity) layout; its rank adapts to any shape.
  Layout() = default;

  static Layout planar(std::size_t rank) { return Layout(identity(rank), -1, 0); }
  static Layout channels_last(std::size_t rank) {
    if (rank < 3)
      raise("snippets.layout.invalid",
            "channels-last needs rank >= 3 (got " + std::to_string(rank) + "); use planar instead");
    std::vector<std::size_t> order{0};
    for (std::size_t i = 2; i < rank; ++i) order.push_back(i);
    order.push_back(1);
    return Layout(std::move(order), -1, 0);
  }
  /// `order` outermost first; `block_axis` (a logical axis) is split into blocks of `block`.
  static Layout blocked(std::vector<std::size_t> order, std::size_t block_axis,
                        std::int64_t block) {
    if (block_axis >= order.size()) // before the cast below, which would wrap huge values
      raise("snippets.layout.invalid", "blocked axis " + std::to_string(block_axis) +
                                           " is out of range for an order of rank " +
                                           std::to_string(order.size()));
    return Layout(std::move(order), static_cast<std::int64_t>(block_axis), block);
  }
  static Layout permuted(std::vector<std::size_t> order) { return Layout(std::move(order), -1, 0); }

  bool is_planar() const {
    return block_axis_ < 0 && (order_.empty() || order_ == identity(order_.size()));
  }
  bool is_blocked() const { return block_axis_ >= 0; }
  /// Empty for the default planar layout of any rank.
  const std::vector<std::size_t>& order() const { return order_; }
  std::int64_t block_axis() const { return block_axis_; }
  std::int64_t block_size() const { return block_; }

  /// The shape of the buffer in memory, outermost first.
  Shape physical_shape(const Shape& logical) const {
    check_rank(logical.rank());
    const auto ord = order_.empty() ? identity(logical.rank()) : order_;
    std::vector<Dim> dims;
    for (std::size_t axis : ord) {
      Dim d = logical[axis];
      if (static_cast<std::int64_t>(axis) == block_axis_ && d != dynamic)
        d = (d + block_ - 1) / block_;
      dims.push_back(d);
    }
    if (block_axis_ >= 0) dims.push_back(block_);
    return Shape(std::move(dims));
  }

  /// Offset (in elements) of the logical index `idx` in a buffer of `physical_shape(logical)`.
  /// @pre `logical` is static; `idx` has one in-range entry per logical axis (else throws).
  std::int64_t offset(const Shape& logical, std::span<const std::int64_t> idx) const {
    const Shape phys = physical_shape(logical);
    if (!logical.is_static())
      raise("snippets.shape.dynamic", "offsets in " + logical.to_string() +
                                          " are unknown: give every dynamic dimension a value");
    if (idx.size() != logical.rank())
      raise("snippets.layout.rank_mismatch", "index of rank " + std::to_string(idx.size()) +
                                                 " into a tensor of rank " +
                                                 std::to_string(logical.rank()));
    for (std::size_t a = 0; a < idx.size(); ++a)
      if (idx[a] < 0 || idx[a] >= logical[a])
        raise("snippets.layout.index_out_of_range", "index " + std::to_string(idx[a]) +
                                                        " on axis " + std::to_string(a) +
                                                        " is outside " + logical.to_string());
    const auto ord = order_.empty() ? identity(logical.rank()) : order_;
    std::int64_t off = 0;
    for (std::size_t p = 0; p < ord.size(); ++p) {
      std::int64_t i = idx[ord[p]];
      if (static_cast<std::int64_t>(ord[p]) == block_axis_) i /= block_;
      off = off * phys[p] + i;
    }
    if (block_axis_ >= 0) off = off * block_ + idx[static_cast<std::size_t>(block_axis_)] % block_;
    return off;
  }

  /// "abcd" letters in memory order, upper-case for a blocked axis' outer part, e.g. "aBcd16b".
  std::string to_string(std::size_t rank) const {
    const auto ord = order_.empty() ? identity(rank) : order_;
    std::string s;
    for (std::size_t axis : ord)
      s += char((static_cast<std::int64_t>(axis) == block_axis_ ? 'A' : 'a') + axis);
    if (block_axis_ >= 0) s += std::to_string(block_) + char('a' + block_axis_);
    return s;
  }

  bool operator==(const Layout& o) const {
    return block_axis_ == o.block_axis_ && block_ == o.block_ &&
           (order_ == o.order_ || (is_planar() && o.is_planar()));
  }

  /// Throws unless this layout fits a tensor of `rank`.
  void check_rank(std::size_t rank) const {
    if (!order_.empty() && order_.size() != rank)
      raise("snippets.layout.rank_mismatch",
            "layout " + to_string(order_.size()) + " has rank " + std::to_string(order_.size()) +
                " but the tensor has rank " + std::to_string(rank));
  }

private:
  Layout(std::vector<std::size_t> order, std::int64_t block_axis, std::int64_t block)
      : order_(std::move(order)), block_axis_(block_axis), block_(block) {
    std::vector<bool> seen(order_.size(), false);
    for (std::size_t a : order_) {
      if (a >= order_.size() || seen[a])
        raise("snippets.layout.invalid", "layout order must be a permutation of 0..rank-1; "
                                         "check for repeated or out-of-range axes");
      seen[a] = true;
    }
    if (block_axis_ >= 0 && (block_axis_ >= std::int64_t(order_.size()) || block_ < 2))
      raise("snippets.layout.invalid", "a blocked layout needs a valid axis and a block size >= 2 "
                                       "(got axis " +
                                           std::to_string(block_axis_) + ", block " +
                                           std::to_string(block_) + ")");
  }
  static std::vector<std::size_t> identity(std::size_t rank) {
    std::vector<std::size_t> v(rank);
    std::iota(v.begin(), v.end(), std::size_t{0});
    return v;
  }

  std::vector<std::size_t> order_;
  std::int64_t block_axis_ = -1;
  std::int64_t block_ = 0;
};

} // namespace snippets
