// SPDX-License-Identifier: Apache-2.0
// snippets/passes/pipeline.hpp: Pipeline<Ps...>, a compile-time list of passes that is
// itself a pass, plus the editing tools backends and users build their pipelines with.
//
//   using Mine = passes::insert_after_t<passes::DefaultControlFlow, passes::InsertLoops, MyPass>;
//   using Short = passes::MarkLoops | passes::FuseLoops;   // sugar for Pipeline<...>
//
// Each element is checked where the pipeline runs; a non-pass gives one static_assert that
// names the element and says what to add, not a page of substitution failures.
#pragma once

#include <type_traits>

#include "snippets/passes/pass.hpp"
#include "snippets/passes/verify.hpp"

namespace snippets::passes {

namespace detail {
using snippets::detail::dependent_false;

template <class P, class IR, class Ctx> consteval bool check_pass() {
  if constexpr (!requires { typename P::pass_tag; }) {
    static_assert(dependent_false<P>, "snippets: this Pipeline element is not a pass; add "
                                      "`using pass_tag = snippets::passes::lir_pass_tag;`");
    return false;
  } else if constexpr (!requires { P::name; }) {
    static_assert(dependent_false<P>, "snippets: this pass needs `static constexpr "
                                      "std::string_view name = \"MyPass\";`");
    return false;
  } else if constexpr (!LirPass<P, IR, Ctx>) {
    static_assert(dependent_false<P>, "snippets: this pass needs `template <class T> Preserved "
                                      "run(ir::LinearIR<T>&, PassContext<T>&) const`");
    return false;
  } else {
    return true;
  }
}
} // namespace detail

template <class... Ps> struct Pipeline {
  using pass_tag = lir_pass_tag;
  static constexpr std::string_view name = "Pipeline";

  template <class T> Preserved run(ir::LinearIR<T>& lir, PassContext<T>& ctx) const {
    if constexpr ((detail::check_pass<Ps, ir::LinearIR<T>, PassContext<T>>() && ...)) {
      (run_one<Ps>(lir, ctx), ...);
    }
    return Preserved::none;
  }

private:
  template <class P, class T> static void run_one(ir::LinearIR<T>& lir, PassContext<T>& ctx) {
    P{}.run(lir, ctx);
    if constexpr (!requires { typename P::is_pipeline; }) {
      ctx.trace.push_back(P::name);
      if (ctx.after_pass) ctx.after_pass(P::name, lir); // dump before verifying: see the bad IR
    }
    if (ctx.verify) verify(lir, P::name);
  }

public:
  using is_pipeline = void;
};

// ---- composition and editing (all at compile time) ----

namespace detail {
template <class A> struct AsList { using type = Pipeline<A>; };
template <class... Ps> struct AsList<Pipeline<Ps...>> { using type = Pipeline<Ps...>; };
template <class A, class B> struct Concat;
template <class... As, class... Bs> struct Concat<Pipeline<As...>, Pipeline<Bs...>> {
  using type = Pipeline<As..., Bs...>;
};

template <class Pipe, class Anchor, class New, bool after, class Done = Pipeline<>> struct Insert {
  static_assert(dependent_false<Anchor>, "snippets: the anchor pass is not in this pipeline");
};
// the anchor found: splice New in and stop
template <class Anchor, class... Ps, class New, bool after, class... Done>
struct Insert<Pipeline<Anchor, Ps...>, Anchor, New, after, Pipeline<Done...>> {
  using type = std::conditional_t<after, Pipeline<Done..., Anchor, New, Ps...>,
                                  Pipeline<Done..., New, Anchor, Ps...>>;
};
template <class P, class... Ps, class Anchor, class New, bool after, class... Done>
requires(!std::is_same_v<P, Anchor>) struct Insert<Pipeline<P, Ps...>, Anchor, New, after,
                                                   Pipeline<Done...>> {
  using type = typename Insert<Pipeline<Ps...>, Anchor, New, after, Pipeline<Done..., P>>::type;
};

template <class Pipe, class Drop, class Done = Pipeline<>> struct Remove;
template <class Drop, class... Done> struct Remove<Pipeline<>, Drop, Pipeline<Done...>> {
  using type = Pipeline<Done...>;
};
template <class P, class... Ps, class Drop, class... Done>
struct Remove<Pipeline<P, Ps...>, Drop, Pipeline<Done...>> {
  using type = typename Remove<
      Pipeline<Ps...>, Drop,
      std::conditional_t<std::is_same_v<P, Drop>, Pipeline<Done...>, Pipeline<Done..., P>>>::type;
};
} // namespace detail

template <class A, class B>
requires(
    requires { typename A::pass_tag; } && requires { typename B::pass_tag; }) constexpr auto
operator|(A, B) {
  return typename detail::Concat<typename detail::AsList<A>::type,
                                 typename detail::AsList<B>::type>::type{};
}

/// Pipe with New inserted right after (before) the first Anchor.
template <class Pipe, class Anchor, class New>
using insert_after_t = typename detail::Insert<Pipe, Anchor, New, true>::type;
template <class Pipe, class Anchor, class New>
using insert_before_t = typename detail::Insert<Pipe, Anchor, New, false>::type;
/// Pipe without any Drop.
template <class Pipe, class Drop> using remove_t = typename detail::Remove<Pipe, Drop>::type;
/// Pipe with Old replaced by New.
template <class Pipe, class Old, class New>
using replace_t = remove_t<insert_after_t<Pipe, Old, New>, Old>;

} // namespace snippets::passes
