// SPDX-License-Identifier: Apache-2.0
// snippets/backend_traits.hpp: what a backend traits type must provide.
//
// Graphs, the tokenizer, Program and compile() are templated on a traits type T: the backend.
// BackendTraits<T> is what graphs and the tokenizer need, the conjunction of small concepts,
// each with its own fix-it message:
//  - NamedBackend:   static constexpr std::string_view name;           // "my_backend"
//  - ArgumentBudget: static constexpr int data_pointer_registers;      // most inputs + outputs
//                    of one kernel (at most max_kernel_args): the tokenizer's bound
//  - HostQuery:      static bool host_supported();                      // can run here now
//  - FusableOpSet:   template <class Op> static constexpr bool fusable; // tokenizer may take it
// and, optionally, `using extra_ops = ir::TypeList<MyOp, ...>;`: ops of its own (extra_ops.hpp).
// A backend that compiles kernels supplies its code generator too (target/codegen.hpp:
// CodeGenerator<T>); ReferenceBackend, which fuses nothing, does not.
// Optional hooks, read through the helpers at the end of this file:
//  - template <class Op> static bool supports(const Op&);  // attributes the backend accepts
//  - static bool io_type_supported(ElementType);            // kernel I/O types (default f32)
// Templates that take a traits type call check_backend_traits<T>() in a static_assert, so a
// mistake is one error that says what to write, not a page of substitution failures.
#pragma once

#include <concepts>
#include <string_view>
#include <type_traits>

#include "snippets/ir/extra_ops.hpp"
#include "snippets/ir/op_tags.hpp"
#include "snippets/support/kernel_limits.hpp"

namespace snippets {

namespace detail {
/// True when `&T::member` has type P of a static data member (a non-static one gives a member
/// pointer, which a requires-expression would otherwise accept in its unevaluated operands).
template <class P>
concept StaticMemberAddress = !std::is_member_pointer_v<P>;
} // namespace detail

// Each concept below also requires its members to be static and usable in constant
// expressions, as the comment above says; the `typename std::...<...>` lines check that.

template <class T>
concept NamedBackend = requires {
  requires detail::StaticMemberAddress<decltype(&T::name)>;
  { T::name } -> std::convertible_to<std::string_view>;
  typename std::bool_constant<(std::string_view(T::name), true)>;
};

template <class T>
concept ArgumentBudget = requires {
  requires detail::StaticMemberAddress<decltype(&T::data_pointer_registers)>;
  { T::data_pointer_registers } -> std::convertible_to<int>;
  typename std::integral_constant<int, static_cast<int>(T::data_pointer_registers)>;
  requires T::data_pointer_registers >= 1 && T::data_pointer_registers <= max_kernel_args;
};

template <class T>
concept HostQuery = requires {
  { T::host_supported() } -> std::same_as<bool>;
};

template <class T>
concept FusableOpSet = requires {
  // A plain `static constexpr bool fusable` makes `T::template fusable<...>` a hard error in
  // g++ 12 rather than a failed requirement, so rule it out first.
  requires !requires { T::fusable; };
  requires std::same_as < std::remove_cvref_t<decltype(T::template fusable<ir::Add>)>,
  bool > ;
  typename std::bool_constant<T::template fusable<ir::Add>>;
};

template <class T>
concept BackendTraits = NamedBackend<T> && ArgumentBudget<T> && HostQuery<T> && FusableOpSet<T>;

/// Reports the first missing piece of a traits type with the line to write. Use it as
/// `static_assert(check_backend_traits<T>());`. It returns true even after a failed check:
/// the failed static_assert inside already stops the build, and a false here would add a
/// second, message-less error at the caller.
template <class T> consteval bool check_backend_traits() {
  if constexpr (!NamedBackend<T>) {
    static_assert(detail::dependent_false<T>,
                  "snippets: backend traits need `static constexpr std::string_view name = "
                  "\"my_backend\";`");
  } else if constexpr (!ArgumentBudget<T>) {
    static_assert(detail::dependent_false<T>,
                  "snippets: backend traits need `static constexpr int data_pointer_registers "
                  "= N;` (the most inputs + outputs one kernel takes, 1 to max_kernel_args)");
  } else if constexpr (!HostQuery<T>) {
    static_assert(detail::dependent_false<T>,
                  "snippets: backend traits need `static bool host_supported();`");
  } else if constexpr (!FusableOpSet<T>) {
    static_assert(detail::dependent_false<T>,
                  "snippets: backend traits need `template <class Op> static constexpr bool "
                  "fusable = ...;` (false for every op the backend cannot put in a kernel)");
  } else {
    return ir::check_extra_ops<T>();
  }
  return true;
}

/// T::supports(op) when T has that hook, else true: may a kernel hold an op with these
/// attributes?
template <class T, class Op> bool backend_supports(const Op& op) {
  if constexpr (requires { T::supports(op); })
    return T::supports(op);
  else
    return true;
}

/// T::column_reductions when T has that hook, else false: does its HorizonReduce emitter take
/// `columns` (passes/tile_columns.hpp), so kernels may reduce over middle axes?
template <class T> constexpr bool backend_column_reductions() {
  if constexpr (requires { T::column_reductions; })
    return T::column_reductions;
  else
    return false;
}

/// T::io_type_supported(t) when T has that hook, else t == f32: may a kernel read or write t?
template <class T> bool backend_io_type_supported(ElementType t) {
  if constexpr (requires { T::io_type_supported(t); })
    return T::io_type_supported(t);
  else
    return t == ElementType::f32;
}

/// The traits of the reference path: it runs every op through the interpreter and fuses none.
struct ReferenceBackend {
  static constexpr std::string_view name = "reference";
  static constexpr int data_pointer_registers = 1;
  static bool host_supported() { return true; }
  template <class Op> static constexpr bool fusable = false;
};

} // namespace snippets
