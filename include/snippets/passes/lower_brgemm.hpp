// SPDX-License-Identifier: Apache-2.0
// snippets/passes/lower_brgemm.hpp: LowerBrgemm, the control flow of a MatMul kernel.
//
// A body with a MatMul is one product and its epilogue (elementwise ops on the product, on
// other inputs and on scalars, with the product's shape), then either
//  - more products, each reading a value of the one before as its A, each with its epilogue
//    (an MLP chain: relu(relu(x W1 + b1) W2 + b2) ...); or
//  - a Softmax of that value over its rows, and then optionally a second MatMul that reads
//    the Softmax as its A, with an epilogue of its own (attention: MatMul -> scale/mask ->
//    Softmax -> MatMul).
// These rules, shared with the tokenizer, are MatMulForm's (matmul_form.hpp).
// LowerBrgemm turns the converted LIR into
//
//   Loop batch dims (extent > 1)       ordinary LIR loops with pointer increments
//     [BrgemmCopyB ...]                B packed into panels (scratch), in the batch loops along
//                                      which it changes
//     Loop M in blocks of m_blk rows   (the outermost loop is the parallel one; with one
//                                      batch dim, a call may take some of its rows: work[1])
//       Brgemm                         m_blk rows x all of N, K deep, on register tiles
//                                      (without batch dims, the last product's may take the
//                                      call's range of panels: column_split, work[1])
//       epilogue ops, Stores           emitted by the Brgemm on its accumulators
//       [SoftmaxRows]                  the block's rows of the scores, in place (scratch, or
//                                      the output when the Softmax is the kernel's result;
//                                      quantized attention: also the probabilities as bytes)
//       [Brgemm, epilogue, Stores]     the second product, A = those rows (exp(x - max);
//                                      it divides each row by its sum on the accumulators)
//       [Brgemm, epilogue, Stores]...  an MLP chain: each product's A is the block's rows of
//                                      the value before, stored in scratch by the epilogue
//                                      before (two areas, written and read in turn; bytes
//                                      when that value is quantized to u8/i8: int8 products)
//     [tail block: M % m_blk rows]     a copy of the group in a run-once loop
//
// Blocking (brgemm_blocking.hpp): the register tile is m_r rows by n_r vectors (6 x 4 with 32
// vector registers: zmm, NEON; 6 x 2 ymm), fewer rows when the epilogue needs registers; B is
// read from panels of n_r
// vectors (one contiguous row of the panel per depth step, reused by every row tile of the
// block); m_blk rows of A and of the scores (about 128 KiB) are reused by every panel.
// Transposes and layouts folded into the inputs and outputs are strides. Constant weights are
// packed here, once, at compile time (Brgemm::b_packed); a B input is packed by BrgemmCopyB in
// the kernel. Per-thread scratch holds the packed Bs and the scores or activations blocks.
// The backend's emitter (target/<arch>/emitters/brgemm.hpp) runs the epilogue on each accumulator
// register before it is stored: no second pass over memory.
// @throws [snippets.compile.unsupported_matmul] for bodies outside this form, naming the op.
#pragma once

#include <algorithm>
#include <map>
#include <set>

#include "snippets/passes/brgemm_blocking.hpp"
#include "snippets/passes/lir_queries.hpp"
#include "snippets/passes/matmul_body.hpp"
#include "snippets/passes/pass.hpp"
#include "snippets/passes/properties.hpp"

namespace snippets::passes {

template <class T> bool has_brgemm(const ir::LinearIR<T>& lir) {
  for (const auto& e : lir)
    if (std::holds_alternative<ir::MatMul>(e->op) || std::holds_alternative<ir::Brgemm>(e->op))
      return true;
  return false;
}

struct LowerBrgemm {
  using pass_tag = lir_pass_tag;
  static constexpr std::string_view name = "LowerBrgemm";
  using before = Properties<property::LoopsMarked>;
  using establishes =
      Properties<property::LoopsMarked, property::ReductionsDecomposed, property::BuffersInserted,
                 property::LoadsStoresInserted, property::BroadcastsExplicit,
                 property::LoopPortsInitialized, property::BuffersAllocated,
                 property::PointerShiftsUnique, property::TailsSpecialized>;
  /// Data pointers a Brgemm and its epilogue may use (passes/matmul_form.hpp).
  static constexpr std::size_t max_operands = MatMulForm::max_operands;

  /// The types a product reads (passes/matmul_form.hpp).
  static bool product_type(ElementType t) { return passes::product_type(t); }

  template <class T> void run(ir::LinearIR<T>& lir, PassContext<T>& ctx) const {
    Form<T> f = analyse_matmul_body(lir);
    build(lir, ctx, f);
  }

private:
  template <class T> using Stage = MatMulStage<T>;
  template <class T> using Form = MatMulBody<T>;

  /// What build() has decided so far, read and extended by its steps in order.
  template <class T> struct Plan {
    Plan(ir::LinearIR<T>& l, Form<T>& form) : lir(l), f(form) {}
    ir::LinearIR<T>& lir;
    Form<T>& f;
    std::vector<Dim> out;           // the last product's shape, the kernel's domain
    std::vector<Dim> out1;          // the first product's shape (the scores of attention)
    Dim M = 0;                      // rows of the products
    std::size_t n_args = 0;         // inputs + outputs: the scratch pointer's index
    std::vector<std::size_t> batch; // batch dims of extent > 1
    std::int64_t scratch = 0;       // elements of scratch per thread
    std::int64_t widest = 0;        // the longest row a block keeps: A's, and those in scratch
    std::int64_t m_blk = 0;         // rows of one block
    bool columns = false;           // calls may take a range of the last product's panels
    ir::Expression<T>* softmax_rows = nullptr;

    /// Reserves `elements` of scratch (rounded up to 16), returning where they start.
    std::int64_t take_scratch(std::int64_t elements) {
      const std::int64_t at = scratch;
      scratch += (elements + 15) / 16 * 16;
      return at;
    }
    /// A Store of `v` to argument `index` (or the scratch), before the first Result.
    ir::Expression<T>& add_store(ir::PortConnector<T>* v, std::size_t index,
                                 ir::PortDescriptor desc, std::int64_t offset,
                                 const std::string& name) {
      const ElementType t = index < n_args ? lir.arg_types.at(index) : ElementType::f32;
      ir::Expression<T>& st =
          lir.insert_node(lir.find(*f.results.front()), ir::Store{0, offset, t}, {v}, 1, {}, name);
      st.data_index = index;
      st.out_desc(0) = std::move(desc);
      return st;
    }
  };

  /// A kernel argument's pointer strides (elements): per row of the product, per batch dim.
  struct Arg {
    std::size_t index;
    std::int64_t row;
    ir::PortDescriptor desc;
    std::int64_t bytes; // per element
  };

  /// The loops of the kernel: batch dims outermost (the first is the parallel one), then M.
  struct Loops {
    std::vector<std::size_t> batch;
    std::size_t m = 0;
  };

  /// The steps below, in order; each adds to the LIR where the one before left it.
  template <class T> static void build(ir::LinearIR<T>& lir, PassContext<T>& ctx, Form<T>& f) {
    Plan<T> p = plan(lir, f);           // the domain, M, the batch dims
    choose_shapes(p, ctx.config.lanes); // each product's BrgemmShape
    check_integer_products(p);          // what the int8 path computes
    choose_tiles(p, ctx.config);        // register tiles, scratch for packed Bs
    choose_block_rows(p);               // m_blk
    if (!f.softmax.ops.empty())         // rows between two products go to scratch:
      add_softmax_rows(p);              // the scores of a Softmax,
    else
      add_chain_stores(p);  // or the activations of an MLP chain
    add_result_stores(p);   // the outputs
    choose_column_split(p); // whether calls may take a part of N
    if (p.scratch) {
      lir.buffer_pointers = 1;
      lir.scratch_bytes = p.scratch * 4;
      ctx.config.gp_registers -= 1; // the scratch's data pointer
    }
    const std::vector<Arg> args = pointer_args(p, epilogue_inputs(p));      // what the loops move
    const Loops loops = add_loops(p);                                       // batch loops, M loop
    const auto b_source = add_b_copies(p, loops);                           // packing B in-kernel
    const std::vector<ir::Expression<T>*> group = add_brgemms(p, b_source); // the M block
    put_group_in_loops(p, group, loops, args);                              // and its pointers
    // the tail block: the last M % m_blk rows
    if (const std::int64_t rest = p.M % p.m_blk) add_tail(lir, group, loops.m, rest, args);
  }

  /// The shapes build() works on; the outputs must have the last product's shape.
  template <class T> static Plan<T> plan(ir::LinearIR<T>& lir, Form<T>& f) {
    Plan<T> p(lir, f);
    p.out = f.stages.back().mm->out_desc(0).shape;
    p.out1 = f.stages.front().mm->out_desc(0).shape;
    const std::size_t R = p.out.size();
    if (lir.domain != p.out)
      unsupported_matmul(*f.stages.back().mm, "is broadcast further by its epilogue (outputs " +
                                                  Shape(lir.domain).to_string() + ", product " +
                                                  Shape(p.out).to_string() +
                                                  "); outputs must have the product's shape");
    p.M = p.out[R - 2];
    p.n_args = lir.num_inputs + lir.num_outputs;
    for (std::size_t d = 0; d + 2 < R; ++d) // domain: batch dims of extent > 1, then M and N
      if (p.out[d] > 1) p.batch.push_back(d);
    return p;
  }

  /// Each product's BrgemmShape: the first reads its operands' types and strides, each next
  /// one reads A as rows of f32 in scratch.
  template <class T> static void choose_shapes(Plan<T>& p, int lanes) {
    auto& lir = p.lir;
    Stage<T>& s1 = p.f.stages.front();
    const ir::Expression<T>& a = s1.mm->input_expr(0);
    const ElementType a_type = operand_type(lir, a, ElementType::f32);
    s1.shape =
        brgemm_shape(std::get<ir::MatMul>(s1.mm->op), a.out_desc(0), s1.b->out_desc(0), lanes,
                     a_type, operand_type(lir, *s1.b, a_type), lir.native_bf16, lir.int8_dot);
    s1.shape.signed_a = s1.shape.quads && reads_a_signed<T>();
    // A: rows of f32 in scratch, or of bytes (quantized probabilities or activations)
    for (std::size_t i = 1; i < p.f.stages.size(); ++i) {
      Stage<T>& s = p.f.stages[i];
      const ElementType rows_type = a_rows_type(p.f, s);
      s.shape =
          brgemm_shape(std::get<ir::MatMul>(s.mm->op),
                       {p.f.stages[i - 1].mm->out_desc(0).shape, {}, {}}, s.b->out_desc(0), lanes,
                       rows_type, operand_type(lir, *s.b, rows_type), false, lir.int8_dot);
      s.shape.signed_a = s.shape.quads && reads_a_signed<T>();
    }
  }

  /// Whether the target's byte dot products read A signed (BrgemmShape::signed_a): the
  /// optional traits member `static constexpr bool int8_signed_a` (AArch64's SDOT); false
  /// without it (VPDPBUSD reads A unsigned).
  template <class T> static constexpr bool reads_a_signed() {
    if constexpr (requires { T::int8_signed_a; })
      return T::int8_signed_a;
    else
      return false;
  }

  /// The type of the rows a product after the first reads as A from scratch: the quantized
  /// probabilities' (attention), u8 or i8 when the stage before ends in a Convert to them (a
  /// quantized MLP chain: the epilogue stores those bytes), else f32.
  template <class T> static ElementType a_rows_type(const Form<T>& f, const Stage<T>& s) {
    if (f.softmax.quantized) return f.softmax.quantized->type;
    if (!f.softmax.ops.empty()) return ElementType::f32;
    const auto* c = std::get_if<ir::Convert>(&s.mm->input_expr(0).op);
    return c && is_byte_integer(c->to) ? c->to : ElementType::f32;
  }

  /// Integer products (BrgemmShape::quads or words): u8 or i8 A (less a zero point of its type)
  /// times i8 B, on a target that has them, A's depths contiguous, sums that fit int32, and a
  /// B packed in the kernel with its rows or its columns contiguous. After the first, an
  /// integer product reads bytes its stage before stored (quantized probabilities or
  /// activations).
  template <class T> static void check_integer_products(const Plan<T>& p) {
    for (const Stage<T>& s : p.f.stages) {
      const ir::BrgemmShape& sh = s.shape;
      if (is_byte_integer(sh.a_type) != is_byte_integer(sh.b_type))
        unsupported_matmul(
            *s.mm, "multiplies " + std::string(to_string(sh.a_type)) + " by " +
                       std::string(to_string(sh.b_type)) +
                       "; an integer product reads i8 or u8 on both sides (convert outside)");
      if (!sh.quads && !sh.words) {
        if (sh.a_zero != 0)
          unsupported_matmul(*s.mm,
                             "has an A zero point, which only integer products (u8/i8) take");
        continue;
      }
      if (!p.lir.int8_products)
        unsupported_matmul(*s.mm, "multiplies u8/i8 operands, and this target has no int8 products "
                                  "(docs/matmul.md, int8); convert them to f32 outside");
      if (sh.b_type != ElementType::i8)
        unsupported_matmul(
            *s.mm, "reads its B as u8; int8 products multiply u8 or i8 A by i8 B (give B as "
                   "i8, or convert both to f32 outside)");
      if (round_to(sh.a_type, sh.a_zero) != sh.a_zero)
        unsupported_matmul(*s.mm, "has the A zero point " + std::to_string(sh.a_zero) +
                                      ", which A's type " + std::string(to_string(sh.a_type)) +
                                      " does not hold");
      if (sh.a_depth != 1)
        unsupported_matmul(*s.mm,
                           "reads a u8/i8 A along strided depths (transposed); pass A planar");
      if (sh.k > max_integer_depth)
        unsupported_matmul(*s.mm, "sums " + std::to_string(sh.k) +
                                      " products of bytes, which may overflow "
                                      "int32 past K = " +
                                      std::to_string(max_integer_depth) + "; split the depth");
      if (!std::holds_alternative<ir::Constant>(s.b->op) && sh.b_col != 1 && sh.b_depth != 1)
        unsupported_matmul(
            *s.mm, "reads an i8 B input whose rows and columns are both strided; pass B "
                   "planar [K, N] or transposed [N, K] (or give constant weights, packed at "
                   "compile time in any layout)");
    }
  }
  static constexpr std::int64_t max_integer_depth = MatMulForm::max_integer_depth;

  /// Each product's register tile, which fixes its B panels: scratch for a B packed in the
  /// kernel; a constant B (packed at compile time) must be one matrix.
  template <class T> static void choose_tiles(Plan<T>& p, const LoweringConfig& config) {
    using E = ir::Expression<T>;
    for (const Stage<T>& s : p.f.stages)
      if (s.shape.b_type == ElementType::bf16 && !s.shape.pairs && s.shape.b_col != 1 &&
          s.shape.b_depth != 1 && !std::holds_alternative<ir::Constant>(s.b->op))
        unsupported_matmul(*s.mm,
                           "reads a bf16 B whose rows and columns are both strided; pass it planar "
                           "or transposed");
    // threads share an MLP chain's rows without repeating work only between blocks of rows (a
    // next product reads whole rows of the one before): few rows keep two blocks (M = 8: two
    // of 4 rows, not one tile of 8)
    const bool chain = p.f.stages.size() > 1 && p.f.softmax.ops.empty();
    const int max_rows = chain && p.M < 2 * config.max_tile_rows
                             ? static_cast<int>(std::max<Dim>(1, (p.M + 1) / 2))
                             : config.max_tile_rows;
    for (Stage<T>& s : p.f.stages) { // the tile fixes the panels, so the packed size
      choose_tile(s.shape, p.M, *s.mm, std::span<E* const>(s.epilogue), config, max_rows);
      if (std::holds_alternative<ir::Constant>(s.b->op)) {
        for (std::size_t d = 0; d + 2 < p.out.size(); ++d)
          if (stride_along(s.b->out_desc(0), d) != 0)
            unsupported_matmul(*s.mm, "has a constant B with batch dims; give it rank 2");
      } else {
        s.b_offset = p.take_scratch(s.shape.packed_elements());
      }
    }
  }

  /// The rows of one block: the rows of A and of the scratch rows a block keeps stay in cache.
  template <class T> static void choose_block_rows(Plan<T>& p) {
    p.widest = p.f.stages.front().shape.k;
    for (std::size_t i = 1; i < p.f.stages.size(); ++i)
      p.widest = std::max(p.widest, p.f.stages[i].shape.k);
    p.m_blk = block_rows(p.f.stages.front().shape.m_r, p.M, 4 * p.widest, p.batch.empty());
    if (p.batch.size() == 1) // threads may share a batch index's rows (row_split_blocks)
      p.m_blk = row_split_blocks(p.f.stages, p.M, p.out[p.batch[0]], p.m_blk);
  }

  /// The Softmax: a Store of the scores, SoftmaxRows over the block's rows in place (scratch,
  /// or the output when the Softmax is the kernel's result), read by what read the Softmax.
  template <class T> static void add_softmax_rows(Plan<T>& p) {
    using E = ir::Expression<T>;
    auto& lir = p.lir;
    Form<T>& f = p.f;
    const std::int64_t N1 = p.out1[p.out1.size() - 1];
    const bool attention = f.stages.size() == 2;
    E& value = *f.softmax.value();
    if (!attention && f.results.size() != 1)
      unsupported_matmul(value, "is written to more than one output; write it once");
    // without a second product SoftmaxRows works in place in the output, on f32 rows
    if (!attention && lir.arg_types.at(f.results.front()->data_index) != ElementType::f32)
      unsupported_matmul(
          value, "writes " +
                     std::string(to_string(lir.arg_types.at(f.results.front()->data_index))) +
                     "; a Softmax of a product is written as f32 (run a Convert after it)");
    E* r = attention ? nullptr : f.results.front();
    const std::size_t index = attention ? p.n_args : r->data_index;
    const std::int64_t at = attention ? p.take_scratch(p.m_blk * N1) : 0;
    ir::PortDescriptor desc = attention ? ir::PortDescriptor{p.out1, {}, {}} : r->in_desc(0);
    desc.reg = {};
    E& st = p.add_store(&f.softmax.x->output(0), index, desc, at, value.name + "/scores");
    // attention: the second Brgemm divides by the sums (one pass over the rows less)
    const auto& q = f.softmax.quantized;
    ir::SoftmaxRows tag{p.m_blk, N1, ProductStrides(desc).row, at,
                        attention && !q ? p.take_scratch(p.m_blk) : -1};
    if (q) { // the probabilities quantized into rows of bytes, the second product's A
      tag.quantized = p.take_scratch((p.m_blk * N1 + 3) / 4);
      tag.q_scale = q->scale;
      tag.q_zero = q->zero;
      tag.q_type = q->type;
    }
    E& rows =
        lir.insert_node(lir.find(*f.results.front()), tag, {&st.output(0)}, 1, {}, value.name);
    rows.data_index = index;
    rows.out_desc(0).shape = p.out1;
    value.output(0).replace_all_uses_with(&rows.output(0));
    std::vector<E*> ops = f.softmax.ops, scalars{&f.softmax.ops[4]->input_expr(0)};
    if (q) {
      ops.insert(ops.end(), q->ops.begin(), q->ops.end());
      for (E* e : q->ops)
        for (std::size_t i = 0; i < e->num_inputs(); ++i)
          if (std::holds_alternative<ir::Scalar>(e->input_expr(i).op))
            scalars.push_back(&e->input_expr(i));
    }
    for (auto it = ops.rbegin(); it != ops.rend(); ++it) lir.erase(**it);
    for (std::size_t i = 0; i < scalars.size(); ++i) // (each once)
      if (std::find(scalars.begin(), scalars.begin() + std::ptrdiff_t(i), scalars[i]) ==
              scalars.begin() + std::ptrdiff_t(i) &&
          scalars[i]->output(0).consumers().empty())
        lir.erase(*scalars[i]);
    f.stages.front().epilogue.push_back(&st);
    p.softmax_rows = &rows;
  }

  /// An MLP chain: each product after the first reads its A from scratch, where the last op of
  /// the stage before stores a block of m_blk rows (f32, or the bytes of a quantized chain).
  /// Two areas serve every stage, one written while the other is read.
  template <class T> static void add_chain_stores(Plan<T>& p) {
    Form<T>& f = p.f;
    if (f.stages.size() < 2) return;
    const std::int64_t area[2] = {p.take_scratch(p.m_blk * p.widest),
                                  f.stages.size() > 2 ? p.take_scratch(p.m_blk * p.widest) : 0};
    for (std::size_t i = 1; i < f.stages.size(); ++i) {
      ir::Expression<T>& mm = *f.stages[i].mm;
      ir::PortConnector<T>& value = mm.input_connector(0);
      const auto& shape = f.stages[i - 1].mm->out_desc(0).shape;
      const ElementType t = f.stages[i].shape.a_type; // (offsets: elements of that type)
      const std::int64_t at = area[(i - 1) % 2] * (4 / std::int64_t(size_of(t)));
      ir::Expression<T>& st = p.lir.insert_node(p.lir.find(mm), ir::Store{0, at, t}, {&value}, 1,
                                                {}, mm.input_expr(0).name + "/rows");
      st.data_index = p.n_args;
      st.out_desc(0) = ir::PortDescriptor{shape, {}, {}};
      mm.input(0).set(&st.output(0));
      f.stages[i - 1].epilogue.push_back(&st);
    }
  }

  /// The Stores of the outputs, after the last epilogue (a Softmax's is in place already).
  template <class T> static void add_result_stores(Plan<T>& p) {
    for (ir::Expression<T>* r : p.f.results) {
      if (&r->input_expr(0) == p.softmax_rows) continue; // the Softmax is computed in place
      ir::PortDescriptor desc = r->in_desc(0);
      desc.reg = {};
      ir::Expression<T>& st = p.add_store(&r->input_connector(0), r->data_index, desc, 0, r->name);
      r->input(0).set(&st.output(0));
      p.f.stages.back().epilogue.push_back(&st);
    }
  }

  /// Whether calls may take ranges of the last product's column panels (column_split(),
  /// brgemm_blocking.hpp): a kernel without batch dimensions or Softmax (a GEMM, an MLP chain).
  template <class T> static void choose_column_split(Plan<T>& p) {
    if (p.batch.empty() && p.f.softmax.ops.empty())
      p.columns = column_split(p.lir, p.f.stages, p.n_args);
  }

  /// The inputs the epilogues read besides the products (A again, a residual, is not another);
  /// checks that A, the packed Bs, these and the outputs fit in max_operands data pointers.
  template <class T> static std::set<ir::Expression<T>*> epilogue_inputs(const Plan<T>& p) {
    using E = ir::Expression<T>;
    const Stage<T>& s1 = p.f.stages.front();
    std::size_t operands = 1 + p.f.results.size();
    std::set<E*> extras;
    for (const Stage<T>& s : p.f.stages) {
      operands += s.b_offset >= 0;
      for (E* e : s.epilogue)
        for (std::size_t i = 0; i < e->num_inputs(); ++i)
          if (std::holds_alternative<ir::Parameter>(e->input_expr(i).op) &&
              &e->input_expr(i) != &s1.mm->input_expr(0))
            extras.insert(&e->input_expr(i));
    }
    operands += extras.size();
    if (operands > max_operands)
      unsupported_matmul(
          *s1.mm, "and its epilogue read and write " + std::to_string(operands) +
                      " tensors; a MatMul kernel takes at most " + std::to_string(max_operands) +
                      " (A, B, the epilogue's inputs and the outputs): split the subgraph");
    return extras;
  }

  /// The arguments the M and batch loops move: A, the epilogue inputs and the outputs (B is
  /// moved where it is packed). A read again by an epilogue shares A's pointer.
  template <class T>
  static std::vector<Arg> pointer_args(const Plan<T>& p,
                                       const std::set<ir::Expression<T>*>& extras) {
    const auto& lir = p.lir;
    const Stage<T>& s1 = p.f.stages.front();
    const ir::Expression<T>& a = s1.mm->input_expr(0);
    std::vector<Arg> args{
        {a.data_index, s1.shape.a_row, a.out_desc(0), arg_bytes(lir, a.data_index)}};
    for (ir::Expression<T>* x : extras) {
      const Arg g{x->data_index, ProductStrides(x->out_desc(0)).row, x->out_desc(0),
                  arg_bytes(lir, x->data_index)};
      for (const Stage<T>& s : p.f.stages)
        if (s.b == x)
          unsupported_matmul(*s.mm,
                             "reads its B '" + x->name + "' again in an epilogue; pass it twice");
      if (g.index != a.data_index) {
        args.push_back(g);
        continue;
      }
      // A read again by an epilogue (a residual): one register, so one shift per loop
      bool same = g.row == args[0].row;
      for (std::size_t d : p.batch)
        same = same && stride_along(g.desc, d) == stride_along(args[0].desc, d);
      if (!same)
        unsupported_matmul(*s1.mm, "reads its A '" + x->name +
                                       "' again in an epilogue with other strides; pass it twice");
    }
    for (ir::Expression<T>* r : p.f.results)
      args.push_back({r->data_index, ProductStrides(r->in_desc(0)).row, r->in_desc(0),
                      arg_bytes(lir, r->data_index)});
    return args;
  }

  /// The kernel's domain (batch dims, M, N) and its loops: batch dims outermost (the first is
  /// the parallel one), then blocks of m_blk rows.
  template <class T> static Loops add_loops(Plan<T>& p) {
    auto& lir = p.lir;
    const std::size_t R = p.out.size();
    lir.domain.clear();
    for (std::size_t d : p.batch) lir.domain.push_back(p.out[d]);
    lir.domain.push_back(p.M);
    lir.domain.push_back(p.out[R - 1]);
    Loops loops;
    for (std::size_t i = 0; i < p.batch.size(); ++i) {
      ir::LoopInfo info;
      info.dim = i;
      info.work_amount = p.out[p.batch[i]];
      info.runtime_work_amount = i == 0;
      loops.batch.push_back(lir.loops().add(info));
    }
    ir::LoopInfo m_loop;
    m_loop.dim = p.batch.size();
    m_loop.work_amount = p.M;
    m_loop.increment = p.m_blk;
    // the parallel loop, or with one batch dim, rows [begin, begin + work[1]) of its index
    m_loop.runtime_work_amount = p.batch.size() <= 1;
    loops.m = lir.loops().add(m_loop);
    return loops;
  }

  /// Packing B in the kernel: a BrgemmCopyB into scratch in the batch loops along which B
  /// changes (the shallower copy first, so every loop stays contiguous). Returns each copy.
  template <class T>
  static std::map<const Stage<T>*, ir::PortConnector<T>*> add_b_copies(Plan<T>& p,
                                                                       const Loops& loops) {
    auto& lir = p.lir;
    std::vector<std::pair<std::size_t, Stage<T>*>> copies;
    for (Stage<T>& s : p.f.stages) {
      if (s.b_offset < 0) continue;
      std::size_t depth = 0;
      for (std::size_t i = 0; i < p.batch.size(); ++i)
        if (stride_along(s.b->out_desc(0), p.batch[i]) != 0) depth = i + 1;
      copies.push_back({depth, &s});
    }
    std::stable_sort(copies.begin(), copies.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    std::map<const Stage<T>*, ir::PortConnector<T>*> b_source;
    for (const auto& [depth, s] : copies) {
      std::vector<std::size_t> at(loops.batch.begin(), loops.batch.begin() + std::ptrdiff_t(depth));
      const bool columns = p.columns && s == &p.f.stages.back();
      ir::Expression<T>& copy =
          lir.insert_node(lir.find(*p.f.stages.front().mm),
                          ir::BrgemmCopyB{s->shape, p.n_args, s->b_offset, columns},
                          {&s->b->output(0)}, 1, at, s->b->name + "/packed");
      b_source[s] = &copy.output(0);
      for (std::size_t i = 0; i < depth; ++i)
        add_port(lir, loops.batch[i], copy, s->b->data_index,
                 stride_along(s->b->out_desc(0), p.batch[i]), p.out[p.batch[i]],
                 arg_bytes(lir, s->b->data_index));
    }
    return b_source;
  }

  /// The group: each MatMul replaced by its Brgemm (a constant B packed now), followed by its
  /// epilogue and Stores (and the SoftmaxRows after the first), contiguous.
  template <class T>
  static std::vector<ir::Expression<T>*>
  add_brgemms(Plan<T>& p, const std::map<const Stage<T>*, ir::PortConnector<T>*>& b_source) {
    using E = ir::Expression<T>;
    auto& lir = p.lir;
    Stage<T>& s1 = p.f.stages.front();
    std::vector<E*> group;
    for (Stage<T>& s : p.f.stages) {
      ir::Brgemm tag;
      tag.m = p.m_blk;
      tag.shape = s.shape;
      tag.epilogue = s.epilogue.size();
      tag.b_pointer = p.n_args;
      tag.b_offset = std::max<std::int64_t>(s.b_offset, 0);
      tag.column_range = p.columns && &s == &p.f.stages.back(); // the last product's
      if (p.softmax_rows && &s != &s1) {
        const auto& rows = std::get<ir::SoftmaxRows>(p.softmax_rows->op);
        tag.a_offset = rows.quantized >= 0 ? rows.quantized * 4 : rows.offset; // (bytes: u8/i8)
        tag.row_scales = rows.scales;
      } else if (&s != &s1) { // the Store of the stage before
        tag.a_offset = std::get<ir::Store>(s.mm->input_expr(0).op).offset;
      }
      ir::PortConnector<T>* b = &s.b->output(0);
      if (s.b_offset < 0)
        tag.b_packed = pack_b(std::get<ir::Constant>(s.b->op).values, s.shape);
      else
        b = b_source.at(&s);
      // the Scalars only this epilogue reads join the group before its Brgemm (the epilogue
      // reads them from the constant table): live in one stage, not across the kernel (but the
      // first stage's, which stay before the group, where its B copies are)
      for (E* x : &s == &s1 ? std::vector<E*>{} : s.epilogue)
        for (std::size_t i = 0; i < x->num_inputs(); ++i) {
          E& c = x->input_expr(i);
          bool own = std::holds_alternative<ir::Scalar>(c.op) &&
                     std::find(group.begin(), group.end(), &c) == group.end();
          for (const auto& u : c.output(0).consumers())
            own = own &&
                  std::find(s.epilogue.begin(), s.epilogue.end(), &u.owner()) != s.epilogue.end();
          if (own) group.push_back(&c);
        }
      E& brgemm =
          lir.insert_node(lir.find(*s.mm), tag, {&s.mm->input_connector(0), b}, 1, {}, s.mm->name);
      brgemm.out_desc(0).shape = s.mm->out_desc(0).shape;
      s.mm->output(0).replace_all_uses_with(&brgemm.output(0));
      lir.erase(*s.mm);
      s.mm = &brgemm;
      group.push_back(&brgemm);
      group.insert(group.end(), s.epilogue.begin(), s.epilogue.end());
      if (&s == &s1 && p.softmax_rows) group.push_back(p.softmax_rows);
    }
    return group;
  }

  /// Moves the group together, into the batch loops and the M loop, and gives those loops the
  /// pointer increments of the arguments.
  template <class T>
  static void put_group_in_loops(Plan<T>& p, const std::vector<ir::Expression<T>*>& group,
                                 const Loops& loops, const std::vector<Arg>& args) {
    auto& lir = p.lir;
    move_after(lir, *group.front(),
               std::vector<ir::Expression<T>*>(group.begin() + 1, group.end()));
    std::vector<std::size_t> inner = loops.batch;
    inner.push_back(loops.m);
    for (ir::Expression<T>* e : group) e->loop_ids = inner;

    const std::int64_t rest = p.M % p.m_blk;
    ir::Expression<T>& first = *group.front();
    for (std::size_t i = 0; i < p.batch.size(); ++i)
      for (const Arg& g : args)
        add_port(lir, loops.batch[i], first, g.index, stride_along(g.desc, p.batch[i]),
                 p.out[p.batch[i]], g.bytes);
    for (const Arg& g : args) {
      ir::LoopPort port{&first, g.index, g.row * p.m_blk, rest ? 0 : -g.row * p.M, g.bytes, false};
      lir.loops().at(loops.m).ports.push_back(port);
    }
  }

  /// Bytes per element of kernel argument `index`.
  template <class T> static std::int64_t arg_bytes(const ir::LinearIR<T>& lir, std::size_t index) {
    return static_cast<std::int64_t>(size_of(lir.arg_types.at(index)));
  }

  template <class T>
  static void add_port(ir::LinearIR<T>& lir, std::size_t loop, const ir::Expression<T>& e,
                       std::size_t arg, std::int64_t stride, std::int64_t work,
                       std::int64_t bytes) {
    if (stride == 0) return;
    lir.loops().at(loop).ports.push_back({&e, arg, stride, -stride * work, bytes, false});
  }

  /// The last M % m_blk rows: a copy of the group in a loop that runs once, after the M loop
  /// (and, when the M loop is the parallel one, only if its chunk left rows).
  template <class T, class Args>
  static void add_tail(ir::LinearIR<T>& lir, const std::vector<ir::Expression<T>*>& group,
                       std::size_t m_id, std::int64_t rest, const Args& args) {
    const ir::LoopInfo& main = lir.loops().at(m_id);
    ir::LoopInfo t;
    t.dim = main.dim;
    t.work_amount = t.increment = rest;
    t.is_tail = t.evaluate_once = true;
    t.tail_of = main.runtime_work_amount ? static_cast<std::int64_t>(m_id) : -1;
    const std::int64_t done = main.work_amount - rest;
    const std::size_t t_id = lir.loops().add(t);
    const auto copies = ir::copy_expressions(lir, std::span<ir::Expression<T>* const>(group),
                                             std::next(lir.find(*group.back())), m_id, t_id,
                                             [&](const ir::Expression<T>&, ir::LirOp<T>& op) {
                                               if (auto* b = std::get_if<ir::Brgemm>(&op))
                                                 b->m = rest;
                                               if (auto* s = std::get_if<ir::SoftmaxRows>(&op))
                                                 s->rows = rest;
                                             });
    const ir::Expression<T>* first = copies.front();
    for (const auto& g : args)
      if (g.row)
        lir.loops().at(t_id).ports.push_back({first, g.index, 0, -g.row * done, g.bytes, false});
  }
};

} // namespace snippets::passes
