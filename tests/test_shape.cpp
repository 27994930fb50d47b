// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "error_id.hpp"
#include "snippets/ir/shape.hpp"

using snippets::broadcast;
using snippets::Dim;
using snippets::dynamic;
using snippets::Error;
using snippets::Shape;

namespace {

constexpr Dim Q = dynamic;

/// The stable id of the Error `f` throws, or "" when it throws none.
} // namespace

TEST_CASE("a shape rejects negative dimensions other than dynamic") {
  CHECK(error_id([] { Shape{1, -2, 3}; }) == "snippets.shape.negative_dim");
  CHECK(error_id([] { Shape(std::vector<Dim>{-7}); }) == "snippets.shape.negative_dim");
  const std::vector<Dim> dims{4, -3};
  CHECK(error_id([&] { Shape(std::span<const Dim>(dims)); }) == "snippets.shape.negative_dim");
  CHECK_NOTHROW(Shape{1, Q, 0});
  try {
    Shape{1, -2};
  } catch (const Error& e) {
    const std::string what = e.what();
    CHECK(what.find("-2") != std::string::npos);
    CHECK(what.find("snippets::dynamic") != std::string::npos);
  }
}

TEST_CASE("element_count multiplies static dims and rejects dynamic shapes and overflow") {
  CHECK(Shape{}.element_count() == 1);
  CHECK(Shape{2, 3, 4}.element_count() == 24);
  CHECK(Shape{2, 0, 4}.element_count() == 0);
  CHECK(Shape{1, Q}.is_static() == false);
  CHECK(Shape{1, 2}.is_static());
  CHECK(error_id([] { Shape{1, Q, 3}.element_count(); }) == "snippets.shape.dynamic");
  const Dim big = Dim{1} << 32;
  CHECK(Shape{big, big / 4}.element_count() == (std::int64_t{1} << 62));
  CHECK(error_id([&] {
          Shape{big, big / 2}.element_count();
        }) == "snippets.shape.too_many_elements");
  CHECK(error_id([&] { Shape{big, big}.element_count(); }) == "snippets.shape.too_many_elements");
  CHECK(Shape{big, big, 0}.element_count() == 0); // a zero extent wins over the overflow
}

TEST_CASE("to_string prints dims in brackets with ? for dynamic") {
  CHECK(Shape{}.to_string() == "[]");
  CHECK(Shape{7}.to_string() == "[7]");
  CHECK(Shape{1, 3, Q, Q}.to_string() == "[1,3,?,?]");
  CHECK(Shape{0, 5}.to_string() == "[0,5]");
}

TEST_CASE("shape accessors and equality") {
  const Shape s{2, Q, 4};
  CHECK(s.rank() == 3);
  CHECK(s[1] == Q);
  CHECK(s.back() == 4);
  CHECK(std::vector<Dim>(s.begin(), s.end()) == std::vector<Dim>{2, Q, 4});
  CHECK(s.dims().size() == 3);
  CHECK(s == Shape{2, Q, 4});
  CHECK(s != Shape{2, 3, 4});
  CHECK(Shape{}.rank() == 0);
}

TEST_CASE("compatible treats dynamic dims as wildcards of equal rank") {
  CHECK(snippets::compatible(Shape{2, Q}, Shape{2, 5}));
  CHECK(snippets::compatible(Shape{Q, Q}, Shape{3, 5}));
  CHECK_FALSE(snippets::compatible(Shape{2, 3}, Shape{2, 5}));
  CHECK_FALSE(snippets::compatible(Shape{2}, Shape{2, 1}));
  CHECK(snippets::compatible(Shape{}, Shape{}));
}

TEST_CASE("broadcasting follows NUMPY rules for static shapes") {
  struct Case {
    Shape a, b, out;
  };
  const std::vector<Case> cases = {
      {{2, 3}, {2, 3}, {2, 3}},
      {{2, 3}, {1, 3}, {2, 3}},
      {{2, 1}, {1, 3}, {2, 3}},
      {{4, 1, 5}, {3, 1}, {4, 3, 5}},
      {{3}, {2, 1}, {2, 3}},
      {{}, {2, 3}, {2, 3}},
      {{}, {}, {}},
      {{1}, {}, {1}},
      {{0, 3}, {1, 3}, {0, 3}},
      {{0}, {1}, {0}},
      {{1, 1}, {0}, {1, 0}},
  };
  for (const auto& c : cases) {
    CAPTURE(c.a.to_string());
    CAPTURE(c.b.to_string());
    CHECK(broadcast(c.a, c.b) == c.out);
    CHECK(broadcast(c.b, c.a) == c.out); // symmetric
  }
}

TEST_CASE("broadcasting with dynamic dims: ? vs 1 is ?, ? vs n is n, ? vs ? is ?") {
  CHECK(broadcast(Shape{Q}, Shape{1}) == Shape{Q});
  CHECK(broadcast(Shape{1}, Shape{Q}) == Shape{Q});
  CHECK(broadcast(Shape{Q}, Shape{5}) == Shape{5});
  CHECK(broadcast(Shape{5}, Shape{Q}) == Shape{5});
  CHECK(broadcast(Shape{Q}, Shape{Q}) == Shape{Q});
  CHECK(broadcast(Shape{Q}, Shape{0}) == Shape{0});
  CHECK(broadcast(Shape{3, 2, Q, Q}, Shape{1, 1, 1, 1}) == Shape{3, 2, Q, Q});
  CHECK(broadcast(Shape{Q, 1, 7}, Shape{4, Q, 1}) == Shape{4, Q, 7});
  CHECK(broadcast(Shape{Q}, Shape{2, 3}) == Shape{2, 3});
}

TEST_CASE("shapes that do not broadcast throw not_broadcastable and try_broadcast says false") {
  CHECK(error_id([] {
          broadcast(Shape{2, 3}, Shape{3, 2});
        }) == "snippets.shape.not_broadcastable");
  CHECK(error_id([] { broadcast(Shape{0}, Shape{3}); }) == "snippets.shape.not_broadcastable");
  CHECK(error_id([] {
          broadcast(Shape{4, Q}, Shape{3, 1});
        }) == "snippets.shape.not_broadcastable");
  Shape out{9, 9};
  CHECK_FALSE(snippets::try_broadcast(Shape{2}, Shape{3}, out));
  CHECK(out == Shape{9, 9}); // untouched on failure
  try {
    broadcast(Shape{2, 3}, Shape{3, 2});
  } catch (const Error& e) {
    const std::string what = e.what();
    CHECK(what.find("[2,3]") != std::string::npos);
    CHECK(what.find("[3,2]") != std::string::npos);
    CHECK(what.find("Reshape or Broadcast") != std::string::npos);
  }
}

TEST_CASE("try_broadcast may write into one of its inputs") {
  Shape acc{2, 1};
  CHECK(snippets::try_broadcast(acc, Shape{1, 5}, acc));
  CHECK(acc == Shape{2, 5});
}

TEST_CASE("normalize_axis maps negative axes and rejects out-of-range ones") {
  using snippets::normalize_axis;
  CHECK(normalize_axis(0, 4, "t") == 0);
  CHECK(normalize_axis(3, 4, "t") == 3);
  CHECK(normalize_axis(-1, 4, "t") == 3);
  CHECK(normalize_axis(-4, 4, "t") == 0);
  CHECK(error_id([] { normalize_axis(4, 4, "t"); }) == "snippets.shape.axis_out_of_range");
  CHECK(error_id([] { normalize_axis(-5, 4, "t"); }) == "snippets.shape.axis_out_of_range");
  CHECK(error_id([] { normalize_axis(0, 0, "t"); }) == "snippets.shape.axis_out_of_range");
  CHECK(error_id([] { normalize_axis(-1, 0, "t"); }) == "snippets.shape.axis_out_of_range");
  try {
    normalize_axis(5, 2, "Softmax 'sm'");
  } catch (const Error& e) {
    const std::string what = e.what();
    CHECK(what.find("Softmax 'sm'") != std::string::npos);
    CHECK(what.find("[-2, 1]") != std::string::npos);
  }
}
