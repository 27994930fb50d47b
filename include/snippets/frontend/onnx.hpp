// SPDX-License-Identifier: Apache-2.0
// snippets/frontend/onnx.hpp: the ONNX importer (CMake target snippets::onnx).
//
//   auto model = snippets::onnx::load("mlp.onnx", {.input_shapes = {{"x", {8, 256}}}});
//   snippets::Program<> program(model.graph);            // tokenized, one JIT kernel per Subgraph
//   auto x = snippets::onnx::read_tensor("input_0.pb").to_tensor();
//   auto y = program.run(std::vector{x});
//
// What maps: the elementwise, activation, comparison and logical ops, Cast, Reshape / Flatten /
// Squeeze / Unsqueeze / Transpose / Expand, MatMul and Gemm, the Reduce* family, Softmax and
// LogSoftmax, the normalizations, QuantizeLinear and DequantizeLinear (supported_ops() lists them;
// docs/onnx.md says how each maps). Shape arithmetic on static shapes (Shape, Size, Slice, Concat,
// Gather, ConstantOfShape, ...) is computed while loading. Every other op becomes an ir::Opaque
// node with the op type as its name (disable with LoadOptions::allow_opaque), so a whole model
// loads and tokenizes; running it then needs an OpaqueKernel per foreign op type
// (ProgramOptions::opaque).
//
// Shapes are static: symbolic dimensions of graph inputs must be fixed with
// LoadOptions::input_shapes. Tensors are the snippets element types (FLOAT, FLOAT16, BFLOAT16,
// INT32, INT8, UINT8, BOOL); int64 appears only in values known at load time.
//
// Errors ([snippets.onnx.*], docs/errors.md) name the ONNX node and the problem: bad_model,
// missing_input, duplicate_name, unsupported_version, unsupported_op, unsupported_type,
// unsupported_attribute, not_constant, dynamic_shape, bad_tensor, bad_quantization, file,
// not_a_file, file_too_large; element counts that overflow int64 raise
// [snippets.shape.too_many_elements]. This header and the other frontend/ headers are the only ones
// that include protobuf and ONNX.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "snippets/frontend/onnx_importer.hpp"
#include "snippets/frontend/onnx_model.hpp"
#include "snippets/frontend/onnx_tensor.hpp"

namespace snippets::onnx {

/// Parses a serialized ModelProto; raises [snippets.onnx.bad_model] for anything else.
inline pb::ModelProto parse_model(std::string_view bytes, const std::string& what = "the input") {
  pb::ModelProto m;
  if (bytes.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()) ||
      !m.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) || !m.has_graph())
    raise("snippets.onnx.bad_model", what + " is not a serialized ONNX model (ModelProto with a "
                                            "graph)");
  return m;
}

/// Reads and parses a .onnx file.
inline pb::ModelProto read_model(const std::filesystem::path& path) {
  std::string what = "'"; // appended piecewise: g++ 12 reports a false -Wrestrict on "'" + ...
  what.append(path.string()).append("'");
  return parse_model(detail::read_file(path, "model"), what);
}

/// Builds a Graph from a parsed model.
template <class T = DefaultTraits>
Model<T> import_model(const pb::ModelProto& model, const LoadOptions& options = {}) {
  return detail::Importer<T>(model, options).run();
}

/// Reads a .onnx file and builds its Graph.
template <class T = DefaultTraits>
Model<T> load(const std::filesystem::path& path, const LoadOptions& options = {}) {
  return import_model<T>(read_model(path), options);
}

/// Builds a Graph from the bytes of a serialized model.
template <class T = DefaultTraits>
Model<T> load_from_bytes(std::string_view bytes, const LoadOptions& options = {}) {
  return import_model<T>(parse_model(bytes), options);
}

/// The ONNX op types (default domain) the importer maps to our op set, sorted.
inline std::vector<std::string> supported_ops() {
  std::vector<std::string> out;
  for (const auto& [name, _] : detail::op_table<DefaultTraits>()) out.push_back(name);
  return out;
}

/// The op types of `model` that the importer does not map (they would become Opaque), sorted
/// and unique; ops of other domains are given as "domain:Op".
inline std::vector<std::string> unsupported_ops(const pb::ModelProto& model) {
  std::set<std::string> out;
  const auto& table = detail::op_table<DefaultTraits>();
  for (const auto& node : model.graph().node()) {
    if (!detail::default_domain(node.domain()))
      out.insert(node.domain() + ":" + node.op_type());
    else if (!table.count(node.op_type()))
      out.insert(node.op_type());
  }
  return {out.begin(), out.end()};
}

} // namespace snippets::onnx
