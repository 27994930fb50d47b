# SPDX-License-Identifier: Apache-2.0
# Toolchain file: cross-compile for AArch64 with Debian's g++-aarch64-linux-gnu, e.g. to check
# that the library and snippets::aarch64 configure and build without Xbyak:
#   cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
# Headers and CMake packages of the host (Boost's headers, doctest) are architecture-independent
# and are searched in the host's paths; libraries only in the arm64 ones (libasmjit.a).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
# Debian installs Boost's CMake package (header-only here) under the host's multiarch directory.
file(GLOB _snippets_boost_dirs /usr/lib/x86_64-linux-gnu/cmake)
list(APPEND CMAKE_PREFIX_PATH ${_snippets_boost_dirs})
