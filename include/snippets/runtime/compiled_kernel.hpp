// SPDX-License-Identifier: Apache-2.0
// snippets/runtime/compiled_kernel.hpp: CompiledKernel, the product of compile().
//
// Immutable after construction and cheap to copy (it shares the code); any number of
// threads may run it at once. run() checks the buffers first (count, null, element type,
// shape) and throws snippets::Error before touching memory:
//   [snippets.run.arg_count] [snippets.run.null_pointer] [snippets.run.type_mismatch]
//   [snippets.run.shape_mismatch] [snippets.shape.too_many_elements]
// and that no output overlaps another output or an input ([snippets.run.overlapping_buffers]),
// with one exception, running in place: an output may be exactly the buffer of an input of
// its shape and element size when the kernel reads that input element by element, each
// element right before it writes the same index (KernelSignature::in_place: elementwise
// kernels, inputs read planar and not broadcast; not MatMuls, reductions or transposed reads).
// Then it shares the domain out among threads as divide_work() says (work_division.hpp).
// A dynamic kernel (compiled from a body with dynamic dimensions) takes any shapes that fit
// its partial ones: run() configures the call (runtime_config.hpp) and checks the outputs
// against the broadcast shape. configure() + run_configured() skip that work for callers that
// keep a shape set. An input broadcast along the innermost dimension only at run time needs a
// kernel compiled for it: the first such call compiles it (once per set of such inputs, shared
// by all copies of the kernel and safe under concurrent calls).
// A kernel compiled with instrumentation (performance counters, segfault detector; see
// CompileOptions::debug) is called through a per-call frame that holds its debug slots, and its
// counters are added to the kernel's totals after each call (runtime/kernel_debug_info.hpp).
// Without instrumentation the call is exactly `fn(&args)`.
#pragma once

#include <omp.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "snippets/ir/op_tags.hpp"
#include "snippets/reference/tensor.hpp"
#include "snippets/runtime/executor.hpp"
#include "snippets/runtime/kernel_abi.hpp"
#include "snippets/runtime/runtime_config.hpp"
#include "snippets/runtime/tensor_view.hpp"
#include "snippets/runtime/work_division.hpp"

namespace snippets {

struct RunOptions {
  /// Threads to use; 0 (or less) picks omp_get_max_threads() capped so each thread gets enough
  /// work. At most max_threads() are used, whatever is asked.
  int threads = 0;
  /// Executor; empty means OpenMP.
  ParallelFor parallel_for;
};

/// The most threads one run uses: the processors, and at least 256 (a request beyond what
/// the system can start would fail inside the OpenMP runtime, and a memory-bound kernel gains
/// nothing from more threads than processors).
inline int max_threads() { return std::max(256, omp_get_num_procs()); }

namespace detail {
/// The calling thread's scratch memory of at least `bytes` (64-byte aligned). It grows as
/// needed and lives as long as the thread; a kernel call uses it from start to end, and calls
/// on one thread never overlap.
inline std::byte* thread_scratch(std::int64_t bytes) {
  struct Free {
    void operator()(std::byte* p) const { std::free(p); }
  };
  thread_local std::unique_ptr<std::byte, Free> arena;
  thread_local std::int64_t size = 0;
  if (bytes > size) {
    const std::int64_t grown = (std::max(bytes, 2 * size) + 63) / 64 * 64;
    arena.reset(static_cast<std::byte*>(std::aligned_alloc(64, static_cast<std::size_t>(grown))));
    size = arena ? grown : 0;
    if (!arena) throw std::bad_alloc();
  }
  return arena.get();
}
} // namespace detail

class CompiledKernel;

namespace detail {
/// The kernels a dynamic kernel compiles for inputs broadcast along the innermost dimension
/// at run time (RuntimeConfig::variant), each compiled once.
class DynamicVariants {
public:
  using Compile = std::function<CompiledKernel(std::uint32_t variant)>;
  explicit DynamicVariants(Compile compile) : compile_(std::move(compile)) {}
  const CompiledKernel& get(std::uint32_t variant);

private:
  Compile compile_;
  std::mutex mutex_;
  std::map<std::uint32_t, std::unique_ptr<const CompiledKernel>> kernels_;
};
} // namespace detail

class CompiledKernel {
public:
  /// `streaming`, if given, is the variant with non-temporal stores; run() uses it when every
  /// output address is aligned to `sig.vector_bytes`. `info`: name, ISA and instrumentation.
  /// `variants` (dynamic kernels): compiles the kernel for inputs broadcast along the innermost
  /// dimension at run time.
  CompiledKernel(KernelCode code, KernelSignature sig, KernelCode streaming = {},
                 std::shared_ptr<const debug::KernelDebugInfo> info = nullptr,
                 detail::DynamicVariants::Compile variants = {})
      : code_(std::move(code)), streaming_(std::move(streaming)), sig_(std::move(sig)),
        info_(std::move(info)) {
    if (info_ && info_->instrumented()) instrumented_ = info_.get();
    if (variants) variants_ = std::make_shared<detail::DynamicVariants>(std::move(variants));
  }

  /// True when the kernel was compiled for dynamic dimensions (any fitting shape runs).
  bool is_dynamic() const { return sig_.dynamic.has_value(); }

  const KernelSignature& signature() const { return sig_; }
  /// The generated machine code (for dumps and tests).
  std::span<const std::uint8_t> code() const { return code_.bytes; }
  /// The kernel (or, with `streaming`, its non-temporal variant; empty if it has none).
  const KernelCode& kernel_code(bool streaming = false) const {
    return streaming ? streaming_ : code_;
  }
  /// Name, ISA, instrumentation and counter totals (nullptr for a hand-built kernel).
  const debug::KernelDebugInfo* debug_info() const { return info_.get(); }
  /// CompileOptions::name, or "kernel<N>" when none was given.
  std::string_view name() const {
    return info_ ? std::string_view(info_->name) : std::string_view("kernel");
  }
  /// The passes that built it, one per line (passes::describe of its data-flow pipeline, then
  /// of its lowering pipeline); empty for a hand-built kernel.
  std::string_view pipeline() const {
    return info_ ? std::string_view(info_->pipeline) : std::string_view();
  }
  /// True when large aligned outputs are written with non-temporal stores.
  bool has_streaming_variant() const { return streaming_.fn != nullptr; }

  void run(std::span<const ConstTensorView> in, std::span<const TensorView> out,
           const RunOptions& opt = {}) const {
    check_runnable();
    if (is_dynamic()) {
      check_views(in, sig_.inputs, "input", "kernel", true);
      check_views(out, sig_.outputs, "output", "kernel", true);
      check_in_place(in, out);
      const RuntimeConfig cfg = configure_views(in);
      check_outputs(cfg, [&](std::size_t o) -> const Shape& { return out[o].shape; });
      return with_pointers(
          in, out, [&](const void* const* i, void* const* o) { run_configured(cfg, i, o, opt); });
    }
    check_views(in, sig_.inputs, "input", "kernel");
    check_views(out, sig_.outputs, "output", "kernel");
    check_in_place(in, out);
    with_pointers(in, out, [&](const void* const* i, void* const* o) { run_unchecked(i, o, opt); });
  }

  /// Dynamic kernels: checks input shapes and computes what a call with them reads (throws
  /// [snippets.run.shape_mismatch]). Keep it to call run_configured() without this work.
  RuntimeConfig configure(std::span<const Shape> in) const {
    if (!is_dynamic())
      raise("snippets.run.not_dynamic",
            "configure() is for kernels compiled with dynamic dimensions; call run()");
    if (in.size() != sig_.inputs.size())
      raise("snippets.run.arg_count", "the kernel takes " + std::to_string(sig_.inputs.size()) +
                                          " input(s) but " + std::to_string(in.size()) +
                                          " shapes were given");
    RuntimeConfig cfg;
    snippets::configure(
        *sig_.dynamic, [&](std::size_t i) -> const Shape& { return in[i]; }, cfg);
    return cfg;
  }
  /// The output shapes a call with configuration `cfg` writes.
  std::vector<Shape> output_shapes(const RuntimeConfig& cfg) const {
    std::vector<Shape> out;
    for (std::size_t o = 0; o < sig_.outputs.size(); ++o)
      out.push_back(cfg.output_shape(sig_.dynamic->own_rank[sig_.inputs.size() + o], o));
    return out;
  }

  /// No checks (dynamic kernels): `cfg` from configure() for these inputs' shapes; `in` and
  /// `out` hold the data pointers in signature order, planar, outputs of output_shapes(cfg).
  void run_configured(const RuntimeConfig& cfg, const void* const* in, void* const* out,
                      const RunOptions& opt = {}) const {
    SNIPPETS_ASSERT(is_dynamic()) << "run_configured on a static kernel";
    check_runnable();
    if (!cfg.writes) return;
    const CompiledKernel& k = cfg.variant ? variants_->get(cfg.variant) : *this;
    const std::size_t r = cfg.rank - 1, n_in = sig_.inputs.size(), n_out = sig_.outputs.size();
    const bool streaming =
        k.streaming_.fn && cfg.elements * 4 * std::int64_t(n_out) >= sig_.streaming_min_bytes &&
        (cfg.split == r || cfg.domain[r] * 4 % sig_.vector_bytes == 0) && outputs_aligned(out);
    const KernelCode& variant = streaming ? k.streaming_ : k.code_;
    const std::size_t inner = inner_dim(*sig_.dynamic, cfg);
    const WorkDivision division = divide_work(sig_, cfg, requested_threads(opt, cfg.elements));
    auto body = [&](int i) {
      const WorkShare share = division.share(i);
      for (int s = 0; s < share.size; ++s) {
        const WorkCall& c = share.calls[std::size_t(s)];
        CallArgs args{};
        for (std::size_t a = 0; a < n_in + n_out; ++a) {
          const auto* base = static_cast<const char*>(a < n_in ? in[a] : out[a - n_in]);
          std::int64_t at = c.outer_begin * cfg.stride(a, cfg.split);
          if (inner < cfg.rank) at += c.inner_begin * cfg.stride(a, inner);
          args.data[a] = base + at * sig_.dynamic->element_bytes[a];
        }
        for (std::size_t d = 0; d < cfg.rank; ++d) args.work[d] = cfg.domain[d];
        args.work[cfg.split] = c.outer_count;
        if (inner < cfg.rank) args.work[inner] = c.inner_count;
        args.config = cfg.table.data();
        const DynamicLayout& dyn = *k.sig_.dynamic;
        if (!dyn.buffer_rows.empty()) { // rows of scratch for this call's row length
          std::byte* scratch = detail::thread_scratch(dyn.scratch_rows * cfg.row_bytes());
          for (std::size_t b = 0; b < dyn.buffer_rows.size(); ++b)
            args.data[n_in + n_out + b] = scratch + dyn.buffer_rows[b] * cfg.row_bytes();
        }
        k.call(variant, args);
      }
    };
    k.launch(division.threads(), body, opt);
  }

  /// Convenience for tests and demos: allocates and returns the outputs.
  std::vector<reference::Tensor> run(std::span<const reference::Tensor> in,
                                     const RunOptions& opt = {}) const {
    std::vector<ConstTensorView> views;
    for (const auto& t : in) views.push_back({t.type(), t.shape(), t.data()});
    std::vector<reference::Tensor> outs;
    std::vector<TensorView> out_views;
    auto views_of_outs = [&] {
      for (auto& t : outs) out_views.push_back({t.type(), t.shape(), t.data()});
    };
    if (!is_dynamic()) {
      for (const auto& o : sig_.outputs) outs.emplace_back(o.type, o.shape);
      views_of_outs();
      run(views, out_views, opt);
      return outs;
    }
    // one configuration sizes the outputs and runs the call (the outputs fit it by construction)
    check_views(std::span<const ConstTensorView>(views), sig_.inputs, "input", "kernel", true);
    const RuntimeConfig cfg = configure_views(views);
    const std::vector<Shape> out_shapes = output_shapes(cfg);
    for (std::size_t o = 0; o < out_shapes.size(); ++o)
      outs.emplace_back(sig_.outputs[o].type, out_shapes[o]);
    views_of_outs();
    with_pointers(views, out_views,
                  [&](const void* const* i, void* const* o) { run_configured(cfg, i, o, opt); });
    return outs;
  }
  std::vector<reference::Tensor> run(std::initializer_list<reference::Tensor> in,
                                     const RunOptions& opt = {}) const {
    return run(std::span<const reference::Tensor>(in.begin(), in.size()), opt);
  }

  /// No checks: `in` and `out` hold the data pointers in signature order, each buffer planar
  /// and as large as its shape says.
  void run_unchecked(const void* const* in, void* const* out, const RunOptions& opt = {}) const {
    check_runnable();
    if (is_dynamic())
      raise("snippets.run.not_static", "a dynamic kernel needs the shapes of its inputs: call "
                                       "run(), or configure() and run_configured()");
    std::int64_t total = 1;
    for (Dim d : sig_.domain) total *= d;
    if (total == 0) return;
    const std::size_t n_in = sig_.inputs.size(), n_out = sig_.outputs.size();
    const KernelCode& variant = streaming_.fn && outputs_aligned(out) ? streaming_ : code_;
    const bool inner = sig_.inner_unit > 0; // the kernel reads work[1]
    const WorkDivision division =
        divide_work(sig_, requested_threads(opt, total * sig_.element_cost));
    auto body = [&](int i) {
      const WorkShare share = division.share(i);
      for (int s = 0; s < share.size; ++s) {
        const WorkCall& c = share.calls[std::size_t(s)];
        CallArgs args{};
        for (std::size_t k = 0; k < n_in + n_out; ++k) {
          const auto* base = static_cast<const char*>(k < n_in ? in[k] : out[k - n_in]);
          std::int64_t at = c.outer_begin * sig_.outer_stride_bytes[k];
          if (inner) at += c.inner_begin * sig_.inner_stride_bytes[k];
          args.data[k] = base + at;
        }
        if (sig_.buffer_pointers) {
          std::byte* scratch = detail::thread_scratch(sig_.scratch_bytes);
          for (std::size_t b = 0; b < sig_.buffer_pointers; ++b)
            args.data[n_in + n_out + b] = scratch;
        }
        args.work[0] = c.outer_count;
        if (inner) args.work[1] = c.inner_count, args.inner_begin = c.inner_begin;
        call(variant, args);
      }
    };
    launch(division.threads(), body, opt);
  }

private:
  /// Threads a run asks divide_work() for: RunOptions::threads, or as many as OpenMP offers
  /// while each keeps at least ~16K of the domain's `total` elements (below that, fork/join
  /// costs more; a MatMul kernel's elements count KernelSignature::element_cost each); never
  /// more than max_threads().
  static int requested_threads(const RunOptions& opt, std::int64_t total) {
    int n = std::min(opt.threads > 0 ? opt.threads : omp_get_max_threads(), max_threads());
    if (opt.threads <= 0)
      n = static_cast<int>(std::min<std::int64_t>(n, std::max<std::int64_t>(1, total / 16384)));
    return std::max(n, 1);
  }

  void check_runnable() const {
    if (!sig_.runnable)
      raise("snippets.run.emit_only",
            "the kernel has no code this host can execute (compiled with emit_only for " +
                sig_.isa +
                ", or by a backend that generates no machine code); inspect it, or "
                "compile it for this host's ISA to run it");
  }

  void check_in_place(std::span<const ConstTensorView> in, std::span<const TensorView> out) const {
    check_overlap(
        in, out, [&](std::size_t i) { return i < sig_.in_place.size() && sig_.in_place[i]; },
        "kernel");
  }

  /// The configuration of a dynamic call on inputs of these shapes (checks them).
  RuntimeConfig configure_views(std::span<const ConstTensorView> in) const {
    RuntimeConfig cfg;
    snippets::configure(
        *sig_.dynamic, [&](std::size_t i) -> const Shape& { return in[i].shape; }, cfg);
    return cfg;
  }

  /// Every output address is vector-aligned (the streaming variant's condition).
  bool outputs_aligned(void* const* out) const {
    for (std::size_t o = 0; o < sig_.outputs.size(); ++o)
      if (reinterpret_cast<std::uintptr_t>(out[o]) % std::uintptr_t(sig_.vector_bytes) != 0)
        return false;
    return true;
  }

  void call(const KernelCode& variant, const CallArgs& args) const {
    if (instrumented_) return call_instrumented(*instrumented_, variant, args);
    variant.fn(&args);
  }

  template <class Body> void launch(int n, const Body& body, const RunOptions& opt) const {
    const auto start =
        instrumented_ ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    if (opt.parallel_for)
      opt.parallel_for(n, body);
    else
      openmp_parallel_for(n, body);
    if (instrumented_ && instrumented_->totals) {
      instrumented_->totals->runs.fetch_add(1, std::memory_order_relaxed);
      instrumented_->totals->run_ns.fetch_add(elapsed_ns(start), std::memory_order_relaxed);
    }
  }

  /// Calls f(input pointers, output pointers) on stack arrays.
  template <class F>
  static void with_pointers(std::span<const ConstTensorView> in, std::span<const TensorView> out,
                            F f) {
    // compile() keeps inputs + outputs within the kernel's argument registers
    const void* in_ptrs[max_kernel_args];
    void* out_ptrs[max_kernel_args];
    SNIPPETS_ASSERT(in.size() + out.size() <= max_kernel_args) << "kernel arguments";
    for (std::size_t k = 0; k < in.size(); ++k) in_ptrs[k] = in[k].data;
    for (std::size_t k = 0; k < out.size(); ++k) out_ptrs[k] = out[k].data;
    f(in_ptrs, out_ptrs);
  }

  /// Dynamic kernels: every output has the broadcast shape of the inputs.
  template <class ShapeOf> void check_outputs(const RuntimeConfig& cfg, ShapeOf&& shape_of) const {
    for (std::size_t o = 0; o < sig_.outputs.size(); ++o) {
      const Shape want = cfg.output_shape(sig_.dynamic->own_rank[sig_.inputs.size() + o], o);
      if (shape_of(o) != want)
        raise("snippets.run.shape_mismatch", "output " + std::to_string(o) + " has shape " +
                                                 shape_of(o).to_string() +
                                                 " but these inputs give " + want.to_string());
    }
  }

  static std::uint64_t elapsed_ns(std::chrono::steady_clock::time_point since) {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                          std::chrono::steady_clock::now() - since)
                                          .count());
  }

  /// One call of an instrumented kernel: a frame with its debug slots on this thread, the
  /// call registered for the segfault detector, then the counters added to the totals.
  static void call_instrumented(const debug::KernelDebugInfo& info, const KernelCode& code,
                                const CallArgs& args) {
    const std::size_t regions = info.counters == debug::Counters::cycles ? info.regions.size() : 0;
    std::vector<std::uint64_t> frame(DebugFrame::words(regions), 0);
    new (frame.data()) CallArgs(args);
    auto* slot = reinterpret_cast<std::int64_t*>(frame.data() + DebugFrame::expr_slot / 8);
    *slot = -1;
    const debug::ActiveCall call{&info,           code.map.get(), code.bytes.data(),
                                 code.text_bytes, slot,           debug::detail::active_call};
    debug::detail::active_call = &call;
    const auto start = std::chrono::steady_clock::now();
    code.fn(std::launder(reinterpret_cast<const CallArgs*>(frame.data())));
    const std::uint64_t ns = elapsed_ns(start);
    debug::detail::active_call = call.outer;
    if (!info.totals) return;
    debug::CounterTotals& t = *info.totals;
    t.calls.fetch_add(1, std::memory_order_relaxed);
    t.call_ns.fetch_add(ns, std::memory_order_relaxed);
    for (std::size_t r = 0; r < regions; ++r) {
      t.ticks[r].fetch_add(frame[DebugFrame::ticks(r) / 8], std::memory_order_relaxed);
      t.entries[r].fetch_add(frame[DebugFrame::entries(r) / 8], std::memory_order_relaxed);
    }
  }

  KernelCode code_, streaming_;
  KernelSignature sig_;
  std::shared_ptr<const debug::KernelDebugInfo> info_;
  const debug::KernelDebugInfo* instrumented_ = nullptr; // info_ when it asks for a slow call
  std::shared_ptr<detail::DynamicVariants> variants_;    // dynamic kernels only
};

inline const CompiledKernel& detail::DynamicVariants::get(std::uint32_t variant) {
  const std::lock_guard<std::mutex> lock(mutex_);
  auto it = kernels_.find(variant);
  if (it == kernels_.end())
    it = kernels_.emplace(variant, std::make_unique<const CompiledKernel>(compile_(variant))).first;
  return *it->second;
}

} // namespace snippets
