// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include "snippets/error.hpp"

using snippets::Error;

TEST_CASE("raise throws an Error whose message starts with the bracketed stable id") {
  try {
    snippets::raise("snippets.test.example", "do this instead");
    FAIL("raise returned");
  } catch (const Error& e) {
    CHECK(e.id() == "snippets.test.example");
    CHECK(std::string(e.what()) == "[snippets.test.example] do this instead");
  }
}

TEST_CASE("SNIPPETS_ASSERT builds its context only when the condition fails") {
  int evaluated = 0;
  auto context = [&] { return ++evaluated; };
  SNIPPETS_ASSERT(1 + 1 == 2) << context();
  CHECK(evaluated == 0);
  try {
    SNIPPETS_ASSERT(1 + 1 == 3) << "value " << context();
    FAIL("assert passed");
  } catch (const Error& e) {
    CHECK(evaluated == 1);
    CHECK(e.id() == "snippets.internal.assert");
    const std::string what = e.what();
    CHECK(what.find("1 + 1 == 3") != std::string::npos);
    CHECK(what.find("value 1") != std::string::npos);
  }
}
