// SPDX-License-Identifier: Apache-2.0
// The unit-test main: doctest's, then the host's skips reported to ctest (host_skips.hpp).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

#include "host_skips.hpp"

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  const int rc = context.run();
  if (context.shouldExit() || rc != 0) return rc;
  if (const int n = snippets::test::host_skips().load(); n > 0) {
    std::printf("%d checks did not run: this host cannot execute them (see SKIPPED above)\n", n);
    return snippets::test::skip_exit_code;
  }
  return 0;
}
