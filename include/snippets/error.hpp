// SPDX-License-Identifier: Apache-2.0
// snippets/error.hpp: the one error type of the library and its single raise point.
//
// Three tiers:
//  - misuse at compile time: concepts and static_asserts with fix-it text (elsewhere);
//  - a user error at run time: snippets::Error whose what() starts with a stable id such as
//    "[snippets.shape.not_broadcastable]" and says what to do. Ids never change meaning;
//    tests and users may match on them.
//  - a broken internal invariant: SNIPPETS_ASSERT(cond) << context; the message is built only
//    when the condition fails, and the id is "[snippets.internal.assert]".
// Every throw in the library goes through snippets::raise.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace snippets {

class Error : public std::runtime_error {
public:
  Error(std::string_view id, const std::string& message)
      : std::runtime_error(format(id, message)), id_(id) {}

  /// The stable id without brackets, e.g. "snippets.graph.arity".
  const std::string& id() const noexcept { return id_; }

private:
  // Appends piecewise: g++ 12 reports a false -Wrestrict on "[" + std::string(id) + ...
  static std::string format(std::string_view id, const std::string& message) {
    std::string s;
    s.reserve(id.size() + message.size() + 3);
    s.append(1, '[').append(id).append("] ").append(message);
    return s;
  }
  std::string id_;
};

/// The single raise point. `id` is "snippets.<area>.<what>"; `message` says what happened and
/// what the user should do about it.
[[noreturn]] inline void raise(std::string_view id, const std::string& message) {
  throw Error(id, message);
}

namespace detail {
/// False, but only once instantiated: `static_assert(dependent_false<T>, "fix-it")` in an
/// `if constexpr` branch that a mistake of the caller takes.
template <class> inline constexpr bool dependent_false = false;

/// Collects `<<` context for a failed SNIPPETS_ASSERT and throws when the full expression ends.
class AssertFailure {
public:
  AssertFailure(const char* file, int line, const char* condition) {
    stream_ << "internal invariant broken at " << file << ':' << line << ": " << condition;
  }
  AssertFailure(const AssertFailure&) = delete;
  AssertFailure& operator=(const AssertFailure&) = delete;
  template <class V> AssertFailure& operator<<(const V& value) {
    stream_ << (first_ ? ": " : "") << value;
    first_ = false;
    return *this;
  }
  // Throwing from a destructor is safe here: the object is a temporary of a full expression
  // that only exists after a failed check, never during unwinding.
  ~AssertFailure() noexcept(false) {
    raise("snippets.internal.assert", stream_.str() + " (please report this as a bug)");
  }

private:
  std::ostringstream stream_;
  bool first_ = true;
};

} // namespace detail
} // namespace snippets

/// Checks an internal invariant; append context with <<. The context is evaluated only when
/// the check fails.
#define SNIPPETS_ASSERT(cond)                                                                      \
  if (static_cast<bool>(cond)) {                                                                   \
  } else                                                                                           \
    ::snippets::detail::AssertFailure(__FILE__, __LINE__, #cond)
