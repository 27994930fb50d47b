// SPDX-License-Identifier: Apache-2.0
// snippets/frontend/onnx_model.hpp: what loading an ONNX model takes (LoadOptions) and gives
// (Model).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "snippets/default_traits.hpp"
#include "snippets/frontend/onnx_tensor.hpp"
#include "snippets/ir/graph.hpp"

namespace snippets::onnx {

struct LoadOptions {
  /// Shapes for graph inputs, by name. Required for an input without a shape in the model; a
  /// given shape must agree with the model's fixed dimensions. Symbolic dimensions not fixed
  /// here stay dynamic (a Program compiles the model once for every size), where the ops
  /// reading them allow it [snippets.onnx.dynamic_shape].
  std::map<std::string, Shape, std::less<>> input_shapes;
  /// Values of graph inputs that the model uses only as shapes, axes or flags (Reshape's
  /// shape, ReduceSum's axes, ...): such an input is folded into the model and is no
  /// Parameter. An input listed here that feeds any run-time operand stays a Parameter.
  std::map<std::string, HostTensor, std::less<>> input_values;
  /// Ops outside our op set become ir::Opaque nodes (types from ONNX shape inference) so the
  /// whole model loads and tokenizes; false: they raise [snippets.onnx.unsupported_op].
  bool allow_opaque = true;
};

/// An ONNX op that became an ir::Opaque node, and why.
struct OpaqueOp {
  std::string node;    // the ONNX node's name (or its first output's)
  std::string op_type; // e.g. "Conv"
  std::string reason;
};

template <class T = DefaultTraits> struct Model {
  ir::Graph<T> graph;
  /// ONNX names of the graph's Parameters and Results, in order.
  std::vector<std::string> inputs, outputs;
  /// Graph inputs folded into the model (LoadOptions::input_values).
  std::vector<std::string> folded_inputs;
  std::vector<OpaqueOp> opaque;
  std::int64_t opset = 0; // of the default ONNX domain
  std::string producer;   // producer_name and version, as the file states them
};

} // namespace snippets::onnx
