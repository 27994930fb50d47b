// SPDX-License-Identifier: Apache-2.0
// Tests of frontend/onnx_ops_quantization.hpp: QuantizeLinear and DequantizeLinear per tensor
// and per axis, with known and run-time scales and zero points, at opsets 10 and 13; ONNX's own
// test vectors; QDQ chains and a QDQ MatMul as Programs (kernels against the reference, bit for
// bit on the integer outputs); MatMulInteger (ONNX's vector with run-time zero points, known
// weights and zero points as one int8 kernel); and the import errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "../error_id.hpp"
#include "model_builder.hpp"
#include "snippets/frontend/onnx.hpp"
#include "snippets/snippets.hpp"

namespace {

namespace ox = snippets::onnx;
using namespace onnx_test;
using snippets::ElementType;
using snippets::Shape;
using snippets::reference::Tensor;
using Traits = snippets::DefaultTraits;
using StepKind = snippets::Program<>::StepKind;
constexpr int UINT8 = pb::TensorProto::UINT8, INT8 = pb::TensorProto::INT8;
constexpr ElementType f32 = ElementType::f32, u8 = ElementType::u8, i8 = ElementType::i8;

int count_ops(const snippets::ir::Graph<Traits>& g, std::string_view op) {
  int n = 0;
  for (snippets::ir::NodeId id = 0; id < g.size(); ++id) n += g.node(id).op_name() == op;
  return n;
}

/// Runs `model` as a Program (both ISAs) and checks every output against the reference
/// interpreter bit for bit, and output 0 against `want` when given; returns the kernels run.
int run_and_check(const ox::Model<>& model, const std::vector<Tensor>& in,
                  const std::vector<double>& want = {}) {
  const auto ref = snippets::reference::evaluate(model.graph, in);
  for (std::size_t i = 0; i < want.size(); ++i) CHECK(ref.at(0).at(i) == want[i]);
  int kernels = 0;
  for (const auto isa : {snippets::x64::Isa::avx2, snippets::x64::Isa::avx512}) {
    if (!snippets::x64::host_supports(isa)) continue;
    snippets::ProgramOptions<Traits> opt;
    opt.compile.isa = isa;
    const snippets::Program<> p(model.graph, opt);
    kernels = 0;
    for (const auto& s : p.steps()) {
      kernels += s.kind == StepKind::kernel;
      CHECK(s.note.empty());
    }
    const auto got = p.run(in);
    REQUIRE(got.size() == ref.size());
    for (std::size_t k = 0; k < got.size(); ++k) {
      CHECK(got[k].type() == ref[k].type());
      for (std::size_t i = 0; i < got[k].size(); ++i) {
        INFO("output " << k << " element " << i);
        CHECK(got[k].at(i) == ref[k].at(i));
      }
    }
  }
  return kernels;
}

Tensor values(ElementType t, Shape s, std::vector<double> v) {
  return Tensor::from_values(t, std::move(s), v);
}

const std::vector<double> axis_x{-162, 10, -100, 232, -20,  -50,  -76,  0,    0,
                                 252,  32, -44,  245, -485, -960, -270, -375, -470};
const std::vector<double> axis_q{3,  89, 34, 200, 74, 59, 5,   24,  24,
                                 87, 32, 13, 245, 99, 4,  142, 121, 102};

} // namespace

TEST_CASE("onnx QuantizeLinear: ONNX's vectors per tensor, known or run-time scale, u8 and i8") {
  SUBCASE("known scale and zero point (initializers): one Quantize kernel") {
    ModelBuilder m;
    m.input("x", FLOAT, {6}).initializer("s", FLOAT, {}, {2}).initializer("z", UINT8, {}, {128});
    m.node("QuantizeLinear", {"x", "s", "z"}, {"y"});
    m.output("y", UINT8, {6});
    const auto model = ox::load_from_bytes(m.bytes());
    CHECK(count_ops(model.graph, "Quantize") == 1);
    CHECK(run_and_check(model, {values(f32, {6}, {0, 2, 3, 1000, -254, -1000})},
                        {128, 129, 130, 255, 1, 0}) == 1);
  }
  SUBCASE("run-time scale and zero point (graph inputs, as ONNX's node test has them)") {
    ModelBuilder m;
    m.input("x", FLOAT, {6}).input("s", FLOAT, {}).input("z", UINT8, {});
    m.node("QuantizeLinear", {"x", "s", "z"}, {"y"});
    m.output("y", UINT8, {6});
    const auto model = ox::load_from_bytes(m.bytes());
    CHECK(run_and_check(model,
                        {values(f32, {6}, {0, 2, 3, 1000, -254, -1000}), values(f32, {}, {2}),
                         values(u8, {}, {128})},
                        {128, 129, 130, 255, 1, 0}) == 1);
  }
  SUBCASE("no zero point: u8 and zero; an i8 zero point: i8, saturating at -128 and 127") {
    ModelBuilder m(10); // opset 10's form
    m.input("x", FLOAT, {2, 7}).initializer("s", FLOAT, {}, {0.5});
    m.initializer("z", INT8, {}, {-3});
    m.node("QuantizeLinear", {"x", "s"}, {"u"}).node("QuantizeLinear", {"x", "s", "z"}, {"i"});
    m.output("u", UINT8, {2, 7}).output("i", INT8, {2, 7});
    const auto model = ox::load_from_bytes(m.bytes());
    const Tensor x =
        values(f32, {2, 7},
               {-100, -1.25, -0.25, 0, 0.25, 0.75, 1.25, 63.75, 64, 100, 0.1, -0.1, 126.75, -200});
    const auto ref = snippets::reference::evaluate(model.graph, {x});
    CHECK(ref[0].type() == u8);
    CHECK(ref[1].type() == i8);
    const double u[] = {0, 0, 0, 0, 0, 2, 2, 128, 128, 200, 0, 0, 254, 0};
    const double i[] = {-128, -5, -3, -3, -3, -1, -1, 125, 125, 127, -3, -3, 127, -128};
    for (std::size_t k = 0; k < 14; ++k) {
      CHECK(ref[0].at(k) == u[k]);
      CHECK(ref[1].at(k) == i[k]);
    }
    run_and_check(model, {x});
  }
}

TEST_CASE("onnx QuantizeLinear and DequantizeLinear per axis: ONNX's vectors, run-time and known "
          "scales") {
  const std::vector<double> scale{2, 4, 5}, zero{84, 24, 196};
  for (const bool known : {false, true}) {
    INFO((known ? "initializers" : "graph inputs"));
    ModelBuilder q, d;
    for (ModelBuilder* m : {&q, &d}) {
      if (known) {
        m->initializer("s", FLOAT, {3}, scale).initializer("z", UINT8, {3}, zero);
      } else {
        m->input("s", FLOAT, {3}).input("z", UINT8, {3});
      }
    }
    q.input("x", FLOAT, {1, 3, 3, 2}).node("QuantizeLinear", {"x", "s", "z"}, {"y"});
    q.output("y", UINT8, {1, 3, 3, 2});
    d.input("x", UINT8, {1, 3, 3, 2})
        .node("DequantizeLinear", {"x", "s", "z"}, {"y"}, {{"axis", 1}});
    d.output("y", FLOAT, {1, 3, 3, 2});
    const auto qm = ox::load_from_bytes(q.bytes()), dm = ox::load_from_bytes(d.bytes());
    CHECK(count_ops(qm.graph, "Reshape") == (known ? 0 : 2)); // [3] -> [3, 1, 1]
    std::vector<Tensor> qin, din;
    qin.push_back(values(f32, {1, 3, 3, 2}, axis_x));
    din.push_back(values(u8, {1, 3, 3, 2}, axis_q));
    if (!known)
      for (auto* in : {&qin, &din}) {
        in->push_back(values(f32, {3}, scale));
        in->push_back(values(u8, {3}, zero));
      }
    // the inputs come after x in the model's order: put x where the model wants it
    if (!known) {
      std::rotate(qin.begin(), qin.begin() + 1, qin.end());
      std::rotate(din.begin(), din.begin() + 1, din.end());
    }
    CHECK(run_and_check(qm, qin, axis_q) >= 1);
    CHECK(run_and_check(dm, din, axis_x) >= 1);
  }
}

TEST_CASE("onnx DequantizeLinear: no zero point, i8 and i32 inputs, known values folded") {
  ModelBuilder m;
  m.input("a", INT8, {2, 5}).input("b", INT32, {5}).initializer("s", FLOAT, {}, {0.25});
  m.initializer("w", UINT8, {2, 2}, {0, 1, 128, 255}).initializer("wz", UINT8, {}, {128});
  m.node("DequantizeLinear", {"a", "s"}, {"da"}).node("DequantizeLinear", {"b", "s"}, {"db"});
  m.node("DequantizeLinear", {"w", "s", "wz"}, {"dw"});
  m.output("da", FLOAT, {2, 5}).output("db", FLOAT, {5}).output("dw", FLOAT, {2, 2});
  const auto model = ox::load_from_bytes(m.bytes());
  CHECK(count_ops(model.graph, "Subtract") == 0); // no zero point; the known one folded
  const auto ref = snippets::reference::evaluate(
      model.graph, {values(i8, {2, 5}, {-128, -1, 0, 1, 127, 5, 6, 7, 8, 9}),
                    values(ElementType::i32, {5}, {-1000000, -3, 0, 3, 16777217})});
  CHECK(ref[0].at(0) == -32);
  CHECK(ref[0].at(4) == 31.75);
  CHECK(ref[1].at(0) == -250000);
  CHECK(ref[1].at(4) == 4194304); // 16777217 as f32 is 2^24
  const double dw[] = {-32, -31.75, 0, 31.75};
  for (std::size_t i = 0; i < 4; ++i) CHECK(ref[2].at(i) == dw[i]);
}

TEST_CASE("onnx QDQ: quantize(relu(x * s + b)) and dequantize(u8) * w + b are one kernel each, "
          "and a QDQ MatMul runs with its weights dequantized while loading") {
  SUBCASE("relu, quantize, dequantize, scale: one kernel over u8 in the middle") {
    ModelBuilder m;
    m.input("x", FLOAT, {4, 3, 11}).initializer("k", FLOAT, {}, {0.5});
    m.initializer("b", FLOAT, {3, 1}, {0.125, -1, 3.375});
    m.initializer("s", FLOAT, {}, {0.25}).initializer("z", UINT8, {}, {7});
    m.node("Mul", {"x", "k"}, {"xs"}).node("Add", {"xs", "b"}, {"xb"});
    m.node("Relu", {"xb"}, {"r"}).node("QuantizeLinear", {"r", "s", "z"}, {"q"});
    m.node("DequantizeLinear", {"q", "s", "z"}, {"dq"}).node("Mul", {"dq", "k"}, {"y"});
    m.output("y", FLOAT, {4, 3, 11});
    const auto model = ox::load_from_bytes(m.bytes());
    std::vector<double> x(132);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = double(int(i * 37 % 301) - 60) / 4;
    CHECK(run_and_check(model, {values(f32, {4, 3, 11}, x)}) == 1);
  }
  SUBCASE("a QDQ MatMul: dequantized activations, constant dequantized weights") {
    ModelBuilder m;
    std::vector<double> w(8 * 6);
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = double(i * 29 % 256);
    m.input("a", UINT8, {5, 8}).initializer("as", FLOAT, {}, {0.5});
    m.initializer("az", UINT8, {}, {100}).initializer("w", UINT8, {8, 6}, w);
    m.initializer("ws", FLOAT, {6}, {0.25, 0.5, 0.125, 1, 2, 0.0625});
    m.initializer("wz", UINT8, {6}, {128, 0, 255, 7, 9, 128});
    m.node("DequantizeLinear", {"a", "as", "az"}, {"da"});
    m.node("DequantizeLinear", {"w", "ws", "wz"}, {"dw"}, {{"axis", 1}});
    m.node("MatMul", {"da", "dw"}, {"y"});
    m.output("y", FLOAT, {5, 6});
    const auto model = ox::load_from_bytes(m.bytes());
    CHECK(count_ops(model.graph, "MatMul") == 1);
    CHECK(count_ops(model.graph, "Subtract") == 1); // the activations'; the weights are known
    std::vector<double> a(40);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = double(i * 53 % 256);
    const Tensor in = values(u8, {5, 8}, a);
    const auto ref = snippets::reference::evaluate(model.graph, {in});
    const snippets::Program<> p(model.graph);
    for (const auto& s : p.steps()) CHECK(s.note.empty());
    const auto got = p.run(std::vector{in});
    for (std::size_t i = 0; i < got[0].size(); ++i) // a product of sums: within rounding
      CHECK(got[0].at(i) == doctest::Approx(ref[0].at(i)).epsilon(1e-6));
  }
}

TEST_CASE("onnx quantization errors: zero or infinite scales, shapes that do not line up, "
          "other types, axes") {
  auto load = [](ModelBuilder& m) { (void)ox::load_from_bytes(m.bytes()); };
  auto model = [](const std::vector<double>& scale, std::vector<std::int64_t> scale_dims,
                  std::vector<std::int64_t> zero_dims, int zero_type = UINT8,
                  std::vector<Attr> attrs = {}, std::int64_t opset = 13) {
    ModelBuilder m(opset);
    m.input("x", FLOAT, {2, 3, 4}).initializer("s", FLOAT, scale_dims, scale);
    std::vector<double> z(std::size_t(Shape(zero_dims).element_count()), 1);
    m.initializer("z", zero_type, zero_dims, z);
    m.node("QuantizeLinear", {"x", "s", "z"}, {"y"}, std::move(attrs));
    m.output("y", zero_type, {2, 3, 4});
    return m;
  };
  ModelBuilder zero = model({0}, {}, {});
  CHECK(error_id([&] { load(zero); }) == "snippets.onnx.bad_quantization");
  ModelBuilder infinite = model({1, INFINITY, 2}, {3}, {3});
  CHECK(error_id([&] { load(infinite); }) == "snippets.onnx.bad_quantization");
  ModelBuilder length = model({1, 2}, {2}, {2}); // axis 1 has 3 indices
  CHECK(error_id([&] { load(length); }) == "snippets.onnx.bad_quantization");
  ModelBuilder rank2 = model({1, 2, 3}, {1, 3}, {1, 3});
  CHECK(error_id([&] { load(rank2); }) == "snippets.onnx.bad_quantization");
  ModelBuilder zero_shape = model({1, 2, 3}, {3}, {});
  CHECK(error_id([&] { load(zero_shape); }) == "snippets.onnx.bad_quantization");
  ModelBuilder opset10 = model({1, 2, 3}, {3}, {3}, UINT8, {}, 10);
  CHECK(error_id([&] { load(opset10); }) == "snippets.onnx.bad_quantization");
  ModelBuilder axis10 = model({1}, {}, {}, UINT8, {{"axis", 0}}, 10); // no axis before 13
  CHECK(error_id([&] { load(axis10); }) == "snippets.onnx.unsupported_attribute");
  ModelBuilder far_axis = model({1, 2, 3}, {3}, {3}, UINT8, {{"axis", 5}});
  CHECK(error_id([&] { load(far_axis); }) == "snippets.shape.axis_out_of_range");
  ModelBuilder last = model({1, 2, 3, 4}, {4}, {4}, UINT8, {{"axis", -1}});
  CHECK(error_id([&] { load(last); }) == "no error");
  ModelBuilder int32_zero = model({1}, {}, {}, INT32);
  CHECK(error_id([&] { load(int32_zero); }) == "snippets.onnx.unsupported_type");
  ModelBuilder int_scale;
  int_scale.input("x", UINT8, {3}).initializer("s", INT32, {}, {2});
  int_scale.node("DequantizeLinear", {"x", "s"}, {"y"}).output("y", INT32, {3});
  CHECK(error_id([&] { load(int_scale); }) == "snippets.onnx.bad_quantization");
}

TEST_CASE("onnx MatMulInteger: ONNX's vector with run-time zero points, exactly in i32") {
  ModelBuilder m(10);
  m.input("a", UINT8, {4, 3}).input("b", UINT8, {3, 2});
  m.input("az", UINT8, {}).input("bz", UINT8, {});
  m.node("MatMulInteger", {"a", "b", "az", "bz"}, {"y"}).output("y", INT32, {4, 2});
  const auto model = ox::load_from_bytes(m.bytes());
  const std::vector<Tensor> in{values(u8, {4, 3}, {11, 7, 3, 10, 6, 2, 9, 5, 1, 8, 4, 0}),
                               values(u8, {3, 2}, {1, 4, 2, 5, 3, 6}), values(u8, {}, {12}),
                               values(u8, {}, {0})};
  const std::vector<double> want{-38, -83, -44, -98, -50, -113, -56, -128};
  const auto ref = snippets::reference::evaluate(model.graph, in);
  REQUIRE(ref.at(0).type() == ElementType::i32);
  for (std::size_t i = 0; i < want.size(); ++i) CHECK(ref[0].at(i) == want[i]);
  const auto got = snippets::Program<>(model.graph).run(in);
  for (std::size_t i = 0; i < want.size(); ++i) CHECK(got.at(0).at(i) == want[i]);
}

/// The whole model is one kernel step (the MatMul inside it, not on the reference path).
bool one_kernel(const ox::Model<>& model) {
  const snippets::Program<> p(model.graph);
  return p.steps().size() == 1 && p.steps()[0].kind == StepKind::kernel;
}

TEST_CASE("onnx MatMulInteger: known weights and zero points are one int8 kernel, bit for bit") {
  const snippets::Dim M = 9, K = 37, N = 20;
  std::vector<double> a(static_cast<std::size_t>(M * K)), w(static_cast<std::size_t>(K * N));
  std::vector<double> zb(static_cast<std::size_t>(N));
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = double(i * 53 % 256);
  for (std::size_t j = 0; j < zb.size(); ++j) zb[j] = double(100 + j * 3);
  SUBCASE("u8 activations less a zero point, i8 weights") {
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = double(int(i * 29 % 256) - 128);
    ModelBuilder m;
    m.input("a", UINT8, {M, K}).initializer("az", UINT8, {}, {131});
    m.initializer("w", INT8, {K, N}, w);
    m.node("MatMulInteger", {"a", "w", "az"}, {"y"}).output("y", INT32, {M, N});
    const auto model = ox::load_from_bytes(m.bytes());
    CHECK(count_ops(model.graph, "MatMul") == 1);
    CHECK(count_ops(model.graph, "Subtract") == 0); // the zero point is the MatMul's
    CHECK(one_kernel(model));
    CHECK(run_and_check(model, {values(u8, {M, K}, a)}) == 1);
  }
  SUBCASE("u8 weights less a zero point per column, folded into i8 weights") {
    for (std::size_t i = 0; i < w.size(); ++i) // within 100 of their column's zero point
      w[i] = zb[i % std::size_t(N)] + double(int(i * 41 % 201) - 100);
    ModelBuilder m;
    m.input("a", UINT8, {M, K}).initializer("w", UINT8, {K, N}, w);
    m.initializer("az", UINT8, {}, {7}).initializer("wz", UINT8, {N}, zb);
    m.node("MatMulInteger", {"a", "w", "az", "wz"}, {"y"});
    m.node("Cast", {"y"}, {"f"}, {{"to", std::int64_t{FLOAT}}}).output("f", FLOAT, {M, N});
    const auto model = ox::load_from_bytes(m.bytes());
    CHECK(count_ops(model.graph, "MatMul") == 1);
    CHECK(one_kernel(model));
    CHECK(run_and_check(model, {values(u8, {M, K}, a)}) == 1);
  }
}

TEST_CASE("onnx MatMulInteger: dequantize, bias, relu and QuantizeLinear after it are one kernel "
          "storing u8") {
  const snippets::Dim M = 13, K = 70, N = 33;
  std::vector<double> a(static_cast<std::size_t>(M * K)), w(static_cast<std::size_t>(K * N));
  std::vector<double> bias(static_cast<std::size_t>(N));
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = double(i * 53 % 256);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = double(int(i * 29 % 256) - 128);
  for (std::size_t j = 0; j < bias.size(); ++j) bias[j] = double(int(j * 7 % 11) - 5) / 4;
  ModelBuilder m;
  m.input("a", UINT8, {M, K}).initializer("az", UINT8, {}, {128});
  m.initializer("w", INT8, {K, N}, w).initializer("s", FLOAT, {}, {0x1p-12});
  m.initializer("b", FLOAT, {N}, bias);
  m.initializer("qs", FLOAT, {}, {0.125}).initializer("qz", UINT8, {}, {9});
  m.node("MatMulInteger", {"a", "w", "az"}, {"acc"});
  m.node("Cast", {"acc"}, {"f"}, {{"to", std::int64_t{FLOAT}}});
  m.node("Mul", {"f", "s"}, {"fs"}).node("Add", {"fs", "b"}, {"fb"});
  m.node("Relu", {"fb"}, {"r"}).node("QuantizeLinear", {"r", "qs", "qz"}, {"q"});
  m.output("q", UINT8, {M, N});
  const auto model = ox::load_from_bytes(m.bytes());
  CHECK(one_kernel(model));
  CHECK(run_and_check(model, {values(u8, {M, K}, a)}) == 1);
}

TEST_CASE("onnx MatMulInteger errors: zero points of other shapes, float operands") {
  auto load = [](ModelBuilder& m) { (void)ox::load_from_bytes(m.bytes()); };
  ModelBuilder rows;
  rows.input("a", UINT8, {4, 3}).input("b", INT8, {3, 2});
  rows.initializer("az", UINT8, {2}, {1, 2}); // 4 rows
  rows.node("MatMulInteger", {"a", "b", "az"}, {"y"}).output("y", INT32, {4, 2});
  CHECK(error_id([&] { load(rows); }) == "snippets.onnx.bad_quantization");
  ModelBuilder floats;
  floats.input("a", FLOAT, {4, 3}).input("b", INT8, {3, 2});
  floats.node("MatMulInteger", {"a", "b"}, {"y"}).output("y", INT32, {4, 2});
  CHECK(error_id([&] { load(floats); }) == "snippets.onnx.unsupported_type");
}
