// SPDX-License-Identifier: Apache-2.0
// snippets/passes/pipeline.hpp: pipelines, compile-time lists of passes checked for order, and
// the tools users build theirs with.
//
//   using Mine = passes::insert_after_t<passes::DefaultLowering, passes::InsertLoops, MyPass>;
//   using Short = decltype(passes::MarkLoops{} | passes::FuseLoops{}); // Pipeline<...>
//
// Two kinds: `Pipeline<Ps...>` runs Linear IR passes (pass.hpp), `DataFlowPipeline<Ps...>`
// runs passes over a Subgraph body (data_flow.hpp); each is a pass of its kind, so pipelines
// nest, and `|` joins two passes or pipelines of one kind. `Select<Condition, Then, Else>`
// runs one of two Linear IR pipelines, chosen per body (the default lowering runs MatMul
// bodies through BrgemmLowering this way).
//
// Order is checked when a pipeline is run or compiled, from the properties each pass declares
// (properties.hpp): a pass that runs before a property it needs is established, or after one
// it must precede, stops the build with one static_assert whose instantiation names the pass
// and the property. A Select's two branches are checked from the same start; after it holds
// what both establish. compile() also checks that its pipelines end with what the conversion
// to a Linear IR (LinearIRNeeds) and emission (EmissionNeeds) read.
//
// Editing (insert_after_t, insert_before_t, remove_t, replace_t) acts on every occurrence of
// its anchor, at any depth: in nested pipelines and in both branches of a Select, so a pass
// inserted after InsertLoops runs on MatMul bodies too. An anchor found nowhere is an error.
// describe<P>() prints a pipeline, one pass per line.
#pragma once

#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "snippets/error.hpp"
#include "snippets/passes/data_flow.hpp"
#include "snippets/passes/pass.hpp"
#include "snippets/passes/properties.hpp"
#include "snippets/passes/verify.hpp"

namespace snippets::passes {

template <class... Ps> struct Pipeline;
template <class... Ps> struct DataFlowPipeline;
template <class Condition, class Then, class Else> struct Select;

// ---- the errors a pipeline out of order stops with (their arguments name pass and property) --

template <class Pass, class Property> struct pass_runs_before_a_property_it_needs {
  static_assert(snippets::detail::dependent_false<Pass>,
                "snippets: a pass of this pipeline runs before a property it needs is "
                "established (Pass and Property above); put the pass that establishes it first, "
                "or declare what your pass needs and establishes (passes/properties.hpp)");
};
template <class Pass, class Property> struct pass_runs_after_a_property_it_must_precede {
  static_assert(snippets::detail::dependent_false<Pass>,
                "snippets: a pass of this pipeline must run before the Property above is "
                "established (its `before` list), but runs after; move it earlier");
};
template <class Pipe, class Property> struct pipeline_ends_before_what_compile_reads {
  static_assert(snippets::detail::dependent_false<Pipe>,
                "snippets: compile() reads the Property above after this pipeline, but no pass "
                "of it establishes it (or a later one invalidates it): keep the pass that does");
};

template <class Pipe, class Element> struct pass_of_the_other_kind_in_this_pipeline {
  static_assert(snippets::detail::dependent_false<Pipe>,
                "snippets: a data-flow pass (on a Subgraph body) sits in a Linear IR Pipeline, or "
                "a Linear IR pass in a DataFlowPipeline (Element above): put it into a pipeline "
                "of its kind; compile<T, Lowering, DataFlow> takes one of each");
};

namespace detail {
using snippets::detail::dependent_false;

template <class P> inline constexpr bool is_list = false;
template <class... Ps> inline constexpr bool is_list<Pipeline<Ps...>> = true;
template <class... Ps> inline constexpr bool is_list<DataFlowPipeline<Ps...>> = true;
template <class P> inline constexpr bool is_select = false;
template <class C, class A, class B> inline constexpr bool is_select<Select<C, A, B>> = true;

struct Failed {}; // the state after an error: nothing more is checked

template <class State, class E> consteval auto step();

template <class State, class... Es> consteval auto fold_steps() {
  if constexpr (sizeof...(Es) == 0) {
    return std::type_identity<State>{};
  } else {
    return [&]<class E, class... Rest>(std::type_identity<E>, std::type_identity<Rest>...) {
      using Next = typename decltype(step<State, E>())::type;
      if constexpr (std::is_same_v<Next, Failed>)
        return std::type_identity<Failed>{};
      else
        return fold_steps<Next, Rest...>();
    }(std::type_identity<Es>{}...);
  }
}

template <class L, class E> consteval bool other_kind() {
  if constexpr (requires { typename E::pass_tag; })
    return !std::is_same_v<typename E::pass_tag, typename L::pass_tag>;
  else
    return false; // not a pass at all: reported where the pipeline runs
}

template <class L, class... Es> struct FirstOtherKind { using type = void; };
template <class L, class E, class... Es> struct FirstOtherKind<L, E, Es...> {
  using type = std::conditional_t<other_kind<L, E>(), E, typename FirstOtherKind<L, Es...>::type>;
};

template <class State, class L> struct ListSteps;
template <class State, template <class...> class L, class... Ps> struct ListSteps<State, L<Ps...>> {
  static consteval auto run() {
    using Bad = typename FirstOtherKind<L<Ps...>, Ps...>::type;
    if constexpr (!std::is_void_v<Bad>) {
      (void)sizeof(pass_of_the_other_kind_in_this_pipeline<L<Ps...>, Bad>);
      return std::type_identity<Failed>{};
    } else {
      return fold_steps<State, Ps...>();
    }
  }
};

/// The properties after running E from State (Failed once an error was reported).
template <class State, class E> consteval auto step() {
  if constexpr (is_list<E>) {
    return ListSteps<State, E>::run();
  } else if constexpr (is_select<E>) {
    using Then = typename decltype(step<State, typename E::then_type>())::type;
    if constexpr (std::is_same_v<Then, Failed>) {
      return std::type_identity<Failed>{};
    } else {
      using Else = typename decltype(step<State, typename E::else_type>())::type;
      if constexpr (std::is_same_v<Else, Failed>)
        return std::type_identity<Failed>{};
      else
        return std::type_identity<typename props::Intersect<Then, Else>::type>{};
    }
  } else {
    using Missing = typename props::FirstMissing<State, decltype(needs_of<E>())>::type;
    using Present = typename props::FirstPresent<State, decltype(before_of<E>())>::type;
    if constexpr (!std::is_void_v<Missing>) {
      (void)sizeof(pass_runs_before_a_property_it_needs<E, Missing>);
      return std::type_identity<Failed>{};
    } else if constexpr (!std::is_void_v<Present>) {
      (void)sizeof(pass_runs_after_a_property_it_must_precede<E, Present>);
      return std::type_identity<Failed>{};
    } else {
      using Kept = typename props::Minus<State, decltype(invalidates_of<E>())>::type;
      return std::type_identity<decltype(Kept{} + establishes_of<E>())>{};
    }
  }
}

/// Whether `P`'s order is right from `Start` and it ends with `Needed` (else: one error).
template <class P, class Start = Properties<>, class Needed = Properties<>>
consteval bool order_ok() {
  using End = typename decltype(step<Start, P>())::type;
  if constexpr (std::is_same_v<End, Failed>) {
    return false;
  } else {
    using Missing = typename props::FirstMissing<End, Needed>::type;
    if constexpr (!std::is_void_v<Missing>) {
      (void)sizeof(pipeline_ends_before_what_compile_reads<P, Missing>);
      return false;
    } else {
      return true;
    }
  }
}

template <class P, class IR, class Ctx> consteval bool check_lir_element() {
  if constexpr (!requires { typename P::pass_tag; }) {
    static_assert(dependent_false<P>, "snippets: this Pipeline element is not a pass; add "
                                      "`using pass_tag = snippets::passes::lir_pass_tag;`");
    return false;
  } else if constexpr (other_kind<Pipeline<>, P>()) {
    (void)sizeof(pass_of_the_other_kind_in_this_pipeline<Pipeline<>, P>);
    return false;
  } else if constexpr (is_select<P> || is_list<P>) {
    return true; // checked element by element where it runs
  } else if constexpr (!requires { P::name; }) {
    static_assert(dependent_false<P>, "snippets: this pass needs `static constexpr "
                                      "std::string_view name = \"MyPass\";`");
    return false;
  } else if constexpr (!LirPass<P, IR, Ctx>) {
    static_assert(dependent_false<P>, "snippets: this pass needs `template <class T> void "
                                      "run(ir::LinearIR<T>&, PassContext<T>&) const`");
    return false;
  } else {
    return true;
  }
}

template <class P, class T> consteval bool check_data_flow_element() {
  if constexpr (!requires { typename P::pass_tag; }) {
    static_assert(dependent_false<P>,
                  "snippets: this DataFlowPipeline element is not a pass; "
                  "add `using pass_tag = snippets::passes::data_flow_pass_tag;`");
    return false;
  } else if constexpr (other_kind<DataFlowPipeline<>, P>()) {
    (void)sizeof(pass_of_the_other_kind_in_this_pipeline<DataFlowPipeline<>, P>);
    return false;
  } else if constexpr (is_list<P>) {
    return true;
  } else if constexpr (!DataFlowPass<P, T>) {
    static_assert(dependent_false<P>,
                  "snippets: a data-flow pass needs `static constexpr std::string_view name` "
                  "and `template <class T> ir::Graph<T> run(const ir::Graph<T>&) const`");
    return false;
  } else {
    return true;
  }
}

/// One pass, run. Declared here and defined at the end of this file, out of line: not inline,
/// so snippets::prebuilt holds them for the default backend's passes
/// (snippets/extern_templates.hpp) and a pipeline of one's own compiles only what it adds.
template <class P, class T> void run_lir_pass(ir::LinearIR<T>& lir, PassContext<T>& ctx);
template <class P, class T> ir::Graph<T> run_data_flow_pass(const ir::Graph<T>& body);

/// Runs one element of a Linear IR pipeline: a pass (then the trace, the hook and the
/// verifier), a nested pipeline or a Select, the last two without checking order again.
template <class P, class T> void run_lir_element(ir::LinearIR<T>& lir, PassContext<T>& ctx) {
  if constexpr (!check_lir_element<P, ir::LinearIR<T>, PassContext<T>>()) {
    return;
  } else if constexpr (is_list<P> || is_select<P>) {
    P::run_unchecked(lir, ctx);
  } else {
    run_lir_pass<P>(lir, ctx);
    ctx.trace.push_back(P::name);
    if (ctx.after_pass) ctx.after_pass(P::name, lir); // dump before verifying: see the bad IR
    if (ctx.verify) verify(lir, P::name);
  }
}
} // namespace detail

/// Linear IR passes in order; itself a Linear IR pass.
template <class... Ps> struct Pipeline {
  using pass_tag = lir_pass_tag;
  static constexpr std::string_view name = "Pipeline";

  /// Runs the passes on `lir`, a Linear IR just converted from a body (order checked from no
  /// properties at all).
  template <class T> void run(ir::LinearIR<T>& lir, PassContext<T>& ctx) const {
    if constexpr (detail::order_ok<Pipeline>()) run_unchecked(lir, ctx);
  }
  template <class T> static void run_unchecked(ir::LinearIR<T>& lir, PassContext<T>& ctx) {
    (detail::run_lir_element<Ps>(lir, ctx), ...);
  }
};

/// Runs `Then` on Linear IRs `Condition::test` accepts and `Else` on the others. A condition
/// is a struct with `static constexpr std::string_view name` and
/// `template <class T> static bool test(const ir::LinearIR<T>&)`.
template <class Condition, class Then, class Else> struct Select {
  using pass_tag = lir_pass_tag;
  using then_type = Then;
  using else_type = Else;
  static constexpr std::string_view name = "Select";
  static constexpr std::string_view condition_name() { return Condition::name; }

  template <class T> void run(ir::LinearIR<T>& lir, PassContext<T>& ctx) const {
    if constexpr (detail::order_ok<Select>()) run_unchecked(lir, ctx);
  }
  template <class T> static void run_unchecked(ir::LinearIR<T>& lir, PassContext<T>& ctx) {
    if (Condition::test(std::as_const(lir)))
      detail::run_lir_element<Then>(lir, ctx);
    else
      detail::run_lir_element<Else>(lir, ctx);
  }
};

/// Data-flow passes in order; itself a data-flow pass. The result has no dead nodes.
template <class... Ps> struct DataFlowPipeline {
  using pass_tag = data_flow_pass_tag;
  static constexpr std::string_view name = "DataFlowPipeline";

  template <class T> ir::Graph<T> run(const ir::Graph<T>& body) const { return run(body, nullptr); }
  /// As run(), and appends the name of each pass to `trace`.
  template <class T>
  ir::Graph<T> run(const ir::Graph<T>& body, std::vector<std::string_view>* trace) const {
    if constexpr (detail::order_ok<DataFlowPipeline>())
      return remove_dead_nodes(run_unchecked<T>(body, trace));
    else
      return body;
  }
  template <class T>
  static ir::Graph<T> run_unchecked(const ir::Graph<T>& body,
                                    std::vector<std::string_view>* trace) {
    return run_from<T, Ps...>(body, trace);
  }

private:
  template <class T, class P = void, class... Rest>
  static ir::Graph<T> run_from(const ir::Graph<T>& body, std::vector<std::string_view>* trace) {
    if constexpr (std::is_void_v<P>) {
      return body;
    } else if constexpr (detail::check_data_flow_element<P, T>()) {
      ir::Graph<T> next = [&] {
        if constexpr (detail::is_list<P>) {
          return P::template run_unchecked<T>(body, trace);
        } else {
          ir::Graph<T> g = detail::run_data_flow_pass<P>(body);
          if (trace) trace->push_back(P::name);
          return g;
        }
      }();
      if constexpr (sizeof...(Rest) == 0)
        return next;
      else
        return run_from<T, Rest...>(next, trace);
    } else {
      return ir::Graph<T>{};
    }
  }
};

// ---- composition and editing (all at compile time) ----

namespace detail {
template <class... Es> struct Pack {};
template <class... Packs> struct Cat { using type = Pack<>; };
template <class... As> struct Cat<Pack<As...>> { using type = Pack<As...>; };
template <class... As, class... Bs, class... Rest> struct Cat<Pack<As...>, Pack<Bs...>, Rest...> {
  using type = typename Cat<Pack<As..., Bs...>, Rest...>::type;
};

template <template <class...> class L, class P> struct Rewrap;
template <template <class...> class L, class... Es> struct Rewrap<L, Pack<Es...>> {
  using type = L<Es...>;
};

/// Occurrences of A in E, E included, at any depth.
template <class E, class A> struct Count : std::integral_constant<int, std::is_same_v<E, A>> {};
template <template <class...> class L, class... Ps, class A>
requires(is_list<L<Ps...>> && !std::is_same_v<L<Ps...>, A>) struct Count<L<Ps...>, A>
    : std::integral_constant<int, (0 + ... + Count<Ps, A>::value)> {
};
template <class C, class X, class Y, class A>
requires(!std::is_same_v<Select<C, X, Y>, A>) struct Count<Select<C, X, Y>, A>
    : std::integral_constant<int, Count<X, A>::value + Count<Y, A>::value> {
};

enum class EditKind { insert_after, insert_before, remove, replace };

/// What E becomes: the elements that take its place in its list.
template <class E, class A, class New, EditKind K> struct EditElement { using type = Pack<E>; };
template <class E, class New, EditKind K> struct EditAnchor;
template <class E, class New> struct EditAnchor<E, New, EditKind::insert_after> {
  using type = Pack<E, New>;
};
template <class E, class New> struct EditAnchor<E, New, EditKind::insert_before> {
  using type = Pack<New, E>;
};
template <class E, class New> struct EditAnchor<E, New, EditKind::remove> { using type = Pack<>; };
template <class E, class New> struct EditAnchor<E, New, EditKind::replace> {
  using type = Pack<New>;
};
template <class A, class New, EditKind K> struct EditElement<A, A, New, K> {
  using type = typename EditAnchor<A, New, K>::type;
};
template <template <class...> class L, class... Ps, class A, class New, EditKind K>
requires(is_list<L<Ps...>> &&
         !std::is_same_v<L<Ps...>, A>) struct EditElement<L<Ps...>, A, New, K> {
  using type = Pack<
      typename Rewrap<L, typename Cat<typename EditElement<Ps, A, New, K>::type...>::type>::type>;
};
/// One element in place of a Select branch: a list when the edit left zero or several.
template <class P> struct OneElement { using type = typename Rewrap<Pipeline, P>::type; };
template <class E> struct OneElement<Pack<E>> { using type = E; };
template <class C, class X, class Y, class A, class New, EditKind K>
requires(!std::is_same_v<Select<C, X, Y>, A>) struct EditElement<Select<C, X, Y>, A, New, K> {
  using type = Pack<Select<C, typename OneElement<typename EditElement<X, A, New, K>::type>::type,
                           typename OneElement<typename EditElement<Y, A, New, K>::type>::type>>;
};

template <class Pipe, class Anchor, class New, EditKind K> struct Edit {
  static_assert(is_list<Pipe> || is_select<Pipe>,
                "snippets: edit a Pipeline, a DataFlowPipeline or a Select, not a single pass");
  static_assert(Count<Pipe, Anchor>::value > 0,
                "snippets: the anchor pass is not in this pipeline, nor in any pipeline or "
                "Select branch nested in it");
  using type = typename OneElement<typename EditElement<Pipe, Anchor, New, K>::type>::type;
};

template <class A> struct AsList { using type = Pipeline<A>; };
template <class... Ps> struct AsList<Pipeline<Ps...>> { using type = Pipeline<Ps...>; };
template <class A> struct AsDataFlowList { using type = DataFlowPipeline<A>; };
template <class... Ps> struct AsDataFlowList<DataFlowPipeline<Ps...>> {
  using type = DataFlowPipeline<Ps...>;
};
template <class A, class B> struct Concat;
template <template <class...> class L, class... As, class... Bs> struct Concat<L<As...>, L<Bs...>> {
  using type = L<As..., Bs...>;
};

template <class P> void describe_into(std::string& out, int depth) {
  const std::string indent(static_cast<std::size_t>(depth) * 2, ' ');
  if constexpr (is_list<P>) {
    [&]<template <class...> class L, class... Ps>(std::type_identity<L<Ps...>>) {
      (describe_into<Ps>(out, depth), ...);
    }(std::type_identity<P>{});
  } else if constexpr (is_select<P>) {
    out += indent + "if " + std::string(P::condition_name()) + ":\n";
    describe_into<typename P::then_type>(out, depth + 1);
    out += indent + "else:\n";
    describe_into<typename P::else_type>(out, depth + 1);
  } else if constexpr (requires { P::name; }) {
    out += indent + std::string(P::name) + "\n";
  } else {
    out += indent + "(not a pass)\n"; // reported where the pipeline runs
  }
}
} // namespace detail

/// A and B joined into one pipeline of their kind (passes or pipelines, flattened one level).
template <class A, class B>
requires(
    requires { typename A::pass_tag; } && requires { typename B::pass_tag; }) constexpr auto
operator|(A, B) {
  if constexpr (!std::is_same_v<typename A::pass_tag, typename B::pass_tag>) {
    static_assert(snippets::detail::dependent_false<A>,
                  "snippets: `|` joins passes of one kind: a data-flow pass "
                  "(Subgraph body) and a Linear IR pass go into different "
                  "pipelines (compile<T, Lowering, DataFlow>)");
    return Pipeline<>{};
  } else if constexpr (std::is_same_v<typename A::pass_tag, data_flow_pass_tag>) {
    return typename detail::Concat<typename detail::AsDataFlowList<A>::type,
                                   typename detail::AsDataFlowList<B>::type>::type{};
  } else {
    return typename detail::Concat<typename detail::AsList<A>::type,
                                   typename detail::AsList<B>::type>::type{};
  }
}

/// Pipe with New inserted right after (before) every Anchor, at any depth.
template <class Pipe, class Anchor, class New>
using insert_after_t =
    typename detail::Edit<Pipe, Anchor, New, detail::EditKind::insert_after>::type;
template <class Pipe, class Anchor, class New>
using insert_before_t =
    typename detail::Edit<Pipe, Anchor, New, detail::EditKind::insert_before>::type;
/// Pipe without any Drop.
template <class Pipe, class Drop>
using remove_t = typename detail::Edit<Pipe, Drop, void, detail::EditKind::remove>::type;
/// Pipe with every Old replaced by New.
template <class Pipe, class Old, class New>
using replace_t = typename detail::Edit<Pipe, Old, New, detail::EditKind::replace>::type;

/// The passes of P in the order they run, one per line; nested pipelines are flattened and a
/// Select shows its condition and both branches, indented.
template <class P> const std::string& describe() {
  static const std::string text = [] {
    std::string out;
    detail::describe_into<P>(out, 0);
    return out;
  }();
  return text;
}

namespace detail {
template <class P, class T> void run_lir_pass(ir::LinearIR<T>& lir, PassContext<T>& ctx) {
  P{}.run(lir, ctx);
}
template <class P, class T> ir::Graph<T> run_data_flow_pass(const ir::Graph<T>& body) {
  return P{}.run(body);
}
} // namespace detail

} // namespace snippets::passes
