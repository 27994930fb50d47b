// SPDX-License-Identifier: Apache-2.0
// tests/aarch64/test_aarch64_runtime.cpp: what the AArch64 target promises beyond each op's
// values, run under qemu-aarch64 (docs/testing.md):
//  - guard pages: tails never read or write a byte past the end or before the start of any
//    input or output, for every element type it loads and stores;
//  - W^X: code pages are never writable and executable at once (/proc/self/maps as the
//    emulator presents it to the program);
//  - Program: a model mixing fusable ops (a MatMul with its epilogue among them) with one the
//    target cannot take (a reduction over an outer axis) runs whole, that one on the
//    reference path;
//  - Transposes folded into inputs of every type (strided reads, lane by lane).
#include <doctest/doctest.h>

#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

#include "aarch64/a64_test_util.hpp"

using namespace snippets;
using namespace snippets::a64_test;

TEST_CASE("aarch64: tails never read or write outside a tensor (guard pages)") {
  for (const ElementType t : {ElementType::f32, ElementType::f16, ElementType::bf16,
                              ElementType::i32, ElementType::i8, ElementType::u8}) {
    for (Dim n = 1; n <= 9; ++n) {
      for (const bool flat : {false, true}) {
        INFO(to_string(t) << ", n = " << n << (flat ? ", flat" : ", rows"));
        G g;
        const std::vector<Shape> shapes =
            flat ? std::vector<Shape>{{2 * n}, {2 * n}} : std::vector<Shape>{{3, n}, {3, 1}, {n}};
        std::vector<ir::Value> p;
        for (const Shape& s : shapes) p.push_back(g.convert(g.parameter(t, s), f32));
        if (flat) {
          g.result(g.convert(g.relu(g.add(g.multiply(p[0], p[1]), p[0])), t));
        } else {
          g.result(g.convert(g.subtract(p[0], p[1]), t));
          g.result(g.convert(g.maximum(p[0], g.multiply(p[1], p[2])), t));
        }
        std::vector<Tensor> in;
        std::uint64_t seed = 900 + static_cast<std::uint64_t>(n);
        for (const Shape& s : shapes) {
          std::vector<double> v =
              make_values(static_cast<std::size_t>(s.element_count()), ++seed, Pattern::finite);
          for (double& d : v) d = std::round(d);
          in.push_back(Tensor::from_values(t, s, v));
        }
        const std::vector<Tensor> want = reference::evaluate(g, std::span<const Tensor>(in));
        const CompiledKernel k = compile(g);
        for (const bool at_end : {true, false})
          for (const int threads : {1, 2}) {
            INFO((at_end ? "guard after" : "guard before") << ", threads = " << threads);
            const Guard where = at_end ? Guard::after : Guard::before;
            std::vector<std::unique_ptr<GuardedBuffer>> bufs;
            std::vector<ConstTensorView> in_views;
            std::vector<TensorView> out_views;
            for (const Tensor& x : in) {
              bufs.push_back(std::make_unique<GuardedBuffer>(x.byte_size(), where));
              std::memcpy(bufs.back()->data(), x.data(), x.byte_size());
              in_views.push_back({t, x.shape(), bufs.back()->data()});
            }
            for (const Tensor& y : want) {
              bufs.push_back(std::make_unique<GuardedBuffer>(y.byte_size(), where));
              out_views.push_back({t, y.shape(), bufs.back()->data()});
            }
            k.run(in_views, out_views, with_threads(threads));
            for (std::size_t o = 0; o < want.size(); ++o) {
              Tensor got = want[o];
              std::memcpy(got.data(), out_views[o].data, want[o].byte_size());
              const std::string report = compare(got, want[o], approx);
              CHECK_MESSAGE(report.empty(), report);
            }
          }
      }
    }
  }
}

TEST_CASE("aarch64: code pages are never writable and executable at once (W^X)") {
  G g;
  const auto a = g.parameter(f32, {3, 17}), b = g.parameter(f32, {3, 1});
  g.result(g.clamp(g.add(g.multiply(a, b), a), -1.0, 2.0));
  const CompiledKernel k = compile(g);
  REQUIRE(!k.code().empty());
  CHECK(k.signature().isa == "neon");
  const auto code = reinterpret_cast<std::uintptr_t>(k.code().data());
  std::ifstream maps("/proc/self/maps");
  std::string line;
  bool found = false;
  while (std::getline(maps, line)) {
    INFO(line);
    std::istringstream is(line);
    std::string range, perms;
    is >> range >> perms;
    CHECK_FALSE((perms[1] == 'w' && perms[2] == 'x'));
    const auto dash = range.find('-');
    const std::uintptr_t lo = std::stoull(range.substr(0, dash), nullptr, 16),
                         hi = std::stoull(range.substr(dash + 1), nullptr, 16);
    if (lo <= code && code < hi) {
      found = true;
      CHECK(perms.substr(0, 3) == "r-x");
      CHECK(code + k.code().size() <= hi); // the code and its constant pool
    }
  }
  CHECK(found);
}

TEST_CASE("aarch64: a Program runs a whole model, what the target cannot fuse on the reference") {
  static_assert(Backend::fusable<ir::MatMul> && Backend::fusable<ir::Relu> &&
                Backend::fusable<ir::Softmax>);
  G g;
  const auto x = g.parameter(f32, {6, 19}, "x");
  const auto w = g.parameter(f32, {19, 7}, "w");
  const auto bias = g.parameter(f32, {1, 7}, "bias");
  const auto h = g.relu(g.add(g.matmul(g.clamp(x, -2.0, 2.0), w), bias));
  // a Softmax over the outer axis: a kernel of columns (passes/tile_columns.hpp) with the
  // Multiply and the Add
  g.result(g.add(g.multiply(h, h), g.softmax(h, 0)), "y");
  const auto n = g.parameter(ElementType::i32, {5}, "n");
  g.result(g.add(n, n), "twice"); // i32 arithmetic: no kernel computes it
  std::uint64_t seed = 1;
  const std::vector<Tensor> in{make_tensor({6, 19}, ++seed, Pattern::finite),
                               make_tensor({19, 7}, ++seed, Pattern::finite),
                               make_tensor({1, 7}, ++seed, Pattern::finite),
                               Tensor::from_values(ElementType::i32, {5}, {1, -2, 3, 40, -50})};
  const Program<Backend> program(g);
  int kernels = 0, reference_steps = 0;
  for (const auto& s : program.steps()) {
    kernels += s.kind == Program<Backend>::StepKind::kernel;
    reference_steps += s.kind == Program<Backend>::StepKind::reference;
  }
  // the Clamp before the MatMul (A is read from an input), the MatMul with its epilogue, the
  // Softmax with the ops after it
  CHECK(kernels == 3);
  CHECK(reference_steps == 1);
  const auto got = program.run(std::span<const Tensor>(in));
  const auto want = reference::evaluate(g, std::span<const Tensor>(in));
  const std::string report = compare(got[0], want[0], Tolerance{64, 1e-3});
  CHECK_MESSAGE(report.empty(), report);
  CHECK(got[1].values().v == want[1].values().v);
}

TEST_CASE("aarch64: norms over axes that are not one run are one kernel of a Program") {
  // passes/move_reduced_axes_last.hpp: over [0, 2] of NCHW as [C, N, H, W] (a kernel of
  // columns reading and writing through Transposes that keep W innermost), over [0, 2, 3] as
  // rows; with a dynamic batch, compiled per set of shapes
  std::uint64_t seed = 400;
  for (const std::vector<std::int64_t>& axes : {std::vector<std::int64_t>{0, 2}, {0, 2, 3}})
    for (const bool dyn : {false, true}) {
      INFO("axes " << axes.size() << (dyn ? ", dynamic batch" : ""));
      G g;
      const auto x = g.parameter(f32, {dyn ? dynamic : 3, 5, 6, 7}, "x");
      const auto gamma = g.parameter(f32, {5, 1, 1}, "gamma");
      const auto d = g.subtract(x, g.reduce_mean(x, axes, true));
      const auto var = g.reduce_mean(g.multiply(d, d), axes, true);
      g.result(g.multiply(g.divide(d, g.sqrt(g.add(var, g.scalar(f32, 1e-5)))), gamma), "y");
      const Program<Backend> program(g);
      int kernels = 0;
      for (const auto& s : program.steps()) {
        CHECK(s.kind != Program<Backend>::StepKind::reference);
        kernels += s.kind == Program<Backend>::StepKind::kernel ||
                   s.kind == Program<Backend>::StepKind::kernel_per_shape;
      }
      CHECK(kernels == 1);
      for (const Dim n : dyn ? std::vector<Dim>{3, 1} : std::vector<Dim>{3}) {
        const std::vector<Tensor> in{uniform({n, 5, 6, 7}, ++seed, -3, 3),
                                     uniform({5, 1, 1}, ++seed, 0.5, 1.5)};
        const auto got = program.run(std::span<const Tensor>(in));
        const auto want = reference::evaluate(g, std::span<const Tensor>(in));
        const std::string report = compare(got[0], want[0], Tolerance{64, 1e-4});
        CHECK_MESSAGE(report.empty(), report);
      }
    }
}

TEST_CASE("aarch64: a Transpose of an f32 input is folded into strided loads, lane by lane") {
  using Order = std::vector<std::size_t>;
  std::uint64_t seed = 300;
  for (const Dim n : {1, 3, 4, 5, 8, 13}) {
    for (const Order& order : {Order{1, 0}, Order{0, 2, 1}, Order{2, 0, 1}}) {
      const Shape in_shape = order.size() == 2 ? Shape{n, 6} : Shape{2, n, 5};
      INFO("n = " << n << ", rank " << order.size() << ", order " << order[0] << order[1]);
      G g;
      const auto x = g.parameter(f32, in_shape);
      const auto t = g.apply(ir::Transpose{order}, x);
      const Shape out_shape = g.type(t).shape;
      const auto y = g.parameter(f32, out_shape);
      g.result(g.exp(g.add(t, y)));
      check_kernel(g,
                   {make_tensor(in_shape, ++seed, Pattern::finite),
                    make_tensor(out_shape, ++seed, Pattern::finite)},
                   Tolerance{2}, /*round_each_node=*/true); // exp of the f32 sum
    }
  }
}

TEST_CASE("aarch64: an input of another type read with a stride is loaded lane by lane") {
  // [2, n, 1] -> [n, 2, 1] keeps the innermost axis, of extent 1: without it the kernel's
  // innermost axis is the strided one (as the fuzz's bf16 outputs of a MatMul transposed back)
  using Order = std::vector<std::size_t>;
  std::uint64_t seed = 400;
  for (const ElementType t :
       {ElementType::f16, ElementType::bf16, ElementType::i32, ElementType::i8, ElementType::u8})
    for (const Dim n : {1, 3, 6}) {
      INFO(to_string(t) << ", n = " << n);
      const Shape in_shape{2, n, 1}, out_shape{n, 2, 1};
      G g;
      const auto x = g.apply(ir::Transpose{Order{1, 0, 2}}, g.parameter(t, in_shape));
      g.result(g.add(g.convert(x, f32), g.parameter(f32, out_shape)));
      auto lir = lower(g, aarch64::Isa::neon);
      CHECK((n == 1 || ir::to_string(lir).find(" stride ") != std::string::npos));
      check_kernel(g,
                   {Tensor::from_values(t, in_shape,
                                        make_tensor(in_shape, ++seed, Pattern::finite).values().v),
                    make_tensor(out_shape, ++seed, Pattern::finite)},
                   exact, /*round_each_node=*/true);
    }
}
