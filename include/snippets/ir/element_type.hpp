// SPDX-License-Identifier: Apache-2.0
// snippets/ir/element_type.hpp: the element types of tensors and their exact conversions.
//
// Invariants:
//  - every value of every type is representable in a double, so the reference interpreter
//    computes in double and converts once, with `round_to` / `encode`;
//  - float formats round to nearest, ties to even, overflow to +-Inf, keep NaN;
//  - integer types take the value truncated toward zero and saturated to their range; NaN
//    becomes 0 (the documented Convert semantics, see ir/op_tags.hpp);
//  - boolean is one byte holding 0 or 1; any non-zero value converts to 1.
#pragma once

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>

#include "snippets/error.hpp"

namespace snippets {

enum class ElementType : std::uint8_t { f32, f16, bf16, i32, i8, u8, boolean };

inline constexpr std::array<ElementType, 7> all_element_types{
    ElementType::f32, ElementType::f16, ElementType::bf16,   ElementType::i32,
    ElementType::i8,  ElementType::u8,  ElementType::boolean};

constexpr std::string_view to_string(ElementType t) {
  switch (t) {
  case ElementType::f32: return "f32";
  case ElementType::f16: return "f16";
  case ElementType::bf16: return "bf16";
  case ElementType::i32: return "i32";
  case ElementType::i8: return "i8";
  case ElementType::u8: return "u8";
  case ElementType::boolean: return "boolean";
  }
  return "?";
}

inline std::optional<ElementType> element_type_from_string(std::string_view name) {
  for (ElementType t : all_element_types)
    if (to_string(t) == name) return t;
  return std::nullopt;
}

constexpr std::size_t size_of(ElementType t) {
  switch (t) {
  case ElementType::f32:
  case ElementType::i32: return 4;
  case ElementType::f16:
  case ElementType::bf16: return 2;
  default: return 1;
  }
}

constexpr bool is_float(ElementType t) {
  return t == ElementType::f32 || t == ElementType::f16 || t == ElementType::bf16;
}
constexpr bool is_integer(ElementType t) {
  return t == ElementType::i32 || t == ElementType::i8 || t == ElementType::u8;
}
/// i8 or u8: the operands of an integer MatMul.
constexpr bool is_byte_integer(ElementType t) {
  return t == ElementType::i8 || t == ElementType::u8;
}

namespace detail {

/// Rounds |x| (finite, > 0) to a binary format with `mant` stored mantissa bits and minimum
/// normal exponent `emin`, to nearest with ties to even. Returns the rounded value as a double
/// (it may exceed the format's range; the caller handles overflow).
inline double round_to_binary(double x, int mant, int emin) {
  int e = std::ilogb(x);
  // ulp of the format at this magnitude; subnormals share the ulp of the smallest normal
  const double quantum = std::ldexp(1.0, (e < emin ? emin : e) - mant);
  // x / quantum is exact (a power-of-two scale); nearbyint rounds ties to even
  return std::nearbyint(x / quantum) * quantum;
}

/// Encodes a double into a 16-bit float format (f16: 5 exponent bits, bf16: 8).
inline std::uint16_t encode_half_like(double x, int exp_bits, int mant) {
  const int bias = (1 << (exp_bits - 1)) - 1;
  const int emin = 1 - bias;
  const int emax = bias;
  const std::uint16_t sign = std::signbit(x) ? std::uint16_t(1u << 15) : 0;
  const std::uint16_t exp_all = std::uint16_t(((1u << exp_bits) - 1) << mant);
  if (std::isnan(x)) return sign | exp_all | std::uint16_t(1u << (mant - 1));
  double a = std::fabs(x);
  if (a == 0) return sign;
  if (std::isinf(a)) return sign | exp_all;
  const double r = round_to_binary(a, mant, emin);
  if (r == 0) return sign;
  const int e = std::ilogb(r);
  if (e > emax) return sign | exp_all;
  if (e < emin) // subnormal: the mantissa field counts quanta of 2^(emin - mant)
    return sign | std::uint16_t(std::ldexp(r, mant - emin));
  const auto frac = std::uint16_t(std::ldexp(r, mant - e) - std::ldexp(1.0, mant));
  return sign | std::uint16_t(std::uint16_t(e + bias) << mant) | frac;
}

inline double decode_half_like(std::uint16_t bits, int exp_bits, int mant) {
  const int bias = (1 << (exp_bits - 1)) - 1;
  const int exp_field = (bits >> mant) & ((1 << exp_bits) - 1);
  const int frac = bits & ((1 << mant) - 1);
  const double sign = (bits >> 15) ? -1.0 : 1.0;
  if (exp_field == (1 << exp_bits) - 1)
    return frac ? std::numeric_limits<double>::quiet_NaN()
                : sign * std::numeric_limits<double>::infinity();
  if (exp_field == 0) return sign * std::ldexp(double(frac), 1 - bias - mant);
  return sign * std::ldexp(double(frac + (1 << mant)), exp_field - bias - mant);
}

inline double saturate_integer(double x, double lo, double hi) {
  if (std::isnan(x)) return 0;
  x = std::trunc(x);
  return x < lo ? lo : (x > hi ? hi : x);
}

} // namespace detail

/// `x` rounded to f32 as IEEE rounds it: to nearest, ties to even, and beyond the largest
/// float to it or to an infinity (from the halfway point to 2^128 on, a tie that goes to the
/// even infinity). A plain conversion is undefined in C++ beyond float's range, and g++ 12 at
/// -O3 was seen to leave such a value unrounded (FakeQuantize's scale of a tiny range).
inline float to_f32(double x) {
  constexpr double max = std::numeric_limits<float>::max();
  constexpr double halfway = 0x1.ffffffp127;
  if (std::fabs(x) > max) { // false for NaN
    const float big = std::fabs(x) >= halfway ? std::numeric_limits<float>::infinity() : float(max);
    return x < 0 ? -big : big;
  }
  return static_cast<float>(x);
}

inline std::uint16_t f16_bits(double x) { return detail::encode_half_like(x, 5, 10); }
inline std::uint16_t bf16_bits(double x) { return detail::encode_half_like(x, 8, 7); }
inline double from_f16_bits(std::uint16_t b) { return detail::decode_half_like(b, 5, 10); }
inline double from_bf16_bits(std::uint16_t b) { return detail::decode_half_like(b, 8, 7); }

/// The value `x` takes once stored as type `t` (see the file comment for the rules).
inline double round_to(ElementType t, double x) {
  switch (t) {
  case ElementType::f32: return double(to_f32(x));
  case ElementType::f16: return from_f16_bits(f16_bits(x));
  case ElementType::bf16: return from_bf16_bits(bf16_bits(x));
  case ElementType::i32: return detail::saturate_integer(x, -2147483648.0, 2147483647.0);
  case ElementType::i8: return detail::saturate_integer(x, -128, 127);
  case ElementType::u8: return detail::saturate_integer(x, 0, 255);
  case ElementType::boolean: return x != 0 ? 1.0 : 0.0; // NaN != 0: true, as in C++
  }
  return x;
}

/// Writes `x` as type `t` to `dst` (size_of(t) bytes, any alignment).
inline void encode(ElementType t, double x, void* dst) {
  const double v = round_to(t, x);
  switch (t) {
  case ElementType::f32: {
    const float f = to_f32(v);
    std::memcpy(dst, &f, 4);
    return;
  }
  case ElementType::f16: {
    const std::uint16_t b = f16_bits(x);
    std::memcpy(dst, &b, 2);
    return;
  }
  case ElementType::bf16: {
    const std::uint16_t b = bf16_bits(x);
    std::memcpy(dst, &b, 2);
    return;
  }
  case ElementType::i32: {
    const auto i = static_cast<std::int32_t>(v);
    std::memcpy(dst, &i, 4);
    return;
  }
  case ElementType::i8: *static_cast<std::int8_t*>(dst) = static_cast<std::int8_t>(v); return;
  case ElementType::u8:
  case ElementType::boolean:
    *static_cast<std::uint8_t*>(dst) = static_cast<std::uint8_t>(v);
    return;
  }
}

/// Reads one element of type `t` from `src`.
inline double decode(ElementType t, const void* src) {
  switch (t) {
  case ElementType::f32: {
    float f;
    std::memcpy(&f, src, 4);
    return f;
  }
  case ElementType::f16:
  case ElementType::bf16: {
    std::uint16_t b;
    std::memcpy(&b, src, 2);
    return t == ElementType::f16 ? from_f16_bits(b) : from_bf16_bits(b);
  }
  case ElementType::i32: {
    std::int32_t i;
    std::memcpy(&i, src, 4);
    return i;
  }
  case ElementType::i8: return *static_cast<const std::int8_t*>(src);
  case ElementType::u8: return *static_cast<const std::uint8_t*>(src);
  case ElementType::boolean: return *static_cast<const std::uint8_t*>(src) ? 1.0 : 0.0;
  }
  return 0;
}

} // namespace snippets
