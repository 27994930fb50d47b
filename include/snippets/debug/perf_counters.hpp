// SPDX-License-Identifier: Apache-2.0
// snippets/debug/perf_counters.hpp: what the performance counters measured, per kernel.
//
//   auto k = compile(body, {.name = "tail", .debug = {.counters = debug::Counters::cycles}});
//   k.run(...);                                   // as often as you like, from any threads
//   debug::print_counters(std::cout, k);          // or print_counters(std::cout, program)
//
// Modes (debug/options.hpp, SNIPPETS_PERF_COUNTERS):
//  - cycles: time-stamp-counter ticks of the whole kernel and of every loop (the regions of
//    InsertPerfCounters), summed over all calls and threads, with how often each region was
//    entered; plus the chrono numbers below. A loop's ticks include its inner loops' and the
//    counter reads themselves (about 25-40 cycles per read: time short inner loops with care).
//    The ~ns column scales ticks by the measured nanoseconds per kernel tick.
//  - chrono: no instrumentation inside the kernel. Each run's wall time, and each kernel call
//    (one per thread chunk) timed with std::chrono::steady_clock and summed over threads.
// Counters add up across threads without sharing: each call counts into its own frame, and
// the runtime adds the frame to the kernel's atomic totals after the call. With
// SNIPPETS_PERF_COUNTERS set (and no CompileOptions::debug.counters), the totals of every
// kernel that ran are also printed to stderr when the process exits.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <vector>

#include "snippets/runtime/compiled_kernel.hpp"

namespace snippets {
template <class T, class Lowering, class DataFlow> class Program;
}

namespace snippets::debug {

struct CounterReport {
  struct Region {
    std::string name;
    int parent = -1, depth = 0;
    std::uint64_t ticks = 0, entries = 0;
  };
  std::string kernel, isa;
  Counters mode = Counters::off;
  std::uint64_t runs = 0, run_ns = 0;   // run() calls, wall time
  std::uint64_t calls = 0, call_ns = 0; // kernel calls (thread chunks), time summed over threads
  std::vector<Region> regions;          // cycles mode; regions[0] is the whole kernel
};

inline CounterReport counter_report(const KernelDebugInfo& info) {
  CounterReport r;
  r.kernel = info.name;
  r.isa = info.isa;
  r.mode = info.counters;
  if (!info.totals) return r;
  const CounterTotals& t = *info.totals;
  r.runs = t.runs.load(std::memory_order_relaxed);
  r.run_ns = t.run_ns.load(std::memory_order_relaxed);
  r.calls = t.calls.load(std::memory_order_relaxed);
  r.call_ns = t.call_ns.load(std::memory_order_relaxed);
  for (std::size_t i = 0; i < info.regions.size() && info.counters == Counters::cycles; ++i)
    r.regions.push_back({info.regions[i].name, info.regions[i].parent, info.regions[i].depth,
                         t.ticks[i].load(std::memory_order_relaxed),
                         t.entries[i].load(std::memory_order_relaxed)});
  return r;
}

/// The kernel's totals so far (mode off and zeros when it was compiled without counters).
inline CounterReport counter_report(const CompiledKernel& k) {
  if (const KernelDebugInfo* info = k.debug_info()) return counter_report(*info);
  CounterReport r;
  r.kernel = std::string(k.name());
  r.isa = k.signature().isa;
  return r;
}

/// Sets the kernel's totals to zero (not while it runs: a running call adds its counts later).
inline void reset_counters(const CompiledKernel& k) {
  const KernelDebugInfo* info = k.debug_info();
  if (!info || !info->totals) return;
  CounterTotals& t = *info->totals;
  for (auto* a : {&t.runs, &t.run_ns, &t.calls, &t.call_ns}) a->store(0);
  for (auto& a : t.ticks) a.store(0);
  for (auto& a : t.entries) a.store(0);
}

inline void print_counters(std::ostream& os, const CounterReport& r) {
  char line[256];
  os << "kernel '" << r.kernel << "' (" << r.isa << ", counters ";
  if (r.mode == Counters::off) {
    os << "off: set CompileOptions::debug.counters or SNIPPETS_PERF_COUNTERS=cycles|chrono)\n";
    return;
  }
  std::snprintf(
      line, sizeof line, "%s): %llu runs, wall %.3f ms; %llu calls, %.3f ms summed over threads\n",
      r.mode == Counters::cycles ? "cycles" : "chrono", static_cast<unsigned long long>(r.runs),
      double(r.run_ns) / 1e6, static_cast<unsigned long long>(r.calls), double(r.call_ns) / 1e6);
  os << line;
  if (r.regions.empty()) return;
  const double ns_per_tick =
      r.regions[0].ticks ? double(r.call_ns) / double(r.regions[0].ticks) : 0.0;
  std::snprintf(line, sizeof line, "  %-48s %16s %7s %12s %12s\n", "region", "ticks", "%",
                "entries", "~ns");
  os << line;
  for (const auto& g : r.regions) {
    const std::string name = std::string(2 * static_cast<std::size_t>(g.depth), ' ') + g.name;
    const double share =
        r.regions[0].ticks ? 100.0 * double(g.ticks) / double(r.regions[0].ticks) : 0.0;
    std::snprintf(line, sizeof line, "  %-48s %16llu %6.1f%% %12llu %12.0f\n", name.c_str(),
                  static_cast<unsigned long long>(g.ticks), share,
                  static_cast<unsigned long long>(g.entries), double(g.ticks) * ns_per_tick);
    os << line;
  }
}

inline void print_counters(std::ostream& os, const CompiledKernel& k) {
  print_counters(os, counter_report(k));
}

/// One report per kernel step of a Program.
template <class T, class Lowering, class DataFlow>
void print_counters(std::ostream& os, const Program<T, Lowering, DataFlow>& program) {
  for (const auto& step : program.steps())
    if (step.kernel) print_counters(os, *step.kernel);
}

namespace detail {

/// Kernels whose counters were switched on by SNIPPETS_PERF_COUNTERS: reported at exit.
struct ExitReport {
  std::mutex m;
  std::vector<std::shared_ptr<const KernelDebugInfo>> kernels;
};
inline ExitReport& exit_report() {
  static ExitReport* r = new ExitReport; // never destroyed: used from an atexit handler
  return *r;
}

inline void register_for_exit_report(std::shared_ptr<const KernelDebugInfo> info) {
  ExitReport& r = exit_report();
  const std::lock_guard lock(r.m);
  if (r.kernels.empty())
    std::atexit([] {
      ExitReport& rep = exit_report();
      const std::lock_guard l(rep.m);
      for (const auto& k : rep.kernels)
        if (k->totals && k->totals->calls.load() > 0) print_counters(std::cerr, counter_report(*k));
    });
  r.kernels.push_back(std::move(info));
}

} // namespace detail

} // namespace snippets::debug
