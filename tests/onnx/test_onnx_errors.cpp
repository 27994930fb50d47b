// Malformed and unsupported ONNX input gives the documented error ids (docs/errors.md), and the
// message names the node.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "../error_id.hpp"
#include "model_builder.hpp"
#include "snippets/frontend/onnx.hpp"

namespace {
namespace ox = snippets::onnx;
using namespace onnx_test;

std::string message(const std::function<void()>& f) {
  try {
    f();
  } catch (const snippets::Error& e) {
    return e.what();
  }
  return "no error";
}
} // namespace

TEST_CASE("onnx errors: garbage bytes are not a model") {
  CHECK(error_id([] { ox::load_from_bytes("\x08\x01garbage\xff\xff\xff"); }) ==
        "snippets.onnx.bad_model");
  CHECK(error_id([] { ox::load_from_bytes(""); }) == "snippets.onnx.bad_model");
}

TEST_CASE("onnx errors: a missing file is snippets.onnx.file") {
  CHECK(error_id([] { ox::load("/nonexistent/model.onnx"); }) == "snippets.onnx.file");
  CHECK(error_id([] { ox::read_tensor("/nonexistent/input_0.pb"); }) == "snippets.onnx.file");
}

TEST_CASE("onnx errors: a node input that nothing produces") {
  ModelBuilder m;
  m.input("x", FLOAT, {3});
  m.node("Add", {"x", "nowhere"}, {"y"});
  m.output("y", FLOAT, {3});
  CHECK(error_id([&] { ox::load_from_bytes(m.bytes()); }) == "snippets.onnx.missing_input");
  CHECK(message([&] { ox::load_from_bytes(m.bytes()); }).find("'nowhere'") != std::string::npos);
}

TEST_CASE("onnx errors: attributes the importer cannot honour name the node") {
  SUBCASE("an attribute no converter reads") {
    ModelBuilder m;
    m.input("x", FLOAT, {3});
    m.node("Relu", {"x"}, {"y"}, {{"alpha", 2.0}});
    m.output("y", FLOAT, {3});
    CHECK(error_id([&] { ox::load_from_bytes(m.bytes()); }) ==
          "snippets.onnx.unsupported_attribute");
    CHECK(message([&] { ox::load_from_bytes(m.bytes()); }).find("Relu 'y'") != std::string::npos);
  }
  SUBCASE("Dropout in training mode") {
    ModelBuilder t;
    t.input("x", FLOAT, {3});
    t.initializer("ratio", FLOAT, {}, {0.5}).initializer("training", BOOL, {}, {1});
    t.node("Dropout", {"x", "ratio", "training"}, {"y"});
    t.output("y", FLOAT, {3});
    CHECK(error_id([&] { ox::load_from_bytes(t.bytes()); }) ==
          "snippets.onnx.unsupported_attribute");
  }
  SUBCASE("Softmax with an axis outside the input's rank") {
    ModelBuilder m;
    m.input("x", FLOAT, {2, 3});
    m.node("Softmax", {"x"}, {"y"}, {{"axis", 2}});
    m.output("y", FLOAT, {2, 3});
    CHECK(error_id([&] { ox::load_from_bytes(m.bytes()); }) == "snippets.shape.axis_out_of_range");
  }
}

TEST_CASE("onnx errors: a shape that is only known at run time") {
  ModelBuilder m;
  m.input("x", FLOAT, {2, 3}).input("s", FLOAT, {2});
  m.node("Cast", {"s"}, {"shape"}, {{"to", std::int64_t{INT64}}});
  m.node("Reshape", {"x", "shape"}, {"y"});
  m.output("y", FLOAT, {3, 2});
  CHECK(error_id([&] { ox::load_from_bytes(m.bytes()); }) == "snippets.onnx.unsupported_type");
  ModelBuilder n;
  n.input("x", FLOAT, {2, 3}).input("s", FLOAT, {2});
  n.node("Relu", {"s"}, {"r"}).node("Reshape", {"x", "r"}, {"y"});
  n.output("y", FLOAT, {3, 2});
  CHECK(error_id([&] { ox::load_from_bytes(n.bytes()); }) == "snippets.onnx.not_constant");
}

TEST_CASE("onnx errors: tensor types snippets has no element type for") {
  ModelBuilder m;
  m.input("x", pb::TensorProto::DOUBLE, {3});
  m.node("Relu", {"x"}, {"y"});
  m.output("y", pb::TensorProto::DOUBLE, {3});
  CHECK(error_id([&] { ox::load_from_bytes(m.bytes()); }) == "snippets.onnx.unsupported_type");
}

TEST_CASE("onnx errors: symbolic input dims need LoadOptions::input_shapes") {
  ModelBuilder m;
  m.input("x", FLOAT, {-1, 3});
  m.node("Relu", {"x"}, {"y"});
  m.output("y", FLOAT, {-1, 3});
  CHECK(error_id([&] { ox::load_from_bytes(m.bytes()); }) == "snippets.onnx.dynamic_shape");
  ox::LoadOptions opt;
  opt.input_shapes["x"] = {2, 4};
  CHECK(error_id([&] { ox::load_from_bytes(m.bytes(), opt); }) == "snippets.onnx.bad_model");
  opt.input_shapes["x"] = {2, 3};
  CHECK(error_id([&] { ox::load_from_bytes(m.bytes(), opt); }) == "no error");
}

TEST_CASE("onnx errors: a declared output type that the graph does not compute") {
  ModelBuilder m;
  m.input("x", FLOAT, {3});
  m.node("Relu", {"x"}, {"y"});
  m.output("y", FLOAT, {4});
  CHECK(error_id([&] { ox::load_from_bytes(m.bytes()); }) == "snippets.onnx.bad_model");
}

TEST_CASE("onnx errors: tensors with the wrong number of values or external data") {
  pb::TensorProto t = tensor(FLOAT, {2, 2}, {1, 2, 3});
  CHECK(error_id([&] { ox::to_host(t); }) == "snippets.onnx.bad_tensor");
  pb::TensorProto ext = tensor(FLOAT, {1}, {1});
  ext.set_data_location(pb::TensorProto::EXTERNAL);
  CHECK(error_id([&] { ox::to_host(ext); }) == "snippets.onnx.bad_tensor");
  const auto path = std::filesystem::temp_directory_path() / "snippets_onnx_garbage.pb";
  std::ofstream(path, std::ios::binary) << "\xff\xff\xff\xff not a tensor";
  CHECK(error_id([&] { ox::read_tensor(path); }) == "snippets.onnx.bad_tensor");
  std::filesystem::remove(path);
}
