// SPDX-License-Identifier: Apache-2.0
// snippets/target/x64/isa.hpp: the x86-64 instruction sets we emit and host detection.
//
// The ISAs form a chain: avx512 (AVX-512 F/BW/DQ/VL, 16 f32 lanes, 32 registers, opmasks)
// implies avx2 (AVX2 + FMA, 8 lanes, 16 registers). Only the register width is a template
// parameter of emission; everything else is a run-time query. SNIPPETS_MAX_ISA=avx2 (read once)
// makes the host behave as if it had no AVX-512, like oneDNN's ONEDNN_MAX_CPU_ISA: the default
// ISA is capped and requesting a higher one is [snippets.isa.unsupported_host].
#pragma once

#include <xbyak/xbyak.h>
#include <xbyak/xbyak_util.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "snippets/error.hpp"

// Xbyak 6.68 (Debian 12) to 7.x (Conan, vcpkg); CI builds the examples and the JIT tests with both
static_assert(Xbyak::VERSION >= 0x6680 && Xbyak::VERSION < 0x8000,
              "snippets needs Xbyak 6.68 or newer (6.x or 7.x); install libxbyak-dev");

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
inline bool cpu_supports(Isa isa) {
  static const Xbyak::util::Cpu cpu;
  using C = Xbyak::util::Cpu;
  const bool avx2 = cpu.has(C::tAVX2) && cpu.has(C::tFMA);
  if (isa == Isa::avx2) return avx2;
  return avx2 && cpu.has(C::tAVX512F) && cpu.has(C::tAVX512BW) && cpu.has(C::tAVX512DQ) &&
         cpu.has(C::tAVX512VL);
}

/// True when the CPU has AVX512_BF16 (VCVTNEPS2BF16); a run-time refinement of avx512.
inline bool host_has_avx512_bf16() {
  static const bool has = Xbyak::util::Cpu().has(Xbyak::util::Cpu::tAVX512_BF16);
  return has;
}

/// True when the CPU has AVX512_VNNI (EVEX VPDPBUSD: u8 x s8 products on zmm).
inline bool host_has_avx512_vnni() {
  static const bool has = Xbyak::util::Cpu().has(Xbyak::util::Cpu::tAVX512_VNNI);
  return has;
}

/// True when the CPU has AVX-VNNI (VEX VPDPBUSD: u8 x s8 products on ymm, with AVX2).
inline bool host_has_avx_vnni() {
  static const bool has = Xbyak::util::Cpu().has(Xbyak::util::Cpu::tAVX_VNNI);
  return has;
}

/// The SNIPPETS_MAX_ISA cap, read once; nothing when it is unset.
/// @throws [snippets.isa.bad_env] when it names no ISA.
inline std::optional<Isa> isa_cap() {
  static const std::optional<Isa> cap = [] {
    const char* env = std::getenv("SNIPPETS_MAX_ISA");
    if (!env) return std::optional<Isa>{};
    const auto isa = isa_from_string(env);
    if (!isa)
      raise("snippets.isa.bad_env",
            std::string("SNIPPETS_MAX_ISA='") + env + "' is not an ISA; use avx2 or avx512");
    return isa;
  }();
  return cap;
}

/// True when kernels of `isa` may run here: the CPU can, and SNIPPETS_MAX_ISA allows it (a
/// capped host behaves as if it lacked the higher ISAs, for testing and for reproducing).
inline bool host_supports(Isa isa) {
  return cpu_supports(isa) &&
         static_cast<int>(isa) <= static_cast<int>(isa_cap().value_or(Isa::avx512));
}

/// The best ISA this host may run.
/// @throws [snippets.isa.unsupported_host] when the host lacks AVX2 and FMA.
inline Isa best_host_isa() {
  if (host_supports(Isa::avx512)) return Isa::avx512;
  if (host_supports(Isa::avx2)) return Isa::avx2;
  raise("snippets.isa.unsupported_host",
        "this CPU has no AVX2+FMA (or SNIPPETS_MAX_ISA hides it); snippets' x64 target needs it "
        "(use the reference backend)");
}

} // namespace snippets::x64
