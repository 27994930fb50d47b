// SPDX-License-Identifier: Apache-2.0
// snippets/debug/options.hpp: the debug switches of compile() and their environment variables.
//
// Every switch is off by default and has a C++ field in CompileOptions::debug and an
// environment variable, read once per process (the first compile() that needs it):
//   SNIPPETS_DUMP_LIR="passes=InsertLoops,AssignRegisters dir=/tmp/x formats=text,dot"
//   SNIPPETS_JIT_DUMP=<dir>             machine code (.bin) and its disassembly (.asm)
//   SNIPPETS_JIT_PROFILE=perf           /tmp/perf-<pid>.map entries for `perf report`
//   SNIPPETS_PERF_COUNTERS=cycles|chrono
//   SNIPPETS_SEGFAULT_DETECTOR=1
// A field that is set (std::optional with a value) wins over its variable, so a program can
// force a switch either way. A malformed value throws snippets::Error
// ([snippets.debug.bad_dump_lir], [snippets.debug.bad_env]) that quotes the expected syntax.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "snippets/error.hpp"
#include "snippets/runtime/kernel_debug_info.hpp" // Counters

namespace snippets::debug {

/// Where and how compile() writes the IR after chosen passes. File names are
/// `<dir>/<kernel>_<NN>_<Pass>.txt` (and `.cfg.dot`, `.dfg.dot` for a Linear IR, `.dot` for a
/// body), where NN is the pass's position in CompileOptions::trace (data flow first) and the
/// pseudo-passes `Body` (00, the Subgraph body as given) and `DataFlow` (the body after the
/// data-flow passes) dump the data-flow body. `all` selects every pass and both pseudo-passes.
struct DumpOptions {
  std::vector<std::string> passes; // empty: no dumps
  std::string dir = "snippets_dump";
  bool text = true; // <...>.txt: ir/lir_printer.hpp (detailed) or ir/printer.hpp
  bool dot = false; // Graphviz: control flow and data flow of a Linear IR, or the body

  bool enabled() const { return !passes.empty(); }
  bool wants(std::string_view pass) const {
    for (const auto& p : passes)
      if (p == pass || p == "all") return true;
    return false;
  }
};

/// CompileOptions::debug. std::nullopt means "as the environment variable says".
struct DebugOptions {
  std::optional<DumpOptions> dump;       // SNIPPETS_DUMP_LIR
  std::optional<std::string> jit_dump;   // SNIPPETS_JIT_DUMP: directory ("" = off)
  std::optional<bool> perf_map;          // SNIPPETS_JIT_PROFILE=perf
  std::optional<Counters> counters;      // SNIPPETS_PERF_COUNTERS
  std::optional<bool> segfault_detector; // SNIPPETS_SEGFAULT_DETECTOR
  bool code_map = false; // record which code each expression produced (debug::disassemble)
};

/// DebugOptions with the environment applied: every switch decided.
struct ResolvedDebug {
  DumpOptions dump;
  std::string jit_dump;
  bool perf_map = false;
  Counters counters = Counters::off;
  bool counters_from_env = false; // then the totals are printed to stderr at exit
  bool segfault_detector = false;
  bool code_map = false; // also true when anything above needs it
  bool instrumented() const { return counters == Counters::cycles || segfault_detector; }
};

namespace detail {

/// Concatenation by appending: g++ 12 reports false -Wstringop-overflow / -Wrestrict on chains
/// of operator+ over temporaries.
template <class... Parts> std::string cat(const Parts&... parts) {
  std::string s;
  (s.append(std::string_view(parts)), ...);
  return s;
}

inline const char* dump_syntax() {
  return "expected \"passes=<Pass>[,<Pass>...] [dir=<directory>] [formats=text|dot[,...]]\", "
         "e.g. \"passes=InsertLoops,AssignRegisters dir=/tmp/x formats=text,dot\"; pass names "
         "are those of CompileOptions::trace, plus Body, DataFlow and all";
}

[[noreturn]] inline void bad_dump(std::string_view source, std::string_view spec,
                                  std::string_view what) {
  std::string msg(source);
  msg.append("='").append(spec).append("': ").append(what).append("; ").append(dump_syntax());
  raise("snippets.debug.bad_dump_lir", msg);
}

inline std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t at = 0;
  while (at <= s.size()) {
    const std::size_t end = std::min(s.find(sep, at), s.size());
    out.push_back(s.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

inline bool is_identifier(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

} // namespace detail

/// Parses the SNIPPETS_DUMP_LIR syntax: space-separated key=value pairs, `passes` required.
/// @throws [snippets.debug.bad_dump_lir] naming the bad part and the expected syntax.
inline DumpOptions parse_dump_options(std::string_view spec,
                                      std::string_view source = "SNIPPETS_DUMP_LIR") {
  DumpOptions d;
  bool have_passes = false, have_dir = false, have_formats = false;
  std::size_t at = 0;
  while (at < spec.size()) {
    if (spec[at] == ' ' || spec[at] == '\t') {
      ++at;
      continue;
    }
    std::size_t end = at;
    while (end < spec.size() && spec[end] != ' ' && spec[end] != '\t') ++end;
    const std::string_view item = spec.substr(at, end - at);
    at = end;
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      detail::bad_dump(source, spec, std::string("'").append(item).append("' is not key=value"));
    const std::string_view key = item.substr(0, eq), value = item.substr(eq + 1);
    if (value.empty())
      detail::bad_dump(source, spec, std::string("'").append(key).append("' has no value"));
    bool* seen = key == "passes"    ? &have_passes
                 : key == "dir"     ? &have_dir
                 : key == "formats" ? &have_formats
                                    : nullptr;
    if (!seen) detail::bad_dump(source, spec, std::string("unknown key '").append(key).append("'"));
    if (*seen)
      detail::bad_dump(source, spec, std::string("'").append(key).append("' appears twice"));
    *seen = true;
    if (key == "passes") {
      for (std::string_view p : detail::split(value, ','))
        if (!detail::is_identifier(p))
          detail::bad_dump(source, spec, std::string("'").append(p).append("' is not a pass name"));
        else
          d.passes.emplace_back(p);
    } else if (key == "dir") {
      d.dir = std::string(value);
    } else {
      d.text = d.dot = false;
      for (std::string_view f : detail::split(value, ','))
        if (f == "text")
          d.text = true;
        else if (f == "dot")
          d.dot = true;
        else
          detail::bad_dump(source, spec,
                           std::string("unknown format '").append(f).append("' (text, dot)"));
    }
  }
  if (!have_passes) detail::bad_dump(source, spec, "'passes' is missing");
  return d;
}

namespace detail {

inline const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

[[noreturn]] inline void bad_env(const char* name, const char* value, std::string_view expected) {
  std::string msg(name);
  msg.append("='").append(value).append("' is not understood; expected ").append(expected);
  raise("snippets.debug.bad_env", msg);
}

inline bool env_flag(const char* name) {
  const char* v = env(name);
  if (!v) return false;
  const std::string_view s(v);
  if (s == "1" || s == "on" || s == "true" || s == "yes") return true;
  if (s == "0" || s == "off" || s == "false" || s == "no") return false;
  bad_env(name, v, "1 or 0 (on/off, true/false)");
}

// Each variable is read once: a function-local static. A malformed value throws from its
// initializer, so every compile() that needs it throws the same error.
inline const DumpOptions& env_dump() {
  static const DumpOptions d = [] {
    const char* v = env("SNIPPETS_DUMP_LIR");
    return v ? parse_dump_options(v) : DumpOptions{};
  }();
  return d;
}
inline const std::string& env_jit_dump() {
  static const std::string d = env("SNIPPETS_JIT_DUMP") ? env("SNIPPETS_JIT_DUMP") : "";
  return d;
}
inline bool env_perf_map() {
  static const bool on = [] {
    const char* v = env("SNIPPETS_JIT_PROFILE");
    if (!v || std::string_view(v) == "0" || std::string_view(v) == "off") return false;
    if (std::string_view(v) == "perf") return true;
    bad_env("SNIPPETS_JIT_PROFILE", v, "perf (the only profiler supported) or off");
  }();
  return on;
}
inline Counters env_counters() {
  static const Counters c = [] {
    const char* v = env("SNIPPETS_PERF_COUNTERS");
    const std::string_view s = v ? v : "off";
    if (s == "off" || s == "0") return Counters::off;
    if (s == "cycles" || s == "rdtsc") return Counters::cycles;
    if (s == "chrono") return Counters::chrono;
    bad_env("SNIPPETS_PERF_COUNTERS", v, "cycles, chrono or off");
  }();
  return c;
}
inline bool env_segfault_detector() {
  static const bool on = env_flag("SNIPPETS_SEGFAULT_DETECTOR");
  return on;
}

} // namespace detail

/// Applies the environment to the unset fields.
/// @throws [snippets.debug.bad_dump_lir] [snippets.debug.bad_env] for a malformed variable.
inline ResolvedDebug resolve(const DebugOptions& o) {
  ResolvedDebug r;
  r.dump = o.dump ? *o.dump : detail::env_dump();
  r.jit_dump = o.jit_dump ? *o.jit_dump : detail::env_jit_dump();
  r.perf_map = o.perf_map ? *o.perf_map : detail::env_perf_map();
  r.counters = o.counters ? *o.counters : detail::env_counters();
  r.counters_from_env = !o.counters && r.counters != Counters::off;
  r.segfault_detector =
      o.segfault_detector ? *o.segfault_detector : detail::env_segfault_detector();
  r.code_map =
      o.code_map || !r.jit_dump.empty() || r.segfault_detector || r.counters == Counters::cycles;
  return r;
}

/// A kernel name usable in file names: [A-Za-z0-9_.-], anything else becomes '_'.
inline std::string file_stem(std::string_view name) {
  std::string s(name.empty() ? std::string_view("kernel") : name);
  for (char& c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-')) c = '_';
  return s;
}

} // namespace snippets::debug
