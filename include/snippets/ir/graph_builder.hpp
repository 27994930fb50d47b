// SPDX-License-Identifier: Apache-2.0
// snippets/ir/graph_builder.hpp: named builder methods of Graph (g.add(a, b), g.relu(x), ...).
//
// A CRTP base so graph.hpp keeps to structure. Every method is one line over
// `Graph::make(tag, inputs)`, which does all checking; ops with attributes take them as
// arguments in the tag's member order. `apply(tag, inputs...)` builds any single-output op.
#pragma once

#include <initializer_list>
#include <type_traits>
#include <utility>

#include "snippets/ir/op_tags.hpp"

namespace snippets::ir {

template <class G> class GraphBuilder {
public:
  /// Any single-output op: g.apply(Clamp{0, 6}, x).
  template <class Tag, class... V> auto apply(Tag tag, V... inputs) {
    static_assert(!std::is_same_v<Tag, Result>,
                  "snippets: a Result has no output Value; use g.result(x) instead of apply");
    return self().make(std::move(tag), {inputs...})[0];
  }

#define SNIPPETS_UNARY(method, Tag)                                                                \
  template <class V> V method(V x) { return apply(Tag{}, x); }
#define SNIPPETS_BINARY(method, Tag)                                                               \
  template <class V> V method(V a, V b) { return apply(Tag{}, a, b); }

  SNIPPETS_UNARY(abs, Abs)
  SNIPPETS_UNARY(negative, Negative)
  SNIPPETS_UNARY(relu, Relu)
  SNIPPETS_UNARY(floor, Floor)
  SNIPPETS_UNARY(ceiling, Ceiling)
  SNIPPETS_UNARY(sqrt, Sqrt)
  SNIPPETS_UNARY(exp, Exp)
  SNIPPETS_UNARY(log, Log)
  SNIPPETS_UNARY(sigmoid, Sigmoid)
  SNIPPETS_UNARY(tanh, Tanh)
  SNIPPETS_UNARY(erf, Erf)
  SNIPPETS_UNARY(hswish, HSwish)
  SNIPPETS_UNARY(hsigmoid, HSigmoid)
  SNIPPETS_UNARY(mish, Mish)
  SNIPPETS_UNARY(softplus, SoftPlus)
  SNIPPETS_UNARY(softsign, SoftSign)
  SNIPPETS_UNARY(logical_not, LogicalNot)
  SNIPPETS_BINARY(add, Add)
  SNIPPETS_BINARY(subtract, Subtract)
  SNIPPETS_BINARY(multiply, Multiply)
  SNIPPETS_BINARY(divide, Divide)
  SNIPPETS_BINARY(maximum, Maximum)
  SNIPPETS_BINARY(minimum, Minimum)
  SNIPPETS_BINARY(power, Power)
  SNIPPETS_BINARY(squared_difference, SquaredDifference)
  SNIPPETS_BINARY(floor_mod, FloorMod)
  SNIPPETS_BINARY(mod, Mod)
  SNIPPETS_BINARY(prelu, PRelu)
  SNIPPETS_BINARY(equal, Equal)
  SNIPPETS_BINARY(not_equal, NotEqual)
  SNIPPETS_BINARY(greater, Greater)
  SNIPPETS_BINARY(greater_equal, GreaterEqual)
  SNIPPETS_BINARY(less, Less)
  SNIPPETS_BINARY(less_equal, LessEqual)
  SNIPPETS_BINARY(logical_and, LogicalAnd)
  SNIPPETS_BINARY(logical_or, LogicalOr)
  SNIPPETS_BINARY(logical_xor, LogicalXor)
#undef SNIPPETS_UNARY
#undef SNIPPETS_BINARY

  template <class V> V clamp(V x, double lo, double hi) { return apply(Clamp{lo, hi}, x); }
  template <class V> V round(V x, RoundMode m = RoundMode::half_to_even) {
    return apply(Round{m}, x);
  }
  template <class V> V gelu(V x, GeluApproximation a = GeluApproximation::erf) {
    return apply(Gelu{a}, x);
  }
  template <class V> V swish(V x, double beta = 1.0) { return apply(Swish{beta}, x); }
  template <class V> V elu(V x, double alpha) { return apply(Elu{alpha}, x); }
  template <class V> V leaky_relu(V x, double alpha = 0.01) { return apply(LeakyRelu{alpha}, x); }
  template <class V> V power_static(V x, double e) { return apply(PowerStatic{e}, x); }
  template <class V> V select(V cond, V a, V b) { return apply(Select{}, cond, a, b); }
  template <class V> V convert(V x, ElementType to) { return apply(Convert{to}, x); }
  /// FakeQuantize of x to `levels` values, input range [il, ih], output range [ol, oh].
  template <class V> V fake_quantize(V x, V il, V ih, V ol, V oh, std::int64_t levels) {
    return apply(FakeQuantize{levels}, x, il, ih, ol, oh);
  }
  /// saturate(round(x / scale) + zero_point) as `to` (ONNX QuantizeLinear).
  template <class V> V quantize(V x, V scale, V zero_point, ElementType to = ElementType::u8) {
    return apply(Quantize{to}, x, scale, zero_point);
  }
  template <class V> V reduce_sum(V x, std::vector<std::int64_t> axes, bool keep_dims = true) {
    return apply(ReduceSum{std::move(axes), keep_dims}, x);
  }
  template <class V> V reduce_max(V x, std::vector<std::int64_t> axes, bool keep_dims = true) {
    return apply(ReduceMax{std::move(axes), keep_dims}, x);
  }
  template <class V> V reduce_min(V x, std::vector<std::int64_t> axes, bool keep_dims = true) {
    return apply(ReduceMin{std::move(axes), keep_dims}, x);
  }
  template <class V> V reduce_prod(V x, std::vector<std::int64_t> axes, bool keep_dims = true) {
    return apply(ReduceProd{std::move(axes), keep_dims}, x);
  }
  template <class V> V reduce_mean(V x, std::vector<std::int64_t> axes, bool keep_dims = true) {
    return apply(ReduceMean{std::move(axes), keep_dims}, x);
  }
  template <class V>
  V reduce_sum_square(V x, std::vector<std::int64_t> axes, bool keep_dims = true) {
    return apply(ReduceSumSquare{std::move(axes), keep_dims}, x);
  }
  template <class V> V reduce_l1(V x, std::vector<std::int64_t> axes, bool keep_dims = true) {
    return apply(ReduceL1{std::move(axes), keep_dims}, x);
  }
  template <class V> V reduce_l2(V x, std::vector<std::int64_t> axes, bool keep_dims = true) {
    return apply(ReduceL2{std::move(axes), keep_dims}, x);
  }
  template <class V> V softmax(V x, std::int64_t axis = -1) { return apply(Softmax{axis}, x); }
  template <class V> V transpose(V x, std::vector<std::size_t> order) {
    return apply(Transpose{std::move(order)}, x);
  }
  template <class V> V broadcast(V x, Shape shape) { return apply(Broadcast{std::move(shape)}, x); }
  template <class V> V reshape(V x, std::vector<std::int64_t> shape) {
    return apply(Reshape{std::move(shape)}, x);
  }
  template <class V> V slice(V x, std::int64_t axis, std::int64_t start, std::int64_t length) {
    return apply(Slice{axis, start, length}, x);
  }
  template <class V> V matmul(V a, V b, bool transpose_a = false, bool transpose_b = false) {
    return apply(MatMul{transpose_a, transpose_b}, a, b);
  }

private:
  G& self() { return static_cast<G&>(*this); }
};

} // namespace snippets::ir
