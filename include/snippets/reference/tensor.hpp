// SPDX-License-Identifier: Apache-2.0
// snippets/reference/tensor.hpp: host tensors for the reference interpreter.
//
//  - Tensor: owns bytes of one element type in planar (row-major) order, static shape. It is
//    what users pass in and get back.
//  - Values: the same tensor as doubles, with the element type its values will be stored as.
//    The interpreter computes on Values and encodes to Tensor once, at the end.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "snippets/ir/element_type.hpp"
#include "snippets/ir/shape.hpp"

namespace snippets::reference {

struct Values {
  ElementType type = ElementType::f32;
  Shape shape;
  std::vector<double> v;
};

class Tensor {
public:
  Tensor() = default;
  /// A zero-filled tensor; the shape must be static.
  Tensor(ElementType type, Shape shape) : type_(type), shape_(std::move(shape)) {
    bytes_.resize(static_cast<std::size_t>(shape_.element_count()) * size_of(type_));
  }
  /// Encodes `values` (planar order, element_count() of them, or one to fill) as `type`.
  static Tensor from_values(ElementType type, Shape shape, std::span<const double> values) {
    Tensor t(type, std::move(shape));
    const std::size_t n = t.size();
    if (values.size() != n && values.size() != 1)
      raise("snippets.reference.value_count",
            "tensor " + t.shape_.to_string() + " needs " + std::to_string(n) +
                " values (or one to fill it) but got " + std::to_string(values.size()));
    for (std::size_t i = 0; i < n; ++i) t.set(i, values[values.size() == 1 ? 0 : i]);
    return t;
  }
  static Tensor from_values(ElementType type, Shape shape, std::initializer_list<double> values) {
    return from_values(type, std::move(shape),
                       std::span<const double>(values.begin(), values.size()));
  }
  static Tensor from(const Values& v) { return from_values(v.type, v.shape, v.v); }

  ElementType type() const { return type_; }
  const Shape& shape() const { return shape_; }
  std::size_t size() const { return bytes_.size() / size_of(type_); }
  std::size_t byte_size() const { return bytes_.size(); }
  void* data() { return bytes_.data(); }
  const void* data() const { return bytes_.data(); }

  double at(std::size_t i) const { return decode(type_, bytes_.data() + i * size_of(type_)); }
  void set(std::size_t i, double v) { encode(type_, v, bytes_.data() + i * size_of(type_)); }

  Values values() const {
    Values out{type_, shape_, std::vector<double>(size())};
    for (std::size_t i = 0; i < out.v.size(); ++i) out.v[i] = at(i);
    return out;
  }

private:
  ElementType type_ = ElementType::f32;
  Shape shape_;
  std::vector<std::byte> bytes_;
};

} // namespace snippets::reference
