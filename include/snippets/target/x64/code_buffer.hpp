// SPDX-License-Identifier: Apache-2.0
// snippets/target/x64/code_buffer.hpp: executable memory that is never writable and
// executable at once (W^X).
//
// Xbyak 6.68 maps RWX by default; CodeBuffer constructs its generator with
// DontSetProtectRWE (pages stay RW while code is written) and switches them to R+X with
// setProtectModeRE() once, in finalize(). The Xbyak destructor makes them RW again and unmaps
// them. A finalized CodeBuffer is immutable and may be called from many threads.
#pragma once

#include <xbyak/xbyak.h>

#include "snippets/error.hpp"

namespace snippets::x64 {

class CodeBuffer : public Xbyak::CodeGenerator {
public:
  explicit CodeBuffer(std::size_t bytes) : Xbyak::CodeGenerator(bytes, Xbyak::DontSetProtectRWE) {}

  /// Resolves labels and makes the code read+execute. Returns the entry point.
  template <class Fn> Fn finalize() {
    ready();            // checks that every label is defined; no protection change here
    setProtectModeRE(); // RW -> R+X, never RWX
    return getCode<Fn>();
  }
};

} // namespace snippets::x64
