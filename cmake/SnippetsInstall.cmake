# Install rules and the package config: headers, the exported INTERFACE target and a
# version file that ignores the architecture (the library has no binary).
#
# Included from CMakeLists.txt when SNIPPETS_INSTALL is on. GNUInstallDirs must already have been
# included there, before target_include_directories($<INSTALL_INTERFACE:...>) reads
# CMAKE_INSTALL_INCLUDEDIR (DESIGN.md 8); including it again here only keeps this file usable
# on its own. tests/package checks the installed result (ctest -L package).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/snippets"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
install(TARGETS snippets EXPORT snippetsTargets)

set(SNIPPETS_CONFIG_DIR "${CMAKE_INSTALL_DATADIR}/cmake/snippets")
install(EXPORT snippetsTargets NAMESPACE snippets:: DESTINATION "${SNIPPETS_CONFIG_DIR}")

configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/snippetsConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/snippetsConfig.cmake" INSTALL_DESTINATION "${SNIPPETS_CONFIG_DIR}")
write_basic_package_version_file("${PROJECT_BINARY_DIR}/snippetsConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion ARCH_INDEPENDENT)
install(FILES "${PROJECT_BINARY_DIR}/snippetsConfig.cmake"
              "${PROJECT_BINARY_DIR}/snippetsConfigVersion.cmake"
        DESTINATION "${SNIPPETS_CONFIG_DIR}")
