// SPDX-License-Identifier: Apache-2.0
// tests/aarch64/a64_test_util.hpp: what the emulated AArch64 tests share: the graph type of the
// target, tolerances of its transcendental emitters, "compile, run with 1 and 2 threads,
// compare with the reference interpreter", and the int8 tests' skip and refusal checks.
// Inputs, comparison and guard pages come from tests/jit_test_util.hpp (its
// target-independent part).
#pragma once

#include <doctest/doctest.h>

#include <span>
#include <string>
#include <vector>

#include "jit_test_util.hpp"
#include "snippets/snippets.hpp"

// The library builds for AArch64 without Xbyak: nothing outside target/x64 includes it (the
// cross compiler would find Debian's headers in /usr/include, so this is checked here).
#if defined(XBYAK_XBYAK_H_)
#error "an Xbyak header was included in the AArch64 build"
#endif

namespace snippets::a64_test {

using namespace jit_test;
using Backend = aarch64::Traits;
using G = ir::Graph<Backend>;
static_assert(std::is_same_v<DefaultTraits, aarch64::Traits>);

/// Skips an int8 case where the processor has no FEAT_DotProd (those refusals are checked
/// apart, in ctest's aarch64.emulated.no_dotprod).
inline bool has_dotprod() {
  if (Backend::host_has_dotprod()) return true;
  MESSAGE("no FEAT_DotProd here: int8 products are refused (tested apart)");
  return false;
}

/// `f` must throw [snippets.compile.unsupported_matmul] with `what` in its message.
template <class F> void check_refused(F&& f, const std::string& what) {
  try {
    f();
    FAIL("compiled where it should be refused: " << what);
  } catch (const Error& e) {
    CHECK_MESSAGE(e.id() == "snippets.compile.unsupported_matmul", std::string(e.what()));
    CHECK_MESSAGE(std::string(e.what()).find(what) != std::string::npos, std::string(e.what()));
  }
}

/// Compiles `g`, runs it with 1 and 2 threads and compares each output with the reference.
/// `round_each_node`: the reference rounds every node to f32, as op-by-op f32 code does.
inline void check_kernel(const G& g, const std::vector<Tensor>& in, Tolerance tol,
                         bool round_each_node = false, CompileOptions opt = {}) {
  reference::Options ro;
  ro.round_each_node = round_each_node;
  const std::vector<Tensor> want = reference::evaluate(g, std::span<const Tensor>(in), ro);
  check_runs(compile(g, opt), in, want, tol, {1, 2});
}

} // namespace snippets::a64_test
