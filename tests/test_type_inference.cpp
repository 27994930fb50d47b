// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "mock_backend.hpp"
#include "snippets/ir/graph.hpp"
#include "snippets/ir/type_inference.hpp"

using namespace snippets;
using namespace snippets::ir;
using snippets::test::MockBackend;

namespace {

using MockOp = Op<MockBackend>;
constexpr Dim Q = dynamic;
constexpr auto f32 = ElementType::f32;
constexpr auto f16 = ElementType::f16;
constexpr auto bf16 = ElementType::bf16;
constexpr auto i32 = ElementType::i32;
constexpr auto u8 = ElementType::u8;
constexpr auto boolean = ElementType::boolean;

std::vector<TensorType> infer(const MockOp& op, std::vector<TensorType> in) {
  return infer_types<MockBackend>(op, in, "test");
}

/// The id of the Error inference throws (its message must name `who`), or "" for none.
std::string infer_error_who(const MockOp& op, std::vector<TensorType> in) {
  try {
    infer_types<MockBackend>(op, in, "Op 'who'");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("Op 'who'") != std::string::npos);
    return e.id();
  }
  return "";
}

/// Member by member: g++ 12 -O2 warns "may be used uninitialized" (falsely) for the
/// exception cleanup of a `Constant{{f32, {2}}, {1, 2}}` temporary.
Constant constant_tag(TensorType output, std::vector<double> values) {
  Constant c;
  c.output = std::move(output);
  c.values = std::move(values);
  return c;
}

struct Good {
  const char* what;
  MockOp op;
  std::vector<TensorType> in;
  std::vector<TensorType> out;
};

struct Bad {
  const char* what;
  MockOp op;
  std::vector<TensorType> in;
  const char* id;
};

} // namespace

TEST_CASE("infer_types gives the output types of every op category") {
  const TensorType x{f32, {2, 3}};
  const std::vector<Good> cases = {
      {"parameter", Parameter{{i32, {1, Q}}, {}}, {}, {{i32, {1, Q}}}},
      {"constant", constant_tag({f32, {2}}, {1, 2}), {}, {{f32, {2}}}},
      {"constant fill", constant_tag({u8, {2, 2}}, {7}), {}, {{u8, {2, 2}}}},
      {"constant no elements",
       constant_tag({f32, {1ll << 40, 1ll << 40, 0}}, {}),
       {},
       {{f32, {1ll << 40, 1ll << 40, 0}}}},
      {"scalar", Scalar{{f32, {}}, 3}, {}, {{f32, {}}}},
      {"scalar 1s", Scalar{{f32, {1, 1, 1, 1}}, 3}, {}, {{f32, {1, 1, 1, 1}}}},
      {"result", Result{}, {x}, {}},
      {"result of boolean", Result{}, {{boolean, {2}}}, {}},
      {"unary", Relu{}, {x}, {x}},
      {"unary int", Abs{}, {{i32, {4}}}, {{i32, {4}}}},
      {"unary dyn", Exp{}, {{f16, {Q, 3}}}, {{f16, {Q, 3}}}},
      {"clamp", Clamp{0, 6}, {x}, {x}},
      {"clamp equal", Clamp{1, 1}, {x}, {x}},
      {"float-only bf16", Sigmoid{}, {{bf16, {2}}}, {{bf16, {2}}}},
      {"binary", Add{}, {{f32, {2, 1}}, {f32, {1, 3}}}, {{f32, {2, 3}}}},
      {"binary int", Mod{}, {{i32, {4}}, {i32, {}}}, {{i32, {4}}}},
      {"binary dyn", Multiply{}, {{f32, {3, 2, Q, Q}}, {f32, {1, 1, 1, 1}}}, {{f32, {3, 2, Q, Q}}}},
      {"comparison", Less{}, {{i32, {2, 1}}, {i32, {3}}}, {{boolean, {2, 3}}}},
      {"comparison bool", Equal{}, {{boolean, {2}}, {boolean, {1}}}, {{boolean, {2}}}},
      {"slice innermost", Slice{-1, 1, 2}, {x}, {{f32, {2, 2}}}},
      {"slice outer", Slice{0, 1, 1}, {{u8, {2, 3}}}, {{u8, {1, 3}}}},
      {"slice dyn", Slice{1, 0, 2}, {{f32, {2, Q}}}, {{f32, {2, 2}}}},
      {"slice empty", Slice{1, 3, 0}, {x}, {{f32, {2, 0}}}},
      {"logical", LogicalXor{}, {{boolean, {2}}, {boolean, {1}}}, {{boolean, {2}}}},
      {"logical not", LogicalNot{}, {{boolean, {Q}}}, {{boolean, {Q}}}},
      {"prelu channel", PRelu{}, {{f32, {1, 3, 4, 4}}, {f32, {3}}}, {{f32, {1, 3, 4, 4}}}},
      {"prelu numpy", PRelu{}, {{f32, {1, 3, 4, 4}}, {f32, {4}}}, {{f32, {1, 3, 4, 4}}}},
      {"prelu scalar", PRelu{}, {{f32, {2, 4}}, {f32, {1}}}, {{f32, {2, 4}}}},
      {"select", Select{}, {{boolean, {2, 1}}, {f32, {3}}, {f32, {}}}, {{f32, {2, 3}}}},
      {"convert", Convert{i32}, {x}, {{i32, {2, 3}}}},
      {"convert bool", Convert{boolean}, {x}, {{boolean, {2, 3}}}},
      {"reduce keep", ReduceSum{{1}, true}, {{f32, {2, 3, 4}}}, {{f32, {2, 1, 4}}}},
      {"reduce drop", ReduceMax{{-1, 0}, false}, {{f32, {2, 3, 4}}}, {{f32, {3}}}},
      {"reduce all", ReduceSum{{0, 1}, false}, {{i32, {2, 3}}}, {{i32, {}}}},
      {"reduce dyn", ReduceSum{{0}, true}, {{f32, {Q, 3}}}, {{f32, {1, 3}}}},
      {"softmax", Softmax{1}, {{f32, {2, 3}}}, {{f32, {2, 3}}}},
      {"transpose", Transpose{{2, 0, 1}}, {{f32, {2, 3, 4}}}, {{f32, {4, 2, 3}}}},
      {"transpose rank 0", Transpose{{}}, {{f32, {}}}, {{f32, {}}}},
      {"broadcast", Broadcast{{4, 2, 3}}, {{f32, {2, 1}}}, {{f32, {4, 2, 3}}}},
      {"broadcast dyn in", Broadcast{{2, 5}}, {{f32, {Q, 1}}}, {{f32, {2, 5}}}},
      {"broadcast dyn out", Broadcast{{2, Q}}, {{f32, {2, 1}}}, {{f32, {2, Q}}}},
      {"reshape", Reshape{{3, 2}}, {x}, {{f32, {3, 2}}}},
      {"reshape infer", Reshape{{-1}}, {x}, {{f32, {6}}}},
      {"reshape infer mid", Reshape{{1, -1, 2}}, {{f32, {2, 3, 2}}}, {{f32, {1, 6, 2}}}},
      {"reshape dyn", Reshape{{-1, 3}}, {{f32, {Q, 3}}}, {{f32, {Q, 3}}}},
      {"reshape zero", Reshape{{0, 5}}, {{f32, {0, 3}}}, {{f32, {0, 5}}}},
      {"matmul", MatMul{}, {{f32, {2, 3}}, {f32, {3, 4}}}, {{f32, {2, 4}}}},
      {"matmul ta", MatMul{true, false}, {{f32, {3, 2}}, {f32, {3, 4}}}, {{f32, {2, 4}}}},
      {"matmul tb", MatMul{false, true}, {{f32, {2, 3}}, {f32, {4, 3}}}, {{f32, {2, 4}}}},
      {"matmul batch", MatMul{}, {{f32, {5, 1, 2, 3}}, {f32, {7, 3, 4}}}, {{f32, {5, 7, 2, 4}}}},
      {"matmul vec-mat", MatMul{}, {{f32, {3}}, {f32, {3, 4}}}, {{f32, {4}}}},
      {"matmul mat-vec", MatMul{}, {{f32, {2, 3}}, {f32, {3}}}, {{f32, {2}}}},
      {"matmul vec-vec", MatMul{}, {{f32, {3}}, {f32, {3}}}, {{f32, {}}}},
      {"matmul dyn", MatMul{}, {{f32, {Q, Q}}, {f32, {3, 4}}}, {{f32, {Q, 4}}}},
      {"opaque", Opaque{"Nms", {{i32, {Q, 3}}, {f32, {Q}}}}, {x, x}, {{i32, {Q, 3}}, {f32, {Q}}}},
  };
  for (const auto& c : cases) {
    const std::string what = c.what;
    CAPTURE(what);
    CHECK(infer(c.op, c.in) == c.out);
  }
}

TEST_CASE("infer_types rejects wrong arity, types, shapes and attributes with stable ids") {
  const TensorType x{f32, {2, 3}};
  const TensorType xi{i32, {2, 3}};
  const TensorType b{boolean, {2, 3}};
  const std::vector<Bad> cases = {
      {"parameter with input", Parameter{x, {}}, {x}, "snippets.graph.arity"},
      {"result arity", Result{}, {}, "snippets.graph.arity"},
      {"unary arity", Relu{}, {x, x}, "snippets.graph.arity"},
      {"binary arity", Add{}, {x}, "snippets.graph.arity"},
      {"select arity", Select{}, {b, x}, "snippets.graph.arity"},
      {"matmul arity", MatMul{}, {x}, "snippets.graph.arity"},
      {"f32 + i32", Add{}, {x, xi}, "snippets.graph.type_mismatch"},
      {"f32 < f16", Less{}, {x, {f16, {2, 3}}}, "snippets.graph.type_mismatch"},
      {"select branches", Select{}, {b, x, xi}, "snippets.graph.type_mismatch"},
      {"prelu types", PRelu{}, {x, xi}, "snippets.graph.type_mismatch"},
      {"matmul types", MatMul{}, {x, {i32, {3, 2}}}, "snippets.graph.type_mismatch"},
      {"exp on i32", Exp{}, {xi}, "snippets.graph.unsupported_type"},
      {"softmax on u8", Softmax{}, {{u8, {4}}}, "snippets.graph.unsupported_type"},
      {"gelu on bool", Gelu{}, {b}, "snippets.graph.unsupported_type"},
      {"and on f32", LogicalAnd{}, {x, x}, "snippets.graph.unsupported_type"},
      {"not on f32", LogicalNot{}, {x}, "snippets.graph.unsupported_type"},
      {"bool into add", Add{}, {b, b}, "snippets.graph.unsupported_type"},
      {"bool into relu", Relu{}, {b}, "snippets.graph.unsupported_type"},
      {"select cond f32", Select{}, {x, x, x}, "snippets.graph.unsupported_type"},
      {"bool reduce", ReduceSum{{0}}, {b}, "snippets.graph.unsupported_type"},
      {"bool matmul", MatMul{}, {b, b}, "snippets.graph.unsupported_type"},
      {"add shapes", Add{}, {x, {f32, {3, 2}}}, "snippets.shape.not_broadcastable"},
      {"select shapes", Select{}, {{boolean, {4}}, x, x}, "snippets.shape.not_broadcastable"},
      {"prelu grows x", PRelu{}, {{f32, {3}}, {f32, {2, 3}}}, "snippets.shape.not_broadcastable"},
      {"broadcast back", Broadcast{{3}}, {x}, "snippets.shape.not_broadcastable"},
      {"broadcast clash", Broadcast{{2, 4}}, {x}, "snippets.shape.not_broadcastable"},
      {"matmul batch",
       MatMul{},
       {{f32, {2, 2, 3}}, {f32, {3, 3, 4}}},
       "snippets.shape.not_broadcastable"},
      {"matmul inner", MatMul{}, {{f32, {2, 3}}, {f32, {4, 2}}}, "snippets.shape.matmul_mismatch"},
      {"matmul rank 0", MatMul{}, {{f32, {}}, {f32, {3}}}, "snippets.graph.bad_shape"},
      {"clamp lo > hi", Clamp{6, 0}, {x}, "snippets.graph.bad_attribute"},
      {"clamp NaN",
       Clamp{std::numeric_limits<double>::quiet_NaN(), 1},
       {x},
       "snippets.graph.bad_attribute"},
      {"transpose dup", Transpose{{0, 0}}, {x}, "snippets.graph.bad_attribute"},
      {"transpose range", Transpose{{0, 2}}, {x}, "snippets.graph.bad_attribute"},
      {"transpose size", Transpose{{0, 1, 2}}, {x}, "snippets.graph.bad_attribute"},
      {"slice past", Slice{1, 2, 2}, {x}, "snippets.graph.bad_attribute"},
      {"slice negative", Slice{1, -1, 1}, {x}, "snippets.graph.bad_attribute"},
      {"slice axis", Slice{2, 0, 1}, {x}, "snippets.shape.axis_out_of_range"},
      {"slice arity", Slice{0, 0, 1}, {x, x}, "snippets.graph.arity"},
      {"reshape count", Reshape{{4, 2}}, {x}, "snippets.shape.reshape_mismatch"},
      {"reshape infer", Reshape{{4, -1}}, {x}, "snippets.shape.reshape_mismatch"},
      {"reshape two -1", Reshape{{-1, -1}}, {x}, "snippets.graph.bad_attribute"},
      {"reshape -2", Reshape{{-2, 3}}, {x}, "snippets.graph.bad_attribute"},
      {"reshape overflow",
       Reshape{{1ll << 40, 1ll << 40}},
       {x},
       "snippets.shape.too_many_elements"},
      {"reduce no axes", ReduceSum{{}}, {x}, "snippets.graph.bad_attribute"},
      {"reduce axis", ReduceMax{{2}}, {x}, "snippets.shape.axis_out_of_range"},
      {"reduce -axis", ReduceMax{{-3}}, {x}, "snippets.shape.axis_out_of_range"},
      {"softmax axis", Softmax{2}, {x}, "snippets.shape.axis_out_of_range"},
      {"softmax rank 0", Softmax{0}, {{f32, {}}}, "snippets.shape.axis_out_of_range"},
      {"opaque no outputs", Opaque{"Nms", {}}, {x}, "snippets.graph.bad_attribute"},
      {"parameter layout rank",
       Parameter{x, Layout::channels_last(4)},
       {},
       "snippets.layout.rank_mismatch"},
      {"constant count",
       constant_tag({f32, {2, 2}}, {1, 2, 3}),
       {},
       "snippets.graph.bad_attribute"},
      {"constant empty", constant_tag({f32, {2}}, {}), {}, "snippets.graph.bad_attribute"},
      {"constant dynamic", constant_tag({f32, {Q}}, {1}), {}, "snippets.shape.dynamic"},
      {"constant huge",
       constant_tag({f32, {1ll << 40, 1ll << 40}}, {1}),
       {},
       "snippets.shape.too_many_elements"},
      {"scalar shape", Scalar{{f32, {1, 2}}, 1}, {}, "snippets.graph.bad_attribute"},
      {"scalar dynamic", Scalar{{f32, {Q}}, 1}, {}, "snippets.graph.bad_attribute"},
  };
  for (const auto& c : cases) {
    const std::string what = c.what;
    CAPTURE(what);
    CHECK(infer_error_who(c.op, c.in) == c.id);
  }
}

TEST_CASE("every float-only op rejects each non-float element type") {
  const std::vector<MockOp> float_only = {
      Sqrt{},   Exp{},      Log{},  Sigmoid{}, Tanh{},     Erf{},      Gelu{},         Swish{},
      HSwish{}, HSigmoid{}, Mish{}, Elu{},     SoftPlus{}, SoftSign{}, PowerStatic{2}, Softmax{}};
  for (const MockOp& op : float_only) {
    CAPTURE(op_name<MockBackend>(op));
    for (ElementType t : all_element_types) {
      CAPTURE(to_string(t));
      if (is_float(t))
        CHECK(infer(op, {{t, {2}}}) == std::vector<TensorType>{{t, {2}}});
      else
        CHECK(infer_error_who(op, {{t, {2}}}) == "snippets.graph.unsupported_type");
    }
  }
}

TEST_CASE("error messages name the op and say what to do") {
  try {
    infer_types<MockBackend>(Add{}, std::vector<TensorType>{{f32, {2}}, {i32, {2}}}, "Add 'sum'");
    FAIL("no error");
  } catch (const Error& e) {
    const std::string what = e.what();
    CHECK(what.starts_with("[snippets.graph.type_mismatch] Add 'sum'"));
    CHECK(what.find("f32[2]") != std::string::npos);
    CHECK(what.find("i32[2]") != std::string::npos);
    CHECK(what.find("Convert") != std::string::npos);
  }
  try {
    infer_types<MockBackend>(Exp{}, std::vector<TensorType>{{i32, {2}}}, "Exp 'e'");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("Convert the input to f32") != std::string::npos);
  }
}

TEST_CASE("Subgraph inference takes the body's parameters as inputs and results as outputs") {
  auto body = std::make_shared<Graph<MockBackend>>();
  auto p0 = body->parameter(f32, {2, Q});
  auto p1 = body->parameter(f32, {1});
  body->result(body->add(p0, p1));
  body->result(body->less(p0, p1));
  const MockOp sg = Subgraph<MockBackend>{body, {"Add_2", "Less_4"}};
  CHECK(infer(sg, {{f32, {2, 7}}, {f32, {1}}}) ==
        std::vector<TensorType>{{f32, {2, Q}}, {boolean, {2, Q}}});
  CHECK(infer_error_who(sg, {{f32, {2, 7}}}) == "snippets.graph.arity");
  CHECK(infer_error_who(sg, {{i32, {2, 7}}, {f32, {1}}}) == "snippets.graph.type_mismatch");
  CHECK(infer_error_who(sg, {{f32, {3, 7}}, {f32, {1}}}) == "snippets.graph.type_mismatch");
  CHECK(infer_error_who(Subgraph<MockBackend>{}, {}) == "snippets.graph.bad_attribute");
  auto no_result = std::make_shared<Graph<MockBackend>>();
  no_result->parameter(f32, {2});
  CHECK(infer_error_who(Subgraph<MockBackend>{no_result, {}}, {{f32, {2}}}) ==
        "snippets.graph.bad_attribute");
}
