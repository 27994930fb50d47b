# SPDX-License-Identifier: Apache-2.0
# cmake -DSOURCE_DIR=<consumer> -DBINARY_DIR=<dir> -DGENERATOR=<gen>
#       (-DCXX_COMPILER=<c++> | -DTOOLCHAIN_FILE=<file> -DEMULATOR=<program>)
#       [-DBUILD_TYPE=Release] [-DPREFIX=<install prefix>] [-DSNIPPETS_SOURCE_DIR=<dir>]
#       [-DREQUESTED_VERSION=<v>] [-DEXPECT_CONFIGURE_ERROR=<regex>] [-DCXX_FLAGS=<flags>]
#       [-DPREBUILT=ON] -P consumer.cmake
#
# Configures a consumer project from scratch, builds it and runs its `consumer` program; the
# program's exit code is the test result. With EXPECT_CONFIGURE_ERROR the configure step must
# fail with output matching the regex instead (nothing is built), so a test of a rejected
# version cannot pass because of some unrelated error. A cross consumer names its toolchain
# file (which chooses the compiler) and the emulator that runs its program, e.g. qemu-aarch64.
cmake_minimum_required(VERSION 3.25)
foreach(var IN ITEMS SOURCE_DIR BINARY_DIR GENERATOR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "consumer.cmake: -D${var}=... is required")
  endif()
endforeach()
if(NOT DEFINED CXX_COMPILER AND NOT DEFINED TOOLCHAIN_FILE)
  message(FATAL_ERROR "consumer.cmake: -DCXX_COMPILER=... or -DTOOLCHAIN_FILE=... is required")
endif()
if(NOT BUILD_TYPE)
  set(BUILD_TYPE Release)
endif()

set(args -S "${SOURCE_DIR}" -B "${BINARY_DIR}" -G "${GENERATOR}"
    "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}")
if(TOOLCHAIN_FILE)
  list(APPEND args "-DCMAKE_TOOLCHAIN_FILE=${TOOLCHAIN_FILE}")
else()
  list(APPEND args "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")
endif()
if(PREFIX)
  list(APPEND args "-DCMAKE_PREFIX_PATH=${PREFIX}")
endif()
if(SNIPPETS_SOURCE_DIR)
  list(APPEND args "-DSNIPPETS_SOURCE_DIR=${SNIPPETS_SOURCE_DIR}")
endif()
if(CXX_FLAGS) # also at link time: the sanitizers' runtimes
  list(APPEND args "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${CXX_FLAGS}")
endif()
if(PREBUILT) # the consumer links snippets::prebuilt instead of the header-only target
  list(APPEND args -DSNIPPETS_CONSUMER_PREBUILT=ON)
endif()
if(DEFINED REQUESTED_VERSION)
  list(APPEND args "-DSNIPPETS_REQUESTED_VERSION=${REQUESTED_VERSION}")
endif()

file(REMOVE_RECURSE "${BINARY_DIR}")
execute_process(COMMAND "${CMAKE_COMMAND}" ${args}
  RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(DEFINED EXPECT_CONFIGURE_ERROR)
  if(result EQUAL 0)
    message(FATAL_ERROR "configure succeeded but was expected to fail:\n${out}${err}")
  endif()
  if(NOT "${out}${err}" MATCHES "${EXPECT_CONFIGURE_ERROR}")
    message(FATAL_ERROR "configure failed, but not with /${EXPECT_CONFIGURE_ERROR}/:\n${out}${err}")
  endif()
  message(STATUS "configure failed as expected (/${EXPECT_CONFIGURE_ERROR}/)")
  return()
endif()
if(NOT result EQUAL 0)
  message(FATAL_ERROR "configure failed:\n${out}${err}")
endif()

execute_process(COMMAND "${CMAKE_COMMAND}" --build "${BINARY_DIR}" --config "${BUILD_TYPE}"
  RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "build failed:\n${out}${err}")
endif()

# snippets as a subproject must not have produced its own test, example or bench trees.
if(SNIPPETS_SOURCE_DIR)
  foreach(dir IN ITEMS tests examples bench)
    if(EXISTS "${BINARY_DIR}/snippets/${dir}")
      message(FATAL_ERROR "snippets as a subproject generated ${BINARY_DIR}/snippets/${dir}")
    endif()
  endforeach()
endif()

# Single- or multi-config generator, with or without an executable suffix.
set(program "")
foreach(candidate IN ITEMS consumer consumer.exe ${BUILD_TYPE}/consumer ${BUILD_TYPE}/consumer.exe)
  if(NOT program AND EXISTS "${BINARY_DIR}/${candidate}")
    set(program "${BINARY_DIR}/${candidate}")
  endif()
endforeach()
if(NOT program)
  message(FATAL_ERROR "the build produced no consumer program in ${BINARY_DIR}")
endif()
execute_process(COMMAND ${EMULATOR} "${program}" RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "${program} failed: ${result}")
endif()
