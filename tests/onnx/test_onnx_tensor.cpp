// SPDX-License-Identifier: Apache-2.0
// Tests of frontend/onnx_tensor.hpp: TensorProto <-> host tensors and TensorProto files.
#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>

#include "../error_id.hpp"
#include "model_builder.hpp"
#include "snippets/frontend/onnx_tensor.hpp"

namespace {
namespace ox = snippets::onnx;
using namespace onnx_test;
using snippets::ElementType;
using snippets::reference::Tensor;
} // namespace

TEST_CASE("onnx tensors: typed fields and raw data decode to the same values") {
  const pb::TensorProto typed = tensor(FLOAT, {2, 2}, {1.5, -2, 0, 3.25}, "t");
  const auto h = ox::to_host(typed);
  CHECK(h.dtype == FLOAT);
  CHECK(h.dims == std::vector<std::int64_t>{2, 2});
  CHECK(h.values == std::vector<double>{1.5, -2, 0, 3.25});
  const auto raw = ox::to_proto(h.to_tensor(), "t");
  CHECK(raw.has_raw_data());
  CHECK(ox::to_host(raw).values == h.values);

  const auto i64 = ox::to_host(tensor(INT64, {3}, {-1, 0, 7}));
  CHECK(i64.ints() == std::vector<std::int64_t>{-1, 0, 7});
  CHECK(error_id([&] { i64.to_tensor(); }) == "snippets.onnx.unsupported_type");
}

TEST_CASE("onnx tensors: FLOAT16 in int32_data holds bit patterns; BOOL raw bytes are 0/1") {
  pb::TensorProto half;
  half.set_data_type(pb::TensorProto::FLOAT16);
  half.add_dims(2);
  half.add_int32_data(0x3c00); // 1.0
  half.add_int32_data(0xc000); // -2.0
  CHECK(ox::to_host(half).values == std::vector<double>{1.0, -2.0});
  CHECK(ox::to_host(half).to_tensor().type() == ElementType::f16);

  pb::TensorProto b;
  b.set_data_type(BOOL);
  b.add_dims(3);
  b.set_raw_data(std::string("\x00\x01\x05", 3));
  CHECK(ox::to_host(b).values == std::vector<double>{0, 1, 1});
}

TEST_CASE("onnx tensors: files round-trip with their name") {
  const auto path = std::filesystem::temp_directory_path() / "snippets_onnx_tensor_test.pb";
  const Tensor t = Tensor::from_values(ElementType::i32, {2, 3}, {1, -2, 3, -4, 5, -6});
  ox::write_tensor(path, t, "x");
  CHECK(ox::tensor_name(path) == "x");
  const auto back = ox::read_tensor(path);
  CHECK(back.dtype == INT32);
  CHECK(back.shape() == snippets::Shape{2, 3});
  const Tensor u = back.to_tensor();
  CHECK(std::memcmp(u.data(), t.data(), t.byte_size()) == 0);
  std::filesystem::remove(path);
}
