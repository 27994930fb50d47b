// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "error_id.hpp"
#include "snippets/ir/layout.hpp"

using snippets::dynamic;
using snippets::Error;
using snippets::Layout;
using snippets::Shape;

namespace {

std::int64_t offset_of(const Layout& l, const Shape& s, std::vector<std::int64_t> idx) {
  return l.offset(s, idx);
}

} // namespace

TEST_CASE("the default layout is planar for any rank") {
  const Layout l;
  CHECK(l.is_planar());
  CHECK_FALSE(l.is_blocked());
  CHECK(l.order().empty());
  CHECK(l.physical_shape(Shape{2, 3, 4}) == Shape{2, 3, 4});
  CHECK(l.physical_shape(Shape{}) == Shape{});
  CHECK(l.to_string(4) == "abcd");
  CHECK(l == Layout::planar(4));
  CHECK(Layout::planar(3).is_planar());
  CHECK(Layout::planar(3).order() == std::vector<std::size_t>{0, 1, 2});
  CHECK_NOTHROW(l.check_rank(7));
}

TEST_CASE("planar offsets are row-major") {
  const Shape s{2, 3, 4};
  CHECK(offset_of(Layout{}, s, {0, 0, 0}) == 0);
  CHECK(offset_of(Layout{}, s, {0, 0, 3}) == 3);
  CHECK(offset_of(Layout{}, s, {0, 1, 0}) == 4);
  CHECK(offset_of(Layout{}, s, {1, 2, 3}) == 23);
  CHECK(offset_of(Layout::planar(3), s, {1, 0, 2}) == 14);
}

TEST_CASE("channels_last is order {0,2,3,1} and NHWC in memory") {
  const Layout l = Layout::channels_last(4);
  CHECK(l.order() == std::vector<std::size_t>{0, 2, 3, 1});
  CHECK_FALSE(l.is_planar());
  CHECK_FALSE(l.is_blocked());
  CHECK(l.to_string(4) == "acdb");
  const Shape nchw{2, 3, 4, 5};
  CHECK(l.physical_shape(nchw) == Shape{2, 4, 5, 3});
  // offset = ((n*H + h)*W + w)*C + c
  CHECK(offset_of(l, nchw, {0, 0, 0, 0}) == 0);
  CHECK(offset_of(l, nchw, {0, 1, 0, 0}) == 1);
  CHECK(offset_of(l, nchw, {0, 0, 0, 1}) == 3);
  CHECK(offset_of(l, nchw, {0, 0, 1, 0}) == 15);
  CHECK(offset_of(l, nchw, {1, 2, 3, 4}) == ((1 * 4 + 3) * 5 + 4) * 3 + 2);
  CHECK(Layout::channels_last(3).order() == std::vector<std::size_t>{0, 2, 1});
  CHECK(Layout::channels_last(5).to_string(5) == "acdeb");
  CHECK(error_id([] { Layout::channels_last(2); }) == "snippets.layout.invalid");
}

TEST_CASE("blocked NCHW16c has physical shape [N, ceil(C/16), H, W, 16]") {
  const Layout l = Layout::blocked({0, 1, 2, 3}, 1, 16);
  CHECK(l.is_blocked());
  CHECK_FALSE(l.is_planar());
  CHECK(l.block_axis() == 1);
  CHECK(l.block_size() == 16);
  CHECK(l.to_string(4) == "aBcd16b");
  CHECK(l.physical_shape(Shape{2, 32, 5, 7}) == Shape{2, 2, 5, 7, 16});
  CHECK(l.physical_shape(Shape{2, 17, 5, 7}) == Shape{2, 2, 5, 7, 16}); // 17 channels: 2 blocks
  CHECK(l.physical_shape(Shape{1, 16, 1, 1}) == Shape{1, 1, 1, 1, 16});
  CHECK(l.physical_shape(Shape{1, 1, 1, 1}) == Shape{1, 1, 1, 1, 16});
  CHECK(l.physical_shape(Shape{1, 0, 2, 2}) == Shape{1, 0, 2, 2, 16});
  CHECK(l.physical_shape(Shape{1, dynamic, 2, 2}) == Shape{1, dynamic, 2, 2, 16});
}

TEST_CASE("blocked offsets: outer block index in the order, inner index last") {
  const Layout l = Layout::blocked({0, 1, 2, 3}, 1, 16);
  const Shape s{2, 17, 3, 4}; // physical [2, 2, 3, 4, 16]
  // offset = ((((n*2 + c/16)*3 + h)*4 + w)*16 + c%16
  CHECK(offset_of(l, s, {0, 0, 0, 0}) == 0);
  CHECK(offset_of(l, s, {0, 1, 0, 0}) == 1);
  CHECK(offset_of(l, s, {0, 15, 0, 0}) == 15);
  CHECK(offset_of(l, s, {0, 0, 0, 1}) == 16);
  CHECK(offset_of(l, s, {0, 16, 0, 0}) == 3 * 4 * 16);
  CHECK(offset_of(l, s, {1, 0, 0, 0}) == 2 * 3 * 4 * 16);
  CHECK(offset_of(l, s, {1, 16, 2, 3}) == (((1 * 2 + 1) * 3 + 2) * 4 + 3) * 16 + 0);
  CHECK(offset_of(l, s, {1, 5, 1, 2}) == (((1 * 2 + 0) * 3 + 1) * 4 + 2) * 16 + 5);
}

TEST_CASE("a blocked channels-last layout (NHWC8c) combines order and block") {
  const Layout l = Layout::blocked({0, 2, 3, 1}, 1, 8);
  CHECK(l.to_string(4) == "acdB8b");
  const Shape s{1, 10, 2, 3};
  CHECK(l.physical_shape(s) == Shape{1, 2, 3, 2, 8});
  // offset = (((n*H + h)*W + w)*Cb + c/8)*8 + c%8
  CHECK(offset_of(l, s, {0, 9, 1, 2}) == (((0 * 2 + 1) * 3 + 2) * 2 + 1) * 8 + 1);
}

TEST_CASE("every in-range index of a layout maps to a distinct in-buffer offset") {
  const Shape s{2, 5, 3};
  for (const Layout& l : {Layout{}, Layout::channels_last(3), Layout::blocked({0, 1, 2}, 1, 4),
                          Layout::blocked({2, 0, 1}, 2, 2), Layout::permuted({2, 1, 0})}) {
    CAPTURE(l.to_string(3));
    const auto size = l.physical_shape(s).element_count();
    std::vector<int> hits(static_cast<std::size_t>(size), 0);
    for (std::int64_t a = 0; a < 2; ++a)
      for (std::int64_t b = 0; b < 5; ++b)
        for (std::int64_t c = 0; c < 3; ++c) {
          const auto off = offset_of(l, s, {a, b, c});
          REQUIRE(off >= 0);
          REQUIRE(off < size);
          ++hits[static_cast<std::size_t>(off)];
        }
    for (int h : hits) CHECK(h <= 1);
  }
}

TEST_CASE("permuted layouts and to_string") {
  const Layout l = Layout::permuted({1, 0});
  CHECK(l.to_string(2) == "ba");
  CHECK(l.physical_shape(Shape{2, 3}) == Shape{3, 2});
  CHECK(offset_of(l, Shape{2, 3}, {1, 2}) == 2 * 2 + 1);
  CHECK(Layout::permuted({0, 1}).is_planar());
  CHECK(Layout::permuted({0, 1}) == Layout{});
  CHECK_FALSE(Layout::permuted({1, 0}) == Layout{});
  CHECK_FALSE(Layout::blocked({0, 1}, 1, 8) == Layout::blocked({0, 1}, 1, 16));
  CHECK(Layout::blocked({0, 1}, 1, 8) == Layout::blocked({0, 1}, 1, 8));
}

TEST_CASE("invalid orders and blocks throw snippets.layout.invalid") {
  CHECK(error_id([] { Layout::permuted({0, 0, 1}); }) == "snippets.layout.invalid");
  CHECK(error_id([] { Layout::permuted({0, 3}); }) == "snippets.layout.invalid");
  CHECK(error_id([] { Layout::blocked({0, 1, 2, 3}, 4, 16); }) == "snippets.layout.invalid");
  CHECK(error_id([] { Layout::blocked({0, 1, 2, 3}, 1, 1); }) == "snippets.layout.invalid");
  CHECK(error_id([] { Layout::blocked({0, 1, 2, 3}, 1, 0); }) == "snippets.layout.invalid");
  CHECK(error_id([] { Layout::blocked({0, 1, 2, 3}, 1, -16); }) == "snippets.layout.invalid");
  CHECK(error_id([] { Layout::blocked({}, 0, 16); }) == "snippets.layout.invalid");
  CHECK(error_id([] { Layout::blocked({0, 1, 1, 3}, 1, 16); }) == "snippets.layout.invalid");
  // a huge axis must not wrap around to "not blocked"
  CHECK(error_id([] {
          Layout::blocked({0, 1}, static_cast<std::size_t>(-1), 16);
        }) == "snippets.layout.invalid");
}

TEST_CASE("a layout of another rank than the tensor throws snippets.layout.rank_mismatch") {
  const Layout l = Layout::channels_last(4);
  CHECK(error_id([&] { l.check_rank(3); }) == "snippets.layout.rank_mismatch");
  CHECK(error_id([&] { l.physical_shape(Shape{1, 2, 3}); }) == "snippets.layout.rank_mismatch");
  CHECK_NOTHROW(l.check_rank(4));
  const Layout b = Layout::blocked({0, 1, 2, 3}, 1, 16);
  CHECK(error_id([&] { b.physical_shape(Shape{1, 2}); }) == "snippets.layout.rank_mismatch");
}

TEST_CASE("offset rejects indices of the wrong rank, out of range, or into dynamic shapes") {
  const Layout l;
  CHECK(error_id([&] { offset_of(l, Shape{2, 3}, {1}); }) == "snippets.layout.rank_mismatch");
  CHECK(error_id([&] {
          offset_of(l, Shape{2, 3}, {1, 3});
        }) == "snippets.layout.index_out_of_range");
  CHECK(error_id([&] {
          offset_of(l, Shape{2, 3}, {-1, 0});
        }) == "snippets.layout.index_out_of_range");
  CHECK(error_id([&] { offset_of(l, Shape{2, dynamic}, {0, 0}); }) == "snippets.shape.dynamic");
  const Layout b = Layout::blocked({0, 1}, 1, 16);
  // 17 channels: index 17..31 is padding of the last block, not a logical element
  CHECK(error_id([&] {
          offset_of(b, Shape{1, 17}, {0, 17});
        }) == "snippets.layout.index_out_of_range");
}
