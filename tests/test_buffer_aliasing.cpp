// SPDX-License-Identifier: Apache-2.0
// tests/test_buffer_aliasing.cpp: which buffers may share memory (runtime/tensor_view.hpp's
// check_overlap): a kernel runs in place only where it reads each element right before it
// writes the same index; any other overlap, and any overlap in a Program, is refused before
// memory is touched.
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "jit_test_util.hpp"

using namespace snippets;
using namespace snippets::jit_test;

namespace {

constexpr const char* overlap = "snippets.run.overlapping_buffers";

/// Runs `k` with output 0 in the buffer of input 0 (a copy of `in[0]`), the others as given;
/// returns the error id and leaves the result in `buffer`.
std::string run_in_place(const CompiledKernel& k, const std::vector<Tensor>& in, Tensor& buffer,
                         int threads = 1) {
  buffer = in[0];
  std::vector<ConstTensorView> views{{buffer.type(), buffer.shape(), buffer.data()}};
  for (std::size_t i = 1; i < in.size(); ++i)
    views.push_back({in[i].type(), in[i].shape(), in[i].data()});
  const TensorView out[] = {{buffer.type(), buffer.shape(), buffer.data()}};
  return error_id([&] { k.run(views, out, with_threads(threads)); });
}

} // namespace

TEST_CASE("aliasing: an elementwise kernel runs in place and matches the reference") {
  Graph g;
  const auto x = g.parameter(f32, {37, 129}, "x"), b = g.parameter(f32, {129}, "b");
  g.result(g.relu(g.add(g.multiply(x, x), b)), "y");
  const std::vector<Tensor> in{make_tensor({37, 129}, 1), make_tensor({129}, 2)};
  const auto want = reference::evaluate(g, in);
  for_each_isa([&](x64::Isa isa) {
    const CompiledKernel k = compile(g, {.isa = isa});
    CHECK(k.signature().in_place == std::vector<bool>{true, true});
    for (const int threads : {1, 2, 3}) {
      Tensor buffer;
      CHECK(run_in_place(k, in, buffer, threads) == "no error");
      CHECK(compare(buffer, want[0], approx) == "");
    }
  });
}

TEST_CASE("aliasing: a dynamic kernel runs in place when the shapes match, not when the input "
          "is broadcast") {
  Graph g;
  const auto x = g.parameter(f32, {dynamic, dynamic}, "x"), b = g.parameter(f32, {dynamic}, "b");
  g.result(g.add(x, b), "y");
  const CompiledKernel k = compile(g);
  const std::vector<Tensor> in{make_tensor({5, 33}, 4), make_tensor({33}, 5)};
  Tensor buffer;
  CHECK(run_in_place(k, in, buffer) == "no error");
  CHECK(compare(buffer, reference::evaluate(g, in)[0], exact) == "");
  // the output [5,33] starting at b [33], which is broadcast: larger than b, so refused
  std::vector<float> mem(5 * 33);
  std::memcpy(mem.data(), in[1].data(), 33 * 4);
  const ConstTensorView views[] = {{f32, in[0].shape(), in[0].data()}, {f32, {33}, mem.data()}};
  const TensorView out[] = {{f32, {5, 33}, mem.data()}};
  CHECK(error_id([&] { k.run(views, out); }) == overlap);
}

TEST_CASE("aliasing: reads in another order, products and reductions are refused in place") {
  SUBCASE("relu(transpose(x)) reads other indices than it writes") {
    Graph g;
    g.result(g.relu(g.transpose(g.parameter(f32, {64, 64}, "x"), {1, 0})), "y");
    const CompiledKernel k = compile(g);
    CHECK(k.signature().in_place == std::vector<bool>{false});
    Tensor buffer;
    const Tensor x = make_tensor({64, 64}, 6);
    CHECK(run_in_place(k, {x}, buffer) == overlap);
    CHECK(std::memcmp(buffer.data(), x.data(), 64 * 64 * 4) == 0); // untouched
  }
  SUBCASE("softmax reads each row three times") {
    Graph g;
    g.result(g.softmax(g.parameter(f32, {8, 40}, "x")), "y");
    const CompiledKernel k = compile(g);
    Tensor buffer;
    CHECK(run_in_place(k, {make_tensor({8, 40}, 7)}, buffer) == overlap);
  }
  SUBCASE("a product reads A's row for every column") {
    Graph g;
    g.result(g.matmul(g.parameter(f32, {16, 16}, "a"), g.parameter(f32, {16, 16}, "b")), "y");
    const CompiledKernel k = compile(g);
    Tensor buffer;
    CHECK(run_in_place(k, {make_tensor({16, 16}, 8), make_tensor({16, 16}, 9)}, buffer) == overlap);
  }
}

TEST_CASE("aliasing: partial overlaps, different element sizes and shared outputs are refused") {
  Graph g;
  const auto x = g.parameter(f32, {256}, "x");
  g.result(g.relu(x), "y");
  g.result(g.convert(g.abs(x), ElementType::bf16), "z");
  const CompiledKernel k = compile(g);
  std::vector<float> mem(1024, 1.0f);
  const ConstTensorView in[] = {{f32, {256}, mem.data()}};
  auto run = [&](void* y, void* z) {
    const TensorView out[] = {{f32, {256}, y}, {ElementType::bf16, {256}, z}};
    return error_id([&] { k.run(in, out); });
  };
  CHECK(run(mem.data() + 1, mem.data() + 512) == overlap);   // y one element past x
  CHECK(run(mem.data() + 256, mem.data() + 300) == overlap); // z inside y
  CHECK(run(mem.data() + 256, mem.data()) == overlap);       // z (2 bytes each) over x
  CHECK(run(mem.data(), mem.data() + 256) == "no error");    // y in place, z beside it
  CHECK(run(mem.data() + 256, mem.data() + 512) == "no error");
}

TEST_CASE("aliasing: a Program refuses an output that overlaps an input or another output") {
  Graph g;
  const auto x = g.parameter(f32, {64}, "x");
  g.result(g.relu(x), "y");
  g.result(g.exp(x), "z");
  const Program<> p(g);
  std::vector<float> mem(256, 0.5f);
  const ConstTensorView in[] = {{f32, {64}, mem.data()}};
  auto ctx = p.make_context();
  auto run = [&](float* y, float* z) {
    const TensorView out[] = {{f32, {64}, y}, {f32, {64}, z}};
    return error_id([&] { p.run(ctx, in, out); });
  };
  CHECK(run(mem.data(), mem.data() + 64) == overlap);
  CHECK(run(mem.data() + 64, mem.data() + 100) == overlap);
  CHECK(run(mem.data() + 64, mem.data() + 128) == "no error");
  CHECK(mem[64] == 0.5f);
}
