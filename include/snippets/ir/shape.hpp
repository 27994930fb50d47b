// SPDX-License-Identifier: Apache-2.0
// snippets/ir/shape.hpp: shapes with static and dynamic dimensions, and NUMPY broadcasting.
//
// A Dim is a non-negative extent or `dynamic` (-1, unknown until run time). A Shape is a list
// of Dims; rank 0 is a scalar. Broadcasting follows NUMPY: align on the right, a 1 stretches,
// equal extents stay, anything else is an error. With dynamic dims, `?` against 1 is `?`,
// `?` against n (n != 1) is n (a run-time check confirms it), and `?` against `?` is `?`.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "snippets/error.hpp"

namespace snippets {

using Dim = std::int64_t;
inline constexpr Dim dynamic = -1;

class Shape {
public:
  Shape() = default;
  Shape(std::initializer_list<Dim> dims) : dims_(dims) { validate(); }
  explicit Shape(std::vector<Dim> dims) : dims_(std::move(dims)) { validate(); }
  explicit Shape(std::span<const Dim> dims) : dims_(dims.begin(), dims.end()) { validate(); }

  std::size_t rank() const { return dims_.size(); }
  Dim operator[](std::size_t i) const { return dims_[i]; }
  Dim& operator[](std::size_t i) { return dims_[i]; }
  auto begin() const { return dims_.begin(); }
  auto end() const { return dims_.end(); }
  std::span<const Dim> dims() const { return dims_; }
  Dim back() const { return dims_.back(); }

  bool is_static() const {
    for (Dim d : dims_)
      if (d == dynamic) return false;
    return true;
  }

  /// Number of elements; the shape must be static. Throws when the count overflows int64.
  std::int64_t element_count() const {
    if (!is_static())
      raise("snippets.shape.dynamic",
            "element count of " + to_string() +
                " is unknown: give every dynamic dimension a value first");
    // a zero extent makes the count 0 even when the other extents' product would overflow
    if (std::find(dims_.begin(), dims_.end(), Dim{0}) != dims_.end()) return 0;
    std::int64_t n = 1;
    for (Dim d : dims_)
      if (__builtin_mul_overflow(n, d, &n))
        raise("snippets.shape.too_many_elements",
              "shape " + to_string() +
                  " has more elements than int64 can count; use smaller tensors");
    return n;
  }

  std::string to_string() const {
    std::string s = "[";
    for (std::size_t i = 0; i < dims_.size(); ++i) {
      if (i) s += ',';
      s += dims_[i] == dynamic ? std::string("?") : std::to_string(dims_[i]);
    }
    return s + "]";
  }

  bool operator==(const Shape&) const = default;

private:
  void validate() const {
    for (Dim d : dims_)
      if (d < 0 && d != dynamic)
        raise("snippets.shape.negative_dim",
              "dimension " + std::to_string(d) + " in " + to_string() +
                  " is negative; use snippets::dynamic (-1) for unknown");
  }
  std::vector<Dim> dims_;
};

/// True when `a` could equal `b` at run time (dynamic dims match anything of equal rank).
inline bool compatible(const Shape& a, const Shape& b) {
  if (a.rank() != b.rank()) return false;
  for (std::size_t i = 0; i < a.rank(); ++i)
    if (a[i] != dynamic && b[i] != dynamic && a[i] != b[i]) return false;
  return true;
}

/// NUMPY broadcast of two shapes into `out`; returns false (and leaves `out` alone) when they
/// do not broadcast. `out` may alias `a` or `b`.
inline bool try_broadcast(const Shape& a, const Shape& b, Shape& out) {
  const std::size_t r = std::max(a.rank(), b.rank());
  std::vector<Dim> dims(r);
  for (std::size_t i = 0; i < r; ++i) {
    const Dim da = i < r - a.rank() ? 1 : a[i - (r - a.rank())];
    const Dim db = i < r - b.rank() ? 1 : b[i - (r - b.rank())];
    if (da == db || db == 1)
      dims[i] = da;
    else if (da == 1)
      dims[i] = db;
    else if (da == dynamic)
      dims[i] = db;
    else if (db == dynamic)
      dims[i] = da;
    else
      return false;
  }
  out = Shape(std::move(dims));
  return true;
}

/// NUMPY broadcast; throws [snippets.shape.not_broadcastable] when the shapes do not broadcast.
inline Shape broadcast(const Shape& a, const Shape& b) {
  Shape out;
  if (!try_broadcast(a, b, out))
    raise("snippets.shape.not_broadcastable",
          "shapes " + a.to_string() + " and " + b.to_string() +
              " do not broadcast (NUMPY rules: align on the right; each pair of dimensions must be "
              "equal or one of them 1); insert a Reshape or Broadcast");
  return out;
}

/// Normalises a possibly negative axis against `rank`; throws when it is out of range.
inline std::size_t normalize_axis(std::int64_t axis, std::size_t rank, std::string_view what) {
  const auto r = static_cast<std::int64_t>(rank);
  if (rank == 0)
    raise("snippets.shape.axis_out_of_range",
          std::string(what) + ": axis " + std::to_string(axis) +
              " given for a rank-0 (scalar) tensor, which has no axes; Reshape it to rank 1");
  if (axis < -r || axis >= r)
    raise("snippets.shape.axis_out_of_range",
          std::string(what) + ": axis " + std::to_string(axis) + " is out of range for rank " +
              std::to_string(rank) + "; use an axis in [" + std::to_string(-r) + ", " +
              std::to_string(r - 1) + "]");
  return static_cast<std::size_t>(axis < 0 ? axis + r : axis);
}

/// Which of `rank` axes `axes` names (possibly negative; `fill` for the others), checked as
/// normalize_axis checks one.
inline std::vector<bool> axis_mask(const std::vector<std::int64_t>& axes, std::size_t rank,
                                   std::string_view what, bool fill = false) {
  std::vector<bool> mask(rank, fill);
  for (std::int64_t a : axes) mask[normalize_axis(a, rank, what)] = true;
  return mask;
}

/// The permutation that undoes `order` (axis order[i] goes to i): inverse[order[i]] = i.
inline std::vector<std::size_t> inverse_permutation(const std::vector<std::size_t>& order) {
  std::vector<std::size_t> inverse(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) inverse[order[i]] = i;
  return inverse;
}

} // namespace snippets
