# SPDX-License-Identifier: Apache-2.0
# ctest errors.catalogue_complete: every error id raised under include/ or tools/ is listed in
# docs/errors.md and checked by at least one test under tests/ (or the catalogue says why none
# can trigger it: a test column starting with "none:").
# Usage: cmake -DROOT=<source dir> -P CheckErrorCatalogue.cmake
cmake_policy(SET CMP0007 NEW)
file(GLOB_RECURSE headers "${ROOT}/include/*.hpp" "${ROOT}/tools/*.hpp" "${ROOT}/tools/*.cpp")
set(raised "")
foreach(h IN LISTS headers)
  file(STRINGS "${h}" lines REGEX "\"snippets\\.[a-z_]+\\.[a-z_]+\"")
  foreach(line IN LISTS lines)
    string(REGEX MATCHALL "\"snippets\\.[a-z_]+\\.[a-z_]+\"" ids "${line}")
    list(APPEND raised ${ids})
  endforeach()
endforeach()
list(TRANSFORM raised REPLACE "\"" "")
list(REMOVE_DUPLICATES raised)
list(SORT raised)

file(READ "${ROOT}/docs/errors.md" catalogue)
# An id counts as tested where a test checks it: in a string literal ("snippets.a.b", or
# "[snippets.a.b]..." as in a message or, backslashes aside, a regular expression) on a line
# that is not a comment.
# A mention in a comment proves nothing.
file(GLOB_RECURSE test_files "${ROOT}/tests/*.cpp" "${ROOT}/tests/*.hpp" "${ROOT}/tests/*.cmake"
     "${ROOT}/tests/*CMakeLists.txt")
set(checked "")
foreach(t IN LISTS test_files)
  # one list item per line: semicolons and brackets (which keep CMake from splitting a list)
  # become other characters first, and so do the backslashes of regular expressions
  file(READ "${t}" text)
  string(REPLACE ";" "," text "${text}")
  string(REPLACE "[" "(" text "${text}")
  string(REPLACE "]" ")" text "${text}")
  string(REPLACE "\\" "" text "${text}")
  string(REPLACE "\n" ";" lines "${text}")
  list(FILTER lines INCLUDE REGEX "snippets")
  foreach(line IN LISTS lines)
    if(line MATCHES "^[ \t]*(//|#)")
      continue()
    endif()
    string(REGEX MATCHALL "\"\\(?snippets\\.[a-z_]+\\.[a-z_]+" ids "${line}")
    list(TRANSFORM ids REPLACE "^\"\\(?" "")
    list(APPEND checked ${ids})
  endforeach()
endforeach()
list(REMOVE_DUPLICATES checked)

set(problems "")
foreach(id IN LISTS raised)
  string(FIND "${catalogue}" "`${id}`" in_doc)
  if(in_doc EQUAL -1)
    list(APPEND problems "${id} is not in docs/errors.md")
    continue()
  endif()
  string(REGEX MATCH "`${id}` \\|[^\n]*\\| none:" untestable "${catalogue}")
  list(FIND checked "${id}" in_tests)
  if(in_tests EQUAL -1 AND NOT untestable)
    list(APPEND problems "${id} is raised but no test under tests/ checks it (as a string "
         "literal outside comments)")
  endif()
endforeach()
list(LENGTH raised count)
if(problems)
  list(JOIN problems "\n  " text)
  message(FATAL_ERROR "error catalogue incomplete:\n  ${text}")
endif()
message(STATUS "error catalogue: ${count} ids, all documented and tested")
