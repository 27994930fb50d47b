# SPDX-License-Identifier: Apache-2.0
# snippets_add_compile_fail_test(<source>)
#
# Adds a ctest test that passes when <source> FAILS to compile with a diagnostic matching the
# regex on its `// expected-error: <regex>` line. Used to pin the fix-it messages of
# static_asserts and concepts (misuse of traits, pipelines, emitters).
function(snippets_add_compile_fail_test source)
  file(STRINGS "${source}" expected REGEX "// expected-error: ")
  if(NOT expected)
    message(FATAL_ERROR "${source}: needs a `// expected-error: <regex>` line")
  endif()
  string(REGEX REPLACE ".*// expected-error: " "" expected "${expected}")
  get_filename_component(name "${source}" NAME_WE)
  add_test(NAME compile_fail.${name}
    COMMAND "${CMAKE_COMMAND}"
      "-DCXX=${CMAKE_CXX_COMPILER}"
      "-DSOURCE=${source}"
      "-DINCLUDE=${PROJECT_SOURCE_DIR}/include"
      "-DEXPECTED=${expected}"
      -P "${PROJECT_SOURCE_DIR}/cmake/CheckCompileFail.cmake")
endfunction()
