// snippets/runtime/tensor_view.hpp: what a caller hands a compiled kernel: a typed, shaped,
// planar view of memory it owns. The kernel checks views against its signature before it
// touches any memory.
#pragma once

#include "snippets/ir/element_type.hpp"
#include "snippets/ir/shape.hpp"

namespace snippets {

struct ConstTensorView {
  ElementType type = ElementType::f32;
  Shape shape;
  const void* data = nullptr;
};

struct TensorView {
  ElementType type = ElementType::f32;
  Shape shape;
  void* data = nullptr;
  operator ConstTensorView() const { return {type, shape, data}; }
};

} // namespace snippets
