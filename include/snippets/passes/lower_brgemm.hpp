// snippets/passes/lower_brgemm.hpp: LowerBrgemm, the control flow of a MatMul kernel.
//
// A body with a MatMul is one product and its epilogue: elementwise ops on the product (and on
// other inputs and scalars) whose values have the product's shape, stored to the outputs.
// LowerBrgemm turns the converted LIR into
//
//   [BrgemmCopyB]                      B packed into panels (scratch), per batch it changes in
//   Loop batch dims (extent > 1)       ordinary LIR loops with pointer increments
//     Loop M in blocks of m_blk rows   (the outermost loop is the parallel one)
//       Brgemm                         m_blk rows x all of N, K deep, on register tiles
//       epilogue ops, Stores           emitted by the Brgemm on its accumulators
//     [tail block: M % m_blk rows]     a copy of the Brgemm group in a run-once loop
//
// Blocking: the register tile is m_r rows by n_r vectors (x64: 6 x 4 zmm, 6 x 2 ymm), fewer
// rows when the epilogue needs registers; B is read from panels of n_r vectors (one contiguous
// row of the panel per depth step, reused by every row tile of the block); m_blk rows of A
// (about 128 KiB) are reused by every panel. Constant weights are packed here, once, at compile
// time (Brgemm::b_packed); a B input is packed by BrgemmCopyB in the kernel.
// The emitter (target/x64/emitters/brgemm.hpp) runs the epilogue on each accumulator register
// before it is stored: no second pass over memory.
// @throws [snippets.compile.unsupported_matmul] for bodies outside this form, naming the op.
#pragma once

#include <algorithm>
#include <map>
#include <set>

#include "snippets/passes/assign_registers.hpp"
#include "snippets/passes/init_live_ranges.hpp"
#include "snippets/passes/insert_loops.hpp"
#include "snippets/passes/lir_queries.hpp"
#include "snippets/passes/pass.hpp"
#include "snippets/passes/pipeline.hpp"

namespace snippets::passes {

template <class T> bool has_brgemm(const ir::LinearIR<T>& lir) {
  for (const auto& e : lir)
    if (std::holds_alternative<ir::MatMul>(e->op) || std::holds_alternative<ir::Brgemm>(e->op))
      return true;
  return false;
}

/// Elements between rows and between columns of the product in a tensor of this (domain-
/// aligned, planar) shape: 0 along a broadcast dimension. Epilogue inputs and outputs.
struct ProductStrides {
  std::int64_t row, col;
  explicit ProductStrides(const std::vector<Dim>& s)
      : row(s[s.size() - 2] == 1 ? 0 : s.back()), col(s.back() == 1 ? 0 : 1) {}
};

/// Vector temporaries of a Brgemm epilogue: the output of each op, and a register for each
/// input read from memory (an input tensor, a scalar) while its op runs. `temp` maps an op to
/// its output's temporary and `(op, input)` to the loaded input's; `peak` is how many are live
/// at once. The emitter follows this plan; LowerBrgemm sizes the register tile with it.
template <class T> struct EpiloguePlan {
  std::map<const ir::Expression<T>*, int> temp;
  std::map<std::pair<const ir::Expression<T>*, std::size_t>, int> loaded;
  int peak = 0;

  EpiloguePlan(const ir::Expression<T>& brgemm, std::span<ir::Expression<T>* const> ops) {
    std::map<const ir::Expression<T>*, std::size_t> last_use;
    for (std::size_t i = 0; i < ops.size(); ++i)
      for (std::size_t j = 0; j < ops[i]->num_inputs(); ++j) last_use[&ops[i]->input_expr(j)] = i;
    std::set<int> free;
    int next = 0;
    auto take = [&] {
      int t = next;
      if (free.empty())
        ++next;
      else
        t = *free.begin(), free.erase(free.begin());
      peak = std::max(peak, next - static_cast<int>(free.size()));
      return t;
    };
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const ir::Expression<T>* op = ops[i];
      std::vector<int> released;
      for (std::size_t j = 0; j < op->num_inputs(); ++j) {
        const auto* src = &op->input_expr(j);
        if (src == &brgemm || temp.count(src)) {
          if (temp.count(src) && last_use[src] == i) released.push_back(temp[src]);
          continue;
        }
        const int t = take(); // read from memory for this op only
        loaded[{op, j}] = t;
        released.push_back(t);
      }
      if (!std::holds_alternative<ir::Store>(op->op)) temp[op] = take();
      for (int t : released) free.insert(t);
    }
  }
};

struct LowerBrgemm {
  using pass_tag = lir_pass_tag;
  static constexpr std::string_view name = "LowerBrgemm";
  /// Data pointers a Brgemm and its epilogue may use: the emitter needs five more registers.
  static constexpr std::size_t max_operands = 8;

  template <class T> Preserved run(ir::LinearIR<T>& lir, PassContext<T>& ctx) const {
    using E = ir::Expression<T>;
    E* mm = nullptr;
    for (auto& e : lir)
      if (std::holds_alternative<ir::MatMul>(e->op)) {
        if (mm) fail(*e, "is a second MatMul; a kernel computes one product (split the subgraph)");
        mm = e.get();
      }
    SNIPPETS_ASSERT(mm) << "LowerBrgemm on a LIR without a MatMul";
    const auto& attrs = std::get<ir::MatMul>(mm->op);
    E& a = mm->input_expr(0);
    E& b = mm->input_expr(1);
    if (!std::holds_alternative<ir::Parameter>(a.op))
      fail(*mm, "reads A from '" + a.name + "'; A must be a subgraph input");
    const bool b_constant = std::holds_alternative<ir::Constant>(b.op);
    if (!b_constant && !std::holds_alternative<ir::Parameter>(b.op))
      fail(*mm, "reads B from '" + b.name + "'; B must be a subgraph input or a constant");
    for (E* in : {&a, &b})
      if (!in->out_desc(0).layout.empty())
        fail(*mm, "reads '" + in->name + "' through a layout; pass MatMul inputs planar");

    // shapes: every port is right-aligned to rank R = the product's rank
    const std::vector<Dim> out = mm->out_desc(0).shape;
    const std::size_t R = out.size();
    if (lir.domain != out)
      fail(*mm, "is broadcast further by its epilogue (outputs " + Shape(lir.domain).to_string() +
                    ", product " + Shape(out).to_string() +
                    "); outputs must have the product's shape");
    const std::vector<Dim>& as = a.out_desc(0).shape;
    const std::vector<Dim>& bs = b.out_desc(0).shape;
    const Dim M = out[R - 2], N = out[R - 1];
    const Dim K = attrs.transpose_a ? as[R - 2] : as[R - 1];
    ir::BrgemmShape shape;
    shape.n = N;
    shape.k = K;
    shape.a_row = attrs.transpose_a ? 1 : K;
    shape.a_depth = attrs.transpose_a ? M : 1;
    shape.b_depth = attrs.transpose_b ? 1 : N;
    shape.b_col = attrs.transpose_b ? K : 1;
    shape.lanes = ctx.config.lanes;

    // ops on other inputs only, which the topological order put first, join the epilogue
    std::vector<E*> early;
    for (auto& e : lir) {
      if (e.get() == mm) break;
      if (is_loop_body(*e) && !std::holds_alternative<ir::Constant>(e->op))
        early.push_back(e.get());
    }
    move_after(lir, *mm, early);
    // the epilogue: everything after the product but the Results
    std::vector<E*> epilogue, results;
    for (auto it = std::next(lir.find(*mm)); it != lir.end(); ++it) {
      E& e = **it;
      if (std::holds_alternative<ir::Result>(e.op)) {
        results.push_back(&e);
        continue;
      }
      if (is_reduction(e) || std::holds_alternative<ir::Constant>(e.op) ||
          e.out_desc(0).shape != out)
        fail(e, "follows the MatMul but is not an elementwise op on the product's shape " +
                    Shape(out).to_string() + "; run it in another subgraph");
      epilogue.push_back(&e);
    }
    for (std::size_t i = 0; i < lir.num_inputs; ++i)
      if (lir.arg_types.at(i) != ElementType::f32)
        fail(*mm, "is in a kernel with a non-f32 input; MatMul kernels read f32 for now");
    std::set<E*> extras; // other inputs of the epilogue
    for (E* e : epilogue)
      for (std::size_t i = 0; i < e->num_inputs(); ++i) {
        E& src = e->input_expr(i);
        if (!std::holds_alternative<ir::Parameter>(src.op)) continue;
        if (!src.out_desc(0).layout.empty())
          fail(*e, "reads '" + src.name + "' through a layout; pass epilogue inputs planar");
        extras.insert(&src);
      }
    for (E* r : results)
      if (lir.arg_types.at(r->data_index) != ElementType::f32 || !r->in_desc(0).layout.empty())
        fail(*r, "is not a planar f32 output; MatMul kernels write f32 (convert outside)");

    // the Stores that write the outputs, right after the epilogue
    auto group_end = lir.find(*results.front());
    for (E* r : results) {
      ir::PortConnector<T>* v = &r->input_connector(0);
      E& st = lir.insert_node(group_end, ir::Store{0, 0, ElementType::f32}, {v}, 1, {}, r->name);
      st.data_index = r->data_index;
      st.out_desc(0).shape = out;
      r->input(0).set(&st.output(0));
      epilogue.push_back(&st);
    }

    // the domain: batch dims of extent > 1, then M and N; loops walk them
    std::vector<std::size_t> batch;
    for (std::size_t d = 0; d + 2 < R; ++d)
      if (out[d] > 1) batch.push_back(d);
    choose_tile(shape, M, *mm, epilogue, ctx.config);
    const std::int64_t m_blk = block_rows(shape, M, batch.empty());
    lir.domain.clear();
    for (std::size_t d : batch) lir.domain.push_back(out[d]);
    lir.domain.push_back(M);
    lir.domain.push_back(N);

    // pointer strides (elements) of each argument: rows of the product, and each batch dim
    struct Arg {
      std::size_t index;
      std::int64_t row;
      std::vector<Dim> shape;
    };
    std::vector<Arg> args{{a.data_index, shape.a_row, as}};
    for (E* x : extras) {
      const auto& s = x->out_desc(0).shape;
      args.push_back({x->data_index, ProductStrides(s).row, s});
    }
    for (E* r : results) args.push_back({r->data_index, N, out});

    // B: packed at compile time, or by a BrgemmCopyB into scratch
    ir::Brgemm tag;
    tag.shape = shape;
    tag.epilogue = epilogue.size();
    const std::size_t n_args = lir.num_inputs + lir.num_outputs;
    tag.b_pointer = n_args;
    ir::PortConnector<T>* b_source = &b.output(0);
    std::size_t b_depth = 0; // batch loops the packing sits in
    if (b_constant) {
      for (std::size_t d = 0; d + 2 < R; ++d)
        if (bs[d] != 1) fail(*mm, "has a constant B with batch dims; give it rank 2");
      tag.b_packed = pack(std::get<ir::Constant>(b.op).values, shape);
    } else {
      for (std::size_t i = 0; i < batch.size(); ++i)
        if (bs[batch[i]] != 1) b_depth = i + 1;
      lir.buffer_pointers = 1;
      lir.scratch_bytes = shape.packed_elements() * 4;
      ctx.config.gp_registers -= 1; // the packed B's data pointer
    }
    const std::size_t operands = 1 + (b_constant ? 0 : 1) + extras.size() + results.size();
    if (operands > max_operands)
      fail(*mm, "and its epilogue read and write " + std::to_string(operands) +
                    " tensors; a MatMul kernel takes at most " + std::to_string(max_operands) +
                    " (A, B, the epilogue's inputs and the outputs): split the subgraph");

    // loops: batch dims outermost (the first is the parallel one), then blocks of M rows
    std::vector<std::size_t> ids;
    for (std::size_t i = 0; i < batch.size(); ++i) {
      ir::LoopInfo info;
      info.dim = i;
      info.work_amount = out[batch[i]];
      info.runtime_work_amount = i == 0;
      ids.push_back(lir.loops().add(info));
    }
    if (!b_constant) {
      std::vector<std::size_t> at(ids.begin(), ids.begin() + std::ptrdiff_t(b_depth));
      E& copy = lir.insert_node(lir.find(*mm), ir::BrgemmCopyB{shape, n_args}, {&b.output(0)}, 1,
                                at, b.name + "/packed");
      b_source = &copy.output(0);
      for (std::size_t i = 0; i < b_depth; ++i)
        add_port(lir, ids[i], copy, b.data_index, stride_along(bs, batch[i]), out[batch[i]]);
    }
    const std::int64_t rest = M % m_blk;
    ir::LoopInfo m_loop;
    m_loop.dim = batch.size();
    m_loop.work_amount = M;
    m_loop.increment = m_blk;
    m_loop.runtime_work_amount = batch.empty();
    const std::size_t m_id = lir.loops().add(m_loop);

    tag.m = m_blk;
    E& brgemm = lir.insert_node(lir.find(*mm), tag, {&a.output(0), b_source}, 1, {}, mm->name);
    brgemm.out_desc(0).shape = out;
    mm->output(0).replace_all_uses_with(&brgemm.output(0));
    lir.erase(*mm);
    // the group: Brgemm, epilogue and Stores, contiguous, in the batch loops and the M loop
    move_after(lir, brgemm, epilogue);
    std::vector<E*> group{&brgemm};
    group.insert(group.end(), epilogue.begin(), epilogue.end());
    std::vector<std::size_t> inner = ids;
    inner.push_back(m_id);
    for (E* e : group) e->loop_ids = inner;

    for (std::size_t i = 0; i < batch.size(); ++i)
      for (const Arg& g : args)
        add_port(lir, ids[i], brgemm, g.index, stride_along(g.shape, batch[i]), out[batch[i]]);
    for (const Arg& g : args) {
      ir::LoopPort p{&brgemm, g.index, g.row * m_blk, rest ? 0 : -g.row * M, 4, false};
      lir.loops().at(m_id).ports.push_back(p);
    }
    if (rest) add_tail(lir, group, m_id, rest, args);
    return Preserved::none;
  }

private:
  [[noreturn]] static void fail(const auto& e, const std::string& why) {
    raise("snippets.compile.unsupported_matmul",
          std::string(e.op_name()) + " '" + e.name + "' " + why);
  }

  /// The largest register tile whose accumulators, B vectors and epilogue fit the registers.
  template <class T>
  static void choose_tile(ir::BrgemmShape& s, Dim M, const ir::Expression<T>& mm,
                          const std::vector<ir::Expression<T>*>& epilogue,
                          const LoweringConfig& cfg) {
    const int vectors = static_cast<int>((s.n + s.lanes - 1) / s.lanes);
    s.n_r = std::min(s.lanes == 16 ? 4 : 2, vectors);
    const int temps = EpiloguePlan<T>(mm, epilogue).peak;
    const int for_epilogue = cfg.vector_registers - cfg.reserved_vector_registers - temps;
    for (s.m_r = static_cast<int>(std::min<Dim>(6, M)); s.m_r > 1; --s.m_r)
      if (s.m_r * s.n_r + s.n_r + 1 <= cfg.vector_registers && s.m_r * s.n_r <= for_epilogue) break;
    if (s.m_r * s.n_r > for_epilogue)
      raise("snippets.compile.register_pressure",
            "the epilogue of MatMul '" + mm.name + "' needs " + std::to_string(temps) +
                " vector registers beside its accumulators; split the epilogue into another "
                "subgraph");
  }

  /// Rows per Brgemm: about 128 KiB of A, whole row tiles, and (when the rows are the parallel
  /// loop) at least four blocks to share out.
  static std::int64_t block_rows(const ir::BrgemmShape& s, Dim M, bool parallel_rows) {
    std::int64_t rows = std::max<std::int64_t>(1, (std::int64_t{128} << 10) / (s.k * 4));
    if (parallel_rows) rows = std::min<std::int64_t>(rows, (M + 3) / 4);
    rows = std::max<std::int64_t>(s.m_r, rows / s.m_r * s.m_r);
    return std::min<std::int64_t>(rows, M);
  }

  /// B (planar values of a [K, N] or transposed [N, K] constant) in the panels of `s`.
  static std::shared_ptr<const std::vector<float>> pack(const std::vector<double>& values,
                                                        const ir::BrgemmShape& s) {
    auto out = std::make_shared<std::vector<float>>(std::size_t(s.packed_elements()), 0.0f);
    const std::int64_t w = s.panel_width();
    for (std::int64_t p = 0; p < s.panels(); ++p)
      for (std::int64_t k = 0; k < s.k; ++k)
        for (std::int64_t c = 0; c < w && p * w + c < s.n; ++c) {
          const std::int64_t at = k * s.b_depth + (p * w + c) * s.b_col;
          (*out)[std::size_t((p * s.k + k) * w + c)] =
              static_cast<float>(values.size() == 1 ? values[0] : values[std::size_t(at)]);
        }
    return out;
  }

  /// Moves `exprs` to right after `at`, in their order.
  template <class T>
  static void move_after(ir::LinearIR<T>& lir, const ir::Expression<T>& at,
                         const std::vector<ir::Expression<T>*>& exprs) {
    const ir::Expression<T>* prev = &at;
    for (ir::Expression<T>* e : exprs) {
      lir.move(*e, std::next(lir.find(*prev)));
      prev = e;
    }
  }

  template <class T>
  static void add_port(ir::LinearIR<T>& lir, std::size_t loop, const ir::Expression<T>& e,
                       std::size_t arg, std::int64_t stride, std::int64_t work) {
    if (stride == 0) return;
    lir.loops().at(loop).ports.push_back({&e, arg, stride, -stride * work, 4, false});
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
                                             });
    const ir::Expression<T>* first = copies.front();
    for (const auto& g : args)
      if (g.row) lir.loops().at(t_id).ports.push_back({first, g.index, 0, -g.row * done, 4, false});
  }
};

/// Lowering of MatMul kernels: the Brgemm loops, then loop bounds and counter registers.
using BrgemmLowering = Pipeline<LowerBrgemm, InsertLoops, InitLiveRanges, AssignRegisters>;

} // namespace snippets::passes
