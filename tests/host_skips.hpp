// SPDX-License-Identifier: Apache-2.0
// tests/host_skips.hpp: checks this host cannot execute (an ISA, AVX512_BF16), counted so the
// test binary can tell ctest. main.cpp exits with skip_exit_code when every test passed but
// some checks did not run; tests/CMakeLists.txt gives ctest that code as SKIP_RETURN_CODE, so
// `ctest` lists such test cases as skipped (with the reason in their output) instead of passed.
#pragma once

#include <doctest/doctest.h>

#include <atomic>
#include <string_view>

namespace snippets::test {

inline constexpr int skip_exit_code = 77;

inline std::atomic<int>& host_skips() {
  static std::atomic<int> n{0};
  return n;
}

/// Records that `what` (e.g. "avx512") did not run in the current test case, with a message.
inline void skip_on_host(std::string_view what) {
  MESSAGE("SKIPPED on this host: " << what);
  host_skips().fetch_add(1, std::memory_order_relaxed);
}

} // namespace snippets::test
