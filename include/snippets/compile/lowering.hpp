// SPDX-License-Identifier: Apache-2.0
// snippets/compile/lowering.hpp: the front half of compile(): the data-flow pipeline, the
// checks, the conversion to a Linear IR with the backend's register model, and the lowering
// pipeline (both checked for order at compile time, passes/pipeline.hpp), with the IR dumps;
// lower() returns its result.
#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "snippets/compile/checks.hpp"
#include "snippets/compile/options.hpp"
#include "snippets/compile/stage_clock.hpp"
#include "snippets/debug/insert_perf_counters.hpp"
#include "snippets/debug/options.hpp"
#include "snippets/debug/pass_dumper.hpp"
#include "snippets/ir/graph.hpp"
#include "snippets/passes/convert_to_linear_ir.hpp"
#include "snippets/passes/default_pipelines.hpp"
#include "snippets/target/codegen.hpp"

namespace snippets {

namespace detail {

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
  lir.kept_bits = opt.accuracy == Accuracy::relaxed ? 17 : 24;
  lir.int8_products = backend_int8_products<T>(isa);
  lir.int8_dot = backend_int8_dot<T>(isa) && (opt.native_int8 || !backend_int8_words<T>());
  lir.column_ranges = backend_column_ranges<T>(isa);
  const RegisterModel regs = T::registers(isa);
  passes::PassContext<T> ctx;
  ctx.verify = opt.verify;
  ctx.config.lanes = regs.lanes;
  ctx.config.vector_registers = regs.vector_registers;
  ctx.config.max_tile_rows = regs.max_tile_rows;
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

} // namespace snippets
