# SPDX-License-Identifier: Apache-2.0
# cmake -DPORT_DIR=<ports/snippets> -DWORK_DIR=<scratch dir> [-DGENERATOR=<gen>]
#       [-DCXX_COMPILER=<c++>] -P check_portfile.cmake
#
# Runs ports/snippets/portfile.cmake the way vcpkg does (include() from a script, with PORT and
# CURRENT_PACKAGES_DIR set) but against stand-ins for the vcpkg_* helpers, because vcpkg
# cannot be installed here. The stand-ins record their arguments and do the obvious part of
# the work with plain CMake:
#   vcpkg_cmake_configure    checks SOURCE_PATH is the snippets tree, then configures it with
#                            the portfile's OPTIONS and CMAKE_INSTALL_PREFIX=CURRENT_PACKAGES_DIR
#   vcpkg_cmake_install      cmake --install of that build
#   vcpkg_cmake_config_fixup checks CONFIG_PATH holds snippetsConfig.cmake and moves the files
#                            to share/<port> (no path rewriting)
#   vcpkg_install_copyright  copies FILE_LIST to share/<port>/copyright
# Then it checks the calls, their order and arguments, and the resulting package tree.
#
# What this proves: the portfile parses and runs; it calls only helpers that exist here (an
# unknown command stops the script); SOURCE_PATH reaches the repository root; the option names
# are ones the project reads (CMake's "not used by the project" warning is an error here);
# CONFIG_PATH is where the install rules put the config; debug/ and lib/ are gone and
# share/snippets has copyright and usage.
# What it does not prove: anything about vcpkg itself. Its toolchain, triplets, Ninja, the
# real helpers (notably config_fixup's rewriting of _IMPORT_PREFIX / PACKAGE_PREFIX_DIR),
# post-build checks, the dependency ports (xbyak, boost-graph) and their versions are not run.
cmake_minimum_required(VERSION 3.25)
foreach(var IN ITEMS PORT_DIR WORK_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_portfile.cmake: -D${var}=... is required")
  endif()
endforeach()

# The variables vcpkg defines for a portfile (the subset a header-only port can touch).
set(PORT snippets)
set(TARGET_TRIPLET x64-linux)
set(VCPKG_TARGET_ARCHITECTURE x64)
set(VCPKG_CMAKE_SYSTEM_NAME Linux)
set(VCPKG_TARGET_IS_LINUX ON)
set(VCPKG_LIBRARY_LINKAGE static)
set(CURRENT_PACKAGES_DIR "${WORK_DIR}/packages/${PORT}_${TARGET_TRIPLET}")
set(CURRENT_BUILDTREES_DIR "${WORK_DIR}/buildtrees/${PORT}")
set(CURRENT_INSTALLED_DIR "${WORK_DIR}/installed/${TARGET_TRIPLET}")
set(CURRENT_PORT_DIR "${PORT_DIR}")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY
  "${CURRENT_PACKAGES_DIR}" "${CURRENT_BUILDTREES_DIR}" "${CURRENT_INSTALLED_DIR}")

set(build_dir "${CURRENT_BUILDTREES_DIR}/${TARGET_TRIPLET}-rel")
set(generator_args)
if(GENERATOR)
  list(APPEND generator_args -G "${GENERATOR}")
endif()
if(CXX_COMPILER)
  list(APPEND generator_args "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")
endif()

function(record name)
  set_property(GLOBAL APPEND PROPERTY stub_calls "${name}")
endfunction()

function(require_no_extra_arguments name)
  if(DEFINED arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "${name}: unexpected arguments ${arg_UNPARSED_ARGUMENTS}")
  endif()
endfunction()

function(vcpkg_cmake_configure)
  cmake_parse_arguments(PARSE_ARGV 0 arg
    "WINDOWS_USE_MSBUILD;NO_CHARSET_FLAG;DISABLE_PARALLEL_CONFIGURE"
    "SOURCE_PATH;GENERATOR;LOGFILE_BASE"
    "OPTIONS;OPTIONS_RELEASE;OPTIONS_DEBUG;MAYBE_UNUSED_VARIABLES")
  record(vcpkg_cmake_configure)
  if(DEFINED arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "vcpkg_cmake_configure: unexpected arguments ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT IS_ABSOLUTE "${arg_SOURCE_PATH}" OR NOT EXISTS "${arg_SOURCE_PATH}/CMakeLists.txt")
    message(FATAL_ERROR "SOURCE_PATH '${arg_SOURCE_PATH}' has no CMakeLists.txt")
  endif()
  file(READ "${arg_SOURCE_PATH}/CMakeLists.txt" top)
  if(NOT top MATCHES "project\\(snippets[ \n]"
     OR NOT EXISTS "${arg_SOURCE_PATH}/include/snippets/snippets.hpp")
    message(FATAL_ERROR "SOURCE_PATH '${arg_SOURCE_PATH}' is not the snippets source tree")
  endif()
  set_property(GLOBAL PROPERTY stub_source_path "${arg_SOURCE_PATH}")
  set_property(GLOBAL PROPERTY stub_options ${arg_OPTIONS} ${arg_OPTIONS_RELEASE})

  execute_process(
    COMMAND "${CMAKE_COMMAND}" -S "${arg_SOURCE_PATH}" -B "${build_dir}" ${generator_args}
            -DCMAKE_BUILD_TYPE=Release "-DCMAKE_INSTALL_PREFIX=${CURRENT_PACKAGES_DIR}"
            ${arg_OPTIONS} ${arg_OPTIONS_RELEASE}
    RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "configuring with the portfile's options failed:\n${out}${err}")
  endif()
  set(unused "Manually-specified variables were not used by the project[^\n]*\n\n([^\n]*)")
  if("${out}${err}" MATCHES "${unused}")
    message(FATAL_ERROR "the portfile passes options the project ignores: ${CMAKE_MATCH_1}")
  endif()
endfunction()

function(vcpkg_cmake_install)
  cmake_parse_arguments(PARSE_ARGV 0 arg "DISABLE_PARALLEL;ADD_BIN_TO_PATH" "" "")
  record(vcpkg_cmake_install)
  require_no_extra_arguments(vcpkg_cmake_install)
  execute_process(COMMAND "${CMAKE_COMMAND}" --install "${build_dir}" --config Release
    RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "cmake --install failed:\n${out}${err}")
  endif()
endfunction()

function(vcpkg_cmake_config_fixup)
  cmake_parse_arguments(PARSE_ARGV 0 arg "DO_NOT_DELETE_PARENT_CONFIG_PATH;NO_PREFIX_CORRECTION"
    "PACKAGE_NAME;CONFIG_PATH" "")
  record(vcpkg_cmake_config_fixup)
  require_no_extra_arguments(vcpkg_cmake_config_fixup)
  if(NOT arg_PACKAGE_NAME)
    set(arg_PACKAGE_NAME "${PORT}")
  endif()
  if(NOT arg_CONFIG_PATH)
    set(arg_CONFIG_PATH "share/${arg_PACKAGE_NAME}")
  endif()
  set_property(GLOBAL PROPERTY stub_config_path "${arg_CONFIG_PATH}")
  set(from "${CURRENT_PACKAGES_DIR}/${arg_CONFIG_PATH}")
  set(to "${CURRENT_PACKAGES_DIR}/share/${arg_PACKAGE_NAME}")
  if(NOT EXISTS "${from}/${arg_PACKAGE_NAME}Config.cmake")
    message(FATAL_ERROR "CONFIG_PATH ${arg_CONFIG_PATH} has no ${arg_PACKAGE_NAME}Config.cmake "
                        "after the install")
  endif()
  if(NOT from STREQUAL to)
    file(GLOB files "${from}/*")
    file(COPY ${files} DESTINATION "${to}")
    file(REMOVE_RECURSE "${from}")
    cmake_path(GET from PARENT_PATH parent)
    cmake_path(GET parent FILENAME parent_name)
    if(parent_name STREQUAL "cmake" AND NOT arg_DO_NOT_DELETE_PARENT_CONFIG_PATH)
      file(REMOVE_RECURSE "${parent}")
    endif()
  endif()
endfunction()

function(vcpkg_install_copyright)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "COMMENT" "FILE_LIST")
  record(vcpkg_install_copyright)
  require_no_extra_arguments(vcpkg_install_copyright)
  set(text "")
  foreach(file IN LISTS arg_FILE_LIST)
    file(READ "${file}" content)
    string(APPEND text "${content}")
  endforeach()
  file(WRITE "${CURRENT_PACKAGES_DIR}/share/${PORT}/copyright" "${text}")
endfunction()

# An overlay port of the local tree must not fetch anything.
foreach(fetch IN ITEMS vcpkg_from_github vcpkg_from_gitlab vcpkg_from_git vcpkg_download_distfile)
  cmake_language(EVAL CODE "
    function(${fetch})
      message(FATAL_ERROR \"portfile calls ${fetch}; the overlay port builds the local tree\")
    endfunction()")
endforeach()

include("${PORT_DIR}/portfile.cmake")

# --- What the portfile did -------------------------------------------------------------------
get_property(calls GLOBAL PROPERTY stub_calls)
list(FILTER calls EXCLUDE REGEX "^vcpkg_install_copyright$")
set(expected_calls vcpkg_cmake_configure vcpkg_cmake_install vcpkg_cmake_config_fixup)
if(NOT calls STREQUAL expected_calls)
  message(FATAL_ERROR "vcpkg helpers called: '${calls}', expected '${expected_calls}'")
endif()

get_property(source_path GLOBAL PROPERTY stub_source_path)
file(REAL_PATH "${source_path}" source_path)
file(REAL_PATH "${PORT_DIR}/../../../.." repository_root)
if(NOT source_path STREQUAL repository_root)
  message(FATAL_ERROR "SOURCE_PATH is ${source_path}, expected the repository root "
                      "${repository_root}")
endif()

get_property(options GLOBAL PROPERTY stub_options)
foreach(option IN ITEMS -DSNIPPETS_BUILD_TESTS=OFF -DSNIPPETS_BUILD_EXAMPLES=OFF
                        -DSNIPPETS_BUILD_BENCH=OFF)
  if(NOT option IN_LIST options)
    message(FATAL_ERROR "vcpkg_cmake_configure is not given ${option}")
  endif()
endforeach()

get_property(config_path GLOBAL PROPERTY stub_config_path)
if(NOT config_path STREQUAL "share/cmake/snippets")
  message(FATAL_ERROR "CONFIG_PATH is '${config_path}', expected share/cmake/snippets")
endif()
if(NOT VCPKG_BUILD_TYPE STREQUAL "release")
  message(FATAL_ERROR "a header-only port should set VCPKG_BUILD_TYPE release")
endif()

# --- The package tree ------------------------------------------------------------------------
foreach(file IN ITEMS
    include/snippets/snippets.hpp
    share/snippets/snippetsConfig.cmake
    share/snippets/snippetsConfigVersion.cmake
    share/snippets/snippetsTargets.cmake
    share/snippets/copyright
    share/snippets/usage)
  if(NOT EXISTS "${CURRENT_PACKAGES_DIR}/${file}")
    message(FATAL_ERROR "the package lacks ${file}")
  endif()
endforeach()
foreach(dir IN ITEMS debug lib share/cmake)
  if(EXISTS "${CURRENT_PACKAGES_DIR}/${dir}")
    message(FATAL_ERROR "the package still has ${dir}/")
  endif()
endforeach()
message(STATUS "portfile.cmake ran against the stub helpers; package in ${CURRENT_PACKAGES_DIR}")
