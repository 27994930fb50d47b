# SPDX-License-Identifier: Apache-2.0
# Install rules and the package config: headers, the exported targets (snippets::snippets, and
# snippets::prebuilt with its static library when SNIPPETS_BUILD_PREBUILT is on) and a version
# file that ignores the architecture when nothing binary is installed.
#
# Included from CMakeLists.txt when SNIPPETS_INSTALL is on. GNUInstallDirs must already have been
# included there, before target_include_directories($<INSTALL_INTERFACE:...>) reads
# CMAKE_INSTALL_INCLUDEDIR; including it again here only keeps this file usable on its own. tests/package checks the installed result (ctest -L package).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/snippets"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
install(TARGETS snippets EXPORT snippetsTargets)
set(arch_independent ARCH_INDEPENDENT)
if(TARGET snippets_instances)
  install(TARGETS snippets_instances snippets_prebuilt EXPORT snippetsTargets
          ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}")
  set(arch_independent "") # a static library is for one architecture
endif()
install(FILES "${PROJECT_SOURCE_DIR}/LICENSE" DESTINATION "${CMAKE_INSTALL_DATADIR}/doc/snippets")

set(SNIPPETS_CONFIG_DIR "${CMAKE_INSTALL_DATADIR}/cmake/snippets")
install(EXPORT snippetsTargets NAMESPACE snippets:: DESTINATION "${SNIPPETS_CONFIG_DIR}")

configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/snippetsConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/snippetsConfig.cmake" INSTALL_DESTINATION "${SNIPPETS_CONFIG_DIR}")
write_basic_package_version_file("${PROJECT_BINARY_DIR}/snippetsConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion ${arch_independent})
install(FILES "${PROJECT_BINARY_DIR}/snippetsConfig.cmake"
              "${PROJECT_BINARY_DIR}/snippetsConfigVersion.cmake"
        DESTINATION "${SNIPPETS_CONFIG_DIR}")
