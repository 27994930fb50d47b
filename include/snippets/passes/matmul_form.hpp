// SPDX-License-Identifier: Apache-2.0
// snippets/passes/matmul_form.hpp: the form of a MatMul kernel, written once for the two
// places that follow it: the tokenizer (passes/tokenize.hpp), which grows a Subgraph only
// within it, and LowerBrgemm (passes/lower_brgemm.hpp), which lowers a body of that form.
#pragma once

#include <cstddef>

#include "snippets/ir/element_type.hpp"

namespace snippets::passes {

/// The types a product reads (the tokenizer takes MatMuls, their epilogue values and inputs
/// of these types only).
inline bool product_type(ElementType t) { return t == ElementType::f32 || t == ElementType::bf16; }

/// Data pointers a Brgemm and its epilogue may use: the emitter needs five more registers.
inline constexpr std::size_t max_matmul_operands = 8;

} // namespace snippets::passes
