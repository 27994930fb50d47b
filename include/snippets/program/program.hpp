// SPDX-License-Identifier: Apache-2.0
// snippets/program/program.hpp: Program, a whole model compiled for execution.
//
//   snippets::Program<> program(model, {.opaque = {{"MatMul", my_matmul}}}); // DefaultTraits
//   snippets::Program<MyTraits, MyLowering, MyDataFlow> mine(model); // pipelines of your own
//   auto ctx = program.make_context();                  // one per thread or stream
//   program.run(ctx, inputs, outputs);                  // views on the caller's buffers
//
// Construction tokenizes the model (passes/tokenize.hpp), compiles every Subgraph into a JIT
// kernel with the Program's pipelines (compile<T, Lowering, DataFlow>, through a KernelCache,
// so equal Subgraphs compiled the same way share one kernel), orders the steps
// topologically and plans the intermediate buffers (support/memory_plan.hpp): two intermediates
// share memory when their lifetimes do not overlap. Each step runs as
//  - a kernel: a Subgraph's CompiledKernel;
//  - opaque: an Opaque op through the OpaqueKernel registered under its type name (on
//    buffers), or a reference::OpaqueFn (on doubles) when only that is registered;
//  - host: a Reshape, Transpose, Broadcast or Slice outside the kernels, as a copy of its
//    bytes (program/host_steps.hpp: exact for every type, no round trip through double);
//  - reference: any other op, and a Subgraph that failed to compile for this host or whose
//    kernel has no code it can execute (the reason is in Step::note; the kernel, if any, stays
//    in Step::kernel), through the reference interpreter. A backend without a code generator
//    (ReferenceBackend), or ProgramOptions::reference_only, runs every node this way.
// The Program is immutable and may run from many threads at once, each with its own
// ExecutionContext. Inputs, outputs and the model's values are planar with static shapes.
// No output may overlap an input or another output (a model reads its inputs after it has
// written outputs): run() checks it, [snippets.run.overlapping_buffers]. Inputs may overlap.
#pragma once

#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "snippets/compile.hpp"
#include "snippets/default_traits.hpp"
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
  enum class StepKind { kernel, opaque, host, reference };
  struct Step {
    ir::NodeId node = 0; // in graph()
    StepKind kind = StepKind::reference;
    std::optional<CompiledKernel> kernel;
    std::string note;                         // why a Subgraph is not a kernel
    std::vector<std::size_t> inputs, outputs; // value indices
  };
  /// Where a value lives while the program runs.
  struct ValueSlot {
    enum class Place { input, output, arena, constant } place = Place::arena;
    std::size_t index = 0; // input/output position, or offset into the arena / constants
    ir::TensorType type;   // its element type and static shape
    std::int64_t bytes = 0;
  };

  explicit Program(const ir::Graph<T>& model, ProgramOptions<T> opt = {});

  /// The model as it runs: tokenized, Subgraphs in place of the fused ops.
  const ir::Graph<T>& graph() const { return *graph_; }
  std::span<const Step> steps() const { return steps_; }
  std::span<const ValueSlot> values() const { return values_; }
  /// Bytes of intermediate memory an ExecutionContext holds.
  std::int64_t arena_bytes() const { return arena_bytes_; }
  /// Bytes the intermediates would need without reuse.
  std::int64_t unplanned_bytes() const { return unplanned_bytes_; }
  ExecutionContext make_context() const { return ExecutionContext(arena_bytes_); }

  /// Runs the model on the caller's buffers (checked first, like CompiledKernel::run).
  void run(ExecutionContext& ctx, std::span<const ConstTensorView> in,
           std::span<const TensorView> out, const RunOptions& run_opt = {}) const;

  /// Convenience for tests and demos: a fresh context, outputs allocated and returned.
  std::vector<reference::Tensor> run(std::span<const reference::Tensor> in,
                                     const RunOptions& run_opt = {}) const {
    std::vector<ConstTensorView> views;
    for (const auto& t : in) views.push_back({t.type(), t.shape(), t.data()});
    std::vector<reference::Tensor> outs;
    std::vector<TensorView> out_views;
    for (const auto& o : output_types_) outs.emplace_back(o.type, o.shape);
    for (auto& t : outs) out_views.push_back({t.type(), t.shape(), t.data()});
    ExecutionContext ctx = make_context();
    run(ctx, views, out_views, run_opt);
    return outs;
  }

private:
  using Key = std::pair<ir::NodeId, std::uint32_t>;

  /// One value per node output; Parameters read the caller's inputs, a value that a Result
  /// returns is written straight into the caller's output, the rest go into the arena.
  void plan_values();

  static std::size_t position(const std::vector<ir::NodeId>& ids, ir::NodeId id) {
    return static_cast<std::size_t>(std::find(ids.begin(), ids.end(), id) - ids.begin());
  }

  static std::optional<std::size_t> first_result(const ir::Graph<T>& g, ir::Output o) {
    for (const ir::Use& u : g.users(o))
      if (ir::is<ir::Result>(g.node(u.node).op)) return position(g.results(), u.node);
    return std::nullopt;
  }

  void prepare_steps();

  /// Compiles a Subgraph's kernel, or notes why it runs on the reference path.
  void prepare_kernel(Step& step, const ir::Node<T>& n, const ir::Subgraph<T>& sg);

  /// A Subgraph runs on the reference path when the kernel cannot be built (what it holds,
  /// this host, a bug of ours); a malformed SNIPPETS_* variable or option, or a dump that
  /// cannot be written, is the caller's to fix, and is raised as compile() raises it.
  static bool falls_back(const Error& e) {
    const std::string_view id = e.id();
    if (id == "snippets.compile.bad_option") return false;
    return id.starts_with("snippets.compile.") || id.starts_with("snippets.canonicalize.") ||
           id == "snippets.isa.unsupported_host" || id == "snippets.internal.assert";
  }

  void run_step(const Step& step, std::span<const ConstTensorView> in,
                std::span<const TensorView> out, const RunOptions& run_opt) const;

  std::shared_ptr<const ProgramOptions<T>> opt_;
  std::shared_ptr<const ir::Graph<T>> graph_;
  std::vector<ir::NodeId> order_;
  std::vector<ValueSlot> values_;
  std::map<Key, std::size_t> index_;
  std::vector<Step> steps_;
  std::shared_ptr<const std::vector<std::byte>> constants_;
  std::vector<ir::TensorType> input_types_, output_types_;
  std::vector<std::pair<std::size_t, std::size_t>> copies_; // value -> output position
  std::int64_t arena_bytes_ = 0, unplanned_bytes_ = 0;
};

// The members below are defined out of the class, so not inline: snippets::prebuilt holds them
// for DefaultTraits and the default pipelines (snippets/extern_templates.hpp), and a program
// that links it compiles none of them again.

template <class T, class Lowering, class DataFlow>
Program<T, Lowering, DataFlow>::Program(const ir::Graph<T>& model, ProgramOptions<T> opt)
    : opt_(std::make_shared<const ProgramOptions<T>>(std::move(opt))) {
  for (ir::NodeId id = 0; id < model.size(); ++id) {
    const auto& n = model.node(id);
    for (const auto& t : n.outputs)
      if (!t.shape.is_static())
        raise("snippets.program.dynamic_shape",
              n.describe() + " has shape " + t.shape.to_string() +
                  "; a Program needs static shapes (compile a Subgraph body directly instead)");
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
  graph_ = std::make_shared<const ir::Graph<T>>(opt_->tokenized || opt_->reference_only
                                                    ? passes::remove_dead_nodes(model)
                                                    : passes::tokenize(model, opt_->tokenize));
  plan_values();
  prepare_steps();
}

template <class T, class Lowering, class DataFlow>
void Program<T, Lowering, DataFlow>::run(ExecutionContext& ctx, std::span<const ConstTensorView> in,
                                         std::span<const TensorView> out,
                                         const RunOptions& run_opt) const {
  check_views(in, input_types_, "input", "program");
  check_views(out, output_types_, "output", "program");
  check_overlap(
      in, out, [](std::size_t) { return false; }, "program");
  if (ctx.bytes() < arena_bytes_)
    raise("snippets.program.context_mismatch",
          std::string("the execution context holds ") + std::to_string(ctx.bytes()) +
              " bytes but this "
              "program needs " +
              std::to_string(arena_bytes_) + "; use program.make_context()");
  auto address = [&](std::size_t v) -> std::byte* {
    const ValueSlot& s = values_[v];
    switch (s.place) {
    case ValueSlot::Place::input:
      return static_cast<std::byte*>(const_cast<void*>(in[s.index].data));
    case ValueSlot::Place::output: return static_cast<std::byte*>(out[s.index].data);
    case ValueSlot::Place::constant: return const_cast<std::byte*>(constants_->data()) + s.index;
    default: return ctx.arena() + s.index;
    }
  };
  for (const Step& step : steps_) {
    std::vector<ConstTensorView> step_in;
    std::vector<TensorView> step_out;
    for (std::size_t v : step.inputs)
      step_in.push_back({values_[v].type.type, values_[v].type.shape, address(v)});
    for (std::size_t v : step.outputs)
      step_out.push_back({values_[v].type.type, values_[v].type.shape, address(v)});
    run_step(step, step_in, step_out, run_opt);
  }
  for (const auto& [from, to] : copies_) // Results that repeat a value, or read an input
    if (values_[from].bytes > 0) std::memcpy(out[to].data, address(from), values_[from].bytes);
}

template <class T, class Lowering, class DataFlow>
void Program<T, Lowering, DataFlow>::plan_values() {
  const ir::Graph<T>& g = *graph_;
  order_ = g.topological_order();
  std::vector<BufferRequest> requests;
  std::vector<std::size_t> requested; // value index of each request
  std::vector<std::byte> constants;
  std::map<Key, std::size_t> step_of; // producing step of each arena value
  std::size_t step = 0;
  for (ir::NodeId id : order_) {
    const auto& n = g.node(id);
    if (ir::is<ir::Result>(n.op)) continue;
    const bool runs =
        !ir::is<ir::Parameter>(n.op) && !ir::is<ir::Constant>(n.op) && !ir::is<ir::Scalar>(n.op);
    for (std::uint32_t p = 0; p < n.outputs.size(); ++p) {
      ValueSlot s;
      s.type = n.outputs[p];
      s.bytes = s.type.shape.element_count() * static_cast<std::int64_t>(size_of(s.type.type));
      index_[{id, p}] = values_.size();
      if (ir::is<ir::Parameter>(n.op)) {
        s.place = ValueSlot::Place::input;
        s.index = position(g.parameters(), id);
      } else if (!runs) {
        s.place = ValueSlot::Place::constant;
        s.index = constants.size();
        const auto v = reference::detail::eval_node<T>(n, {}, opt_->reference)[0];
        constants.resize(constants.size() + static_cast<std::size_t>(s.bytes));
        for (std::size_t i = 0; i < v.v.size(); ++i)
          encode(s.type.type, v.v[i], constants.data() + s.index + i * size_of(s.type.type));
      } else if (const auto r = first_result(g, {id, p}); r) {
        s.place = ValueSlot::Place::output;
        s.index = *r;
      } else {
        s.place = ValueSlot::Place::arena;
        requests.push_back({s.bytes, step, step});
        requested.push_back(values_.size());
        step_of[{id, p}] = requests.size() - 1;
      }
      values_.push_back(s);
    }
    if (runs) ++step;
  }
  constants_ = std::make_shared<const std::vector<std::byte>>(std::move(constants));
  // lifetimes end at the last reading step
  step = 0;
  for (ir::NodeId id : order_) {
    const auto& n = g.node(id);
    if (ir::is<ir::Result>(n.op) || ir::is<ir::Parameter>(n.op) || ir::is<ir::Constant>(n.op) ||
        ir::is<ir::Scalar>(n.op))
      continue;
    for (const ir::Output& o : n.inputs)
      if (const auto it = step_of.find({o.node, o.port}); it != step_of.end())
        requests[it->second].end = std::max(requests[it->second].end, step);
    ++step;
  }
  const MemoryPlan plan = plan_memory(requests);
  arena_bytes_ = plan.total_bytes;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    values_[requested[i]].index = static_cast<std::size_t>(plan.offsets[i]);
    unplanned_bytes_ += (requests[i].bytes + plan.alignment - 1) / plan.alignment * plan.alignment;
  }
  for (ir::NodeId p : g.parameters()) input_types_.push_back(g.node(p).outputs[0]);
  for (std::size_t r = 0; r < g.results().size(); ++r) {
    const ir::Output src = g.node(g.results()[r]).inputs[0];
    output_types_.push_back(g.type(src));
    const ValueSlot& s = values_[index_.at({src.node, src.port})];
    if (s.place != ValueSlot::Place::output || s.index != r)
      copies_.emplace_back(index_.at({src.node, src.port}), r);
  }
}

template <class T, class Lowering, class DataFlow>
void Program<T, Lowering, DataFlow>::prepare_steps() {
  const ir::Graph<T>& g = *graph_;
  for (ir::NodeId id : order_) {
    const auto& n = g.node(id);
    if (ir::is<ir::Result>(n.op) || ir::is<ir::Parameter>(n.op) || ir::is<ir::Constant>(n.op) ||
        ir::is<ir::Scalar>(n.op))
      continue;
    Step step;
    step.node = id;
    for (const ir::Output& o : n.inputs) step.inputs.push_back(index_.at({o.node, o.port}));
    for (std::uint32_t p = 0; p < n.outputs.size(); ++p) step.outputs.push_back(index_.at({id, p}));
    if (const auto* sg = std::get_if<ir::Subgraph<T>>(&n.op); sg && !opt_->reference_only) {
      if constexpr (CodeGenerator<T>) // a backend without a code generator: all reference
        prepare_kernel(step, n, *sg);
    } else if (CodeGenerator<T> && detail::host_movable(n.op) && !opt_->reference_only &&
               g.type(n.inputs[0]).type == n.outputs[0].type) {
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
void Program<T, Lowering, DataFlow>::prepare_kernel(Step& step, const ir::Node<T>& n,
                                                    const ir::Subgraph<T>& sg) {
  try {
    CompileOptions co = opt_->compile;
    if (co.name.empty()) co.name = n.name; // dumps, perf maps, reports use it
    step.kernel = compile_cached<T, Lowering, DataFlow>(*sg.body, co, opt_->cache);
    step.kind = StepKind::kernel;
    if (!step.kernel->signature().runnable) { // a recording backend's kernel: kept to inspect
      step.kind = StepKind::reference;
      step.note = std::string("Subgraph '") + n.name +
                  "' runs on the reference path: its kernel has no code this host executes";
    }
  } catch (const Error& e) {
    if (!falls_back(e)) throw;
    std::string ops;
    for (const auto& name : sg.absorbed) ops.append(ops.empty() ? "" : " ").append(name);
    step.note = std::string("Subgraph '") + n.name + "' [" + ops +
                "] runs on the reference path: " + e.what();
  }
}

template <class T, class Lowering, class DataFlow>
void Program<T, Lowering, DataFlow>::run_step(const Step& step, std::span<const ConstTensorView> in,
                                              std::span<const TensorView> out,
                                              const RunOptions& run_opt) const {
  const auto& n = graph_->node(step.node);
  if (step.kind == StepKind::kernel) return step.kernel->run(in, out, run_opt);
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
