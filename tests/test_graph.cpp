// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "error_id.hpp"
#include "mock_backend.hpp"
#include "snippets/ir/graph.hpp"
#include "snippets/ir/printer.hpp"

using namespace snippets;
using namespace snippets::ir;
using snippets::test::MockBackend;

namespace {

using G = Graph<MockBackend>;
constexpr Dim Q = dynamic;
constexpr auto f32 = ElementType::f32;
constexpr auto i32 = ElementType::i32;
constexpr auto boolean = ElementType::boolean;

/// Everything observable about a graph, to prove that a failed call changed nothing.
struct Snapshot {
  std::size_t size = 0;
  std::string dump;
  std::vector<std::vector<Use>> users; // per node output, in node order
  std::vector<NodeId> parameters, results;
  bool operator==(const Snapshot&) const = default;

  explicit Snapshot(const G& g)
      : size(g.size()), dump(to_string(g)), parameters(g.parameters()), results(g.results()) {
    for (NodeId id = 0; id < g.size(); ++id)
      for (std::uint32_t p = 0; p < g.node(id).outputs.size(); ++p) {
        const auto u = g.users(Output{id, p});
        users.emplace_back(u.begin(), u.end());
      }
  }
};

/// `stmt` must throw snippets::Error `id` and leave `g` exactly as it was.
#define CHECK_FAILS_KEEPING_GRAPH(g, id, stmt)                                                     \
  do {                                                                                             \
    const Snapshot before_(g);                                                                     \
    CHECK(error_id([&] { stmt; }) == std::string_view(id));                                        \
    CHECK(Snapshot(g) == before_);                                                                 \
  } while (false)

std::vector<Use> users_of(const G& g, Value v) {
  const auto u = g.users(v.output);
  const auto w = g.users(v); // the Value overload sees the same list
  CHECK(u.data() == w.data());
  CHECK(u.size() == w.size());
  return {u.begin(), u.end()};
}

/// Every edge goes from an earlier to a later position of `order`, which holds each node once.
void check_topological(const G& g, const std::vector<NodeId>& order) {
  REQUIRE(order.size() == g.size());
  std::vector<std::size_t> position(g.size(), g.size());
  for (std::size_t i = 0; i < order.size(); ++i) position[order[i]] = i;
  CHECK(std::set<NodeId>(order.begin(), order.end()).size() == g.size());
  for (NodeId id = 0; id < g.size(); ++id)
    for (const Output& in : g.node(id).inputs) CHECK(position[in.node] < position[id]);
}

struct Inputs {
  Value x, y, c, p, m;
};

struct BuilderCase {
  const char* method;
  std::function<Value(G&, const Inputs&)> build;
  std::string_view op;
  TensorType out;
};

} // namespace

TEST_CASE("every builder method adds its op with the inferred output type") {
  const Shape s{2, 3, 4};
  const std::vector<BuilderCase> cases = {
      {"abs", [](G& g, const Inputs& i) { return g.abs(i.x); }, "Abs", {f32, s}},
      {"negative", [](G& g, const Inputs& i) { return g.negative(i.x); }, "Negative", {f32, s}},
      {"relu", [](G& g, const Inputs& i) { return g.relu(i.x); }, "Relu", {f32, s}},
      {"floor", [](G& g, const Inputs& i) { return g.floor(i.x); }, "Floor", {f32, s}},
      {"ceiling", [](G& g, const Inputs& i) { return g.ceiling(i.x); }, "Ceiling", {f32, s}},
      {"sqrt", [](G& g, const Inputs& i) { return g.sqrt(i.x); }, "Sqrt", {f32, s}},
      {"exp", [](G& g, const Inputs& i) { return g.exp(i.x); }, "Exp", {f32, s}},
      {"log", [](G& g, const Inputs& i) { return g.log(i.x); }, "Log", {f32, s}},
      {"sigmoid", [](G& g, const Inputs& i) { return g.sigmoid(i.x); }, "Sigmoid", {f32, s}},
      {"tanh", [](G& g, const Inputs& i) { return g.tanh(i.x); }, "Tanh", {f32, s}},
      {"erf", [](G& g, const Inputs& i) { return g.erf(i.x); }, "Erf", {f32, s}},
      {"hswish", [](G& g, const Inputs& i) { return g.hswish(i.x); }, "HSwish", {f32, s}},
      {"hsigmoid", [](G& g, const Inputs& i) { return g.hsigmoid(i.x); }, "HSigmoid", {f32, s}},
      {"mish", [](G& g, const Inputs& i) { return g.mish(i.x); }, "Mish", {f32, s}},
      {"softplus", [](G& g, const Inputs& i) { return g.softplus(i.x); }, "SoftPlus", {f32, s}},
      {"softsign", [](G& g, const Inputs& i) { return g.softsign(i.x); }, "SoftSign", {f32, s}},
      {"clamp", [](G& g, const Inputs& i) { return g.clamp(i.x, 0, 6); }, "Clamp", {f32, s}},
      {"round", [](G& g, const Inputs& i) { return g.round(i.x); }, "Round", {f32, s}},
      {"gelu", [](G& g, const Inputs& i) { return g.gelu(i.x); }, "Gelu", {f32, s}},
      {"swish", [](G& g, const Inputs& i) { return g.swish(i.x, 2); }, "Swish", {f32, s}},
      {"elu", [](G& g, const Inputs& i) { return g.elu(i.x, 0.5); }, "Elu", {f32, s}},
      {"leaky_relu",
       [](G& g, const Inputs& i) { return g.leaky_relu(i.x, 0.2); },
       "LeakyRelu",
       {f32, s}},
      {"power_static",
       [](G& g, const Inputs& i) { return g.power_static(i.x, 3); },
       "PowerStatic",
       {f32, s}},
      {"logical_not",
       [](G& g, const Inputs& i) { return g.logical_not(i.c); },
       "LogicalNot",
       {boolean, s}},
      {"add", [](G& g, const Inputs& i) { return g.add(i.x, i.y); }, "Add", {f32, s}},
      {"subtract",
       [](G& g, const Inputs& i) { return g.subtract(i.x, i.y); },
       "Subtract",
       {f32, s}},
      {"multiply",
       [](G& g, const Inputs& i) { return g.multiply(i.x, i.y); },
       "Multiply",
       {f32, s}},
      {"divide", [](G& g, const Inputs& i) { return g.divide(i.x, i.y); }, "Divide", {f32, s}},
      {"maximum", [](G& g, const Inputs& i) { return g.maximum(i.x, i.y); }, "Maximum", {f32, s}},
      {"minimum", [](G& g, const Inputs& i) { return g.minimum(i.x, i.y); }, "Minimum", {f32, s}},
      {"power", [](G& g, const Inputs& i) { return g.power(i.x, i.y); }, "Power", {f32, s}},
      {"squared_difference",
       [](G& g, const Inputs& i) { return g.squared_difference(i.x, i.y); },
       "SquaredDifference",
       {f32, s}},
      {"floor_mod",
       [](G& g, const Inputs& i) { return g.floor_mod(i.x, i.y); },
       "FloorMod",
       {f32, s}},
      {"mod", [](G& g, const Inputs& i) { return g.mod(i.x, i.y); }, "Mod", {f32, s}},
      {"prelu", [](G& g, const Inputs& i) { return g.prelu(i.x, i.p); }, "PRelu", {f32, s}},
      {"equal", [](G& g, const Inputs& i) { return g.equal(i.x, i.y); }, "Equal", {boolean, s}},
      {"not_equal",
       [](G& g, const Inputs& i) { return g.not_equal(i.x, i.y); },
       "NotEqual",
       {boolean, s}},
      {"greater",
       [](G& g, const Inputs& i) { return g.greater(i.x, i.y); },
       "Greater",
       {boolean, s}},
      {"greater_equal",
       [](G& g, const Inputs& i) { return g.greater_equal(i.x, i.y); },
       "GreaterEqual",
       {boolean, s}},
      {"less", [](G& g, const Inputs& i) { return g.less(i.x, i.y); }, "Less", {boolean, s}},
      {"less_equal",
       [](G& g, const Inputs& i) { return g.less_equal(i.x, i.y); },
       "LessEqual",
       {boolean, s}},
      {"logical_and",
       [](G& g, const Inputs& i) { return g.logical_and(i.c, i.c); },
       "LogicalAnd",
       {boolean, s}},
      {"logical_or",
       [](G& g, const Inputs& i) { return g.logical_or(i.c, i.c); },
       "LogicalOr",
       {boolean, s}},
      {"logical_xor",
       [](G& g, const Inputs& i) { return g.logical_xor(i.c, i.c); },
       "LogicalXor",
       {boolean, s}},
      {"select", [](G& g, const Inputs& i) { return g.select(i.c, i.x, i.y); }, "Select", {f32, s}},
      {"convert", [](G& g, const Inputs& i) { return g.convert(i.x, i32); }, "Convert", {i32, s}},
      {"fake_quantize",
       [](G& g, const Inputs& i) { return g.fake_quantize(i.x, i.y, i.y, i.x, i.x, 256); },
       "FakeQuantize",
       {f32, s}},
      {"quantize",
       [](G& g, const Inputs& i) { return g.quantize(i.x, i.y, i.y, ElementType::i8); },
       "Quantize",
       {ElementType::i8, s}},
      {"reduce_sum",
       [](G& g, const Inputs& i) { return g.reduce_sum(i.x, {1}); },
       "ReduceSum",
       {f32, {2, 1, 4}}},
      {"reduce_max",
       [](G& g, const Inputs& i) { return g.reduce_max(i.x, {1}, false); },
       "ReduceMax",
       {f32, {2, 4}}},
      {"reduce_min",
       [](G& g, const Inputs& i) { return g.reduce_min(i.x, {1}); },
       "ReduceMin",
       {f32, {2, 1, 4}}},
      {"reduce_prod",
       [](G& g, const Inputs& i) {
         return g.reduce_prod(i.x, {0, 2}, false);
       },
       "ReduceProd",
       {f32, {3}}},
      {"reduce_mean",
       [](G& g, const Inputs& i) { return g.reduce_mean(i.x, {-1}); },
       "ReduceMean",
       {f32, {2, 3, 1}}},
      {"reduce_sum_square",
       [](G& g, const Inputs& i) { return g.reduce_sum_square(i.x, {1}); },
       "ReduceSumSquare",
       {f32, {2, 1, 4}}},
      {"reduce_l1",
       [](G& g, const Inputs& i) { return g.reduce_l1(i.x, {2}, false); },
       "ReduceL1",
       {f32, {2, 3}}},
      {"reduce_l2",
       [](G& g, const Inputs& i) { return g.reduce_l2(i.x, {1}); },
       "ReduceL2",
       {f32, {2, 1, 4}}},
      {"softmax", [](G& g, const Inputs& i) { return g.softmax(i.x, 1); }, "Softmax", {f32, s}},
      {"transpose",
       [](G& g, const Inputs& i) {
         return g.transpose(i.x, {2, 0, 1});
       },
       "Transpose",
       {f32, {4, 2, 3}}},
      {"broadcast",
       [](G& g, const Inputs& i) {
         return g.broadcast(i.y, {2, 3, 4});
       },
       "Broadcast",
       {f32, s}},
      {"reshape",
       [](G& g, const Inputs& i) {
         return g.reshape(i.x, {6, -1});
       },
       "Reshape",
       {f32, {6, 4}}},
      {"slice",
       [](G& g, const Inputs& i) { return g.slice(i.x, -1, 1, 2); },
       "Slice",
       {f32, {2, 3, 2}}},
      {"matmul",
       [](G& g, const Inputs& i) { return g.matmul(i.x, i.m); },
       "MatMul",
       {f32, {2, 3, 5}}},
      {"parameter",
       [](G& g, const Inputs&) {
         return g.parameter(i32, {Q, 2});
       },
       "Parameter",
       {i32, {Q, 2}}},
      {"constant",
       [](G& g, const Inputs&) {
         return g.constant(f32, {2}, {1, 2});
       },
       "Constant",
       {f32, {2}}},
      {"scalar", [](G& g, const Inputs&) { return g.scalar(f32, 0.5); }, "Scalar", {f32, {}}},
      {"apply",
       [](G& g, const Inputs& i) { return g.apply(Clamp{-1, 1}, i.x); },
       "Clamp",
       {f32, s}},
  };

  std::set<std::string_view> covered{"Result", "Opaque"}; // tested on their own below
  for (const auto& c : cases) {
    const std::string method = c.method;
    CAPTURE(method);
    G g;
    const Inputs in{g.parameter(f32, s), g.parameter(f32, {3, 1}), g.parameter(boolean, s),
                    g.parameter(f32, {3}), g.parameter(f32, {4, 5})};
    const std::size_t before = g.size();
    const Value v = c.build(g, in);
    CHECK(g.size() == before + 1);
    CHECK(v.graph == g.id());
    CHECK(v.output == Output{static_cast<NodeId>(before), 0});
    CHECK(g.node(v).op_name() == c.op);
    CHECK(g.type(v) == c.out);
    CHECK(g.node(v).outputs.size() == 1);
    CHECK(g.node(v).name == std::string(c.op) + "_" + std::to_string(before));
    for (std::uint32_t k = 0; k < g.node(v).inputs.size(); ++k) {
      const auto u = users_of(g, g.value(g.node(v).inputs[k]));
      CHECK(std::count(u.begin(), u.end(), Use{v.output.node, k}) == 1);
    }
    covered.insert(c.op);
  }
  // the table covers every built-in op
  std::set<std::string_view> all;
  [&]<class... Ts>(TypeList<Ts...>) { (all.insert(Ts::name), ...); }(BuiltinOps{});
  CHECK(covered == all);
}

TEST_CASE("result adds a Result node with no outputs and records it") {
  G g;
  const Value x = g.parameter(f32, {2}, "x");
  const NodeId r = g.result(g.relu(x), "out");
  CHECK(r == 2);
  CHECK(g.results() == std::vector<NodeId>{2});
  CHECK(g.parameters() == std::vector<NodeId>{0});
  CHECK(g.node(r).outputs.empty());
  CHECK(g.node(r).name == "out");
  CHECK(g.node(r).inputs == std::vector<Output>{{1, 0}});
  CHECK(users_of(g, g.value({1, 0})) == std::vector<Use>{{2, 0}});
}

TEST_CASE("a value used twice by one node has one use per input") {
  G g;
  const Value x = g.parameter(f32, {2});
  const Value y = g.multiply(x, x);
  CHECK(users_of(g, x) == std::vector<Use>{{1, 0}, {1, 1}});
  CHECK(g.type(y) == TensorType{f32, {2}});
}

TEST_CASE("type errors: f32 + i32, Exp on i32, logical ops on f32, boolean into Add, Slice "
          "outside its axis") {
  G g;
  const Value x = g.parameter(f32, {2, 3});
  const Value n = g.parameter(i32, {2, 3});
  const Value b = g.greater(x, x);
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.type_mismatch", g.add(x, n));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.type_mismatch", g.select(b, x, n));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.unsupported_type", g.exp(n));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.unsupported_type", g.logical_and(x, x));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.unsupported_type", g.logical_not(x));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.unsupported_type", g.add(b, b));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.unsupported_type", g.select(x, x, x));
  CHECK(g.type(g.equal(b, b)).type == boolean); // comparisons take booleans: false < true
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.type_mismatch", g.greater(b, x));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.bad_attribute", g.slice(x, 1, 2, 2));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.bad_attribute", g.slice(x, 0, -1, 1));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.shape.axis_out_of_range", g.slice(x, 2, 0, 1));
  const Value w = g.parameter(f32, {3, 2});
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.shape.not_broadcastable", g.add(x, w));
  CHECK(g.size() == 5);
}

TEST_CASE("arity errors through make(tag, inputs)") {
  G g;
  const Value x = g.parameter(f32, {2});
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.arity", g.make(Add{}, {x}));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.arity", g.make(Add{}, {x, x, x}));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.arity", g.make(Relu{}, {}));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.arity", g.make(Relu{}, {x, x}));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.arity", g.make(Result{}, {x, x}));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.arity", g.make(Result{}, {}));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.arity", g.make(Parameter{{f32, {2}}, {}}, {x}, "p"));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.arity", g.make(Select{}, {x, x}));
  const std::vector<Value> three{x, x, x};
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.arity", g.make(MatMul{}, three));
  try {
    g.make(Add{}, {x}, "lonely");
  } catch (const Error& e) {
    const std::string what = e.what();
    CHECK(what.find("Add 'lonely'") != std::string::npos);
    CHECK(what.find("takes 2 input(s) but was given 1") != std::string::npos);
  }
}

TEST_CASE("bad attributes: Transpose order, Reshape count, Reduce axes, axis out of range") {
  G g;
  const Value x = g.parameter(f32, {2, 3, 4});
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.bad_attribute", g.transpose(x, {0, 0, 1}));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.bad_attribute", g.transpose(x, {0, 1, 3}));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.bad_attribute", g.transpose(x, {1, 0}));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.shape.reshape_mismatch", g.reshape(x, {5, 5}));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.shape.reshape_mismatch", g.reshape(x, {5, -1}));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.bad_attribute", g.reshape(x, {-1, -1}));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.bad_attribute", g.reduce_sum(x, {}));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.bad_attribute", g.reduce_max(x, {}, false));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.shape.axis_out_of_range", g.reduce_sum(x, {3}));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.shape.axis_out_of_range", g.reduce_max(x, {0, -4}));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.shape.axis_out_of_range", g.softmax(x, 3));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.shape.axis_out_of_range", g.softmax(x, -4));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.bad_attribute", g.clamp(x, 1, 0));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.shape.not_broadcastable", g.broadcast(x, {3, 4}));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.shape.matmul_mismatch", g.matmul(x, x));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.bad_attribute",
                            g.make(Opaque{"NoOutputs", {}}, {x}));
  CHECK(g.size() == 1);
}

TEST_CASE("source nodes are checked whether built by the builder or by make") {
  G g;
  g.parameter(f32, {1});
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.layout.rank_mismatch",
                            g.parameter(f32, {1, 2, 3}, "p", Layout::channels_last(4)));
  // The tags are assigned member by member: g++ 12 -O2 warns "may be used uninitialized"
  // (falsely) for the exception cleanup of `Parameter{{f32, {1, 2}}, Layout::...}`.
  Parameter rank3_layout;
  rank3_layout.output = {f32, {1, 2}};
  rank3_layout.layout = Layout::permuted({2, 1, 0});
  Constant two_of_four;
  two_of_four.output = {f32, {2, 2}};
  two_of_four.values = {1, 2};
  const Scalar not_ones{{f32, {3}}, 1.0};
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.layout.rank_mismatch", g.make(rank3_layout, {}));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.bad_attribute", g.constant(f32, {2, 2}, {1, 2}));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.bad_attribute", g.make(two_of_four, {}));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.bad_attribute", g.constant(f32, {3}, {}));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.shape.dynamic", g.constant(f32, {Q}, {1}));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.bad_attribute", g.scalar(f32, 1, {1, 2}));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.bad_attribute", g.make(not_ones, {}));
  CHECK(g.type(g.parameter(f32, {1, 2, 3, 4}, "nhwc", Layout::channels_last(4))) ==
        TensorType{f32, {1, 2, 3, 4}});
  CHECK(g.type(g.constant(i32, {2, 2}, {1, 2, 3, 4})) == TensorType{i32, {2, 2}});
  CHECK(g.type(g.constant(f32, {2, 2}, {7})) == TensorType{f32, {2, 2}});
  CHECK(g.type(g.constant(f32, {0}, {})) == TensorType{f32, {0}});
  CHECK(g.type(g.scalar(f32, 1, {1, 1, 1})) == TensorType{f32, {1, 1, 1}});
  CHECK(g.parameters() == std::vector<NodeId>{0, 1});
}

TEST_CASE("Values of another graph, default Values and dangling Values are rejected") {
  G g, h;
  CHECK(g.id() != h.id());
  const Value x = g.parameter(f32, {2});
  const Value hx = h.parameter(f32, {2});
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.foreign_value", g.add(x, hx));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.foreign_value", g.relu(Value{}));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.foreign_value", g.result(hx));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.foreign_value", g.type(hx));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.foreign_value", g.node(hx));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.foreign_value", g.users(Value{}));
  const Value no_node{g.id(), {7, 0}};
  const Value no_port{g.id(), {0, 1}};
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.dangling_edge", g.relu(no_node));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.dangling_edge", g.relu(no_port));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.dangling_edge", g.node(NodeId{7}));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.dangling_edge", g.type(Output{0, 1}));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.dangling_edge", g.users(Output{7, 0}));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.dangling_edge", g.value(Output{0, 1}));
  CHECK(g.value(Output{0, 0}) == x);
  CHECK(h.size() == 1);
  CHECK(users_of(h, hx).empty());
}

TEST_CASE("make by name builds attribute-free ops and rejects unknown names") {
  G g;
  const Value x = g.parameter(f32, {2, 3});
  const auto r = g.make("Relu", {x});
  REQUIRE(r.size() == 1);
  CHECK(g.node(r[0]).op_name() == "Relu");
  CHECK(g.node(r[0]).name == "Relu_1");
  const std::vector<Value> two{x, r[0]};
  const auto s = g.make("Add", two, "sum");
  CHECK(g.node(s[0]).name == "sum");
  CHECK(g.type(s[0]) == TensorType{f32, {2, 3}});
  CHECK(g.make("Result", {s[0]}).empty());
  CHECK(g.results() == std::vector<NodeId>{3});
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.unknown_op", g.make("Frobnicate", {x}));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.unknown_op", g.make("relu", {x}));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.unknown_op", g.make("Clamp", {x}));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.unknown_op", g.make("Parameter", {}));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.unknown_op", g.make("Subgraph", {x}));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.unknown_op", g.make("", {x}));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.arity", g.make("Add", {x}));
  try {
    g.make("Frobnicate", {x});
  } catch (const Error& e) {
    const std::string what = e.what();
    CHECK(what.find("'mock'") != std::string::npos);
    CHECK(what.find("'Frobnicate'") != std::string::npos);
    CHECK(what.find("Opaque") != std::string::npos);
  }
}

TEST_CASE("Opaque nodes have their declared outputs, several of them if declared") {
  G g;
  const Value x = g.parameter(f32, {Q, 4});
  const auto outs = g.make(Opaque{"TopK", {{f32, {Q, 2}}, {i32, {Q, 2}}}}, {x}, "topk");
  REQUIRE(outs.size() == 2);
  CHECK(outs[0].output == Output{1, 0});
  CHECK(outs[1].output == Output{1, 1});
  CHECK(g.type(outs[0]) == TensorType{f32, {Q, 2}});
  CHECK(g.type(outs[1]) == TensorType{i32, {Q, 2}});
  CHECK(g.node(outs[1]).users.size() == 2);
  const Value idx = g.convert(outs[1], f32);
  g.result(outs[0]);
  g.result(idx);
  CHECK(users_of(g, outs[0]) == std::vector<Use>{{3, 0}});
  CHECK(users_of(g, outs[1]) == std::vector<Use>{{2, 0}});
  CHECK(g.type(g.make(Opaque{"Source", {{ElementType::u8, {3}}}}, {})[0]) ==
        TensorType{ElementType::u8, {3}});
}

TEST_CASE("Subgraph nodes take their output types from the body") {
  auto body = std::make_shared<G>();
  {
    const Value a = body->parameter(f32, {Q, 3});
    const Value b = body->parameter(f32, {1, 3});
    const Value s = body->add(a, b);
    body->result(s);
    body->result(body->greater(s, b));
  }
  G g;
  const Value x = g.parameter(f32, {8, 3});
  const Value y = g.parameter(f32, {1, 3});
  const auto outs = g.make(Subgraph<MockBackend>{body, {"Add_2", "Greater_4"}}, {x, y}, "sg");
  REQUIRE(outs.size() == 2);
  CHECK(g.type(outs[0]) == TensorType{f32, {Q, 3}});
  CHECK(g.type(outs[1]) == TensorType{boolean, {Q, 3}});
  CHECK(g.node(outs[0]).op_name() == "Subgraph");
  CHECK(users_of(g, x) == std::vector<Use>{{2, 0}});
  CHECK(users_of(g, y) == std::vector<Use>{{2, 1}});
  const Value n = g.parameter(i32, {8, 3});
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.type_mismatch",
                            g.make(Subgraph<MockBackend>{body, {}}, {n, y}));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.arity",
                            g.make(Subgraph<MockBackend>{body, {}}, {x}));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.bad_attribute",
                            g.make(Subgraph<MockBackend>{nullptr, {}}, {x, y}));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.bad_attribute",
                            g.make(Subgraph<MockBackend>{std::make_shared<G>(), {}}, {}));
}

TEST_CASE("set_input reconnects an edge and updates both use-lists") {
  G g;
  const Value x = g.parameter(f32, {2}); // %0
  const Value a = g.relu(x);             // %1
  const Value b = g.exp(a);              // %2
  const Value c = g.add(a, x);           // %3
  const NodeId r = g.result(c);          // %4
  g.set_input(c.output.node, 1, b);
  CHECK(g.node(c).inputs == std::vector<Output>{{1, 0}, {2, 0}});
  CHECK(users_of(g, x) == std::vector<Use>{{1, 0}});
  CHECK(users_of(g, b) == std::vector<Use>{{3, 1}});
  CHECK(users_of(g, a) == std::vector<Use>{{2, 0}, {3, 0}});
  // a Result can be pointed at another value of the same or any type
  g.set_input(r, 0, b);
  CHECK(users_of(g, c).empty());
  CHECK(users_of(g, b) == std::vector<Use>{{3, 1}, {4, 0}});
  // reconnecting to the same source keeps one use
  g.set_input(r, 0, b);
  CHECK(users_of(g, b) == std::vector<Use>{{3, 1}, {4, 0}});
  check_topological(g, g.topological_order());
}

TEST_CASE("set_input that would close a cycle or change types is rejected, graph unchanged") {
  G g;
  const Value x = g.parameter(f32, {2});    // %0
  const Value a = g.relu(x);                // %1
  const Value b = g.exp(a);                 // %2
  const Value c = g.add(b, x);              // %3
  const Value n = g.parameter(i32, {2});    // %4
  const Value w = g.parameter(f32, {3, 2}); // %5
  g.result(c);
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.cycle", g.set_input(a.output.node, 0, c));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.cycle", g.set_input(a.output.node, 0, b));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.cycle", g.set_input(a.output.node, 0, a));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.type_mismatch", g.set_input(c.output.node, 1, n));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.unsupported_type", g.set_input(b.output.node, 0, n));
  // the new input broadcasts, but the Add's output would grow from [2] to [3,2]
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.type_mismatch", g.set_input(c.output.node, 1, w));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.dangling_edge", g.set_input(c.output.node, 2, x));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.dangling_edge", g.set_input(0, 0, x));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.dangling_edge", g.set_input(99, 0, x));
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.foreign_value",
                            g.set_input(c.output.node, 1, Value{}));
  G h;
  const Value hx = h.parameter(f32, {2});
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.foreign_value", g.set_input(c.output.node, 1, hx));
  try {
    g.set_input(a.output.node, 0, c);
  } catch (const Error& e) {
    const std::string what = e.what();
    CHECK(what.find("Add 'Add_3'") != std::string::npos);
    CHECK(what.find("Relu 'Relu_1'") != std::string::npos);
  }
}

TEST_CASE("parameters, results, users and topological order after set_input reorders nodes") {
  G g;
  const Value p = g.parameter(f32, {4}, "p"); // %0
  const Value r = g.relu(p);                  // %1
  const Value e = g.exp(p);                   // %2
  const Value m = g.add(r, p);                // %3
  g.result(m, "out");                         // %4
  const Value q = g.parameter(f32, {4}, "q"); // %5
  const Value t = g.tanh(q);                  // %6
  g.result(t, "out2");                        // %7
  // now %1 consumes %2 and %6 consumes %3: producers with larger ids than their consumers
  g.set_input(r.output.node, 0, e);
  g.set_input(t.output.node, 0, m);
  CHECK(g.parameters() == std::vector<NodeId>{0, 5});
  CHECK(g.results() == std::vector<NodeId>{4, 7});
  CHECK(users_of(g, p) == std::vector<Use>{{2, 0}, {3, 1}});
  CHECK(users_of(g, e) == std::vector<Use>{{1, 0}});
  CHECK(users_of(g, q).empty());
  CHECK(users_of(g, m) == std::vector<Use>{{4, 0}, {6, 0}});
  const auto order = g.topological_order();
  check_topological(g, order);
  const auto pos = [&](NodeId id) { return std::find(order.begin(), order.end(), id); };
  CHECK(pos(2) < pos(1));
  CHECK(pos(3) < pos(6));
  // and a cycle through the new edges is still caught
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.cycle", g.set_input(e.output.node, 0, t));
}

TEST_CASE("topological_order of a fresh graph lists producers first") {
  G g;
  CHECK(g.topological_order().empty());
  const Value a = g.parameter(f32, {2});
  const Value b = g.parameter(f32, {2});
  g.result(g.add(g.relu(a), g.multiply(a, b)));
  check_topological(g, g.topological_order());
}

TEST_CASE("mark_skipped sets the SkippedByPlugin mark, shown in dumps") {
  G g;
  const Value x = g.parameter(f32, {2});
  const Value r = g.relu(x);
  CHECK_FALSE(g.node(r).skipped_by_plugin);
  g.mark_skipped(r.output.node);
  CHECK(g.node(r).skipped_by_plugin);
  CHECK(to_string(g).find("Relu 'Relu_1'(%0:0) -> f32[2] [skipped]") != std::string::npos);
  g.mark_skipped(r.output.node); // idempotent
  CHECK(g.node(r).skipped_by_plugin);
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.dangling_edge", g.mark_skipped(2));
}

TEST_CASE("a moved graph keeps its Values; the moved-from graph is empty and foreign to them") {
  G g;
  const Value x = g.parameter(f32, {2});
  const Value r = g.relu(x);
  const auto id = g.id();
  G h(std::move(g));
  CHECK(h.id() == id);
  CHECK(h.size() == 2);
  CHECK(h.type(r) == TensorType{f32, {2}});
  CHECK(users_of(h, x) == std::vector<Use>{{1, 0}});
  CHECK(g.id() != id); // the moved-from state is specified: empty, with a fresh id
  CHECK(g.size() == 0);
  CHECK(g.parameters().empty());
  CHECK(g.results().empty());
  // reusing the moved-from graph must not make h's Values acceptable there
  g.parameter(f32, {2});
  g.parameter(f32, {2});
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.foreign_value", g.relu(r));
  G k;
  k = std::move(h);
  CHECK(k.id() == id);
  CHECK(k.type(r) == TensorType{f32, {2}});
  CHECK(h.id() != id);
  CHECK(h.size() == 0);
}

TEST_CASE("node names default to Op_id and errors name the node") {
  G g;
  const Value x = g.parameter(f32, {2});
  CHECK(g.node(x).name == "Parameter_0");
  CHECK(g.node(x).describe() == "Parameter 'Parameter_0'");
  const Value y = g.make(Relu{}, {x}, "act")[0];
  CHECK(g.node(y).describe() == "Relu 'act'");
  const Value n = g.parameter(i32, {2});
  CHECK_FAILS_KEEPING_GRAPH(g, "snippets.graph.unsupported_type", g.make(Exp{}, {n}, "e"));
  try {
    g.make(Exp{}, {n}, "e");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("Exp 'e'") != std::string::npos);
  }
}
