// SPDX-License-Identifier: Apache-2.0
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
    const ir::TensorType t{got[i].type, got[i].shape};
    if (!t.countable())
      raise("snippets.shape.too_many_elements",
            which() + " has shape " + got[i].shape.to_string() +
                ", whose bytes int64 cannot count; no buffer is that large");
    if (!got[i].data && t.bytes() != 0)
      raise("snippets.run.null_pointer", which() + " is a null pointer; pass the buffer's address");
  }
}

/// Checks that the buffers of `out` overlap neither each other nor those of `in`, except that
/// output o may be exactly input i's buffer (same address, shape and element size) when
/// `in_place(i)`: the owner reads each element of that input before it writes the same index
/// of an output, and nothing else. [snippets.run.overlapping_buffers] otherwise. Inputs may
/// overlap each other (they are only read). Views were checked by check_views first.
template <class InPlace>
void check_overlap(std::span<const ConstTensorView> in, std::span<const TensorView> out,
                   InPlace&& in_place, const char* owner) {
  struct Range {
    const std::byte* begin;
    const std::byte* end;
    bool overlaps(const Range& o) const { return begin < o.end && o.begin < end; }
  };
  auto range = [](const ConstTensorView& v) {
    const auto* p = static_cast<const std::byte*>(v.data);
    return Range{p, p + ir::TensorType{v.type, v.shape}.bytes()};
  };
  for (std::size_t o = 0; o < out.size(); ++o) {
    const Range r = range(out[o]);
    for (std::size_t p = 0; p < o; ++p)
      if (r.overlaps(range(out[p])))
        raise("snippets.run.overlapping_buffers",
              "outputs " + std::to_string(p) + " and " + std::to_string(o) + " of the " + owner +
                  " overlap in memory; give each output its own buffer");
    for (std::size_t i = 0; i < in.size(); ++i) {
      const Range q = range(in[i]);
      if (!r.overlaps(q)) continue;
      const bool same = q.begin == r.begin && in[i].shape == out[o].shape &&
                        size_of(in[i].type) == size_of(out[o].type);
      if (same && in_place(i)) continue;
      raise("snippets.run.overlapping_buffers",
            "output " + std::to_string(o) + " overlaps input " + std::to_string(i) + " of the " +
                owner + (same ? "" : " without being exactly its buffer") +
                "; an output may share an input's buffer only when it has the input's shape and "
                "element size and the " +
                owner + " reads that input element by element (" +
                (same ? "this one does not" : "give the output its own buffer") + ")");
    }
  }
}

} // namespace snippets
