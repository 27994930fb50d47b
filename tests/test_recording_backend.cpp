// SPDX-License-Identifier: Apache-2.0
// The seam seen from a second backend: compile(), the passes and the kernel cache run for a
// traits type written only against the public interface (recording_backend.hpp), with its own
// register model, and its code generator's text is golden output for the passes.
#include <doctest/doctest.h>

#include <string>

#include "error_id.hpp"
#include "recording_backend.hpp"
#include "snippets/compile.hpp"
#include "snippets/passes/tokenize.hpp"
#include "snippets/program/kernel_cache.hpp"
#include "snippets/program/program.hpp"
#include "snippets/target/x64/traits.hpp"

using namespace snippets;
using test::recorded;
using test::RecordingBackend;
using G = ir::Graph<RecordingBackend>;

namespace {
constexpr ElementType f32 = ElementType::f32;

G relu_of_sum(const Shape& shape) {
  G g;
  const auto a = g.parameter(f32, shape, "a");
  const auto b = g.parameter(f32, shape, "b");
  g.result(g.relu(g.add(a, b)), "y");
  return g;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}
} // namespace

TEST_CASE("golden: relu(a + b) emitted with 4 lanes, a main loop and its tail") {
  const CompiledKernel k = compile(relu_of_sum(Shape{3, 10}), {.unroll = 1});
  CHECK(recorded(k) == "prologue: 2 in 1 out, spill slots 0, counter slots 0\n"
                       "loop_begin #0 work 30 step 4\n"
                       "load v0 <- arg0 x4\n"
                       "load v1 <- arg1 x4\n"
                       "Add v0 <- v0, v1\n"
                       "Relu v0 <- v0\n"
                       "store arg2 <- v0 x4\n"
                       "loop_end #0\n"
                       "loop_begin #1 work 2 step 2\n"
                       "load v0 <- arg0 x2\n"
                       "load v1 <- arg1 x2\n"
                       "Add v0 <- v0, v1\n"
                       "Relu v0 <- v0\n"
                       "store arg2 <- v0 x2\n"
                       "loop_end #1\n"
                       "epilogue\n");
  CHECK(k.signature().isa == "lanes4");
  CHECK(k.signature().vector_bytes == 16);
  CHECK(k.signature().domain == std::vector<Dim>{30});
}

TEST_CASE("unrolling follows the backend's lanes: 4 copies step 16") {
  const std::string text = recorded(compile(relu_of_sum(Shape{64}), {.unroll = 4}));
  CHECK(text.find("loop_begin #0 work 64 step 16\n") != std::string::npos);
  CHECK(count(text, "Relu ") == 4);
  CHECK(count(text, "store arg2 <- v") == 4);
}

TEST_CASE("more live values than 16 registers: the passes spill, and use no register past 15") {
  G g;
  const auto x = g.parameter(f32, Shape{64}, "x");
  std::vector<ir::Value> terms;
  for (int i = 0; i < 20; ++i)
    terms.push_back(
        g.add(x, g.scalar(f32, i + 1.0, {}, std::string("c").append(std::to_string(i)))));
  ir::Value product = terms[0];
  for (int i = 1; i < 20; ++i) product = g.multiply(product, terms[static_cast<std::size_t>(i)]);
  g.result(product, "y");
  const std::string text = recorded(compile(g, {.unroll = 1}));
  CHECK(count(text, "spill slot") > 0);
  CHECK(count(text, "reload v") > 0);
  for (int r = 16; r < 32; ++r) CHECK(text.find(" v" + std::to_string(r)) == std::string::npos);
  // every reload reads a slot that a spill wrote earlier
  for (std::size_t at = text.find("<- slot"); at != std::string::npos;
       at = text.find("<- slot", at + 1)) {
    const std::string slot = text.substr(at + 3, text.find('\n', at) - at - 3);
    const auto spill = text.find("spill " + slot + " <-");
    CHECK(spill < at);
  }
}

TEST_CASE("a reduction over the innermost axis lowers to the emitters the backend supplies") {
  G g;
  const auto x = g.parameter(f32, Shape{5, 9}, "x");
  g.result(g.reduce_sum(g.exp(x), {1}, true), "y");
  const std::string text = recorded(compile(g));
  CHECK(text.find("ReduceInit") != std::string::npos);
  CHECK(text.find("HorizonReduce") != std::string::npos);
  CHECK(text.find("Exp ") != std::string::npos);
  CHECK(text.find("store arg1 <- v") != std::string::npos);
}

TEST_CASE("the tokenizer fuses only what the recording backend takes") {
  G model;
  const auto a = model.parameter(f32, Shape{8, 16}, "a");
  const auto s = model.sigmoid(model.add(a, a)); // Sigmoid is not in its set
  model.result(model.relu(s), "y");
  const G tokenized = passes::tokenize(model);
  int subgraphs = 0, sigmoids = 0;
  for (std::size_t i = 0; i < tokenized.size(); ++i) {
    const auto& op = tokenized.node(static_cast<ir::NodeId>(i)).op;
    subgraphs += std::holds_alternative<ir::Subgraph<RecordingBackend>>(op) ? 1 : 0;
    sigmoids += std::holds_alternative<ir::Sigmoid>(op) ? 1 : 0;
  }
  CHECK(subgraphs == 2);
  CHECK(sigmoids == 1);
}

TEST_CASE("bad input: another backend's variant, running a recorded kernel, unfusable ops") {
  CHECK(error_id([] { compile(relu_of_sum(Shape{4}), {.isa = x64::Isa::avx2}); }) ==
        "snippets.compile.bad_option");
  const CompiledKernel k = compile(relu_of_sum(Shape{4}));
  CHECK_FALSE(k.signature().runnable);
  CHECK(error_id([&] {
          k.run({reference::Tensor(f32, Shape{4}), reference::Tensor(f32, Shape{4})});
        }) == "snippets.run.emit_only");
  G g;
  g.result(g.sigmoid(g.parameter(f32, Shape{4}, "x")), "y");
  CHECK(error_id([&] { compile(g); }) == "snippets.compile.unsupported_op");
}

TEST_CASE("the kernel cache keys on the backend and its variant") {
  const G body = relu_of_sum(Shape{2, 8});
  ir::Graph<x64::Traits> same;
  const auto a = same.parameter(f32, Shape{2, 8}, "a");
  const auto b = same.parameter(f32, Shape{2, 8}, "b");
  same.result(same.relu(same.add(a, b)), "y");
  const std::string key = kernel_cache_key(body);
  CHECK(key != kernel_cache_key(same, {.isa = x64::Isa::avx2}));
  CHECK(key.find("|lanes4|") != std::string::npos);
  KernelCache cache(4);
  const CompiledKernel first = compile_cached(body, {}, &cache);
  const CompiledKernel second = compile_cached(body, {}, &cache);
  CHECK(cache.stats().misses == 1);
  CHECK(cache.stats().hits == 1);
  CHECK(recorded(first) == recorded(second));
}

TEST_CASE(
    "Program with a backend that records: kernels kept to inspect, results from the reference") {
  G model;
  const auto a = model.parameter(f32, Shape{4, 6}, "a");
  const auto b = model.parameter(f32, Shape{4, 6}, "b");
  model.result(model.relu(model.sigmoid(model.add(a, b))), "y");
  const Program<RecordingBackend> program(model);
  int recorded_kernels = 0;
  for (const auto& step : program.steps()) {
    CHECK(step.kind != Program<RecordingBackend>::StepKind::kernel);
    if (!step.kernel) continue;
    ++recorded_kernels;
    CHECK(step.note.find("no code this host executes") != std::string::npos);
    CHECK(recorded(*step.kernel).starts_with("prologue: "));
  }
  CHECK(recorded_kernels == 2); // Add and Relu around the Sigmoid the backend lacks
  const std::vector<double> x(24, 0.5), y(24, -2.0);
  const std::vector<reference::Tensor> in{reference::Tensor::from_values(f32, Shape{4, 6}, x),
                                          reference::Tensor::from_values(f32, Shape{4, 6}, y)};
  CHECK(program.run(in)[0].values().v == reference::evaluate(model, in)[0].values().v);
}

TEST_CASE("Program with ReferenceBackend runs every node on the reference path") {
  ir::Graph<ReferenceBackend> model;
  const auto a = model.parameter(f32, Shape{3, 5}, "a");
  model.result(model.exp(model.add(a, a)), "y");
  const Program<ReferenceBackend> program(model);
  for (const auto& step : program.steps()) {
    CHECK(step.kind == Program<ReferenceBackend>::StepKind::reference);
    CHECK_FALSE(step.kernel.has_value());
  }
  const std::vector<double> x(15, 0.25);
  const std::vector<reference::Tensor> in{reference::Tensor::from_values(f32, Shape{3, 5}, x)};
  CHECK(program.run(in)[0].values().v == reference::evaluate(model, in)[0].values().v);
}
