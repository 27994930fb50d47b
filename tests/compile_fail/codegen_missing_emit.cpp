// SPDX-License-Identifier: Apache-2.0
// Everything but the code generator itself.
// expected-error: to compile kernels, backend traits need .template <class Self> static KernelCode emit
#include "snippets/compile.hpp"

enum class Isa { only };

struct Partial {
  static constexpr std::string_view name = "partial";
  static constexpr int data_pointer_registers = 4;
  static bool host_supported() { return true; }
  template <class Op> static constexpr bool fusable = false;
  using Variant = Isa;
  static Isa default_variant() { return Isa::only; }
  static bool runs_here(Isa) { return true; }
  static std::string_view variant_name(Isa) { return "only"; }
  static snippets::RegisterModel registers(Isa) { return {4, 16, 8}; }
  template <class Self> static int scratch_registers(const snippets::ir::LinearIR<Self>&, Isa) {
    return 0;
  }
};

int main() {
  snippets::ir::Graph<Partial> g;
  return static_cast<int>(snippets::compile(g).signature().domain.size());
}
