// SPDX-License-Identifier: Apache-2.0
// tests/onnx/model_builder.hpp: small ONNX models built with the protobuf API, for the tests.
//
//   ModelBuilder m;
//   m.input("x", FLOAT, {2, 3}).input("y", FLOAT, {3});
//   m.node("Add", {"x", "y"}, {"s"}).node("Relu", {"s"}, {"z"});
//   m.output("z", FLOAT, {2, 3});
//   auto model = snippets::onnx::load_from_bytes(m.bytes());
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "snippets/frontend/onnx_tensor.hpp"

namespace onnx_test {

namespace pb = ::onnx;
constexpr int FLOAT = pb::TensorProto::FLOAT;
constexpr int INT64 = pb::TensorProto::INT64;
constexpr int INT32 = pb::TensorProto::INT32;
constexpr int BOOL = pb::TensorProto::BOOL;

/// One attribute: an int, a float, a list of ints, or a tensor.
struct Attr {
  std::string name;
  pb::AttributeProto proto;
  Attr(std::string n, std::int64_t v) : name(std::move(n)) {
    proto.set_type(pb::AttributeProto::INT);
    proto.set_i(v);
  }
  Attr(std::string n, int v) : Attr(std::move(n), std::int64_t{v}) {}
  Attr(std::string n, double v) : name(std::move(n)) {
    proto.set_type(pb::AttributeProto::FLOAT);
    proto.set_f(static_cast<float>(v));
  }
  Attr(std::string n, std::vector<std::int64_t> v) : name(std::move(n)) {
    proto.set_type(pb::AttributeProto::INTS);
    for (auto x : v) proto.add_ints(x);
  }
  Attr(std::string n, pb::TensorProto t) : name(std::move(n)) {
    proto.set_type(pb::AttributeProto::TENSOR);
    *proto.mutable_t() = std::move(t);
  }
};

/// A TensorProto with typed fields (float_data or int64_data).
inline pb::TensorProto tensor(int dtype, std::vector<std::int64_t> dims, std::vector<double> v,
                              std::string name = {}) {
  pb::TensorProto t;
  t.set_name(std::move(name));
  t.set_data_type(dtype);
  for (auto d : dims) t.add_dims(d);
  for (double x : v) {
    if (dtype == INT64)
      t.add_int64_data(static_cast<std::int64_t>(x));
    else if (dtype == FLOAT)
      t.add_float_data(static_cast<float>(x));
    else
      t.add_int32_data(static_cast<std::int32_t>(x));
  }
  return t;
}

class ModelBuilder {
public:
  explicit ModelBuilder(std::int64_t opset = 17) {
    m_.set_ir_version(8);
    m_.set_producer_name("snippets-tests");
    m_.add_opset_import()->set_version(opset);
  }

  /// A graph input; a dim below 0 is symbolic ("N").
  ModelBuilder& input(const std::string& name, int dtype, std::vector<std::int64_t> dims) {
    value_info(m_.mutable_graph()->add_input(), name, dtype, dims);
    return *this;
  }
  ModelBuilder& output(const std::string& name, int dtype, std::vector<std::int64_t> dims) {
    value_info(m_.mutable_graph()->add_output(), name, dtype, dims);
    return *this;
  }
  ModelBuilder& initializer(const std::string& name, int dtype, std::vector<std::int64_t> dims,
                            std::vector<double> v) {
    *m_.mutable_graph()->add_initializer() = tensor(dtype, std::move(dims), std::move(v), name);
    return *this;
  }
  ModelBuilder& node(const std::string& op, std::vector<std::string> in,
                     std::vector<std::string> out, std::vector<Attr> attrs = {},
                     const std::string& domain = {}) {
    pb::NodeProto* n = m_.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name(out.empty() ? op : out[0]);
    n->set_domain(domain);
    for (const auto& i : in) n->add_input(i);
    for (const auto& o : out) n->add_output(o);
    for (auto& a : attrs) {
      pb::AttributeProto* p = n->add_attribute();
      *p = a.proto;
      p->set_name(a.name);
    }
    return *this;
  }

  const pb::ModelProto& proto() const { return m_; }
  std::string bytes() const { return m_.SerializeAsString(); }

private:
  static void value_info(pb::ValueInfoProto* v, const std::string& name, int dtype,
                         const std::vector<std::int64_t>& dims) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(dtype);
    auto* shape = t->mutable_shape();
    for (auto d : dims) {
      if (d < 0)
        shape->add_dim()->set_dim_param("N");
      else
        shape->add_dim()->set_dim_value(d);
    }
  }

  pb::ModelProto m_;
};

} // namespace onnx_test
