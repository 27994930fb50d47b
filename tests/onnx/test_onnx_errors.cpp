// SPDX-License-Identifier: Apache-2.0
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

TEST_CASE("onnx errors: symbolic input dims stay dynamic unless LoadOptions::input_shapes fixes "
          "them; ops that need them static say so") {
  ModelBuilder m;
  m.input("x", FLOAT, {-1, 3});
  m.node("Relu", {"x"}, {"y"});
  m.output("y", FLOAT, {-1, 3});
  const auto model = ox::load_from_bytes(m.bytes());
  CHECK(model.graph.node(model.graph.parameters()[0]).outputs[0].shape ==
        snippets::Shape{snippets::dynamic, 3});
  ModelBuilder flat;
  flat.input("x", FLOAT, {-1, 3, 2});
  flat.node("Flatten", {"x"}, {"y"});
  flat.output("y", FLOAT, {-1, 6});
  CHECK(error_id([&] { ox::load_from_bytes(flat.bytes()); }) == "snippets.onnx.dynamic_shape");
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

TEST_CASE("onnx errors: only regular files are read (a device never ends)") {
  CHECK(error_id([] { ox::load("/dev/zero"); }) == "snippets.onnx.not_a_file");
  CHECK(error_id([] { ox::read_tensor("/dev/zero"); }) == "snippets.onnx.not_a_file");
  CHECK(error_id([] { ox::read_tensor(std::filesystem::temp_directory_path()); }) ==
        "snippets.onnx.not_a_file");
  CHECK(message([] { ox::load("/dev/zero"); }).find("'/dev/zero'") != std::string::npos);
}

TEST_CASE("onnx errors: a file larger than protobuf parses is refused before it is read") {
  const auto path = std::filesystem::temp_directory_path() / "snippets_onnx_huge.onnx";
  std::ofstream(path, std::ios::binary).put('\0');
  std::filesystem::resize_file(path, std::uintmax_t{1} << 31); // sparse: no disk space used
  CHECK(error_id([&] { ox::load(path); }) == "snippets.onnx.file_too_large");
  std::filesystem::remove(path);
}

TEST_CASE("onnx errors: a name defined twice") {
  SUBCASE("two nodes with the same output") {
    ModelBuilder m;
    m.input("x", FLOAT, {3});
    m.node("Relu", {"x"}, {"y"}).node("Abs", {"x"}, {"y"});
    m.output("y", FLOAT, {3});
    CHECK(error_id([&] { ox::load_from_bytes(m.bytes()); }) == "snippets.onnx.duplicate_name");
    const std::string what = message([&] { ox::load_from_bytes(m.bytes()); });
    CHECK(what.find("Relu 'y'") != std::string::npos);
    CHECK(what.find("Abs 'y'") != std::string::npos);
  }
  SUBCASE("a node output named like a graph input or an initializer") {
    ModelBuilder m;
    m.input("x", FLOAT, {3}).initializer("w", FLOAT, {3}, {1, 2, 3});
    m.node("Relu", {"x"}, {"x"});
    m.output("x", FLOAT, {3});
    CHECK(error_id([&] { ox::load_from_bytes(m.bytes()); }) == "snippets.onnx.duplicate_name");
    ModelBuilder n;
    n.input("x", FLOAT, {3}).initializer("w", FLOAT, {3}, {1, 2, 3});
    n.node("Relu", {"x"}, {"w"});
    n.output("w", FLOAT, {3});
    CHECK(error_id([&] { ox::load_from_bytes(n.bytes()); }) == "snippets.onnx.duplicate_name");
  }
  SUBCASE("a graph input listed twice, two initializers of one name") {
    ModelBuilder m;
    m.input("x", FLOAT, {3}).input("x", FLOAT, {3});
    m.node("Relu", {"x"}, {"y"});
    m.output("y", FLOAT, {3});
    CHECK(error_id([&] { ox::load_from_bytes(m.bytes()); }) == "snippets.onnx.duplicate_name");
    ModelBuilder n;
    n.input("x", FLOAT, {3});
    n.initializer("w", FLOAT, {3}, {1, 2, 3}).initializer("w", FLOAT, {3}, {4, 5, 6});
    n.node("Add", {"x", "w"}, {"y"});
    n.output("y", FLOAT, {3});
    CHECK(error_id([&] { ox::load_from_bytes(n.bytes()); }) == "snippets.onnx.duplicate_name");
  }
  SUBCASE("an initializer that is also a graph input is its default, not a second definition") {
    ModelBuilder m;
    m.input("x", FLOAT, {3}).input("w", FLOAT, {3}).initializer("w", FLOAT, {3}, {1, 2, 3});
    m.node("Add", {"x", "w"}, {"y"});
    m.output("y", FLOAT, {3});
    CHECK(error_id([&] { ox::load_from_bytes(m.bytes()); }) == "no error");
  }
}

TEST_CASE("onnx errors: opsets and IR versions newer than the importer reads") {
  ModelBuilder m(1000);
  m.input("x", FLOAT, {3});
  m.node("Relu", {"x"}, {"y"});
  m.output("y", FLOAT, {3});
  CHECK(error_id([&] { ox::import_model(m.proto()); }) == "snippets.onnx.unsupported_version");
  const std::string newest = std::to_string(ox::detail::max_opset());
  CHECK(message([&] { ox::import_model(m.proto()); }).find("up to " + newest) != std::string::npos);

  ModelBuilder ok;
  ok.input("x", FLOAT, {3});
  ok.node("Relu", {"x"}, {"y"});
  ok.output("y", FLOAT, {3});
  pb::ModelProto p = ok.proto();
  p.set_ir_version(1000);
  CHECK(error_id([&] { ox::import_model(p); }) == "snippets.onnx.unsupported_version");
  p.set_ir_version(ox::detail::max_ir_version());
  p.mutable_opset_import(0)->set_version(ox::detail::max_opset());
  CHECK(error_id([&] { ox::import_model(p); }) == "no error");
}

TEST_CASE("onnx errors: element counts that overflow int64 on every path") {
  constexpr std::int64_t big = std::int64_t{1} << 40; // big * big overflows int64
  SUBCASE("an initializer") {
    pb::TensorProto t = tensor(FLOAT, {big, big}, {});
    CHECK(error_id([&] { ox::to_host(t); }) == "snippets.shape.too_many_elements");
    ModelBuilder m;
    m.input("x", FLOAT, {3}).initializer("w", FLOAT, {big, big}, {});
    m.node("Relu", {"x"}, {"y"});
    m.output("y", FLOAT, {3});
    CHECK(error_id([&] { ox::load_from_bytes(m.bytes()); }) == "snippets.shape.too_many_elements");
    CHECK(message([&] { ox::load_from_bytes(m.bytes()); }).find("'w'") != std::string::npos);
  }
  SUBCASE("a Constant node's value") {
    ModelBuilder m;
    m.input("x", FLOAT, {3});
    m.node("Constant", {}, {"c"}, {{"value", tensor(FLOAT, {big, big}, {})}});
    m.node("Relu", {"x"}, {"y"});
    m.output("y", FLOAT, {3});
    CHECK(error_id([&] { ox::load_from_bytes(m.bytes()); }) == "snippets.shape.too_many_elements");
  }
  SUBCASE("a declared graph input or output shape, or one given in LoadOptions") {
    ModelBuilder m;
    m.input("x", FLOAT, {big, big});
    m.node("Relu", {"x"}, {"y"});
    m.output("y", FLOAT, {big, big});
    CHECK(error_id([&] { ox::load_from_bytes(m.bytes()); }) == "snippets.shape.too_many_elements");
    ModelBuilder partly; // the fixed dimensions alone overflow
    partly.input("x", FLOAT, {-1, big, big});
    partly.node("Relu", {"x"}, {"y"});
    partly.output("y", FLOAT, {-1, big, big});
    CHECK(error_id([&] { ox::load_from_bytes(partly.bytes()); }) ==
          "snippets.shape.too_many_elements");
    ModelBuilder symbolic;
    symbolic.input("x", FLOAT, {-1, -1});
    symbolic.node("Relu", {"x"}, {"y"});
    symbolic.output("y", FLOAT, {-1, -1});
    ox::LoadOptions opt;
    opt.input_shapes["x"] = {big, big};
    CHECK(error_id([&] { ox::load_from_bytes(symbolic.bytes(), opt); }) ==
          "snippets.shape.too_many_elements");
  }
  SUBCASE("a value_info shape") {
    ModelBuilder m;
    m.input("x", FLOAT, {3});
    m.node("Relu", {"x"}, {"r"}).node("Abs", {"r"}, {"y"});
    m.output("y", FLOAT, {3});
    pb::ModelProto p = m.proto();
    auto* info = p.mutable_graph()->add_value_info();
    info->set_name("r");
    auto* t = info->mutable_type()->mutable_tensor_type();
    t->set_elem_type(FLOAT);
    t->mutable_shape()->add_dim()->set_dim_value(big);
    t->mutable_shape()->add_dim()->set_dim_value(big);
    CHECK(error_id([&] { ox::import_model(p); }) == "snippets.shape.too_many_elements");
  }
  SUBCASE("shape arithmetic at load time") {
    ModelBuilder m;
    m.input("x", FLOAT, {4});
    m.initializer("c", FLOAT, {4}, {1, 2, 3, 4});
    m.initializer("shape", INT64, {3}, {double(big), double(big), -1});
    m.node("Reshape", {"c", "shape"}, {"r"}).node("Add", {"x", "r"}, {"y"});
    m.output("y", FLOAT, {4});
    CHECK(error_id([&] { ox::load_from_bytes(m.bytes()); }) == "snippets.shape.too_many_elements");
  }
}
