// SPDX-License-Identifier: Apache-2.0
// snippets/ir/op.hpp: Op<T>, the variant of every op tag a Graph<T> node can hold.
//
// Op<T> holds the built-in tags (op_tags.hpp), the ops the traits add (T::extra_ops,
// extra_ops.hpp) and Subgraph<T>, whose body is a Graph<T> of the same backend traits. Helpers
// here are the only places that visit the variant by kind.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "snippets/ir/extra_ops.hpp"
#include "snippets/ir/op_tags.hpp"

namespace snippets::ir {

template <class T> class Graph;

/// A node whose body is a Graph: created by the tokenizer, run as one fused kernel.
/// `absorbed` keeps the names of the model ops it replaced, for errors and dumps.
template <class T> struct Subgraph {
  static constexpr std::string_view name = "Subgraph";
  static constexpr OpCategory category = OpCategory::special;
  static constexpr bool float_only = false;
  std::shared_ptr<const Graph<T>> body;
  std::vector<std::string> absorbed;
  bool operator==(const Subgraph&) const = default;
};

namespace detail {
template <class Last, class... Lists> struct ListsToVariant;
template <class Last, class... As> struct ListsToVariant<Last, TypeList<As...>> {
  using type = std::variant<As..., Last>;
};
template <class Last, class... As, class... Bs, class... Rest>
struct ListsToVariant<Last, TypeList<As...>, TypeList<Bs...>, Rest...>
    : ListsToVariant<Last, TypeList<As..., Bs...>, Rest...> {};
} // namespace detail

template <class T>
using Op = typename detail::ListsToVariant<Subgraph<T>, BuiltinOps, ExtraOps<T>>::type;

/// The tag's name, e.g. "Add".
template <class T> std::string_view op_name(const Op<T>& op) {
  return std::visit([](const auto& tag) { return std::decay_t<decltype(tag)>::name; }, op);
}

template <class T> OpCategory op_category(const Op<T>& op) {
  return std::visit([](const auto& tag) { return std::decay_t<decltype(tag)>::category; }, op);
}

/// True when `op` currently holds the tag `Tag`.
template <class Tag, class... Ts> bool is(const std::variant<Ts...>& op) {
  return std::holds_alternative<Tag>(op);
}
/// Whether `op` is a reduction a kernel computes in a reduce loop (op_tags.hpp: row_reduction).
template <class... Ts> bool is_row_reduction(const std::variant<Ts...>& op) {
  return std::visit([](const auto& tag) { return row_reduction<std::decay_t<decltype(tag)>>; }, op);
}

namespace detail {
template <class T, class List> struct DefaultOpByName;
template <class T, class... Ts> struct DefaultOpByName<T, TypeList<Ts...>> {
  template <class Tag> static bool make_one(std::string_view name, Op<T>& out) {
    // attribute-free ops, Result (its only attribute, the output layout, has a default) and Exp
    // (nonpositive is an optimization hint, off by default)
    if constexpr (std::is_empty_v<Tag> || std::is_same_v<Tag, Result> || std::is_same_v<Tag, Exp>) {
      if (Tag::name != name) return false;
      out = Tag{};
      return true;
    }
    return false;
  }
  // unused when the list is empty (traits without extra_ops)
  static bool make([[maybe_unused]] std::string_view name, [[maybe_unused]] Op<T>& out) {
    return (make_one<Ts>(name, out) || ...);
  }
};
} // namespace detail

/// The attribute-free built-in op (or op of T::extra_ops) named `name` ("Add", "Relu", ...), if
/// there is one.
template <class T> bool make_op_by_name(std::string_view name, Op<T>& out) {
  return detail::DefaultOpByName<T, BuiltinOps>::make(name, out) ||
         detail::DefaultOpByName<T, ExtraOps<T>>::make(name, out);
}

} // namespace snippets::ir
