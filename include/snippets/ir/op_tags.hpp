// SPDX-License-Identifier: Apache-2.0
// snippets/ir/op_tags.hpp: the built-in op set, one attribute-carrying tag per op.
//
// Each tag states:
//  - `name`: the op's name in dumps, errors and `Graph::make` (stable, unique);
//  - `category`: how the op is typed and shaped (see OpCategory);
//  - `float_only`: the op accepts f32, f16 and bf16 inputs only.
// The attributes are plain members compared with `==`. Semantics, as the reference
// interpreter (reference/eltwise.hpp) computes them in double:
//  - Maximum, Minimum, Relu and Clamp propagate NaN; relu(-0) and a clamp at a zero bound
//    give +0;
//  - Round rounds half to even unless `mode` says away from zero;
//  - Mod is truncated (sign of the dividend, C fmod); FloorMod has the sign of the divisor;
//  - integer results are truncated toward zero and saturated to the type's range (NaN -> 0);
//  - Convert follows the same rule for float -> integer and rounds to nearest even for
//    narrower floats; any non-zero value converts to boolean true;
//  - FakeQuantize and Quantize (below) compute in f32 steps, each rounded to f32 as a kernel
//    rounds it, on their inputs taken as f32 values (reference/quantization.hpp), so a kernel
//    gives the reference's result bit for bit, ties included;
//  - the reductions (ReduceSum ... ReduceL2) accumulate in double over `axes` (all of them
//    given, each once; keep_dims leaves them as extent 1) and round the result to the input's
//    type. NaN in gives NaN out (but see ReduceMax::ignore_nan). Over no elements (an axis of
//    extent 0): ReduceSum, ReduceSumSquare, ReduceL1 and ReduceL2 give 0, ReduceProd 1,
//    ReduceMax -inf, ReduceMin +inf and ReduceMean NaN (0 / 0). ReduceMean of an integer
//    type truncates its quotient toward zero, as Convert does. The ReduceMax (ReduceMin) of
//    zeros of both signs is a zero of either sign (kernels compare lanes in their own order);
//    the reference keeps the first.
// Adding an op: add a tag here and to OpList below, give it a reference formula
// (reference/eltwise.hpp or the interpreter), an emitter if a target can fuse it, and tests.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "snippets/ir/element_type.hpp"
#include "snippets/ir/layout.hpp"
#include "snippets/ir/shape.hpp"

namespace snippets::ir {

/// How an op's output types are inferred.
enum class OpCategory {
  parameter,  // graph input: declared type and shape
  result,     // graph output: one input, no outputs
  constant,   // declared type and shape, no inputs
  unary,      // one input, same type and shape
  binary,     // two inputs of one type, NUMPY-broadcast shape
  comparison, // two inputs of one type (boolean: false < true), boolean output, NUMPY shape
  logical,    // boolean inputs, boolean output, NUMPY-broadcast shape
  special,    // inference written out per op in type_inference.hpp
};

struct TensorType {
  ElementType type = ElementType::f32;
  Shape shape;
  bool operator==(const TensorType&) const = default;
  std::string to_string() const {
    return std::string(snippets::to_string(type)) + shape.to_string();
  }
  /// Whether the bytes of a tensor of this static type fit in int64 (no buffer can be larger).
  bool countable() const {
    if (std::find(shape.begin(), shape.end(), Dim{0}) != shape.end()) return true;
    std::int64_t n = static_cast<std::int64_t>(size_of(type));
    for (Dim d : shape)
      if (__builtin_mul_overflow(n, d, &n)) return false;
    return true;
  }
  /// Bytes of a tensor of this static type.
  /// @throws [snippets.shape.too_many_elements] when they overflow int64.
  std::int64_t bytes() const {
    if (!countable())
      raise("snippets.shape.too_many_elements",
            to_string() + " has more bytes than int64 can count; use smaller tensors");
    return shape.element_count() * static_cast<std::int64_t>(size_of(type));
  }
};

#define SNIPPETS_OP_TAG(Name, Category, FloatOnly)                                                 \
  struct Name {                                                                                    \
    static constexpr std::string_view name = #Name;                                                \
    static constexpr OpCategory category = OpCategory::Category;                                   \
    static constexpr bool float_only = FloatOnly;                                                  \
    bool operator==(const Name&) const = default;                                                  \
  }

// ---- graph inputs, outputs and constants ----
struct Parameter {
  static constexpr std::string_view name = "Parameter";
  static constexpr bool float_only = false;
  static constexpr OpCategory category = OpCategory::parameter;
  TensorType output;
  Layout layout; // the memory layout of the user's buffer (planar by default)
  /// How `layout` meets the body. false: the body is computed in the layout's order and its
  /// outputs come out in it (Canonicalize). true: only this input is read through the layout
  /// (a permutation), the body and its outputs stay in logical order; this is what a folded
  /// Transpose becomes (passes/fuse_transpose_into_parameter.hpp).
  bool strided_read = false;
  bool operator==(const Parameter&) const = default;
};
/// A graph output. `layout` is the memory layout of the output buffer (a permutation of the
/// value's dimensions, planar by default): a kernel writes the value in that order, as a folded
/// Transpose before the output (passes/fuse_transpose_into_result.hpp); the buffer's shape is
/// `layout.physical_shape(value shape)`. The reference interpreter returns logical values, as
/// it takes logical values for Parameters with layouts.
struct Result {
  static constexpr std::string_view name = "Result";
  static constexpr OpCategory category = OpCategory::result;
  static constexpr bool float_only = false;
  Layout layout;
  bool operator==(const Result&) const = default;
};
/// A tensor constant; `values` holds element_count() values in planar order, or one value
/// that fills the tensor.
struct Constant {
  static constexpr std::string_view name = "Constant";
  static constexpr bool float_only = false;
  static constexpr OpCategory category = OpCategory::constant;
  TensorType output;
  std::vector<double> values;
  bool operator==(const Constant&) const = default;
};
/// One value kept inside a kernel (the seed's Scalar); `shape` has only 1s (default rank 0).
struct Scalar {
  static constexpr std::string_view name = "Scalar";
  static constexpr bool float_only = false;
  static constexpr OpCategory category = OpCategory::constant;
  TensorType output;
  double value = 0;
  bool operator==(const Scalar&) const = default;
};

// ---- unary elementwise ----
SNIPPETS_OP_TAG(Abs, unary, false);
SNIPPETS_OP_TAG(Negative, unary, false);
SNIPPETS_OP_TAG(Relu, unary, false);
/// min(max(x, lo), hi); type inference rejects lo > hi and NaN bounds.
struct Clamp {
  static constexpr std::string_view name = "Clamp";
  static constexpr OpCategory category = OpCategory::unary;
  static constexpr bool float_only = false;
  double lo = 0, hi = 0;
  bool operator==(const Clamp&) const = default;
};
SNIPPETS_OP_TAG(Floor, unary, false);
SNIPPETS_OP_TAG(Ceiling, unary, false);
enum class RoundMode { half_to_even, half_away_from_zero };
struct Round {
  static constexpr std::string_view name = "Round";
  static constexpr OpCategory category = OpCategory::unary;
  static constexpr bool float_only = false;
  RoundMode mode = RoundMode::half_to_even;
  bool operator==(const Round&) const = default;
};
SNIPPETS_OP_TAG(Sqrt, unary, true);
/// e^x. `nonpositive` is a promise that x <= 0 or NaN (DecomposeSoftmax's x - max): the kernel
/// then skips the overflow clamp and scales by one factor; a positive x gives garbage.
struct Exp {
  static constexpr std::string_view name = "Exp";
  static constexpr OpCategory category = OpCategory::unary;
  static constexpr bool float_only = true;
  bool nonpositive = false;
  bool operator==(const Exp&) const = default;
};
SNIPPETS_OP_TAG(Log, unary, true);
SNIPPETS_OP_TAG(Sigmoid, unary, true);
SNIPPETS_OP_TAG(Tanh, unary, true);
SNIPPETS_OP_TAG(Erf, unary, true);
enum class GeluApproximation { erf, tanh };
struct Gelu {
  static constexpr std::string_view name = "Gelu";
  static constexpr OpCategory category = OpCategory::unary;
  static constexpr bool float_only = true;
  GeluApproximation approximation = GeluApproximation::erf;
  bool operator==(const Gelu&) const = default;
};
/// x * sigmoid(beta * x)
struct Swish {
  static constexpr std::string_view name = "Swish";
  static constexpr OpCategory category = OpCategory::unary;
  static constexpr bool float_only = true;
  double beta = 1.0;
  bool operator==(const Swish&) const = default;
};
SNIPPETS_OP_TAG(HSwish, unary, true);
SNIPPETS_OP_TAG(HSigmoid, unary, true);
SNIPPETS_OP_TAG(Mish, unary, true);
/// x > 0 ? x : alpha * (exp(x) - 1)
struct Elu {
  static constexpr std::string_view name = "Elu";
  static constexpr OpCategory category = OpCategory::unary;
  static constexpr bool float_only = true;
  double alpha = 1.0;
  bool operator==(const Elu&) const = default;
};
/// x >= 0 || isnan(x) ? x : alpha * x
struct LeakyRelu {
  static constexpr std::string_view name = "LeakyRelu";
  static constexpr OpCategory category = OpCategory::unary;
  static constexpr bool float_only = false;
  double alpha = 0.01;
  bool operator==(const LeakyRelu&) const = default;
};
SNIPPETS_OP_TAG(SoftPlus, unary, true);
SNIPPETS_OP_TAG(SoftSign, unary, true);
/// x ** exponent with a compile-time exponent (the seed's PowerStatic).
struct PowerStatic {
  static constexpr std::string_view name = "PowerStatic";
  static constexpr OpCategory category = OpCategory::unary;
  static constexpr bool float_only = true;
  double exponent = 1.0;
  bool operator==(const PowerStatic&) const = default;
};
SNIPPETS_OP_TAG(LogicalNot, special, false);

// ---- binary elementwise ----
SNIPPETS_OP_TAG(Add, binary, false);
SNIPPETS_OP_TAG(Subtract, binary, false);
SNIPPETS_OP_TAG(Multiply, binary, false);
SNIPPETS_OP_TAG(Divide, binary, false);
SNIPPETS_OP_TAG(Maximum, binary, false);
SNIPPETS_OP_TAG(Minimum, binary, false);
SNIPPETS_OP_TAG(Power, binary, false);
SNIPPETS_OP_TAG(SquaredDifference, binary, false);
SNIPPETS_OP_TAG(FloorMod, binary, false);
SNIPPETS_OP_TAG(Mod, binary, false);
/// x >= 0 ? x : slope * x. A rank-1 slope whose length is x's dimension 1 is per channel
/// (broadcast along axis 1); otherwise slope broadcasts by NUMPY rules.
SNIPPETS_OP_TAG(PRelu, special, false);

SNIPPETS_OP_TAG(Equal, comparison, false);
SNIPPETS_OP_TAG(NotEqual, comparison, false);
SNIPPETS_OP_TAG(Greater, comparison, false);
SNIPPETS_OP_TAG(GreaterEqual, comparison, false);
SNIPPETS_OP_TAG(Less, comparison, false);
SNIPPETS_OP_TAG(LessEqual, comparison, false);

SNIPPETS_OP_TAG(LogicalAnd, logical, false);
SNIPPETS_OP_TAG(LogicalOr, logical, false);
SNIPPETS_OP_TAG(LogicalXor, logical, false);

// ---- the rest: inference written out in type_inference.hpp ----
/// Select(cond, then, else): boolean cond; then/else of one type; NUMPY broadcast of all three.
SNIPPETS_OP_TAG(Select, special, false);
struct Convert {
  static constexpr std::string_view name = "Convert";
  static constexpr OpCategory category = OpCategory::special;
  static constexpr bool float_only = false;
  ElementType to = ElementType::f32;
  bool operator==(const Convert&) const = default;
};
struct ReduceSum {
  static constexpr std::string_view name = "ReduceSum";
  static constexpr OpCategory category = OpCategory::special;
  static constexpr bool float_only = false;
  std::vector<std::int64_t> axes;
  bool keep_dims = true;
  bool operator==(const ReduceSum&) const = default;
};
struct ReduceMax {
  static constexpr std::string_view name = "ReduceMax";
  static constexpr OpCategory category = OpCategory::special;
  static constexpr bool float_only = false;
  std::vector<std::int64_t> axes;
  bool keep_dims = true;
  /// NaN elements are left out: the max of the others (-inf when all are NaN). For a max whose
  /// users propagate NaN themselves (a Softmax's shift: exp(NaN - m) is NaN for any m); it
  /// spares the JIT a NaN test per vector. Default: NaN in, NaN out, as ONNX ReduceMax.
  bool ignore_nan = false;
  bool operator==(const ReduceMax&) const = default;
};
/// The smallest element, NaN if any is NaN (as ReduceMax, mirrored).
struct ReduceMin {
  static constexpr std::string_view name = "ReduceMin";
  static constexpr OpCategory category = OpCategory::special;
  static constexpr bool float_only = false;
  std::vector<std::int64_t> axes;
  bool keep_dims = true;
  bool operator==(const ReduceMin&) const = default;
};
/// The product of the elements.
struct ReduceProd {
  static constexpr std::string_view name = "ReduceProd";
  static constexpr OpCategory category = OpCategory::special;
  static constexpr bool float_only = false;
  std::vector<std::int64_t> axes;
  bool keep_dims = true;
  bool operator==(const ReduceProd&) const = default;
};
/// The sum divided by the number of elements reduced.
struct ReduceMean {
  static constexpr std::string_view name = "ReduceMean";
  static constexpr OpCategory category = OpCategory::special;
  static constexpr bool float_only = false;
  std::vector<std::int64_t> axes;
  bool keep_dims = true;
  bool operator==(const ReduceMean&) const = default;
};
/// The sum of the squares.
struct ReduceSumSquare {
  static constexpr std::string_view name = "ReduceSumSquare";
  static constexpr OpCategory category = OpCategory::special;
  static constexpr bool float_only = false;
  std::vector<std::int64_t> axes;
  bool keep_dims = true;
  bool operator==(const ReduceSumSquare&) const = default;
};
/// The sum of the absolute values.
struct ReduceL1 {
  static constexpr std::string_view name = "ReduceL1";
  static constexpr OpCategory category = OpCategory::special;
  static constexpr bool float_only = false;
  std::vector<std::int64_t> axes;
  bool keep_dims = true;
  bool operator==(const ReduceL1&) const = default;
};
/// The square root of the sum of the squares.
struct ReduceL2 {
  static constexpr std::string_view name = "ReduceL2";
  static constexpr OpCategory category = OpCategory::special;
  static constexpr bool float_only = false;
  std::vector<std::int64_t> axes;
  bool keep_dims = true;
  bool operator==(const ReduceL2&) const = default;
};

/// The reductions a kernel computes in a reduce loop (ReduceInit, ReduceAccumulate and
/// HorizonReduce of ir/lowered_ops.hpp, made by passes/decompose_reductions.hpp).
template <class Tag>
inline constexpr bool row_reduction =
    std::is_same_v<Tag, ReduceSum> || std::is_same_v<Tag, ReduceMax> ||
    std::is_same_v<Tag, ReduceMin> || std::is_same_v<Tag, ReduceProd>;
/// The reductions a data-flow pass writes as a ReduceSum and elementwise ops
/// (passes/decompose_composite_reductions.hpp).
template <class Tag>
inline constexpr bool composite_reduction =
    std::is_same_v<Tag, ReduceMean> || std::is_same_v<Tag, ReduceSumSquare> ||
    std::is_same_v<Tag, ReduceL1> || std::is_same_v<Tag, ReduceL2>;
/// Any reduction over `axes` (keep_dims keeps them as extent 1): typed and shaped alike.
template <class Tag>
inline constexpr bool reduction = row_reduction<Tag> || composite_reduction<Tag>;

struct Softmax {
  static constexpr std::string_view name = "Softmax";
  static constexpr OpCategory category = OpCategory::special;
  static constexpr bool float_only = true;
  std::int64_t axis = -1;
  bool operator==(const Softmax&) const = default;
};
/// output dim i = input dim order[i]
struct Transpose {
  static constexpr std::string_view name = "Transpose";
  static constexpr OpCategory category = OpCategory::special;
  static constexpr bool float_only = false;
  std::vector<std::size_t> order;
  bool operator==(const Transpose&) const = default;
};
/// NUMPY broadcast of the input to `shape` (which must be the broadcast result).
struct Broadcast {
  static constexpr std::string_view name = "Broadcast";
  static constexpr OpCategory category = OpCategory::special;
  static constexpr bool float_only = false;
  Shape shape;
  bool operator==(const Broadcast&) const = default;
};
/// Same elements in planar order, new shape; one dimension may be -1 (inferred).
struct Reshape {
  static constexpr std::string_view name = "Reshape";
  static constexpr OpCategory category = OpCategory::special;
  static constexpr bool float_only = false;
  std::vector<std::int64_t> shape;
  bool operator==(const Reshape&) const = default;
};
/// Elements [start, start + length) along `axis` (negative: from the end), the other dims
/// whole: one part of an ONNX Split (or an ONNX Slice of step 1). A kernel takes a Slice of
/// the innermost axis of one of its inputs as a load at an offset with the input's row
/// stride (passes/fuse_slice_into_parameter.hpp); others run on the reference path.
struct Slice {
  static constexpr std::string_view name = "Slice";
  static constexpr OpCategory category = OpCategory::special;
  static constexpr bool float_only = false;
  std::int64_t axis = -1;
  std::int64_t start = 0;
  std::int64_t length = 0;
  bool operator==(const Slice&) const = default;
};
/// FakeQuantize(x, input_low, input_high, output_low, output_high): OpenVINO's FakeQuantize-1,
/// x quantized to `levels` evenly spaced values. The four ranges broadcast with x by NUMPY
/// rules (per tensor, per channel as [C, 1, ..., 1], or per element); the output has x's float
/// type and the broadcast shape. With il, ih, ol, oh the ranges, lo = min(il, ih),
/// hi = max(il, ih), isc = (levels - 1) / (ih - il) and osc = (oh - ol) / (levels - 1):
///   x <= lo: ol;   x > hi: oh;   NaN x: NaN (so are NaN ranges);
///   else: round((x - il) * isc) * osc + ol, round half to even,
/// every step rounded to f32 (OpenVINO's reference divides by (ih - il) per element instead,
/// which can differ from this in the last bit of the quotient, and so in a tie), the result
/// then rounded to x's type. levels is in [2, 2^24] (f32 holds levels - 1 exactly).
struct FakeQuantize {
  static constexpr std::string_view name = "FakeQuantize";
  static constexpr OpCategory category = OpCategory::special;
  static constexpr bool float_only = true;
  static constexpr std::int64_t max_levels = std::int64_t{1} << 24;
  std::int64_t levels = 256;
  bool operator==(const FakeQuantize&) const = default;
};
/// Quantize(x, scale, zero_point): ONNX QuantizeLinear, saturate(round(x / scale) + zero_point)
/// as `to` (u8 or i8): the quotient rounded to f32, then half to even (ONNX's f32 arithmetic);
/// a NaN quotient gives 0, a fractional zero point truncates, both as Convert does. The three
/// inputs are floats of one type and broadcast by NUMPY rules (per axis: [C, 1, ..., 1]).
struct Quantize {
  static constexpr std::string_view name = "Quantize";
  static constexpr OpCategory category = OpCategory::special;
  static constexpr bool float_only = true;
  ElementType to = ElementType::u8;
  bool operator==(const Quantize&) const = default;
};
/// NUMPY matmul (batch dims broadcast; rank-1 operands are promoted and the added dim dropped);
/// the transposes swap the last two dims of a rank >= 2 operand. Operands of one type give a
/// product of that type; i8 and u8 operands (in any mix) give the exact sum as i32 (ONNX
/// MatMulInteger). `a_zero_point` is subtracted from A's values first (MatMulInteger's
/// per-tensor a_zero_point; kernels take it on integer products only).
struct MatMul {
  static constexpr std::string_view name = "MatMul";
  static constexpr OpCategory category = OpCategory::special;
  static constexpr bool float_only = false;
  bool transpose_a = false, transpose_b = false;
  std::int32_t a_zero_point = 0;
  bool operator==(const MatMul&) const = default;
};
/// An op the framework cannot fuse, with declared outputs, so whole models can be described.
/// The reference interpreter runs it through a callable registered under `type_name`.
struct Opaque {
  static constexpr std::string_view name = "Opaque";
  static constexpr OpCategory category = OpCategory::special;
  static constexpr bool float_only = false;
  std::string type_name;
  std::vector<TensorType> outputs;
  bool operator==(const Opaque&) const = default;
};

#undef SNIPPETS_OP_TAG

template <class... Ts> struct TypeList {};

/// Every built-in tag except Subgraph (which depends on the backend traits, see op.hpp).
using BuiltinOps =
    TypeList<Parameter, Result, Constant, Scalar, Abs, Negative, Relu, Clamp, Floor, Ceiling, Round,
             Sqrt, Exp, Log, Sigmoid, Tanh, Erf, Gelu, Swish, HSwish, HSigmoid, Mish, Elu,
             LeakyRelu, SoftPlus, SoftSign, PowerStatic, LogicalNot, Add, Subtract, Multiply,
             Divide, Maximum, Minimum, Power, SquaredDifference, FloorMod, Mod, PRelu, Equal,
             NotEqual, Greater, GreaterEqual, Less, LessEqual, LogicalAnd, LogicalOr, LogicalXor,
             Select, Convert, FakeQuantize, Quantize, ReduceSum, ReduceMax, ReduceMin, ReduceProd,
             ReduceMean, ReduceSumSquare, ReduceL1, ReduceL2, Softmax, Transpose, Broadcast,
             Reshape, Slice, MatMul, Opaque>;

} // namespace snippets::ir
