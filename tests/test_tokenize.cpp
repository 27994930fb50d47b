// SPDX-License-Identifier: Apache-2.0
// tests/test_tokenize.cpp: the Tokenizer (passes/tokenize.hpp), one test per rule, plus the
// check that a tokenized model computes what the model computes (reference interpreter).
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <string>

#include "error_id.hpp"
#include "fuzz_graph.hpp"
#include "jit_test_util.hpp"
#include "snippets/snippets.hpp"

using namespace snippets;
using namespace snippets::jit_test;
using ir::NodeId;
using ir::Value;

namespace {

using Tokenize = passes::TokenizeOptions<x64::Traits>;

std::vector<const ir::Subgraph<x64::Traits>*> subgraphs(const Graph& g) {
  std::vector<const ir::Subgraph<x64::Traits>*> out;
  for (NodeId id = 0; id < g.size(); ++id)
    if (const auto* sg = std::get_if<ir::Subgraph<x64::Traits>>(&g.node(id).op)) out.push_back(sg);
  return out;
}

std::string absorbed(const ir::Subgraph<x64::Traits>& sg) {
  std::string s;
  for (const auto& name : sg.absorbed) s += (s.empty() ? "" : ",") + name;
  return s;
}

/// The tokenized model computes what the model computes (both through the interpreter, which
/// rounds every intermediate as a kernel boundary would).
void check_same_results(const Graph& model, const Graph& tokenized, reference::Options opt = {}) {
  opt.round_each_node = true;
  std::vector<Tensor> in;
  std::uint64_t seed = 1;
  for (NodeId p : model.parameters()) {
    const auto& t = model.node(p).outputs[0];
    const auto n = static_cast<std::size_t>(t.shape.element_count());
    in.push_back(Tensor::from_values(t.type, t.shape, make_values(n, seed++)));
  }
  const auto want = reference::evaluate(model, in, opt);
  const auto got = reference::evaluate(tokenized, in, opt);
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) CHECK(compare(got[i], want[i], exact) == "");
}

reference::Options identity_opaque(const std::string& name) {
  reference::Options opt;
  opt.opaque[name] = [](std::span<const reference::Values> in) {
    return std::vector<reference::Values>{in[0]};
  };
  return opt;
}

Value opaque(Graph& g, Value x, const std::string& name = "Foreign") {
  return g.make(ir::Opaque{name, {g.type(x)}}, {x}, name)[0];
}

} // namespace

TEST_CASE("tokenize: the seed's Relu -> Add becomes one Subgraph with both inputs") {
  Graph g;
  const Value p1 = g.parameter(f32, {2, 3}, "Parameter1");
  const Value p2 = g.parameter(f32, {2, 3}, "Parameter2");
  g.result(g.add(g.relu(p1), p2), "Result");
  const std::string before = ir::to_string(g);
  const Graph t = passes::tokenize(g);
  CHECK(ir::to_string(g) == before); // the model is not modified
  CHECK(ir::to_string(t) == "%0 = Parameter 'Parameter1'() -> f32[2,3]\n"
                            "%1 = Parameter 'Parameter2'() -> f32[2,3]\n"
                            "%2 = Subgraph 'Add_3'(%0:0, %1:0) {absorbed=[Relu_2,Add_3]} -> "
                            "f32[2,3]\n"
                            "    %0 = Parameter 'Parameter1'() -> f32[2,3]\n"
                            "    %1 = Parameter 'Parameter2'() -> f32[2,3]\n"
                            "    %2 = Relu 'Relu_2'(%0:0) -> f32[2,3]\n"
                            "    %3 = Add 'Add_3'(%2:0, %1:0) -> f32[2,3]\n"
                            "    %4 = Result 'Add_3'(%3:0)\n"
                            "%3 = Result 'Result'(%2:0)\n");
}

TEST_CASE("tokenize: two Subgraph parents are merged and shared inputs become one Parameter") {
  Graph g;
  const Value a = g.parameter(f32, {8}, "a");
  const Value b = g.parameter(f32, {8}, "b");
  // relu(a) and abs(a) start two Subgraphs (neither has a Subgraph parent); the Add merges them
  const Value left = g.relu(a);
  const Value right = g.abs(g.add(a, b));
  g.result(g.multiply(left, right), "y");
  const Graph t = passes::tokenize(g);
  const auto sgs = subgraphs(t);
  REQUIRE(sgs.size() == 1);
  CHECK(sgs[0]->body->parameters().size() == 2); // a is read once
  CHECK(sgs[0]->absorbed.size() == 4);
  check_same_results(g, t);
}

TEST_CASE("tokenize: a Subgraph that only the merged parents read merges with them") {
  // m = max(x) is read by three ops; each starts or joins a Subgraph of its own (with m's
  // Subgraph they would have outputs of two shapes while m's other readers are not placed);
  // they meet at the Select, which reads m's Subgraph only through them: it merges all four
  for (const bool read_outside : {false, true}) {
    Graph g;
    const Value x = g.parameter(f32, {4, 16}, "x");
    const Value m = g.reduce_max(x, {-1}, true);
    const Value big = g.greater(x, g.multiply(m, g.scalar(f32, 0.5)));
    g.result(g.select(big, g.subtract(x, m), g.multiply(x, g.scalar(f32, 0.25))), "y");
    if (read_outside) g.result(opaque(g, m), "side"); // m's Subgraph stays apart
    const Graph t = passes::tokenize(g);
    CHECK(subgraphs(t).size() == (read_outside ? 2 : 1));
    check_same_results(g, t, identity_opaque("Foreign"));
  }
}

TEST_CASE("tokenize: an attach that would create a cycle through an Opaque op starts a new "
          "Subgraph") {
  // relu -> Foreign -> add and relu -> add: putting add into relu's Subgraph would make the
  // Subgraph both feed and consume Foreign
  Graph g;
  const Value x = g.parameter(f32, {16}, "x");
  const Value r = g.relu(x);
  g.result(g.add(r, opaque(g, r)), "y");
  const Graph t = passes::tokenize(g);
  const auto sgs = subgraphs(t);
  REQUIRE(sgs.size() == 2);
  CHECK(absorbed(*sgs[0]) == "Relu_1");
  CHECK(absorbed(*sgs[1]) == "Add_3");
  check_same_results(g, t, identity_opaque("Foreign"));
}

TEST_CASE("tokenize: a merge that would create a cycle is narrowed to one parent") {
  // s1 = relu(x); s2 = abs(Foreign(s1)); add(s1, s2): merging s1 and s2 contracts a cycle
  // (s1 -> Foreign -> s2), so the Add joins the larger parent only
  Graph g;
  const Value x = g.parameter(f32, {16}, "x");
  const Value s1 = g.relu(x);
  const Value s2 = g.negative(g.abs(opaque(g, s1)));
  g.result(g.add(s1, s2), "y");
  const Graph t = passes::tokenize(g);
  const auto sgs = subgraphs(t);
  REQUIRE(sgs.size() == 2);
  CHECK(absorbed(*sgs[0]) == "Relu_1");
  CHECK(absorbed(*sgs[1]) == "Abs_3,Negative_4,Add_5");
  check_same_results(g, t, identity_opaque("Foreign"));
}

TEST_CASE("tokenize: a Subgraph feeds at most one Result (seed rule), configurable") {
  Graph g;
  const Value x = g.parameter(f32, {4, 4}, "x");
  const Value h = g.relu(x);
  g.result(h, "h");
  g.result(g.multiply(h, g.scalar(f32, 2.0)), "y");
  const Graph t = passes::tokenize(g);
  const auto sgs = subgraphs(t);
  REQUIRE(sgs.size() == 2);
  CHECK(absorbed(*sgs[0]) == "Relu_1");
  CHECK(absorbed(*sgs[1]) == "Multiply_4");
  check_same_results(g, t);

  const Graph two = passes::tokenize(g, Tokenize{.max_result_outputs = 2});
  const auto both = subgraphs(two);
  REQUIRE(both.size() == 1);
  CHECK(both[0]->body->results().size() == 2); // a multi-output Subgraph
  check_same_results(g, two);
  const Program<> program(g, {.tokenize = {.max_result_outputs = 2}});
  const auto in = std::vector{make_tensor({4, 4}, 3)};
  const auto want = reference::evaluate(g, in);
  const auto got = program.run(in);
  for (int i = 0; i < 2; ++i) CHECK(compare(got[i], want[i], exact) == "");
}

TEST_CASE("tokenize: inputs + outputs stay within the traits' data-pointer registers") {
  // a sum of 14 inputs: one Subgraph cannot take them all
  Graph g;
  Value sum = g.parameter(f32, {32}, "p0");
  for (int i = 1; i < 14; ++i)
    sum = g.add(sum, g.parameter(f32, {32}, std::string("p").append(std::to_string(i))));
  g.result(sum, "y");
  const Graph t = passes::tokenize(g);
  const auto sgs = subgraphs(t);
  REQUIRE(sgs.size() == 2);
  for (const auto* sg : sgs) {
    const auto io = sg->body->parameters().size() + sg->body->results().size();
    CHECK(io <= static_cast<std::size_t>(x64::Traits::data_pointer_registers));
  }
  check_same_results(g, t);
  const Program<> program(g);
  for (const auto& step : program.steps()) CHECK(step.kind == Program<>::StepKind::kernel);
}

TEST_CASE("tokenize: Opaque nodes in between split the model into Subgraphs around them") {
  Graph g;
  const Value x = g.parameter(f32, {3, 5}, "x");
  const Value a = g.relu(g.add(x, x));
  const Value b = opaque(g, a, "Foreign");
  const Value c = g.abs(g.subtract(b, x));
  g.result(c, "y");
  const Graph t = passes::tokenize(g);
  const auto sgs = subgraphs(t);
  REQUIRE(sgs.size() == 2);
  CHECK(absorbed(*sgs[0]) == "Add_1,Relu_2");
  CHECK(absorbed(*sgs[1]) == "Subtract_4,Abs_5");
  CHECK(sgs[0]->body->parameters().size() == 1); // add(x, x) reads x once
  check_same_results(g, t, identity_opaque("Foreign"));
}

TEST_CASE("tokenize: scalar constants go inside, tensor constants stay outside as inputs") {
  Graph g;
  const Value x = g.parameter(f32, {2, 4}, "x");
  const Value two = g.constant(f32, {1}, {2.0}, "two");
  const Value row = g.constant(f32, {4}, {1, 2, 3, 4}, "row");
  g.result(g.add(g.multiply(x, two), row), "y");
  const Graph t = passes::tokenize(g);
  const auto sgs = subgraphs(t);
  REQUIRE(sgs.size() == 1);
  const auto& body = *sgs[0]->body;
  CHECK(body.parameters().size() == 2); // x and row
  CHECK(body.node(body.parameters()[1]).name == "row");
  bool has_two = false, model_has_two = false;
  for (NodeId id = 0; id < body.size(); ++id) has_two |= body.node(id).name == "two";
  for (NodeId id = 0; id < t.size(); ++id) model_has_two |= t.node(id).name == "two";
  CHECK(has_two);
  CHECK_FALSE(model_has_two); // nobody outside reads it any more
  check_same_results(g, t);
  const Program<> program(g);
  const auto in = std::vector{make_tensor({2, 4}, 5)};
  CHECK(compare(program.run(in)[0], reference::evaluate(g, in)[0], exact) == "");
}

TEST_CASE("tokenize: ops on constants alone that nothing fusable reads stay outside, and ops "
          "on constants a Subgraph reads stay in it") {
  Graph g;
  const Value x = g.parameter(f32, {2, 4}, "x");
  const Value c = g.constant(f32, {2, 4}, {0.5}, "c");
  g.result(g.relu(g.exp(c)), "from_constants"); // a kernel of no input: not a Subgraph
  g.result(g.multiply(x, g.add(g.scalar(f32, 1.0), g.scalar(f32, 2.0))), "y");
  const Graph t = passes::tokenize(g);
  const auto sgs = subgraphs(t);
  REQUIRE(sgs.size() == 1); // the Multiply, with the Add of two scalars inside
  int outside = 0;
  for (NodeId id = 0; id < t.size(); ++id)
    outside += t.node(id).op_name() == "Exp" || t.node(id).op_name() == "Relu";
  CHECK(outside == 2);
  check_same_results(g, t);
  const Program<> program(g);
  check_steps_are_kernels(program);
  const auto in = std::vector{make_tensor({2, 4}, 6)};
  const auto want = reference::evaluate(g, in);
  const auto got = program.run(in);
  for (std::size_t i = 0; i < 2; ++i) CHECK(compare(got[i], want[i], exact) == "");
}

TEST_CASE("tokenize: a Softmax stays out of a MatMul's Subgraph when a value before it is read "
          "outside") {
  Graph g;
  const Value x = g.parameter(f32, {8, 16}, "x");
  const Value h = g.relu(g.matmul(x, g.parameter(f32, {16, 24}, "w")));
  g.result(h, "h"); // the kernel computing the Softmax in place could not keep h
  g.result(g.softmax(h, -1), "p");
  const Graph t = passes::tokenize(g);
  CHECK(subgraphs(t).size() == 2);
  const Program<> program(g);
  check_steps_are_kernels(program);
  const auto in = std::vector{make_tensor({8, 16}, 7, Pattern::finite),
                              make_tensor({16, 24}, 8, Pattern::finite)};
  const auto want = reference::evaluate(g, in);
  const auto got = program.run(in);
  for (std::size_t i = 0; i < 2; ++i) CHECK(compare(got[i], want[i], {256, 1e-4}) == "");
}

TEST_CASE("tokenize: a MatMul's constant B goes inside, or stays outside as an input when it "
          "has batch dims") {
  for (const Shape& b_shape : {Shape{16, 24}, Shape{1, 16, 24}, Shape{2, 16, 24}}) {
    INFO("B " << b_shape.to_string());
    Graph g;
    const Value x = g.parameter(f32, {2, 8, 16}, "x");
    std::vector<double> weights(static_cast<std::size_t>(b_shape.element_count()));
    for (std::size_t i = 0; i < weights.size(); ++i) weights[i] = double(i % 7) * 0.125 - 0.375;
    const Value w = g.constant(f32, b_shape, weights, "w");
    g.result(g.relu(g.matmul(x, w)), "y");
    const Graph t = passes::tokenize(g);
    const auto sgs = subgraphs(t);
    REQUIRE(sgs.size() == 1);
    CHECK(sgs[0]->body->parameters().size() == (b_shape[0] == 2 ? 2u : 1u));
    const Program<> program(g);
    check_steps_are_kernels(program);
    const auto in = std::vector{make_tensor({2, 8, 16}, 9, Pattern::finite)};
    CHECK(compare(program.run(in)[0], reference::evaluate(g, in)[0], {256, 1e-4}) == "");
  }
}

TEST_CASE("tokenize: SkippedByPlugin nodes are never tokenized") {
  Graph g;
  const Value x = g.parameter(f32, {8}, "x");
  const Value r = g.relu(x);
  g.mark_skipped(r.output.node);
  g.result(g.abs(r), "y");
  const Graph t = passes::tokenize(g);
  const auto sgs = subgraphs(t);
  REQUIRE(sgs.size() == 1);
  CHECK(absorbed(*sgs[0]) == "Abs_2");
  bool skipped_relu = false;
  for (NodeId id = 0; id < t.size(); ++id)
    skipped_relu |= t.node(id).op_name() == "Relu" && t.node(id).skipped_by_plugin;
  CHECK(skipped_relu);
}

TEST_CASE("tokenize: all outputs of a Subgraph have one shape") {
  // b = x * 2 is [4,1] and also read outside; y = b + z is [4,5]: one kernel cannot store both
  Graph g;
  const Value x = g.parameter(f32, {4, 1}, "x");
  const Value z = g.parameter(f32, {4, 5}, "z");
  const Value b = g.multiply(x, g.scalar(f32, 2.0));
  g.result(g.add(b, z), "y");
  g.result(opaque(g, b), "side");
  const Graph t = passes::tokenize(g);
  for (const auto* sg : subgraphs(t)) {
    const auto& body = *sg->body;
    for (NodeId r : body.results())
      CHECK(body.type(body.node(r).inputs[0]).shape ==
            body.type(body.node(body.results()[0]).inputs[0]).shape);
  }
  CHECK(subgraphs(t).size() == 2);
  check_same_results(g, t, identity_opaque("Foreign"));
}

TEST_CASE("tokenize: unsupported types and ops, and fuse = false") {
  Graph g;
  const Value i = g.parameter(ElementType::i32, {8}, "i");
  const Value x = g.parameter(f32, {8}, "x");
  const Value s = g.make(ir::MatMul{}, {x, x})[0]; // rank 1: no kernel computes it
  g.result(g.add(i, i), "int_sum");                // i32 arithmetic: not f32 compute, stays outside
  g.result(g.relu(g.abs(s)), "y");
  const Graph t = passes::tokenize(g);
  const auto sgs = subgraphs(t);
  REQUIRE(sgs.size() == 1);
  CHECK(absorbed(*sgs[0]) == "Abs_5,Relu_6");

  const Graph unfused = passes::tokenize(g, Tokenize{.fuse = false});
  CHECK(subgraphs(unfused).size() == 2);
  for (const auto* sg : subgraphs(unfused)) CHECK(sg->absorbed.size() == 1);
  check_same_results(g, unfused);
}

TEST_CASE("tokenize: a custom predicate narrows what the backend takes") {
  Graph g;
  const Value x = g.parameter(f32, {8}, "x");
  g.result(g.relu(g.abs(x)), "y");
  const Graph t =
      passes::tokenize(g, Tokenize{.supported = [](const Graph&, const ir::Node<x64::Traits>& n) {
                         return n.op_name() != "Relu";
                       }});
  const auto sgs = subgraphs(t);
  REQUIRE(sgs.size() == 1);
  CHECK(absorbed(*sgs[0]) == "Abs_1");
}

TEST_CASE("tokenize: a model without Results is an error") {
  Graph g;
  g.relu(g.parameter(f32, {8}, "x"));
  CHECK(error_id([&] { passes::tokenize(g); }) == "snippets.tokenize.no_results");
}

TEST_CASE("tokenize: invalid models are rejected when built, and a failed tokenization changes "
          "nothing") {
  Graph g;
  const Value x = g.parameter(f32, {2, 3}, "x");
  const Value r = g.relu(x);
  const Value a = g.abs(r);
  g.result(a, "y");
  const std::string before = ir::to_string(g);
  // cycles, unknown ops and shape conflicts never reach the tokenizer: the Graph refuses them
  CHECK(error_id([&] { g.set_input(r.output.node, 0, a); }) == "snippets.graph.cycle");
  CHECK(error_id([&] { g.make("NoSuchOp", {x}); }) == "snippets.graph.unknown_op");
  CHECK(error_id([&] { g.add(x, g.parameter(f32, {4}, "bad")); }) ==
        "snippets.shape.not_broadcastable");
  Graph other;
  CHECK(error_id([&] { other.relu(x); }) == "snippets.graph.foreign_value");
  // a predicate that throws: the error reaches the caller and the model is as it was
  const auto throwing = Tokenize{.supported = [](const Graph&, const ir::Node<x64::Traits>& n) {
    if (n.op_name() == "Abs") raise("user.predicate", "no");
    return true;
  }};
  CHECK(error_id([&] { passes::tokenize(g, throwing); }) == "user.predicate");
  // only the Parameter 'bad', built before the Add that failed, was added
  CHECK(ir::to_string(g) == before + "%4 = Parameter 'bad'() -> f32[4]\n");
  CHECK(subgraphs(passes::tokenize(g)).size() == 1);
}

TEST_CASE("tokenize: ops that no Result depends on are dropped, not put in an empty Subgraph") {
  // found by tests/test_fuzz.cpp: a Subgraph of dead ops had no output
  Graph g;
  const Value x = g.parameter(f32, {8}, "x");
  g.abs(g.relu(x)); // dead
  g.result(g.negative(x), "y");
  const Graph t = passes::tokenize(g);
  const auto sgs = subgraphs(t);
  REQUIRE(sgs.size() == 1);
  CHECK(absorbed(*sgs[0]) == "Negative_3");
  CHECK(t.size() == 3); // x, the Subgraph, y
}

TEST_CASE("tokenize: a run of fusable ops longer than max_ops becomes several Subgraphs") {
  // x - 0.25, relu, x - 0.25, ...: 2 * max_ops + 5 ops in one chain
  Graph g;
  Value v = g.parameter(f32, {3, 17}, "x");
  const std::size_t n = 2 * passes::default_max_ops + 5;
  for (std::size_t i = 0; i < n; ++i) v = i % 2 ? g.relu(v) : g.subtract(v, g.scalar(f32, 0.25));
  g.result(v, "y");
  const Graph t = passes::tokenize(g);
  const auto sgs = subgraphs(t);
  REQUIRE(sgs.size() == 3);
  CHECK(sgs[0]->absorbed.size() == passes::default_max_ops);
  CHECK(sgs[1]->absorbed.size() == passes::default_max_ops);
  CHECK(sgs[2]->absorbed.size() == 5);
  CHECK(sgs[0]->absorbed.front() == "Subtract_2");
  check_same_results(g, t);
  // every piece is a kernel, and together they compute what the model computes
  const Program<> program(g, {.cache = nullptr});
  REQUIRE(program.steps().size() == 3);
  for (const auto& step : program.steps()) CHECK(step.kind == Program<>::StepKind::kernel);
  const auto in = std::vector{make_tensor({3, 17}, 7)};
  reference::Options rounded;
  rounded.round_each_node = true;
  const auto want = reference::evaluate(g, in, rounded);
  CHECK(compare(program.run(in)[0], want[0], exact) == "");
  // 0: no limit
  CHECK(subgraphs(passes::tokenize(g, Tokenize{.max_ops = 0})).size() == 1);
}

TEST_CASE("tokenize: max_ops bounds merges too, and every piece stays a valid Subgraph") {
  for (std::size_t cap = 1; cap <= 4; ++cap)
    for (std::uint64_t seed = 0; seed < 30; ++seed) {
      const Graph g = fuzz::random_model(seed);
      const Graph t = passes::tokenize(g, Tokenize{.max_ops = cap});
      for (const auto* sg : subgraphs(t)) CHECK(sg->absorbed.size() <= cap);
      check_same_results(g, t, identity_opaque("Identity"));
    }
}

TEST_CASE("tokenize: an attach is refused when the cycle runs through another Subgraph") {
  // s = abs(Foreign(a)) + c puts Abs and c in one Subgraph S (placed first in this model's
  // topological order). Putting d = a + c into a's Subgraph would make that Subgraph feed S
  // (through Foreign) and read S (c): no path from a to c in the model, but a cycle once S is
  // one node. With max_ops = 3, S is full, so d joins neither and starts its own Subgraph;
  // without the cap it joins S.
  Graph g;
  const Value x = g.parameter(f32, {16}, "x");
  const Value a = g.relu(x);
  const Value b = g.abs(opaque(g, a));
  const Value c = g.negative(x);
  g.result(g.add(b, c), "s");
  g.result(g.add(a, c), "d");
  auto names = [](const Graph& t) {
    std::vector<std::string> out;
    for (const auto* sg : subgraphs(t)) {
      auto ops = sg->absorbed;
      std::sort(ops.begin(), ops.end());
      std::string s;
      for (const auto& op : ops) s += (s.empty() ? "" : ",") + op;
      out.push_back(s);
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  const Graph capped = passes::tokenize(g, Tokenize{.max_result_outputs = 2, .max_ops = 3});
  CHECK(names(capped) == std::vector<std::string>{"Abs_3,Add_5,Negative_4", "Add_7", "Relu_1"});
  check_same_results(g, capped, identity_opaque("Foreign"));
  const Graph free = passes::tokenize(g, Tokenize{.max_result_outputs = 2, .max_ops = 0});
  CHECK(names(free) == std::vector<std::string>{"Abs_3,Add_5,Add_7,Negative_4", "Relu_1"});
  check_same_results(g, free, identity_opaque("Foreign"));
}
