// SPDX-License-Identifier: Apache-2.0
// Helpers of the MatMul and attention JIT tests (test_jit_matmul*.cpp, test_jit_mha.cpp,
// test_fold_dequantize_into_matmul.cpp): |t|, a comparison against a per-element error bound,
// random u8/i8 operands, and (x64 only) the Subgraphs of a tokenized model, the int8 variants
// of a compile, one-Subgraph Programs checked against the reference, and the int8 refusals.
#pragma once

#include "jit_test_util.hpp"

namespace snippets::jit_test {

/// u8 or i8 integers uniform in their range, both ends drawn often enough to matter.
inline Tensor bytes(ElementType type, const Shape& s, std::uint64_t seed) {
  const double lo = type == ElementType::u8 ? 0 : -128, hi = type == ElementType::u8 ? 255 : 127;
  Rng rng(seed);
  std::vector<double> v(static_cast<std::size_t>(s.element_count()));
  for (double& x : v) {
    const std::uint64_t r = rng.next() % 10;
    x = r == 0 ? lo : r == 1 ? hi : lo + double(rng.next() % std::uint64_t(hi - lo + 1));
  }
  return Tensor::from_values(type, s, v);
}

inline Tensor absolute(const Tensor& t) {
  Tensor out(t.type(), t.shape());
  for (std::size_t i = 0; i < t.size(); ++i) out.set(i, std::fabs(t.at(i)));
  return out;
}

/// Empty when every element of `got` is within `bound` (broadcast to it) or 8 ulp of `want`.
inline std::string compare_bounded(const Tensor& got, const Tensor& want, const Tensor& bound) {
  std::ostringstream os;
  std::size_t bad = 0;
  const std::size_t every = want.size() / bound.size();
  for (std::size_t i = 0; i < want.size(); ++i) {
    const float g = as_float(got.at(i)), w = as_float(want.at(i));
    const double err = std::fabs(double(g) - double(w));
    if (err <= bound.at(i / every) || close_enough(g, w, {8, 0})) continue;
    if (bad++ < 5)
      os << "\n  at " << coordinates(want.shape(), i) << ": got " << describe(g) << ", want "
         << describe(w) << ", bound " << bound.at(i / every);
  }
  if (bad == 0) return {};
  return std::to_string(bad) + " of " + std::to_string(want.size()) + " differ:" + os.str();
}

#if !defined(__aarch64__)
/// The Subgraphs of a tokenized model.
inline int count_subgraphs(const Graph& t) {
  int n = 0;
  for (ir::NodeId id = 0; id < t.size(); ++id)
    n += std::holds_alternative<ir::Subgraph<x64::Traits>>(t.node(id).op);
  return n;
}

/// Checks that compile() refuses `g` with [snippets.compile.unsupported_matmul] and a message
/// naming `what`, on every ISA of this host that multiplies bytes.
inline void check_int8_refused(const Graph& g, const std::string& what) {
  for_each_isa([&](x64::Isa isa) {
    if (!x64::Traits::int8_products(isa)) return;
    try {
      (void)compile(g, {.isa = isa});
      FAIL("compiled: " << what);
    } catch (const Error& e) {
      CHECK(std::string(e.what()).find("[snippets.compile.unsupported_matmul]") == 0);
      CHECK_MESSAGE(std::string(e.what()).find(what) != std::string::npos, e.what());
    }
  });
}
/// Calls f(options) for both ISAs, each with VPDPBUSD (where the host has it) and with 16-bit
/// words (CompileOptions::native_int8 = false); `base` gives the other options.
template <class F> void for_each_int8_variant(F&& f, CompileOptions base = {}) {
  for_each_isa([&](x64::Isa isa) {
    for (const bool native : {true, false}) {
      if (native && !x64::Traits::int8_dot(isa)) {
        test::skip_on_host(isa == x64::Isa::avx2 ? "AVX-VNNI" : "AVX512_VNNI");
        continue;
      }
      INFO((native ? "VPDPBUSD" : "words, VPMADDWD (native_int8 = false)"));
      CompileOptions o = base;
      o.isa = isa;
      o.native_int8 = native;
      f(o);
    }
  });
}

/// Checks that the tokenizer makes `g` one Subgraph beside its inputs and its Result, and that
/// a Program of it (kernels only, two threads) is within `bound` of the reference on `in`.
inline void check_one_subgraph_program(const Graph& g, const std::vector<Tensor>& in,
                                       const Tensor& bound) {
  const Graph t = passes::tokenize(g);
  CHECK(count_subgraphs(t) == 1);
  CHECK(t.size() == g.parameters().size() + 2); // the inputs, the Subgraph and the Result
  const Tensor want = reference::evaluate(g, std::span<const Tensor>(in))[0];
  const Program<> program(g);
  check_steps_are_kernels(program);
  const Tensor got = program.run(in, with_threads(2))[0];
  const std::string report = compare_bounded(got, want, bound);
  CHECK_MESSAGE(report.empty(), report);
}
#endif // !__aarch64__

} // namespace snippets::jit_test
