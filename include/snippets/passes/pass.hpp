// SPDX-License-Identifier: Apache-2.0
// snippets/passes/pass.hpp: what a pass is.
//
// A pass is a struct with no base class (LLVM's new pass manager):
//   struct MyPass {
//     using pass_tag = snippets::passes::lir_pass_tag;        // opt-in
//     static constexpr std::string_view name = "MyPass";
//     template <class T> void run(ir::LinearIR<T>& lir, PassContext<T>& ctx) const;
//   };
// What a pass needs, establishes and invalidates it declares as types (properties.hpp); a
// pipeline checks its order with them when it compiles (pipeline.hpp). The PassContext carries the
// lowering configuration (the "how": vector length, register budget, FMA, ...) and the analyses
// passes share (live ranges). Passes read the configuration and never hard-code it. Debug hooks
// (`after_pass`, counter regions) are empty by default and cost one test of an empty std::function
// per pass.
#pragma once

#include <concepts>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "snippets/ir/linear_ir.hpp"

namespace snippets::passes {

/// Opt-in tag of passes over a LinearIR.
struct lir_pass_tag {};

/// How to lower: chosen by the target and the user, read by passes.
struct LoweringConfig {
  int lanes = 8;                     // f32 elements per vector register
  int vector_registers = 16;         // physical vector registers
  int max_tile_rows = 6;             // rows of a Brgemm register tile the target emits
  int reserved_vector_registers = 0; // taken by emitter scratch and tail masks
  int gp_registers = 4;              // GPRs left for loop counters after data pointers
  bool fma = true;                   // contract Multiply -> Add into FusedMulAdd
  int unroll = 4;                    // copies of an innermost loop body per iteration
  bool optimize_buffers = true;      // false: every Buffer gets its own memory and pointer
};

/// A value's live interval in expression order: [def, end].
struct LiveRange {
  std::size_t def = 0, end = 0;
};

/// A span of expressions timed by a cycle counter, from before `first` to after `last`
/// (debug::InsertPerfCounters; the kernel emitter reads it). `parent` is the enclosing
/// region's index, -1 for the whole kernel.
template <class T> struct CounterRegion {
  std::string name;
  const ir::Expression<T>* first = nullptr;
  const ir::Expression<T>* last = nullptr;
  int parent = -1;
};

template <class T> struct Analyses {
  std::map<const ir::PortConnector<T>*, LiveRange> live_ranges; // InitLiveRanges
  int spill_slots = 0;                                          // InsertRegSpills
  std::vector<CounterRegion<T>> counter_regions;                // debug::InsertPerfCounters
};

template <class T> struct PassContext {
  LoweringConfig config;
  Analyses<T> analyses;
  std::vector<std::string_view> trace; // names of the passes run, in order
  bool verify = false;                 // run the LIR verifier after every pass
  /// Called by Pipeline after every pass (not after a nested pipeline as a whole), before the
  /// verifier: the LIR dumps of SNIPPETS_DUMP_LIR hook in here. Empty: nothing is called.
  std::function<void(std::string_view pass, ir::LinearIR<T>&)> after_pass;
};

template <class P, class IR, class Ctx>
concept LirPass = requires {
  typename P::pass_tag;
}
&&std::same_as<typename P::pass_tag, lir_pass_tag>&& requires {
  { P::name } -> std::convertible_to<std::string_view>;
}
&&requires(const P& p, IR& ir, Ctx& ctx) {
  { p.run(ir, ctx) } -> std::same_as<void>;
};

} // namespace snippets::passes
