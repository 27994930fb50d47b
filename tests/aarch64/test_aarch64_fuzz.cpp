// SPDX-License-Identifier: Apache-2.0
// tests/aarch64/test_aarch64_fuzz.cpp: differential fuzzing of the AArch64 target with the
// x64 suite's own generators and oracles (tests/fuzz/: bit for bit, or within the error
// bounds of fuzz/bounds.hpp), run under qemu-aarch64.
//
// The families whose models a Program runs, so that whatever the target cannot fuse (the ops
// without a NEON emitter, boolean inputs and outputs) stays on the reference path and the
// rest must match: elementwise, math, reduce, program, types, quantized and matmul (products with
// epilogues, MLP chains, attention and MatMul -> Softmax, f32 and bf16 operands: every MatMul
// Subgraph must become a kernel); and dynamic, whose models are compiled once into one dynamic
// kernel and run on several shapes, and dynamic_program, whole Programs of a dynamic leading
// extent (MatMul Subgraphs compiled per size). The layout family compiles kernels with transposed
// outputs, which this target refuses ([snippets.compile.codegen]). Seeds are those of the x64
// run (families.hpp); the volume is smaller under emulation (see `per_family`).
#include <doctest/doctest.h>

#include <chrono>

#include "fuzz/families.hpp"

using namespace snippets;
using namespace snippets::fuzz;

namespace {

struct Volume {
  std::string_view family;
  int models;
};
/// Models per family: 2,580 in all (x64 CI runs 8,600 per ISA natively).
constexpr Volume per_family[] = {{"elementwise", 600}, {"math", 300},      {"reduce", 300},
                                 {"program", 200},     {"types", 200},     {"matmul", 400},
                                 {"dynamic", 300},     {"quantized", 200}, {"dynamic_program", 80}};

void run_family(const Volume& v) {
  const Family* family = find_family(v.family);
  REQUIRE(family != nullptr);
  const auto start = std::chrono::steady_clock::now();
  int failures = 0, kernels = 0;
  std::size_t elements = 0, unchecked = 0;
  for (int i = 0; i < v.models; ++i) {
    const std::uint64_t seed = family->seed_base + std::uint64_t(i);
    const Case c = family->make(seed);
    const Outcome outcome = run_case(c, aarch64::Isa::neon, seed);
    kernels += outcome.kernels;
    elements += outcome.elements;
    unchecked += outcome.unchecked;
    if (outcome.failure.empty()) continue;
    const std::string kind = failure_kind(outcome.failure);
    const Case small = shrink(c, [&](const Case& x) {
      const Outcome o = run_case(x, aarch64::Isa::neon, seed);
      return !o.failure.empty() && failure_kind(o.failure) == kind;
    });
    FAIL_CHECK(v.family << " seed " << seed << ": " << outcome.failure
                        << "\nshrunk case: " << describe(small) << "\n"
                        << ir::to_string(small.model)
                        << "its failure: " << run_case(small, aarch64::Isa::neon, seed).failure);
    if (++failures == 3) break;
  }
  CHECK_MESSAGE(kernels > 0, v.family << ": the generator made no model that compiles");
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  MESSAGE(v.family << " [neon]: " << v.models << " models, " << kernels << " kernels, " << elements
                   << " output elements (" << unchecked << " without a finite bound), " << failures
                   << " failures, " << s << " s");
}

} // namespace

TEST_CASE("aarch64 fuzz: elementwise") { run_family(per_family[0]); }
TEST_CASE("aarch64 fuzz: math") { run_family(per_family[1]); }
TEST_CASE("aarch64 fuzz: reduce") { run_family(per_family[2]); }
TEST_CASE("aarch64 fuzz: program") { run_family(per_family[3]); }
TEST_CASE("aarch64 fuzz: types") { run_family(per_family[4]); }
TEST_CASE("aarch64 fuzz: matmul") { run_family(per_family[5]); }
TEST_CASE("aarch64 fuzz: dynamic") { run_family(per_family[6]); }
TEST_CASE("aarch64 fuzz: quantized") { run_family(per_family[7]); }
TEST_CASE("aarch64 fuzz: dynamic_program") { run_family(per_family[8]); }
