// SPDX-License-Identifier: Apache-2.0
// snippets/frontend/onnx_importer.hpp: ModelProto -> Graph (the work behind onnx::load).
//
// Order of work:
//  0. the model's opset (default domain) and IR version must be ones the ONNX library we build
//     with knows ([snippets.onnx.unsupported_version]);
//  1. initializers become known values; graph inputs that are not initializers become
//     Parameters (shape from the model or LoadOptions::input_shapes, which must be static),
//     unless they are only used as shapes/axes and LoadOptions::input_values has them;
//  2. nodes in file order (ONNX requires a topological order): the op table converts each
//     one, or evaluates it at load time when all inputs are known and it is shape arithmetic;
//     an op outside the table, or one the table cannot express with its inputs, becomes an
//     ir::Opaque node whose output types come from ONNX shape inference;
//  3. graph outputs become Results, checked against their declared types.
// Every name is defined once (graph input, initializer or node output; an initializer may also
// be a graph input) or the import fails ([snippets.onnx.duplicate_name]), and every declared
// shape (inputs, outputs, value_info, initializers) must have an element count int64 holds.
// Errors name the ONNX node: builder errors keep their id ([snippets.graph.*],
// [snippets.shape.*]) and get "ONNX node <op> '<name>': " in front.
#pragma once

// <sys/mman.h> (a code generator may include it) defines MAP_TYPE, which ONNX's parser.h uses as an
// enumerator
#pragma push_macro("MAP_TYPE")
#undef MAP_TYPE
#include <onnx/shape_inference/implementation.h>
#pragma pop_macro("MAP_TYPE")

#include <optional>
#include <set>
#include <string>
#include <unordered_map>

#include "snippets/frontend/onnx_model.hpp"
#include "snippets/frontend/onnx_op_table.hpp"

namespace snippets::onnx::detail {

inline bool default_domain(const std::string& d) { return d.empty() || d == "ai.onnx"; }

inline std::int64_t default_opset(const pb::ModelProto& m) {
  for (const auto& o : m.opset_import())
    if (default_domain(o.domain())) return o.version();
  return 1;
}

/// The newest opset of the default domain and IR version the importer reads: those of the ONNX
/// library it is built with, whose shape inference and op schemas it relies on (17 and 8 for
/// ONNX 1.12).
inline int max_opset() {
  return ::onnx::OpSchemaRegistry::DomainToVersionRange::Instance()
      .Map()
      .at(::onnx::ONNX_DOMAIN)
      .second;
}
inline std::int64_t max_ir_version() { return ::onnx::IR_VERSION; }

/// The declared shape of a value (dynamic where the model gives no number), or nothing; `what`
/// names the value in the error of dimensions whose product overflows int64.
inline std::optional<Shape> declared_shape(const pb::TypeProto& t, const std::string& what) {
  if (!t.has_tensor_type() || !t.tensor_type().has_shape()) return std::nullopt;
  std::vector<Dim> dims, fixed;
  for (const auto& d : t.tensor_type().shape().dim()) {
    dims.push_back(d.has_dim_value() ? d.dim_value() : dynamic);
    if (d.has_dim_value() && d.dim_value() >= 0) fixed.push_back(d.dim_value());
  }
  Shape shape(std::move(dims));
  counted(Shape(std::move(fixed)), what);
  return shape;
}

template <class T> class Importer {
public:
  Importer(const pb::ModelProto& m, const LoadOptions& opt) : m_(m), opt_(opt) {
    if (!m.has_graph())
      raise("snippets.onnx.bad_model", "the model has no graph (is this an ONNX model file?)");
    model_.opset = default_opset(m);
    if (model_.opset > max_opset())
      raise("snippets.onnx.unsupported_version",
            "the model imports opset " + std::to_string(model_.opset) +
                " of the default ONNX domain; the importer reads opsets up to " +
                std::to_string(max_opset()) + " (convert the model with onnx.version_converter)");
    if (m.ir_version() > max_ir_version())
      raise("snippets.onnx.unsupported_version",
            "the model has IR version " + std::to_string(m.ir_version()) +
                "; the importer reads IR versions up to " + std::to_string(max_ir_version()) +
                " (save the model with an older ONNX)");
    model_.producer =
        m.producer_name() + (m.producer_version().empty() ? "" : " ") + m.producer_version();
  }

  Model<T> run() {
    const pb::GraphProto& gp = m_.graph();
    for (const auto& init : gp.initializer()) {
      define(init.name(), "an initializer");
      values_[init.name()] = Entry{std::nullopt, to_host(init, "initializer"), nullptr};
    }
    for (const auto& v : gp.value_info()) declared_shape(v.type(), "value '" + v.name() + "'");
    add_inputs(gp);
    for (const auto& node : gp.node()) convert_node(node);
    for (const auto& out : gp.output()) add_output(out);
    for (const auto& [name, _] : opt_.input_shapes)
      if (!declared_inputs_.count(name))
        raise("snippets.onnx.missing_input",
              "LoadOptions::input_shapes names '" + name + "', which is not a graph input");
    return std::move(model_);
  }

private:
  /// Records that `name` is defined by `by`; ONNX graphs define each name once (an initializer
  /// may also be a graph input, its default).
  void define(const std::string& name, std::string by) {
    if (const auto it = defined_by_.find(name); it != defined_by_.end())
      raise("snippets.onnx.duplicate_name",
            "'" + name + "' is defined by " + it->second + " and again by " + by +
                "; an ONNX graph defines each name once (rename one of them)");
    defined_by_.emplace(name, std::move(by));
  }

  /// How each graph input is used: as a run-time operand, and/or as a shape/axes operand.
  void scan_uses(const pb::GraphProto& gp) {
    const auto& table = op_table<T>();
    for (const auto& node : gp.node()) {
      const auto it = default_domain(node.domain()) ? table.find(node.op_type()) : table.end();
      const std::size_t first = it == table.end() ? std::numeric_limits<std::size_t>::max()
                                                  : it->second.first_constant_input;
      for (int i = 0; i < node.input_size(); ++i)
        (std::size_t(i) >= first ? constant_uses_ : data_uses_).insert(node.input(i));
    }
  }

  void add_inputs(const pb::GraphProto& gp) {
    scan_uses(gp);
    std::set<std::string, std::less<>> listed;
    for (const auto& in : gp.input()) {
      const std::string& name = in.name();
      if (!listed.insert(name).second)
        raise("snippets.onnx.duplicate_name",
              "the graph lists input '" + name + "' twice; an ONNX graph defines each name once");
      if (values_.count(name)) continue; // an initializer: its value is the default
      declared_inputs_.insert(name);
      define(name, "a graph input");
      const auto given = opt_.input_values.find(name);
      if (given != opt_.input_values.end() && !data_uses_.count(name) &&
          constant_uses_.count(name)) {
        values_[name] = Entry{std::nullopt, given->second, nullptr};
        model_.folded_inputs.push_back(name);
        continue;
      }
      if (!in.type().has_tensor_type())
        raise("snippets.onnx.unsupported_type",
              "graph input '" + name +
                  "' is not a tensor (sequences, maps and optionals are not "
                  "supported)");
      const ElementType type =
          require_element_type(in.type().tensor_type().elem_type(), "graph input '" + name + "'");
      const std::optional<Shape> declared = declared_shape(in.type(), "graph input '" + name + "'");
      Shape shape;
      if (const auto s = opt_.input_shapes.find(name); s != opt_.input_shapes.end()) {
        shape = s->second;
        if (declared && !compatible(*declared, shape))
          raise("snippets.onnx.bad_model", "LoadOptions::input_shapes gives '" + name + "' shape " +
                                               shape.to_string() + " but the model declares " +
                                               declared->to_string());
      } else if (declared) {
        shape = *declared;
      }
      if (!declared && !opt_.input_shapes.count(name))
        raise("snippets.onnx.dynamic_shape",
              "graph input '" + name +
                  "' has no shape in the model; give it with "
                  "LoadOptions::input_shapes (snippets-run --shape)");
      // symbolic dimensions stay dynamic: a Program compiles the model once for every size
      // (ops that need a static shape say so, snippets.onnx.dynamic_shape)
      if (shape.is_static()) counted(shape, "graph input '" + name + "'");
      values_[name] = Entry{model_.graph.parameter(type, shape, name), std::nullopt, nullptr};
      model_.inputs.push_back(name);
      fixed_shapes_[name] = shape;
    }
  }

  void convert_node(const pb::NodeProto& node) {
    NodeContext<T> c(model_.graph, values_, node, static_cast<int>(model_.opset));
    for (std::size_t i = 0; i < c.output_count(); ++i)
      if (c.has_out(i)) define(node.output(int(i)), "ONNX node " + c.who());
    const auto& table = op_table<T>();
    const auto it = default_domain(node.domain()) ? table.find(node.op_type()) : table.end();
    if (it == table.end()) {
      const std::string where =
          default_domain(node.domain()) ? "" : " (domain " + node.domain() + ")";
      return make_opaque(c, "not in snippets' op set" + where);
    }
    try {
      if (it->second.host && c.all_inputs_known() && c.input_count() > 0)
        it->second.host(c);
      else
        it->second.convert(c);
      if (const auto unread = c.unread_attributes(); !unread.empty())
        c.bad_attribute("attribute '" + unread[0] + "' is not understood by the importer");
    } catch (const NotExpressible& e) {
      make_opaque(c, e.reason);
    } catch (const Error& e) {
      if (e.id().rfind("snippets.onnx.", 0) == 0) throw;
      const std::string what = e.what();
      raise(e.id(), "ONNX node " + c.who() + ": " + what.substr(what.find("] ") + 2));
    }
  }

  const pb::TypeProto* inferred_type(const std::string& name) {
    if (!inferred_) {
      inferred_.emplace();
      pb::ModelProto copy = m_;
      for (auto& in : *copy.mutable_graph()->mutable_input()) { // shape inference sees our shapes
        const auto s = fixed_shapes_.find(in.name());
        if (s == fixed_shapes_.end() || !in.type().has_tensor_type()) continue;
        auto* shape = in.mutable_type()->mutable_tensor_type()->mutable_shape();
        shape->clear_dim();
        for (Dim d : s->second)
          if (d == dynamic)
            shape->add_dim(); // unknown to shape inference, as a symbolic dimension
          else
            shape->add_dim()->set_dim_value(d);
      }
      try {
        ::onnx::shape_inference::InferShapes(copy);
      } catch (const std::exception&) { // keep what was inferred before the failure
      }
      shape_model_ = std::move(copy);
      for (const auto& v : shape_model_.graph().value_info()) (*inferred_)[v.name()] = &v.type();
      for (const auto& v : shape_model_.graph().output()) (*inferred_)[v.name()] = &v.type();
    }
    const auto it = inferred_->find(name);
    return it == inferred_->end() ? nullptr : it->second;
  }

  void make_opaque(NodeContext<T>& c, const std::string& reason) {
    const std::string what = "ONNX op " + c.who() + " is " + reason;
    if (!opt_.allow_opaque) raise("snippets.onnx.unsupported_op", what);
    ir::Opaque op{c.node().op_type(), {}};
    for (std::size_t i = 0; i < c.output_count(); ++i) {
      const std::string& out = c.node().output(int(i));
      const pb::TypeProto* t = out.empty() ? nullptr : inferred_type(out);
      const auto shape = t ? declared_shape(*t, c.who() + ": output '" + out + "'") : std::nullopt;
      if (!shape || !shape->is_static())
        raise("snippets.onnx.unsupported_op",
              what + ", and ONNX shape inference gives no static shape for its output '" + out +
                  "', so it cannot become an Opaque node either; give the inputs static shapes");
      const ElementType type =
          require_element_type(t->tensor_type().elem_type(), c.who() + ": output '" + out + "'");
      op.outputs.push_back({type, *shape});
    }
    std::vector<ir::Value> ins;
    for (std::size_t i = 0; i < c.input_count(); ++i) {
      if (!c.has_in(i)) continue;
      // known values of types we cannot hold (int64 pads, sizes) stay with the ONNX node
      if (const HostTensor* h = c.host(i); h && !element_type_of(h->dtype)) continue;
      ins.push_back(c.in(i));
    }
    const auto outs = model_.graph.make(std::move(op), ins, c.name());
    for (std::size_t i = 0; i < outs.size(); ++i) c.set_out(i, outs[i]);
    model_.opaque.push_back({c.name(), c.node().op_type(), reason});
  }

  void add_output(const pb::ValueInfoProto& out) {
    const auto it = values_.find(out.name());
    if (it == values_.end())
      raise("snippets.onnx.missing_input",
            "graph output '" + out.name() + "' is produced by no node, input or initializer");
    Entry& e = it->second;
    if (!e.value) {
      const HostTensor& h = *e.host;
      e.value = model_.graph.constant(
          require_element_type(h.dtype, "graph output '" + out.name() + "'"), h.shape(),
          h.values.empty() ? std::vector<double>{0} : h.values, out.name());
    }
    const ir::TensorType& got = model_.graph.type(*e.value);
    if (out.type().has_tensor_type() && out.type().tensor_type().elem_type() != 0) {
      const int declared = out.type().tensor_type().elem_type();
      const auto shape = declared_shape(out.type(), "graph output '" + out.name() + "'");
      if (declared != data_type_of(got.type) || (shape && !compatible(*shape, got.shape)))
        raise("snippets.onnx.bad_model", "graph output '" + out.name() + "' is declared " +
                                             data_type_name(declared) +
                                             (shape ? shape->to_string() : std::string("")) +
                                             " but computes as " + got.to_string());
    }
    model_.graph.result(*e.value, out.name());
    model_.outputs.push_back(out.name());
  }

  const pb::ModelProto& m_;
  const LoadOptions& opt_;
  Model<T> model_;
  std::map<std::string, Entry, std::less<>> values_;
  std::set<std::string, std::less<>> data_uses_, constant_uses_, declared_inputs_;
  std::map<std::string, std::string, std::less<>> defined_by_; // value name -> what defines it
  std::map<std::string, Shape, std::less<>> fixed_shapes_;
  pb::ModelProto shape_model_;
  std::optional<std::unordered_map<std::string, const pb::TypeProto*>> inferred_;
};

} // namespace snippets::onnx::detail
