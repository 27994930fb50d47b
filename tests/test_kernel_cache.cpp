// SPDX-License-Identifier: Apache-2.0
// tests/test_kernel_cache.cpp: program/kernel_cache.hpp. Equal bodies share one kernel, the
// key tells apart everything that changes the code, the cache is bounded (LRU), thread-safe
// (one compilation per key under contention) and keeps no failed compilation.
#include <doctest/doctest.h>

#include <atomic>
#include <thread>

#include "error_id.hpp"
#include "jit_test_util.hpp"
#include "snippets/program/kernel_cache.hpp"

using namespace snippets;
using namespace snippets::jit_test;

namespace {

/// relu(x * s + b) on x [rows, 17]; `name` changes every node's name, not the structure.
Graph affine_relu(Dim rows, double s, const std::string& name = "x") {
  Graph g;
  const auto x = g.parameter(f32, {rows, 17}, name);
  const auto b = g.parameter(f32, {17}, name + "_bias");
  g.result(g.relu(g.add(g.multiply(x, g.scalar(f32, s)), b)), name + "_y");
  return g;
}

/// The kernel's entry address (equal addresses: one shared kernel).
std::uintptr_t entry(const CompiledKernel& k) {
  return reinterpret_cast<std::uintptr_t>(k.kernel_code().fn);
}

} // namespace

TEST_CASE("kernel cache: equal bodies with other names share one kernel") {
  KernelCache cache;
  const CompiledKernel a = compile_cached(affine_relu(3, 2.0, "a"), {}, &cache);
  const CompiledKernel b = compile_cached(affine_relu(3, 2.0, "b"), {}, &cache);
  CHECK(entry(a) == entry(b));
  const KernelCacheStats s = cache.stats();
  CHECK(s.misses == 1);
  CHECK(s.hits == 1);
  CHECK(s.size == 1);
  const Graph g = affine_relu(3, 2.0);
  const std::vector<Tensor> in{make_tensor({3, 17}, 1), make_tensor({17}, 2)};
  CHECK(compare(b.run(in)[0], reference::evaluate(g, in)[0], exact) == "");
}

TEST_CASE("kernel cache: the key tells apart everything that changes the code") {
  const std::string base = kernel_cache_key(affine_relu(3, 2.0));
  CHECK(base == kernel_cache_key(affine_relu(3, 2.0, "other names")));
  CHECK(base != kernel_cache_key(affine_relu(4, 2.0))); // shape
  CHECK(base != kernel_cache_key(affine_relu(3, 2.5))); // scalar value
  CHECK(kernel_cache_key(affine_relu(3, 0.0)) != kernel_cache_key(affine_relu(3, -0.0)));
  CHECK(base != kernel_cache_key(affine_relu(3, 2.0), {.fma = false})); // options
  CHECK(base != kernel_cache_key(affine_relu(3, 2.0), {.unroll = 1}));
  CHECK(base != kernel_cache_key(affine_relu(3, 2.0), {.streaming_threshold_bytes = 0}));
  CHECK(kernel_cache_key(affine_relu(3, 2.0), {.isa = x64::Isa::avx2}) !=
        kernel_cache_key(affine_relu(3, 2.0), {.isa = x64::Isa::avx512}));
  CHECK(kernel_cache_key(affine_relu(3, 2.0), {.isa = x64::best_host_isa()}) == base);
  // constants are compared value by value, past what the printer shows
  auto with_constant = [](double last) {
    Graph g;
    std::vector<double> v(12, 1.0);
    v.back() = last;
    g.result(g.add(g.parameter(f32, {12}), g.constant(f32, {12}, v)));
    return kernel_cache_key(g);
  };
  CHECK(with_constant(1.0) != with_constant(2.0));
  // element types, layouts and ops
  Graph relu, abs;
  relu.result(relu.relu(relu.parameter(f32, {8})));
  abs.result(abs.abs(abs.parameter(f32, {8})));
  CHECK(kernel_cache_key(relu) != kernel_cache_key(abs));
}

TEST_CASE("kernel cache: the least recently used kernel goes first when it is full") {
  KernelCache cache(2);
  const Graph a = affine_relu(1, 1.0), b = affine_relu(1, 2.0), c = affine_relu(1, 3.0);
  compile_cached(a, {}, &cache);
  compile_cached(b, {}, &cache);
  compile_cached(a, {}, &cache); // a is now the most recent
  compile_cached(c, {}, &cache); // evicts b
  CHECK(cache.stats().evictions == 1);
  CHECK(cache.stats().size == 2);
  compile_cached(a, {}, &cache);
  CHECK(cache.stats().hits == 2);
  compile_cached(b, {}, &cache); // compiled again
  CHECK(cache.stats().misses == 4);
  cache.set_capacity(1);
  CHECK(cache.stats().size == 1);
  CHECK(cache.stats().capacity == 1);
  cache.clear();
  CHECK(cache.stats().size == 0);
  CHECK(cache.stats().misses == 0);
  KernelCache off(0);
  compile_cached(a, {}, &off);
  compile_cached(a, {}, &off);
  CHECK(off.stats().misses == 2);
  CHECK(off.stats().size == 0);
}

TEST_CASE("kernel cache: a failed compilation is not kept and throws every time") {
  KernelCache cache;
  Graph g;
  const auto a = g.parameter(f32, {8, 8});
  g.result(g.make(ir::Opaque{"Foreign", {{f32, {8, 8}}}}, {a})[0]); // no kernel computes it
  for (int i = 0; i < 2; ++i) {
    CHECK(error_id([&] { compile_cached(g, {}, &cache); }).starts_with("snippets.compile."));
    CHECK(cache.stats().size == 0);
  }
  CHECK(cache.stats().misses == 2);
}

TEST_CASE("kernel cache: debugging switches and a null cache compile directly") {
  KernelCache cache;
  const Graph g = affine_relu(2, 1.0);
  CompileOptions counters;
  counters.debug.counters = debug::Counters::chrono;
  compile_cached(g, counters, &cache);
  std::vector<std::string_view> trace;
  compile_cached(g, {.trace = &trace}, &cache);
  CHECK_FALSE(trace.empty());
  compile_cached(g, {}, nullptr);
  CHECK(cache.stats().misses == 0);
  CHECK(cache.stats().size == 0);
}

TEST_CASE("kernel cache: threads asking for one key at once share one compilation") {
  KernelCache cache;
  const Graph g = affine_relu(64, 0.5);
  std::atomic<int> compilations{0};
  std::vector<std::uintptr_t> fns(8);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < fns.size(); ++t)
    threads.emplace_back([&, t] {
      fns[t] = entry(cache.get_or_compile(kernel_cache_key(g), [&] {
        ++compilations;
        std::this_thread::sleep_for(std::chrono::milliseconds(20)); // let the others arrive
        return compile(g);
      }));
    });
  for (auto& th : threads) th.join();
  CHECK(compilations == 1);
  for (std::uintptr_t f : fns) CHECK(f == fns[0]);
  CHECK(cache.stats().misses == 1);
  CHECK(cache.stats().hits == 7);
}

TEST_CASE("kernel cache: equal Subgraphs of one model share one kernel in a Program") {
  Graph g;
  const auto x = g.parameter(f32, {5, 33}, "x");
  const auto first = g.relu(g.add(x, g.scalar(f32, 1.0)));
  const auto cut = g.negative(first); // kept out of both Subgraphs
  g.mark_skipped(cut.output.node);
  g.result(g.relu(g.add(cut, g.scalar(f32, 1.0))), "y");
  KernelCache cache;
  ProgramOptions<x64::Traits> opt;
  opt.cache = &cache;
  const Program<> program(g, opt);
  std::vector<std::uintptr_t> kernels;
  for (const auto& step : program.steps())
    if (step.kernel) kernels.push_back(entry(*step.kernel));
  REQUIRE(kernels.size() == 2);
  CHECK(kernels[0] == kernels[1]);
  CHECK(cache.stats().misses == 1);
  CHECK(cache.stats().hits == 1);
  const std::vector<Tensor> in{make_tensor({5, 33}, 3)};
  reference::Options each_op_rounded; // as the two kernels and the step between them compute
  each_op_rounded.round_each_node = true;
  CHECK(compare(program.run(in)[0], reference::evaluate(g, in, each_op_rounded)[0], exact) == "");
}
