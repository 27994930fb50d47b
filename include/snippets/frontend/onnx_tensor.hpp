// SPDX-License-Identifier: Apache-2.0
// snippets/frontend/onnx_tensor.hpp: ONNX TensorProto <-> host tensors, and TensorProto files.
//
//   auto x = snippets::onnx::read_tensor("test_data_set_0/input_0.pb");  // HostTensor
//   snippets::reference::Tensor t = x.to_tensor();                        // f32, i32, ...
//   snippets::onnx::write_tensor("out.pb", t, "y");
//
// A HostTensor holds any numeric ONNX tensor as doubles with its ONNX data type, so the
// importer can also read int64 shapes and axes, which no snippets ElementType holds. Every
// int64 or uint64 value that a model uses as a shape or axis is far below 2^53, so doubles
// hold them exactly; to_tensor() converts to a snippets ElementType (f32, f16, bf16, i32, i8,
// u8, boolean) or raises [snippets.onnx.unsupported_type]. Raw data is little-endian, as the
// ONNX format defines it; external data is not read ([snippets.onnx.bad_tensor]).
// Only this header and the other frontend/ headers include the protobuf-generated ONNX types.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "snippets/error.hpp"
#include "snippets/ir/element_type.hpp"
#include "snippets/reference/tensor.hpp"

namespace snippets::onnx {

namespace pb = ::onnx;

static_assert(std::endian::native == std::endian::little,
              "snippets: ONNX raw tensor data is little-endian; this host is not");

/// The name of an ONNX TensorProto data type ("FLOAT", "INT64", ...).
inline std::string data_type_name(int dtype) {
  if (pb::TensorProto_DataType_IsValid(dtype))
    return pb::TensorProto_DataType_Name(static_cast<pb::TensorProto_DataType>(dtype));
  return "data type " + std::to_string(dtype);
}

/// The snippets element type of an ONNX data type, or nothing (int64, double, string, ...).
inline std::optional<ElementType> element_type_of(int dtype) {
  switch (dtype) {
  case pb::TensorProto::FLOAT: return ElementType::f32;
  case pb::TensorProto::FLOAT16: return ElementType::f16;
  case pb::TensorProto::BFLOAT16: return ElementType::bf16;
  case pb::TensorProto::INT32: return ElementType::i32;
  case pb::TensorProto::INT8: return ElementType::i8;
  case pb::TensorProto::UINT8: return ElementType::u8;
  case pb::TensorProto::BOOL: return ElementType::boolean;
  default: return std::nullopt;
  }
}

/// The ONNX data type of a snippets element type.
inline int data_type_of(ElementType t) {
  switch (t) {
  case ElementType::f32: return pb::TensorProto::FLOAT;
  case ElementType::f16: return pb::TensorProto::FLOAT16;
  case ElementType::bf16: return pb::TensorProto::BFLOAT16;
  case ElementType::i32: return pb::TensorProto::INT32;
  case ElementType::i8: return pb::TensorProto::INT8;
  case ElementType::u8: return pb::TensorProto::UINT8;
  case ElementType::boolean: return pb::TensorProto::BOOL;
  }
  return pb::TensorProto::UNDEFINED;
}

/// Raises [snippets.onnx.unsupported_type] unless `dtype` has a snippets element type.
inline ElementType require_element_type(int dtype, const std::string& what) {
  if (const auto t = element_type_of(dtype)) return *t;
  raise("snippets.onnx.unsupported_type",
        what + " is " + data_type_name(dtype) +
            "; snippets tensors are FLOAT, FLOAT16, BFLOAT16, INT32, INT8, UINT8 or BOOL (Cast "
            "the model's tensor, or leave this part of the model to another runtime)");
}

/// Any numeric ONNX tensor, values as doubles in planar order.
struct HostTensor {
  int dtype = pb::TensorProto::FLOAT;
  std::vector<std::int64_t> dims;
  std::vector<double> values;

  /// Raises [snippets.shape.too_many_elements] when the count overflows int64.
  std::int64_t element_count() const { return shape().element_count(); }
  Shape shape() const { return Shape(std::vector<Dim>(dims.begin(), dims.end())); }
  /// The values as integers (shapes, axes).
  std::vector<std::int64_t> ints() const {
    return std::vector<std::int64_t>(values.begin(), values.end());
  }
  /// As a snippets tensor; raises [snippets.onnx.unsupported_type] for int64, double, ...
  reference::Tensor to_tensor(const std::string& what = "the tensor") const {
    return reference::Tensor::from_values(require_element_type(dtype, what), shape(), values);
  }
  static HostTensor from_tensor(const reference::Tensor& t) {
    HostTensor h{data_type_of(t.type()), {}, {}};
    h.dims.assign(t.shape().begin(), t.shape().end());
    h.values = t.values().v;
    return h;
  }
};

namespace detail {

template <class V> void append_raw(const std::string& raw, std::vector<double>& out) {
  out.reserve(raw.size() / sizeof(V));
  for (std::size_t i = 0; i + sizeof(V) <= raw.size(); i += sizeof(V)) {
    V v;
    std::memcpy(&v, raw.data() + i, sizeof(V));
    out.push_back(static_cast<double>(v));
  }
}

inline std::size_t raw_size_of(int dtype) {
  switch (dtype) {
  case pb::TensorProto::DOUBLE:
  case pb::TensorProto::INT64:
  case pb::TensorProto::UINT64: return 8;
  case pb::TensorProto::FLOAT:
  case pb::TensorProto::INT32:
  case pb::TensorProto::UINT32: return 4;
  case pb::TensorProto::FLOAT16:
  case pb::TensorProto::BFLOAT16:
  case pb::TensorProto::INT16:
  case pb::TensorProto::UINT16: return 2;
  case pb::TensorProto::INT8:
  case pb::TensorProto::UINT8:
  case pb::TensorProto::BOOL: return 1;
  default: return 0;
  }
}

inline double half_like(int dtype, std::uint32_t bits) {
  const auto b = static_cast<std::uint16_t>(bits);
  return dtype == pb::TensorProto::FLOAT16 ? from_f16_bits(b) : from_bf16_bits(b);
}

/// s.element_count(), with `who` named in the error of a count that overflows int64.
inline std::int64_t counted(const Shape& s, const std::string& who) {
  try {
    return s.element_count();
  } catch (const Error& e) {
    const std::string what = e.what();
    raise(e.id(), who + ": " + what.substr(what.find("] ") + 2));
  }
}

} // namespace detail

/// Decodes a TensorProto; `what` names it in errors.
inline HostTensor to_host(const pb::TensorProto& p, const std::string& what = "tensor") {
  const std::string who = what + (p.name().empty() ? "" : " '" + p.name() + "'");
  HostTensor h;
  h.dtype = p.data_type();
  for (auto d : p.dims()) {
    if (d < 0)
      raise("snippets.onnx.bad_tensor", who + " has a negative dimension " + std::to_string(d));
    h.dims.push_back(d);
  }
  const std::int64_t count = detail::counted(h.shape(), who);
  if (p.data_location() == pb::TensorProto::EXTERNAL || p.external_data_size() > 0)
    raise("snippets.onnx.bad_tensor",
          who + " keeps its data in an external file, which snippets does not read; save the "
                "model with its tensors inside (onnx.save(..., save_as_external_data=False))");
  const std::size_t raw = detail::raw_size_of(h.dtype);
  if (raw == 0)
    raise("snippets.onnx.unsupported_type",
          who + " is " + data_type_name(h.dtype) + ", which snippets cannot read");
  auto& v = h.values;
  if (p.has_raw_data()) {
    const std::string& r = p.raw_data();
    switch (h.dtype) {
    case pb::TensorProto::FLOAT: detail::append_raw<float>(r, v); break;
    case pb::TensorProto::DOUBLE: detail::append_raw<double>(r, v); break;
    case pb::TensorProto::INT64: detail::append_raw<std::int64_t>(r, v); break;
    case pb::TensorProto::UINT64: detail::append_raw<std::uint64_t>(r, v); break;
    case pb::TensorProto::INT32: detail::append_raw<std::int32_t>(r, v); break;
    case pb::TensorProto::UINT32: detail::append_raw<std::uint32_t>(r, v); break;
    case pb::TensorProto::INT16: detail::append_raw<std::int16_t>(r, v); break;
    case pb::TensorProto::UINT16: detail::append_raw<std::uint16_t>(r, v); break;
    case pb::TensorProto::INT8: detail::append_raw<std::int8_t>(r, v); break;
    case pb::TensorProto::UINT8: detail::append_raw<std::uint8_t>(r, v); break;
    case pb::TensorProto::BOOL:
      detail::append_raw<std::uint8_t>(r, v);
      for (double& x : v) x = x != 0;
      break;
    default: { // FLOAT16, BFLOAT16
      std::vector<double> bits;
      detail::append_raw<std::uint16_t>(r, bits);
      for (double b : bits) v.push_back(detail::half_like(h.dtype, static_cast<std::uint32_t>(b)));
    }
    }
    if (r.size() % raw != 0) v.clear(); // reported below as a count mismatch
  } else {
    switch (h.dtype) {
    case pb::TensorProto::FLOAT: v.assign(p.float_data().begin(), p.float_data().end()); break;
    case pb::TensorProto::DOUBLE: v.assign(p.double_data().begin(), p.double_data().end()); break;
    case pb::TensorProto::INT64: v.assign(p.int64_data().begin(), p.int64_data().end()); break;
    case pb::TensorProto::UINT32:
    case pb::TensorProto::UINT64: v.assign(p.uint64_data().begin(), p.uint64_data().end()); break;
    case pb::TensorProto::FLOAT16:
    case pb::TensorProto::BFLOAT16:
      for (auto b : p.int32_data()) v.push_back(detail::half_like(h.dtype, std::uint32_t(b)));
      break;
    default: v.assign(p.int32_data().begin(), p.int32_data().end()); // int32 and narrower, bool
    }
  }
  if (static_cast<std::int64_t>(v.size()) != count)
    raise("snippets.onnx.bad_tensor", who + " has shape with " + std::to_string(count) +
                                          " elements but " + std::to_string(v.size()) + " values");
  return h;
}

/// Encodes a snippets tensor as a TensorProto (raw data).
inline pb::TensorProto to_proto(const reference::Tensor& t, const std::string& name = {}) {
  pb::TensorProto p;
  p.set_name(name);
  p.set_data_type(data_type_of(t.type()));
  for (Dim d : t.shape()) p.add_dims(d);
  p.set_raw_data(std::string(static_cast<const char*>(t.data()), t.byte_size()));
  return p;
}

namespace detail {
/// The bytes of a model or tensor file. Only regular files are read (a device such as /dev/zero
/// or a pipe never ends), no more than the size the file had when opened, and at most 2 GiB,
/// the most protobuf parses.
inline std::string read_file(const std::filesystem::path& path, const char* what) {
  // messages are appended piecewise: g++ 12 reports a false -Wrestrict on a chain of operator+
  std::string who = what;
  who.append(" '").append(path.string()).append("'");
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
    raise("snippets.onnx.not_a_file",
          who + " is not a regular file (a folder, device or pipe); give the path of a file");
  const auto size = std::filesystem::file_size(path, ec);
  std::ifstream in(path, std::ios::binary);
  if (ec || !in) raise("snippets.onnx.file", "cannot open " + who);
  if (size > static_cast<std::uintmax_t>(std::numeric_limits<int>::max()))
    raise("snippets.onnx.file_too_large",
          who + " has " + std::to_string(size) +
              " bytes; protobuf parses at most 2 GiB, so snippets reads no larger model or "
              "tensor file");
  std::string bytes(static_cast<std::size_t>(size), '\0');
  if (!in.read(bytes.data(), static_cast<std::streamsize>(size)))
    raise("snippets.onnx.file", "cannot read the " + std::to_string(size) + " bytes of " + who);
  return bytes;
}
} // namespace detail

/// Reads a serialized TensorProto (the test_data_set_*/input_*.pb files).
inline HostTensor read_tensor(const std::filesystem::path& path) {
  const std::string bytes = detail::read_file(path, "tensor file");
  pb::TensorProto p;
  if (!p.ParseFromString(bytes))
    raise("snippets.onnx.bad_tensor",
          "'" + path.string() + "' is not a serialized ONNX TensorProto");
  return to_host(p, "tensor in '" + path.string() + "'");
}

/// The name stored in a TensorProto file (the graph input or output it belongs to), or "".
inline std::string tensor_name(const std::filesystem::path& path) {
  pb::TensorProto p;
  if (!p.ParseFromString(detail::read_file(path, "tensor file"))) return {};
  return p.name();
}

/// Writes `t` as a serialized TensorProto.
inline void write_tensor(const std::filesystem::path& path, const reference::Tensor& t,
                         const std::string& name = {}) {
  std::ofstream out(path, std::ios::binary);
  if (!out || !to_proto(t, name).SerializeToOstream(&out)) {
    std::string msg = "cannot write tensor file '";
    msg.append(path.string()).append("'");
    raise("snippets.onnx.file", msg);
  }
}

} // namespace snippets::onnx
