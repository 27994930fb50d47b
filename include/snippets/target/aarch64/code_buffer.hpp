// SPDX-License-Identifier: Apache-2.0
// snippets/target/aarch64/code_buffer.hpp: executable memory for AArch64 kernels that is never
// writable and executable at once (W^X).
//
// AsmJit assembles into its own CodeHolder (plain heap memory). CodeBuffer maps fresh pages
// read+write, relocates the code to their address and copies it in, then switches them to
// read+execute with one mprotect and flushes the instruction cache for the range (AArch64 does
// not keep instruction and data caches coherent for code written at run time). The destructor
// unmaps them. A CodeBuffer is immutable once constructed and may be called from many threads.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include <asmjit/core.h>

#include "snippets/error.hpp"

namespace snippets::aarch64 {

class CodeBuffer {
public:
  /// Copies the assembled `code` into new pages and makes them read+execute.
  /// @throws [snippets.compile.codegen] when the pages cannot be mapped or protected.
  explicit CodeBuffer(asmjit::CodeHolder& code) {
    if (code.flatten() != asmjit::kErrorOk || code.resolveUnresolvedLinks() != asmjit::kErrorOk)
      raise("snippets.compile.codegen", "AArch64 code generation failed: unresolved labels");
    size_ = code.codeSize();
    const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    mapped_ = (size_ + page - 1) / page * page;
    void* p = mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
      raise("snippets.compile.codegen", "cannot map " + std::to_string(mapped_) + " bytes of code");
    base_ = static_cast<std::uint8_t*>(p);
    if (code.relocateToBase(reinterpret_cast<std::uint64_t>(base_)) != asmjit::kErrorOk ||
        code.copyFlattenedData(base_, size_) != asmjit::kErrorOk) {
      munmap(base_, mapped_);
      raise("snippets.compile.codegen", "AArch64 code generation failed: relocation");
    }
    if (mprotect(base_, mapped_, PROT_READ | PROT_EXEC) != 0) { // RW -> R+X, never RWX
      munmap(base_, mapped_);
      raise("snippets.compile.codegen", "cannot make the kernel's pages executable");
    }
    __builtin___clear_cache(reinterpret_cast<char*>(base_), reinterpret_cast<char*>(base_ + size_));
  }
  CodeBuffer(const CodeBuffer&) = delete;
  CodeBuffer& operator=(const CodeBuffer&) = delete;
  ~CodeBuffer() { munmap(base_, mapped_); }

  const std::uint8_t* data() const { return base_; }
  std::size_t size() const { return size_; }
  template <class Fn> Fn entry() const { return reinterpret_cast<Fn>(base_); }

private:
  std::uint8_t* base_ = nullptr;
  std::size_t size_ = 0, mapped_ = 0;
};

} // namespace snippets::aarch64
