# SPDX-License-Identifier: Apache-2.0
# Script mode helper of snippets_add_compile_fail_test: compile SOURCE, require failure and a
# diagnostic matching EXPECTED.
execute_process(
  COMMAND "${CXX}" -std=c++20 -fsyntax-only -fopenmp "-I${INCLUDE}" "${SOURCE}"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "${SOURCE} compiled, but it must fail with: ${EXPECTED}")
endif()
if(NOT "${out}${err}" MATCHES "${EXPECTED}")
  message(FATAL_ERROR "${SOURCE} failed to compile, but no diagnostic matched '${EXPECTED}':\n${err}")
endif()
message(STATUS "failed as expected: ${EXPECTED}")
