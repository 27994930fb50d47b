// SPDX-License-Identifier: Apache-2.0
// snippets/passes/matmul_body.hpp: the parts of a MatMul kernel's body as LowerBrgemm
// (lower_brgemm.hpp) finds them in its Linear IR: the products in order (one, an MLP chain, or
// two around a Softmax: attention), each with its B and its epilogue (the elementwise ops on its
// result, then the Stores), the decomposed Softmax between them with the quantization of its
// probabilities, and the Results; analyse_matmul_body checks the form the tokenizer follows
// (matmul_form.hpp) on the lowered ops and names the first op outside it.
// @throws [snippets.compile.unsupported_matmul] for bodies outside this form, naming the op.
#pragma once

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "snippets/passes/attention_rows.hpp"
#include "snippets/passes/lir_queries.hpp"
#include "snippets/passes/matmul_form.hpp"

namespace snippets::passes {

/// One product: its MatMul (then its Brgemm), B, blocking and epilogue (ops, then Stores).
template <class T> struct MatMulStage {
  ir::Expression<T>* mm = nullptr;
  ir::Expression<T>* b = nullptr;
  ir::BrgemmShape shape;
  std::vector<ir::Expression<T>*> epilogue;
  std::int64_t b_offset = -1; // elements into the scratch of its BrgemmCopyB (-1: constant)
};
/// The decomposed Softmax (DecomposeSoftmax) of the first product's epilogue value `x`, and
/// the quantization of its probabilities that an integer second product reads (quantized
/// attention; passes/attention_rows.hpp).
template <class T> struct BodySoftmax : SoftmaxOps<T> {
  std::optional<QuantizedProbabilities<T>> quantized;
  /// The value the second product reads.
  ir::Expression<T>* value() const { return quantized ? quantized->ops.back() : this->ops.back(); }
};
template <class T> struct MatMulBody {
  std::vector<MatMulStage<T>> stages; // one, or two around the Softmax (attention)
  BodySoftmax<T> softmax;             // ops empty: none
  std::vector<ir::Expression<T>*> results;
};

/// Moves `exprs`, in their order, right after `at`.
template <class T>
void move_after(ir::LinearIR<T>& lir, const ir::Expression<T>& at,
                const std::vector<ir::Expression<T>*>& exprs) {
  const ir::Expression<T>* prev = &at;
  for (ir::Expression<T>* e : exprs) {
    lir.move(*e, std::next(lir.find(*prev)));
    prev = e;
  }
}

/// @throws [snippets.compile.unsupported_matmul] naming `e` and `why`.
[[noreturn]] inline void unsupported_matmul(const auto& e, const std::string& why) {
  raise("snippets.compile.unsupported_matmul",
        std::string(e.op_name()) + " '" + e.name + "' " + why);
}

/// The products, the Softmax between them and the epilogues, in LIR order; checks the form.
template <class T> MatMulBody<T> analyse_matmul_body(ir::LinearIR<T>& lir) {
  using E = ir::Expression<T>;
  MatMulBody<T> f;
  std::map<const E*, std::size_t> stage_of; // MatMul -> its stage
  for (auto& e : lir)
    if (std::holds_alternative<ir::MatMul>(e->op)) {
      stage_of[e.get()] = f.stages.size();
      f.stages.push_back({e.get(), &e->input_expr(1), {}, {}, -1});
    }
  SNIPPETS_ASSERT(!f.stages.empty()) << "LowerBrgemm on a LIR without a MatMul";
  E* mm1 = f.stages[0].mm;
  if (!std::holds_alternative<ir::Parameter>(mm1->input_expr(0).op))
    unsupported_matmul(*mm1, "reads A from '" + mm1->input_expr(0).name +
                                 "'; A must be a subgraph input");
  for (const MatMulStage<T>& s : f.stages)
    if (!std::holds_alternative<ir::Parameter>(s.b->op) &&
        !std::holds_alternative<ir::Constant>(s.b->op))
      unsupported_matmul(*s.mm, "reads B from '" + s.b->name +
                                    "'; B must be a subgraph input or a constant");

  // ops on other inputs only, which the topological order put first, join the epilogue
  std::vector<E*> early;
  for (auto& e : lir) {
    if (e.get() == mm1) break;
    if (is_loop_body(*e) && !std::holds_alternative<ir::Constant>(e->op)) early.push_back(e.get());
  }
  move_after(lir, *mm1, early);

  std::set<const E*> values{mm1}; // of the stage being read, for the check of each input
  std::set<const E*> in_softmax;
  std::set<const E*> on_epilogue_inputs; // ops of the epilogue that read no product value
  std::size_t stage = 0;
  for (auto it = std::next(lir.find(*mm1)); it != lir.end(); ++it) {
    E& e = **it;
    if (std::holds_alternative<ir::Result>(e.op)) {
      f.results.push_back(&e);
      continue;
    }
    const bool weights = std::any_of(f.stages.begin(), f.stages.end(),
                                     [&](const MatMulStage<T>& s) { return s.b == &e; });
    if (in_softmax.count(&e) || weights) continue; // (a constant B)
    if (stage_of.count(&e)) { // the next product: reads a value of this one as its A
      if (!f.softmax.ops.empty() && &e.input_expr(0) != f.softmax.value())
        unsupported_matmul(e, "reads A from '" + e.input_expr(0).name +
                                  "'; a MatMul after a Softmax must read the Softmax (attention)");
      if (!values.count(&e.input_expr(0)))
        unsupported_matmul(
            e, "reads A from '" + e.input_expr(0).name +
                   "'; a MatMul in a kernel reads a subgraph input (the first) or a value "
                   "of the product before it (an MLP or attention chain)");
      if (!MatMulForm::counts_ok(stage_of.at(&e) + 1, f.softmax.ops.empty() ? 0 : 1))
        unsupported_matmul(e,
                           "is a third MatMul around a Softmax; an attention kernel computes two "
                           "products: split the subgraph");
      if (std::get<ir::MatMul>(e.op).transpose_a)
        unsupported_matmul(
            e, "transposes the A it reads from the product before it; only its B may be "
               "transposed");
      stage = stage_of.at(&e);
      values = {&e};
      continue;
    }
    if (std::holds_alternative<ir::ReduceMax>(e.op) && f.softmax.ops.empty() &&
        values.count(&e.input_expr(0))) {
      if (!MatMulForm::softmax_ok(static_cast<int>(stage)))
        unsupported_matmul(
            e, "is a Softmax of a product after the first; a kernel's Softmax reads the "
               "first product (attention): split the subgraph");
      static_cast<SoftmaxOps<T>&>(f.softmax) = match_softmax(e);
      f.softmax.quantized = match_quantized_probabilities(*f.softmax.ops.back());
      in_softmax.insert(f.softmax.ops.begin(), f.softmax.ops.end());
      if (f.softmax.quantized)
        in_softmax.insert(f.softmax.quantized->ops.begin(), f.softmax.quantized->ops.end());
      values = {f.softmax.value()};
      continue;
    }
    MatMulStage<T>& st = f.stages[stage];
    const auto& shape = st.mm->out_desc(0).shape;
    if (!f.softmax.ops.empty() && !MatMulForm::epilogue_after_softmax_ok(static_cast<int>(stage)))
      unsupported_matmul(e, "follows the Softmax; only a second MatMul may read it (run the op in "
                            "another subgraph)");
    // an op on epilogue inputs alone (a Convert of a bias) may have a shape that broadcasts
    // to the product's: the epilogue computes it on their broadcast registers
    bool on_inputs = true;
    for (std::size_t i = 0; i < e.num_inputs(); ++i)
      on_inputs = on_inputs && !values.count(&e.input_expr(i));
    Shape grown;
    if (is_reduction(e) || std::holds_alternative<ir::Constant>(e.op) ||
        (e.out_desc(0).shape != shape &&
         !(on_inputs && try_broadcast(Shape(e.out_desc(0).shape), Shape(shape), grown) &&
           grown == Shape(shape))))
      unsupported_matmul(e,
                         "follows the MatMul but is not an elementwise op on the product's shape " +
                             Shape(shape).to_string() +
                             " or on its epilogue inputs; run it in another "
                             "subgraph");
    for (std::size_t i = 0; i < e.num_inputs(); ++i) {
      const E& src = e.input_expr(i);
      if (values.count(&src) || on_epilogue_inputs.count(&src) ||
          std::holds_alternative<ir::Scalar>(src.op))
        continue;
      if (!std::holds_alternative<ir::Parameter>(src.op))
        unsupported_matmul(e, "reads '" + src.name + "', a value of another part of the kernel");
      if (!src.out_desc(0).layout.empty())
        unsupported_matmul(e, "reads '" + src.name +
                                  "' through a layout; pass epilogue inputs planar");
    }
    st.epilogue.push_back(&e);
    (e.out_desc(0).shape == shape ? values : on_epilogue_inputs).insert(&e);
  }
  for (E* r : f.results)
    if (!values.count(&r->input_expr(0)))
      unsupported_matmul(
          *r, "writes '" + r->input_expr(0).name +
                  "', which this MatMul kernel does not keep (it writes values of the last "
                  "product, or the Softmax): split the subgraph");
  for (std::size_t i = 1; i < f.stages.size(); ++i) {
    const auto &prev = f.stages[i - 1].mm->out_desc(0).shape,
               &now = f.stages[i].mm->out_desc(0).shape;
    for (std::size_t d = 0; d + 2 < now.size(); ++d)
      if (prev[d] != now[d])
        unsupported_matmul(*f.stages[i].mm,
                           "broadcasts the batch of the product before it; give its B "
                           "that batch or none");
  }
  for (const MatMulStage<T>& s : f.stages)
    for (const E* x : {&s.mm->input_expr(0), s.b})
      if (x->data_index < lir.num_inputs && std::holds_alternative<ir::Parameter>(x->op) &&
          !product_type(lir.arg_types.at(x->data_index)) &&
          !is_byte_integer(lir.arg_types.at(x->data_index)))
        unsupported_matmul(*s.mm,
                           "reads '" + x->name + "' as " +
                               std::string(to_string(lir.arg_types.at(x->data_index))) +
                               "; a MatMul multiplies f32, bf16, u8 or i8 (convert outside)");
  for (std::size_t i = 0; i < lir.num_inputs; ++i)
    if (lir.arg_types.at(i) == ElementType::boolean)
      unsupported_matmul(*mm1,
                         "is in a kernel with a boolean input; its epilogue reads numbers only");
  for (E* r : f.results)
    if (lir.arg_types.at(r->data_index) == ElementType::boolean ||
        ProductStrides(r->in_desc(0)).col > 1)
      unsupported_matmul(
          *r, "is not a numeric output with its last axis contiguous; MatMul kernels write "
              "rows of numbers (transpose outside)");
  return f;
}

/// The type a product reads `x` as: its argument's, or for a constant the narrowest type
/// of A's kind that holds its values: bf16 when A is bf16, i8 or u8 when A is i8 or u8
/// (weights given in those types, then widened by AlignElementTypes).
template <class T>
ElementType operand_type(const ir::LinearIR<T>& lir, const ir::Expression<T>& x,
                         ElementType a_type) {
  const auto* c = std::get_if<ir::Constant>(&x.op);
  if (c && is_byte_integer(a_type)) // i8 or u8 weights, widened by AlignElementTypes
    for (const ElementType t : {ElementType::i8, ElementType::u8})
      if (std::all_of(c->values.begin(), c->values.end(),
                      [&](double v) { return round_to(t, v) == v; }))
        return t;
  if (c) {
    const bool bf16 = std::all_of(c->values.begin(), c->values.end(),
                                  [](double v) { return round_to(ElementType::bf16, v) == v; });
    return bf16 && a_type == ElementType::bf16 ? ElementType::bf16 : ElementType::f32;
  }
  return x.data_index < lir.num_inputs ? lir.arg_types.at(x.data_index) : ElementType::f32;
}

} // namespace snippets::passes
