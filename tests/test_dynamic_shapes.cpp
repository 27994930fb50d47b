// SPDX-License-Identifier: Apache-2.0
// Tests of dynamic shapes: compile() of a body with dynamic dimensions (passes in a dynamic
// Linear IR, the kernel emitter's run-time work amounts, pointer increments and tail masks),
// runtime/runtime_config.hpp (domain, collapsing, table, variants) and the dynamic path of
// CompiledKernel::run. Every result is checked bit for bit against the reference interpreter
// with each node rounded to f32 (the bodies use exact ops without FMA), on both ISAs and with
// several thread counts; compilations() proves that new shapes cost no compilation.
#include "error_id.hpp"
#include "jit_test_util.hpp"

#include <thread>

using namespace snippets;
using namespace snippets::jit_test;

namespace {

constexpr Dim Q = dynamic;

/// Runs `k` on inputs of `shapes` and checks every output against the reference, with 1, 2
/// and 3 threads.
void check_shapes(const CompiledKernel& k, const Graph& g, const std::vector<Shape>& shapes,
                  std::uint64_t seed) {
  std::vector<Tensor> inputs;
  for (const Shape& s : shapes) inputs.push_back(make_tensor(s, ++seed, Pattern::finite));
  reference::Options ro;
  ro.round_each_node = true;
  check_runs(k, inputs, reference::evaluate(g, std::span<const Tensor>(inputs), ro), exact,
             {1, 2, 3});
}

/// One input shape per call, for each input.
using Sequence = std::vector<std::vector<Shape>>;

void check_sequence(const Graph& g, const Sequence& calls, std::uint64_t compiles_per_isa,
                    const CompileOptions& base = {}) {
  for_each_isa([&](x64::Isa isa) {
    CompileOptions opt = base;
    opt.isa = isa;
    opt.fma = false;
    const std::uint64_t before = compilations();
    const CompiledKernel k = compile(g, opt);
    CHECK(k.is_dynamic());
    std::uint64_t seed = 7000;
    for (int pass = 0; pass < 2; ++pass) // the second pass runs on kernels compiled in the first
      for (const auto& shapes : calls) {
        INFO("shapes " << Shape(shapes[0].dims()).to_string() << " ...");
        check_shapes(k, g, shapes, seed += 10);
      }
    CHECK(compilations() - before == compiles_per_isa);
  });
}

Graph add_graph(const Shape& x, const Shape& y) {
  Graph g;
  const auto a = g.parameter(f32, x); // in this order: x is input 0
  const auto b = g.parameter(f32, y);
  g.result(g.add(a, b));
  return g;
}

} // namespace

TEST_CASE("dynamic shapes: the seed's Add sequence runs on one compiled kernel") {
  // x [1,3,1,10] -> [1,3,10,10] -> [1,3,1,10], y [1,3,10,1] -> [1,3,1,1] -> [1,3,10,1]: the
  // broadcast flips between the inputs from call to call
  const Sequence calls = {{Shape{1, 3, 1, 10}, Shape{1, 3, 10, 1}},
                          {Shape{1, 3, 10, 10}, Shape{1, 3, 1, 1}},
                          {Shape{1, 3, 1, 10}, Shape{1, 3, 10, 1}}};
  check_sequence(add_graph(Shape{1, 3, Q, Q}, Shape{1, 3, Q, 1}), calls, 1);
  check_sequence(add_graph(Shape{Q, Q, Q, Q}, Shape{Q, Q, Q, 1}), calls, 1);
}

TEST_CASE("dynamic shapes: an innermost dimension that is 1 only at run time costs one more "
          "compilation only once") {
  // y's innermost dimension is dynamic: broadcasting along it needs a kernel that loads y with a
  // broadcast; it is compiled at the first such call and reused ever after
  const Sequence calls = {{Shape{1, 3, 1, 10}, Shape{1, 3, 10, 1}},
                          {Shape{1, 3, 10, 10}, Shape{1, 3, 1, 10}},
                          {Shape{1, 3, 10, 10}, Shape{1, 3, 1, 1}}};
  check_sequence(add_graph(Shape{1, 3, Q, Q}, Shape{1, 3, Q, Q}), calls, 2);
  // both inputs broadcast along it in turn: one kernel per pattern
  const Sequence both = {{Shape{4, 1}, Shape{4, 9}},
                         {Shape{4, 9}, Shape{4, 1}},
                         {Shape{4, 9}, Shape{4, 9}},
                         {Shape{4, 1}, Shape{4, 9}}};
  check_sequence(add_graph(Shape{Q, Q}, Shape{Q, Q}), both, 3);
}

TEST_CASE("dynamic shapes: innermost sizes with and without tails and unrolled or not") {
  Graph g;
  const auto x = g.parameter(f32, {Q, Q}), y = g.parameter(f32, {Q, Q}),
             b = g.parameter(f32, {1, Q});
  g.result(g.maximum(g.subtract(g.multiply(x, y), b), g.scalar(f32, -0.25)));
  Sequence calls;
  for (const Dim n : {1, 7, 8, 15, 16, 17, 31, 32, 33, 64, 65, 127, 128, 129, 1000})
    calls.push_back({Shape{3, n}, Shape{3, n}, Shape{1, n}});
  for (const int unroll : {1, 2, 4}) {
    INFO("unroll = " << unroll);
    check_sequence(g, calls, 1, {.unroll = unroll});
  }
}

TEST_CASE("dynamic shapes: a static innermost extent of whole vectors under dynamic rows") {
  // the one-vector loop and the masked tail must stay loops on the main loop's counter even
  // when the innermost extent is known (a static 16 once made the one-vector loop run-once)
  for (const Dim n : {8, 16, 32, 48, 64, 128}) {
    INFO("n = " << n);
    for (const int unroll : {1, 4})
      check_sequence(add_graph(Shape{Q, n}, Shape{Q, 1}),
                     {{Shape{5, n}, Shape{5, 1}}, {Shape{1, n}, Shape{1, 1}}}, 1,
                     {.unroll = unroll});
  }
}

TEST_CASE("dynamic shapes: random partial shapes and broadcasts match the reference") {
  Rng rng(99);
  for (int trial = 0; trial < 24; ++trial) {
    const std::size_t rank = 1 + rng.next() % 4;
    // the domain of this trial's calls, and per input which dims it broadcasts
    std::vector<Shape> partial;
    std::vector<std::vector<bool>> ones;
    const std::size_t inputs = 2 + rng.next() % 2;
    for (std::size_t i = 0; i < inputs; ++i) {
      std::vector<Dim> p(rank);
      std::vector<bool> one(rank);
      for (std::size_t d = 0; d < rank; ++d) {
        one[d] = i > 0 && rng.next() % 3 == 0; // input 0 is full: it fixes the domain
        p[d] = one[d] && rng.next() % 2 ? 1 : Q;
      }
      partial.emplace_back(p);
      ones.push_back(one);
    }
    Graph g;
    std::vector<ir::Value> in;
    for (const Shape& s : partial) in.push_back(g.parameter(f32, s));
    ir::Value t = g.add(in[0], in[1]);
    for (std::size_t i = 2; i < in.size(); ++i) t = g.multiply(t, in[i]);
    g.result(g.maximum(t, in[1]));
    Sequence calls;
    for (int c = 0; c < 3; ++c) {
      std::vector<Shape> shapes;
      std::vector<Dim> dom(rank);
      for (auto& d : dom) d = 1 + static_cast<Dim>(rng.next() % (c == 2 ? 40 : 6));
      for (std::size_t i = 0; i < inputs; ++i) {
        std::vector<Dim> s = dom;
        for (std::size_t d = 0; d < rank; ++d)
          if (ones[i][d]) s[d] = 1;
        shapes.emplace_back(s);
      }
      calls.push_back(shapes);
    }
    INFO("trial " << trial << ": " << partial[0].to_string() << ", " << partial[1].to_string());
    for_each_isa([&](x64::Isa isa) {
      const CompiledKernel k = compile(g, {.isa = isa, .fma = false});
      std::uint64_t seed = 9000 + std::uint64_t(trial) * 100;
      for (const auto& shapes : calls) check_shapes(k, g, shapes, seed += 10);
    });
  }
}

TEST_CASE("dynamic shapes: configure() collapses the domain at run time") {
  const CompiledKernel k = compile(add_graph(Shape{1, 3, Q, Q}, Shape{1, 3, Q, 1}));
  // full inputs walk one innermost loop
  const std::vector<Shape> full = {Shape{1, 3, 10, 10}, Shape{1, 3, 10, 1}};
  RuntimeConfig c = k.configure(full);
  CHECK(dims_string({c.domain.begin(), c.domain.begin() + 4}) == "[1,1,30,10]");
  CHECK(c.split == 2);
  CHECK(k.output_shapes(c).at(0) == Shape{1, 3, 10, 10});
  // y is broadcast along the innermost dim; x along dim 2: nothing merges into dim 3
  const CompiledKernel flat = compile(add_graph(Shape{Q, Q, Q}, Shape{Q, Q, Q}));
  c = flat.configure(std::vector<Shape>{Shape{2, 3, 5}, Shape{2, 3, 5}});
  CHECK(dims_string({c.domain.begin(), c.domain.begin() + 3}) == "[1,1,30]");
  CHECK(c.split == 2);
  CHECK(c.variant == 0);
  c = flat.configure(std::vector<Shape>{Shape{2, 3, 5}, Shape{2, 3, 1}});
  CHECK(dims_string({c.domain.begin(), c.domain.begin() + 3}) == "[1,6,5]");
  CHECK(c.variant == 2u); // input 1 needs the kernel that broadcasts its innermost dim
}

TEST_CASE("dynamic shapes: configure() once and run_configured() many times") {
  const Graph g = add_graph(Shape{Q, 16}, Shape{Q, 1});
  const CompiledKernel k = compile(g);
  const std::vector<Shape> shapes = {Shape{5, 16}, Shape{5, 1}};
  const RuntimeConfig cfg = k.configure(shapes);
  const std::vector<Tensor> in = {make_tensor(shapes[0], 1), make_tensor(shapes[1], 2)};
  const Tensor want = reference::evaluate(g, std::span<const Tensor>(in)).at(0);
  Tensor out(f32, k.output_shapes(cfg).at(0));
  const void* ins[] = {in[0].data(), in[1].data()};
  void* outs[] = {out.data()};
  for (int i = 0; i < 3; ++i) {
    k.run_configured(cfg, ins, outs);
    CHECK(compare(out, want, exact).empty());
  }
}

TEST_CASE("dynamic shapes: empty tensors and single elements") {
  const Graph g = add_graph(Shape{Q, Q}, Shape{Q, Q});
  for_each_isa([&](x64::Isa isa) {
    const CompiledKernel k = compile(g, {.isa = isa});
    const std::vector<Tensor> empty =
        k.run({make_tensor(Shape{0, 5}, 1), make_tensor(Shape{0, 5}, 2)});
    CHECK(empty.at(0).shape() == Shape{0, 5});
    check_shapes(k, g, {Shape{1, 1}, Shape{1, 1}}, 3);
  });
}

TEST_CASE("dynamic shapes: large tensors with the streaming variant and two threads") {
  Graph g;
  const auto x = g.parameter(f32, {Q, Q}), y = g.parameter(f32, {Q});
  g.result(g.subtract(g.multiply(x, y), x));
  // threshold 1 byte: the non-temporal-store kernel for every aligned output
  check_sequence(g, {{Shape{64, 1024}, Shape{1024}}, {Shape{3, 100003}, Shape{100003}}}, 1,
                 {.streaming_threshold_bytes = 1});
}

TEST_CASE("dynamic shapes: tails never touch memory outside a tensor") {
  Graph g;
  const auto x = g.parameter(f32, {Q, Q}), y = g.parameter(f32, {Q, 1});
  g.result(g.add(g.multiply(x, y), x));
  reference::Options ro;
  ro.round_each_node = true;
  for_each_isa([&](x64::Isa isa) {
    const CompiledKernel k = compile(g, {.isa = isa, .fma = false, .streaming_threshold_bytes = 1});
    for (const Dim n : {1, 7, 17, 33, 100})
      for (const Guard where : {Guard::after, Guard::before}) {
        INFO("n = " << n);
        const std::vector<Tensor> in = {make_tensor(Shape{3, n}, 5), make_tensor(Shape{3, 1}, 6)};
        const Tensor want = reference::evaluate(g, std::span<const Tensor>(in), ro).at(0);
        for (const int threads : {1, 2, 3})
          CHECK(compare(run_guarded(k, in, want, where, threads), want, exact).empty());
      }
  });
}

TEST_CASE("dynamic shapes: many threads run one kernel on different shapes at once") {
  Graph g;
  const auto x = g.parameter(f32, {Q, Q}), y = g.parameter(f32, {Q, Q});
  g.result(g.maximum(g.add(x, y), y));
  const CompiledKernel k = compile(g, {.fma = false});
  const std::uint64_t before = compilations();
  std::vector<std::thread> pool;
  std::atomic<int> failures{0};
  for (int t = 0; t < 8; ++t)
    pool.emplace_back([&, t] {
      for (int i = 0; i < 40; ++i) {
        const Dim rows = 1 + (t + i) % 5, cols = 1 + (t * 7 + i * 3) % 37;
        // every third call broadcasts y along the innermost dim: the variant is compiled once
        const Shape xs{rows, cols}, ys{rows, i % 3 == 0 ? 1 : cols};
        const std::vector<Tensor> in = {make_tensor(xs, std::uint64_t(t * 1000 + i)),
                                        make_tensor(ys, std::uint64_t(t * 1000 + i + 500))};
        const Tensor want = reference::evaluate(g, std::span<const Tensor>(in)).at(0);
        const Tensor got = k.run(std::span<const Tensor>(in), with_threads(1 + i % 2)).at(0);
        if (!compare(got, want, exact).empty()) ++failures;
      }
    });
  for (auto& th : pool) th.join();
  CHECK(failures == 0);
  CHECK(compilations() - before == 1); // the y-broadcast variant, once
}

TEST_CASE("dynamic shapes: the kernel cache keeps dynamic and static kernels apart") {
  KernelCache cache(8);
  const Graph dyn = add_graph(Shape{Q, 8}, Shape{Q, 8});
  const Graph fixed = add_graph(Shape{4, 8}, Shape{4, 8});
  const CompiledKernel a = compile_cached(dyn, {}, &cache);
  const CompiledKernel b = compile_cached(add_graph(Shape{Q, 8}, Shape{Q, 8}), {}, &cache);
  const CompiledKernel c = compile_cached(fixed, {}, &cache);
  CHECK(a.is_dynamic());
  CHECK(!c.is_dynamic());
  CHECK(cache.stats().misses == 2);
  CHECK(cache.stats().hits == 1);
  CHECK(a.code().data() == b.code().data());
}

TEST_CASE("dynamic shapes: bad shapes and misuse are reported and nothing runs") {
  const CompiledKernel k = compile(add_graph(Shape{Q, 4}, Shape{Q, 4}));
  const CompiledKernel fixed = compile(add_graph(Shape{2, 4}, Shape{2, 4}));
  auto run = [&](const Shape& a, const Shape& b) {
    (void)k.run({make_tensor(a, 1), make_tensor(b, 2)});
  };
  CHECK(error_id([&] {
          run(Shape{2, 5}, Shape{2, 5});
        }) == "snippets.run.shape_mismatch"); // static dim
  CHECK(error_id([&] {
          run(Shape{2, 4}, Shape{3, 4});
        }) == "snippets.run.shape_mismatch"); // no broadcast
  CHECK(error_id([&] { run(Shape{4}, Shape{2, 4}); }) == "snippets.run.shape_mismatch"); // rank
  CHECK(error_id([&] {
          (void)k.configure(std::vector<Shape>{Shape{2, 4}});
        }) == "snippets.run.arg_count");
  // an output of the wrong shape
  const std::vector<Tensor> in = {make_tensor(Shape{2, 4}, 1), make_tensor(Shape{1, 4}, 2)};
  Tensor out(f32, Shape{1, 4});
  const ConstTensorView iv[] = {{f32, in[0].shape(), in[0].data()},
                                {f32, in[1].shape(), in[1].data()}};
  const TensorView ov[] = {{f32, out.shape(), out.data()}};
  CHECK(error_id([&] { k.run(iv, ov); }) == "snippets.run.shape_mismatch");
  CHECK(error_id([&] { (void)fixed.configure(std::vector<Shape>{}); }) ==
        "snippets.run.not_dynamic");
  const void* ins[] = {in[0].data(), in[1].data()};
  void* outs[] = {out.data()};
  CHECK(error_id([&] { k.run_unchecked(ins, outs); }) == "snippets.run.not_static");
  // bodies a dynamic kernel cannot take
  Graph deep;
  deep.result(deep.relu(deep.parameter(f32, Shape(std::vector<Dim>(9, Q)))));
  CHECK(error_id([&] { (void)compile(deep); }) == "snippets.compile.dynamic_rank");
  Graph blocked;
  blocked.result(blocked.relu(blocked.parameter(f32, {1, Q, 4}, "x", Layout::permuted({0, 2, 1}))));
  CHECK(error_id([&] { (void)compile(blocked); }) == "snippets.compile.dynamic_layout");
}

TEST_CASE("dynamic shapes: the lowered LIR reads work amounts and increments and tail counts at "
          "run time") {
  ir::LinearIR<x64::Traits> lir =
      lower(add_graph(Shape{Q, Q}, Shape{Q, 1}), x64::Isa::avx512, {.unroll = 2});
  CHECK(lir.dynamic);
  const std::string text = ir::to_string(lir);
  INFO(text);
  CHECK(text.starts_with("domain [?,?]"));          // not collapsed at compile time
  CHECK(text.find("Load x?") != std::string::npos); // the masked tail
  CHECK(text.find("Store x?") != std::string::npos);
  CHECK(text.find("+config") != std::string::npos);             // the outer loop's increments
  CHECK(text.find("work runtime inc 32") != std::string::npos); // unrolled main loop
  CHECK(text.find("inc 16 tail tail_of") != std::string::npos); // one vector per iteration
  CHECK(text.find("once tail_of") != std::string::npos);        // the masked tail
}
