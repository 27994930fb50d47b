// SPDX-License-Identifier: Apache-2.0
// tools/test_case.hpp: a directory laid out like the ONNX node tests.
//
//   <case>/model.onnx
//   <case>/test_data_set_0/input_0.pb, input_1.pb, ..., output_0.pb, ...
//   <case>/test_data_set_1/...
// Inputs are numbered in the order of the graph's inputs that are not initializers, outputs in
// the order of the graph's outputs (the ONNX backend test convention).
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "snippets/frontend/onnx.hpp"

namespace snippets::tools {

struct DataSet {
  std::vector<onnx::HostTensor> inputs, outputs;
};

/// The files `<prefix><n>.pb` of `dir`, ordered by n.
inline std::vector<std::filesystem::path> numbered_files(const std::filesystem::path& dir,
                                                         const std::string& prefix) {
  std::vector<std::pair<int, std::filesystem::path>> found;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) != 0 || e.path().extension() != ".pb") continue;
    const std::string number = name.substr(prefix.size(), name.size() - prefix.size() - 3);
    if (number.empty() || number.find_first_not_of("0123456789") != std::string::npos) continue;
    found.emplace_back(std::stoi(number), e.path());
  }
  std::sort(found.begin(), found.end());
  std::vector<std::filesystem::path> out;
  for (auto& f : found) out.push_back(std::move(f.second));
  return out;
}

inline std::vector<DataSet> read_data_sets(const std::filesystem::path& case_dir) {
  std::vector<std::filesystem::path> dirs;
  for (const auto& e : std::filesystem::directory_iterator(case_dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0)
      dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  std::vector<DataSet> out;
  for (const auto& d : dirs) {
    DataSet s;
    for (const auto& f : numbered_files(d, "input_")) s.inputs.push_back(onnx::read_tensor(f));
    for (const auto& f : numbered_files(d, "output_")) s.outputs.push_back(onnx::read_tensor(f));
    out.push_back(std::move(s));
  }
  return out;
}

/// Older ONNX test data store FLOAT16 and BFLOAT16 tensors as UINT16 bit patterns (numpy has
/// no bfloat16); this reads them as the `declared` type.
inline onnx::HostTensor as_declared(onnx::HostTensor t, int declared) {
  const bool half =
      declared == onnx::pb::TensorProto::FLOAT16 || declared == onnx::pb::TensorProto::BFLOAT16;
  if (!half || t.dtype != onnx::pb::TensorProto::UINT16) return t;
  for (double& v : t.values) {
    const auto bits = static_cast<std::uint16_t>(v);
    v = declared == onnx::pb::TensorProto::FLOAT16 ? from_f16_bits(bits) : from_bf16_bits(bits);
  }
  t.dtype = declared;
  return t;
}

/// The element type a graph input or output declares (0 when it is not a tensor).
inline int declared_type(const onnx::pb::ValueInfoProto& v) {
  return v.type().has_tensor_type() ? v.type().tensor_type().elem_type() : 0;
}

/// Names of the graph inputs that are not initializers, in order.
inline std::vector<std::string> runtime_inputs(const onnx::pb::ModelProto& m) {
  std::vector<std::string> inits, out;
  for (const auto& i : m.graph().initializer()) inits.push_back(i.name());
  for (const auto& in : m.graph().input())
    if (std::find(inits.begin(), inits.end(), in.name()) == inits.end()) out.push_back(in.name());
  return out;
}

} // namespace snippets::tools
