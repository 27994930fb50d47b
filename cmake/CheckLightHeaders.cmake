# SPDX-License-Identifier: Apache-2.0
# Script mode (-DCXX=<compiler> -DROOT=<repository>): fails when the headers that build and
# evaluate graphs (snippets/ir/graph.hpp, snippets/reference/interpreter.hpp) include Xbyak,
# Boost or omp.h: a program that only builds graphs and runs the reference interpreter must not
# pay for the JIT's dependencies (scripts/compile-time, program (a)).
file(WRITE "${CMAKE_CURRENT_BINARY_DIR}/light_headers.cpp"
     "#include \"snippets/ir/graph.hpp\"\n#include \"snippets/reference/interpreter.hpp\"\n")
execute_process(COMMAND "${CXX}" -std=c++20 -M "-I${ROOT}/include"
                        "${CMAKE_CURRENT_BINARY_DIR}/light_headers.cpp"
                RESULT_VARIABLE rc OUTPUT_VARIABLE deps ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the graph headers do not preprocess:\n${err}")
endif()
foreach(heavy IN ITEMS "/xbyak/" "/boost/" "/omp.h")
  string(FIND "${deps}" "${heavy}" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "snippets/ir/graph.hpp or snippets/reference/interpreter.hpp includes "
                        "${heavy}: keep the JIT's dependencies out of the graph headers")
  endif()
endforeach()
message(STATUS "the graph headers include neither Xbyak, nor Boost, nor omp.h")
