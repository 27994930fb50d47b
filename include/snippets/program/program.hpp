// SPDX-License-Identifier: Apache-2.0
// snippets/program/program.hpp: Program, a whole model compiled for execution.
//
//   snippets::Program<> program(model, {.opaque = {{"MatMul", my_matmul}}}); // DefaultTraits
//   snippets::Program<MyTraits, MyLowering, MyDataFlow> mine(model); // pipelines of your own
//   auto ctx = program.make_context();                  // one per thread or stream
//   program.run(ctx, inputs, outputs);                  // views on the caller's buffers
//
// Construction folds QDQ MatMuls into int8 products when the backend multiplies bytes
// (passes/fold_dequantize_into_matmul.hpp), computes ops between Reshapes that merge and split
// axes over the finer axes (passes/split_merged_axes.hpp: PyTorch's GroupNorm in one kernel),
// writes reductions over other axes than the last ones over transposed inputs
// (passes/move_reduced_axes_last.hpp), tokenizes the model
// (passes/tokenize.hpp), compiles every Subgraph into a JIT kernel with the Program's pipelines
// (compile<T, Lowering, DataFlow>, through a KernelCache, so equal Subgraphs compiled the same
// way share one kernel), orders the steps topologically and plans the intermediate buffers
// (support/memory_plan.hpp): two intermediates share memory when their lifetimes do not
// overlap. Each step runs as
//  - a kernel: a Subgraph's CompiledKernel;
//  - opaque: an Opaque op through the OpaqueKernel registered under its type name (on
//    buffers), or a reference::OpaqueFn (on doubles) when only that is registered;
//  - host: a Reshape, Transpose, Broadcast or Slice outside the kernels, as a copy of its
//    bytes (program/host_steps.hpp: exact for every type, no round trip through double); a
//    Reshape's value is a view of its input's memory (no bytes move), and a value a Result
//    returns through Reshapes is written straight into that output;
//  - reference: any other op, and a Subgraph that failed to compile for this host or whose
//    kernel has no code it can execute (the reason is in Step::note; the kernel, if any, stays
//    in Step::kernel), through the reference interpreter. A backend without a code generator
//    (ReferenceBackend), or ProgramOptions::reference_only, runs every node this way.
// A model with dynamic dimensions compiles once too: its Subgraphs become dynamic kernels where
// compile() takes their bodies with dynamic shapes, and kernel_per_shape steps where it takes
// them with static shapes only (MatMuls). The first run with a set of input shapes makes the
// Plan for them (every value's shape, the arena's offsets, each dynamic kernel configured,
// each kernel_per_shape step compiled through the KernelCache), and later runs with the same
// shapes reuse it; the context's arena grows to the largest plan it has run.
// The Program is immutable and may run from many threads at once, each with its own
// ExecutionContext. Inputs, outputs and the model's values are planar.
// No output may overlap an input or another output (a model reads its inputs after it has
// written outputs): run() checks it, [snippets.run.overlapping_buffers]. Inputs may overlap.
#pragma once

#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "snippets/compile.hpp"
#include "snippets/default_traits.hpp"
#include "snippets/passes/fold_dequantize_into_matmul.hpp"
#include "snippets/passes/move_reduced_axes_last.hpp"
#include "snippets/passes/split_merged_axes.hpp"
#include "snippets/passes/tokenize.hpp"
#include "snippets/program/execution_context.hpp"
#include "snippets/program/host_steps.hpp"
#include "snippets/program/kernel_cache.hpp"
#include "snippets/reference/interpreter.hpp"
#include "snippets/support/memory_plan.hpp"

namespace snippets {

/// Computes an Opaque op on buffers: inputs and outputs in the op's order, planar.
using OpaqueKernel =
    std::function<void(std::span<const ConstTensorView>, std::span<const TensorView>)>;

template <class T> struct ProgramOptions {
  CompileOptions compile; // for every Subgraph kernel
  /// Equal Subgraphs (here and in other Programs using the same cache) share one kernel;
  /// nullptr compiles every Subgraph anew.
  KernelCache* cache = &default_kernel_cache();
  passes::TokenizeOptions<T> tokenize; // e.g. {.fuse = false} for one kernel per op
  bool tokenized = false;              // the model already holds its Subgraphs
  bool reference_only = false;         // run every step through the reference interpreter
  std::map<std::string, OpaqueKernel, std::less<>> opaque;
  reference::Options reference; // Opaque callables on doubles, used when `opaque` has none
};

template <class T = DefaultTraits, class Lowering = passes::DefaultLowering,
          class DataFlow = passes::DefaultDataFlow>
class Program {
public:
  /// kernel_per_shape: a Subgraph of a dynamic model whose body compile() takes with static
  /// shapes only (a MatMul's, for one): compiled for each set of input shapes at the first run
  /// with them (through the KernelCache), and run on the reference path for shapes it cannot
  /// be compiled for (Step::note, Plan::notes say why).
  enum class StepKind { kernel, kernel_per_shape, opaque, host, reference };
  struct Step {
    ir::NodeId node = 0; // in graph()
    StepKind kind = StepKind::reference;
    std::optional<CompiledKernel> kernel;
    std::string note;                         // why a Subgraph is not a kernel (for all shapes)
    std::vector<std::size_t> inputs, outputs; // value indices
  };
  /// Where a value lives while the program runs.
  struct ValueSlot {
    enum class Place { input, output, arena, constant } place = Place::arena;
    std::size_t index = 0; // input/output position, or offset into the arena / constants
    ir::TensorType type;   // its element type and shape (partial in a dynamic model's values())
    std::int64_t bytes = 0;
  };
  /// What runs with one set of input shapes need: every value's type and place, the arena, and
  /// what was compiled or configured for those shapes. A static model has one; a dynamic model
  /// makes one per set of input shapes at the first run with them and keeps it.
  struct Plan {
    std::vector<ValueSlot> values; // static types, arena offsets
    std::vector<ir::TensorType> outputs;
    std::int64_t arena_bytes = 0, unplanned_bytes = 0;
    std::vector<std::optional<CompiledKernel>> kernels; // per step: kernel_per_shape compiled
    std::vector<std::optional<RuntimeConfig>> configs;  // per step: a dynamic kernel configured
    std::vector<std::string> notes; // per step: why it runs on the reference path for these shapes
  };

  explicit Program(const ir::Graph<T>& model, ProgramOptions<T> opt = {});

  /// The model as it runs: tokenized, Subgraphs in place of the fused ops.
  const ir::Graph<T>& graph() const { return *graph_; }
  std::span<const Step> steps() const { return steps_; }
  /// Whether the model has dynamic dimensions (then arena_bytes() and values() are per Plan).
  bool is_dynamic() const { return dynamic_; }
  /// Every value's place and type: a static model's plan, or a dynamic model's partial types.
  std::span<const ValueSlot> values() const {
    return static_plan_ ? std::span<const ValueSlot>(static_plan_->values) : values_;
  }
  /// Bytes of intermediate memory an ExecutionContext holds (a dynamic model: grown per run).
  std::int64_t arena_bytes() const { return static_plan_ ? static_plan_->arena_bytes : 0; }
  /// Bytes the intermediates would need without reuse.
  std::int64_t unplanned_bytes() const { return static_plan_ ? static_plan_->unplanned_bytes : 0; }
  ExecutionContext make_context() const { return ExecutionContext(arena_bytes()); }
  /// The plan for inputs of these shapes (checked as run() checks them), made at the first
  /// call with them and kept; the output shapes a run with them writes are in Plan::outputs.
  std::shared_ptr<const Plan> plan(std::span<const Shape> input_shapes) const;
  std::shared_ptr<const Plan> plan(std::initializer_list<Shape> input_shapes) const {
    return plan(std::span<const Shape>(input_shapes.begin(), input_shapes.size()));
  }

  /// Runs the model on the caller's buffers (checked first, like CompiledKernel::run).
  void run(ExecutionContext& ctx, std::span<const ConstTensorView> in,
           std::span<const TensorView> out, const RunOptions& run_opt = {}) const;

  /// Convenience for tests and demos: a fresh context, outputs allocated and returned.
  std::vector<reference::Tensor> run(std::span<const reference::Tensor> in,
                                     const RunOptions& run_opt = {}) const {
    std::vector<ConstTensorView> views;
    std::vector<Shape> shapes;
    for (const auto& t : in) views.push_back({t.type(), t.shape(), t.data()});
    for (const auto& t : in) shapes.push_back(t.shape());
    check_views(std::span<const ConstTensorView>(views), input_types_, "input", "program", true);
    std::vector<reference::Tensor> outs;
    std::vector<TensorView> out_views;
    for (const auto& o : plan(shapes)->outputs) outs.emplace_back(o.type, o.shape);
    for (auto& t : outs) out_views.push_back({t.type(), t.shape(), t.data()});
    ExecutionContext ctx = make_context();
    run(ctx, views, out_views, run_opt);
    return outs;
  }

private:
  using Key = std::pair<ir::NodeId, std::uint32_t>;
  struct Plans { // a dynamic model's plans, per set of input shapes
    std::mutex mutex;
    std::map<std::vector<Dim>, std::shared_ptr<const Plan>> by_shapes; // ranks and extents
  };

  /// One value per node output; Parameters read the caller's inputs, a value that a Result
  /// returns is written straight into the caller's output, the rest go into the arena (with
  /// the steps that write and last read them); constants are encoded once.
  void place_values();
  /// Every value's static type for inputs of these shapes; the Subgraph bodies of the
  /// kernel_per_shape steps made static for them go into `bodies` (per step).
  std::vector<ir::TensorType> value_types(std::span<const Shape> input_shapes,
                                          std::vector<std::optional<ir::Graph<T>>>& bodies) const;
  std::shared_ptr<const Plan> make_plan(std::span<const Shape> input_shapes) const;
  /// A dynamic model's plan for these (checked) input shapes: found, or made and kept.
  std::shared_ptr<const Plan> cached_plan(std::span<const Shape> input_shapes) const;
  /// `t` made static: its dynamic dimensions take the extents of `in[0]`'s (an Opaque's output
  /// declared with the partial shape of its input), or [snippets.program.dynamic_shape].
  static ir::TensorType resolved(ir::TensorType t, std::span<const ir::TensorType> in,
                                 const ir::Node<T>& n);

  static std::size_t position(const std::vector<ir::NodeId>& ids, ir::NodeId id) {
    return static_cast<std::size_t>(std::find(ids.begin(), ids.end(), id) - ids.begin());
  }

  static std::optional<std::size_t> first_result(const ir::Graph<T>& g, ir::Output o) {
    for (const ir::Use& u : g.users(o))
      if (ir::is<ir::Result>(g.node(u.node).op)) return position(g.results(), u.node);
    return std::nullopt;
  }

  static bool is_source(const ir::Op<T>& op) {
    return ir::is<ir::Parameter>(op) || ir::is<ir::Constant>(op) || ir::is<ir::Scalar>(op);
  }

  /// Whether node `n` runs as a host step (program/host_steps.hpp).
  bool runs_on_host(const ir::Graph<T>& g, const ir::Node<T>& n) const {
    return CodeGenerator<T> && !opt_->reference_only && detail::host_movable(n.op) &&
           g.type(n.inputs[0]).type == n.outputs[0].type;
  }
  /// A Reshape run on the host moves no bytes: its value is a view of its input's memory.
  bool is_view(const ir::Graph<T>& g, const ir::Node<T>& n) const {
    return ir::is<ir::Reshape>(n.op) && runs_on_host(g, n);
  }

  void prepare_steps();

  /// Compiles a Subgraph's kernel, or notes why it runs on the reference path.
  void prepare_kernel(Step& step, const ir::Node<T>& n, const ir::Subgraph<T>& sg);
  /// compile() of a body, through the cache. `why` says why it cannot run: a kernel without code
  /// this host executes (returned, to inspect), or a compile() that falls back (std::nullopt,
  /// its error id in `error_id`).
  std::optional<CompiledKernel> compile_body(const ir::Graph<T>& body, const ir::Node<T>& n,
                                             std::string& why,
                                             std::string* error_id = nullptr) const;
  static std::string describe_subgraph(const ir::Node<T>& n); // name and absorbed ops

  /// A Subgraph runs on the reference path when the kernel cannot be built (what it holds,
  /// this host, a bug of ours); a malformed SNIPPETS_* variable or option, or a dump that
  /// cannot be written, is the caller's to fix, and is raised as compile() raises it.
  static bool falls_back(const Error& e) {
    const std::string_view id = e.id();
    if (id == "snippets.compile.bad_option") return false;
    return id.starts_with("snippets.compile.") || id.starts_with("snippets.canonicalize.") ||
           id == "snippets.isa.unsupported_host" || id == "snippets.internal.assert";
  }

  void run_step(std::size_t i, const Plan& plan, std::span<const ConstTensorView> in,
                std::span<const TensorView> out, const RunOptions& run_opt) const;

  std::shared_ptr<const ProgramOptions<T>> opt_;
  std::shared_ptr<const ir::Graph<T>> graph_;
  std::vector<ir::NodeId> order_;
  std::vector<ValueSlot> values_; // partial types, no arena offsets
  std::map<Key, std::size_t> index_;
  std::vector<Step> steps_;
  std::shared_ptr<const std::vector<std::byte>> constants_;
  std::vector<ir::TensorType> input_types_;
  std::vector<std::size_t> result_values_;                  // the value each Result returns
  std::vector<std::pair<std::size_t, std::size_t>> copies_; // value -> output position
  std::vector<BufferRequest> lifetimes_;                    // per arena value (bytes set per plan)
  std::vector<std::size_t> arena_values_;
  std::vector<std::pair<std::size_t, std::size_t>> views_; // arena value -> the one it views
  bool dynamic_ = false;                                   // some value has a dynamic dimension
  std::shared_ptr<const Plan> static_plan_;                // null for a dynamic model
  std::shared_ptr<Plans> plans_ = std::make_shared<Plans>();
};

// The members below are defined out of the class, so not inline: snippets::prebuilt holds them
// for DefaultTraits and the default pipelines (snippets/extern_templates.hpp), and a program
// that links it compiles none of them again.

template <class T, class Lowering, class DataFlow>
Program<T, Lowering, DataFlow>::Program(const ir::Graph<T>& model, ProgramOptions<T> opt)
    : opt_(std::make_shared<const ProgramOptions<T>>(std::move(opt))) {
  for (ir::NodeId id = 0; id < model.size(); ++id) {
    const auto& n = model.node(id);
    if (const auto* p = std::get_if<ir::Parameter>(&n.op); p && !p->layout.is_planar())
      raise("snippets.program.layout_unsupported",
            n.describe() + " has a non-planar layout; a Program takes planar inputs (compile "
                           "the Subgraph body directly for other layouts)");
    if (const auto* r = std::get_if<ir::Result>(&n.op); r && !r->layout.is_planar())
      raise("snippets.program.layout_unsupported",
            n.describe() + " has a non-planar layout; a Program writes planar outputs (add a "
                           "Transpose before the output instead: it is folded into the store)");
  }
  // a malformed SNIPPETS_* variable is the caller's error, not a reason to fall back (the
  // backend's host detection reads its own, such as SNIPPETS_MAX_ISA)
  (void)debug::resolve(opt_->compile.debug);
  (void)T::host_supported();
  if (opt_->tokenized || opt_->reference_only) {
    graph_ = std::make_shared<const ir::Graph<T>>(passes::remove_dead_nodes(model));
  } else {
    // before the tokenizer: QDQ MatMuls become int8 products (it takes a MatMul's operands from
    // outside its Subgraph) when the backend multiplies bytes on the chosen variant, ops between
    // Reshapes that merge and split axes run over the finer axes (the Reshapes leave the middle
    // of fusable chains), and reductions over other axes than the last ones reduce transposed
    // inputs, with the ops around them where their results are broadcast back (kernels reduce
    // rows of trailing axes)
    std::optional<ir::Graph<T>> prepared;
    auto current = [&]() -> const ir::Graph<T>& { return prepared ? *prepared : model; };
    if constexpr (CodeGenerator<T>)
      if (passes::FoldDequantizeIntoMatMul::finds_candidates(model) &&
          backend_int8_products<T>(detail::chosen_variant<T>(opt_->compile)))
        prepared = passes::FoldDequantizeIntoMatMul{}.run(current());
    if (passes::SplitMergedAxes::finds_candidates(current()))
      prepared = passes::SplitMergedAxes{}.run(current());
    if (passes::MoveReducedAxesLast::finds_candidates(current()))
      prepared = passes::MoveReducedAxesLast{}.run(current());
    graph_ = std::make_shared<const ir::Graph<T>>(passes::tokenize(current(), opt_->tokenize));
  }
  place_values();
  prepare_steps();
  dynamic_ = std::any_of(values_.begin(), values_.end(),
                         [](const ValueSlot& v) { return !v.type.shape.is_static(); });
  if (!dynamic_) {
    std::vector<Shape> shapes;
    for (const auto& t : input_types_) shapes.push_back(t.shape);
    static_plan_ = make_plan(shapes);
  }
}

template <class T, class Lowering, class DataFlow>
std::shared_ptr<const typename Program<T, Lowering, DataFlow>::Plan>
Program<T, Lowering, DataFlow>::plan(std::span<const Shape> input_shapes) const {
  if (input_shapes.size() != input_types_.size())
    raise("snippets.run.arg_count", "the program takes " + std::to_string(input_types_.size()) +
                                        " input(s) but " + std::to_string(input_shapes.size()) +
                                        " shapes were given");
  for (std::size_t i = 0; i < input_shapes.size(); ++i)
    if (!compatible(input_shapes[i], input_types_[i].shape) || !input_shapes[i].is_static())
      raise("snippets.run.shape_mismatch",
            "input " + std::to_string(i) + " has shape " + input_shapes[i].to_string() +
                " but the program was compiled for " + input_types_[i].shape.to_string());
  return static_plan_ ? static_plan_ : cached_plan(input_shapes);
}

template <class T, class Lowering, class DataFlow>
std::shared_ptr<const typename Program<T, Lowering, DataFlow>::Plan>
Program<T, Lowering, DataFlow>::cached_plan(std::span<const Shape> input_shapes) const {
  std::vector<Dim> key;
  for (const Shape& s : input_shapes) {
    key.push_back(Dim(s.rank()));
    key.insert(key.end(), s.begin(), s.end());
  }
  {
    std::lock_guard lock(plans_->mutex);
    if (const auto it = plans_->by_shapes.find(key); it != plans_->by_shapes.end())
      return it->second;
  }
  // made outside the lock (it may compile kernels); two threads that race keep the first
  auto made = make_plan(input_shapes);
  std::lock_guard lock(plans_->mutex);
  return plans_->by_shapes.emplace(std::move(key), std::move(made)).first->second;
}

template <class T, class Lowering, class DataFlow>
void Program<T, Lowering, DataFlow>::run(ExecutionContext& ctx, std::span<const ConstTensorView> in,
                                         std::span<const TensorView> out,
                                         const RunOptions& run_opt) const {
  check_views(in, input_types_, "input", "program", dynamic_);
  std::shared_ptr<const Plan> plan_ptr = static_plan_;
  if (dynamic_) { // the views are checked: their shapes fit the partial ones
    std::vector<Shape> shapes;
    for (const ConstTensorView& v : in) shapes.push_back(v.shape);
    plan_ptr = cached_plan(shapes);
  }
  const Plan& p = *plan_ptr;
  check_views(out, p.outputs, "output", "program");
  check_overlap(
      in, out, [](std::size_t) { return false; }, "program");
  if (dynamic_) {
    ctx.reserve(p.arena_bytes);
  } else if (ctx.bytes() < p.arena_bytes) {
    raise("snippets.program.context_mismatch",
          std::string("the execution context holds ") + std::to_string(ctx.bytes()) +
              " bytes but this program needs " + std::to_string(p.arena_bytes) +
              "; use program.make_context()");
  }
  auto address = [&](std::size_t v) -> std::byte* {
    const ValueSlot& s = p.values[v];
    switch (s.place) {
    case ValueSlot::Place::input:
      return static_cast<std::byte*>(const_cast<void*>(in[s.index].data));
    case ValueSlot::Place::output: return static_cast<std::byte*>(out[s.index].data);
    case ValueSlot::Place::constant: return const_cast<std::byte*>(constants_->data()) + s.index;
    default: return ctx.arena() + s.index;
    }
  };
  for (std::size_t i = 0; i < steps_.size(); ++i) {
    std::vector<ConstTensorView> step_in;
    std::vector<TensorView> step_out;
    for (std::size_t v : steps_[i].inputs)
      step_in.push_back({p.values[v].type.type, p.values[v].type.shape, address(v)});
    for (std::size_t v : steps_[i].outputs)
      step_out.push_back({p.values[v].type.type, p.values[v].type.shape, address(v)});
    run_step(i, p, step_in, step_out, run_opt);
  }
  for (const auto& [from, to] : copies_) // Results that repeat a value, or read an input
    if (p.values[from].bytes > 0) std::memcpy(out[to].data, address(from), p.values[from].bytes);
}

template <class T, class Lowering, class DataFlow>
void Program<T, Lowering, DataFlow>::place_values() {
  const ir::Graph<T>& g = *graph_;
  order_ = g.topological_order();
  std::vector<std::byte> constants;
  std::map<Key, std::size_t> lifetime_of; // arena values: their entry in lifetimes_
  // a value a Result returns through Reshapes (views) is written straight into that output
  std::map<Key, std::size_t> written_to_output;
  for (std::size_t r = 0; r < g.results().size(); ++r) {
    ir::Output src = g.node(g.results()[r]).inputs[0];
    while (is_view(g, g.node(src.node))) src = g.node(src.node).inputs[0];
    if (src != g.node(g.results()[r]).inputs[0] && !is_source(g.node(src.node).op) &&
        !first_result(g, src))
      written_to_output.emplace(Key{src.node, src.port}, r);
  }
  std::size_t step = 0;
  for (ir::NodeId id : order_) {
    const auto& n = g.node(id);
    if (ir::is<ir::Result>(n.op)) continue;
    for (std::uint32_t p = 0; p < n.outputs.size(); ++p) {
      ValueSlot s;
      s.type = n.outputs[p];
      index_[{id, p}] = values_.size();
      const auto result = first_result(g, {id, p});
      const auto output = written_to_output.find({id, p});
      if (output != written_to_output.end()) {
        s.place = ValueSlot::Place::output;
        s.index = output->second;
      } else if (is_view(g, n) && !result) { // the input's memory (never written: no copy)
        const Key from{n.inputs[0].node, n.inputs[0].port};
        const ValueSlot& in = values_[index_.at(from)];
        s.place = in.place;
        s.index = in.index;
        s.bytes = in.bytes;
        if (const auto it = lifetime_of.find(from); it != lifetime_of.end()) {
          lifetime_of[{id, p}] = it->second; // read as long as the view is
          const auto viewed = std::find_if(views_.begin(), views_.end(), [&](const auto& v) {
            return v.first == index_.at(from);
          });
          views_.emplace_back(values_.size(),
                              viewed != views_.end() ? viewed->second : index_.at(from));
        }
      } else if (ir::is<ir::Parameter>(n.op)) {
        s.place = ValueSlot::Place::input;
        s.index = position(g.parameters(), id);
      } else if (is_source(n.op)) {
        s.place = ValueSlot::Place::constant;
        s.index = constants.size();
        s.bytes = s.type.shape.element_count() * static_cast<std::int64_t>(size_of(s.type.type));
        const auto v = reference::detail::eval_node<T>(n, {}, opt_->reference)[0];
        constants.resize(constants.size() + static_cast<std::size_t>(s.bytes));
        for (std::size_t i = 0; i < v.v.size(); ++i)
          encode(s.type.type, v.v[i], constants.data() + s.index + i * size_of(s.type.type));
      } else if (result) {
        s.place = ValueSlot::Place::output;
        s.index = *result;
      } else {
        s.place = ValueSlot::Place::arena;
        lifetime_of[{id, p}] = lifetimes_.size();
        lifetimes_.push_back({0, step, step});
        arena_values_.push_back(values_.size());
      }
      values_.push_back(s);
    }
    if (!is_source(n.op)) ++step;
  }
  constants_ = std::make_shared<const std::vector<std::byte>>(std::move(constants));
  // lifetimes end at the last reading step
  step = 0;
  for (ir::NodeId id : order_) {
    const auto& n = g.node(id);
    if (ir::is<ir::Result>(n.op) || is_source(n.op)) continue;
    for (const ir::Output& o : n.inputs)
      if (const auto it = lifetime_of.find({o.node, o.port}); it != lifetime_of.end())
        lifetimes_[it->second].end = std::max(lifetimes_[it->second].end, step);
    ++step;
  }
  for (ir::NodeId p : g.parameters()) input_types_.push_back(g.node(p).outputs[0]);
  for (std::size_t r = 0; r < g.results().size(); ++r) {
    const ir::Output src = g.node(g.results()[r]).inputs[0];
    const std::size_t v = index_.at({src.node, src.port});
    result_values_.push_back(v);
    if (values_[v].place != ValueSlot::Place::output || values_[v].index != r)
      copies_.emplace_back(v, r);
  }
}

template <class T, class Lowering, class DataFlow>
std::vector<ir::TensorType> Program<T, Lowering, DataFlow>::value_types(
    std::span<const Shape> input_shapes, std::vector<std::optional<ir::Graph<T>>>& bodies) const {
  std::vector<ir::TensorType> types(values_.size());
  for (std::size_t v = 0; v < values_.size(); ++v) types[v] = values_[v].type;
  if (!dynamic_) return types;
  const ir::Graph<T>& g = *graph_;
  for (std::size_t i = 0; i < input_types_.size(); ++i)
    types[index_.at({g.parameters()[i], 0})] = {input_types_[i].type, input_shapes[i]};
  for (std::size_t i = 0; i < steps_.size(); ++i) {
    const auto& n = g.node(steps_[i].node);
    std::vector<ir::TensorType> in;
    for (std::size_t v : steps_[i].inputs) in.push_back(types[v]);
    std::vector<ir::TensorType> out;
    if (const auto* sg = std::get_if<ir::Subgraph<T>>(&n.op)) {
      ir::Graph<T> body = passes::with_input_types(*sg->body, in);
      for (ir::NodeId r : body.results()) out.push_back(body.type(body.node(r).inputs[0]));
      if (steps_[i].kind == StepKind::kernel_per_shape || steps_[i].kernel)
        bodies[i] = std::move(body);
    } else {
      out = ir::infer_types<T>(n.op, in, n.describe());
    }
    for (std::size_t k = 0; k < out.size(); ++k)
      types[steps_[i].outputs[k]] = resolved(out[k], in, n);
  }
  return types;
}

template <class T, class Lowering, class DataFlow>
ir::TensorType Program<T, Lowering, DataFlow>::resolved(ir::TensorType t,
                                                        std::span<const ir::TensorType> in,
                                                        const ir::Node<T>& n) {
  if (t.shape.is_static()) return t;
  if (!in.empty() && in[0].shape.rank() == t.shape.rank()) {
    std::vector<Dim> dims(t.shape.begin(), t.shape.end());
    for (std::size_t a = 0; a < dims.size(); ++a)
      if (dims[a] == dynamic) dims[a] = in[0].shape[a];
    t.shape = Shape(std::move(dims));
    if (t.shape.is_static()) return t;
  }
  raise("snippets.program.dynamic_shape",
        n.describe() + " gives " + t.to_string() +
            " for these input shapes; a Program needs every value's shape before it runs (a "
            "dynamic dimension of an Opaque's declared output takes the extent of the same axis "
            "of its first input, when the ranks match): declare the output's shape");
}

template <class T, class Lowering, class DataFlow>
std::shared_ptr<const typename Program<T, Lowering, DataFlow>::Plan>
Program<T, Lowering, DataFlow>::make_plan(std::span<const Shape> input_shapes) const {
  auto plan = std::make_shared<Plan>();
  plan->values = values_;
  std::vector<std::optional<ir::Graph<T>>> bodies(steps_.size());
  const std::vector<ir::TensorType> types = value_types(input_shapes, bodies);
  for (std::size_t v = 0; v < values_.size(); ++v) {
    ValueSlot& s = plan->values[v];
    s.type = types[v];
    s.bytes = s.type.shape.element_count() * static_cast<std::int64_t>(size_of(s.type.type));
  }
  std::vector<BufferRequest> requests = lifetimes_;
  for (std::size_t i = 0; i < requests.size(); ++i)
    requests[i].bytes = plan->values[arena_values_[i]].bytes;
  const MemoryPlan memory = plan_memory(requests);
  plan->arena_bytes = memory.total_bytes;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    plan->values[arena_values_[i]].index = static_cast<std::size_t>(memory.offsets[i]);
    plan->unplanned_bytes +=
        (requests[i].bytes + memory.alignment - 1) / memory.alignment * memory.alignment;
  }
  for (const auto& [view, viewed] : views_) plan->values[view].index = plan->values[viewed].index;
  for (std::size_t v : result_values_) plan->outputs.push_back(plan->values[v].type);
  plan->kernels.resize(steps_.size());
  plan->configs.resize(steps_.size());
  plan->notes.resize(steps_.size());
  for (std::size_t i = 0; i < steps_.size(); ++i) {
    const Step& step = steps_[i];
    if (!bodies[i]) continue;
    if (step.kind == StepKind::kernel) {
      if (!step.kernel->is_dynamic()) continue;
      std::vector<Shape> shapes;
      for (std::size_t v : step.inputs) shapes.push_back(plan->values[v].type.shape);
      try { // a kernel that cannot run these shapes (outputs of two shapes) is compiled for them
        plan->configs[i] = step.kernel->configure(shapes);
        const auto out = step.kernel->output_shapes(*plan->configs[i]);
        for (std::size_t k = 0; k < out.size(); ++k)
          if (out[k] != plan->values[step.outputs[k]].type.shape) plan->configs[i].reset();
      } catch (const Error&) {
        plan->configs[i].reset();
      }
      if (plan->configs[i]) continue;
    } else if (step.kind != StepKind::kernel_per_shape) {
      continue;
    }
    if constexpr (CodeGenerator<T>) { // a backend without one has no kernel steps
      const auto& n = graph_->node(step.node);
      std::string why;
      plan->kernels[i] = compile_body(*bodies[i], n, why);
      if (why.empty()) continue;
      plan->kernels[i].reset();
      plan->notes[i] =
          describe_subgraph(n) + " runs on the reference path for these shapes: " + why;
    }
  }
  return plan;
}

template <class T, class Lowering, class DataFlow>
void Program<T, Lowering, DataFlow>::prepare_steps() {
  const ir::Graph<T>& g = *graph_;
  for (ir::NodeId id : order_) {
    const auto& n = g.node(id);
    if (ir::is<ir::Result>(n.op) || is_source(n.op)) continue;
    Step step;
    step.node = id;
    for (const ir::Output& o : n.inputs) step.inputs.push_back(index_.at({o.node, o.port}));
    for (std::uint32_t p = 0; p < n.outputs.size(); ++p) step.outputs.push_back(index_.at({id, p}));
    if (const auto* sg = std::get_if<ir::Subgraph<T>>(&n.op); sg && !opt_->reference_only) {
      if constexpr (CodeGenerator<T>) // a backend without a code generator: all reference
        prepare_kernel(step, n, *sg);
    } else if (runs_on_host(g, n)) {
      step.kind = StepKind::host;
    } else if (const auto* op = std::get_if<ir::Opaque>(&n.op)) {
      step.kind = StepKind::opaque;
      if (!opt_->opaque.count(op->type_name) && !opt_->reference.opaque.count(op->type_name))
        raise("snippets.program.opaque_without_kernel",
              n.describe() + " (type '" + op->type_name +
                  "') has no implementation; register an OpaqueKernel in "
                  "ProgramOptions::opaque (or a reference::OpaqueFn in ProgramOptions::reference)");
    }
    steps_.push_back(std::move(step));
  }
}

template <class T, class Lowering, class DataFlow>
std::optional<CompiledKernel>
Program<T, Lowering, DataFlow>::compile_body(const ir::Graph<T>& body, const ir::Node<T>& n,
                                             std::string& why, std::string* error_id) const {
  try {
    CompileOptions co = opt_->compile;
    if (co.name.empty()) co.name = n.name; // dumps, perf maps, reports use it
    CompiledKernel k = compile_cached<T, Lowering, DataFlow>(body, co, opt_->cache);
    if (!k.signature().runnable) why = "its kernel has no code this host executes";
    return k;
  } catch (const Error& e) {
    if (!falls_back(e)) throw;
    why = e.what();
    if (error_id) *error_id = e.id();
    return std::nullopt;
  }
}

template <class T, class Lowering, class DataFlow>
std::string Program<T, Lowering, DataFlow>::describe_subgraph(const ir::Node<T>& n) {
  std::string ops;
  for (const auto& name : std::get<ir::Subgraph<T>>(n.op).absorbed)
    ops.append(ops.empty() ? "" : " ").append(name);
  return "Subgraph '" + n.name + "' [" + ops + "]";
}

template <class T, class Lowering, class DataFlow>
void Program<T, Lowering, DataFlow>::prepare_kernel(Step& step, const ir::Node<T>& n,
                                                    const ir::Subgraph<T>& sg) {
  std::string why, id;
  step.kernel = compile_body(*sg.body, n, why, &id); // a recording backend's kernel: kept
  if (why.empty()) {
    step.kind = StepKind::kernel;
  } else if (id == "snippets.compile.dynamic_matmul" || id == "snippets.compile.dynamic_layout" ||
             id == "snippets.compile.dynamic_reduce" || id == "snippets.compile.dynamic_rank") {
    // compile() takes this body with static shapes only: one kernel per set of shapes
    step.kind = StepKind::kernel_per_shape;
    step.note = describe_subgraph(n) + " is compiled for each set of input shapes: " + why;
  } else {
    step.note = describe_subgraph(n) + " runs on the reference path: " + why;
  }
}

template <class T, class Lowering, class DataFlow>
void Program<T, Lowering, DataFlow>::run_step(std::size_t i, const Plan& plan,
                                              std::span<const ConstTensorView> in,
                                              std::span<const TensorView> out,
                                              const RunOptions& run_opt) const {
  const Step& step = steps_[i];
  const auto& n = graph_->node(step.node);
  if (plan.kernels[i]) return plan.kernels[i]->run(in, out, run_opt);
  if (plan.configs[i]) {
    std::vector<const void*> ins;
    std::vector<void*> outs;
    for (const ConstTensorView& v : in) ins.push_back(v.data);
    for (const TensorView& v : out) outs.push_back(v.data);
    return step.kernel->run_configured(*plan.configs[i], ins.data(), outs.data(), run_opt);
  }
  if (step.kind == StepKind::kernel && plan.notes[i].empty())
    return step.kernel->run(in, out, run_opt);
  if (step.kind == StepKind::host) return detail::run_host_step(n.op, in[0], out[0]);
  if (step.kind == StepKind::opaque) {
    const auto it = opt_->opaque.find(std::get<ir::Opaque>(n.op).type_name);
    if (it != opt_->opaque.end()) return it->second(in, out);
  }
  std::vector<reference::Values> args;
  for (const ConstTensorView& v : in) {
    reference::Values x{v.type, v.shape, std::vector<double>(v.shape.element_count())};
    for (std::size_t i = 0; i < x.v.size(); ++i)
      x.v[i] = decode(v.type, static_cast<const std::byte*>(v.data) + i * size_of(v.type));
    args.push_back(std::move(x));
  }
  const auto results = reference::detail::eval_node<T>(n, args, opt_->reference);
  for (std::size_t k = 0; k < out.size(); ++k)
    for (std::size_t i = 0; i < results[k].v.size(); ++i)
      encode(out[k].type, results[k].v[i],
             static_cast<std::byte*>(out[k].data) + i * size_of(out[k].type));
}

} // namespace snippets
