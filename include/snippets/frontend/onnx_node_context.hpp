// SPDX-License-Identifier: Apache-2.0
// snippets/frontend/onnx_node_context.hpp: what an op converter sees of the model it imports.
//
// The importer (onnx_importer.hpp) keeps one Entry per ONNX value name: a graph Value, a value
// known at load time (a HostTensor: initializers, Constant nodes, shapes of static tensors and
// what is computed from them), or both. A converter (onnx_ops_*.hpp) gets a NodeContext for one
// NodeProto and
//  - reads data operands with in(i) (a known value becomes a graph Constant on first use) and
//    operands that must be known at load time (shapes, axes) with constant(i);
//  - reads attributes with attr_int / attr_float / attr_ints / attr_string / attr_tensor; an
//    attribute that no converter read is an attribute we cannot honour, and the importer raises
//    [snippets.onnx.unsupported_attribute] for it (ignore_attr marks harmless ones);
//  - defines outputs with set_out(i, value) or set_out_host(i, tensor);
//  - throws NotExpressible when the op cannot be built from our op set with these inputs (the
//    importer then makes it an ir::Opaque node or reports it).
// Errors from the graph builder are re-raised with the ONNX node's name in front.
#pragma once

#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "snippets/frontend/onnx_tensor.hpp"
#include "snippets/ir/graph.hpp"

namespace snippets::onnx::detail {

/// The product of extents (1 for none); raises [snippets.shape.too_many_elements] when it
/// overflows int64.
inline std::int64_t product(std::span<const std::int64_t> dims) {
  return Shape(dims).element_count();
}

/// The op cannot be expressed with our op set (with these inputs): the importer makes it Opaque.
struct NotExpressible {
  std::string reason;
};

/// A known value computed by DequantizeLinear from known inputs (quantized weights): those
/// inputs, so that a MatMul reading it can multiply the integers instead
/// (onnx_ops_quantization.hpp).
struct Dequantization {
  HostTensor x, scale;
  std::optional<HostTensor> zero;
  std::optional<std::size_t> axis; // of per-axis scales and zero points
};

/// One ONNX value during import.
struct Entry {
  std::optional<ir::Value> value;                         // in the graph
  std::optional<HostTensor> host;                         // known at load time
  std::shared_ptr<const Dequantization> dequantized = {}; // how `host` was computed, if so
};

template <class T> class NodeContext {
public:
  NodeContext(ir::Graph<T>& g, std::map<std::string, Entry, std::less<>>& values,
              const pb::NodeProto& node, int opset)
      : g_(g), values_(values), node_(node), opset_(opset) {
    name_ =
        node.name().empty() ? (node.output_size() ? node.output(0) : node.op_type()) : node.name();
  }

  ir::Graph<T>& g() { return g_; }
  const pb::NodeProto& node() const { return node_; }
  int opset() const { return opset_; }
  const std::string& name() const { return name_; }
  /// "Softmax 'name'", for messages.
  std::string who() const { return node_.op_type() + " '" + name_ + "'"; }

  // ---- inputs ----

  std::size_t input_count() const { return static_cast<std::size_t>(node_.input_size()); }
  /// An optional input is present (listed with a non-empty name).
  bool has_in(std::size_t i) const { return i < input_count() && !node_.input(int(i)).empty(); }
  /// The known value of input i, or null when it is computed at run time.
  const HostTensor* host(std::size_t i) const {
    if (!has_in(i)) return nullptr;
    const Entry& e = entry(i);
    return e.host ? &*e.host : nullptr;
  }
  /// The DequantizeLinear that computed the known input i, or null.
  const Dequantization* dequantized(std::size_t i) const {
    return has_in(i) ? entry(i).dequantized.get() : nullptr;
  }
  bool all_inputs_known() const {
    for (std::size_t i = 0; i < input_count(); ++i)
      if (has_in(i) && !host(i)) return false;
    return true;
  }
  /// Input i as a graph value; a known value becomes a Constant node on first use.
  ir::Value in(std::size_t i) {
    if (!has_in(i))
      raise("snippets.onnx.missing_input", who() + " needs input " + std::to_string(i) +
                                               " but the node lists " +
                                               std::to_string(input_count()) + " input(s)");
    Entry& e = entry(i);
    if (!e.value) {
      const HostTensor& h = *e.host;
      const ElementType t =
          require_element_type(h.dtype, who() + ": input '" + node_.input(int(i)) + "'");
      e.value = g_.constant(t, h.shape(), h.values.empty() ? std::vector<double>{0} : h.values,
                            node_.input(int(i)));
    }
    return *e.value;
  }
  /// Input i, which must be known at load time (a shape, axes, a bound).
  const HostTensor& constant(std::size_t i, std::string_view what) {
    if (!has_in(i))
      raise("snippets.onnx.missing_input",
            who() + " needs its input " + std::to_string(i) + " (" + std::string(what) + ")");
    const HostTensor* h = host(i);
    if (!h)
      raise("snippets.onnx.not_constant",
            who() + ": input '" + node_.input(int(i)) + "' (" + std::string(what) +
                ") must be known when the model loads; make it an initializer or a Constant, or "
                "give its value with LoadOptions::input_values (snippets-run feeds the input "
                "files)");
    return *h;
  }
  const ir::TensorType& type(ir::Value v) const { return g_.type(v); }

  // ---- attributes ----

  bool has_attr(std::string_view name) const { return find_attr(name) != nullptr; }
  std::int64_t attr_int(std::string_view name, std::int64_t fallback) {
    const auto* a = find_attr(name);
    return a ? a->i() : fallback;
  }
  double attr_float(std::string_view name, double fallback) {
    const auto* a = find_attr(name);
    return a ? static_cast<double>(a->f()) : fallback;
  }
  std::optional<std::vector<std::int64_t>> attr_ints(std::string_view name) {
    const auto* a = find_attr(name);
    if (!a) return std::nullopt;
    return std::vector<std::int64_t>(a->ints().begin(), a->ints().end());
  }
  std::optional<std::vector<double>> attr_floats(std::string_view name) {
    const auto* a = find_attr(name);
    if (!a) return std::nullopt;
    return std::vector<double>(a->floats().begin(), a->floats().end());
  }
  std::string attr_string(std::string_view name, std::string fallback) {
    const auto* a = find_attr(name);
    return a ? a->s() : fallback;
  }
  const pb::TensorProto* attr_tensor(std::string_view name) {
    const auto* a = find_attr(name);
    return a ? &a->t() : nullptr;
  }
  /// Marks an attribute that needs no action (e.g. a random seed of an op run for inference).
  void ignore_attr(std::string_view name) { (void)find_attr(name); }
  /// Attributes present on the node that no converter read.
  std::vector<std::string> unread_attributes() const {
    std::vector<std::string> out;
    for (const auto& a : node_.attribute())
      if (!read_.count(a.name())) out.push_back(a.name());
    return out;
  }
  [[noreturn]] void bad_attribute(const std::string& what) const {
    raise("snippets.onnx.unsupported_attribute", who() + ": " + what);
  }

  // ---- outputs ----

  std::size_t output_count() const { return static_cast<std::size_t>(node_.output_size()); }
  bool has_out(std::size_t i) const { return i < output_count() && !node_.output(int(i)).empty(); }
  void set_out(std::size_t i, ir::Value v) {
    if (has_out(i)) values_[node_.output(int(i))] = Entry{v, std::nullopt, nullptr};
  }
  void set_out_host(std::size_t i, HostTensor h,
                    std::shared_ptr<const Dequantization> dequantized = {}) {
    if (has_out(i))
      values_[node_.output(int(i))] = Entry{std::nullopt, std::move(h), std::move(dequantized)};
  }

  // ---- building ----

  /// Any single-output op, named after the ONNX node.
  template <class Tag> ir::Value op(Tag tag, std::initializer_list<ir::Value> inputs) {
    return g_.make(std::move(tag), inputs, name_)[0];
  }
  /// A scalar of `like`'s element type.
  ir::Value scalar(ir::Value like, double v) { return g_.scalar(type(like).type, v); }

private:
  const Entry& entry(std::size_t i) const {
    const auto it = values_.find(node_.input(int(i)));
    if (it == values_.end())
      raise("snippets.onnx.missing_input",
            who() + ": input '" + node_.input(int(i)) +
                "' is neither a graph input, an initializer nor an output of an earlier node");
    return it->second;
  }
  Entry& entry(std::size_t i) { return const_cast<Entry&>(std::as_const(*this).entry(i)); }
  const pb::AttributeProto* find_attr(std::string_view name) const {
    for (const auto& a : node_.attribute())
      if (a.name() == name) {
        read_.insert(a.name());
        return &a;
      }
    return nullptr;
  }

  ir::Graph<T>& g_;
  std::map<std::string, Entry, std::less<>>& values_;
  const pb::NodeProto& node_;
  int opset_;
  std::string name_;
  mutable std::set<std::string, std::less<>> read_;
};

} // namespace snippets::onnx::detail
