// SPDX-License-Identifier: Apache-2.0
// snippets/ir/op.hpp: Op<T>, the variant of every op tag a Graph<T> node can hold.
//
// Op<T> holds the built-in tags (op_tags.hpp) plus Subgraph<T>, whose body is a Graph<T> of
// the same backend traits. Helpers here are the only places that visit the variant by kind.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

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
template <class List, class Extra> struct AppendToVariant;
template <class... Ts, class Extra> struct AppendToVariant<TypeList<Ts...>, Extra> {
  using type = std::variant<Ts..., Extra>;
};
} // namespace detail

template <class T> using Op = typename detail::AppendToVariant<BuiltinOps, Subgraph<T>>::type;

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

namespace detail {
template <class T, class List> struct DefaultOpByName;
template <class T, class... Ts> struct DefaultOpByName<T, TypeList<Ts...>> {
  static bool make(std::string_view name, Op<T>& out) {
    // attribute-free ops, Result (its only attribute, the output layout, has a default) and Exp
    // (nonpositive is an optimization hint, off by default)
    return ((Ts::name == name &&
                     (std::is_empty_v<Ts> || std::is_same_v<Ts, Result> || std::is_same_v<Ts, Exp>)
                 ? (out = Ts{}, true)
                 : false) ||
            ...);
  }
};
} // namespace detail

/// The attribute-free built-in op named `name` ("Add", "Relu", ...), if there is one.
template <class T> bool make_op_by_name(std::string_view name, Op<T>& out) {
  return detail::DefaultOpByName<T, BuiltinOps>::make(name, out);
}

} // namespace snippets::ir
