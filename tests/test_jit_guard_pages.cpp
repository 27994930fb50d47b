// SPDX-License-Identifier: Apache-2.0
// JIT tests of the tail handling in target/x64/kernel_emitter.hpp (AVX-512 opmask loads and
// stores, AVX2 VMASKMOVPS, one-element VMOVSS) and the pointer arithmetic of
// passes/init_loops.hpp, insert_specific_iterations.hpp and cleanup_loop_offsets.hpp.
//
// Every input and output lives in its own mmap'ed buffer placed against a PROT_NONE page:
// once with its last byte right before the guard, once with its first byte right after one.
// A kernel that reads or writes a single element past the end (or before the start) of any
// tensor faults and kills the test run, so a pass proves that tails never touch memory outside
// a tensor (with ordinary and with non-temporal stores), for innermost sizes 1, 7, 17 and 33 on
// AVX2 and AVX-512 with 1, 2 and 3 threads and unroll factors 1, 2 and 4.
#include "jit_test_util.hpp"

#include <memory>

using namespace snippets;
using namespace snippets::jit_test;

namespace {

constexpr Dim tail_sizes[] = {1, 7, 17, 33};

/// A body and its input shapes, built for one innermost size n.
struct Body {
  std::string what;
  std::vector<Shape> inputs;
  std::function<void(Graph&, const std::vector<ir::Value>&)> build;
};

std::vector<Body> bodies(Dim n) {
  auto fold = [](Graph& g, const std::vector<ir::Value>& in) {
    ir::Value t = in[0];
    for (std::size_t i = 1; i < in.size(); ++i) t = g.add(g.multiply(t, in[i]), in[i]);
    g.result(g.relu(t));
  };
  return {
      {"flat [n] + [n]", {Shape{n}, Shape{n}}, fold},
      {"flat [3,n] + [3,n]", {Shape{3, n}, Shape{3, n}}, fold},
      {"inner tail [3,n] with [3,1]", {Shape{3, n}, Shape{3, 1}}, fold},
      {"[n] with a rank-0 input", {Shape{n}, Shape{}}, fold},
      {"[2,3,n] with [1,3,1] and [n]", {Shape{2, 3, n}, Shape{1, 3, 1}, Shape{n}}, fold},
      {"both sides [n,1] and [1,n]", {Shape{n, 1}, Shape{1, n}}, fold},
      {"per-channel [1,n,1,1] with [2,n,2,n]", {Shape{1, n, 1, 1}, Shape{2, n, 2, n}}, fold},
      {"two outputs of [2,n]",
       {Shape{2, n}, Shape{2, 1}},
       [](Graph& g, const std::vector<ir::Value>& in) {
         g.result(g.subtract(in[0], in[1]));
         g.result(g.maximum(in[0], g.negative(in[1])));
       }},
  };
}

/// An f32 tensor's data in a buffer against a guard page.
std::unique_ptr<GuardedBuffer> guarded_copy(const Tensor& t, Guard where) {
  auto buf = std::make_unique<GuardedBuffer>(t.byte_size(), where);
  if (t.byte_size()) std::memcpy(buf->data(), t.data(), t.byte_size());
  return buf;
}

} // namespace

TEST_CASE("jit guard pages: tails never read or write past the end or before the start of any "
          "tensor") {
  std::uint64_t seed = 2000;
  std::size_t runs = 0;
  for (const Dim n : tail_sizes) {
    for (const Body& body : bodies(n)) {
      INFO("n = " << n << ", body: " << body.what);
      Graph g;
      std::vector<ir::Value> params;
      std::vector<Tensor> inputs;
      for (const Shape& s : body.inputs) {
        params.push_back(g.parameter(f32, s));
        inputs.push_back(make_tensor(s, ++seed, Pattern::finite));
      }
      body.build(g, params);
      for_each_isa([&](x64::Isa isa) {
        for (const int unroll : {1, 2, 4}) {
          INFO("unroll = " << unroll);
          // streaming_threshold_bytes = 1: the non-temporal-store variant too, which run()
          // takes for vector-aligned outputs (always so with the guard before the start)
          const CompiledKernel k =
              compile(g, {.isa = isa, .unroll = unroll, .streaming_threshold_bytes = 1});
          // the same kernel on ordinary memory: the guarded runs must agree with it bit for bit
          // (the results themselves are checked against the reference in test_jit_eltwise.cpp
          // and test_jit_broadcast.cpp)
          const std::vector<Tensor> want = k.run(std::span<const Tensor>(inputs), with_threads(1));
          for (const Guard where : {Guard::after, Guard::before}) {
            INFO("guard " << (where == Guard::after ? "after the end" : "before the start"));
            for (const int threads : {1, 2, 3}) {
              INFO("threads = " << threads);
              std::vector<std::unique_ptr<GuardedBuffer>> in_bufs, out_bufs;
              std::vector<ConstTensorView> in_views;
              std::vector<TensorView> out_views;
              for (const Tensor& t : inputs) {
                in_bufs.push_back(guarded_copy(t, where));
                in_views.push_back({f32, t.shape(), in_bufs.back()->data()});
              }
              for (const ir::TensorType& o : k.signature().outputs) {
                const auto bytes = static_cast<std::size_t>(o.shape.element_count()) * 4;
                out_bufs.push_back(std::make_unique<GuardedBuffer>(bytes, where));
                // a sentinel, so an element the kernel never writes cannot pass as a zero
                const std::vector<float> sentinel(bytes / 4, 1234567.0f);
                if (bytes) std::memcpy(out_bufs.back()->data(), sentinel.data(), bytes);
                out_views.push_back({f32, o.shape, out_bufs.back()->data()});
              }
              k.run(in_views, out_views, with_threads(threads));
              ++runs;
              for (std::size_t i = 0; i < out_views.size(); ++i) {
                Tensor got(f32, out_views[i].shape);
                std::memcpy(got.data(), out_bufs[i]->data(), got.byte_size());
                const std::string report = compare(got, want[i], exact);
                CHECK_MESSAGE(report.empty(), report);
              }
            }
          }
        }
      });
    }
  }
  CHECK(runs > 0);
}

TEST_CASE("jit guard pages: a single-output body run on guarded memory matches the reference") {
  // The same guarded placement, compared with the reference interpreter itself.
  std::uint64_t seed = 2100;
  for (const Dim n : tail_sizes) {
    INFO("n = " << n);
    const Shape big{2, 3, n}, small{3, 1};
    Graph g;
    const auto a = g.parameter(f32, big), b = g.parameter(f32, small);
    g.result(g.maximum(g.subtract(a, g.multiply(a, b)), b));
    const std::vector<Tensor> inputs = {make_tensor(big, ++seed), make_tensor(small, ++seed)};
    reference::Options ro;
    ro.round_each_node = true;
    const Tensor want = reference::evaluate(g, std::span<const Tensor>(inputs), ro).at(0);
    for_each_isa([&](x64::Isa isa) {
      const CompiledKernel k = compile(g, {.isa = isa, .fma = false});
      for (const Guard where : {Guard::after, Guard::before}) {
        const auto pa = guarded_copy(inputs[0], where), pb = guarded_copy(inputs[1], where);
        GuardedBuffer out(want.byte_size(), where);
        const ConstTensorView in[] = {{f32, big, pa->data()}, {f32, small, pb->data()}};
        const TensorView outs[] = {{f32, big, out.data()}};
        k.run(in, outs, with_threads(2));
        Tensor got(f32, big);
        std::memcpy(got.data(), out.data(), got.byte_size());
        const std::string report = compare(got, want, exact);
        CHECK_MESSAGE(report.empty(), report);
      }
    });
  }
}
