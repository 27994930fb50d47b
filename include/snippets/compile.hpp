// SPDX-License-Identifier: Apache-2.0
// snippets/compile.hpp: compile() turns a Subgraph body into one JIT kernel.
//
//   auto kernel = snippets::compile(body);                  // the backend's best variant here
//   auto kernel = snippets::compile<MyTraits, MyPipeline>(body, {.isa = MyIsa::narrow});
//
// Steps: run the data-flow passes on the body (DefaultDataFlow: layouts, scalars,
// PowerStatic, f32 compute), check it (compile/checks.hpp: ops the traits can fuse, input and
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
//
// The jobs live in compile/: options.hpp (CompileOptions), lowering.hpp (data flow, checks,
// Linear IR, lowering; lower()), checks.hpp, signature.hpp (the KernelSignature),
// streaming.hpp (when to emit non-temporal stores), stage_clock.hpp (timings), publish.hpp
// (debug information and tools); this file emits and assembles the kernel.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <span>

#include "snippets/compile/lowering.hpp"
#include "snippets/compile/options.hpp"
#include "snippets/compile/publish.hpp"
#include "snippets/compile/signature.hpp"
#include "snippets/compile/stage_clock.hpp"
#include "snippets/compile/streaming.hpp"
#include "snippets/runtime/compiled_kernel.hpp"
#include "snippets/target/codegen.hpp"

namespace snippets {

namespace detail {
inline std::atomic<std::uint64_t>& compilation_counter() {
  static std::atomic<std::uint64_t> n{0};
  return n;
}
} // namespace detail

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
