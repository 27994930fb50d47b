// SPDX-License-Identifier: Apache-2.0
// snippets/target/x64/codegen.hpp: the x86-64 code generator behind x64::Traits::emit.
//
// emit_kernel() writes a prepared Linear IR with the KernelEmitter of the ISA's register width
// into a CodeBuffer (W^X: written, then made read+execute once), growing the buffer when the
// code does not fit. scratch_registers() is how many vector registers the emitters of a kernel
// need for themselves, kept from the register allocator.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <type_traits>
#include <variant>

#include "snippets/error.hpp"
#include "snippets/ir/linear_ir.hpp"
#include "snippets/target/codegen.hpp"
#include "snippets/target/x64/code_buffer.hpp"
#include "snippets/target/x64/isa.hpp"
#include "snippets/target/x64/kernel_emitter.hpp"
#include "snippets/target/x64/memory_access.hpp"

namespace snippets::x64 {

/// Vector registers kept from the allocator: the most scratch any emitter in `lir` needs,
/// and on AVX2 at least one for tail masks.
template <class T> int scratch_registers(const ir::LinearIR<T>& lir, Isa isa) {
  // AVX2 tails need one for their mask; a dynamic tail computes its mask in one
  int n = isa == Isa::avx2 || lir.dynamic ? 1 : 0;
  // a converting store works in two (memory_access.hpp)
  for (std::size_t a = lir.num_inputs; a < lir.arg_types.size(); ++a)
    if (lir.arg_types[a] != ElementType::f32) n = std::max(n, converting_store_scratch);
  for (const auto& e : lir) // strided reads may gather: lane offsets (and the AVX2 mask)
    if (std::holds_alternative<ir::Parameter>(e->op) && !e->out_desc(0).layout.empty())
      n = std::max(n, isa == Isa::avx2 ? 2 : 1);
  for (const auto& e : lir)
    std::visit(
        [&](const auto& tag) {
          using Tag = std::decay_t<decltype(tag)>;
          if constexpr (HasEmitter<Tag>) n = std::max(n, Emitter<Tag>::scratch);
          if constexpr (ir::row_reduction<Tag>)
            n = std::max(n, Emitter<ir::HorizonReduce>::scratch); // and ReduceAccumulate
        },
        e->op);
  return n;
}

template <class T, class Vmm>
KernelCode emit_with(ir::LinearIR<T>& lir, const EmitRequest<T>& req) {
  std::size_t bytes = 16384 + 512 * lir.size();
  for (;;) {
    auto buf = std::make_shared<CodeBuffer>(bytes);
    KernelCode code;
    try {
      KernelEmitter<T, Vmm> emitter(*buf, lir, req.streaming, req.instrumentation);
      emitter.emit();
      code.map = emitter.code_map();
      code.text_bytes = emitter.text_bytes();
      code.store_loop_bytes_per_vector = emitter.store_loop_bytes_per_vector();
    } catch (const Xbyak::Error& err) {
      if (static_cast<int>(err) == Xbyak::ERR_CODE_IS_TOO_BIG && bytes < (1u << 26)) {
        bytes *= 4;
        continue;
      }
      raise("snippets.compile.codegen", std::string("code generation failed: ") + err.what());
    }
    code.fn = buf->template finalize<KernelFn>();
    code.bytes = {buf->getCode(), buf->getSize()};
    code.owner = std::move(buf);
    return code;
  }
}

template <class T>
KernelCode emit_kernel(ir::LinearIR<T>& lir, Isa isa, const EmitRequest<T>& req) {
  return isa == Isa::avx512 ? emit_with<T, Xbyak::Zmm>(lir, req)
                            : emit_with<T, Xbyak::Ymm>(lir, req);
}

} // namespace snippets::x64
