// SPDX-License-Identifier: Apache-2.0
// snippets/ir/extra_ops.hpp: ops a user adds to a backend without editing the library.
//
// A backend's traits type may list ops of its own next to the built-in ones:
//
//   struct QuickGelu {                                   // in the user's namespace
//     static constexpr std::string_view name = "QuickGelu";
//     static constexpr ir::OpCategory category = ir::OpCategory::unary;  // or binary
//     static constexpr bool float_only = true;
//     bool operator==(const QuickGelu&) const = default;
//   };
//   double formula(const QuickGelu&, double x);          // its semantics, in double (found by ADL)
//   struct MyTraits : SomeBackendTraits { using extra_ops = ir::TypeList<QuickGelu>; };
//
// Graph<MyTraits> then holds QuickGelu nodes (g.make(QuickGelu{}, {x})): type inference follows
// the category (unary: the input's type and shape; binary: NUMPY broadcasting of two inputs of
// one type), the reference interpreter calls `formula`, the printers, DOT dumps and the kernel
// cache key show the name and, for an op with attributes, what its
//   void print_attributes(std::ostream&) const;   // every attribute, exactly ("k=v, ...")
// writes. A backend fuses it when its `fusable<QuickGelu>` says so (the x86-64 backend: when its
// Emitter<QuickGelu> is specialized; examples/squared_relu.hpp shows one); otherwise the op
// stays outside its kernels and runs on the reference interpreter.
// Mistakes stop the build with one message each (check_extra_ops): a list that is not a
// TypeList, an op missing a piece, an op listed twice, a name a built-in op already has.
#pragma once

#include <concepts>
#include <ostream>
#include <string_view>
#include <type_traits>

#include "snippets/error.hpp"
#include "snippets/ir/lowered_ops.hpp"
#include "snippets/ir/op_tags.hpp"

namespace snippets::ir {

namespace detail {
template <class L> inline constexpr bool is_type_list = false;
template <class... Ts> inline constexpr bool is_type_list<TypeList<Ts...>> = true;
template <class T> struct ExtraOpsOf { using type = TypeList<>; };
template <class T>
requires is_type_list<typename T::extra_ops>
struct ExtraOpsOf<T> {
  using type = typename T::extra_ops;
};
} // namespace detail

/// The ops traits type T adds (T::extra_ops), or an empty list (also when T::extra_ops is not a
/// TypeList: check_extra_ops reports that).
template <class T> using ExtraOps = typename detail::ExtraOpsOf<T>::type;

/// An op tag a user may add: named, elementwise (unary or binary), comparable, printable.
template <class Op>
concept ExtraOpTag = requires(const Op& op, std::ostream& os) {
  { Op::name } -> std::convertible_to<std::string_view>;
  { Op::category } -> std::convertible_to<OpCategory>;
  { Op::float_only } -> std::convertible_to<bool>;
  { op == op } -> std::convertible_to<bool>;
  requires Op::category == OpCategory::unary || Op::category == OpCategory::binary;
  requires std::is_empty_v<Op> || requires { op.print_attributes(os); };
};

/// Its formula for the reference interpreter, found by argument-dependent lookup.
template <class Op>
concept HasExtraOpFormula = (Op::category == OpCategory::unary &&
                             requires(const Op& op) {
                               { formula(op, 0.0) } -> std::convertible_to<double>;
                             }) ||
                            (Op::category == OpCategory::binary && requires(const Op& op) {
                              { formula(op, 0.0, 0.0) } -> std::convertible_to<double>;
                            });

namespace detail {
template <class Op, class... Ts> consteval int count_name(TypeList<Ts...>) {
  return ((Ts::name == std::string_view(Op::name) ? 1 : 0) + ... + 0);
}

/// One op of an extra_ops list, checked; each static_assert names what to write, and the
/// compiler's "required from" line names the op.
template <class Op, class List> consteval bool check_extra_op() {
  if constexpr (!ExtraOpTag<Op>) {
    static_assert(snippets::detail::dependent_false<Op>,
                  "snippets: an op in extra_ops needs `static constexpr std::string_view name; "
                  "static constexpr ir::OpCategory category = ir::OpCategory::unary (or binary); "
                  "static constexpr bool float_only; bool operator==(const Op&) const = default;` "
                  "and, if it has attributes, `void print_attributes(std::ostream&) const;`");
  } else if constexpr (!HasExtraOpFormula<Op>) {
    static_assert(snippets::detail::dependent_false<Op>,
                  "snippets: an op in extra_ops needs its reference semantics next to it: "
                  "`double formula(const Op&, double x);` (unary) or `double formula(const Op&, "
                  "double a, double b);` (binary), in the op's namespace");
  } else if constexpr (count_name<Op>(BuiltinOps{}) + count_name<Op>(LoweredOps{}) != 0 ||
                       Op::name == std::string_view("Subgraph")) {
    static_assert(snippets::detail::dependent_false<Op>,
                  "snippets: an op in extra_ops has the name of a built-in op; rename it");
  } else if constexpr (count_name<Op>(List{}) != 1) {
    static_assert(snippets::detail::dependent_false<Op>,
                  "snippets: extra_ops lists two ops of this name (or one op twice)");
  }
  return true;
}

template <class... Ts> consteval bool check_extra_op_list(TypeList<Ts...> list) {
  (void)list;
  return (check_extra_op<Ts, TypeList<Ts...>>() && ... && true);
}
} // namespace detail

/// Checks T::extra_ops, if T has one (check_backend_traits calls it).
template <class T> consteval bool check_extra_ops() {
  if constexpr (requires { typename T::extra_ops; }) {
    if constexpr (!detail::is_type_list<typename T::extra_ops>)
      static_assert(snippets::detail::dependent_false<T>,
                    "snippets: backend traits' extra_ops must be `ir::TypeList<MyOp, ...>`");
    else
      return detail::check_extra_op_list(ExtraOps<T>{});
  }
  return true;
}

} // namespace snippets::ir
