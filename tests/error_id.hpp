// SPDX-License-Identifier: Apache-2.0
// tests/error_id.hpp: which snippets::Error a statement throws, for error-id tests.
#pragma once

#include <doctest/doctest.h>

#include <exception>
#include <functional>
#include <string>

#include "snippets/error.hpp"

/// The id of the snippets::Error `f` throws (checking that what() starts with "[id] "),
/// "no error", or a description of another exception so a failed CHECK shows it.
inline std::string error_id(const std::function<void()>& f) {
  try {
    f();
  } catch (const snippets::Error& e) {
    CHECK(std::string(e.what()).starts_with("[" + e.id() + "] "));
    return e.id();
  } catch (const std::exception& e) {
    return std::string("not a snippets::Error: ") + e.what();
  } catch (...) {
    return "not a std::exception";
  }
  return "no error";
}
