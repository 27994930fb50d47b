// SPDX-License-Identifier: Apache-2.0
// snippets/debug/segfault_detector.hpp: names the expression of a JIT kernel that crashed.
//
// With CompileOptions::debug.segfault_detector (or SNIPPETS_SEGFAULT_DETECTOR=1), compile()
// instruments the kernel: before each memory access (Load, Store, BroadcastLoad) it stores the
// expression's LIR order into the call frame, and the runtime registers each call as this
// thread's debug::detail::active_call. compile() also installs a SIGSEGV handler (sigaction,
// SA_SIGINFO). When a fault hits while a kernel runs on the faulting thread, the handler
// writes to stderr
//   snippets: SIGSEGV in JIT kernel 'Subgraph_3' (avx2)
//     expression: 6:     Load x8 'a' (%0) -> [3,17] v2
//     emitter:    load: vmovups, full vector
//     faulting address: 0x0000000000000010
//     pc: kernel+0x4b, in 6:     Load x8 'a' ...
// and then hands the signal to the handler that was installed before it (or the default
// action, which kills the process with SIGSEGV as usual). Faults outside kernels go straight
// to the previous handler. The handler only reads memory and calls write(2) and sigaction(2):
// it is async-signal-safe. A kernel compiled without the detector has no extra instruction.
#pragma once

#include <signal.h>
#include <ucontext.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <mutex>

#include "snippets/runtime/kernel_debug_info.hpp"

namespace snippets::debug {

namespace detail {

inline struct sigaction& previous_segv_action() {
  static struct sigaction prev {};
  return prev;
}

inline void put(const char* s, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(STDERR_FILENO, s, n);
    if (w <= 0) return;
    s += w;
    n -= static_cast<std::size_t>(w);
  }
}
inline void put(const char* s) { put(s, std::strlen(s)); }
inline void put_hex(std::uint64_t v, int digits) {
  char buf[19] = "0x";
  for (int i = 0; i < digits; ++i)
    buf[2 + i] = "0123456789abcdef"[(v >> (4 * (digits - 1 - i))) & 15];
  put(buf, static_cast<std::size_t>(2 + digits));
}

inline void report_fault(const ActiveCall& call, const siginfo_t* si, const void* uctx) {
  put("snippets: SIGSEGV in JIT kernel '");
  put(call.info->name.c_str());
  put("' (");
  put(call.info->isa.c_str());
  put(")\n");
  const std::int64_t slot = *call.expr_slot;
  const CodeRecord* rec =
      call.map && slot >= 0 ? call.map->find_order(static_cast<std::size_t>(slot)) : nullptr;
  if (rec) {
    put("  expression: ");
    put(rec->text.c_str());
    put("\n  emitter:    ");
    put(rec->emitter.c_str());
    put("\n");
  } else {
    put("  expression: none yet (the fault came before the first memory access)\n");
  }
  put("  faulting address: ");
  put_hex(reinterpret_cast<std::uintptr_t>(si->si_addr), 16);
  put("\n");
  const auto* uc = static_cast<const ucontext_t*>(uctx);
#if defined(__aarch64__)
  const auto pc = static_cast<std::uint64_t>(uc->uc_mcontext.pc);
#else
  const auto pc = static_cast<std::uint64_t>(uc->uc_mcontext.gregs[REG_RIP]);
#endif
  const auto base = reinterpret_cast<std::uintptr_t>(call.code);
  if (pc >= base && pc < base + call.code_bytes) {
    put("  pc: kernel+");
    put_hex(pc - base, 4);
    if (const CodeRecord* at = call.map ? call.map->find_offset(pc - base) : nullptr) {
      put(", in ");
      put(at->text.c_str());
    }
    put("\n");
  } else {
    put("  pc: ");
    put_hex(pc, 16);
    put(" (outside the kernel's code)\n");
  }
}

inline void segv_handler(int sig, siginfo_t* si, void* uctx);

/// Hands the signal to the previous disposition: call its handler, or restore the default
/// (or ignore) and let the faulting instruction run again, which then takes that action.
inline void chain_segv(int sig, siginfo_t* si, void* uctx) {
  const struct sigaction& prev = previous_segv_action();
  if ((prev.sa_flags & SA_SIGINFO) && prev.sa_sigaction && prev.sa_sigaction != &segv_handler)
    return prev.sa_sigaction(sig, si, uctx);
  if (!(prev.sa_flags & SA_SIGINFO) && prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN)
    return prev.sa_handler(sig);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
  if (si->si_code <= 0) ::raise(sig); // sent by kill/raise: nothing would fault again
}

inline void segv_handler(int sig, siginfo_t* si, void* uctx) {
  if (const ActiveCall* call = active_call) report_fault(*call, si, uctx);
  chain_segv(sig, si, uctx);
}

} // namespace detail

/// Installs the SIGSEGV handler; compile() calls it for kernels with the detector. Idempotent:
/// it does nothing while the handler is in place, and reinstalls it (keeping the current
/// handler as the one to chain to) when someone replaced it.
inline void install_segfault_detector() {
  static std::mutex m;
  const std::lock_guard lock(m);
  struct sigaction cur {};
  sigaction(SIGSEGV, nullptr, &cur);
  if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == &detail::segv_handler) return;
  struct sigaction sa {};
  sa.sa_sigaction = &detail::segv_handler;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, &detail::previous_segv_action());
}

} // namespace snippets::debug
