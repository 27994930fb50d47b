// SPDX-License-Identifier: Apache-2.0
// snippets/target/aarch64/codegen.hpp: the AArch64 code generator behind aarch64::Traits::emit.
//
// emit_kernel() assembles a prepared Linear IR with the KernelEmitter into an AsmJit
// CodeHolder and copies it into a CodeBuffer (W^X: written, then made read+execute once).
// AsmJit reports an invalid instruction through the ErrorHandler here, which keeps the first
// error; any error becomes [snippets.compile.codegen] and no code is returned.
// scratch_registers() is how many vector registers the emitters of a kernel need for
// themselves, kept from the register allocator.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <type_traits>
#include <variant>

#include <asmjit/arm/a64assembler.h>
#include <asmjit/core.h>

#include "snippets/error.hpp"
#include "snippets/ir/linear_ir.hpp"
#include "snippets/target/aarch64/code_buffer.hpp"
#include "snippets/target/aarch64/emitters/eltwise.hpp"
#include "snippets/target/aarch64/emitters/reduce.hpp"
#include "snippets/target/aarch64/kernel_emitter.hpp"
#include "snippets/target/codegen.hpp"

namespace snippets::aarch64 {

/// Vector registers kept from the allocator: the most scratch any emitter in `lir` needs, at
/// least one (converting stores and tails of reductions work in it), three for a bf16 output.
/// compile() asks before the lowering passes run, so a Multiply and an Add count as the FusedMulAdd
/// they may become.
template <class T> int scratch_registers(const ir::LinearIR<T>& lir) {
  int n = 1;
  for (std::size_t a = lir.num_inputs; a < lir.arg_types.size(); ++a)
    if (lir.arg_types[a] == ElementType::bf16) n = 3; // a bf16 store rounds as Convert does
  for (const auto& e : lir)
    std::visit(
        [&](const auto& tag) {
          using Tag = std::decay_t<decltype(tag)>;
          if constexpr (HasEmitter<Tag>) n = std::max(n, Emitter<Tag>::scratch);
          if constexpr (ir::row_reduction<Tag> || std::is_same_v<Tag, ir::Softmax>)
            n = std::max(n, Emitter<ir::HorizonReduce>::scratch);
          if constexpr (std::is_same_v<Tag, ir::Multiply>)
            n = std::max(n, Emitter<ir::FusedMulAdd>::scratch);
        },
        e->op);
  return n;
}

namespace detail {
/// Keeps AsmJit's first error (AsmJit does not throw).
class FirstError : public asmjit::ErrorHandler {
public:
  void handleError(asmjit::Error, const char* message, asmjit::BaseEmitter*) override {
    if (message_.empty()) message_ = message;
  }
  const std::string& message() const { return message_; }

private:
  std::string message_;
};
} // namespace detail

template <class T> KernelCode emit_kernel(ir::LinearIR<T>& lir) {
  asmjit::CodeHolder holder;
  holder.init(asmjit::Environment(asmjit::Arch::kAArch64));
  detail::FirstError errors;
  holder.setErrorHandler(&errors);
  asmjit::a64::Assembler a(&holder);
  KernelEmitter<T> emitter(a, lir);
  emitter.emit();
  if (!errors.message().empty())
    raise("snippets.compile.codegen", "AArch64 code generation failed: " + errors.message());
  auto buf = std::make_shared<CodeBuffer>(holder);
  KernelCode code;
  code.text_bytes = emitter.text_bytes();
  code.fn = buf->template entry<KernelFn>();
  code.bytes = {buf->data(), buf->size()};
  code.owner = std::move(buf);
  return code;
}

} // namespace snippets::aarch64
