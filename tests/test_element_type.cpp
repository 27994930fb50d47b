// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "snippets/ir/element_type.hpp"

using namespace snippets;
namespace {
constexpr double inf = std::numeric_limits<double>::infinity();
}

TEST_CASE("element types have their sizes and names") {
  CHECK(size_of(ElementType::f32) == 4);
  CHECK(size_of(ElementType::bf16) == 2);
  CHECK(size_of(ElementType::boolean) == 1);
  for (ElementType t : all_element_types) CHECK(element_type_from_string(to_string(t)) == t);
  CHECK_FALSE(element_type_from_string("f64").has_value());
}

TEST_CASE("f16 encoding matches hand-computed bit patterns") {
  CHECK(f16_bits(1.0) == 0x3C00);
  CHECK(f16_bits(-2.0) == 0xC000);
  CHECK(f16_bits(65504.0) == 0x7BFF);                    // largest finite
  CHECK(f16_bits(65520.0) == 0x7C00);                    // halfway to 2^16 rounds to +Inf
  CHECK(f16_bits(65519.99) == 0x7BFF);                   // just below halfway stays finite
  CHECK(f16_bits(std::ldexp(1.0, -24)) == 0x0001);       // smallest subnormal
  CHECK(f16_bits(std::ldexp(1.0, -25)) == 0x0000);       // tie between 0 and 2^-24 goes to even (0)
  CHECK(f16_bits(std::ldexp(3.0, -26)) == 0x0001);       // 0.75 quanta rounds up
  CHECK(f16_bits(1.0 + std::ldexp(1.0, -11)) == 0x3C00); // tie to even: stays 1.0
  CHECK(f16_bits(1.0 + 3 * std::ldexp(1.0, -11)) == 0x3C02); // tie to even: rounds up
  CHECK(f16_bits(-0.0) == 0x8000);
  CHECK(f16_bits(inf) == 0x7C00);
  CHECK((f16_bits(std::nan("")) & 0x7C00) == 0x7C00);
  CHECK((f16_bits(std::nan("")) & 0x03FF) != 0);
  CHECK(from_f16_bits(0x3555) == 0.333251953125);
  CHECK(from_f16_bits(0x0001) == std::ldexp(1.0, -24));
  CHECK(std::isinf(from_f16_bits(0xFC00)));
}

TEST_CASE("bf16 encoding rounds to nearest even on the top 16 bits of f32") {
  CHECK(bf16_bits(1.0) == 0x3F80);
  CHECK(bf16_bits(1.0 + std::ldexp(1.0, -8)) == 0x3F80); // tie, even stays
  CHECK(bf16_bits(1.0 + 3 * std::ldexp(1.0, -8)) == 0x3F82);
  CHECK(bf16_bits(3.0e38) == 0x7F62);
  CHECK(bf16_bits(3.4e38) == 0x7F80); // rounds past the largest finite bf16 to +Inf
  CHECK(from_bf16_bits(0x4049) == 3.140625);
  CHECK(from_bf16_bits(0x0001) == std::ldexp(1.0, -133)); // smallest subnormal
}

TEST_CASE("round_to follows the documented conversion rules") {
  CHECK(round_to(ElementType::f32, 0.1) == double(0.1f));
  CHECK(round_to(ElementType::i32, -7.9) == -7);
  CHECK(round_to(ElementType::i32, 3e9) == 2147483647.0);
  CHECK(round_to(ElementType::i8, -200) == -128);
  CHECK(round_to(ElementType::u8, -3.5) == 0);
  CHECK(round_to(ElementType::u8, 255.9) == 255);
  CHECK(round_to(ElementType::i8, std::nan("")) == 0);
  CHECK(round_to(ElementType::boolean, 0.25) == 1);
  CHECK(round_to(ElementType::boolean, -0.0) == 0);
  CHECK(std::isnan(round_to(ElementType::bf16, std::nan(""))));
}

TEST_CASE("to_f32 rounds beyond float's range as IEEE does") {
  constexpr double max = std::numeric_limits<float>::max();
  const double ulp = std::ldexp(1.0, 104); // of the largest float
  CHECK(to_f32(max) == std::numeric_limits<float>::max());
  CHECK(to_f32(max + ulp / 4) == std::numeric_limits<float>::max()); // nearer the largest
  CHECK(std::isinf(to_f32(max + ulp / 2)));                          // the tie: to even (inf)
  CHECK(std::isinf(to_f32(2e40)));
  CHECK(to_f32(-2e40) == -std::numeric_limits<float>::infinity());
  CHECK(to_f32(-(max + ulp / 4)) == -std::numeric_limits<float>::max());
  CHECK(std::isnan(to_f32(std::nan(""))));
  CHECK(to_f32(inf) == std::numeric_limits<float>::infinity());
  CHECK(to_f32(0.1) == 0.1f);
  CHECK(to_f32(1e-40) == static_cast<float>(1e-40)); // a subnormal
  // what round_to and encode store: the same
  CHECK(std::isinf(round_to(ElementType::f32, 2e40)));
}

TEST_CASE("encode and decode round-trip every type") {
  unsigned char buf[4];
  const double samples[] = {0, 1, -1, 2.5, 100, -100};
  for (ElementType t : all_element_types)
    for (double x : samples) {
      encode(t, x, buf);
      CHECK(decode(t, buf) == round_to(t, x));
    }
}
