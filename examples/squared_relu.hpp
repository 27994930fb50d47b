// SPDX-License-Identifier: Apache-2.0
// examples/squared_relu.hpp: an op the library does not have, added from outside it.
//
// SquaredRelu(x) = relu(x)^2 (Primer's activation; NaN stays NaN). Everything an op needs is
// here: its tag, its reference formula in double, its x86-64 emitter, and a traits type that
// brings it into graphs. examples/custom_op.cpp and tests/test_custom_op.cpp use it.
#pragma once

#include <cmath>
#include <span>
#include <string_view>

#include "snippets/snippets.hpp"

namespace my_ops {

struct SquaredRelu {
  static constexpr std::string_view name = "SquaredRelu";
  static constexpr snippets::ir::OpCategory category = snippets::ir::OpCategory::unary;
  static constexpr bool float_only = true;
  bool operator==(const SquaredRelu&) const = default;
};

/// The semantics, for the reference interpreter: exact in double.
inline double formula(const SquaredRelu&, double x) {
  const double r = std::isnan(x) || x > 0 ? x : 0.0;
  return r * r;
}

/// The x86-64 backend with SquaredRelu: x64::Traits fuses every op that has an emitter.
struct Traits : snippets::x64::Traits {
  using extra_ops = snippets::ir::TypeList<SquaredRelu>;
};

} // namespace my_ops

/// Its code on AVX2 (ymm) and AVX-512 (zmm): max(0, x) keeps a NaN x (VMAXPS returns its second
/// source when either is NaN), and one rounding of r * r gives the correctly rounded square,
/// so the kernel matches the reference bit for bit.
template <> struct snippets::x64::Emitter<my_ops::SquaredRelu> {
  static constexpr int scratch = 1; // vector registers it needs besides dst and its input
  template <class Vmm>
  static void emit(EmitContext<Vmm>& c, const my_ops::SquaredRelu&, Vmm dst,
                   std::span<const Vmm> in) {
    const Vmm r = c.scratch[0];
    c.h.vxorps(r, r, r);
    c.h.vmaxps(r, r, in[0]);
    c.h.vmulps(dst, r, r);
  }
};
