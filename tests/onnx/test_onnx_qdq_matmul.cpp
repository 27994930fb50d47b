// SPDX-License-Identifier: Apache-2.0
// Tests of the QDQ MatMul and QLinearMatMul imports (frontend/onnx_ops_quantization.hpp:
// convert_matmul_dequantized, convert_qlinear_matmul): DequantizeLinear on u8 activations and
// known i8 weights around a MatMul, and QLinearMatMul with known weights and scales, load as the
// int8 product (passes/fold_dequantize_into_matmul.hpp) and run as one kernel; the f32 results
// are compared with the reference of the same ops in f32 (double) within a few units in the last
// place, u8 results within one step. ONNX's QLinearMatMul vector (run-time scales: the f32 path)
// is matched exactly.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "model_builder.hpp"
#include "snippets/frontend/onnx.hpp"
#include "snippets/snippets.hpp"

namespace {

namespace ox = snippets::onnx;
using namespace onnx_test;
using snippets::ElementType;
using snippets::reference::Tensor;
using Traits = snippets::DefaultTraits;
using StepKind = snippets::Program<>::StepKind;
constexpr int UINT8 = pb::TensorProto::UINT8, INT8 = pb::TensorProto::INT8;
constexpr ElementType u8 = ElementType::u8;

/// The MatMuls of `g` with their output types, in node order.
std::string products(const snippets::ir::Graph<Traits>& g) {
  std::string s;
  for (snippets::ir::NodeId id = 0; id < g.size(); ++id)
    if (g.node(id).op_name() == "MatMul")
      s += std::string(snippets::to_string(g.node(id).outputs[0].type)) + " ";
  return s;
}

/// Runs `model` as a Program and checks that every MatMul runs in a kernel, and output i
/// against `want[i]` within `ulps` of its largest value (f32) or one step (u8).
void run_close(const ox::Model<>& model, const std::vector<Tensor>& in,
               const std::vector<Tensor>& want, double ulps = 6) {
  const snippets::Program<> p(model.graph);
  for (const auto& s : p.steps()) {
    CHECK(s.note.empty());
    CHECK(s.kind == StepKind::kernel);
  }
  const auto got = p.run(in);
  REQUIRE(got.size() == want.size());
  for (std::size_t k = 0; k < got.size(); ++k) {
    double largest = 0;
    for (std::size_t i = 0; i < want[k].size(); ++i)
      largest = std::max(largest, std::abs(want[k].at(i)));
    const double tol = want[k].type() == ElementType::f32 ? ulps * largest * 0x1p-24 : 1.0;
    for (std::size_t i = 0; i < got[k].size(); ++i) {
      INFO("output " << k << " element " << i);
      CHECK(std::abs(got[k].at(i) - want[k].at(i)) <= tol);
    }
  }
}

std::vector<double> pattern(std::size_t n, std::size_t mul, int lo, int hi) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = double(lo + int(i * mul % std::size_t(hi - lo + 1)));
  return v;
}

} // namespace

TEST_CASE("onnx QDQ MatMul: u8 activations and i8 weights per column load as one int8 kernel "
          "with bias, relu and QuantizeLinear on its accumulators") {
  const std::int64_t M = 17, K = 64, N = 24;
  const auto a = pattern(std::size_t(M * K), 53, 0, 255);
  const auto w = pattern(std::size_t(K * N), 29, -128, 127);
  std::vector<double> ws(static_cast<std::size_t>(N)), bias(static_cast<std::size_t>(N));
  for (std::size_t j = 0; j < ws.size(); ++j) ws[j] = 0.001 * double(j + 1);
  for (std::size_t j = 0; j < bias.size(); ++j) bias[j] = double(int(j * 7 % 11) - 5) / 4;
  auto qdq = [&](bool requantize) {
    ModelBuilder m;
    m.input("a", UINT8, {M, K}).initializer("as", FLOAT, {}, {0.02});
    m.initializer("az", UINT8, {}, {128}).initializer("w", INT8, {K, N}, w);
    m.initializer("ws", FLOAT, {N}, ws).initializer("b", FLOAT, {N}, bias);
    m.initializer("ys", FLOAT, {}, {0.05}).initializer("yz", UINT8, {}, {3});
    m.node("DequantizeLinear", {"a", "as", "az"}, {"da"});
    m.node("DequantizeLinear", {"w", "ws"}, {"dw"}, {{"axis", 1}});
    m.node("MatMul", {"da", "dw"}, {"p"}).node("Add", {"p", "b"}, {"pb"});
    m.node("Relu", {"pb"}, {"r"});
    if (requantize) {
      m.node("QuantizeLinear", {"r", "ys", "yz"}, {"y"}).output("y", UINT8, {M, N});
    } else {
      m.output("r", FLOAT, {M, N});
    }
    return ox::load_from_bytes(m.bytes());
  };
  // the reference: the same ops with the weights dequantized in double
  snippets::ir::Graph<Traits> ref;
  const auto x = ref.parameter(u8, {M, K});
  const auto da = ref.multiply(
      ref.subtract(ref.convert(x, ElementType::f32), ref.scalar(ElementType::f32, 128)),
      ref.scalar(ElementType::f32, 0.02));
  std::vector<double> dw(w.size());
  for (std::size_t i = 0; i < w.size(); ++i) dw[i] = w[i] * double(float(ws[i % std::size_t(N)]));
  const auto r = ref.relu(ref.add(ref.matmul(da, ref.constant(ElementType::f32, {K, N}, dw)),
                                  ref.constant(ElementType::f32, {N}, bias)));
  ref.result(r);
  ref.result(
      ref.quantize(r, ref.scalar(ElementType::f32, 0.05), ref.scalar(ElementType::f32, 3), u8));
  const std::vector<Tensor> in{Tensor::from_values(u8, {M, K}, a)};
  const auto want = snippets::reference::evaluate(ref, in);
  for (const bool requantize : {false, true}) {
    INFO((requantize ? "QuantizeLinear after" : "f32 output"));
    const auto model = qdq(requantize);
    CHECK(products(model.graph) == "i32 ");
    run_close(model, in, {want[requantize ? 1 : 0]});
  }
}

TEST_CASE("onnx QLinearMatMul: known weights and scales are the int8 product, requantized on "
          "its accumulators") {
  const std::int64_t M = 9, K = 37, N = 20;
  const auto a = pattern(std::size_t(M * K), 53, 0, 255);
  const auto w = pattern(std::size_t(K * N), 29, -128, 127);
  ModelBuilder m(10);
  m.input("a", UINT8, {M, K}).initializer("as", FLOAT, {}, {0.0066});
  m.initializer("az", UINT8, {}, {113}).initializer("w", INT8, {K, N}, w);
  m.initializer("ws", FLOAT, {}, {0.00705}).initializer("wz", INT8, {}, {0});
  m.initializer("ys", FLOAT, {}, {0.0107}).initializer("yz", UINT8, {}, {118});
  m.node("QLinearMatMul", {"a", "as", "az", "w", "ws", "wz", "ys", "yz"}, {"y"});
  m.output("y", UINT8, {M, N});
  const auto model = ox::load_from_bytes(m.bytes());
  CHECK(products(model.graph) == "i32 ");
  // ONNX's definition, in double: saturate(round((a - az)(w - wz) as ws / ys) + yz)
  std::vector<double> want(std::size_t(M * N));
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j) {
      double sum = 0;
      for (std::int64_t k = 0; k < K; ++k)
        sum += (a[std::size_t(i * K + k)] - 113) * w[std::size_t(k * N + j)];
      const double y = std::nearbyint(sum * double(0.0066f) * double(0.00705f) / double(0.0107f));
      want[std::size_t(i * N + j)] = std::clamp(y + 118, 0.0, 255.0);
    }
  run_close(model, {Tensor::from_values(u8, {M, K}, a)}, {Tensor::from_values(u8, {M, N}, want)});
}

TEST_CASE("onnx QLinearMatMul: ONNX's vector with run-time scales and zero points (f32 path)") {
  ModelBuilder m(10);
  m.input("a", UINT8, {2, 4}).input("as", FLOAT, {}).input("az", UINT8, {});
  m.input("b", UINT8, {4, 3}).input("bs", FLOAT, {}).input("bz", UINT8, {});
  m.input("ys", FLOAT, {}).input("yz", UINT8, {});
  m.node("QLinearMatMul", {"a", "as", "az", "b", "bs", "bz", "ys", "yz"}, {"y"});
  m.output("y", UINT8, {2, 3});
  const auto model = ox::load_from_bytes(m.bytes());
  CHECK(products(model.graph) == "f32 ");
  auto scalar = [](ElementType t, double v) { return Tensor::from_values(t, {}, {v}); };
  const std::vector<Tensor> in{
      Tensor::from_values(u8, {2, 4}, {208, 236, 0, 238, 3, 214, 255, 29}),
      scalar(ElementType::f32, 0.0066),
      scalar(u8, 113),
      Tensor::from_values(u8, {4, 3}, {152, 51, 244, 60, 26, 255, 0, 127, 246, 127, 254, 247}),
      scalar(ElementType::f32, 0.00705),
      scalar(u8, 114),
      scalar(ElementType::f32, 0.0107),
      scalar(u8, 118)};
  const std::vector<double> want{168, 115, 255, 1, 66, 151};
  const auto ref = snippets::reference::evaluate(model.graph, in);
  const auto got = snippets::Program<>(model.graph).run(in);
  for (std::size_t i = 0; i < want.size(); ++i) {
    CHECK(ref.at(0).at(i) == want[i]);
    CHECK(got.at(0).at(i) == want[i]);
  }
}

TEST_CASE("onnx QLinearMatMul errors: a zero or infinite known scale, operands other than bytes") {
  auto load = [](double a_scale, int a_type) {
    ModelBuilder m(10);
    m.input("a", a_type, {2, 4}).initializer("as", FLOAT, {}, {a_scale});
    m.initializer("az", UINT8, {}, {0}).initializer("b", INT8, {4, 3}, std::vector<double>(12, 1));
    m.initializer("bs", FLOAT, {}, {0.5}).initializer("bz", INT8, {}, {0});
    m.initializer("ys", FLOAT, {}, {0.5}).initializer("yz", UINT8, {}, {0});
    m.node("QLinearMatMul", {"a", "as", "az", "b", "bs", "bz", "ys", "yz"}, {"y"});
    m.output("y", UINT8, {2, 3});
    return ox::load_from_bytes(m.bytes());
  };
  auto id = [](auto&& f) {
    try {
      f();
    } catch (const snippets::Error& e) {
      return e.id();
    }
    return std::string("no error");
  };
  CHECK(id([&] { load(0.25, UINT8); }) == "no error");
  CHECK(id([&] { load(0.0, UINT8); }) == "snippets.onnx.bad_quantization");
  CHECK(id([&] { load(INFINITY, UINT8); }) == "snippets.onnx.bad_quantization");
  CHECK(id([&] { load(0.25, FLOAT); }) == "snippets.onnx.unsupported_type");
}
