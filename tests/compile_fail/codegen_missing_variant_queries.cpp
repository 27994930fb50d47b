// SPDX-License-Identifier: Apache-2.0
// A Variant without the queries that choose one.
// expected-error: to compile kernels, backend traits need .static Variant default_variant
#include "snippets/compile.hpp"

enum class Isa { only };

struct Partial {
  static constexpr std::string_view name = "partial";
  static constexpr int data_pointer_registers = 4;
  static bool host_supported() { return true; }
  template <class Op> static constexpr bool fusable = false;
  using Variant = Isa;
};

int main() {
  snippets::ir::Graph<Partial> g;
  return static_cast<int>(snippets::compile(g).signature().domain.size());
}
