// SPDX-License-Identifier: Apache-2.0
// snippets/target/x64/traits.hpp: the backend traits of the x86-64 target.
//
// One traits type covers AVX2 and AVX-512: the ISA is its Variant, chosen when a kernel is
// compiled (CompileOptions::isa, default best_host_isa()). It supplies both halves of the
// seam: what graphs and the tokenizer ask (backend_traits.hpp) and the code generator with its
// register model per ISA (target/codegen.hpp, implemented in codegen.hpp). An op is fusable exactly
// when it has an Emitter specialization (a derived traits type that claims more fusable ops gets a
// compile error naming the op without an emitter).
#pragma once

#include <string_view>
#include <type_traits>

#include "snippets/backend_traits.hpp"
#include "snippets/ir/element_type.hpp"
#include "snippets/target/codegen.hpp"
#include "snippets/target/x64/abi.hpp"
#include "snippets/target/x64/codegen.hpp"
#include "snippets/target/x64/emitters/activation.hpp"
#include "snippets/target/x64/emitters/arith.hpp"
#include "snippets/target/x64/emitters/eltwise.hpp"
#include "snippets/target/x64/emitters/reduce.hpp"
#include "snippets/target/x64/isa.hpp"

namespace snippets::x64 {

struct Traits {
  static constexpr std::string_view name = "x64";
  /// Inputs + outputs of one kernel; the rest of the usable GPRs count loops.
  static constexpr int data_pointer_registers = 10;
  static bool host_supported() { return host_supports(Isa::avx2); }

  using Variant = Isa;
  static Isa default_variant() { return best_host_isa(); }
  static bool runs_here(Isa isa) { return host_supports(isa); }
  static std::string_view variant_name(Isa isa) { return to_string(isa); }
  static RegisterModel registers(Isa isa) {
    return {.lanes = lanes(isa),
            .vector_registers = vector_registers(isa),
            .gp_registers = usable_gprs,
            .max_tile_rows = 8};
  }
  static bool native_bf16(Isa isa) { return isa == Isa::avx512 && host_has_avx512_bf16(); }
  /// Products of u8/s8 bytes summed in int32 (optional hooks, target/codegen.hpp): on every
  /// host, as 16-bit words into VPMADDWD, or with byte dot products (int8_dot) VPDPBUSD, which
  /// AVX-512 kernels have with AVX512_VNNI and AVX2 kernels with AVX-VNNI.
  static bool int8_products(Isa) { return true; }
  /// Brgemm and BrgemmCopyB take a run-time range of B's column panels (optional hook).
  static bool column_ranges(Isa) { return true; }
  static bool int8_dot(Isa isa) {
    return isa == Isa::avx512 ? host_has_avx512_vnni() : host_has_avx_vnni();
  }
  /// Reductions and Softmax over a dynamic innermost axis (optional hook, target/codegen.hpp).
  static constexpr bool dynamic_reductions = true;
  /// HorizonReduce takes `columns`: reductions over middle axes (optional hook,
  /// backend_traits.hpp).
  static constexpr bool column_reductions = true;
  template <class Self> static int scratch_registers(const ir::LinearIR<Self>& lir, Isa isa) {
    return x64::scratch_registers(lir, isa);
  }
  template <class Self>
  static KernelCode emit(ir::LinearIR<Self>& lir, Isa isa, const EmitRequest<Self>& req) {
    return emit_kernel(lir, isa, req);
  }
  /// Ops with an emitter, the reductions the default pipelines lower to emitted ops
  /// (passes/decompose_composite_reductions.hpp, decompose_softmax.hpp and
  /// decompose_reductions.hpp), MatMul, which
  /// becomes a Brgemm (passes/lower_brgemm.hpp), Slice, which the loads of an input read
  /// (passes/slice_reads.hpp), and FakeQuantize and Quantize, which become ops with emitters
  /// (passes/decompose_quantization.hpp).
  template <class Op>
  static constexpr bool fusable =
      HasEmitter<Op> || ir::reduction<Op> || std::is_same_v<Op, ir::Softmax> ||
      std::is_same_v<Op, ir::MatMul> || std::is_same_v<Op, ir::Slice> ||
      std::is_same_v<Op, ir::FakeQuantize> || std::is_same_v<Op, ir::Quantize>;
  /// Whether the emitter accepts these attributes (optional hook, read by the tokenizer and
  /// compile()). Reductions take any axes here: which a kernel reduces (trailing ones, walked as
  /// one row) is passes::row_axes, checked where the input's rank is known.
  template <class Op> static bool supports(const Op& op) { return emitter_supports(op); }
  /// Element types a kernel reads and writes (optional hook; f32 when a traits type omits it):
  /// all of them. Loads and stores convert to and from f32 (memory_access.hpp; a boolean is one
  /// byte, read as 0.0f or 1.0f and written as 0 or 1).
  static bool io_type_supported(ElementType) { return true; }
};

static_assert(check_code_generator<Traits>());

} // namespace snippets::x64

// The x64 share of snippets/extern_templates.hpp, which names no target: the code generator,
// declared extern where that header (SNIPPETS_EXTERN_TEMPLATES) or snippets::prebuilt is in
// force, and defined once by src/prebuilt.cpp (SNIPPETS_DEFINE_TEMPLATES).
#if defined(SNIPPETS_DEFINE_TEMPLATES)
#define SNIPPETS_DETAIL_X64_EXTERN
#elif defined(SNIPPETS_PREBUILT) || defined(SNIPPETS_EXTERN_TEMPLATES)
#define SNIPPETS_DETAIL_X64_EXTERN extern
#endif
#ifdef SNIPPETS_DETAIL_X64_EXTERN
namespace snippets::x64 {
SNIPPETS_DETAIL_X64_EXTERN template KernelCode emit_kernel<Traits>(ir::LinearIR<Traits>&, Isa,
                                                                   const EmitRequest<Traits>&);
SNIPPETS_DETAIL_X64_EXTERN template int scratch_registers<Traits>(const ir::LinearIR<Traits>&, Isa);
} // namespace snippets::x64
#undef SNIPPETS_DETAIL_X64_EXTERN
#endif
