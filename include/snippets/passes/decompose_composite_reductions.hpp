// SPDX-License-Identifier: Apache-2.0
// snippets/passes/decompose_composite_reductions.hpp: DecomposeCompositeReductions (data flow)
// writes the reductions a kernel has no reduce loop for as a ReduceSum and elementwise ops:
//   ReduceMean(x)      = ReduceSum(x) / n   (n: the elements reduced per output element)
//   ReduceSumSquare(x) = ReduceSum(x * x)
//   ReduceL1(x)        = ReduceSum(Abs(x))
//   ReduceL2(x)        = Sqrt(ReduceSum(x * x))
// over the same axes, keeping or dropping them alike (keeping them where Results alone read
// the op: the kept form has the same bytes), so DecomposeSoftmax then treats the
// ReduceSum as any other (and compile() judges its axes). The ReduceSum is named after the op
// with "/sum"; the op's result keeps its name.
//
// The mean divides (one rounding, as the reference's quotient) rather than multiplying by
// 1 / n (two). n is a Scalar where the reduced axes are static; over a dynamic axis it is
// counted at run time as a second ReduceSum, of Select(x == x, 1, 1): one per element whatever
// it holds (NaN included), exact up to 2^24 elements. Over no elements (n = 0) the quotient is
// 0 / 0 = NaN, as the reference gives. Runs first, before DecomposeSoftmax.
#pragma once

#include "snippets/passes/data_flow.hpp"
#include "snippets/passes/decompose_softmax.hpp"
#include "snippets/passes/properties.hpp"

namespace snippets::passes {

/// The number of elements a reduction over `axes` of `shape` folds into one, or nothing when
/// one of those axes is dynamic.
inline std::optional<std::int64_t> reduced_count(const Shape& shape,
                                                 const std::vector<std::int64_t>& axes) {
  std::int64_t n = 1;
  for (std::int64_t a : axes) {
    const Dim d = shape[normalize_axis(a, shape.rank(), "a reduction")];
    if (d == dynamic) return std::nullopt;
    n *= d;
  }
  return n;
}

struct DecomposeCompositeReductions {
  using pass_tag = data_flow_pass_tag;
  static constexpr std::string_view name = "DecomposeCompositeReductions";
  using before = Properties<property::SoftmaxDecomposed>;
  using establishes = Properties<property::CompositeReductionsDecomposed>;

  template <class T> ir::Graph<T> run(const ir::Graph<T>& body) const {
    return rebuild(body,
                   [&](ir::Graph<T>& out, const ir::Node<T>& n,
                       std::span<const ir::Value> in) -> std::optional<std::vector<ir::Value>> {
                     return std::visit(
                         [&](const auto& tag) -> std::optional<std::vector<ir::Value>> {
                           using Tag = std::decay_t<decltype(tag)>;
                           if constexpr (ir::composite_reduction<Tag>) {
                             // Results alone read it: the kept form has the same bytes
                             const bool keep = tag.keep_dims || read_by_results_only(body, n);
                             return decompose<T>(out, body.type(n.inputs[0]), tag, keep, in[0],
                                                 n.name);
                           } else
                             return std::nullopt;
                         },
                         n.op);
                   });
  }

private:
  template <class T, class Tag>
  static std::vector<ir::Value> decompose(ir::Graph<T>& out, const ir::TensorType& t,
                                          const Tag& tag, bool keep, ir::Value x,
                                          const std::string& name) {
    auto sum = [&](ir::Value v, const std::string& as) {
      return out.make(ir::ReduceSum{tag.axes, keep}, {v}, as)[0];
    };
    auto square = [&](ir::Value v) { return out.make(ir::Multiply{}, {v, v}, name + "/sq")[0]; };
    if constexpr (std::is_same_v<Tag, ir::ReduceMean>) {
      const ir::Value s = sum(x, name + "/sum");
      ir::Value count;
      if (const auto n = reduced_count(t.shape, tag.axes)) {
        count = out.scalar(t.type, static_cast<double>(*n), {}, name + "/n");
      } else {
        const ir::Value one = out.scalar(t.type, 1.0, {}, name + "/one");
        const ir::Value any = out.make(ir::Equal{}, {x, x}, name + "/any")[0];
        count = sum(out.make(ir::Select{}, {any, one, one}, name + "/ones")[0], name + "/n");
      }
      return out.make(ir::Divide{}, {s, count}, name);
    } else if constexpr (std::is_same_v<Tag, ir::ReduceSumSquare>) {
      return std::vector{sum(square(x), name)};
    } else if constexpr (std::is_same_v<Tag, ir::ReduceL1>) {
      return std::vector{sum(out.make(ir::Abs{}, {x}, name + "/abs")[0], name)};
    } else {
      static_assert(std::is_same_v<Tag, ir::ReduceL2>);
      return out.make(ir::Sqrt{}, {sum(square(x), name + "/sum")}, name);
    }
  }
};

} // namespace snippets::passes
