// SPDX-License-Identifier: Apache-2.0
// snippets/target/aarch64/traits.hpp: the backend traits of the AArch64 target (NEON, 4 f32
// lanes, code through AsmJit's a64::Assembler).
//
// Both halves of the seam: what graphs and the tokenizer ask (backend_traits.hpp) and the code
// generator with its register model (target/codegen.hpp, implemented in codegen.hpp). One
// variant, neon: Advanced SIMD is part of every AArch64 processor. An op is fusable exactly
// when it has an Emitter specialization, plus the reductions and Softmax that the default
// pipelines lower to emitted ops (passes/decompose_reductions.hpp, decompose_softmax.hpp),
// Slice, which its loads read (passes/slice_reads.hpp), and MatMul, which becomes a Brgemm
// (passes/lower_brgemm.hpp; its NEON code, with BrgemmCopyB and SoftmaxRows, is
// emitters/brgemm.hpp and emitters/softmax_rows.hpp).
#pragma once

#include <string_view>
#include <type_traits>

#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif

#include "snippets/backend_traits.hpp"
#include "snippets/ir/element_type.hpp"
#include "snippets/target/aarch64/abi.hpp"
#include "snippets/target/aarch64/codegen.hpp"
#include "snippets/target/aarch64/emitters/arith.hpp"
#include "snippets/target/aarch64/emitters/convert.hpp"
#include "snippets/target/aarch64/emitters/eltwise.hpp"
#include "snippets/target/aarch64/emitters/math.hpp"
#include "snippets/target/aarch64/emitters/reduce.hpp"
#include "snippets/target/codegen.hpp"

namespace snippets::aarch64 {

enum class Isa { neon };

struct Traits {
  static constexpr std::string_view name = "aarch64";
  /// Inputs + outputs of one kernel; the rest of the 25 pool registers count loops.
  static constexpr int data_pointer_registers = 16;
  /// The kernels run only on AArch64 (an x86-64 program may still build and inspect them).
  static bool host_supported() {
#if defined(__aarch64__)
    return true;
#else
    return false;
#endif
  }

  using Variant = Isa;
  static Isa default_variant() { return Isa::neon; }
  static bool runs_here(Isa) { return host_supported(); }
  static std::string_view variant_name(Isa) { return "neon"; }
  static RegisterModel registers(Isa) {
    return {.lanes = lanes, .vector_registers = vector_registers, .gp_registers = usable_gprs};
  }
  /// Products of u8/s8 bytes summed in int32 (optional hooks, target/codegen.hpp): by SDOT
  /// (FEAT_DotProd, ARMv8.2: every Neoverse), so where the host has it; a host that runs no
  /// AArch64 code builds them for such a processor. Only as byte dot products: no 16-bit words
  /// (CompileOptions::native_int8 = false changes nothing here).
  static bool int8_products(Isa) { return host_has_dotprod(); }
  static bool int8_dot(Isa) { return true; }
  static constexpr bool int8_words = false;
  /// SDOT reads A signed: a u8 A is read as A - 128 (ir::BrgemmShape::signed_a).
  static constexpr bool int8_signed_a = true;
  /// FEAT_DotProd on the host (HWCAP_ASIMDDP); true where no AArch64 code runs.
  static bool host_has_dotprod() {
#if defined(__aarch64__) && defined(__linux__)
    static const bool has = (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
    return has;
#elif defined(__aarch64__) && !defined(__ARM_FEATURE_DOTPROD)
    return false; // not Linux: only what the compiler was told the processor has
#else
    return true;
#endif
  }
  /// Reductions and Softmax over a dynamic innermost axis (optional hook, target/codegen.hpp).
  static constexpr bool dynamic_reductions = true;
  /// HorizonReduce takes `columns`: reductions over middle axes (optional hook,
  /// backend_traits.hpp).
  static constexpr bool column_reductions = true;
  template <class Self> static int scratch_registers(const ir::LinearIR<Self>& lir, Isa) {
    return aarch64::scratch_registers(lir);
  }
  template <class Self>
  static KernelCode emit(ir::LinearIR<Self>& lir, Isa, const EmitRequest<Self>&) {
    return emit_kernel(lir);
  }
  /// The reductions and Softmax, as on x64 (passes/decompose_composite_reductions.hpp,
  /// decompose_softmax.hpp and decompose_reductions.hpp). MatMul becomes a Brgemm.
  /// Slice: the loads of an input read its parts (passes/slice_reads.hpp). FakeQuantize and
  /// Quantize become ops with emitters (passes/decompose_quantization.hpp).
  template <class Op>
  static constexpr bool fusable =
      HasEmitter<Op> || ir::reduction<Op> || std::is_same_v<Op, ir::Softmax> ||
      std::is_same_v<Op, ir::MatMul> || std::is_same_v<Op, ir::Slice> ||
      std::is_same_v<Op, ir::FakeQuantize> || std::is_same_v<Op, ir::Quantize>;
  /// Reductions take any axes here: which a kernel reduces (trailing ones, walked as one row) is
  /// passes::row_axes, checked where the input's rank is known.
  template <class Op> static bool supports(const Op& op) { return emitter_supports(op); }
  /// Element types a kernel reads and writes: all of them; loads and stores convert
  /// (memory_access.hpp; bf16 stores round as Convert does; a boolean is one byte, read as
  /// 0.0f or 1.0f and written as 0 or 1).
  static bool io_type_supported(ElementType) { return true; }
};

static_assert(check_code_generator<Traits>());

} // namespace snippets::aarch64

// The AArch64 share of snippets/extern_templates.hpp (see the x64 traits for the pattern): the
// code generator, declared extern where that header or snippets::prebuilt is in force, and
// defined once by src/prebuilt.cpp compiled for AArch64 (the emulated tests build it so).
#if defined(SNIPPETS_DEFINE_TEMPLATES)
#define SNIPPETS_DETAIL_AARCH64_EXTERN
#elif defined(SNIPPETS_PREBUILT) || defined(SNIPPETS_EXTERN_TEMPLATES)
#define SNIPPETS_DETAIL_AARCH64_EXTERN extern
#endif
#ifdef SNIPPETS_DETAIL_AARCH64_EXTERN
namespace snippets::aarch64 {
SNIPPETS_DETAIL_AARCH64_EXTERN template KernelCode emit_kernel<Traits>(ir::LinearIR<Traits>&);
SNIPPETS_DETAIL_AARCH64_EXTERN template int scratch_registers<Traits>(const ir::LinearIR<Traits>&);
} // namespace snippets::aarch64
#undef SNIPPETS_DETAIL_AARCH64_EXTERN
#endif
