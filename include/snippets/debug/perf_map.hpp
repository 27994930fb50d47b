// SPDX-License-Identifier: Apache-2.0
// snippets/debug/perf_map.hpp: names JIT kernels for `perf report` (SNIPPETS_JIT_PROFILE=perf,
// CompileOptions::debug.perf_map).
//
// perf looks up addresses it cannot resolve in /tmp/perf-<pid>.map, one line per symbol:
//   <start-hex> <size-hex> <name>
// (hex without 0x). compile() appends one line per generated kernel, named
// `snippets:<kernel name>` (the Subgraph's name in a Program), and `snippets:<name>:nt` for the
// variant with non-temporal stores; the size covers the instructions, not the constants.
// Lines are appended under a process-wide mutex, so threads compiling at once do not interleave.
// The file is never truncated: perf reads the last entry for an address.
#pragma once

#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <string>
#include <string_view>

namespace snippets::debug {

/// /tmp/perf-<pid>.map of this process.
inline std::string perf_map_path() {
  std::string path = "/tmp/perf-";
  return path.append(std::to_string(::getpid())).append(".map");
}

/// Appends "<start> <size> <name>". Returns false (and says so on stderr, once) when the file
/// cannot be written: profiling is an aid, a kernel still compiles without it.
inline bool write_perf_map_entry(const void* start, std::size_t size, std::string_view name) {
  static std::mutex m;
  static bool warned = false;
  const std::lock_guard lock(m);
  const std::string path = perf_map_path();
  std::FILE* f = std::fopen(path.c_str(), "a");
  if (!f) {
    if (!warned) std::cerr << "snippets: cannot append to " << path << "; no perf map entries\n";
    warned = true;
    return false;
  }
  std::fprintf(f, "%" PRIxPTR " %zx %.*s\n", reinterpret_cast<std::uintptr_t>(start), size,
               static_cast<int>(name.size()), name.data());
  return std::fclose(f) == 0;
}

} // namespace snippets::debug
