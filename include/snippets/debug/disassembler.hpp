// SPDX-License-Identifier: Apache-2.0
// snippets/debug/disassembler.hpp: a generated kernel as text.
//
//   std::cout << snippets::debug::disassemble(kernel);
//
// With Zydis (libzydis-dev; link the CMake target snippets::zydis, which links Zydis::Zydis and
// defines SNIPPETS_WITH_ZYDIS=1) each instruction is decoded in Intel syntax:
//   0031  c5 fc 10 06                 vmovups ymm0, ymmword ptr [rsi]
// Without it (the library never needs Zydis to compile) the bytes are printed in hex, with the
// objdump command that decodes them once written to a file (write_code). When the kernel was
// compiled with a code map (CompileOptions::debug.code_map, implied by the segfault detector,
// the cycle counters and SNIPPETS_JIT_DUMP), the code of each Linear IR expression is preceded
// by its LIR line and the emitter that produced it:
//   ; 6: Load x8 'a' (%0) -> [3,17] v2   [load: vmovups, full vector]
// Offsets are from the kernel's start (RIP-relative operands then read as offsets too), so the
// text is the same in every run; DisassemblyOptions::absolute_addresses shows real addresses.
// The constant table after the code is printed as data.
#pragma once

#if defined(SNIPPETS_WITH_ZYDIS) && SNIPPETS_WITH_ZYDIS
#if __has_include(<Zydis/Zydis.h>)
#include <Zydis/Zydis.h>
#define SNIPPETS_HAS_ZYDIS 1
#endif
#endif
#ifndef SNIPPETS_HAS_ZYDIS
#define SNIPPETS_HAS_ZYDIS 0
#endif

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <string_view>

#include "snippets/debug/files.hpp"
#include "snippets/debug/options.hpp"
#include "snippets/runtime/compiled_kernel.hpp"

namespace snippets::debug {

struct DisassemblyOptions {
  bool streaming = false;          // the variant with non-temporal stores
  bool decode = true;              // false: raw bytes even when Zydis is available
  bool absolute_addresses = false; // real addresses instead of offsets from the kernel start
};

/// The objdump command that disassembles a file written by write_code.
inline std::string objdump_command(std::string_view bin_path) {
  return std::string("objdump -D -b binary -mi386:x86-64 -M intel ").append(bin_path);
}

namespace detail {

inline void hex_bytes(std::string& out, std::span<const std::uint8_t> b) {
  char buf[4];
  for (std::size_t i = 0; i < b.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%s%02x", i ? " " : "", b[i]);
    out += buf;
  }
}

inline void address(std::string& out, std::uint64_t a, bool absolute) {
  char buf[24];
  std::snprintf(buf, sizeof buf, absolute ? "%016llx  " : "%04llx  ",
                static_cast<unsigned long long>(a));
  out += buf;
}

/// Rows of up to 16 bytes: "offset  hex".
inline void raw_rows(std::string& out, std::span<const std::uint8_t> code, std::uint64_t from,
                     std::uint64_t to, std::uint64_t base, bool absolute) {
  for (std::uint64_t at = from; at < to; at += 16) {
    address(out, base + at, absolute);
    hex_bytes(out, code.subspan(at, std::min<std::uint64_t>(16, to - at)));
    out += '\n';
  }
}

/// A disassemble() that decodes, registered by every translation unit built with Zydis: code
/// built without it (compile() inside snippets::prebuilt, which writes SNIPPETS_JIT_DUMP's
/// listings) decodes as well when the program links Zydis anywhere.
using DecodingDisassembler = std::string (*)(const KernelCode&, std::string_view, std::string_view,
                                             const DisassemblyOptions&);
inline std::atomic<DecodingDisassembler>& decoding_disassembler() {
  static std::atomic<DecodingDisassembler> f{nullptr};
  return f;
}

} // namespace detail

// What follows differs with and without Zydis, and one program may hold both kinds of
// translation unit (snippets::prebuilt's instances are built without it): an inline namespace
// named by the configuration gives each kind its own symbols, so the linker never hands one
// kind's inline copy to the other's callers.
#if SNIPPETS_HAS_ZYDIS
inline namespace with_zydis {
#else
inline namespace without_zydis {
#endif

/// True when this translation unit was built with Zydis (SNIPPETS_WITH_ZYDIS=1).
inline constexpr bool has_zydis = SNIPPETS_HAS_ZYDIS != 0;

/// Instructions in [from, to); undecodable bytes are printed as `(bad)`, one at a time.
inline void decoded_rows(std::string& out, std::span<const std::uint8_t> code, std::uint64_t from,
                         std::uint64_t to, std::uint64_t base, bool absolute) {
#if SNIPPETS_HAS_ZYDIS
  std::uint64_t at = from;
  while (at < to) {
    ZydisDisassembledInstruction insn;
    const ZyanStatus st = ZydisDisassembleIntel(ZYDIS_MACHINE_MODE_LONG_64, base + at,
                                                code.data() + at, to - at, &insn);
    const std::uint64_t len = ZYAN_SUCCESS(st) ? insn.info.length : 1;
    detail::address(out, base + at, absolute);
    std::string hex;
    detail::hex_bytes(hex, code.subspan(at, len));
    hex.resize(std::max<std::size_t>(hex.size(), 30), ' ');
    out.append(hex).append("  ").append(ZYAN_SUCCESS(st) ? insn.text : "(bad)").append("\n");
    at += len;
  }
#else
  detail::raw_rows(out, code, from, to, base, absolute);
#endif
}

/// One kernel variant as text; `name` and `isa` go into the header line.
inline std::string disassemble(const KernelCode& k, std::string_view name, std::string_view isa,
                               const DisassemblyOptions& opt = {}) {
  if (!has_zydis && opt.decode)
    if (const auto decoding = detail::decoding_disassembler().load())
      return decoding(k, name, isa, opt);
  std::string out;
  const std::span<const std::uint8_t> code = k.bytes;
  if (code.empty()) return out.append("; no code\n");
  const bool decode = opt.decode && has_zydis;
  const std::uint64_t base =
      opt.absolute_addresses ? reinterpret_cast<std::uintptr_t>(code.data()) : 0;
  const std::uint64_t text = k.text_bytes ? k.text_bytes : code.size();
  out.append("; kernel '")
      .append(name)
      .append("' (")
      .append(isa)
      .append(opt.streaming ? ", non-temporal stores" : "")
      .append("): ");
  out.append(std::to_string(text)).append(" bytes of code, ");
  out.append(std::to_string(code.size() - text)).append(" bytes of constants\n");
  if (!decode) {
    out.append(has_zydis ? "; raw bytes (decoding was turned off)\n"
                         : "; raw bytes: built without Zydis (link snippets::zydis, or define "
                           "SNIPPETS_WITH_ZYDIS=1 and link Zydis::Zydis, to decode)\n");
    out.append("; to decode: debug::write_code(kernel, \"kernel.bin\"), then\n;   ")
        .append(objdump_command("kernel.bin"))
        .append("\n");
  }
  auto rows = [&](std::uint64_t from, std::uint64_t to) {
    if (decode)
      decoded_rows(out, code, from, to, base, opt.absolute_addresses);
    else
      detail::raw_rows(out, code, from, to, base, opt.absolute_addresses);
  };
  if (k.map) {
    for (const auto& r : k.map->records) {
      if (r.begin == r.end) continue; // Parameters, Results, loops that run once
      out.append("; ").append(r.text).append("   [").append(r.emitter).append("]\n");
      rows(r.begin, r.end);
    }
  } else {
    out.append("; no code map: compile with CompileOptions::debug.code_map = true to see which "
               "expression produced which instructions\n");
    rows(0, text);
  }
  if (text < code.size()) {
    out.append("; constant table\n");
    detail::raw_rows(out, code, text, code.size(), base, opt.absolute_addresses);
  }
  return out;
}

#if SNIPPETS_HAS_ZYDIS
/// Registers this variant for the translation units built without Zydis (initialized at start-up
/// in every translation unit that includes this header with Zydis, used or not).
inline const bool decoding_registered =
    (detail::decoding_disassembler().store(static_cast<detail::DecodingDisassembler>(&disassemble)),
     true);
#endif

inline std::string disassemble(const CompiledKernel& k, const DisassemblyOptions& opt = {}) {
  return disassemble(k.kernel_code(opt.streaming), k.name(), k.signature().isa, opt);
}

/// Writes the raw machine code (instructions and constants) to `path`, for objdump.
/// @throws [snippets.debug.dump_failed] when the file cannot be written.
inline void write_code(const KernelCode& k, const std::string& path) {
  const auto code = k.bytes;
  detail::write_file(path,
                     std::string_view(reinterpret_cast<const char*>(code.data()), code.size()));
}
inline void write_code(const CompiledKernel& k, const std::string& path, bool streaming = false) {
  write_code(k.kernel_code(streaming), path);
}

/// SNIPPETS_JIT_DUMP: `<dir>/<kernel>.bin` (the code) and `<kernel>.asm` (disassemble()), and
/// `<kernel>.nt.bin`, `<kernel>.nt.asm` for the variant with non-temporal stores.
inline void write_jit_dump(const std::string& dir, const CompiledKernel& k) {
  detail::make_directories(dir);
  for (const bool streaming : {false, true}) {
    if (k.kernel_code(streaming).empty()) continue;
    const std::string stem = detail::join_path(dir, file_stem(k.name())) + (streaming ? ".nt" : "");
    write_code(k, stem + ".bin", streaming);
    detail::write_file(stem + ".asm", disassemble(k, {.streaming = streaming}));
  }
}

} // inline namespace with_zydis / without_zydis
} // namespace snippets::debug
