// SPDX-License-Identifier: Apache-2.0
// Tests of passes/slice_reads.hpp and what it drives: Slices of a kernel input (the parts of an
// ONNX Split, of the innermost axis or another) read in place, at the part's offset with the
// input's strides (convert_to_linear_ir, OptimizeDomain, InsertLoadStore, the signature), and
// the tokenizer's rule that takes them. Every kernel is checked against the reference interpreter
// bit for bit, for AVX2 and AVX-512, unrolled once and four times, with 1 and 2 threads.
#include "jit_test_util.hpp"

#include <memory>

using namespace snippets;
using namespace snippets::jit_test;

namespace {

constexpr ElementType u8 = ElementType::u8, f16 = ElementType::f16, boolean = ElementType::boolean;

/// Compiles `g` for every ISA and unroll (no FMA), runs it with 1 and 2 threads, compares with
/// the reference rounded to f32 node by node.
void check(const Graph& g, const std::vector<Tensor>& in) {
  check_jit(
      g, in,
      {.tol = exact, .threads = {1, 2}, .fma = false, .round_each_node = true, .unroll = {1, 4}});
}

/// The GLU of x's two halves along its last axis: a * sigmoid(b) with [a, b] = split(x).
Graph glu(const Shape& x_shape, ElementType t = f32) {
  Graph g;
  const auto x = g.parameter(t, x_shape, "x");
  const std::int64_t half = x_shape[x_shape.rank() - 1] / 2;
  auto part = [&](std::int64_t start) {
    const auto s = g.slice(x, -1, start, half);
    return t == f32 ? s : g.convert(s, f32);
  };
  g.result(g.multiply(part(0), g.relu(part(half))), "y");
  return g;
}

/// The GLU of x's two halves along `axis`: a * relu(b) with [a, b] = split(x, axis).
Graph glu_along(const Shape& x_shape, std::int64_t axis, ElementType t = f32) {
  Graph g;
  const auto x = g.parameter(t, x_shape, "x");
  const std::size_t a =
      static_cast<std::size_t>(axis < 0 ? axis + std::int64_t(x_shape.rank()) : axis);
  const std::int64_t half = x_shape[a] / 2;
  auto part = [&](std::int64_t start) {
    const auto s = g.slice(x, axis, start, half);
    return t == f32 ? s : g.convert(s, f32);
  };
  g.result(g.multiply(part(0), g.relu(part(half))), "y");
  return g;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

} // namespace

TEST_CASE("slice reads: the two halves of an input feed one kernel for every half from 1 to 67") {
  for (Dim c = 1; c <= 67; ++c) {
    INFO("half = " << c);
    check(glu({3, 2 * c}), {make_tensor({3, 2 * c}, 100 + std::uint64_t(c))});
  }
}

TEST_CASE("slice reads: parts of narrow types, three parts, rank 3 and broadcast partners") {
  for (const Dim c : {Dim{1}, Dim{5}, Dim{8}, Dim{17}, Dim{33}}) {
    INFO("part = " << c);
    { // u8 and f16 inputs: widened by the loads
      std::vector<double> v(std::size_t(4 * 2 * c));
      for (std::size_t i = 0; i < v.size(); ++i) v[i] = double(i * 37 % 256);
      check(glu({4, 2 * c}, u8), {Tensor::from_values(u8, {4, 2 * c}, v)});
      check(glu({4, 2 * c}, f16), {Tensor::from_values(f16, {4, 2 * c}, make_values(v.size(), 3))});
    }
    { // three parts of a rank-3 input, a bias broadcast along rows, two outputs
      Graph g;
      const auto x = g.parameter(f32, {2, 3, 3 * c}, "x");
      const auto bias = g.parameter(f32, {c}, "bias");
      const auto a = g.slice(x, 2, 0, c), b = g.slice(x, -1, c, c), d = g.slice(x, 2, 2 * c, c);
      g.result(g.add(g.multiply(a, b), bias), "ab");
      g.result(g.select(g.greater(d, a), d, bias), "max");
      check(g, {make_tensor({2, 3, 3 * c}, 7), make_tensor({c}, 8)});
    }
    { // a part copied to an output, and a boolean part
      Graph g;
      const auto x = g.parameter(f32, {5, 2 * c}, "x");
      g.result(g.slice(x, -1, c, c), "copy");
      Graph h;
      const auto m = h.parameter(boolean, {5, 2 * c}, "m");
      h.result(h.logical_xor(h.slice(m, -1, 0, c), h.slice(m, -1, c, c)), "xor");
      check(g, {make_tensor({5, 2 * c}, 9)});
      check(h, {make_raw_booleans({5, 2 * c}, 10)});
    }
  }
}

TEST_CASE("slice reads: parts of another axis than the innermost (channels, images, rows)") {
  for (const Dim c : {Dim{1}, Dim{3}, Dim{8}, Dim{17}})
    for (const Dim hw : {Dim{1}, Dim{7}, Dim{16}, Dim{37}}) {
      INFO("half = " << c << ", rows of " << hw);
      check(glu_along({2, 2 * c, hw}, 1), {make_tensor({2, 2 * c, hw}, 200 + std::uint64_t(c))});
      check(glu_along({2 * c, 3, hw}, 0), {make_tensor({2 * c, 3, hw}, 300 + std::uint64_t(hw))});
    }
  { // u8 parts widened by the loads, rank 4 over the channels
    std::vector<double> v(std::size_t(2 * 10 * 3 * 5));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = double(i * 29 % 256);
    check(glu_along({2, 10, 3, 5}, 1, u8), {Tensor::from_values(u8, {2, 10, 3, 5}, v)});
  }
  { // three parts of the rows of a matrix, and a Softmax over the last axis of one
    Graph g;
    const auto x = g.parameter(f32, {9, 21}, "x");
    g.result(
        g.add(g.multiply(g.slice(x, 0, 0, 3), g.softmax(g.slice(x, 0, 3, 3))), g.slice(x, 0, 6, 3)),
        "y");
    check_jit(g, {make_tensor({9, 21}, 41, Pattern::finite)},
              {.tol = {16, 1e-9}, .threads = {1, 2}, .unroll = {1, 4}});
  }
}

TEST_CASE("slice reads: a row reduction over a part (Softmax of the second half, rows summed)") {
  for (const Dim c : {Dim{1}, Dim{7}, Dim{16}, Dim{37}}) {
    INFO("half = " << c);
    Graph g;
    const auto x = g.parameter(f32, {3, 2 * c}, "x");
    const auto a = g.slice(x, -1, 0, c), b = g.slice(x, -1, c, c);
    g.result(g.multiply(g.softmax(b), a), "y");
    check_jit(g, {make_tensor({3, 2 * c}, 20 + std::uint64_t(c), Pattern::finite)},
              {.tol = {16, 1e-9}, .threads = {1, 2}, .unroll = {1, 4}}); // test_jit_reduce's
    Graph h;
    const auto z = h.parameter(f32, {4, 3 * c}, "z");
    h.result(h.reduce_sum(h.add(h.slice(z, -1, 0, c), h.slice(z, -1, 2 * c, c)), {-1}), "sum");
    check_jit(h, {make_tensor({4, 3 * c}, 30 + std::uint64_t(c), Pattern::finite)},
              {.tol = {16, 1e-6 * double(c) * 16}, .threads = {1, 2}, .unroll = {1, 4}});
  }
}

TEST_CASE("slice reads: parts are read in place, never past or before the input (guard pages)") {
  for (const Dim c : {Dim{1}, Dim{3}, Dim{9}, Dim{17}, Dim{31}})
    for (const std::int64_t axis : {std::int64_t{-1}, std::int64_t{0}}) {
      INFO("half = " << c << ", axis " << axis);
      const Shape xs = axis == -1 ? Shape{3, 2 * c} : Shape{2 * c, 3};
      const Shape ys = axis == -1 ? Shape{3, c} : Shape{c, 3};
      const Graph g = glu_along(xs, axis, u8);
      std::vector<double> v(std::size_t(6 * c));
      for (std::size_t i = 0; i < v.size(); ++i) v[i] = double(i * 11 % 256);
      const Tensor x = Tensor::from_values(u8, xs, v);
      const Tensor want = reference::evaluate(g, {x})[0];
      for_each_isa([&](x64::Isa isa) {
        for (const int unroll : {1, 4}) {
          const CompiledKernel k = compile(g, {.isa = isa, .unroll = unroll});
          CHECK_FALSE(k.signature().in_place.at(0)); // the output is not the input's shape
          CHECK(k.signature().inputs.at(0).shape == xs);
          for (const Guard where : {Guard::after, Guard::before}) {
            GuardedBuffer gx(x.byte_size(), where), gy(want.byte_size(), where);
            std::memcpy(gx.data(), x.data(), x.byte_size());
            const ConstTensorView in[] = {{u8, xs, gx.data()}};
            const TensorView out[] = {{f32, ys, gy.data()}};
            for (const int threads : {1, 2}) {
              k.run(in, out, with_threads(threads));
              Tensor got(f32, ys);
              std::memcpy(got.data(), gy.data(), got.byte_size());
              const std::string report = compare(got, want, exact);
              CHECK_MESSAGE(report.empty(), report);
            }
          }
        }
      });
    }
}

TEST_CASE("slice reads: the LIR reads one argument at two offsets with the input's row stride") {
  const Graph g = glu({4, 64});
  auto lowered = lower(g, x64::Isa::avx512);
  const std::string lir = ir::to_string(lowered);
  INFO(lir);
  CHECK(count(lir, "Parameter 'x'") == 2); // one per part, both argument 0
  CHECK(count(lir, "Slice") == 0);
  CHECK(lir.find("@32 'x'") != std::string::npos); // the second half's first element
  const CompiledKernel k = compile(g, {.isa = x64::best_host_isa()});
  CHECK(k.signature().domain == std::vector<Dim>{4, 32}); // rows stay apart: x's rows are 64
  CHECK(k.signature().outer_stride_bytes.at(0) == 64 * 4);
}

TEST_CASE("slice reads: the tokenizer takes Split parts of an input into the kernel that reads "
          "them, and leaves the rest to the reference path") {
  Graph m;
  const auto x = m.parameter(f32, {6, 40}, "x");
  const auto a = m.slice(x, -1, 0, 20), b = m.slice(x, -1, 20, 20);
  m.result(m.multiply(m.exp(a), m.sigmoid(b)), "y");
  const Program<> program(m);
  check_steps_are_kernels(program);
  CHECK(program.steps().size() == 1);
  const std::vector<Tensor> in = {make_tensor({6, 40}, 11)};
  const auto want = reference::evaluate(m, std::span<const Tensor>(in));
  const std::string report = compare(program.run(in, with_threads(2))[0], want[0], approx);
  CHECK_MESSAGE(report.empty(), report);

  // the channel halves of NCHW as one kernel too
  const Graph channels = glu_along({2, 8, 5, 5}, 1);
  CHECK(Program<>(channels).steps().size() == 1);

  // parts of different lengths, of two axes, or an input read whole beside its parts: no
  // kernel reads them in place, and the model still runs
  Graph r;
  const auto z = r.parameter(f32, {6, 40}, "z");
  r.result(r.relu(r.slice(z, -1, 0, 10)), "short");
  r.result(r.relu(r.slice(z, -1, 10, 30)), "long");
  r.result(r.relu(r.slice(z, 0, 0, 2)), "rows");
  r.result(r.add(r.slice(z, -1, 0, 1), z), "whole");
  const Program<> mixed(r);
  check_steps_are_kernels(mixed);
  const std::vector<Tensor> rin = {make_tensor({6, 40}, 12)};
  const auto rwant = reference::evaluate(r, std::span<const Tensor>(rin));
  const auto rgot = mixed.run(rin);
  for (std::size_t o = 0; o < rwant.size(); ++o) {
    const std::string rep = compare(rgot[o], rwant[o], exact);
    CHECK_MESSAGE(rep.empty(), rep);
  }
  // compile() names a Slice it cannot read in place
  Graph bad;
  const auto w = bad.parameter(f32, {6, 40}, "w");
  bad.result(bad.add(bad.slice(w, -1, 0, 20), bad.slice(w, -1, 10, 20)), "ok_parts");
  CHECK_NOTHROW(compile(bad));
  Graph worse; // a row and a column of one input
  const auto v = worse.parameter(f32, {6, 6}, "v");
  worse.result(worse.add(worse.slice(v, 0, 1, 1), worse.slice(v, 1, 2, 1)), "cross");
  CHECK(error_id([&] { compile(worse); }) == "snippets.compile.unsupported_op");
  Graph dyn; // kernels with dynamic dimensions read whole inputs
  const auto d = dyn.parameter(f32, {dynamic, 40}, "d");
  dyn.result(dyn.relu(dyn.slice(d, -1, 0, 20)), "part");
  CHECK(error_id([&] { compile(dyn); }) == "snippets.compile.dynamic_layout");
  Graph mm; // nor do MatMul kernels
  const auto lhs = mm.parameter(f32, {8, 32}, "lhs");
  mm.result(mm.matmul(mm.slice(lhs, -1, 0, 16), mm.parameter(f32, {16, 8}, "rhs")), "c");
  CHECK(error_id([&] { compile(mm); }) == "snippets.compile.unsupported_matmul");
}
