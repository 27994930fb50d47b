// SPDX-License-Identifier: Apache-2.0
// For the codegen_missing_*.cpp compile-fail tests: a backend's graph half, complete, then the
// code generator's pieces added one by one, and the compile() that checks them. Each test
// compiles with the first piece missing.
#pragma once

#include "snippets/compile.hpp"

enum class Isa { only };

struct GraphHalf {
  static constexpr std::string_view name = "partial";
  static constexpr int data_pointer_registers = 4;
  static bool host_supported() { return true; }
  template <class Op> static constexpr bool fusable = false;
};

struct WithVariantQueries : GraphHalf {
  using Variant = Isa;
  static Isa default_variant() { return Isa::only; }
  static bool runs_here(Isa) { return true; }
  static std::string_view variant_name(Isa) { return "only"; }
};

struct WithRegisterModel : WithVariantQueries {
  static snippets::RegisterModel registers(Isa) { return {4, 16, 8}; }
  template <class Self> static int scratch_registers(const snippets::ir::LinearIR<Self>&, Isa) {
    return 0;
  }
};

template <class Traits> int compile_graph() {
  snippets::ir::Graph<Traits> g;
  return static_cast<int>(snippets::compile(g).signature().domain.size());
}
