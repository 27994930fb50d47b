// SPDX-License-Identifier: Apache-2.0
// tests/aarch64/test_aarch64_memory_access.cpp: what target/aarch64/memory_access.hpp reads and
// writes beyond the numeric types of test_aarch64_ops.cpp, under qemu-aarch64:
//  - boolean kernel inputs and outputs (one byte per element, any non-zero byte read as 1.0f,
//    0 or 1 written for value != 0 with NaN true), through the ops that read and write them:
//    comparisons (on booleans too), logical ops, Select, Convert. Boolean outputs are compared
//    byte for byte with the reference (jit_test_util.hpp's compare); inputs hold bytes other
//    than 0 and 1;
//  - the parts of an input (Slices of its innermost axis, ONNX Split's) read in place, at their
//    offsets with the input's row stride (passes/slice_reads.hpp);
//  - static tails (exact pieces), run-time tails of dynamic kernels (lanes_raw) and guard pages
//    on both sides of every tensor.
#include <doctest/doctest.h>

#include <cstring>
#include <memory>

#include "aarch64/a64_test_util.hpp"

using namespace snippets;
using namespace snippets::a64_test;

namespace {

constexpr ElementType boolean = ElementType::boolean;

/// Runs `k` on copies of `in` placed against guard pages (after, then before), with 1 and 2
/// threads, and compares every output with `want`.
void check_guarded(const CompiledKernel& k, const std::vector<Tensor>& in,
                   const std::vector<Tensor>& want) {
  for (const Guard where : {Guard::after, Guard::before})
    for (const int threads : {1, 2}) {
      INFO((where == Guard::after ? "guard after" : "guard before") << ", threads = " << threads);
      std::vector<std::unique_ptr<GuardedBuffer>> bufs;
      std::vector<ConstTensorView> in_views;
      std::vector<TensorView> out_views;
      for (const Tensor& x : in) {
        bufs.push_back(std::make_unique<GuardedBuffer>(x.byte_size(), where));
        std::memcpy(bufs.back()->data(), x.data(), x.byte_size());
        in_views.push_back({x.type(), x.shape(), bufs.back()->data()});
      }
      for (const Tensor& y : want) {
        bufs.push_back(std::make_unique<GuardedBuffer>(y.byte_size(), where));
        out_views.push_back({y.type(), y.shape(), bufs.back()->data()});
      }
      k.run(in_views, out_views, with_threads(threads));
      for (std::size_t o = 0; o < want.size(); ++o) {
        Tensor got(want[o].type(), want[o].shape());
        std::memcpy(got.data(), out_views[o].data, got.byte_size());
        const std::string report = compare(got, want[o], exact);
        CHECK_MESSAGE(report.empty(), report);
      }
    }
}

} // namespace

TEST_CASE(
    "aarch64 memory access: booleans: comparisons, logical ops, Select and Convert read and write "
    "booleans for every size from 1 to 67") {
  for (Dim n = 1; n <= 67; ++n) {
    INFO("n = " << n);
    const auto seed = 300 + std::uint64_t(n) * 11;
    { // f32 in, boolean out
      G g;
      const auto x = g.parameter(f32, {2, n});
      const auto y = g.parameter(f32, {n}); // broadcast along the outer dimension
      g.result(g.greater(x, y));
      g.result(g.not_equal(x, x));                    // NaN != NaN: true
      g.result(g.convert(g.subtract(x, y), boolean)); // -0 false, NaN true
      const Tensor tx = make_tensor({2, n}, seed);
      check_kernel(g, {tx, share_values(tx, make_tensor({n}, seed + 1))}, exact);
    }
    { // boolean in (any non-zero byte true), boolean out
      G g;
      const auto a = g.parameter(boolean, {2, n});
      const auto b = g.parameter(boolean, {n});
      const auto c = g.parameter(boolean, {2, 1}); // broadcast along the innermost
      g.result(g.logical_and(a, b));
      g.result(g.logical_xor(a, c));
      g.result(g.logical_not(a));
      g.result(a); // non-zero bytes leave as 1
      g.result(g.equal(a, b));
      g.result(g.greater(a, c));
      check_kernel(g,
                   {make_raw_booleans({2, n}, seed + 2), make_raw_booleans({n}, seed + 3),
                    make_raw_booleans({2, 1}, seed + 4)},
                   exact);
    }
    { // boolean conditions select numbers
      G g;
      const auto a = g.parameter(boolean, {2, n});
      const auto x = g.parameter(f32, {2, n});
      const auto y = g.parameter(f32, {1, n});
      g.result(g.select(a, x, y));
      g.result(g.convert(a, f32));
      g.result(g.convert(a, ElementType::u8));
      check_kernel(g,
                   {make_raw_booleans({2, n}, seed + 5), make_tensor({2, n}, seed + 6),
                    make_tensor({1, n}, seed + 7)},
                   exact);
    }
  }
}

TEST_CASE("aarch64 memory access: booleans: static and run-time tails never touch memory outside a "
          "boolean "
          "tensor (guard pages)") {
  auto build = [](G& g, const Shape& a_shape, const Shape& b_shape) {
    const auto a = g.parameter(boolean, a_shape);
    const auto b = g.parameter(boolean, b_shape);
    const auto x = g.parameter(f32, a_shape);
    g.result(g.logical_or(a, b));
    g.result(g.greater(x, g.scalar(f32, 0)));
    g.result(g.select(a, x, g.negative(x)));
  };
  G dyn;
  build(dyn, {dynamic, dynamic}, {dynamic, 1});
  const CompiledKernel dk = compile(dyn);
  REQUIRE(dk.is_dynamic());
  std::uint64_t seed = 800;
  for (Dim n = 1; n <= 9; ++n) {
    INFO("n = " << n);
    const std::vector<Tensor> in = {make_raw_booleans({3, n}, ++seed),
                                    make_raw_booleans({3, 1}, ++seed), make_tensor({3, n}, ++seed)};
    G g;
    build(g, {3, n}, {3, 1});
    const std::vector<Tensor> want = reference::evaluate(g, std::span<const Tensor>(in));
    {
      INFO("static");
      check_guarded(compile(g), in, want);
    }
    {
      INFO("dynamic");
      check_guarded(dk, in, want);
    }
  }
}

TEST_CASE("aarch64 memory access: the parts of an input are read in place (GLU), guard pages") {
  std::uint64_t seed = 900;
  for (const Dim c : {Dim{1}, Dim{2}, Dim{3}, Dim{4}, Dim{5}, Dim{7}, Dim{9}, Dim{17}, Dim{33}}) {
    INFO("half = " << c);
    for (const ElementType t : {f32, ElementType::u8, ElementType::f16}) {
      INFO(to_string(t));
      G g;
      const auto x = g.parameter(t, {3, 2 * c});
      auto part = [&](std::int64_t start) {
        const auto s = g.slice(x, -1, start, c);
        return t == f32 ? s : g.convert(s, f32);
      };
      g.result(g.multiply(part(0), g.relu(part(c))));
      std::vector<double> v = make_values(std::size_t(6 * c), ++seed, Pattern::finite);
      for (double& d : v) d = std::fabs(std::round(d * 16));
      const std::vector<Tensor> in = {Tensor::from_values(t, {3, 2 * c}, v)};
      reference::Options ro;
      ro.round_each_node = true;
      const std::vector<Tensor> want = reference::evaluate(g, std::span<const Tensor>(in), ro);
      const CompiledKernel k = compile(g, {.fma = false});
      CHECK(k.signature().domain == std::vector<Dim>{3, c}); // the rows stay apart
      check_guarded(k, in, want);
    }
  }
}
