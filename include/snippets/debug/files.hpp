// SPDX-License-Identifier: Apache-2.0
// snippets/debug/files.hpp: the file output of the debug features (dumps, JIT code).
// Failures throw [snippets.debug.dump_failed] naming the path. No <filesystem>: compile.hpp
// includes this, and every user of compile.hpp would pay for parsing it.
#pragma once

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <string_view>

#include "snippets/error.hpp"

namespace snippets::debug::detail {

/// mkdir -p.
inline void make_directories(const std::string& dir) {
  for (std::size_t at = 1; at <= dir.size(); ++at) {
    if (at < dir.size() && dir[at] != '/') continue;
    const std::string prefix = dir.substr(0, at);
    if (::mkdir(prefix.c_str(), 0777) != 0 && errno != EEXIST)
      raise("snippets.debug.dump_failed",
            std::string("cannot create the directory '") + prefix + "': " + std::strerror(errno));
  }
}

/// `dir` + '/' + `name`, without a doubled slash.
inline std::string join_path(std::string_view dir, std::string_view name) {
  std::string p(dir);
  if (!p.empty() && p.back() != '/') p += '/';
  return p.append(name);
}

/// Writes (replaces) a file.
inline void write_file(const std::string& path, std::string_view content) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(content.data(), static_cast<std::streamsize>(content.size()));
  f.close();
  if (!f)
    raise("snippets.debug.dump_failed",
          std::string("cannot write '") + path + "'; check that its directory is writable");
}

} // namespace snippets::debug::detail
