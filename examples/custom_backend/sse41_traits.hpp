// SPDX-License-Identifier: Apache-2.0
// examples/custom_backend/sse41_traits.hpp: sse41::Traits, a second x86-64 backend (SSE4.1:
// 4 f32 lanes in 16 xmm registers, no AVX, no FMA, no opmasks) written only against the
// library's public seam: backend_traits.hpp (what the tokenizer asks) and target/codegen.hpp
// (the code generator and its register model).
//
// An op is fusable exactly when sse41::Emitter has a specialization for it; the tokenizer
// leaves the others (Tanh, reductions, MatMul, ...) outside the backend's Subgraphs. Kernel
// inputs and outputs are f32 (no io_type_supported hook). FusedMulAdd, which the lowering
// contracts from Multiply -> Add (CompileOptions::fma), is computed on f64 lanes: the
// reference's own rounding (sse41_emitters.hpp).
#pragma once

#include <string_view>

#include "custom_backend/sse41_codegen.hpp"
#include "custom_backend/sse41_emitters.hpp"
#include "snippets/backend_traits.hpp"
#include "snippets/target/codegen.hpp"

namespace sse41 {

enum class Isa { sse41 };

struct Traits {
  static constexpr std::string_view name = "sse41";
  /// Inputs + outputs of one kernel; the other general-purpose registers count loops.
  static constexpr int data_pointer_registers = 10;
  static bool host_supported() { return __builtin_cpu_supports("sse4.1"); }
  template <class Op> static constexpr bool fusable = HasEmitter<Op>;
  template <class Op> static bool supports(const Op& op) {
    if constexpr (requires { Emitter<Op>::supports(op); })
      return Emitter<Op>::supports(op);
    else
      return true;
  }

  using Variant = Isa;
  static Isa default_variant() { return Isa::sse41; }
  static bool runs_here(Isa) { return host_supported(); }
  static std::string_view variant_name(Isa) { return "sse41"; }
  static snippets::RegisterModel registers(Isa) {
    return {.lanes = lanes, .vector_registers = vector_registers, .gp_registers = usable_gprs};
  }
  template <class Self> static int scratch_registers(const snippets::ir::LinearIR<Self>& lir, Isa) {
    return sse41::scratch_registers(lir);
  }
  template <class Self>
  static snippets::KernelCode emit(snippets::ir::LinearIR<Self>& lir, Isa,
                                   const snippets::EmitRequest<Self>&) {
    return emit_kernel(lir);
  }
};

static_assert(snippets::check_code_generator<Traits>());

} // namespace sse41
