# SPDX-License-Identifier: Apache-2.0
# cmake -DBUILD_DIR=<snippets build> -DPREFIX=<dir> [-DCONFIG=<cfg>] [-DPREBUILT=ON]
#       -P install.cmake
#
# Installs snippets from its build tree into a fresh PREFIX (the fixture for the find_package
# tests) and checks the installed tree by name: headers, the exported targets, the package
# config, the license, snippets::prebuilt's library when PREBUILT is on, and the version file's
# architecture check.
cmake_minimum_required(VERSION 3.25)
foreach(var IN ITEMS BUILD_DIR PREFIX)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "install.cmake: -D${var}=... is required")
  endif()
endforeach()
if(NOT CONFIG)
  set(CONFIG Release)
endif()

file(REMOVE_RECURSE "${PREFIX}")
execute_process(
  COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${PREFIX}" --config "${CONFIG}"
  RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "cmake --install ${BUILD_DIR} failed: ${result}")
endif()

set(config_dir "${PREFIX}/share/cmake/snippets")
foreach(file IN ITEMS
    include/snippets/snippets.hpp
    include/snippets/version.hpp
    share/cmake/snippets/snippetsConfig.cmake
    share/cmake/snippets/snippetsConfigVersion.cmake
    share/cmake/snippets/snippetsTargets.cmake
    share/doc/snippets/LICENSE)
  if(NOT EXISTS "${PREFIX}/${file}")
    message(FATAL_ERROR "not installed: ${file}")
  endif()
endforeach()

# The imported target must point at the installed headers (GNUInstallDirs before the target).
file(READ "${config_dir}/snippetsTargets.cmake" targets)
if(NOT targets MATCHES "INTERFACE_INCLUDE_DIRECTORIES \"\\\${_IMPORT_PREFIX}/include\"")
  message(FATAL_ERROR "snippetsTargets.cmake lacks INTERFACE_INCLUDE_DIRECTORIES .../include")
endif()
# The package must accept a consumer built for another pointer size exactly when nothing binary
# is installed: evaluate the version file as find_package() would, for a 32-bit consumer asking
# for 0.1. With snippets::prebuilt (a static library for this architecture) it must refuse one.
file(GLOB prebuilt_library "${PREFIX}/lib*/libsnippets_instances.a")
if(PREBUILT AND NOT prebuilt_library)
  message(FATAL_ERROR "not installed: lib/libsnippets_instances.a (snippets::prebuilt)")
endif()
function(check_arch_independent)
  set(CMAKE_SIZEOF_VOID_P 4)
  set(PACKAGE_FIND_NAME snippets)
  set(PACKAGE_FIND_VERSION 0.1)
  set(PACKAGE_FIND_VERSION_MAJOR 0)
  set(PACKAGE_FIND_VERSION_MINOR 1)
  set(PACKAGE_FIND_VERSION_COUNT 2)
  include("${config_dir}/snippetsConfigVersion.cmake")
  if(prebuilt_library AND NOT PACKAGE_VERSION_UNSUITABLE)
    message(FATAL_ERROR "snippetsConfigVersion.cmake accepts a 32-bit consumer, but "
                        "${prebuilt_library} is a 64-bit library")
  elseif(NOT prebuilt_library AND (NOT PACKAGE_VERSION_COMPATIBLE OR PACKAGE_VERSION_UNSUITABLE))
    message(FATAL_ERROR "snippetsConfigVersion.cmake refuses a 32-bit consumer of 0.1 "
                        "(want ARCH_INDEPENDENT): ${PACKAGE_VERSION}")
  endif()
endfunction()
check_arch_independent()
message(STATUS "snippets installed into ${PREFIX}")
