// SPDX-License-Identifier: Apache-2.0
// snippets/reference/interpreter.hpp: evaluates any Graph on host tensors (the test oracle and
// the seed's "reference mode").
//
//   auto outputs = snippets::reference::evaluate(graph, {x, y});   // one Tensor per Result
//
// Contract:
//  - inputs match the graph's Parameters in order: same count, same element type, shapes
//    compatible with the declared ones (dynamic dims take any extent); otherwise
//    [snippets.reference.input_count|input_type|input_shape]. Input Values are first rounded
//    to their element type (an i32 input of 2.7 is 2), as a Tensor of that type would hold;
//  - every op is computed in double (but FakeQuantize and Quantize, defined in f32 steps:
//    reference/quantization.hpp); a node whose output type is an integer or boolean has
//    its values converted to that type (truncate toward zero, saturate) because that is the
//    op's meaning; float intermediates stay in double unless Options::round_each_node;
//  - outputs are encoded to each Result's element type once, at the end;
//  - Opaque nodes run Options::opaque[type_name]; a missing one is
//    [snippets.reference.opaque_without_callable]; Subgraph bodies are evaluated recursively.
#pragma once

#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "snippets/ir/graph.hpp"
#include "snippets/reference/eltwise.hpp"
#include "snippets/reference/quantization.hpp"
#include "snippets/reference/tensor_ops.hpp"

namespace snippets::reference {

/// Computes an Opaque op: inputs as Values, returns one Values per declared output.
using OpaqueFn = std::function<std::vector<Values>(std::span<const Values>)>;

struct Options {
  /// Round float intermediates to their node's element type after every node (emulates a
  /// kernel that stores every intermediate); off: intermediates keep double precision.
  bool round_each_node = false;
  std::map<std::string, OpaqueFn, std::less<>> opaque;
};

template <class T>
std::vector<Values> evaluate_values(const ir::Graph<T>& g, std::span<const Values> inputs,
                                    const Options& opt = {});

#if defined(SNIPPETS_PREBUILT) && !defined(SNIPPETS_DEFINE_TEMPLATES)
// snippets::prebuilt (which defines SNIPPETS_PREBUILT) holds the interpreter for the reference
// backend, compiled once (src/prebuilt.cpp through snippets/extern_templates.hpp): a program
// that only builds graphs and evaluates them then compiles none of it
extern template std::vector<Values>
evaluate_values<ReferenceBackend>(const ir::Graph<ReferenceBackend>&, std::span<const Values>,
                                  const Options&);
#endif

namespace detail {

inline void round_values(Values& v) {
  for (double& x : v.v) x = round_to(v.type, x);
}

template <class T>
std::vector<Values> eval_node(const ir::Node<T>& node, std::span<const Values> in,
                              const Options& opt) {
  std::vector<ir::TensorType> in_types;
  for (const Values& v : in) in_types.push_back({v.type, v.shape});
  const std::string who = node.describe();
  // re-run inference on the concrete shapes: this resolves dynamic dims and checks them
  const std::vector<ir::TensorType> out = ir::infer_types<T>(node.op, in_types, who);
  std::vector<const Values*> ptrs;
  for (const Values& v : in) ptrs.push_back(&v);

  return std::visit(
      [&](const auto& tag) -> std::vector<Values> {
        using Tag = std::decay_t<decltype(tag)>;
        if constexpr (std::is_same_v<Tag, ir::Parameter> || std::is_same_v<Tag, ir::Result>) {
          SNIPPETS_ASSERT(false) << "Parameters and Results are handled by evaluate()";
          return {};
        } else if constexpr (std::is_same_v<Tag, ir::Constant>) {
          // inference checked the count: one value per element, or one that fills (n may be 0)
          const auto n = static_cast<std::size_t>(tag.output.shape.element_count());
          Values v{tag.output.type, tag.output.shape, tag.values};
          if (tag.values.size() != n) v.v.assign(n, tag.values[0]);
          round_values(v); // a constant holds values of its type
          return {v};
        } else if constexpr (std::is_same_v<Tag, ir::Scalar>) {
          return {
              Values{tag.output.type, tag.output.shape, {round_to(tag.output.type, tag.value)}}};
        } else if constexpr (HasUnaryFormula<Tag>) {
          return {broadcast_map(out[0].type, out[0].shape, ptrs,
                                [&](std::span<const double> a) { return formula(tag, a[0]); })};
        } else if constexpr (std::is_same_v<Tag, ir::PRelu>) {
          Values slope = in[1];
          const Shape& x = in[0].shape;
          if (slope.shape.rank() == 1 && x.rank() >= 2 && slope.shape[0] != 1 &&
              slope.shape[0] == x[1]) {
            std::vector<Dim> dims(x.rank() - 1, 1); // per channel: [C, 1, ..., 1]
            dims[0] = slope.shape[0];
            slope.shape = Shape(dims);
          }
          const Values* args[] = {&in[0], &slope};
          return {broadcast_map(out[0].type, out[0].shape, args, [&](std::span<const double> a) {
            return formula(tag, a[0], a[1]);
          })};
        } else if constexpr (HasBinaryFormula<Tag>) {
          return {broadcast_map(out[0].type, out[0].shape, ptrs, [&](std::span<const double> a) {
            return formula(tag, a[0], a[1]);
          })};
        } else if constexpr (std::is_same_v<Tag, ir::Select>) {
          return {broadcast_map(out[0].type, out[0].shape, ptrs,
                                [](std::span<const double> a) { return a[0] != 0 ? a[1] : a[2]; })};
        } else if constexpr (std::is_same_v<Tag, ir::Convert>) {
          Values v{tag.to, in[0].shape, in[0].v};
          round_values(v);
          return {v};
        } else if constexpr (std::is_same_v<Tag, ir::FakeQuantize>) {
          return {broadcast_map(out[0].type, out[0].shape, ptrs, [&](std::span<const double> a) {
            return round_to(out[0].type, formula(tag, a[0], a[1], a[2], a[3], a[4]));
          })};
        } else if constexpr (std::is_same_v<Tag, ir::Quantize>) {
          return {broadcast_map(out[0].type, out[0].shape, ptrs, [&](std::span<const double> a) {
            return formula(tag, a[0], a[1], a[2]);
          })};
        } else if constexpr (ir::reduction<Tag>) {
          return {reduce(in[0], axis_mask(tag.axes, in[0].shape.rank(), who), reduce_kind(tag),
                         out[0].shape)};
        } else if constexpr (std::is_same_v<Tag, ir::Softmax>) {
          return {softmax(in[0], normalize_axis(tag.axis, in[0].shape.rank(), who))};
        } else if constexpr (std::is_same_v<Tag, ir::Transpose>) {
          return {transpose(in[0], tag.order, out[0].shape)};
        } else if constexpr (std::is_same_v<Tag, ir::Broadcast>) {
          return {broadcast_map(out[0].type, out[0].shape, ptrs,
                                [](std::span<const double> a) { return a[0]; })};
        } else if constexpr (std::is_same_v<Tag, ir::Reshape>) {
          return {Values{out[0].type, out[0].shape, in[0].v}};
        } else if constexpr (std::is_same_v<Tag, ir::Slice>) {
          return {slice(in[0], normalize_axis(tag.axis, in[0].shape.rank(), who), tag.start,
                        out[0].shape)};
        } else if constexpr (std::is_same_v<Tag, ir::MatMul>) {
          return {matmul(in[0], in[1], tag.transpose_a, tag.transpose_b, tag.a_zero_point,
                         out[0].type, out[0].shape)};
        } else if constexpr (std::is_same_v<Tag, ir::Opaque>) {
          const auto fn = opt.opaque.find(tag.type_name);
          if (fn == opt.opaque.end())
            raise("snippets.reference.opaque_without_callable",
                  who + " (type '" + tag.type_name +
                      "') has no callable; register one in reference::Options::opaque");
          std::vector<Values> r = fn->second(in);
          bool ok = r.size() == out.size();
          for (std::size_t i = 0; ok && i < r.size(); ++i)
            ok = r[i].type == out[i].type && compatible(r[i].shape, out[i].shape) &&
                 r[i].shape.is_static() &&
                 static_cast<std::int64_t>(r[i].v.size()) == r[i].shape.element_count();
          if (!ok)
            raise("snippets.reference.opaque_bad_output",
                  who + ": the callable's outputs do not match the declared output types");
          return r;
        } else if constexpr (std::is_same_v<Tag, ir::Subgraph<T>>) {
          return evaluate_values(*tag.body, in, opt);
        } else {
          static_assert(sizeof(Tag) == 0, "snippets: op has no reference implementation");
        }
      },
      node.op);
}

} // namespace detail

/// Evaluates `g` on `inputs` (as Values); returns one Values per Result, in result order.
template <class T>
std::vector<Values> evaluate_values(const ir::Graph<T>& g, std::span<const Values> inputs,
                                    const Options& opt) {
  const auto& params = g.parameters();
  if (inputs.size() != params.size())
    raise("snippets.reference.input_count",
          "the graph has " + std::to_string(params.size()) + " Parameter(s) but " +
              std::to_string(inputs.size()) + " input tensor(s) were given");
  std::vector<std::vector<Values>> values(g.size());
  for (std::size_t i = 0; i < params.size(); ++i) {
    const ir::Node<T>& p = g.node(params[i]);
    const ir::TensorType& declared = p.outputs[0];
    if (inputs[i].type != declared.type)
      raise("snippets.reference.input_type", "input " + std::to_string(i) + " ('" + p.name +
                                                 "') is " + std::string(to_string(inputs[i].type)) +
                                                 " but the Parameter is " +
                                                 std::string(to_string(declared.type)));
    if (!inputs[i].shape.is_static() || !compatible(inputs[i].shape, declared.shape) ||
        static_cast<std::int64_t>(inputs[i].v.size()) != inputs[i].shape.element_count())
      raise("snippets.reference.input_shape", "input " + std::to_string(i) + " ('" + p.name +
                                                  "') has shape " + inputs[i].shape.to_string() +
                                                  " but the Parameter is " +
                                                  declared.shape.to_string());
    values[params[i]] = {inputs[i]};
    detail::round_values(values[params[i]][0]); // Values may hold what the type cannot
  }
  // a value is released after its last reader: a long chain keeps two values, not all of them
  std::vector<std::size_t> readers(g.size(), 0);
  std::vector<bool> returned(g.size(), false);
  for (ir::NodeId id = 0; id < g.size(); ++id)
    for (const ir::Output& o : g.node(id).inputs) {
      ++readers[o.node];
      if (ir::is<ir::Result>(g.node(id).op)) returned[o.node] = true;
    }
  for (ir::NodeId id : g.topological_order()) {
    const ir::Node<T>& node = g.node(id);
    if (ir::is<ir::Parameter>(node.op) || ir::is<ir::Result>(node.op)) continue;
    std::vector<Values> in;
    for (const ir::Output& o : node.inputs) in.push_back(values[o.node][o.port]);
    values[id] = detail::eval_node(node, in, opt);
    for (Values& v : values[id])
      if (!is_float(v.type) || opt.round_each_node) detail::round_values(v);
    for (const ir::Output& o : node.inputs)
      if (--readers[o.node] == 0 && !returned[o.node]) values[o.node] = {};
  }
  std::vector<Values> out;
  for (ir::NodeId r : g.results()) {
    const ir::Output src = g.node(r).inputs[0];
    out.push_back(values[src.node][src.port]);
    detail::round_values(out.back());
  }
  return out;
}

/// Evaluates `g` on host tensors; returns one Tensor per Result, encoded to its element type.
template <class T>
std::vector<Tensor> evaluate(const ir::Graph<T>& g, std::span<const Tensor> inputs,
                             const Options& opt = {}) {
  std::vector<Values> in;
  for (const Tensor& t : inputs) in.push_back(t.values());
  std::vector<Tensor> out;
  for (const Values& v : evaluate_values(g, in, opt)) out.push_back(Tensor::from(v));
  return out;
}

template <class T>
std::vector<Tensor> evaluate(const ir::Graph<T>& g, std::initializer_list<Tensor> inputs,
                             const Options& opt = {}) {
  return evaluate(g, std::span<const Tensor>(inputs.begin(), inputs.size()), opt);
}

} // namespace snippets::reference
