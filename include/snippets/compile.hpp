// SPDX-License-Identifier: Apache-2.0
// snippets/compile.hpp: compile() turns a Subgraph body into one JIT kernel.
//
//   auto kernel = snippets::compile(body);                  // the backend's best variant here
//   auto kernel = snippets::compile<MyTraits, MyPipeline>(body, {.isa = MyIsa::narrow});
//
// Steps: run the data-flow passes on the body (DefaultDataFlow: layouts, scalars,
// PowerStatic, f32 compute), check it (compile_checks.hpp: ops the traits can fuse, input and
// output types the traits read and write, at most Traits::data_pointer_registers arguments),
// convert it to a Linear IR, run the lowering Pipeline (passes/default_pipelines.hpp unless
// you pass your own), emit with the backend's code generator for the chosen variant
// (T::emit, target/codegen.hpp; the backend is the traits type of the body). The kernel's
// signature is the body's: its input and output shapes, or their physical shapes for inputs
// with a non-planar Layout. A Transpose that is the only consumer of a body input is folded
// into how the kernel reads that input (FuseTransposeIntoParameter): the input keeps the
// user's shape and the kernel gathers along strided dimensions. A Transpose that keeps the
// innermost axis innermost right before an output is folded into the store
// (FuseTransposeIntoResult). A body that cannot be compiled throws snippets::Error
// ([snippets.compile.*]) naming the op and the cause; nothing is left behind. A static body
// whose outputs are all empty gets a kernel without code.
//
// Dynamic shapes: a body whose shapes have `dynamic` dimensions compiles once into a
// shape-agnostic kernel (planar inputs, rank up to max_dynamic_rank) that runs any shapes
// fitting the partial ones; see runtime/runtime_config.hpp. compilations() counts the kernels
// this process has compiled (a dynamic kernel's run-time variants included).
//
// Debugging (CompileOptions::name and ::debug, or the SNIPPETS_* variables of
// debug/options.hpp): IR dumps after chosen passes, code and disassembly files, perf map
// entries, performance counters and the segfault detector. All are off by default, and a
// kernel compiled without them is the same code as before they existed.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <optional>

#include "snippets/compile_checks.hpp"
#include "snippets/debug/disassembler.hpp"
#include "snippets/debug/insert_perf_counters.hpp"
#include "snippets/debug/options.hpp"
#include "snippets/debug/pass_dumper.hpp"
#include "snippets/debug/perf_counters.hpp"
#include "snippets/debug/perf_map.hpp"
#include "snippets/debug/segfault_detector.hpp"
#include "snippets/ir/graph.hpp"
#include "snippets/passes/convert_to_linear_ir.hpp"
#include "snippets/passes/default_pipelines.hpp"
#include "snippets/passes/lower_brgemm.hpp"
#include "snippets/runtime/compiled_kernel.hpp"
#include "snippets/target/codegen.hpp"

namespace snippets {

/// One stage of compile() and its wall time (CompileOptions::timings): DataFlow (all data-flow
/// passes), ToLinearIR (checks and conversion), each lowering pass by name, Emit (machine code
/// for every variant).
struct CompileTiming {
  std::string_view stage;
  std::chrono::nanoseconds time{};
};

struct CompileOptions {
  /// The backend's variant to compile for (the x86-64 backend: its Isa, avx2 or avx512);
  /// default: the backend's default_variant(), the best this host runs.
  std::optional<VariantChoice> isa;
  bool fma = true; // contract Multiply -> Add
  int unroll = 4;  // innermost loop body copies per iteration (1: no unrolling)
  /// Outputs of at least this many bytes also get a variant with non-temporal stores, used
  /// when the output buffers are vector-aligned (0: never)...
  std::int64_t streaming_threshold_bytes = std::int64_t{16} << 20;
  /// ...if the kernel is bound by memory: its innermost loops that store outputs have at most
  /// this many bytes of code per vector for each full-size tensor it reads or writes (negative:
  /// no limit). On this project's Zen 5 non-temporal stores made Add and Exp kernels 2-12%
  /// faster at 64 MiB (13 and 55 bytes per stream) and Sigmoid, Swish and GELU ones 10-50%
  /// slower (78-89 bytes): a loop that computes between its stores hides the ordinary
  /// stores' cost, and streaming ones then only stall it.
  int streaming_max_code_bytes = 64;
  /// bf16 results use the target's own conversion where it has one (T::native_bf16; x86-64:
  /// VCVTNEPS2BF16 of AVX512_BF16). False: integer rounding everywhere; the bits are the same,
  /// tests compare the two.
  bool native_bf16 = true;
  bool verify = false; // run the LIR verifier after every pass
  /// Buffers between the loops of a row-by-row kernel (reductions, Softmax) share memory and
  /// data pointers where they can; false gives each its own (debugging, AllocateBuffers).
  bool optimize_buffers = true;
  /// Receives the pass names in the order they ran, data flow first (tests, debugging).
  std::vector<std::string_view>* trace = nullptr;
  /// Receives where the time went, stage by stage (compile latency reports).
  std::vector<CompileTiming>* timings = nullptr;
  /// Names the kernel in dumps, perf maps, counter reports and fault reports (a Program gives
  /// each kernel its Subgraph's name). Empty: "kernel<N>", N counting compiles in the process.
  std::string name;
  /// Dumps, disassembly files, perf map, counters, segfault detector; an unset field follows
  /// its environment variable (debug/options.hpp).
  debug::DebugOptions debug;
  /// Generate code for `isa` even when this host cannot execute it, to inspect or disassemble
  /// it (tests of AVX-512 code on an AVX2 host). run() refuses such a kernel
  /// ([snippets.run.emit_only]) unless the host can execute it after all.
  bool emit_only = false;
};

namespace detail {

/// CompileOptions::isa as T's variant, or T's default.
template <class T> typename T::Variant chosen_variant(const CompileOptions& opt) {
  using V = typename T::Variant;
  return opt.isa ? opt.isa->template as<V>(T::name) : T::default_variant();
}

inline std::atomic<std::uint64_t>& compilation_counter() {
  static std::atomic<std::uint64_t> n{0};
  return n;
}

/// A static body whose outputs are all empty (an empty batch, a product without rows or
/// columns) needs no code: compile() gives it a kernel that checks its buffers and returns.
template <class T> bool writes_nothing(const ir::Graph<T>& body) {
  if (body.results().empty() || has_dynamic_shapes(body)) return false;
  for (ir::NodeId r : body.results())
    if (body.type(body.node(r).inputs[0]).shape.element_count() != 0) return false;
  return true;
}

/// The signature of writes_nothing()'s kernel: the buffers in memory order, no work.
template <class T>
KernelSignature empty_signature(const ir::Graph<T>& body, typename T::Variant isa) {
  KernelSignature sig;
  for (ir::NodeId p : body.parameters()) {
    const auto& param = std::get<ir::Parameter>(body.node(p).op);
    const Shape& s = param.output.shape;
    sig.inputs.push_back(
        {param.output.type, param.layout.is_planar() ? s : param.layout.physical_shape(s)});
  }
  for (ir::NodeId r : body.results()) {
    ir::TensorType t = body.type(body.node(r).inputs[0]);
    if (const Layout& l = std::get<ir::Result>(body.node(r).op).layout; !l.is_planar())
      t.shape = l.physical_shape(t.shape);
    sig.outputs.push_back(t);
  }
  sig.domain = {0};
  sig.outer_stride_bytes.assign(sig.inputs.size() + sig.outputs.size(), 0);
  sig.in_place.assign(sig.inputs.size(), false);
  sig.isa = std::string(T::variant_name(isa));
  sig.vector_bytes = T::registers(isa).lanes * 4;
  return sig;
}

/// Per input: whether an output may share its buffer (KernelSignature::in_place). Yes when every
/// expression works element by element (no product, reduction, row buffer or Softmax over rows),
/// every output is written in planar order and the input is read in planar order; run() then
/// requires the same shape (not broadcast) and element size.
template <class T> std::vector<bool> in_place_inputs(ir::LinearIR<T>& lir) {
  std::vector<bool> in_place(lir.num_inputs, false);
  for (auto& e : lir) {
    const bool per_element = std::visit(
        [](const auto& tag) {
          using Tag = std::decay_t<decltype(tag)>;
          return !(std::is_same_v<Tag, ir::Brgemm> || std::is_same_v<Tag, ir::BrgemmCopyB> ||
                   std::is_same_v<Tag, ir::SoftmaxRows> || std::is_same_v<Tag, ir::ReduceInit> ||
                   std::is_same_v<Tag, ir::Buffer>);
        },
        e->op);
    const bool transposed_store =
        std::holds_alternative<ir::Result>(e->op) && !e->in_desc(0).layout.empty();
    if (!per_element || transposed_store) return std::vector<bool>(lir.num_inputs, false);
    if (std::holds_alternative<ir::Parameter>(e->op))
      in_place.at(e->data_index) = e->out_desc(0).layout.empty();
  }
  return in_place;
}

/// What the executor needs to know about the lowered kernel. Inputs and outputs keep the
/// body's shapes (rank alignment does not change memory) unless an input has a non-planar
/// layout the body takes: then the buffers have the physical shapes of the canonical body.
/// An input read through its layout (`strided_read`) has its layout's physical shape; one
/// whose Transpose the data flow folded into it is still planar in `body`: the user's shape.
template <class T>
KernelSignature describe(const ir::Graph<T>& body, const ir::Graph<T>& canonical,
                         ir::LinearIR<T>& lir, typename T::Variant isa) {
  KernelSignature sig;
  bool physical = false;
  for (ir::NodeId p : body.parameters()) {
    const auto& param = std::get<ir::Parameter>(body.node(p).op);
    physical = physical || (!param.layout.is_planar() && !param.strided_read);
  }
  for (std::size_t i = 0; i < body.parameters().size(); ++i) {
    const auto& p = body.node(body.parameters()[i]);
    const auto& param = std::get<ir::Parameter>(p.op);
    if (param.layout.is_planar())
      sig.inputs.push_back(p.outputs[0]);
    else if (param.strided_read)
      sig.inputs.push_back({param.output.type, param.layout.physical_shape(param.output.shape)});
    else
      sig.inputs.push_back(canonical.node(canonical.parameters()[i]).outputs[0]);
  }
  const ir::Graph<T>& out = physical ? canonical : body;
  for (ir::NodeId r : out.results()) {
    ir::TensorType t = out.type(out.node(r).inputs[0]);
    if (const Layout& l = std::get<ir::Result>(out.node(r).op).layout; !l.is_planar())
      t.shape = l.physical_shape(t.shape); // a Result written transposed
    sig.outputs.push_back(t);
  }
  sig.in_place = in_place_inputs(lir);
  sig.domain = lir.domain;
  sig.buffer_pointers = lir.buffer_pointers;
  sig.scratch_bytes = lir.scratch_bytes;
  sig.isa = std::string(T::variant_name(isa));
  sig.vector_bytes = T::registers(isa).lanes * 4;
  for (const auto& l : lir.loops().loops()) // a flat domain splits in main-loop steps
    if (l.runtime_work_amount && lir.domain.size() == 1) sig.chunk_unit = l.increment;
  const std::size_t n_args = lir.num_inputs + lir.num_outputs;
  sig.outer_stride_bytes.resize(n_args);
  if (passes::has_brgemm(lir)) { // the parallel loop's ports say how far a chunk moves
    for (const auto& l : lir.loops().loops())
      if (l.runtime_work_amount) {
        sig.chunk_unit = l.increment;
        for (const auto& p : l.ports)
          if (p.data_index < n_args)
            sig.outer_stride_bytes[p.data_index] = p.ptr_increment / l.increment * p.element_size;
      }
    return sig;
  }
  std::vector<std::vector<Dim>> shapes(n_args);
  for (auto& e : lir) {
    if (!passes::holds_io(*e)) continue;
    const bool in = std::holds_alternative<ir::Parameter>(e->op);
    const auto& desc = in ? e->out_desc(0) : e->in_desc(0);
    const auto bytes = static_cast<std::int64_t>(size_of(lir.arg_types.at(e->data_index)));
    if (lir.dynamic)
      shapes[e->data_index] = desc.shape;
    else
      sig.outer_stride_bytes[e->data_index] = passes::stride_along(desc, 0) * bytes;
  }
  if (!lir.dynamic) return sig;
  DynamicLayout dyn;
  dyn.args = std::move(shapes);
  dyn.inputs = lir.num_inputs;
  dyn.lanes = T::registers(isa).lanes;
  for (std::size_t a = 0; a < n_args; ++a)
    dyn.element_bytes.push_back(static_cast<std::int64_t>(size_of(lir.arg_types.at(a))));
  for (const auto& t : sig.inputs) dyn.own_rank.push_back(t.shape.rank());
  for (const auto& t : sig.outputs) dyn.own_rank.push_back(t.shape.rank());
  for (const auto& l : lir.loops().loops()) // the main loop's step
    if (l.dim + 1 == lir.domain.size() && !l.is_tail) dyn.step = l.increment;
  sig.dynamic = std::move(dyn);
  return sig;
}

/// Streaming stores pay off once the outputs are much larger than the caches, and need every
/// full-vector store aligned: rows must be whole vectors (or the domain flat). Only f32 outputs
/// are written with them (a converting store writes part of a vector), and only by kernels
/// bound by memory (CompileOptions::streaming_max_code_bytes: `code`'s bytes per vector in the
/// loops that store outputs, per full-size stream: the outputs and the inputs of their shape).
inline bool use_streaming(const KernelSignature& sig, const KernelCode& code,
                          const CompileOptions& opt) {
  const std::int64_t threshold_bytes = opt.streaming_threshold_bytes;
  if (threshold_bytes <= 0 || sig.outputs.empty()) return false;
  for (const auto& o : sig.outputs)
    if (o.type != ElementType::f32) return false;
  if (opt.streaming_max_code_bytes >= 0) {
    std::size_t streams = sig.outputs.size();
    for (const auto& in : sig.inputs)
      if (in.shape == sig.outputs.front().shape) ++streams;
    if (code.store_loop_bytes_per_vector >
        static_cast<double>(opt.streaming_max_code_bytes) * static_cast<double>(streams))
      return false;
  }
  if (sig.dynamic) return true; // run() decides per shape
  std::int64_t elements = 1;
  for (Dim d : sig.domain) elements *= d;
  const std::int64_t out_bytes = elements * 4 * static_cast<std::int64_t>(sig.outputs.size());
  const bool rows_aligned =
      sig.domain.size() == 1 || (sig.domain.back() * 4) % sig.vector_bytes == 0;
  return out_bytes >= threshold_bytes && rows_aligned;
}

} // namespace detail

namespace detail {

/// Appends the time since the previous lap to CompileOptions::timings, when it is set.
class StageClock {
public:
  explicit StageClock(std::vector<CompileTiming>* out) : out_(out) {
    if (out_) last_ = std::chrono::steady_clock::now();
  }
  bool enabled() const { return out_ != nullptr; }
  void lap(std::string_view stage) {
    if (!out_) return;
    const auto now = std::chrono::steady_clock::now();
    out_->push_back({stage, now - last_});
    last_ = now;
  }
  /// Starts the next lap now (time spent in between, e.g. writing dumps, is not counted).
  void restart() {
    if (out_) last_ = std::chrono::steady_clock::now();
  }

private:
  std::vector<CompileTiming>* out_;
  std::chrono::steady_clock::time_point last_;
};

/// A lowered kernel and what the debug passes found out about it.
template <class T> struct Lowered {
  ir::LinearIR<T> lir;
  std::vector<passes::CounterRegion<T>> counter_regions; // InsertPerfCounters (cycles mode)
};

/// Checks, conversion to a Linear IR and the lowering pipeline, on a body after data flow.
/// `dumper` writes the LIR after the passes it was asked for.
template <class T, class Lowering>
Lowered<T> lower_canonical(const ir::Graph<T>& body, typename T::Variant isa,
                           const CompileOptions& opt, std::vector<std::string_view>& trace,
                           const debug::ResolvedDebug& dbg, debug::PassDumper& dumper,
                           StageClock& clock) {
  detail::check_body(body);
  ir::LinearIR<T> lir = passes::convert_to_linear_ir(body);
  lir.native_bf16 = opt.native_bf16 && backend_native_bf16<T>(isa);
  const RegisterModel regs = T::registers(isa);
  passes::PassContext<T> ctx;
  ctx.verify = opt.verify;
  ctx.config.lanes = regs.lanes;
  ctx.config.vector_registers = regs.vector_registers;
  ctx.config.fma = opt.fma;
  if (opt.unroll < 1 || opt.unroll > 16)
    raise("snippets.compile.bad_option",
          "CompileOptions::unroll must be in [1, 16], got " + std::to_string(opt.unroll));
  ctx.config.unroll = opt.unroll;
  ctx.config.optimize_buffers = opt.optimize_buffers;
  // the emitters' scratch registers are kept from the allocator (the top ones)
  lir.reserved_vector_registers = T::scratch_registers(std::as_const(lir), isa);
  ctx.config.reserved_vector_registers = lir.reserved_vector_registers;
  ctx.config.gp_registers = regs.gp_registers - static_cast<int>(lir.num_inputs + lir.num_outputs);
  clock.lap("ToLinearIR");
  if (dumper.enabled() || clock.enabled())
    ctx.after_pass = [&, before = trace.size()](std::string_view pass, ir::LinearIR<T>& l) {
      clock.lap(pass);
      if (!dumper.enabled()) return;
      dumper.lir(pass, before + ctx.trace.size(), l);
      clock.restart();
    };
  if (passes::detail::Count<Lowering, passes::LowerBrgemm>::value == 0 && passes::has_brgemm(lir))
    raise("snippets.compile.unsupported_matmul",
          "the body has a MatMul but its lowering pipeline has no LowerBrgemm; keep "
          "passes::BrgemmLowering for such bodies (DefaultLowering selects it with HasMatMul)");
  Lowering::run_unchecked(lir, ctx); // its order was checked where compile() was instantiated
  // last, so no later pass can move the expressions the counter regions point at
  if (dbg.counters == debug::Counters::cycles)
    passes::Pipeline<debug::InsertPerfCounters>{}.run(lir, ctx);
  trace.insert(trace.end(), ctx.trace.begin(), ctx.trace.end());
  if (opt.trace) *opt.trace = trace;
  dumper.finish(trace);
  return {std::move(lir), std::move(ctx.analyses.counter_regions)};
}

/// The data-flow and lowering passes, one per line (KernelDebugInfo::pipeline, dumps).
template <class Lowering, class DataFlow> const std::string& pipeline_text() {
  static const std::string text = "data flow:\n" +
                                  passes::describe<passes::DataFlowPipeline<DataFlow>>() +
                                  "lowering:\n" + passes::describe<Lowering>();
  return text;
}

/// Checks the pipelines' order at compile time (one error naming the pass and the property),
/// and, with `emits`, that the lowering ends with what the code generator reads.
template <class Lowering, class DataFlow, bool emits> consteval bool pipelines_ok() {
  static_assert(passes::detail::is_list<Lowering> || passes::detail::is_select<Lowering>,
                "snippets: a lowering pipeline is a passes::Pipeline<...> or passes::Select<...> "
                "(a single pass: Pipeline<MyPass>)");
  if constexpr (!passes::detail::order_ok<passes::DataFlowPipeline<DataFlow>, passes::Properties<>,
                                          passes::LinearIRNeeds>())
    return false;
  else if constexpr (emits)
    return passes::detail::order_ok<Lowering, passes::Properties<>, passes::EmissionNeeds>();
  else
    return passes::detail::order_ok<Lowering>();
}

/// CompileOptions::name, or "kernel<N>".
inline std::string kernel_name(const CompileOptions& opt) {
  static std::atomic<unsigned> count{0};
  const unsigned n = ++count;
  return opt.name.empty() ? debug::detail::cat("kernel", std::to_string(n)) : opt.name;
}

/// Data flow (with the Body and DataFlow dumps) and lowering.
template <class T, class Lowering, class DataFlow>
Lowered<T> lower_body(const ir::Graph<T>& body, typename T::Variant isa, const CompileOptions& opt,
                      const debug::ResolvedDebug& dbg, const std::string& name,
                      std::optional<ir::Graph<T>>* canonical_out, StageClock& clock) {
  if (has_dynamic_shapes(body)) check_dynamic_body(body);
  debug::PassDumper dumper(dbg.dump, name);
  std::vector<std::string_view> trace;
  if (dumper.enabled()) dumper.body("Body", 0, body);
  clock.restart();
  ir::Graph<T> canonical = passes::DataFlowPipeline<DataFlow>{}.run(body, &trace);
  if (dumper.enabled()) dumper.pipeline(pipeline_text<Lowering, DataFlow>());
  clock.lap("DataFlow");
  if (dumper.enabled()) dumper.body("DataFlow", trace.size(), canonical);
  clock.restart();
  Lowered<T> lowered = lower_canonical<T, Lowering>(canonical, isa, opt, trace, dbg, dumper, clock);
  if (canonical_out) canonical_out->emplace(std::move(canonical));
  return lowered;
}

/// The kernel's name, ISA and counter regions, and the perf map, detector and JIT dump.
template <class T>
std::shared_ptr<debug::KernelDebugInfo> debug_info(const debug::ResolvedDebug& dbg,
                                                   std::string name, typename T::Variant isa,
                                                   const Lowered<T>& lowered) {
  auto info = std::make_shared<debug::KernelDebugInfo>();
  info->name = std::move(name);
  info->isa = std::string(T::variant_name(isa));
  info->counters = dbg.counters;
  info->segfault_detector = dbg.segfault_detector;
  for (const auto& r : lowered.counter_regions)
    info->regions.push_back(
        {r.name, r.parent,
         r.parent < 0 ? 0 : info->regions[static_cast<std::size_t>(r.parent)].depth + 1});
  if (dbg.counters != debug::Counters::off)
    info->totals = std::make_shared<debug::CounterTotals>(info->regions.size());
  return info;
}

inline void publish(const debug::ResolvedDebug& dbg, const CompiledKernel& k,
                    const std::shared_ptr<debug::KernelDebugInfo>& info) {
  if (dbg.segfault_detector) debug::install_segfault_detector();
  if (dbg.counters_from_env) debug::detail::register_for_exit_report(info);
  if (dbg.perf_map)
    for (const bool streaming : {false, true}) {
      const KernelCode& c = k.kernel_code(streaming);
      if (c.empty()) continue;
      const std::string sym = std::string("snippets:") + info->name + (streaming ? ":nt" : "");
      debug::write_perf_map_entry(c.bytes.data(), c.text_bytes, sym);
    }
  if (!dbg.jit_dump.empty()) debug::write_jit_dump(dbg.jit_dump, k);
}

} // namespace detail

/// Runs the front half of compile(): data flow, checks, conversion to a Linear IR and the
/// lowering pipeline for `isa`. Returns the prepared LIR (for dumps, golden tests and custom
/// emission). Honours the dump options (CompileOptions::debug.dump, SNIPPETS_DUMP_LIR).
template <class T, class Lowering = passes::DefaultLowering,
          class DataFlow = passes::DefaultDataFlow>
ir::LinearIR<T> lower(const ir::Graph<T>& body, typename T::Variant isa,
                      const CompileOptions& opt = {}) {
  static_assert(check_code_generator<T>());
  if constexpr (detail::pipelines_ok<Lowering, DataFlow, false>()) {
    const debug::ResolvedDebug dbg = debug::resolve(opt.debug);
    detail::StageClock clock(opt.timings);
    return detail::lower_body<T, Lowering, DataFlow>(body, isa, opt, dbg, detail::kernel_name(opt),
                                                     nullptr, clock)
        .lir;
  } else {
    return {};
  }
}

namespace detail {
template <class T, class Lowering, class DataFlow>
DynamicVariants::Compile variant_compiler(const ir::Graph<T>& body, const CompileOptions& opt,
                                          typename T::Variant isa);

/// The backend's code for `lir`, holding on to the packed MatMul weights the code points at.
template <class T>
KernelCode emit(ir::LinearIR<T>& lir, typename T::Variant isa, const EmitRequest<T>& req) {
  KernelCode code = T::emit(lir, isa, req);
  auto weights = std::make_shared<std::vector<std::shared_ptr<const std::vector<float>>>>();
  for (auto& e : lir)
    if (const auto* b = std::get_if<ir::Brgemm>(&e->op); b && b->b_packed)
      weights->push_back(b->b_packed);
  if (!weights->empty()) code.constants = std::move(weights);
  return code;
}
} // namespace detail

namespace detail {
template <class T, class Lowering, class DataFlow>
CompiledKernel compile_kernel(const ir::Graph<T>& body, const CompileOptions& opt) {
  const typename T::Variant isa = detail::chosen_variant<T>(opt);
  if (!T::runs_here(isa) && !opt.emit_only)
    raise("snippets.isa.unsupported_host",
          "the " + std::string(T::variant_name(isa)) + " variant of the " + std::string(T::name) +
              " backend was requested but this CPU cannot run it; request " +
              std::string(T::variant_name(T::default_variant())) + " or leave it unset");
  const debug::ResolvedDebug dbg = debug::resolve(opt.debug);
  std::string name = detail::kernel_name(opt);
  if (detail::writes_nothing(body)) {
    auto info = std::make_shared<debug::KernelDebugInfo>();
    info->name = std::move(name);
    info->isa = std::string(T::variant_name(isa));
    info->pipeline = detail::pipeline_text<Lowering, DataFlow>();
    detail::compilation_counter().fetch_add(1, std::memory_order_relaxed);
    return CompiledKernel(KernelCode{}, detail::empty_signature(body, isa), KernelCode{}, info);
  }
  std::optional<ir::Graph<T>> canonical;
  detail::StageClock clock(opt.timings);
  detail::Lowered<T> lowered =
      detail::lower_body<T, Lowering, DataFlow>(body, isa, opt, dbg, name, &canonical, clock);
  ir::LinearIR<T>& lir = lowered.lir;
  KernelSignature sig = detail::describe(body, *canonical, lir, isa);
  sig.streaming_min_bytes = opt.streaming_threshold_bytes;
  // no Instrumentation at all unless asked: the plain kernel's code is exactly unchanged
  const Instrumentation<T> instr{dbg.code_map, dbg.segfault_detector, lowered.counter_regions};
  const Instrumentation<T>* use = dbg.code_map ? &instr : nullptr; // implied by the rest
  auto emit = [&](bool streaming) {
    return detail::emit(lir, isa, EmitRequest<T>{.streaming = streaming, .instrumentation = use});
  };
  KernelCode code = emit(false);
  sig.runnable = T::runs_here(isa) && code.fn != nullptr; // a recording backend has no entry
  KernelCode streaming =
      detail::use_streaming(sig, code, opt) && !passes::has_brgemm(lir) ? emit(true) : KernelCode{};
  clock.lap("Emit");
  auto info = detail::debug_info(dbg, std::move(name), isa, lowered);
  info->pipeline = detail::pipeline_text<Lowering, DataFlow>();
  detail::DynamicVariants::Compile variants;
  if (sig.dynamic) variants = detail::variant_compiler<T, Lowering, DataFlow>(body, opt, isa);
  CompiledKernel kernel(std::move(code), std::move(sig), std::move(streaming), info,
                        std::move(variants));
  detail::publish(dbg, kernel, info);
  detail::compilation_counter().fetch_add(1, std::memory_order_relaxed);
  return kernel;
}
} // namespace detail

/// The kernel of `body`, generated by the backend of its traits type T.
template <class T, class Lowering = passes::DefaultLowering,
          class DataFlow = passes::DefaultDataFlow>
CompiledKernel compile(const ir::Graph<T>& body, const CompileOptions& opt = {}) {
  static_assert(check_code_generator<T>()); // one error naming what T lacks, not a cascade
  if constexpr (CodeGenerator<T> && detail::pipelines_ok<Lowering, DataFlow, true>())
    return detail::compile_kernel<T, Lowering, DataFlow>(body, opt);
  else
    std::abort(); // unreachable: a static_assert stopped the build
}

/// Kernels compiled in this process so far (dynamic kernels' run-time variants included).
inline std::uint64_t compilations() {
  return detail::compilation_counter().load(std::memory_order_relaxed);
}

namespace detail {
/// Compiles `body` again with the innermost dimension of the inputs in `variant` fixed to 1
/// (a dynamic kernel's inputs that are broadcast along it at run time).
template <class T, class Lowering, class DataFlow>
DynamicVariants::Compile variant_compiler(const ir::Graph<T>& body, const CompileOptions& opt,
                                          typename T::Variant isa) {
  auto shared = std::make_shared<ir::Graph<T>>(passes::rebuild(
      body, [](auto&&...) { return std::optional<std::vector<ir::Value>>{}; }, false));
  CompileOptions o = opt;
  o.isa = isa;
  o.trace = nullptr;
  o.timings = nullptr;
  return [shared, o](std::uint32_t variant) {
    std::map<ir::NodeId, std::size_t> index;
    for (std::size_t i = 0; i < shared->parameters().size(); ++i)
      index[shared->parameters()[i]] = i;
    ir::Graph<T> b = passes::rebuild(
        *shared,
        [&](ir::Graph<T>& out, const ir::Node<T>& n,
            std::span<const ir::Value>) -> std::optional<std::vector<ir::Value>> {
          const auto* p = std::get_if<ir::Parameter>(&n.op);
          if (!p || !(variant >> index.at(n.id) & 1u)) return std::nullopt;
          std::vector<Dim> dims(n.outputs[0].shape.begin(), n.outputs[0].shape.end());
          dims.back() = 1;
          return std::vector<ir::Value>{
              out.parameter(n.outputs[0].type, Shape(std::move(dims)), n.name, p->layout)};
        },
        false);
    CompileOptions v = o;
    if (!v.name.empty()) v.name += "+bcast" + std::to_string(variant);
    return compile<T, Lowering, DataFlow>(b, v);
  };
}
} // namespace detail

} // namespace snippets
