// SPDX-License-Identifier: Apache-2.0
// tests/mock_backend.hpp: traits types for tests.
//
//  - TraitsArchetype has exactly what snippets::BackendTraits requires and nothing more (the
//    Boost.Graph archetype idea): code that compiles with it uses only what the concept
//    promises. Keep it in step with backend_traits.hpp, never ahead of it.
//  - MockBackend fuses only Add and Relu, so tests can tell fusable ops from the rest. It
//    builds graphs only; RecordingBackend (recording_backend.hpp) is the test backend that
//    generates "code": the emitted sequence as text.
#pragma once

#include <string_view>
#include <type_traits>

#include "snippets/backend_traits.hpp"
#include "snippets/ir/op_tags.hpp"

namespace snippets::test {

struct TraitsArchetype {
  static constexpr std::string_view name = "archetype";
  static constexpr int data_pointer_registers = 1;
  static bool host_supported() { return false; }
  template <class Op> static constexpr bool fusable = false;
};

struct MockBackend {
  static constexpr std::string_view name = "mock";
  static constexpr int data_pointer_registers = 12;
  static bool host_supported() { return true; }
  template <class Op>
  static constexpr bool fusable = std::is_same_v<Op, ir::Add> || std::is_same_v<Op, ir::Relu>;
};

static_assert(BackendTraits<TraitsArchetype>);
static_assert(BackendTraits<MockBackend>);

} // namespace snippets::test
