// snippets/target/x64/isa.hpp: the x86-64 instruction sets we emit and host detection.
//
// The ISAs form a chain: avx512 (AVX-512 F/BW/DQ/VL, 16 f32 lanes, 32 registers, opmasks)
// implies avx2 (AVX2 + FMA, 8 lanes, 16 registers). Only the register width is a template
// parameter of emission; everything else is a run-time query. SNIPPETS_MAX_ISA=avx2 caps the
// ISA picked by default (read once), like oneDNN's ONEDNN_MAX_CPU_ISA.
#pragma once

#include <xbyak/xbyak.h>
#include <xbyak/xbyak_util.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "snippets/error.hpp"

static_assert(Xbyak::VERSION >= 0x6680 && Xbyak::VERSION < 0x7000,
              "snippets needs the Xbyak 6.x API (6.68 or newer 6.x); install libxbyak-dev");

namespace snippets::x64 {

enum class Isa { avx2, avx512 };

constexpr std::string_view to_string(Isa isa) { return isa == Isa::avx2 ? "avx2" : "avx512"; }
constexpr int lanes(Isa isa) { return isa == Isa::avx2 ? 8 : 16; }
constexpr int vector_registers(Isa isa) { return isa == Isa::avx2 ? 16 : 32; }

inline std::optional<Isa> isa_from_string(std::string_view s) {
  if (s == "avx2") return Isa::avx2;
  if (s == "avx512" || s == "avx512_core") return Isa::avx512;
  return std::nullopt;
}

/// True when this CPU and OS can run code of `isa` (CPUID and XGETBV through Xbyak).
inline bool host_supports(Isa isa) {
  static const Xbyak::util::Cpu cpu;
  using C = Xbyak::util::Cpu;
  const bool avx2 = cpu.has(C::tAVX2) && cpu.has(C::tFMA);
  if (isa == Isa::avx2) return avx2;
  return avx2 && cpu.has(C::tAVX512F) && cpu.has(C::tAVX512BW) && cpu.has(C::tAVX512DQ) &&
         cpu.has(C::tAVX512VL);
}

/// The best ISA of this host, capped by SNIPPETS_MAX_ISA (read once).
/// @throws [snippets.isa.unsupported_host] when the host lacks AVX2 and FMA.
inline Isa best_host_isa() {
  static const std::optional<Isa> cap = [] {
    const char* env = std::getenv("SNIPPETS_MAX_ISA");
    if (!env) return std::optional<Isa>{};
    const auto isa = isa_from_string(env);
    if (!isa)
      raise("snippets.isa.bad_env",
            std::string("SNIPPETS_MAX_ISA='") + env + "' is not an ISA; use avx2 or avx512");
    return isa;
  }();
  if (host_supports(Isa::avx512) && cap.value_or(Isa::avx512) == Isa::avx512) return Isa::avx512;
  if (host_supports(Isa::avx2)) return Isa::avx2;
  raise("snippets.isa.unsupported_host",
        "this CPU has no AVX2+FMA; snippets' x64 target needs it (use the reference backend)");
}

} // namespace snippets::x64
