// SPDX-License-Identifier: Apache-2.0
// snippets/frontend/onnx_op_table.hpp: which ONNX ops (default domain) the importer maps, and how.
//
// Each entry has
//  - convert: builds our ops for the node (onnx_ops_elementwise.hpp, onnx_ops_tensor.hpp,
//    onnx_ops_normalization.hpp, onnx_ops_quantization.hpp) or
//    computes a known value (onnx_ops_host.hpp);
//  - host: computes the node at load time when all its inputs are known (shape arithmetic);
//  - first_constant_input: inputs from this index on are shapes, axes or flags that must be
//    known at load time (a graph input used only there is folded, see LoadOptions).
// An op missing here becomes an ir::Opaque node. docs/onnx.md lists the table for users.
#pragma once

#include <limits>
#include <map>
#include <string>
#include <vector>

#include "snippets/frontend/onnx_ops_elementwise.hpp"
#include "snippets/frontend/onnx_ops_host.hpp"
#include "snippets/frontend/onnx_ops_normalization.hpp"
#include "snippets/frontend/onnx_ops_quantization.hpp"
#include "snippets/frontend/onnx_ops_tensor.hpp"

namespace snippets::onnx::detail {

template <class T> struct OpConverter {
  void (*convert)(NodeContext<T>&) = nullptr;
  void (*host)(NodeContext<T>&) = nullptr;
  std::size_t first_constant_input = std::numeric_limits<std::size_t>::max();
};

template <class T> void convert_identity(NodeContext<T>& c) { c.set_out(0, c.in(0)); }

template <class T> const std::map<std::string, OpConverter<T>, std::less<>>& op_table() {
  using C = OpConverter<T>;
  namespace h = host;
  static const std::map<std::string, OpConverter<T>, std::less<>> table{
      // elementwise
      {"Abs", C{convert_unary<ir::Abs, T>}},
      {"Neg", C{convert_unary<ir::Negative, T>, h::arithmetic<'n', T>}},
      {"Relu", C{convert_unary<ir::Relu, T>}},
      {"Floor", C{convert_unary<ir::Floor, T>}},
      {"Ceil", C{convert_unary<ir::Ceiling, T>}},
      {"Round", C{convert_unary<ir::Round, T>}},
      {"Sqrt", C{convert_unary<ir::Sqrt, T>}},
      {"Exp", C{convert_unary<ir::Exp, T>}},
      {"Log", C{convert_unary<ir::Log, T>}},
      {"Sigmoid", C{convert_unary<ir::Sigmoid, T>}},
      {"Tanh", C{convert_unary<ir::Tanh, T>}},
      {"Erf", C{convert_unary<ir::Erf, T>}},
      {"Softplus", C{convert_unary<ir::SoftPlus, T>}},
      {"Softsign", C{convert_unary<ir::SoftSign, T>}},
      {"Mish", C{convert_unary<ir::Mish, T>}},
      {"HardSwish", C{convert_hard_swish<T>}},
      {"HardSigmoid", C{convert_hard_sigmoid<T>}},
      {"LeakyRelu", C{convert_leaky_relu<T>}},
      {"Elu", C{convert_elu<T>}},
      {"Selu", C{convert_selu<T>}},
      {"Celu", C{convert_celu<T>}},
      {"ThresholdedRelu", C{convert_thresholded_relu<T>}},
      {"Shrink", C{convert_shrink<T>}},
      {"Reciprocal", C{convert_reciprocal<T>}},
      {"Sign", C{convert_sign<T>}},
      {"IsNaN", C{convert_isnan<T>}},
      {"IsInf", C{convert_isinf<T>}},
      {"Not", C{convert_unary<ir::LogicalNot, T>}},
      {"Add", C{convert_binary<ir::Add, T>, h::arithmetic<'+', T>}},
      {"Sub", C{convert_binary<ir::Subtract, T>, h::arithmetic<'-', T>}},
      {"Mul", C{convert_binary<ir::Multiply, T>, h::arithmetic<'*', T>}},
      {"Div", C{convert_binary<ir::Divide, T>, h::arithmetic<'/', T>}},
      {"Pow", C{convert_pow<T>}},
      {"Mod", C{convert_mod<T>}},
      {"PRelu", C{convert_prelu<T>}},
      {"Max", C{convert_variadic<ir::Maximum, T>}},
      {"Min", C{convert_variadic<ir::Minimum, T>}},
      {"Sum", C{convert_variadic<ir::Add, T>}},
      {"Mean", C{convert_mean<T>}},
      {"Clip", C{convert_clip<T>}},
      {"Equal", C{convert_binary<ir::Equal, T>}},
      {"Greater", C{convert_binary<ir::Greater, T>}},
      {"GreaterOrEqual", C{convert_binary<ir::GreaterEqual, T>}},
      {"Less", C{convert_binary<ir::Less, T>}},
      {"LessOrEqual", C{convert_binary<ir::LessEqual, T>}},
      {"And", C{convert_binary<ir::LogicalAnd, T>}},
      {"Or", C{convert_binary<ir::LogicalOr, T>}},
      {"Xor", C{convert_binary<ir::LogicalXor, T>}},
      {"Where", C{convert_where<T>}},
      {"Cast", C{convert_cast<T>, h::cast<T>}},
      {"CastLike", C{convert_cast_like<T>}},
      {"Identity", C{convert_identity<T>, h::identity<T>}},
      {"Dropout", C{convert_dropout<T>, nullptr, 1}},
      // shapes and layouts
      {"Reshape", C{convert_reshape<T>, h::reshape_op<T>, 1}},
      {"Flatten", C{convert_flatten<T>, h::reshape_op<T>}},
      {"Squeeze", C{convert_squeeze<T>, h::reshape_op<T>, 1}},
      {"Unsqueeze", C{convert_unsqueeze<T>, h::reshape_op<T>, 1}},
      {"Transpose", C{convert_transpose<T>}},
      {"Expand", C{convert_expand<T>, nullptr, 1}},
      {"MatMul", C{convert_matmul_dequantized<T>}},
      {"Gemm", C{convert_gemm<T>}},
      // reductions and Softmax
      {"ReduceSum", C{convert_reduce<Reduction::sum, T>, nullptr, 1}},
      {"ReduceMax", C{convert_reduce<Reduction::max, T>, nullptr, 1}},
      {"ReduceMin", C{convert_reduce<Reduction::min, T>, nullptr, 1}},
      {"ReduceMean", C{convert_reduce<Reduction::mean, T>, nullptr, 1}},
      {"ReduceProd", C{convert_reduce<Reduction::prod, T>, nullptr, 1}},
      {"ReduceSumSquare", C{convert_reduce<Reduction::sum_square, T>, nullptr, 1}},
      {"ReduceL1", C{convert_reduce<Reduction::l1, T>, nullptr, 1}},
      {"ReduceL2", C{convert_reduce<Reduction::l2, T>, nullptr, 1}},
      {"ReduceLogSum", C{convert_reduce<Reduction::log_sum, T>, nullptr, 1}},
      {"ReduceLogSumExp", C{convert_reduce<Reduction::log_sum_exp, T>, nullptr, 1}},
      {"Softmax", C{convert_softmax<false, T>}},
      {"LogSoftmax", C{convert_softmax<true, T>}},
      // normalizations (onnx_ops_normalization.hpp)
      {"LayerNormalization", C{convert_layer_normalization<T>}},
      {"InstanceNormalization", C{convert_instance_normalization<T>}},
      {"MeanVarianceNormalization", C{convert_mean_variance_normalization<T>}},
      // quantization (onnx_ops_quantization.hpp)
      {"QuantizeLinear", C{convert_quantize_linear<T>}},
      {"MatMulInteger", C{convert_matmul_integer<T>}},
      {"QLinearMatMul", C{convert_qlinear_matmul<T>}},
      {"DequantizeLinear", C{convert_dequantize_linear<T>, h::dequantize_linear<T>}},
      // values known at load time
      {"Constant", C{convert_constant<T>}},
      {"Shape", C{convert_shape<false, T>}},
      {"Size", C{convert_shape<true, T>}},
      {"ConstantOfShape", C{convert_constant_of_shape<T>, nullptr, 0}},
      {"Concat", C{h::concat<T>}},
      {"Slice", C{convert_slice<T>, h::slice<T>, 1}},
      {"Split", C{convert_split<T>, nullptr, 1}},
      {"Gather", C{h::gather<T>}},
  };
  return table;
}

} // namespace snippets::onnx::detail
