// SPDX-License-Identifier: Apache-2.0
// Tests of frontend/onnx.hpp and its op converters: models built with the protobuf API are
// serialized, imported, checked as graphs and run (JIT Program against the reference).
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
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
using snippets::reference::Tensor;
using Traits = snippets::x64::Traits;

Tensor ramp(snippets::Shape shape, double start, double step) {
  std::vector<double> v(static_cast<std::size_t>(shape.element_count()));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = start + step * double(i);
  return Tensor::from_values(ElementType::f32, std::move(shape), v);
}

/// Runs `g` as a JIT Program and with the reference interpreter; returns the largest
/// difference over all outputs.
double jit_vs_reference(const snippets::ir::Graph<Traits>& g, const std::vector<Tensor>& in) {
  const snippets::Program<> program(g);
  const auto got = program.run(in);
  const auto want = snippets::reference::evaluate(g, in);
  REQUIRE(got.size() == want.size());
  double err = 0;
  for (std::size_t k = 0; k < got.size(); ++k)
    for (std::size_t i = 0; i < got[k].size(); ++i)
      err = std::max(err, std::fabs(got[k].at(i) - want[k].at(i)));
  return err;
}

int count_ops(const snippets::ir::Graph<Traits>& g, std::string_view op) {
  int n = 0;
  for (snippets::ir::NodeId id = 0; id < g.size(); ++id) n += g.node(id).op_name() == op;
  return n;
}

} // namespace

TEST_CASE("onnx: elementwise ops with NUMPY broadcasting import and run as one kernel") {
  ModelBuilder m;
  m.input("x", FLOAT, {4, 8}).input("b", FLOAT, {8});
  m.node("Add", {"x", "b"}, {"s"}).node("Relu", {"s"}, {"r"}).node("Sigmoid", {"r"}, {"y"});
  m.output("y", FLOAT, {4, 8});
  const auto model = ox::load_from_bytes(m.bytes());
  CHECK(model.inputs == std::vector<std::string>{"x", "b"});
  CHECK(model.outputs == std::vector<std::string>{"y"});
  CHECK(model.opset == 17);
  CHECK(model.opaque.empty());
  CHECK(count_ops(model.graph, "Add") == 1);
  CHECK(count_ops(model.graph, "Relu") == 1);
  CHECK(count_ops(model.graph, "Sigmoid") == 1);

  const snippets::Program<> program(model.graph);
  int kernels = 0;
  for (const auto& s : program.steps()) kernels += s.kind == snippets::Program<>::StepKind::kernel;
  CHECK(kernels == 1); // the whole chain is one Subgraph
  CHECK(jit_vs_reference(model.graph, {ramp({4, 8}, -3, 0.2), ramp({8}, -1, 0.25)}) < 1e-6);
}

TEST_CASE("onnx: a model with a symbolic batch compiles once and runs every batch size") {
  ModelBuilder m;
  m.input("x", FLOAT, {-1, 6});
  std::vector<double> w(6 * 5);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = std::sin(double(i)) * 0.5;
  m.initializer("w", FLOAT, {6, 5}, w).initializer("b", FLOAT, {5}, {0.5, -0.25, 0, 1, -1});
  m.node("MatMul", {"x", "w"}, {"p"}).node("Add", {"p", "b"}, {"s"}).node("Relu", {"s"}, {"r"});
  m.node("Softmax", {"r"}, {"y"}, {{"axis", std::int64_t(-1)}});
  m.output("y", FLOAT, {-1, 5});
  const auto model = ox::load_from_bytes(m.bytes());
  const snippets::Program<> program(model.graph);
  CHECK(program.is_dynamic());
  for (const auto& s : program.steps()) CHECK(s.kind != snippets::Program<>::StepKind::reference);
  for (const snippets::Dim batch : {1, 4, 13}) {
    INFO("batch " << batch);
    const std::vector<Tensor> in = {ramp({batch, 6}, -2, 0.1)};
    const auto got = program.run(in);
    const auto want = snippets::reference::evaluate(model.graph, in);
    REQUIRE(got[0].shape() == (snippets::Shape{batch, 5}));
    for (std::size_t i = 0; i < got[0].size(); ++i)
      CHECK(got[0].at(i) == doctest::Approx(want[0].at(i)).epsilon(1e-5));
  }
}

TEST_CASE("onnx: initializers become constants and Gemm honours alpha, beta and transB") {
  ModelBuilder m;
  m.input("a", FLOAT, {2, 3});
  m.initializer("w", FLOAT, {4, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  m.initializer("c", FLOAT, {4}, {1, -1, 2, -2});
  m.node("Gemm", {"a", "w", "c"}, {"y"}, {{"alpha", 0.5}, {"beta", 2.0}, {"transB", 1}});
  m.output("y", FLOAT, {2, 4});
  const auto model = ox::load_from_bytes(m.bytes());
  CHECK(model.inputs == std::vector<std::string>{"a"});
  CHECK(count_ops(model.graph, "Constant") == 2);
  CHECK(count_ops(model.graph, "MatMul") == 1);
  CHECK(count_ops(model.graph, "Multiply") == 1); // alpha; the known C is scaled while loading
  const snippets::Program<> program(model.graph);
  for (const auto& s : program.steps()) CHECK(s.kind == snippets::Program<>::StepKind::kernel);
  const Tensor a = Tensor::from_values(ElementType::f32, {2, 3}, {1, 0, -1, 2, 1, 0});
  const auto y = snippets::reference::evaluate(model.graph, {a});
  // row 0: a0 . w_j = w_j0 - w_j2 = -2 for every j; 0.5 * -2 + 2 * c_j
  CHECK(y[0].at(0) == doctest::Approx(-1 + 2));
  CHECK(y[0].at(1) == doctest::Approx(-1 - 2));
  // row 1: 2 w_j0 + w_j1 = 4, 13, 22, 31
  CHECK(y[0].at(4) == doctest::Approx(0.5 * 4 + 2));
  CHECK(y[0].at(7) == doctest::Approx(0.5 * 31 - 4));
  CHECK(jit_vs_reference(model.graph, {a}) < 1e-5);
}

TEST_CASE("onnx: an expanded softmax chain fuses its elementwise ops and matches Softmax") {
  ModelBuilder m;
  m.input("x", FLOAT, {3, 16});
  m.node("ReduceMax", {"x"}, {"m"}, {{"axes", std::vector<std::int64_t>{1}}, {"keepdims", 1}});
  m.node("Sub", {"x", "m"}, {"d"}).node("Exp", {"d"}, {"e"});
  m.initializer("axes", INT64, {1}, {1});
  m.node("ReduceSum", {"e", "axes"}, {"s"}, {{"keepdims", 1}});
  m.node("Div", {"e", "s"}, {"y"});
  m.node("Softmax", {"x"}, {"z"}, {{"axis", 1}});
  m.output("y", FLOAT, {3, 16}).output("z", FLOAT, {3, 16});
  const auto model = ox::load_from_bytes(m.bytes());
  const snippets::Program<> program(model.graph);
  std::size_t biggest = 0;
  for (const auto& s : program.steps())
    if (const auto* sg =
            std::get_if<snippets::ir::Subgraph<Traits>>(&program.graph().node(s.node).op))
      biggest = std::max(biggest, sg->absorbed.size());
  CHECK(biggest >= 2); // Sub + Exp; the reductions between them run as their own steps
  const auto out = program.run(std::vector{ramp({3, 16}, -4, 0.3)});
  for (std::size_t i = 0; i < out[0].size(); ++i)
    CHECK(out[0].at(i) == doctest::Approx(out[1].at(i)).epsilon(1e-5));
}

TEST_CASE("onnx: shape arithmetic is computed while loading") {
  // y = Reshape(x, Concat(Shape(x)[0:1], [-1])): the shape chain folds to a constant [2, 12]
  ModelBuilder m;
  m.input("x", FLOAT, {2, 3, 4});
  m.node("Shape", {"x"}, {"shape"});
  m.initializer("starts", INT64, {1}, {0}).initializer("ends", INT64, {1}, {1});
  m.node("Slice", {"shape", "starts", "ends"}, {"batch"});
  m.node("Constant", {}, {"rest"}, {{"value", tensor(INT64, {1}, {-1})}});
  m.node("Concat", {"batch", "rest"}, {"target"}, {{"axis", 0}});
  m.node("Reshape", {"x", "target"}, {"y"});
  m.output("y", FLOAT, {2, 12});
  const auto model = ox::load_from_bytes(m.bytes());
  const auto& g = model.graph;
  CHECK(g.type(g.node(g.results()[0]).inputs[0]).shape == snippets::Shape{2, 12});
  CHECK(count_ops(g, "Reshape") == 1);
  CHECK(g.size() == 3); // Parameter, Reshape, Result
}

TEST_CASE("onnx: LoadOptions fix symbolic dims and fold graph inputs used as shapes") {
  ModelBuilder m;
  m.input("x", FLOAT, {-1, 6}).input("shape", INT64, {2});
  m.node("Reshape", {"x", "shape"}, {"r"}).node("Neg", {"r"}, {"y"});
  m.output("y", FLOAT, {-1, -1});
  ox::LoadOptions opt;
  opt.input_shapes["x"] = {4, 6};
  opt.input_values["shape"] = ox::HostTensor{INT64, {2}, {3, 8}};
  const auto model = ox::load_from_bytes(m.bytes(), opt);
  CHECK(model.inputs == std::vector<std::string>{"x"});
  CHECK(model.folded_inputs == std::vector<std::string>{"shape"});
  const auto& g = model.graph;
  CHECK(g.type(g.node(g.results()[0]).inputs[0]).shape == snippets::Shape{3, 8});

  SUBCASE("without the shape the Reshape of a symbolic dim is an error") {
    opt.input_shapes.clear();
    CHECK(error_id([&] { ox::load_from_bytes(m.bytes(), opt); }) == "snippets.onnx.dynamic_shape");
  }
  SUBCASE("without the value the Reshape shape is not known") {
    opt.input_values.clear();
    CHECK(error_id([&] { ox::load_from_bytes(m.bytes(), opt); }) ==
          "snippets.onnx.unsupported_type"); // an int64 input cannot be a Parameter
  }
}

TEST_CASE("onnx: ops outside the op set become Opaque nodes typed by ONNX shape inference") {
  ModelBuilder m;
  m.input("x", FLOAT, {1, 2, 5, 5});
  m.initializer("w", FLOAT, {3, 2, 3, 3}, std::vector<double>(54, 0.1));
  m.node("Conv", {"x", "w"}, {"c"}).node("Relu", {"c"}, {"r"}).node("Exp", {"r"}, {"y"});
  m.output("y", FLOAT, {1, 3, 3, 3});
  const auto model = ox::load_from_bytes(m.bytes());
  REQUIRE(model.opaque.size() == 1);
  CHECK(model.opaque[0].op_type == "Conv");
  CHECK(count_ops(model.graph, "Opaque") == 1);
  const auto tokenized = snippets::passes::tokenize(model.graph);
  CHECK(count_ops(tokenized, "Subgraph") == 1); // Relu + Exp fused behind the foreign op
  CHECK(ox::unsupported_ops(ox::parse_model(m.bytes())) == std::vector<std::string>{"Conv"});

  ox::LoadOptions strict;
  strict.allow_opaque = false;
  CHECK(error_id([&] { ox::load_from_bytes(m.bytes(), strict); }) ==
        "snippets.onnx.unsupported_op");
}

TEST_CASE("onnx: decomposed activations match their ONNX definitions") {
  ModelBuilder m;
  m.input("x", FLOAT, {16});
  m.node("HardSigmoid", {"x"}, {"hs"}, {{"alpha", 0.25}, {"beta", 0.5}});
  m.node("Selu", {"x"}, {"se"});
  m.node("Celu", {"x"}, {"ce"}, {{"alpha", 2.0}});
  m.node("Softsign", {"x"}, {"ss"});
  m.node("Sign", {"x"}, {"sg"});
  m.node("ThresholdedRelu", {"x"}, {"tr"}, {{"alpha", 0.5}});
  m.node("Reciprocal", {"x"}, {"rc"});
  for (const char* o : {"hs", "se", "ce", "ss", "sg", "tr", "rc"}) m.output(o, FLOAT, {16});
  const auto model = ox::load_from_bytes(m.bytes());
  const Tensor x = ramp({16}, -3.75, 0.5);
  const auto y = snippets::reference::evaluate(model.graph, {x});
  for (std::size_t i = 0; i < 16; ++i) {
    const double v = x.at(i);
    CHECK(y[0].at(i) == doctest::Approx(std::clamp(0.25 * v + 0.5, 0.0, 1.0)));
    CHECK(y[1].at(i) ==
          doctest::Approx(v > 0 ? 1.0507009873554805 * v
                                : 1.0507009873554805 * 1.6732632423543772 * (std::exp(v) - 1)));
    CHECK(y[2].at(i) == doctest::Approx(v > 0 ? v : 2 * (std::exp(v / 2) - 1)));
    CHECK(y[3].at(i) == doctest::Approx(v / (1 + std::fabs(v))));
    CHECK(y[4].at(i) == (v > 0 ? 1 : v < 0 ? -1 : 0));
    CHECK(y[5].at(i) == (v > 0.5 ? v : 0));
    CHECK(y[6].at(i) == doctest::Approx(1 / v));
  }
  CHECK(jit_vs_reference(model.graph, {x}) < 1e-5);
}

TEST_CASE("onnx: PRelu's slope [C] is per channel before opset 7, NUMPY-broadcast since") {
  // x [2,3,4]: value i is -1 - i, so every element takes its slope
  const Tensor x = ramp({2, 3, 4}, -1, -1);
  const std::vector<double> channel_slopes{0.5, 0.25, 2}; // one per channel (axis 1)
  const std::vector<double> last_axis_slopes{1, 2, 3, 4}; // one per element of the last axis
  auto check = [&](const ox::Model<>& model, const std::vector<Tensor>& in, bool per_channel) {
    CHECK(count_ops(model.graph, "Reshape") == 0);
    const snippets::Program<> program(model.graph);
    for (const auto& s : program.steps()) CHECK(s.kind == snippets::Program<>::StepKind::kernel);
    const auto y = program.run(in);
    const auto want = snippets::reference::evaluate(model.graph, in);
    for (std::size_t i = 0; i < 24; ++i) {
      const double slope = per_channel ? channel_slopes[i / 4 % 3] : last_axis_slopes[i % 4];
      CHECK(want[0].at(i) == doctest::Approx(slope * x.at(i)));
      CHECK(y[0].at(i) == doctest::Approx(slope * x.at(i)));
    }
  };
  SUBCASE("opset 6, a slope of C values: per channel (pytorch's PReLU(num_parameters=C))") {
    ModelBuilder m(6);
    m.input("x", FLOAT, {2, 3, 4}).initializer("s", FLOAT, {3}, channel_slopes);
    m.node("PRelu", {"x", "s"}, {"y"}).output("y", FLOAT, {2, 3, 4});
    check(ox::load_from_bytes(m.bytes()), {x}, true);
  }
  SUBCASE("opset 1, a run-time slope of C values and the legacy consumed_inputs attribute") {
    ModelBuilder m(1);
    m.input("x", FLOAT, {2, 3, 4}).input("s", FLOAT, {3});
    m.node("PRelu", {"x", "s"}, {"y"}, {{"consumed_inputs", std::vector<std::int64_t>{0, 0}}});
    m.output("y", FLOAT, {2, 3, 4});
    const auto model = ox::load_from_bytes(m.bytes());
    CHECK(count_ops(model.graph, "Reshape") == 1); // [3] -> [1,3,1], outside the kernel
    const Tensor s = Tensor::from_values(ElementType::f32, {3}, channel_slopes);
    const auto y = snippets::Program<>(model.graph).run(std::vector<Tensor>{x, s});
    for (std::size_t i = 0; i < 24; ++i)
      CHECK(y[0].at(i) == doctest::Approx(channel_slopes[i / 4 % 3] * x.at(i)));
  }
  SUBCASE("opset 16, a slope of rank 1: NUMPY broadcasting, along the last axis") {
    ModelBuilder m(16);
    m.input("x", FLOAT, {2, 3, 4}).initializer("s", FLOAT, {4}, last_axis_slopes);
    m.node("PRelu", {"x", "s"}, {"y"}).output("y", FLOAT, {2, 3, 4});
    check(ox::load_from_bytes(m.bytes()), {x}, false);
  }
  SUBCASE("opset 6, a slope whose size is not x's channel count is refused") {
    ModelBuilder m(6);
    m.input("x", FLOAT, {2, 3, 4}).initializer("s", FLOAT, {4}, last_axis_slopes);
    m.node("PRelu", {"x", "s"}, {"y"}).output("y", FLOAT, {2, 3, 4});
    CHECK(error_id([&] { ox::load_from_bytes(m.bytes()); }) == "snippets.shape.not_broadcastable");
  }
}

namespace {
/// (x - mean) / sqrt(var + eps) * scale[i % scale.size()] + bias[...] over each block of `n`
/// consecutive values of x, in double: the definition, independent of the importer.
std::vector<double> normalized_blocks(const Tensor& x, std::size_t n, double eps,
                                      const std::vector<double>& scale,
                                      const std::vector<double>& bias, std::size_t per_value) {
  std::vector<double> y(x.size());
  for (std::size_t b = 0; b < x.size() / n; ++b) {
    double mean = 0, var = 0;
    for (std::size_t i = 0; i < n; ++i) mean += x.at(b * n + i) / double(n);
    for (std::size_t i = 0; i < n; ++i) var += std::pow(x.at(b * n + i) - mean, 2) / double(n);
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t k = (b * n + i) / per_value % scale.size();
      y[b * n + i] = (x.at(b * n + i) - mean) / std::sqrt(var + eps) * scale[k] + bias[k];
    }
  }
  return y;
}
} // namespace

TEST_CASE("onnx: LayerNormalization and InstanceNormalization fuse into one kernel each and "
          "match their definitions") {
  const Tensor x = ramp({2, 3, 8}, -1.7, 0.37);
  auto check = [&](const ox::Model<>& model, const std::vector<double>& want, std::size_t kernels) {
    const snippets::Program<> program(model.graph);
    std::size_t n = 0;
    for (const auto& s : program.steps()) n += s.kind == snippets::Program<>::StepKind::kernel;
    CHECK(n == kernels);
    const auto y = program.run(std::vector{x});
    for (std::size_t i = 0; i < want.size(); ++i)
      CHECK(y[0].at(i) == doctest::Approx(want[i]).epsilon(1e-5));
    return y;
  };
  const std::vector<double> scale8{1, 2, 0.5, -1, 1.5, 0.25, 3, -0.5},
      bias8{0, 1, -1, 2, 0.5, -2, 0, 1};
  SUBCASE("LayerNormalization over the last axis, Scale and B known: one kernel") {
    ModelBuilder m;
    m.input("x", FLOAT, {2, 3, 8}).initializer("s", FLOAT, {8}, scale8);
    m.initializer("b", FLOAT, {8}, bias8);
    m.node("LayerNormalization", {"x", "s", "b"}, {"y"}, {{"epsilon", 1e-3}});
    m.output("y", FLOAT, {2, 3, 8});
    const auto model = ox::load_from_bytes(m.bytes());
    CHECK(count_ops(model.graph, "Reshape") == 0);
    check(model, normalized_blocks(x, 8, 1e-3, scale8, bias8, 1), 1);
  }
  SUBCASE("LayerNormalization's Mean and InvStdDev outputs") {
    // a kernel's outputs span its domain: the statistics of shape [2,3,1] leave the kernel of
    // the [2,3,8] output and come from kernels of their own
    ModelBuilder m;
    m.input("x", FLOAT, {2, 3, 8}).initializer("s", FLOAT, {8}, scale8);
    m.node("LayerNormalization", {"x", "s"}, {"y", "mean", "inv"});
    m.output("y", FLOAT, {2, 3, 8})
        .output("mean", FLOAT, {2, 3, 1})
        .output("inv", FLOAT, {2, 3, 1});
    const auto y = check(ox::load_from_bytes(m.bytes()),
                         normalized_blocks(x, 8, 1e-5, scale8, std::vector<double>(8, 0), 1), 4);
    for (std::size_t r = 0; r < 6; ++r) { // the statistics of row r
      double mean = 0, var = 0;
      for (std::size_t i = 0; i < 8; ++i) mean += x.at(r * 8 + i) / 8;
      for (std::size_t i = 0; i < 8; ++i) var += std::pow(x.at(r * 8 + i) - mean, 2) / 8;
      CHECK(y[1].at(r) == doctest::Approx(mean).epsilon(1e-5));
      CHECK(y[2].at(r) == doctest::Approx(1 / std::sqrt(var + 1e-5)).epsilon(1e-5));
    }
  }
  SUBCASE("LayerNormalization over the last two axes (axis 1), a run-time Scale of [3,8]") {
    std::vector<double> scale24, bias24(24, 0.5);
    for (int i = 0; i < 24; ++i) scale24.push_back(0.5 + 0.125 * i);
    ModelBuilder m;
    m.input("x", FLOAT, {2, 3, 8}).input("s", FLOAT, {3, 8});
    m.initializer("b", FLOAT, {3, 8}, bias24);
    m.node("LayerNormalization", {"x", "s", "b"}, {"y"}, {{"axis", 1}});
    m.output("y", FLOAT, {2, 3, 8});
    const auto model = ox::load_from_bytes(m.bytes());
    CHECK(count_ops(model.graph, "Reshape") == 0); // the kernel's row: both axes
    const snippets::Program<> program(model.graph);
    std::size_t kernels = 0;
    for (const auto& s : program.steps())
      kernels += s.kind == snippets::Program<>::StepKind::kernel;
    CHECK(kernels == 1);
    const auto y =
        program.run(std::vector{x, Tensor::from_values(ElementType::f32, {3, 8}, scale24)});
    const auto want = normalized_blocks(x, 24, 1e-5, scale24, bias24, 1);
    for (std::size_t i = 0; i < want.size(); ++i)
      CHECK(y[0].at(i) == doctest::Approx(want[i]).epsilon(1e-5));
  }
  SUBCASE("InstanceNormalization of [N=2, C=3, 8]: per batch and channel") {
    const std::vector<double> scale3{1, -2, 0.5}, bias3{0.25, 0, -1};
    ModelBuilder m;
    m.input("x", FLOAT, {2, 3, 8}).initializer("s", FLOAT, {3}, scale3);
    m.initializer("b", FLOAT, {3}, bias3);
    m.node("InstanceNormalization", {"x", "s", "b"}, {"y"}, {{"epsilon", 1e-4}});
    m.output("y", FLOAT, {2, 3, 8});
    const auto model = ox::load_from_bytes(m.bytes());
    CHECK(count_ops(model.graph, "Reshape") == 0);
    check(model, normalized_blocks(x, 8, 1e-4, scale3, bias3, 8), 1);
  }
  SUBCASE("InstanceNormalization of [N=2, C=3, 2, 4]: over both spatial axes, one kernel") {
    const std::vector<double> scale3{0.5, 1, -1.5}, bias3{1, -0.25, 0};
    ModelBuilder m;
    m.input("x4", FLOAT, {2, 3, 2, 4}).initializer("s", FLOAT, {3}, scale3);
    m.initializer("b", FLOAT, {3}, bias3);
    m.node("InstanceNormalization", {"x4", "s", "b"}, {"y"});
    m.output("y", FLOAT, {2, 3, 2, 4});
    const auto model = ox::load_from_bytes(m.bytes());
    CHECK(count_ops(model.graph, "Reshape") == 0);
    const snippets::Program<> program(model.graph);
    CHECK(program.steps().size() == 1);
    CHECK(program.steps()[0].kind == snippets::Program<>::StepKind::kernel);
    const Tensor x4 = Tensor::from_values(ElementType::f32, {2, 3, 2, 4}, [&] {
      std::vector<double> v;
      for (std::size_t i = 0; i < x.size(); ++i) v.push_back(x.at(i));
      return v;
    }());
    const auto y = program.run(std::vector{x4});
    const auto want = normalized_blocks(x, 8, 1e-5, scale3, bias3, 8);
    for (std::size_t i = 0; i < want.size(); ++i)
      CHECK(y[0].at(i) == doctest::Approx(want[i]).epsilon(1e-5));
  }
  SUBCASE("stash_type other than float32 is refused") {
    ModelBuilder m;
    m.input("x", FLOAT, {2, 8}).initializer("s", FLOAT, {8}, scale8);
    m.node("LayerNormalization", {"x", "s"}, {"y"}, {{"stash_type", 11}});
    m.output("y", FLOAT, {2, 8});
    CHECK(error_id([&] { (void)ox::load_from_bytes(m.bytes()); }) ==
          "snippets.onnx.unsupported_attribute");
  }
}

TEST_CASE("onnx: PyTorch's GroupNorm of Reshapes is one kernel") {
  // its export up to opset 17 (GroupNormalization is opset 18, beyond the ONNX 1.12 library the
  // importer reads with): Reshape, InstanceNormalization, Reshape back, Mul, Add; x [N=2, C=4,
  // 3, 2] in 2 groups of 2 channels, blocks of 12 values
  const Tensor x = ramp({2, 4, 3, 2}, -2.3, 0.21);
  const std::vector<double> scale4{1, 2, 0.5, -1}, bias4{0, 1, -1, 2};
  ModelBuilder m;
  m.input("x", FLOAT, {2, 4, 3, 2});
  m.initializer("groups", INT64, {3}, {2, 2, -1}).initializer("back", INT64, {4}, {2, 4, 3, 2});
  m.initializer("ones", FLOAT, {2}, {1, 1}).initializer("zeros", FLOAT, {2}, {0, 0});
  m.initializer("s", FLOAT, {4, 1, 1}, scale4).initializer("b", FLOAT, {4, 1, 1}, bias4);
  m.node("Reshape", {"x", "groups"}, {"g"});
  m.node("InstanceNormalization", {"g", "ones", "zeros"}, {"n"});
  m.node("Reshape", {"n", "back"}, {"r"});
  m.node("Mul", {"r", "s"}, {"scaled"}).node("Add", {"scaled", "b"}, {"y"});
  m.output("y", FLOAT, {2, 4, 3, 2});
  const snippets::Program<> program(ox::load_from_bytes(m.bytes()).graph);
  std::size_t kernels = 0;
  for (const auto& s : program.steps()) {
    CHECK(s.kind != snippets::Program<>::StepKind::reference);
    kernels += s.kind == snippets::Program<>::StepKind::kernel;
  }
  CHECK(kernels == 1);
  const auto y = program.run(std::vector{x});
  const auto want = normalized_blocks(x, 12, 1e-5, scale4, bias4, 6);
  for (std::size_t i = 0; i < want.size(); ++i)
    CHECK(y[0].at(i) == doctest::Approx(want[i]).epsilon(1e-5));
}

TEST_CASE("onnx: Split at every opset form becomes one Slice per part") {
  struct Case {
    std::int64_t opset;
    std::int64_t axis;
    std::vector<std::int64_t> split; // empty: equal parts
    bool split_as_input;
    std::vector<std::int64_t> part_extents;
  };
  const std::vector<Case> cases = {
      {11, 1, {2, 4}, false, {2, 4}}, // `split` attribute
      {11, -1, {}, false, {3, 3}},    // equal parts
      {13, 1, {1, 5}, true, {1, 5}},  // `split` input
      {13, 0, {}, false, {2, 2}},     // equal parts of the outer axis, default axis 0 too
      {17, -1, {0, 6}, true, {0, 6}}, // an empty part
  };
  for (const Case& k : cases) {
    INFO("opset " << k.opset << ", axis " << k.axis);
    ModelBuilder m(k.opset);
    m.input("x", FLOAT, {4, 6});
    std::vector<std::string> in{"x"};
    std::vector<Attr> attrs{{"axis", k.axis}};
    if (!k.split.empty() && k.split_as_input) {
      m.initializer("split", INT64, {std::int64_t(k.split.size())},
                    std::vector<double>(k.split.begin(), k.split.end()));
      in.push_back("split");
    } else if (!k.split.empty()) {
      attrs.emplace_back("split", k.split);
    }
    m.node("Split", in, {"a", "b"}, attrs);
    m.node("Neg", {"b"}, {"nb"});
    const bool outer = k.axis == 0;
    const std::int64_t ea = k.part_extents[0], eb = k.part_extents[1];
    m.output("a", FLOAT,
             outer ? std::vector<std::int64_t>{ea, 6} : std::vector<std::int64_t>{4, ea});
    m.output("nb", FLOAT,
             outer ? std::vector<std::int64_t>{eb, 6} : std::vector<std::int64_t>{4, eb});
    const auto model = ox::load_from_bytes(m.bytes());
    CHECK(model.opaque.empty());
    CHECK(count_ops(model.graph, "Slice") == 2);
    const Tensor x = ramp({4, 6}, -2, 0.5);
    const auto out = snippets::reference::evaluate(model.graph, {x});
    REQUIRE(out.size() == 2);
    const std::int64_t cols = outer ? 6 : ea;
    for (std::size_t i = 0; i < out[0].size(); ++i) { // a: x's first part
      const auto r = std::int64_t(i) / cols, col = std::int64_t(i) % cols;
      CHECK(out[0].at(i) == x.at(std::size_t(r * 6 + col)));
    }
    const std::int64_t bcols = outer ? 6 : eb;
    for (std::size_t i = 0; i < out[1].size(); ++i) { // -b: the second part, negated
      const auto r = std::int64_t(i) / bcols, col = std::int64_t(i) % bcols;
      const auto src = outer ? (r + ea) * 6 + col : r * 6 + ea + col;
      CHECK(out[1].at(i) == -x.at(std::size_t(src)));
    }
    CHECK(jit_vs_reference(model.graph, {x}) == 0);
  }
}

TEST_CASE(
    "onnx: Split checks its sizes; Slice of a run-time tensor with steps of 1 becomes Slices") {
  { // sizes that do not add up to the axis
    ModelBuilder m(11);
    m.input("x", FLOAT, {4, 6});
    m.node("Split", {"x"}, {"a", "b"}, {{"axis", 1}, {"split", std::vector<std::int64_t>{2, 2}}});
    m.output("a", FLOAT, {4, 2}).output("b", FLOAT, {4, 2});
    CHECK(error_id([&] { ox::load_from_bytes(m.bytes()); }) ==
          "snippets.onnx.unsupported_attribute");
  }
  { // x[1:3, -4:] (ends past the axis clamp), then a step of 2, which stays Opaque
    ModelBuilder m;
    m.input("x", FLOAT, {4, 6});
    m.initializer("starts", INT64, {2}, {1, -4}).initializer("ends", INT64, {2}, {3, 100});
    m.initializer("axes", INT64, {2}, {0, 1}).initializer("steps", INT64, {1}, {2});
    m.initializer("axes1", INT64, {1}, {1});
    m.initializer("s1", INT64, {1}, {0}).initializer("e1", INT64, {1}, {4});
    m.node("Slice", {"x", "starts", "ends", "axes"}, {"y"});
    m.node("Slice", {"x", "s1", "e1", "axes1", "steps"}, {"z"});
    m.output("y", FLOAT, {2, 4}).output("z", FLOAT, {4, 2});
    const auto model = ox::load_from_bytes(m.bytes());
    CHECK(count_ops(model.graph, "Slice") == 2);
    REQUIRE(model.opaque.size() == 1);
    CHECK(model.opaque[0].op_type == "Slice");
    const Tensor x = ramp({4, 6}, 0, 1);
    snippets::reference::Options ro;
    ro.opaque["Slice"] = [](std::span<const snippets::reference::Values> in) {
      snippets::reference::Values z{ElementType::f32, {4, 2}, {}};
      for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 4; c += 2) z.v.push_back(in[0].v[std::size_t(r * 6 + c)]);
      return std::vector{z};
    };
    const auto out = snippets::reference::evaluate(model.graph, {x}, ro);
    CHECK(out[0].values().v == std::vector<double>{8, 9, 10, 11, 14, 15, 16, 17});
  }
}

TEST_CASE("onnx: boolean inputs and outputs run in kernels: Where, And, Equal on booleans") {
  ModelBuilder m;
  m.input("x", FLOAT, {3, 19}).input("c", BOOL, {3, 19}).input("d", BOOL, {19});
  m.initializer("zero", FLOAT, {}, {0});
  m.node("Greater", {"x", "zero"}, {"pos"}).node("And", {"pos", "c"}, {"mask"});
  m.node("Neg", {"x"}, {"nx"}).node("Where", {"c", "x", "nx"}, {"y"});
  m.node("Equal", {"c", "d"}, {"same"});
  m.output("mask", BOOL, {3, 19}).output("y", FLOAT, {3, 19}).output("same", BOOL, {3, 19});
  const auto model = ox::load_from_bytes(m.bytes());
  CHECK(model.opaque.empty());
  const snippets::Program<> program(model.graph);
  for (const auto& s : program.steps())
    CHECK_MESSAGE(s.kind == snippets::Program<>::StepKind::kernel, s.note);
  std::vector<double> c(3 * 19), d(19);
  for (std::size_t i = 0; i < c.size(); ++i) c[i] = double(i % 3 == 0);
  for (std::size_t i = 0; i < d.size(); ++i) d[i] = double(i % 2);
  const std::vector<Tensor> in = {ramp({3, 19}, -5, 0.25),
                                  Tensor::from_values(ElementType::boolean, {3, 19}, c),
                                  Tensor::from_values(ElementType::boolean, {19}, d)};
  const auto got = program.run(in);
  const auto want = snippets::reference::evaluate(model.graph, in);
  REQUIRE(got.size() == 3);
  for (std::size_t k = 0; k < 3; ++k) {
    REQUIRE(got[k].type() == want[k].type());
    CHECK(std::memcmp(got[k].data(), want[k].data(), want[k].byte_size()) == 0);
  }
}

TEST_CASE("onnx: the reductions import as ops of their names, run as kernels over the last axis") {
  // axes by attribute (ONNX 1.12 knows opsets up to 17; from 18 they are an input, as
  // ReduceSum's from 13, which convert_reduce reads alike)
  for (const std::int64_t opset : {13, 17}) {
    INFO("opset " << opset);
    ModelBuilder m(opset);
    m.input("x", FLOAT, {4, 19});
    const char* ops[] = {"ReduceMin",       "ReduceProd", "ReduceMean",
                         "ReduceSumSquare", "ReduceL1",   "ReduceL2"};
    for (const char* op : ops) {
      const std::string y = std::string(op) + "_y", z = std::string(op) + "_z";
      m.node(op, {"x"}, {y}, {{"axes", std::vector<std::int64_t>{-1}}, {"keepdims", 1}});
      m.node(op, {"x"}, {z}, {{"axes", std::vector<std::int64_t>{0}}, {"keepdims", 0}});
      m.output(y, FLOAT, {4, 1}).output(z, FLOAT, {19});
      m.node(op, {"x"}, {std::string(op) + "_all"}, {{"keepdims", 0}}); // no axes: all of them
      m.output(std::string(op) + "_all", FLOAT, {});
    }
    const auto model = ox::load_from_bytes(m.bytes());
    for (const char* op : ops) CHECK(count_ops(model.graph, op) == 3);
    const Tensor x = ramp({4, 19}, 0.8, 0.005); // products of 19 to 76 factors near 1
    CHECK(jit_vs_reference(model.graph, {x}) < 1e-4);
    const snippets::Program<> program(model.graph);
    std::size_t kernels = 0;
    for (const auto& s : program.steps())
      kernels += s.kind == snippets::Program<>::StepKind::kernel;
    CHECK(kernels >= 1); // the reductions over the last axis, kept (the others: reference)
  }
}

TEST_CASE("onnx: MeanVarianceNormalization over the last axis and over [0,2,3] is one kernel") {
  for (const bool last : {true, false}) {
    ModelBuilder m;
    m.input("x", FLOAT, {2, 3, 4, 5});
    if (last)
      m.node("MeanVarianceNormalization", {"x"}, {"y"}, {{"axes", std::vector<std::int64_t>{3}}});
    else
      m.node("MeanVarianceNormalization", {"x"}, {"y"}); // the default axes
    m.output("y", FLOAT, {2, 3, 4, 5});
    const auto model = ox::load_from_bytes(m.bytes());
    // values of mean about 0 against a spread of about 1.4: the definition subtracts E[x]^2
    // from E[x^2], which in f32 loses what |mean| / std squared says (ONNX's data are so too)
    std::vector<double> v(120);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = 2 * std::sin(1.7 * double(i));
    const Tensor x = Tensor::from_values(ElementType::f32, {2, 3, 4, 5}, v);
    const auto y = snippets::reference::evaluate(model.graph, {x});
    // the definition, in double, for the first group: (x - mean) / (std + 1e-9)
    std::vector<std::size_t> group; // the elements reduced with x[0]
    for (std::size_t i = 0; i < 120; ++i)
      if (last ? i < 5 : (i / 20) % 3 == 0) group.push_back(i);
    double mean = 0, sq = 0;
    for (std::size_t i : group) mean += x.at(i) / double(group.size());
    for (std::size_t i : group) sq += x.at(i) * x.at(i) / double(group.size());
    CHECK(y[0].at(0) == doctest::Approx((x.at(0) - mean) / std::sqrt(sq - mean * mean)));
    CHECK(jit_vs_reference(model.graph, {x}) < 1e-5);
    const snippets::Program<> program(model.graph);
    std::size_t kernels = 0, reference = 0;
    for (const auto& s : program.steps()) {
      kernels += s.kind == snippets::Program<>::StepKind::kernel;
      reference += s.kind != snippets::Program<>::StepKind::kernel;
    }
    // over [0, 2, 3]: computed over the transposed input, the transposition back folded into
    // the kernel's store (passes/move_reduced_axes_last.hpp)
    CHECK((kernels == 1 && reference == 0));
  }
}
