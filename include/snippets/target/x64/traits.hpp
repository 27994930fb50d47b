// SPDX-License-Identifier: Apache-2.0
// snippets/target/x64/traits.hpp: the backend traits of the x86-64 target.
//
// One traits type covers AVX2 and AVX-512: the ISA is chosen when a kernel is compiled
// (CompileOptions::isa, default best_host_isa()). The register budget states the larger ISA;
// passes read the chosen ISA's numbers from the LoweringConfig. An op is fusable exactly when
// it has an Emitter specialization (a derived traits type that claims more fusable ops gets a
// compile error naming the op without an emitter).
#pragma once

#include <string_view>
#include <type_traits>

#include "snippets/backend_traits.hpp"
#include "snippets/ir/element_type.hpp"
#include "snippets/target/x64/abi.hpp"
#include "snippets/target/x64/emitters/activation.hpp"
#include "snippets/target/x64/emitters/arith.hpp"
#include "snippets/target/x64/emitters/eltwise.hpp"
#include "snippets/target/x64/emitters/reduce.hpp"
#include "snippets/target/x64/isa.hpp"

namespace snippets::x64 {

struct Traits {
  static constexpr std::string_view name = "x64";
  static constexpr int vector_registers = 32;
  static constexpr int vector_bytes = 64;
  static constexpr int gp_registers = usable_gprs;
  /// Inputs + outputs of one kernel; the rest of the usable GPRs count loops.
  static constexpr int data_pointer_registers = 10;
  static bool host_supported() { return host_supports(Isa::avx2); }
  /// Ops with an emitter, the reductions the default pipelines lower to emitted ops
  /// (passes/decompose_softmax.hpp, passes/decompose_reductions.hpp), and MatMul, which
  /// becomes a Brgemm (passes/lower_brgemm.hpp).
  template <class Op>
  static constexpr bool fusable =
      HasEmitter<Op> || std::is_same_v<Op, ir::ReduceSum> || std::is_same_v<Op, ir::ReduceMax> ||
      std::is_same_v<Op, ir::Softmax> || std::is_same_v<Op, ir::MatMul>;
  /// Whether the emitter accepts these attributes (optional hook, read by the tokenizer and
  /// compile()). Reductions keep their dimension and reduce one axis (which must be the
  /// innermost: passes::innermost_reduction, checked where the input's rank is known).
  template <class Op> static bool supports(const Op& op) {
    if constexpr (requires { op.keep_dims; })
      return op.keep_dims && op.axes.size() == 1;
    else
      return emitter_supports(op);
  }
  /// Element types a kernel reads and writes (optional hook; f32 when a traits type omits it).
  /// Loads and stores convert to and from f32 (memory_access.hpp); boolean is not stored.
  static bool io_type_supported(ElementType t) { return t != ElementType::boolean; }
};

static_assert(check_backend_traits<Traits>());

} // namespace snippets::x64
