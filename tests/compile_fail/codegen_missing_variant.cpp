// SPDX-License-Identifier: Apache-2.0
// Graph traits without a code generator cannot compile(): the first missing piece is Variant.
// expected-error: to compile kernels, backend traits need .using Variant = MyIsa
#include "snippets/compile.hpp"

enum class Isa { only };

struct Partial {
  static constexpr std::string_view name = "partial";
  static constexpr int data_pointer_registers = 4;
  static bool host_supported() { return true; }
  template <class Op> static constexpr bool fusable = false;
};

int main() {
  snippets::ir::Graph<Partial> g;
  return static_cast<int>(snippets::compile(g).signature().domain.size());
}
