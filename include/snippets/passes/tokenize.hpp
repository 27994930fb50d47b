// SPDX-License-Identifier: Apache-2.0
// snippets/passes/tokenize.hpp: the Tokenizer, model Graph -> Graph with Subgraph nodes.
//
//   auto tokenized = snippets::passes::tokenize(model);        // the model is not modified
//   auto unfused = snippets::passes::tokenize(model, {.fuse = false});  // one op per Subgraph
//
// The seed's greedy algorithm, over the nodes in topological order: a node the backend can
// fuse starts a Subgraph when no input comes from a Subgraph, is attached when one does, and
// merges them when several do (shared inputs become one body Parameter), first together with
// the Subgraphs that feed them and whose every output they and the node alone read (a value
// several ops need, kept apart while they were placed). An attach or merge that would break a
// rule is narrowed to one parent Subgraph, and if that also fails the node starts a Subgraph of
// its own. The rules:
//  - no cycle: the model with every Subgraph contracted to one node stays acyclic (checked
//    by a search from the Subgraph's outputs, which only visits nodes placed before the new
//    one: in a chain it visits none);
//  - at most `max_ops` ops in one Subgraph (default_max_ops, 64): a longer run of fusable
//    ops becomes several Subgraphs, so a kernel's code and compile time stay bounded;
//  - at most `max_result_outputs` outputs of one Subgraph feed model Results (the seed: one);
//  - inputs + outputs stay within T::data_pointer_registers (the traits' free data-pointer
//    GPRs); Constants with one value, and a MatMul's constant B (its weights, packed when the
//    kernel is compiled), go inside the body and cost nothing; other Constants stay outside
//    and count as inputs; a Subgraph of ops on constants alone is dropped (its ops run on
//    the reference path: a kernel reads at least one input);
//  - every output of a Subgraph has the same shape (the kernel's scheduling domain; a
//    stricter form of "broadcast-compatible": each output element is stored exactly once;
//    partial shapes compare as written, and a Program checks the run's shapes);
//  - inputs and outputs have element types the backend reads and writes
//    (backend_io_type_supported<T>); ops compute on f32, f16, bf16, i8, u8 or boolean values
//    (AlignElementTypes computes the narrow ones in f32 and keeps their rounding), and i32
//    values only go through a Convert (not to i32 or bf16: a kernel reads i32 as f32);
//  - a MatMul (f32 or bf16, or u8/i8 A by i8 B summed into i32, operands of rank >= 2)
//    starts its own Subgraph: its operands come from outside (inputs, or Transposes of inputs;
//    a constant B stays a Constant and is packed at compile time; a u8/i8 input only as a
//    MatMul's operand), and what joins it are elementwise ops of the product's shape giving
//    f32 or bf16 values, or a Convert or quantization giving u8 or i8 (its epilogue,
//    passes/lower_brgemm.hpp: an i32 product is read by a Convert), within
//    MatMulForm::max_operands tensors. A next MatMul whose A is a value of that epilogue
//    joins with its own epilogue (an MLP: relu(relu(x W1 + b1) W2 + b2) ...) while the
//    tensors stay within that budget and no other Subgraph or Result reads the values in
//    between. Or a Softmax of the first product's value joins, and a second MatMul that
//    reads the Softmax (attention: [Transpose] -> MatMul -> [scale, mask] -> Softmax ->
//    MatMul -> [Transpose]), which seals the Subgraph: only a Transpose of its output joins.
//    Quantized attention (MHAQuant): the second MatMul may read a Quantize to u8/i8 of the
//    Softmax (a scale and a zero point of one value each) instead, and an integer second
//    product's epilogue (its dequantization, a requantization) joins before the seal;
//  - FakeQuantize and Quantize are taken like the elementwise ops DecomposeQuantization makes of
//    them (as OpenVINO's tokenizer keeps FakeQuantize in its Subgraphs): a quantization joins
//    the ops before it and its u8 or i8 result is the kernel's output, or is dequantized
//    (Convert, Subtract, Multiply) by ops of the same kernel; per-channel ranges, scales and
//    zero points (Constants of several values) are inputs like any;
//  - nodes marked SkippedByPlugin, Opaque nodes and existing Subgraphs are never taken;
//  - a Transpose is taken only as the first op on a Subgraph input (a model input or another
//    Subgraph's output, read by nothing else in the Subgraph but, without a MatMul, Transposes
//    of the same order, which become one load: MoveReducedAxesLast gives each reader its own),
//    or as the last op before a Subgraph output when it keeps the innermost axis innermost: the
//    data flow then folds it into the kernel's load or store (FuseTransposeIntoParameter /
//    FuseTransposeIntoResult), so it costs no pass over memory;
//  - the reductions of a Subgraph reduce the same number of trailing axes (the kernel's row) of
//    inputs whole along them (not broadcast by the Subgraph's outputs), its outputs have the
//    domain's shape or that shape reduced (the row's values, or one per row), and a reduction
//    without keep_dims is an output, read by nothing inside;
//  - a Slice of the innermost axis (a part of an ONNX Split, when the backend fuses Slice) is
//    taken only on a Subgraph input that nothing but Slices of one length read inside the
//    Subgraph: the kernel reads the parts where they lie (slice_reads.hpp).
// The result graph keeps the model's Parameters and Results in order, so inputs and outputs
// map one to one; each Subgraph is named after its last op and lists the ops it absorbed.
// Cost: each Subgraph keeps its inputs and outputs, so the rules for one more node are checked
// on those, not on the whole Subgraph or model (a MatMul's form is checked on the members, at
// most max_ops), and the cycle search visits only what the Subgraph's outputs reach among the
// nodes placed so far: tokenizing a chain, or an ordinary model, is linear in its size.
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "snippets/ir/graph_view.hpp"
#include "snippets/passes/data_flow.hpp"
#include "snippets/passes/fusability.hpp"
#include "snippets/passes/fuse_transpose_into_result.hpp"
#include "snippets/passes/matmul_form.hpp"

namespace snippets::passes {

/// The default TokenizeOptions::max_ops. Every op is emitted into the kernel's loop once per
/// unrolled copy, so a kernel's code grows with its ops: at 64 ops of the costlier activations
/// (Sigmoid, GELU) the loop still fits a 32 KiB instruction cache, at a few hundred it is
/// several times larger. Compile time per op is flat up to a few hundred ops and then grows
/// with the register spills of long bodies. A split costs one store and one load of the value
/// that crosses it, small beside 64 ops of compute: long chains measured no slower split
/// there than fused (bench/bench_compile.cpp prints the scaling; the figures and the choice
/// are in docs/benchmarks.md).
inline constexpr std::size_t default_max_ops = 64;

template <class T> struct TokenizeOptions {
  bool fuse = true;           // false: every fusable op becomes a Subgraph of its own
  int max_result_outputs = 1; // outputs of one Subgraph that may feed model Results
  /// Ops in one Subgraph, at most (0: no limit); a longer run of fusable ops becomes several
  /// Subgraphs. See default_max_ops.
  std::size_t max_ops = default_max_ops;
  /// Replaces the backend's answer to "may this node go into a Subgraph?" (the built-in
  /// exclusions above still apply).
  std::function<bool(const ir::Graph<T>&, const ir::Node<T>&)> supported;
};

namespace detail {

template <class T> bool is_scalar_constant(const ir::Node<T>& n) {
  return uniform_value<T>(n.op).has_value();
}

/// The default answer: a node that passes::fusability takes (an op the backend fuses with these
/// attributes, on the types in the file comment; Power counts when its exponent is a scalar
/// constant, as the PowerStatic it becomes). Shapes may be dynamic: a Program compiles the
/// Subgraph into a dynamic kernel, or one kernel per set of shapes where compile() takes the
/// body with static shapes only.
template <class T> bool backend_can_fuse(const ir::Graph<T>& g, const ir::Node<T>& n) {
  return !fusability(g, n, FusabilityStage::model);
}

template <class T> class Tokenizer {
public:
  Tokenizer(const ir::Graph<T>& g, const TokenizeOptions<T>& opt) : g_(g), opt_(opt) {}

  ir::Graph<T> run() {
    const auto order = g_.topological_order();
    position_.assign(g_.size(), 0);
    for (std::size_t i = 0; i < order.size(); ++i) position_[order[i]] = i;
    group_.assign(g_.size(), none);
    stage_.assign(g_.size(), 0);
    after_.assign(g_.size(), 0);
    for (ir::NodeId r : g_.results()) to_result_.insert(g_.node(r).inputs[0]);
    for (ir::NodeId id : order)
      if (takeable(g_.node(id))) place(id);
    drop_constant_groups(order);
    return build();
  }

private:
  static constexpr std::size_t none = static_cast<std::size_t>(-1);

  struct Boundary {
    std::vector<ir::Output> inputs, outputs; // in first-use / definition order (build())
  };

  /// A Subgraph being formed. What admit() reads is kept here, so that taking one more node
  /// costs the same however large the Subgraph already is (bounded by max_ops where it is not).
  struct Group {
    std::vector<ir::NodeId> members;    // in topological order
    Boundary boundary;                  // unordered (build() orders its own copy)
    std::vector<ir::NodeId> transposes; // members that are Transposes
    std::vector<ir::NodeId> slices;     // members that are Slices
    bool matmul = false;                // a member is a MatMul
    RowForm form;                       // the axes its reductions reduce ({0, 0}: none)
  };

  bool takeable(const ir::Node<T>& n) const {
    if (n.skipped_by_plugin || n.inputs.empty()) return false; // sources stay in the model
    if (ir::is<ir::Result>(n.op) || ir::is<ir::Opaque>(n.op)) return false;
    if (ir::is<ir::Subgraph<T>>(n.op)) return false;
    return opt_.supported ? opt_.supported(g_, n) : backend_can_fuse(g_, n);
  }

  /// Start, attach or merge, per the seed; narrow the merge when a rule forbids it.
  void place(ir::NodeId id) {
    std::vector<std::size_t> parents;
    if (opt_.fuse)
      for (const ir::Output& o : g_.node(id).inputs)
        if (const std::size_t p = group_[o.node];
            p != none && std::find(parents.begin(), parents.end(), p) == parents.end())
          parents.push_back(p);
    std::vector<std::vector<std::size_t>> candidates;
    if (std::vector<std::size_t> with = with_feeders(id, parents); with.size() > parents.size())
      candidates.push_back(std::move(with));
    if (!parents.empty()) candidates.push_back(parents);
    if (parents.size() > 1) // one parent at a time, the largest first
      for (std::size_t p : sorted_by_size(parents)) candidates.push_back({p});
    for (const auto& merge : candidates) {
      std::optional<Boundary> b = admit(id, merge);
      if (!b) continue;
      const std::size_t into = merge[0];
      Group& g = groups_[into];
      for (std::size_t p : merge)
        if (p != into) {
          Group& from = groups_[p];
          for (ir::NodeId m : from.members) group_[m] = into;
          merge_sorted(g.members, from.members);
          g.transposes.insert(g.transposes.end(), from.transposes.begin(), from.transposes.end());
          g.slices.insert(g.slices.end(), from.slices.begin(), from.slices.end());
          g.matmul |= from.matmul;
          if (from.form.reduced) g.form = from.form;
          from = Group{};
        }
      g.boundary = std::move(*b);
      add_member(g, id);
      group_[id] = into;
      return;
    }
    std::optional<Boundary> b = admit(id, {});
    if (!b) return; // e.g. more inputs than the kernel takes
    group_[id] = groups_.size();
    groups_.emplace_back();
    groups_.back().boundary = std::move(*b);
    add_member(groups_.back(), id);
  }

  /// `parents` and the Subgraphs that feed them whose every output only those and `id` read:
  /// a value several ops need (a reduction broadcast back by ops that meet at `id`) kept its
  /// Subgraph apart while its readers were being placed (outputs of one shape), and merges now.
  std::vector<std::size_t> with_feeders(ir::NodeId id, std::vector<std::size_t> merge) const {
    auto inside = [&](ir::NodeId n, std::size_t feeder) {
      const std::size_t g = group_[n];
      return n == id || g == feeder || std::find(merge.begin(), merge.end(), g) != merge.end();
    };
    for (std::size_t i = 0; i < merge.size(); ++i)
      for (const ir::Output& o : groups_[merge[i]].boundary.inputs) {
        const std::size_t f = group_[o.node];
        if (f == none || std::find(merge.begin(), merge.end(), f) != merge.end()) continue;
        bool fed = true;
        for (const ir::Output& out : groups_[f].boundary.outputs)
          for (const ir::Use& u : g_.users(out)) fed = fed && inside(u.node, f);
        if (fed) merge.push_back(f);
      }
    return merge;
  }

  /// A Subgraph whose every op reads constants alone (directly or through such ops) would be a
  /// kernel without inputs: its ops stay in the model, computed on the reference path.
  void drop_constant_groups(const std::vector<ir::NodeId>& order) {
    std::vector<bool> constant(g_.size(), false);
    for (ir::NodeId id : order) {
      const ir::Node<T>& n = g_.node(id);
      constant[id] = ir::is<ir::Constant>(n.op) || ir::is<ir::Scalar>(n.op) ||
                     (!n.inputs.empty() && !ir::is<ir::Opaque>(n.op) &&
                      std::all_of(n.inputs.begin(), n.inputs.end(),
                                  [&](const ir::Output& o) { return constant[o.node]; }));
    }
    for (Group& grp : groups_)
      if (!grp.members.empty() && std::all_of(grp.members.begin(), grp.members.end(),
                                              [&](ir::NodeId m) { return constant[m]; })) {
        for (ir::NodeId m : grp.members) group_[m] = none;
        grp = Group{};
      }
  }

  void add_member(Group& g, ir::NodeId id) const {
    g.members.push_back(id); // the newest node is last in topological order
    if (ir::is<ir::Transpose>(g_.node(id).op)) g.transposes.push_back(id);
    if (ir::is<ir::Slice>(g_.node(id).op)) g.slices.push_back(id);
    g.matmul |= ir::is<ir::MatMul>(g_.node(id).op);
    if (const RowForm f = row_form(g_, g_.node(id)); f.reduced) g.form = f;
  }

  /// Appends `more` to `members`, both in topological order, keeping that order.
  void merge_sorted(std::vector<ir::NodeId>& members, const std::vector<ir::NodeId>& more) const {
    const auto middle = static_cast<std::ptrdiff_t>(members.size());
    members.insert(members.end(), more.begin(), more.end());
    std::inplace_merge(members.begin(), members.begin() + middle, members.end(),
                       [&](ir::NodeId a, ir::NodeId b) { return position_[a] < position_[b]; });
  }

  std::vector<std::size_t> sorted_by_size(std::vector<std::size_t> ps) const {
    std::stable_sort(ps.begin(), ps.end(), [&](std::size_t a, std::size_t b) {
      return groups_[a].members.size() > groups_[b].members.size();
    });
    return ps;
  }

  /// The members of a Subgraph: `id` and the Groups in `merge`.
  struct Candidate {
    const Tokenizer& t;
    ir::NodeId id;
    const std::vector<std::size_t>& merge;
    bool has(ir::NodeId n) const {
      if (n == id) return true;
      const std::size_t g = t.group_[n];
      return g != none && std::find(merge.begin(), merge.end(), g) != merge.end();
    }
  };

  /// The ordered inputs and outputs of a Subgraph of `members` (in topological order).
  Boundary boundary(const std::vector<ir::NodeId>& members) const {
    std::set<ir::NodeId> in(members.begin(), members.end());
    Boundary b;
    for (ir::NodeId m : members) {
      const auto& n = g_.node(m);
      for (std::size_t i = 0; i < n.inputs.size(); ++i)
        if (const ir::Output& o = n.inputs[i];
            !in.count(o.node) && !inlined(o, n, i) &&
            std::find(b.inputs.begin(), b.inputs.end(), o) == b.inputs.end())
          b.inputs.push_back(o);
      for (std::uint32_t p = 0; p < n.outputs.size(); ++p)
        for (const ir::Use& u : g_.users(ir::Output{m, p}))
          if (!in.count(u.node)) {
            b.outputs.push_back({m, p});
            break;
          }
    }
    return b;
  }

  /// The inputs and outputs of a Subgraph of `id` and the Groups in `merge`, found from
  /// theirs (in no particular order), or nothing when a rule forbids that Subgraph. `id` comes
  /// after every member of those Groups in topological order.
  std::optional<Boundary> admit(ir::NodeId id, const std::vector<std::size_t>& merge) {
    std::size_t ops = 1;
    for (std::size_t p : merge) ops += groups_[p].members.size();
    if (opt_.max_ops > 0 && ops > opt_.max_ops) return std::nullopt;
    const Candidate c{*this, id, merge};
    Boundary b;
    auto add_input = [&](const ir::Output& o) {
      if (std::find(b.inputs.begin(), b.inputs.end(), o) == b.inputs.end()) b.inputs.push_back(o);
    };
    // an input of a part stays an input unless another part computes it; an output of a part
    // stays one while something outside reads it (its readers inside the part are inside)
    for (std::size_t p : merge)
      for (const ir::Output& o : groups_[p].boundary.inputs)
        if (!c.has(o.node)) add_input(o);
    const ir::Node<T>& n = g_.node(id);
    for (std::size_t i = 0; i < n.inputs.size(); ++i)
      if (!c.has(n.inputs[i].node) && !inlined(n.inputs[i], n, i)) add_input(n.inputs[i]);
    auto read_outside = [&](const ir::Output& o) {
      for (const ir::Use& u : g_.users(o))
        if (!c.has(u.node)) return true;
      return false;
    };
    for (std::size_t p : merge)
      for (const ir::Output& o : groups_[p].boundary.outputs)
        if (read_outside(o)) b.outputs.push_back(o);
    for (std::uint32_t p = 0; p < n.outputs.size(); ++p)
      if (read_outside({id, p})) b.outputs.push_back({id, p});
    if (!allowed(c, b)) return std::nullopt;
    return b;
  }

  bool allowed(const Candidate& c, const Boundary& b) {
    if (static_cast<int>(b.inputs.size() + b.outputs.size()) > T::data_pointer_registers)
      return false;
    int to_results = 0;
    for (const ir::Output& o : b.outputs) {
      to_results += to_result_.count(o) ? 1 : 0;
      if (g_.type(o).shape != g_.type(b.outputs[0]).shape ||
          !backend_io_type_supported<T>(g_.type(o).type))
        return false;
    }
    if (to_results > opt_.max_result_outputs) return false;
    for (const ir::Output& o : b.inputs)
      if (!backend_io_type_supported<T>(g_.type(o).type)) return false;
    if (!transposes_on_inputs(c) || !slices_on_inputs(c)) return false;
    bool matmul = ir::is<ir::MatMul>(g_.node(c.id).op);
    for (std::size_t p : c.merge) matmul |= groups_[p].matmul;
    if (matmul && !matmul_form(c, b)) return false;
    if (!rows_fit(c, b)) return false;
    return acyclic_with(c);
  }

  /// The reductions' rule: every reduction reduces the same axes counted from the end (the
  /// kernel's row, passes/optimize_domain.hpp; RowForm) of an input that is whole along them in
  /// the kernel's domain (the loops walk the domain: a broadcast input would be summed again
  /// and again), and one without keep_dims is read by nothing inside (it is an output: the
  /// kernel stores the kept form, which has its bytes). Over middle axes (columns,
  /// passes/tile_columns.hpp) the kernel has no MatMul or Slice, and every input and
  /// output is whole or broadcast along all the kept axes at once (they are walked as one); a
  /// Transpose there leaves the kept axes in place (MoveReducedAxesLast's, around a reduction
  /// over axes that are not one run).
  bool rows_fit(const Candidate& c, const Boundary& b) const {
    const ir::Node<T>& n = g_.node(c.id);
    for (const ir::Output& o : n.inputs)
      if (o.node != c.id && c.has(o.node) && !reduced_dims_kept(g_.node(o.node))) return false;
    RowForm form = row_form(g_, n);
    for (std::size_t p : c.merge) {
      const RowForm pf = groups_[p].form;
      if (pf.reduced != 0 && form.reduced != 0 && pf != form) return false;
      if (form.reduced == 0) form = pf;
    }
    const std::size_t k = form.reduced + form.kept; // the axes from the end the rule looks at
    if (form.kept > 0) {
      // a Transpose that leaves the kept axes in place is read (or written) vector by vector
      auto moves_kept = [&](ir::NodeId t) {
        const auto& order = std::get<ir::Transpose>(g_.node(t).op).order;
        for (std::size_t j = 1; j <= form.kept; ++j)
          if (j > order.size() || order[order.size() - j] != order.size() - j) return true;
        return false;
      };
      bool other = ir::is<ir::MatMul>(n.op) || ir::is<ir::Slice>(n.op) ||
                   (ir::is<ir::Transpose>(n.op) && moves_kept(c.id));
      for (std::size_t p : c.merge)
        other = other || groups_[p].matmul || !groups_[p].slices.empty() ||
                std::any_of(groups_[p].transposes.begin(), groups_[p].transposes.end(), moves_kept);
      if (other) return false;
    } else if (k < 2) {
      return true; // over one axis, a broadcast input is one element: its own value
    }
    std::vector<const Shape*> shapes;       // the outputs' and the reductions' inputs'
    for (const ir::Output& o : b.outputs) { // (one that drops its axes is the kept form)
      const ir::Node<T>& m = g_.node(o.node);
      if (ir::is<ir::Transpose>(m.op) && c.has(m.inputs[0].node)) // folded into the store: the
        shapes.push_back(&g_.type(m.inputs[0]).shape);            // kernel computes its input
      else if (reduced_dims_kept(m))
        shapes.push_back(&g_.type(o).shape);
    }
    const std::size_t outputs = shapes.size();
    auto visit = [&](ir::NodeId m) {
      if (row_form(g_, g_.node(m)).reduced) shapes.push_back(&g_.type(g_.node(m).inputs[0]).shape);
    };
    visit(c.id);
    for (std::size_t p : c.merge)
      for (ir::NodeId m : groups_[p].members) visit(m);
    auto dim = [&](const Shape& s, std::size_t j) { return j > s.rank() ? 1 : s[s.rank() - j]; };
    for (std::size_t r = outputs; r < shapes.size(); ++r) // no shape is larger along the row
      for (const Shape* x : shapes)
        for (std::size_t j = form.kept + 1; j <= k; ++j)
          if (dim(*x, j) != 1 && dim(*x, j) != dim(*shapes[r], j)) return false;
    // the outputs: the domain (the largest extents), or the domain reduced along the row
    std::size_t rank = 0;
    for (const Shape* x : shapes) rank = std::max(rank, x->rank());
    std::vector<Dim> domain(rank, 1); // (an extent that is not 1; static rather than dynamic)
    for (const Shape* x : shapes)
      for (std::size_t j = 1; j <= x->rank(); ++j)
        if (Dim& d = domain[rank - j]; d == 1 || d == dynamic) d = dim(*x, j) == 1 ? d : dim(*x, j);
    for (std::size_t o = 0; o < outputs; ++o) {
      bool whole = true, reduced = true;
      for (std::size_t j = 1; j <= rank; ++j) {
        const Dim want = j > form.kept && j <= k ? 1 : domain[rank - j];
        whole = whole && dim(*shapes[o], j) == domain[rank - j];
        reduced = reduced && dim(*shapes[o], j) == want;
      }
      if (!whole && !reduced) return false;
    }
    if (form.kept == 0) return true;
    auto kept_together = [&](const Shape& s) { // whole along every kept axis, or 1 along each
      bool whole = true, one = true;
      for (std::size_t j = 1; j <= form.kept && j <= rank; ++j) {
        whole = whole && dim(s, j) == domain[rank - j];
        one = one && (dim(s, j) == 1 || domain[rank - j] == 1);
      }
      return whole || one;
    };
    for (const ir::Output& o : b.inputs)
      if (!kept_together(g_.type(o).shape)) return false;
    return std::all_of(shapes.begin(), shapes.end(),
                       [&](const Shape* s) { return kept_together(*s); });
  }

  /// LowerBrgemm's form (its rules: passes/matmul_form.hpp): a chain of MatMuls, each with its
  /// epilogue (elementwise ops of its product's shape on f32 or bf16 values, and on inputs). The
  /// first reads its operands from outside (or through Transposes of inputs); each next one reads a
  /// value of the one before as its A (an MLP) and B from outside; the outputs are values of the
  /// last. Or attention: at most one Softmax of the first product's epilogue value, read by a
  /// second MatMul and nothing else; then the Subgraph is sealed: nothing else joins but a
  /// Transpose of its output.
  bool matmul_form(const Candidate& c, const Boundary& b) {
    std::vector<ir::NodeId> sorted, mms, softmax;
    for (std::size_t p : c.merge) merge_sorted(sorted, groups_[p].members);
    sorted.push_back(c.id);
    for (ir::NodeId m : sorted) {
      if (ir::is<ir::MatMul>(g_.node(m).op)) mms.push_back(m);
      if (ir::is<ir::Softmax>(g_.node(m).op)) softmax.push_back(m);
    }
    if (mms.empty()) return true;
    if (!MatMulForm::counts_ok(mms.size(), softmax.size())) return false;
    auto from_outside = [&](const ir::Output& o) {
      if (!c.has(o.node)) return true;
      const ir::Node<T>& n = g_.node(o.node);
      return ir::is<ir::Transpose>(n.op) && !c.has(n.inputs[0].node);
    };
    // quantized attention: a Quantize to u8/i8 of the Softmax alone, read by the second MatMul
    // alone (LowerBrgemm quantizes the probabilities into its A: attention_rows.hpp)
    std::optional<ir::NodeId> quantized;
    for (ir::NodeId m : sorted)
      if (ir::is<ir::Quantize>(g_.node(m).op) && !softmax.empty() &&
          g_.node(m).inputs[0] == ir::Output{softmax[0], 0})
        quantized = m;
    // stage_[m]: the product member m computes on (MatMulForm::none: inputs only), written
    // before it is read; after_[m] == mark: m depends on the Softmax
    const std::uint64_t mark = ++marks_;
    auto after = [&](ir::NodeId m) { return after_[m] == mark; };
    for (ir::NodeId m : softmax) after_[m] = mark;
    for (ir::NodeId m : sorted) {
      const ir::Node<T>& n = g_.node(m);
      int from = MatMulForm::none; // the one product it reads values of
      bool two = false;
      bool early = false; // reads an op on inputs only, which LowerBrgemm puts in stage 0
      for (const ir::Output& o : n.inputs)
        if (c.has(o.node) && stage_[o.node] != MatMulForm::none) {
          two |= from != MatMulForm::none && from != stage_[o.node];
          from = stage_[o.node];
        } else if (c.has(o.node)) {
          early |= !ir::is<ir::Transpose>(g_.node(o.node).op);
        }
      const bool late = std::any_of(n.inputs.begin(), n.inputs.end(),
                                    [&](const ir::Output& o) { return after(o.node); });
      if (late) after_[m] = mark;
      if (ir::is<ir::MatMul>(n.op)) {
        const auto i = static_cast<std::size_t>(std::find(mms.begin(), mms.end(), m) - mms.begin());
        const int a_stage = MatMulForm::a_stage(i);
        const bool a_ok = a_stage == MatMulForm::none
                              ? from_outside(n.inputs[0])
                              : c.has(n.inputs[0].node) && stage_[n.inputs[0].node] == a_stage;
        if (!a_ok || !from_outside(n.inputs[1])) return false;
        const ir::NodeId probabilities = quantized ? *quantized : softmax.empty() ? 0 : softmax[0];
        if (!softmax.empty() && a_stage == MatMulForm::softmax_stage && // reads the Softmax alone
            (n.inputs[0].node != probabilities || g_.users(ir::Output{softmax[0], 0}).size() != 1 ||
             g_.users(ir::Output{probabilities, 0}).size() != 1))
          return false;
        stage_[m] = static_cast<int>(i);
        continue;
      }
      if (two) return false; // reads the values of two products
      stage_[m] = from;
      if (quantized && m == *quantized) { // its scale and zero point: one value each
        for (std::size_t i = 1; i < n.inputs.size(); ++i)
          if (g_.type(n.inputs[i]).shape.element_count() != 1) return false;
        continue;
      }
      if (early && !MatMulForm::reads_inputs_only_ok(stage_[m])) return false;
      if (ir::is<ir::Transpose>(n.op)) continue;
      const int s = std::max(stage_[m], 0); // ops on inputs alone: the first product's shape
      const auto& shape = g_.node(mms[std::size_t(s)]).outputs[0].shape;
      if (ir::is<ir::Softmax>(n.op)) {
        if (!MatMulForm::softmax_ok(stage_[m]) || n.outputs[0].shape != shape) return false;
        continue;
      }
      const ir::OpCategory cat = ir::op_category<T>(n.op);
      // Converts and quantizations are elementwise too (DecomposeQuantization), and may give
      // bytes (requantization: the kernel stores u8 or i8); other ops give f32 or bf16 values
      const bool converts =
          ir::is<ir::Convert>(n.op) || ir::is<ir::Quantize>(n.op) || ir::is<ir::FakeQuantize>(n.op);
      const bool elementwise = cat == ir::OpCategory::unary || cat == ir::OpCategory::binary ||
                               ir::is<ir::Select>(n.op) || ir::is<ir::PRelu>(n.op) || converts;
      const ElementType type = n.outputs[0].type;
      // the tokenizer's seal: nothing elementwise after the Softmax, not even an epilogue of the
      // second product (which LowerBrgemm would lower: matmul_form.hpp), but for an integer
      // second product (quantized attention), whose i32 sums its epilogue dequantizes
      const bool dequantizes = late && stage_[m] == 1 && mms.size() == 2 &&
                               g_.node(mms[1]).outputs[0].type == ElementType::i32;
      if ((late && !dequantizes) || !elementwise || n.outputs[0].shape != shape ||
          !(product_type(type) || (converts && is_byte_integer(type))))
        return false;
    }
    for (const ir::Output& o : b.outputs) // what leaves is a value of the last product ...
      if (!MatMulForm::output_ok(stage_[o.node], mms.size()) ||
          (!softmax.empty() && !after(o.node))) // ... and, around a Softmax, comes after it
        return false;
    for (ir::NodeId m : sorted) // input Transposes feed the MatMuls only (folded into B or A)
      if (ir::is<ir::Transpose>(g_.node(m).op) && !after(m))
        for (const ir::Use& u : g_.users(ir::Output{m, 0}))
          if (c.has(u.node) && !ir::is<ir::MatMul>(g_.node(u.node).op)) return false;
    for (const ir::Output& o : b.inputs)  // u8/i8 only as the operands of integer products
      if (!product_type(g_.type(o).type)) // (or through the Transposes they read, above)
        for (const ir::Use& u : g_.users(o))
          if (c.has(u.node) && !ir::is<ir::MatMul>(g_.node(u.node).op) &&
              !ir::is<ir::Transpose>(g_.node(u.node).op))
            return false;
    return b.inputs.size() + b.outputs.size() <= MatMulForm::max_operands;
  }

  /// Whether every Slice of `c` reads a Subgraph input that only Slices of its axis and length
  /// read inside `c` (also when `c`'s new node reads that input): else the kernel could not
  /// read the parts in place of the input (slice_reads.hpp).
  bool slices_on_inputs(const Candidate& c) const {
    auto check = [&](ir::NodeId m) {
      const ir::Node<T>& n = g_.node(m);
      if (c.has(n.inputs[0].node)) return false;
      const std::int64_t length = std::get<ir::Slice>(n.op).length;
      for (const ir::Use& u : g_.users(n.inputs[0])) {
        if (!c.has(u.node)) continue;
        const auto* s = std::get_if<ir::Slice>(&g_.node(u.node).op);
        if (!s || s->length != length || slice_axis(g_, g_.node(u.node)) != slice_axis(g_, n))
          return false;
      }
      return true;
    };
    for (std::size_t p : c.merge)
      for (ir::NodeId m : groups_[p].slices)
        if (!check(m)) return false;
    return !ir::is<ir::Slice>(g_.node(c.id).op) || check(c.id);
  }

  /// Whether every Transpose of `c` reads a Subgraph input that no other member reads (but
  /// Transposes of the same order: they fold into one load), or feeds only nodes outside the
  /// Subgraph and keeps the last axis last: else it could not be folded into the load of that
  /// input or the store of that output.
  bool transposes_on_inputs(const Candidate& c) const {
    // a MatMul body keeps the form LowerBrgemm takes: one folded Transpose per input
    bool matmul = ir::is<ir::MatMul>(g_.node(c.id).op);
    for (std::size_t p : c.merge) matmul |= groups_[p].matmul;
    auto check = [&](ir::NodeId m) {
      const auto& t = std::get<ir::Transpose>(g_.node(m).op);
      const ir::Output src = g_.node(m).inputs[0];
      bool first = !c.has(src.node);
      for (const ir::Use& u : g_.users(src)) {
        const auto* other = std::get_if<ir::Transpose>(&g_.node(u.node).op);
        if (u.node != m && c.has(u.node) && (matmul || !other || other->order != t.order))
          first = false;
      }
      bool last = FuseTransposeIntoResult::keeps_innermost(g_.type(src).shape, t.order);
      for (const ir::Use& u : g_.users(ir::Output{m, 0}))
        if (c.has(u.node)) last = false;
      return first || last;
    };
    for (std::size_t p : c.merge)
      for (ir::NodeId m : groups_[p].transposes)
        if (!check(m)) return false;
    return !ir::is<ir::Transpose>(g_.node(c.id).op) || check(c.id);
  }

  /// Whether contracting `c` (and every Group) keeps the model acyclic. The contracted model
  /// is acyclic before, so a cycle would leave `c` along an edge and come back: a search from
  /// the readers outside `c` of its parts' outputs, over the contracted model. Nodes after
  /// `c.id` in topological order are in no Group yet, so a path through one never comes back:
  /// the search stays among earlier nodes, and usually ends at once (in a chain it has nothing
  /// to visit), where a check of the whole contracted model made tokenizing quadratic.
  bool acyclic_with(const Candidate& c) {
    const std::uint64_t mark = ++marks_;
    seen_.resize(g_.size() + groups_.size(), 0);
    std::vector<ir::NodeId>& todo = todo_;
    todo.clear();
    // queues the readers of `o` not seen yet; false when one is in `c` (a cycle) unless `o`
    // is an output of `c` itself
    auto visit = [&](const ir::Output& o, bool of_c) {
      for (const ir::Use& u : g_.users(o)) {
        if (c.has(u.node)) {
          if (of_c) continue;
          return false;
        }
        const std::size_t g = group_[u.node];
        if (g == none && position_[u.node] > position_[c.id]) continue;
        const std::size_t vertex = g == none ? u.node : g_.size() + g;
        if (seen_[vertex] == mark) continue;
        seen_[vertex] = mark;
        todo.push_back(u.node);
      }
      return true;
    };
    for (std::size_t p : c.merge)
      for (const ir::Output& o : groups_[p].boundary.outputs) visit(o, true);
    while (!todo.empty()) {
      const ir::NodeId v = todo.back();
      todo.pop_back();
      if (const std::size_t g = group_[v]; g != none) {
        for (const ir::Output& o : groups_[g].boundary.outputs)
          if (!visit(o, false)) return false;
      } else {
        for (std::uint32_t p = 0; p < g_.node(v).outputs.size(); ++p)
          if (!visit({v, p}, false)) return false;
      }
    }
    return true;
  }

  ir::Graph<T> build() {
    // the contracted graph: vertex = node id, or size() + group index for a Subgraph
    const std::size_t n = g_.size();
    auto vertex = [&](ir::NodeId id) {
      return static_cast<std::uint32_t>(group_[id] == none ? id : n + group_[id]);
    };
    ir::detail::EdgeList edges;
    for (ir::NodeId id = 0; id < n; ++id)
      for (const ir::Output& o : g_.node(id).inputs)
        if (vertex(o.node) != vertex(id)) edges.emplace_back(vertex(o.node), vertex(id));
    const auto contracted = ir::detail::topological_order(n + groups_.size(), edges);
    SNIPPETS_ASSERT(contracted.has_value()) << "the tokenizer created a cycle";

    ir::Graph<T> out;
    for (ir::NodeId p : g_.parameters()) copy(out, p);
    for (std::uint32_t v : *contracted) {
      if (v >= n) {
        if (!groups_[v - n].members.empty()) emit_subgraph(out, groups_[v - n].members);
      } else if (group_[v] == none && !ir::is<ir::Parameter>(g_.node(v).op) &&
                 !ir::is<ir::Result>(g_.node(v).op) && !only_feeds_subgraphs(v)) {
        copy(out, v);
      }
    }
    for (ir::NodeId r : g_.results()) copy(out, r);
    return out;
  }

  /// A constant every user of which took it into its Subgraph is not needed outside.
  bool only_feeds_subgraphs(ir::NodeId id) const {
    if (!is_scalar_constant(g_.node(id)) && !ir::is<ir::Constant>(g_.node(id).op)) return false;
    for (std::uint32_t p = 0; p < g_.node(id).outputs.size(); ++p)
      for (const ir::Use& u : g_.users(ir::Output{id, p}))
        if (group_[u.node] == none || !inlined({id, p}, g_.node(u.node), u.input)) return false;
    return true;
  }

  /// Whether `user` takes this input of its (future) Subgraph into the body instead of as an
  /// input: a constant with one value (a Scalar in the kernel), or a MatMul's constant B
  /// (weights, packed at compile time).
  bool inlined(const ir::Output& o, const ir::Node<T>& user, std::size_t input) const {
    const ir::Node<T>& c = g_.node(o.node);
    if (!ir::is<ir::Constant>(c.op) || !ir::is<ir::MatMul>(user.op) || input != 1)
      return is_scalar_constant(c);
    // a constant B is packed once, as one matrix: with batch dims it is an input instead
    const Shape& s = c.outputs[0].shape;
    const auto batch = static_cast<std::ptrdiff_t>(s.rank() < 2 ? 0 : s.rank() - 2);
    return std::all_of(s.begin(), s.begin() + batch, [](Dim d) { return d == 1; });
  }

  void copy(ir::Graph<T>& out, ir::NodeId id) {
    const auto& node = g_.node(id);
    std::vector<ir::Value> in;
    for (const ir::Output& o : node.inputs) in.push_back(mapped_.at(o));
    const auto values = out.make(node.op, in, node.name);
    for (std::uint32_t p = 0; p < values.size(); ++p) mapped_[{id, p}] = values[p];
    if (node.skipped_by_plugin && !values.empty()) out.mark_skipped(values[0].output.node);
  }

  void emit_subgraph(ir::Graph<T>& out, const std::vector<ir::NodeId>& members) {
    const Boundary b = boundary(members);
    auto body = std::make_shared<ir::Graph<T>>();
    std::map<ir::Output, ir::Value, OutputLess> inner;
    std::vector<ir::Value> args;
    for (const ir::Output& o : b.inputs) {
      const auto& producer = g_.node(o.node);
      std::string name = producer.name;
      if (producer.outputs.size() > 1) (name += ':') += std::to_string(o.port);
      const auto* param = std::get_if<ir::Parameter>(&producer.op);
      inner[o] = param ? body->make(*param, std::span<const ir::Value>(), name)[0]
                       : body->parameter(g_.type(o).type, g_.type(o).shape, name);
      args.push_back(mapped_.at(o));
    }
    std::vector<std::string> absorbed;
    for (ir::NodeId m : members) {
      const auto& node = g_.node(m);
      std::vector<ir::Value> in;
      for (const ir::Output& o : node.inputs) {
        if (!inner.count(o)) { // a constant taken in (inlined()): copied, once per body
          const auto& c = g_.node(o.node);
          inner[o] = body->make(c.op, {}, c.name)[0];
        }
        in.push_back(inner.at(o));
      }
      const auto values = body->make(node.op, in, node.name);
      for (std::uint32_t p = 0; p < values.size(); ++p) inner[{m, p}] = values[p];
      absorbed.push_back(node.name);
    }
    for (const ir::Output& o : b.outputs) body->result(inner.at(o), g_.node(o.node).name);
    const auto values = out.make(ir::Subgraph<T>{std::move(body), std::move(absorbed)}, args,
                                 g_.node(members.back()).name);
    for (std::size_t i = 0; i < b.outputs.size(); ++i) mapped_[b.outputs[i]] = values[i];
  }

  const ir::Graph<T>& g_;
  const TokenizeOptions<T>& opt_;
  std::vector<std::size_t> position_;                  // topological position of each node
  std::vector<std::size_t> group_;                     // Subgraph of each node, or none
  std::vector<Group> groups_;                          // emptied when merged away
  std::set<ir::Output, OutputLess> to_result_;         // outputs a model Result reads
  std::map<ir::Output, ir::Value, OutputLess> mapped_; // model output -> result-graph value
  // scratch of admit(), stamped with `marks_` instead of cleared
  std::vector<int> stage_;           // matmul_form: the product a member computes on
  std::vector<std::uint64_t> after_; // matmul_form: depends on the Softmax
  std::vector<std::uint64_t> seen_;  // acyclic_with: vertex of the contracted model
  std::vector<ir::NodeId> todo_;     // acyclic_with: vertices to visit
  std::uint64_t marks_ = 0;
};

} // namespace detail

/// Returns a new graph where the fusable parts of `model` are Subgraph nodes. `model` is not
/// modified, and a failure throws snippets::Error before anything is returned.
/// @throws [snippets.tokenize.no_results] for a model without Results.
template <class T>
ir::Graph<T> tokenize(const ir::Graph<T>& model, const TokenizeOptions<T>& opt = {}) {
  static_assert(check_backend_traits<T>());
  if (model.results().empty())
    raise("snippets.tokenize.no_results",
          "the model has no Result, so nothing it computes is used; add g.result(...)");
  // ops no Result depends on are not computed at all (a Subgraph of them would have no output)
  const ir::Graph<T> live = remove_dead_nodes(model);
  return detail::Tokenizer<T>(live, opt).run();
}

} // namespace snippets::passes
