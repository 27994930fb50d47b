# SPDX-License-Identifier: Apache-2.0
# Install rules and the package config: headers, the exported targets (snippets::snippets in
# snippetsTargets.cmake, and snippets::prebuilt with its static library in
# snippetsPrebuiltTargets.cmake when SNIPPETS_BUILD_PREBUILT is on) and a version file that
# ignores the architecture when nothing binary is installed.
#
# One install serves consumers of either processor: the exported snippets::snippets carries no
# Xbyak (CMakeLists.txt links it in the build tree only), and snippetsConfig.cmake decides by
# the consumer's CMAKE_SYSTEM_PROCESSOR: Xbyak into snippets::snippets on x86-64, or
# snippets::aarch64 on the AsmJit it finds on AArch64.
#
# Included from CMakeLists.txt when SNIPPETS_INSTALL is on. GNUInstallDirs must already have been
# included there, before target_include_directories($<INSTALL_INTERFACE:...>) reads
# CMAKE_INSTALL_INCLUDEDIR; including it again here only keeps this file usable on its own. tests/package checks the installed result (ctest -L package).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/snippets"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
set(SNIPPETS_CONFIG_DIR "${CMAKE_INSTALL_DATADIR}/cmake/snippets")
install(TARGETS snippets EXPORT snippetsTargets)
install(EXPORT snippetsTargets NAMESPACE snippets:: DESTINATION "${SNIPPETS_CONFIG_DIR}")
set(arch_independent ARCH_INDEPENDENT)
set(SNIPPETS_PREBUILT_ARCH "") # read by snippetsConfig.cmake.in
if(TARGET snippets_instances)
  # An export file of its own: the config includes it only for a consumer of the processor the
  # library was compiled for (the version file's check compares pointer sizes alone).
  install(TARGETS snippets_instances snippets_prebuilt EXPORT snippetsPrebuiltTargets
          ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}")
  install(EXPORT snippetsPrebuiltTargets NAMESPACE snippets::
          DESTINATION "${SNIPPETS_CONFIG_DIR}")
  set(arch_independent "") # a static library is for one architecture
  set(SNIPPETS_PREBUILT_ARCH ${SNIPPETS_ARCH})
endif()
install(FILES "${PROJECT_SOURCE_DIR}/LICENSE" DESTINATION "${CMAKE_INSTALL_DATADIR}/doc/snippets")

configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/snippetsConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/snippetsConfig.cmake" INSTALL_DESTINATION "${SNIPPETS_CONFIG_DIR}")
write_basic_package_version_file("${PROJECT_BINARY_DIR}/snippetsConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion ${arch_independent})
install(FILES "${PROJECT_BINARY_DIR}/snippetsConfig.cmake"
              "${PROJECT_BINARY_DIR}/snippetsConfigVersion.cmake"
        DESTINATION "${SNIPPETS_CONFIG_DIR}")
