// SPDX-License-Identifier: Apache-2.0
// tests/test_concurrency.cpp: many threads tokenizing, compiling and running at once, with
// every result checked. scripts/test also builds this file alone with
// ThreadSanitizer (kernels run with one thread each there: libgomp is not instrumented).
#include <doctest/doctest.h>

#include <atomic>
#include <thread>

#include "fuzz_graph.hpp"

using namespace snippets;

TEST_CASE("concurrency: threads compile and run random models at once, results checked") {
  constexpr int threads = 4, models_per_thread = 40;
  std::atomic<int> failures{0}, kernels{0};
  std::vector<std::string> first_failure(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (int i = 0; i < models_per_thread; ++i) {
        const std::uint64_t seed = 0xc0c0u + static_cast<std::uint64_t>(t * 1000 + i);
        const auto isa = i % 2 ? x64::Isa::avx2 : x64::best_host_isa();
        const auto outcome =
            fuzz::run_differential(fuzz::random_model(seed), isa, seed, jit_test::exact, false, 1);
        kernels += outcome.kernels;
        if (!outcome.failure.empty() && failures++ == 0) first_failure[t] = outcome.failure;
      }
    });
  for (auto& t : pool) t.join();
  for (const auto& f : first_failure) CHECK(f == "");
  CHECK(failures == 0);
  const int models = threads * models_per_thread, compiled = kernels;
  MESSAGE(models << " models on " << threads << " threads, " << compiled << " kernels");
}

TEST_CASE("concurrency: one compiled kernel runs from many threads on different buffers") {
  jit_test::Graph g;
  const auto a = g.parameter(ElementType::f32, {37, 19}, "a");
  const auto b = g.parameter(ElementType::f32, {19}, "b");
  g.result(g.maximum(g.multiply(a, b), g.subtract(b, a)), "y");
  const CompiledKernel kernel = compile(g);
  std::atomic<int> mismatches{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < 6; ++t)
    pool.emplace_back([&, t] {
      const std::vector<jit_test::Tensor> in{jit_test::make_tensor({37, 19}, 100u + t),
                                             jit_test::make_tensor({19}, 200u + t)};
      const auto want = reference::evaluate(g, in);
      for (int r = 0; r < 50; ++r)
        if (!jit_test::compare(kernel.run(in, jit_test::with_threads(1))[0], want[0],
                               jit_test::approx)
                 .empty())
          ++mismatches;
    });
  for (auto& t : pool) t.join();
  CHECK(mismatches == 0);
}
