# SPDX-License-Identifier: Apache-2.0
# vcpkg overlay port for snippets, built from the source tree this file lives in:
#
#   vcpkg install snippets --overlay-ports=<repo>/packaging/vcpkg/ports
#
# It is an overlay for local use, not a registry port: there is no download (vcpkg_from_github
# and a SHA512 come when releases are tagged). The package is what the project's own install
# rules produce, with the CMake config moved to share/snippets.

# Four levels up: ports/snippets -> ports -> vcpkg -> packaging -> repository root.
cmake_path(SET SOURCE_PATH NORMALIZE "${CMAKE_CURRENT_LIST_DIR}/../../../..")

# Header-only: one (release) configuration is enough and leaves no debug tree.
set(VCPKG_BUILD_TYPE release)

vcpkg_cmake_configure(
  SOURCE_PATH "${SOURCE_PATH}"
  OPTIONS
    -DSNIPPETS_BUILD_TESTS=OFF
    -DSNIPPETS_BUILD_EXAMPLES=OFF
    -DSNIPPETS_BUILD_BENCH=OFF
    -DSNIPPETS_BUILD_PREBUILT=OFF
    -DSNIPPETS_INSTALL=ON
)
vcpkg_cmake_install()
vcpkg_cmake_config_fixup(CONFIG_PATH share/cmake/snippets)

file(REMOVE_RECURSE "${CURRENT_PACKAGES_DIR}/debug" "${CURRENT_PACKAGES_DIR}/lib")

file(INSTALL "${CMAKE_CURRENT_LIST_DIR}/usage" DESTINATION "${CURRENT_PACKAGES_DIR}/share/${PORT}")
vcpkg_install_copyright(FILE_LIST "${SOURCE_PATH}/LICENSE")
