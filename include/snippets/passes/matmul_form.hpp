// SPDX-License-Identifier: Apache-2.0
// snippets/passes/matmul_form.hpp: the form of a MatMul kernel, written once for the two
// places that follow it: the tokenizer (passes/tokenize.hpp), which grows a Subgraph only
// within it, and LowerBrgemm (passes/lower_brgemm.hpp), which lowers a body of that form.
//
// The form: a chain of products, each followed by its epilogue (elementwise ops of the
// product's shape on its values, on inputs and on scalars); the first product reads A and B
// from outside, each next one reads a value of the one before as its A (an MLP) and B from
// outside. Or attention: one Softmax of a value of the first product, read by a second product
// as its A and by nothing else. The kernel writes values of the last product.
// Stages number the parts: stage i is the i-th product in order and the epilogue computed on
// it; a value computed from inputs alone belongs to no stage (MatMulForm::none).
//
// The two walkers differ in what they walk, not in these rules: the tokenizer walks model
// nodes of a Subgraph being formed (the Softmax one node, Transposes of inputs still there, and
// it answers yes or no); LowerBrgemm walks the LIR of the canonical body (the Softmax in six ops
// that match_softmax recognises, Transposes folded into layouts), and names the rule a body
// breaks. One rule is the tokenizer's alone: it seals attention after the second product
// (only a Transpose of its output joins), where LowerBrgemm also lowers an epilogue on it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "snippets/ir/element_type.hpp"

namespace snippets::passes {

/// The types a product reads (the tokenizer takes MatMuls, their epilogue values and inputs
/// of these types only).
inline bool product_type(ElementType t) { return t == ElementType::f32 || t == ElementType::bf16; }

/// The operands of an integer product (an i32 sum of products of bytes) that kernels compute:
/// u8 or i8 A, i8 B (LowerBrgemm names what it refuses besides).
inline bool integer_product_types(ElementType a, ElementType b) {
  return is_byte_integer(a) && b == ElementType::i8;
}

/// The rules of the form (see the file comment), as the tokenizer and LowerBrgemm ask them.
struct MatMulForm {
  /// The stage of a value computed from inputs alone.
  static constexpr int none = -1;
  /// Data pointers a Brgemm and its epilogue may use: the emitter needs five more registers.
  static constexpr std::size_t max_operands = 8;
  /// Attention is two products around one Softmax.
  static constexpr std::size_t max_softmaxes = 1;
  static constexpr std::size_t max_products_with_softmax = 2;
  /// The deepest integer product whose sums fit int32: 255 x 128 x K < 2^31.
  static constexpr std::int64_t max_integer_depth = 65793;
  /// The Softmax normalises the rows of a value of the first product.
  static constexpr int softmax_stage = 0;

  /// Whether `products` products and `softmaxes` Softmaxes can form one kernel.
  static constexpr bool counts_ok(std::size_t products, std::size_t softmaxes) {
    return softmaxes <= max_softmaxes && (softmaxes == 0 || products <= max_products_with_softmax);
  }
  /// The stage product `i` reads its A from: none (from outside) for the first, the stage
  /// before for each next one (with a Softmax, through it).
  static constexpr int a_stage(std::size_t i) { return static_cast<int>(i) - 1; }
  /// Ops on inputs alone join the first epilogue only (LowerBrgemm moves them after the first
  /// product), so an op of a later stage may not read one.
  static constexpr bool reads_inputs_only_ok(int stage) { return stage <= 0; }
  /// The Softmax reads a value of softmax_stage (and has that product's shape).
  static constexpr bool softmax_ok(int stage) { return stage == softmax_stage; }
  /// After the Softmax its stage takes no more epilogue ops: only the next product reads it.
  static constexpr bool epilogue_after_softmax_ok(int stage) { return stage != softmax_stage; }
  /// The kernel writes values of its last product (with a Softmax alone, the Softmax).
  static constexpr bool output_ok(int stage, std::size_t products) {
    return stage == static_cast<int>(products) - 1;
  }
};

} // namespace snippets::passes
