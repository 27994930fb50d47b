// SPDX-License-Identifier: Apache-2.0
// snippets/support/function_ref.hpp: FunctionRef<R(A...)>, a non-owning reference to a
// callable (the shape of C++26's std::function_ref).
//
// Loops that take a callback through it are compiled once, not once per lambda as a template
// parameter would, and without std::function's allocation and manager. The callable must
// outlive the reference: pass lambdas as arguments, never store a FunctionRef to a temporary.
#pragma once

#include <memory>
#include <type_traits>
#include <utility>

namespace snippets {

template <class Signature> class FunctionRef;

template <class R, class... A> class FunctionRef<R(A...)> {
public:
  template <class F>
  requires(!std::is_same_v<std::remove_cvref_t<F>, FunctionRef> &&
           std::is_invocable_r_v<R, F&, A...>) FunctionRef(F&& f)
  noexcept // NOLINT(google-explicit-constructor): a callable converts
      : object_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
        call_([](void* object, A... args) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(object))(std::forward<A>(args)...);
        }) {}

  R operator()(A... args) const { return call_(object_, std::forward<A>(args)...); }

private:
  void* object_;
  R (*call_)(void*, A...);
};

} // namespace snippets
