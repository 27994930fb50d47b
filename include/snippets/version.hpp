// SPDX-License-Identifier: Apache-2.0
// snippets/version.hpp: the library version (kept equal to project(VERSION) in CMakeLists.txt).
#pragma once

#define SNIPPETS_VERSION_MAJOR 0
#define SNIPPETS_VERSION_MINOR 1
#define SNIPPETS_VERSION_PATCH 0

namespace snippets {
inline constexpr int version_major = SNIPPETS_VERSION_MAJOR;
inline constexpr int version_minor = SNIPPETS_VERSION_MINOR;
inline constexpr int version_patch = SNIPPETS_VERSION_PATCH;
} // namespace snippets
