// SPDX-License-Identifier: Apache-2.0
// snippets/compile/options.hpp: CompileOptions, what a caller of compile() chooses (variant,
// FMA, unroll, streaming stores, debugging), and CompileTiming, where its time went.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "snippets/debug/options.hpp"
#include "snippets/target/codegen.hpp"

namespace snippets {

/// One stage of compile() and its wall time (CompileOptions::timings): DataFlow (all data-flow
/// passes), ToLinearIR (checks and conversion), each lowering pass by name, Emit (machine code
/// for every variant).
struct CompileTiming {
  std::string_view stage;
  std::chrono::nanoseconds time{};
};

/// How close the exp-based activations (Exp, Sigmoid, Swish, Gelu's tanh form, Mish, Elu,
/// SoftPlus, the logistic inside them) come to the reference; docs/math_accuracy.md states the
/// bound of each tier, and test_jit_math_accuracy.cpp asserts it.
enum class Accuracy {
  standard, // each op within its stated ulp bound (2-4 ulp)
  /// within 128 ulp (1.5e-5 relative at most): the degree-4 exp polynomial (math::exp_q_short).
  /// Values that every consumer keeps as bf16 or f16 get it in either tier (they keep 8 or 11
  /// significand bits).
  relaxed,
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
  Accuracy accuracy = Accuracy::standard;
  /// u8/i8 products use the target's byte dot products where the host has them
  /// (T::int8_dot; x86-64: VPDPBUSD of AVX512_VNNI / AVX-VNNI). False, and on hosts without
  /// them: pairs of 16-bit words into VPMADDWD; the sums are the same, tests compare the two.
  /// A target without words (T::int8_words false: AArch64's SDOT) ignores it.
  bool native_int8 = true;
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
} // namespace detail

} // namespace snippets
