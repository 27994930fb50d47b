// snippets/backend_traits.hpp: what a backend traits type must provide.
//
// Everything from Graph to CompiledKernel is templated on a traits type T. BackendTraits<T>
// is the conjunction of small concepts, each with its own fix-it message:
//  - NamedBackend:   static constexpr std::string_view name;           // "x64_avx512", ...
//  - RegisterBudget: static constexpr int vector_registers, vector_bytes, gp_registers,
//                    data_pointer_registers;  // the last bounds a Subgraph's inputs + outputs
//  - HostQuery:      static bool host_supported();                      // can run here now
//  - FusableOpSet:   template <class Op> static constexpr bool fusable; // tokenizer may take it
// Later stages add the emitter table and code buffer requirements (see DESIGN.md section 5).
// Templates that take a traits type call check_backend_traits<T>() in a static_assert, so a
// mistake is one error that says what to write, not a page of substitution failures.
#pragma once

#include <concepts>
#include <string_view>

#include "snippets/ir/op_tags.hpp"

namespace snippets {

template <class T>
concept NamedBackend = requires {
  { T::name } -> std::convertible_to<std::string_view>;
};

template <class T>
concept RegisterBudget = requires {
  { T::vector_registers } -> std::convertible_to<int>;
  { T::vector_bytes } -> std::convertible_to<int>;
  { T::gp_registers } -> std::convertible_to<int>;
  { T::data_pointer_registers } -> std::convertible_to<int>;
};

template <class T>
concept HostQuery = requires {
  { T::host_supported() } -> std::same_as<bool>;
};

template <class T>
concept FusableOpSet = requires {
  { T::template fusable<ir::Add> } -> std::convertible_to<bool>;
};

template <class T>
concept BackendTraits = NamedBackend<T> && RegisterBudget<T> && HostQuery<T> && FusableOpSet<T>;

namespace detail {
template <class> inline constexpr bool dependent_false = false;
}

/// Reports the first missing piece of a traits type with the line to write; true when none.
template <class T> consteval bool check_backend_traits() {
  if constexpr (!NamedBackend<T>) {
    static_assert(detail::dependent_false<T>,
                  "snippets: backend traits need `static constexpr std::string_view name = "
                  "\"my_backend\";`");
    return false;
  } else if constexpr (!RegisterBudget<T>) {
    static_assert(detail::dependent_false<T>,
                  "snippets: backend traits need `static constexpr int vector_registers, "
                  "vector_bytes, gp_registers, data_pointer_registers;`");
    return false;
  } else if constexpr (!HostQuery<T>) {
    static_assert(detail::dependent_false<T>,
                  "snippets: backend traits need `static bool host_supported();`");
    return false;
  } else if constexpr (!FusableOpSet<T>) {
    static_assert(detail::dependent_false<T>,
                  "snippets: backend traits need `template <class Op> static constexpr bool "
                  "fusable = ...;` (false for every op the backend cannot put in a kernel)");
    return false;
  } else {
    return true;
  }
}

/// The traits of the reference path: it runs every op through the interpreter and fuses none.
struct ReferenceBackend {
  static constexpr std::string_view name = "reference";
  static constexpr int vector_registers = 0;
  static constexpr int vector_bytes = 8;
  static constexpr int gp_registers = 0;
  static constexpr int data_pointer_registers = 0;
  static bool host_supported() { return true; }
  template <class Op> static constexpr bool fusable = false;
};

} // namespace snippets
