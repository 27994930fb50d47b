// SPDX-License-Identifier: Apache-2.0
// The non-temporal store variant: chosen for large outputs, used only for aligned outputs,
// and bit-identical to the ordinary kernel.
#include <doctest/doctest.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "snippets/compile.hpp"
#include "snippets/reference/interpreter.hpp"

#include "jit_test_util.hpp"

using namespace snippets;
constexpr auto f32 = ElementType::f32;

namespace {
struct Aligned {
  float* p;
  explicit Aligned(std::size_t n)
      : p(static_cast<float*>(std::aligned_alloc(64, (n * 4 + 63) / 64 * 64 + 64))) {}
  ~Aligned() { std::free(p); }
};
} // namespace

TEST_CASE("streaming stores are compiled only above the threshold and for whole-vector rows") {
  auto kernel = [](Shape s, std::int64_t threshold) {
    ir::Graph<x64::Traits> g;
    g.result(g.relu(g.parameter(f32, s)));
    return compile(g, {.streaming_threshold_bytes = threshold});
  };
  CHECK_FALSE(kernel({1000}, 0).has_streaming_variant());
  CHECK_FALSE(kernel({1000}, 1 << 20).has_streaming_variant());
  CHECK(kernel({1000}, 1).has_streaming_variant());
  CHECK(kernel({1 << 20}, std::int64_t{4} << 20).has_streaming_variant()); // 4 MiB output
  ir::Graph<x64::Traits> g; // rows of 17 floats cannot all start aligned
  g.result(g.add(g.parameter(f32, {64, 17}), g.parameter(f32, {64, 1})));
  CHECK_FALSE(compile(g, {.streaming_threshold_bytes = 1}).has_streaming_variant());
}

TEST_CASE("streaming stores are compiled only for kernels bound by memory") {
  using Graph = ir::Graph<x64::Traits>;
  using Build = ir::Value (*)(Graph&, ir::Value);
  struct Case {
    const char* what;
    Build build;
    bool light; // little code per vector for each stream: bound by memory
  };
  const Case cases[] = {
      {"bias add", [](Graph& g, ir::Value x) { return g.add(x, g.parameter(f32, {256})); }, true},
      {"x*x+x", [](Graph& g, ir::Value x) { return g.add(g.multiply(x, x), x); }, true},
      {"bias sigmoid",
       [](Graph& g, ir::Value x) { return g.sigmoid(g.add(x, g.parameter(f32, {256}))); }, false},
      {"gelu", [](Graph& g, ir::Value x) { return g.gelu(x, ir::GeluApproximation::tanh); }, false},
  };
  for (const auto isa : {x64::Isa::avx2, x64::Isa::avx512}) {
    if (!x64::host_supports(isa)) {
      snippets::test::skip_on_host(x64::to_string(isa));
      continue;
    }
    for (const Case& c : cases) {
      INFO(c.what << " on " << x64::to_string(isa));
      Graph g;
      g.result(c.build(g, g.parameter(f32, {64, 256})));
      for (const int unroll : {1, 4}) {
        const CompileOptions o{.isa = isa, .unroll = unroll, .streaming_threshold_bytes = 1};
        const CompiledKernel k = compile(g, o);
        // two full-size streams (x and the output), 64 bytes of code per vector each
        const double bytes = k.kernel_code().store_loop_bytes_per_vector;
        CHECK(bytes > 0);
        CHECK(k.has_streaming_variant() == (bytes <= 64.0 * 2));
        if (isa == x64::Isa::avx512) CHECK(k.has_streaming_variant() == c.light);
        CompileOptions any = o; // no limit: every kernel gets the variant
        any.streaming_max_code_bytes = -1;
        CHECK(compile(g, any).has_streaming_variant());
      }
    }
  }
}

TEST_CASE("the streaming variant writes the same values, aligned or not, with tails") {
  jit_test::for_each_isa([](x64::Isa isa) {
    for (Dim n : {Dim{16}, Dim{1000}, Dim{4099}, Dim{100003}})
      for (int threads : {1, 2, 3}) {
        CAPTURE(n);
        CAPTURE(threads);
        ir::Graph<x64::Traits> g;
        auto a = g.parameter(f32, {n});
        auto b = g.parameter(f32, {n});
        g.result(g.add(g.multiply(a, b), b));
        auto k = compile(g, {.isa = isa, .streaming_threshold_bytes = 1});
        REQUIRE(k.has_streaming_variant());
        const auto count = static_cast<std::size_t>(n);
        Aligned in0{count}, in1{count}, out{count + 1};
        std::vector<double> va(count), vb(count);
        for (std::size_t i = 0; i < va.size(); ++i) {
          in0.p[i] = float(va[i] = double(i % 17) - 8);
          in1.p[i] = float(vb[i] = double(i % 5) * 0.25);
        }
        const auto ref = reference::evaluate(g, {reference::Tensor::from_values(f32, {n}, va),
                                                 reference::Tensor::from_values(f32, {n}, vb)});
        for (int misalign : {0, 1}) { // output at a 64-byte boundary, then one float past it
          float* dst = out.p + misalign;
          const ConstTensorView ins[] = {{f32, {n}, in0.p}, {f32, {n}, in1.p}};
          const TensorView outs[] = {{f32, {n}, dst}};
          k.run(ins, outs, {.threads = threads});
          int bad = 0;
          for (std::size_t i = 0; i < count; ++i) bad += dst[i] != float(ref[0].at(i));
          CHECK(bad == 0);
        }
      }
  });
}

TEST_CASE("streaming stores: both outputs of a two-output kernel, stored after the loads of "
          "their loop body, same values") {
  jit_test::for_each_isa([](x64::Isa isa) {
    const Dim n = 4099;
    ir::Graph<x64::Traits> g;
    auto a = g.parameter(f32, {n}, "a"), b = g.parameter(f32, {n}, "b"),
         c = g.parameter(f32, {n}, "c");
    auto sum = g.add(a, b);
    g.result(sum, "y1");
    g.result(g.multiply(sum, c), "y2");
    CompileOptions o{.isa = isa, .streaming_threshold_bytes = 1};
    o.debug.code_map = true;
    const CompiledKernel k = compile(g, o);
    REQUIRE(k.has_streaming_variant());
    // the code map in code order: which outputs are non-temporal, and y1's store comes after
    // c's load (a load behind a store to the same page offset waits for it: 4K aliasing)
    std::string streamed, order;
    for (const auto& r : k.kernel_code(true).map->records) {
      for (const char* y : {"'y1'", "'y2'"})
        if (r.text.find(y) != std::string::npos &&
            r.emitter.find("non-temporal") != std::string::npos &&
            streamed.find(y) == streamed.npos)
          streamed += y;
      for (auto [op, x] : {std::pair{"Load", "'c'"}, std::pair{"Store", "'y1'"}})
        if (r.text.find(op) != std::string::npos && r.text.find(x) != std::string::npos &&
            order.find(x) == order.npos)
          order += x;
    }
    CHECK(streamed == "'y1''y2'");
    CHECK(order == "'c''y1'");
    const auto count = static_cast<std::size_t>(n);
    std::vector<std::unique_ptr<Aligned>> bufs;
    std::vector<std::vector<double>> v(3, std::vector<double>(count));
    for (int i = 0; i < 5; ++i) bufs.push_back(std::make_unique<Aligned>(count));
    for (std::size_t j = 0; j < 3; ++j)
      for (std::size_t i = 0; i < count; ++i)
        bufs[j]->p[i] = float(v[j][i] = double((i * (j + 3)) % 23) - 11);
    const auto ref = reference::evaluate(g, {reference::Tensor::from_values(f32, {n}, v[0]),
                                             reference::Tensor::from_values(f32, {n}, v[1]),
                                             reference::Tensor::from_values(f32, {n}, v[2])});
    const ConstTensorView ins[] = {
        {f32, {n}, bufs[0]->p}, {f32, {n}, bufs[1]->p}, {f32, {n}, bufs[2]->p}};
    const TensorView outs[] = {{f32, {n}, bufs[3]->p}, {f32, {n}, bufs[4]->p}};
    k.run(ins, outs, {.threads = 2});
    int bad = 0;
    for (std::size_t i = 0; i < count; ++i)
      bad += bufs[3]->p[i] != float(ref[0].at(i)) || bufs[4]->p[i] != float(ref[1].at(i));
    CHECK(bad == 0);
  });
}
