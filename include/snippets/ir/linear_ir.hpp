// SPDX-License-Identifier: Apache-2.0
// snippets/ir/linear_ir.hpp: the Linear IR (LIR) of the seed guide.
//
// A LinearIR<T> is an ordered list of Expression<T>; the order is control flow (code is
// emitted in it) and every expression's inputs are defined before it. Expressions never move
// in memory (stable addresses); passes reorder them with `move`.
//  - Expression: an op (LirOp<T>: any data-flow op plus the lowered ops), input and output
//    PortDescriptors (shape in the scheduling domain, assigned register), the loops it is in.
//  - PortConnector: one output of one expression (the source) and its consumers. Consumers
//    form an intrusive list threaded through the consumers' Operands, so replacing all uses
//    is O(uses) and needs no allocation (MLIR's use-lists).
//  - ExpressionPort: (expression, input/output, index), created on demand.
// Helpers: insert_node (create and connect), replace_with_node, replace_with_expr, erase.
#pragma once

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <list>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "snippets/ir/loop_manager.hpp"
#include "snippets/ir/lowered_ops.hpp"
#include "snippets/ir/op.hpp"

namespace snippets::ir {

/// Every op an Expression can hold: the built-in data-flow ops, the traits' extra ops, the
/// lowered ops, Subgraph<T>.
template <class T>
using LirOp =
    typename detail::ListsToVariant<Subgraph<T>, BuiltinOps, ExtraOps<T>, LoweredOps>::type;

template <class T> std::string_view lir_op_name(const LirOp<T>& op) {
  return std::visit([](const auto& tag) { return std::decay_t<decltype(tag)>::name; }, op);
}

/// gpr and vec are registers; stack is a loop counter kept in a stack slot (when the
/// general-purpose registers run out, outer loops count in memory).
enum class RegKind : std::uint8_t { none, gpr, vec, stack };

/// An abstract register; AssignRegisters sets it, the kernel emitter maps it to a physical one.
struct Reg {
  RegKind kind = RegKind::none;
  int index = -1;
  bool operator==(const Reg&) const = default;
};

/// How an expression sees the data on one port: its shape in the scheduling domain (rank
/// equal to the domain's; 1 where the tensor is broadcast) and the register holding it.
struct PortDescriptor {
  std::vector<Dim> shape;
  /// Memory order of the dimensions of `shape` (outermost first) of a kernel argument that is
  /// not planar in it: a Parameter's output and its Load's input (a strided read), a Result's
  /// input and its Store's output (a transposed write). Empty: planar.
  std::vector<std::size_t> layout;
  Reg reg;
  /// A Parameter that reads one part of its kernel argument (a folded Slice of the innermost
  /// axis: passes/slice_reads.hpp), and its Loads: the extents of the whole tensor in memory
  /// (same rank as `shape`), whose planar strides the reads take, and the element offset of the
  /// part's first element. Empty: `shape` is the tensor (offset 0).
  std::vector<Dim> memory;
  std::int64_t offset = 0;
};

template <class T> class Expression;
template <class T> class PortConnector;

/// One input of an expression: the use of a connector, linked into its consumer list.
template <class T> class Operand {
public:
  Operand(Expression<T>* owner, std::size_t index) : owner_(owner), index_(index) {}
  Operand(const Operand&) = delete;
  Operand& operator=(const Operand&) = delete;
  ~Operand() { unlink(); }

  Expression<T>& owner() const { return *owner_; }
  std::size_t index() const { return index_; }
  PortConnector<T>* connector() const { return conn_; }
  Operand* next_use() const { return next_; }

  void set(PortConnector<T>* c) {
    unlink();
    conn_ = c;
    if (!c) return;
    next_ = c->first_use_;
    if (next_) next_->prev_ = &next_;
    prev_ = &c->first_use_;
    c->first_use_ = this;
  }

private:
  friend class PortConnector<T>;
  void unlink() {
    if (!conn_) return;
    *prev_ = next_;
    if (next_) next_->prev_ = prev_;
    conn_ = nullptr;
    next_ = nullptr;
    prev_ = nullptr;
  }

  Expression<T>* owner_;
  std::size_t index_;
  PortConnector<T>* conn_ = nullptr;
  Operand* next_ = nullptr;
  Operand** prev_ = nullptr;
};

template <class T> struct ExpressionPort {
  enum class Type { input, output };
  Expression<T>* expr = nullptr;
  Type type = Type::input;
  std::size_t index = 0;
  PortDescriptor& descriptor() const {
    return type == Type::input ? expr->in_desc(index) : expr->out_desc(index);
  }
  bool operator==(const ExpressionPort&) const = default;
};

/// An output of an expression and the list of its consumers.
template <class T> class PortConnector {
public:
  PortConnector(Expression<T>* source, std::size_t index) : source_(source), index_(index) {}
  PortConnector(const PortConnector&) = delete;
  PortConnector& operator=(const PortConnector&) = delete;

  ExpressionPort<T> source() const { return {source_, ExpressionPort<T>::Type::output, index_}; }
  Expression<T>& source_expr() const { return *source_; }

  /// Forward range over the consuming Operands.
  class ConsumerRange {
  public:
    struct iterator {
      using value_type = Operand<T>;
      using difference_type = std::ptrdiff_t;
      Operand<T>* at = nullptr;
      Operand<T>& operator*() const { return *at; }
      iterator& operator++() {
        at = at->next_use();
        return *this;
      }
      iterator operator++(int) {
        iterator old = *this;
        ++*this;
        return old;
      }
      bool operator==(const iterator&) const = default;
    };
    explicit ConsumerRange(Operand<T>* first) : first_(first) {}
    iterator begin() const { return {first_}; }
    iterator end() const { return {}; }
    bool empty() const { return first_ == nullptr; }

  private:
    Operand<T>* first_;
  };
  ConsumerRange consumers() const { return ConsumerRange(first_use_); }
  std::size_t num_consumers() const {
    std::size_t n = 0;
    for (auto* u = first_use_; u; u = u->next_use()) ++n;
    return n;
  }
  /// Points every consumer of this connector at `other` instead.
  void replace_all_uses_with(PortConnector* other) {
    while (first_use_) first_use_->set(other);
  }

private:
  friend class Operand<T>;
  Expression<T>* source_;
  std::size_t index_;
  Operand<T>* first_use_ = nullptr;
};

template <class T> class Expression {
public:
  Expression(LirOp<T> op, std::size_t n_inputs, std::size_t n_outputs, std::string name)
      : op(std::move(op)), name(std::move(name)) {
    operands_.reserve(n_inputs);
    for (std::size_t i = 0; i < n_inputs; ++i)
      operands_.push_back(std::make_unique<Operand<T>>(this, i));
    for (std::size_t i = 0; i < n_outputs; ++i)
      outputs_.push_back(std::make_unique<PortConnector<T>>(this, i));
    in_desc_.resize(n_inputs);
    out_desc_.resize(n_outputs);
  }
  Expression(const Expression&) = delete;
  Expression& operator=(const Expression&) = delete;

  LirOp<T> op;
  std::string name;                  // the data-flow node it came from (for dumps and errors)
  std::vector<std::size_t> loop_ids; // enclosing loops, outermost first
  std::size_t order = 0;             // position in the LIR; refreshed by LinearIR::renumber()
  std::size_t data_index = 0;        // Parameter/Result: index of its kernel argument pointer

  std::string_view op_name() const { return lir_op_name<T>(op); }
  std::size_t num_inputs() const { return operands_.size(); }
  std::size_t num_outputs() const { return outputs_.size(); }
  Operand<T>& input(std::size_t i) const { return *operands_.at(i); }
  PortConnector<T>& output(std::size_t i) const { return *outputs_.at(i); }
  /// The connector feeding input i.
  PortConnector<T>& input_connector(std::size_t i) const {
    SNIPPETS_ASSERT(operands_.at(i)->connector()) << name << " input " << i << " is unconnected";
    return *operands_[i]->connector();
  }
  Expression& input_expr(std::size_t i) const { return input_connector(i).source_expr(); }
  PortDescriptor& in_desc(std::size_t i) { return in_desc_.at(i); }
  PortDescriptor& out_desc(std::size_t i) { return out_desc_.at(i); }
  const PortDescriptor& in_desc(std::size_t i) const { return in_desc_.at(i); }
  const PortDescriptor& out_desc(std::size_t i) const { return out_desc_.at(i); }
  ExpressionPort<T> input_port(std::size_t i) { return {this, ExpressionPort<T>::Type::input, i}; }
  ExpressionPort<T> output_port(std::size_t i) {
    return {this, ExpressionPort<T>::Type::output, i};
  }

private:
  template <class> friend class LinearIR;

  std::vector<std::unique_ptr<Operand<T>>> operands_;
  std::vector<std::unique_ptr<PortConnector<T>>> outputs_;
  std::vector<PortDescriptor> in_desc_, out_desc_;
  /// Where it sits in its LinearIR's list (list iterators survive inserts, splices and moves
  /// of the list), so that finding it costs O(1), not a walk of the whole LIR.
  typename std::list<std::unique_ptr<Expression>>::iterator place_{};
  bool placed_ = false; // place_ is set
};

template <class T> class LinearIR {
public:
  using ExprList = std::list<std::unique_ptr<Expression<T>>>;
  using iterator = typename ExprList::iterator;
  using const_iterator = typename ExprList::const_iterator;

  LinearIR() = default;
  LinearIR(LinearIR&&) noexcept = default;
  LinearIR& operator=(LinearIR&&) noexcept = default;
  /// Unlinks every use first, so expressions can then die in any order.
  ~LinearIR() {
    for (auto& e : exprs_)
      for (std::size_t i = 0; i < e->num_inputs(); ++i) e->input(i).set(nullptr);
  }

  iterator begin() { return exprs_.begin(); }
  iterator end() { return exprs_.end(); }
  const_iterator begin() const { return exprs_.begin(); }
  const_iterator end() const { return exprs_.end(); }
  std::size_t size() const { return exprs_.size(); }

  /// Creates an expression computing `op` on `inputs`, with `n_outputs` fresh connectors,
  /// inserted before `pos`. Input descriptors copy the sources' output descriptors' shapes.
  Expression<T>& insert_node(iterator pos, LirOp<T> op, std::span<PortConnector<T>* const> inputs,
                             std::size_t n_outputs, std::vector<std::size_t> loop_ids,
                             std::string name = {}) {
    auto e =
        std::make_unique<Expression<T>>(std::move(op), inputs.size(), n_outputs, std::move(name));
    e->loop_ids = std::move(loop_ids);
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      e->input(i).set(inputs[i]);
      e->in_desc(i).shape = inputs[i]->source().descriptor().shape;
    }
    Expression<T>& ref = *e;
    ref.place_ = exprs_.insert(pos, std::move(e));
    ref.placed_ = true;
    return ref;
  }
  Expression<T>& insert_node(iterator pos, LirOp<T> op,
                             std::initializer_list<PortConnector<T>*> inputs, std::size_t n_outputs,
                             std::vector<std::size_t> loop_ids, std::string name = {}) {
    return insert_node(pos, std::move(op),
                       std::span<PortConnector<T>* const>(inputs.begin(), inputs.size()), n_outputs,
                       std::move(loop_ids), std::move(name));
  }

  /// Replaces `old` (one output) by a new expression computing `op` on `inputs`, at the same
  /// place and in the same loops; consumers of old's output move to the new one.
  Expression<T>& replace_with_node(Expression<T>& old, LirOp<T> op,
                                   std::span<PortConnector<T>* const> inputs) {
    Expression<T>& e =
        insert_node(find(old), std::move(op), inputs, old.num_outputs(), old.loop_ids, old.name);
    replace_with_expr(old, e);
    return e;
  }

  /// Moves all consumers of `old`'s outputs to `repl`'s outputs (same count) and erases `old`.
  void replace_with_expr(Expression<T>& old, Expression<T>& repl) {
    SNIPPETS_ASSERT(old.num_outputs() == repl.num_outputs()) << old.name;
    for (std::size_t i = 0; i < old.num_outputs(); ++i) {
      repl.out_desc(i).shape = old.out_desc(i).shape;
      old.output(i).replace_all_uses_with(&repl.output(i));
    }
    erase(old);
  }

  /// Removes an expression whose outputs have no consumers.
  void erase(Expression<T>& e) {
    for (std::size_t i = 0; i < e.num_outputs(); ++i)
      SNIPPETS_ASSERT(e.output(i).consumers().empty())
          << "erasing " << e.name << " which has users";
    exprs_.erase(find(e));
  }

  /// Moves `e` so that it sits before `pos`.
  void move(Expression<T>& e, iterator pos) { exprs_.splice(pos, exprs_, find(e)); }

  /// The position of `e`, which must be in this LIR.
  iterator find(const Expression<T>& e) {
    SNIPPETS_ASSERT(e.placed_ && e.place_->get() == &e)
        << "expression " << e.name << " is not in a LIR";
    return e.place_;
  }

  /// Sets every expression's `order` to its position.
  void renumber() {
    std::size_t i = 0;
    for (auto& e : exprs_) e->order = i++;
  }

  LoopManager& loops() { return loops_; }
  const LoopManager& loops() const { return loops_; }

  /// The scheduling domain: the iteration space the kernel walks (after OptimizeDomain).
  std::vector<Dim> domain;
  /// With reductions: how many trailing domain dimensions a row holds (OptimizeDomain merges
  /// the reduced axes into one where every argument allows it; MarkLoops gives each stage of
  /// a row one loop per row dimension).
  std::size_t row_dims = 1;
  /// With reductions over middle axes (passes/decompose_softmax.hpp: RowForm::kept): the
  /// trailing axes they keep, set by convert_to_linear_ir. OptimizeDomain walks them as one
  /// dimension, the row's last, and sets `columns`; TileColumns then makes that dimension one
  /// vector of columns (at most `lanes` wide) and puts the blocks of columns before the row.
  /// Per-row values are then vectors, a value per column.
  std::size_t kept_axes = 0;
  bool columns = false;
  /// Kernel arguments: the Parameters' data pointers, then the Results'.
  std::size_t num_inputs = 0, num_outputs = 0;
  /// The element type in memory of each kernel argument (by data_index; registers hold f32).
  std::vector<ElementType> arg_types;
  /// Vector-sized stack slots the kernel reserves for spilled values.
  std::size_t spill_slots = 0;
  /// 8-byte stack slots for loop counters that did not get a register.
  std::size_t counter_slots = 0;
  /// Top vector registers kept from the allocator for emitter scratch (and AVX2 tail masks).
  int reserved_vector_registers = 0;
  /// The body has dynamic dimensions: every loop takes its work amount from the call arguments,
  /// outer loops advance pointers by amounts from the run-time configuration, and innermost
  /// tails are masked by the remaining count (runtime/runtime_config.hpp).
  bool dynamic = false;
  /// Data pointers to per-thread scratch memory after the kernel arguments (AllocateBuffers),
  /// and the scratch bytes each thread needs.
  std::size_t buffer_pointers = 0;
  std::int64_t scratch_bytes = 0;
  /// A dynamic LIR's Buffers hold rows of a length known at run time: each buffer pointer
  /// points at row `buffer_rows[b]` of the scratch, which holds `scratch_rows` rows (each padded
  /// to 64 bytes; runtime/runtime_config.hpp), and scratch_bytes is 0.
  std::vector<std::int64_t> buffer_rows;
  std::int64_t scratch_rows = 0;
  /// The target may use its own bf16 conversion instructions (x86-64: AVX512_BF16's
  /// VCVTNEPS2BF16); false: exact integer rounding. Both give the same bits.
  bool native_bf16 = false;
  /// Significand bits an approximation must give the values it computes (CompileOptions::
  /// accuracy): 24 for the standard tier, 17 for the relaxed one (targets may give more).
  int kept_bits = 24;
  /// The target multiplies u8/i8 operands into int32 sums; false: LowerBrgemm refuses integer
  /// products. `int8_dot`: as bytes, four depths at once (BrgemmShape::quads); otherwise as
  /// 16-bit words, two depths at once (BrgemmShape::words).
  bool int8_products = false;
  bool int8_dot = false;
  /// The target's Brgemm takes a run-time range of B's column panels (work[1] columns from
  /// CallArgs::inner_begin): LowerBrgemm may let a call take a part of a product's N.
  bool column_ranges = false;
  /// Set by LowerBrgemm when it does (domain dim 1 is N): columns per unit (whole panels) and,
  /// per kernel argument, bytes per column; 0: calls take all of N. `column_shared`: the part
  /// of a row's work a call repeats whatever columns it takes (the products before the last
  /// of an MLP chain).
  std::int64_t column_unit = 0;
  std::vector<std::int64_t> column_stride_bytes;
  double column_shared = 0;

private:
  ExprList exprs_;
  LoopManager loops_;
};

/// Copies `exprs` (in order) before `pos`, each with its descriptors and data index: an input
/// produced by an expression copied earlier reads that copy, loop `from` becomes loop `to`,
/// and `edit(source, op)` adjusts each copy's op first. Returns the copies, in order
/// (unrolled and remainder bodies, tail blocks).
template <class T, class Edit>
std::vector<Expression<T>*>
copy_expressions(LinearIR<T>& lir, std::span<Expression<T>* const> exprs,
                 typename LinearIR<T>::iterator pos, std::size_t from, std::size_t to, Edit edit) {
  std::map<const PortConnector<T>*, PortConnector<T>*> remap;
  std::vector<Expression<T>*> copies;
  for (Expression<T>* src : exprs) {
    LirOp<T> op = src->op;
    edit(*src, op);
    std::vector<PortConnector<T>*> in;
    for (std::size_t i = 0; i < src->num_inputs(); ++i) {
      auto* c = &src->input_connector(i);
      const auto it = remap.find(c);
      in.push_back(it == remap.end() ? c : it->second);
    }
    auto ids = src->loop_ids;
    std::replace(ids.begin(), ids.end(), from, to);
    auto& copy = lir.insert_node(pos, std::move(op), in, src->num_outputs(), ids, src->name);
    copy.data_index = src->data_index;
    for (std::size_t i = 0; i < src->num_inputs(); ++i) copy.in_desc(i) = src->in_desc(i);
    for (std::size_t i = 0; i < src->num_outputs(); ++i) {
      copy.out_desc(i) = src->out_desc(i);
      remap[&src->output(i)] = &copy.output(i);
    }
    copies.push_back(&copy);
  }
  return copies;
}

} // namespace snippets::ir
