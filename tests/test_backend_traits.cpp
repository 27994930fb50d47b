// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <string_view>

#include "mock_backend.hpp"
#include "snippets/backend_traits.hpp"
#include "snippets/ir/graph.hpp"
#include "snippets/ir/printer.hpp"

using namespace snippets;
using snippets::test::MockBackend;
using snippets::test::TraitsArchetype;

// Near misses: each lacks or gets wrong exactly one requirement of the archetype. A named
// namespace, so that clang does not flag their never-read members as unused.
namespace near_miss {
struct NonStaticName {
  std::string_view name = "x";
  static constexpr int data_pointer_registers = 1;
  static bool host_supported() { return true; }
  template <class Op> static constexpr bool fusable = false;
};
struct IntName {
  static constexpr int name = 3;
  static constexpr int data_pointer_registers = 1;
  static bool host_supported() { return true; }
  template <class Op> static constexpr bool fusable = false;
};
struct MissingBudget {
  static constexpr std::string_view name = "x";
  static bool host_supported() { return true; }
  template <class Op> static constexpr bool fusable = false;
};
struct RuntimeBudget {
  static constexpr std::string_view name = "x";
  static inline int data_pointer_registers = 1; // not a constant expression
  static bool host_supported() { return true; }
  template <class Op> static constexpr bool fusable = false;
};
struct BudgetBeyondAbi {
  static constexpr std::string_view name = "x";
  static constexpr int data_pointer_registers = max_kernel_args + 1; // CallArgs has no room
  static bool host_supported() { return true; }
  template <class Op> static constexpr bool fusable = false;
};
struct MemberHostQuery {
  static constexpr std::string_view name = "x";
  static constexpr int data_pointer_registers = 1;
  bool host_supported() const { return true; }
  template <class Op> static constexpr bool fusable = false;
};
struct IntHostQuery {
  static constexpr std::string_view name = "x";
  static constexpr int data_pointer_registers = 1;
  static int host_supported() { return 1; }
  template <class Op> static constexpr bool fusable = false;
};
struct PlainFusable {
  static constexpr std::string_view name = "x";
  static constexpr int data_pointer_registers = 1;
  static bool host_supported() { return true; }
  static constexpr bool fusable = false;
};
struct FunctionFusable {
  static constexpr std::string_view name = "x";
  static constexpr int data_pointer_registers = 1;
  static bool host_supported() { return true; }
  template <class Op> static constexpr bool fusable() { return false; }
};
struct RuntimeFusable {
  static constexpr std::string_view name = "x";
  static constexpr int data_pointer_registers = 1;
  static bool host_supported() { return true; }
  template <class Op> static inline bool fusable = false;
};

} // namespace near_miss

using namespace near_miss;

static_assert(BackendTraits<TraitsArchetype>);
static_assert(BackendTraits<MockBackend>);
static_assert(BackendTraits<ReferenceBackend>);
static_assert(check_backend_traits<TraitsArchetype>());
static_assert(check_backend_traits<MockBackend>());

static_assert(!NamedBackend<NonStaticName> && !BackendTraits<NonStaticName>);
static_assert(!NamedBackend<IntName>);
static_assert(NamedBackend<MissingBudget> && !ArgumentBudget<MissingBudget>);
static_assert(!ArgumentBudget<RuntimeBudget>);
static_assert(!ArgumentBudget<BudgetBeyondAbi>);
static_assert(!HostQuery<MemberHostQuery>);
static_assert(!HostQuery<IntHostQuery>);
static_assert(HostQuery<PlainFusable> && !FusableOpSet<PlainFusable>);
static_assert(!FusableOpSet<FunctionFusable>);
static_assert(!FusableOpSet<RuntimeFusable>);
static_assert(!BackendTraits<int>);

TEST_CASE("the archetype has exactly what BackendTraits needs and a Graph builds on it") {
  ir::Graph<TraitsArchetype> g;
  const auto x = g.parameter(ElementType::f32, {2, dynamic}, "x");
  const auto r = g.relu(x);
  const auto y = g.add(r, g.scalar(ElementType::f32, 1.0, {}, "one"));
  g.result(y, "out");
  CHECK(g.size() == 5);
  CHECK(ir::to_string(g) == "%0 = Parameter 'x'() -> f32[2,?]\n"
                            "%1 = Relu 'Relu_1'(%0:0) -> f32[2,?]\n"
                            "%2 = Scalar 'one'() {value=1} -> f32[]\n"
                            "%3 = Add 'Add_3'(%1:0, %2:0) -> f32[2,?]\n"
                            "%4 = Result 'out'(%3:0)\n");
  CHECK(g.topological_order().size() == 5);
  CHECK(g.make("Relu", {x}).size() == 1); // make by name reads the traits' name on error only
  const auto before = ir::to_string(g);
  try {
    g.make("Nope", {x});
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.id() == "snippets.graph.unknown_op");
    CHECK(std::string(e.what()).find("backend 'archetype'") != std::string::npos);
  }
  CHECK(ir::to_string(g) == before);
  CHECK_FALSE(TraitsArchetype::host_supported());
}

TEST_CASE("MockBackend fuses Add and Relu only") {
  using namespace snippets::ir;
  CHECK(MockBackend::fusable<Add>);
  CHECK(MockBackend::fusable<Relu>);
  CHECK_FALSE(MockBackend::fusable<Multiply>);
  CHECK_FALSE(MockBackend::fusable<Exp>);
  CHECK_FALSE(MockBackend::fusable<Clamp>);
  CHECK_FALSE(MockBackend::fusable<Parameter>);
  CHECK_FALSE(MockBackend::fusable<Result>);
  CHECK_FALSE(MockBackend::fusable<Opaque>);
  CHECK_FALSE(MockBackend::fusable<Subgraph<MockBackend>>);
  int fused = 0;
  [&]<class... Ts>(TypeList<Ts...>) {
    ((fused += MockBackend::fusable<Ts> ? 1 : 0), ...);
  }(BuiltinOps{});
  CHECK(fused == 2);
  CHECK(MockBackend::name == "mock");
  CHECK(MockBackend::host_supported());
}

TEST_CASE("the reference backend fuses nothing and runs everywhere") {
  int fused = 0;
  [&]<class... Ts>(ir::TypeList<Ts...>) {
    ((fused += ReferenceBackend::fusable<Ts> ? 1 : 0), ...);
  }(ir::BuiltinOps{});
  CHECK(fused == 0);
  CHECK(ReferenceBackend::host_supported());
  CHECK(ReferenceBackend::name == "reference");
}
