// SPDX-License-Identifier: Apache-2.0
// snippets/compile/publish.hpp: the debug information a compiled kernel carries (name, ISA,
// pipeline, counter regions) and what compile() publishes for the debugging tools: perf map
// entries, the JIT dump, the segfault detector, the counters' exit report.
#pragma once

#include <memory>
#include <string>

#include "snippets/compile/lowering.hpp"
#include "snippets/debug/disassembler.hpp"
#include "snippets/debug/options.hpp"
#include "snippets/debug/perf_counters.hpp"
#include "snippets/debug/perf_map.hpp"
#include "snippets/debug/segfault_detector.hpp"
#include "snippets/runtime/compiled_kernel.hpp"

namespace snippets {

namespace detail {

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

} // namespace snippets
