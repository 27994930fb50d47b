// snippets/runtime/tensor_view.hpp: what a caller hands a compiled kernel: a typed, shaped,
// planar view of memory it owns. The kernel checks views against its signature before it
// touches any memory.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "snippets/ir/element_type.hpp"
#include "snippets/ir/op_tags.hpp"
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

/// Checks buffers against what `owner` ("kernel", "program") was compiled for, before any
/// memory is touched: [snippets.run.arg_count|type_mismatch|shape_mismatch|null_pointer].
/// `View` is ConstTensorView or TensorView; nothing is copied or allocated unless it fails.
/// `partial`: the compiled shapes have dynamic dimensions, which match any extent.
template <class View>
void check_views(std::span<const View> got, const std::vector<ir::TensorType>& want,
                 const char* what, const char* owner, bool partial = false) {
  if (got.size() != want.size())
    raise("snippets.run.arg_count", std::string("the ") + owner + " takes " +
                                        std::to_string(want.size()) + " " + what + "(s) but " +
                                        std::to_string(got.size()) + " were given");
  for (std::size_t i = 0; i < got.size(); ++i) {
    auto which = [&] { return std::string(what) + " " + std::to_string(i); };
    if (got[i].type != want[i].type)
      raise("snippets.run.type_mismatch", which() + " is " + std::string(to_string(got[i].type)) +
                                              " but the " + owner + " was compiled for " +
                                              std::string(to_string(want[i].type)));
    if (partial ? !compatible(got[i].shape, want[i].shape) : got[i].shape != want[i].shape)
      raise("snippets.run.shape_mismatch", which() + " has shape " + got[i].shape.to_string() +
                                               " but the " + owner + " was compiled for " +
                                               want[i].shape.to_string());
    if (!got[i].data && got[i].shape.element_count() != 0)
      raise("snippets.run.null_pointer", which() + " is a null pointer; pass the buffer's address");
  }
}

} // namespace snippets
