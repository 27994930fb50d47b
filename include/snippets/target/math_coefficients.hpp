// SPDX-License-Identifier: Apache-2.0
// snippets/target/math_coefficients.hpp: the polynomial tables of the transcendental emitters,
// shared by the targets (x64/emitters/math.hpp, aarch64/emitters/math.hpp).
//
// Ascending powers, f32 bit patterns (f64 where stated). Each was fitted for this project by
// scripts/fit-math-coefficients.py (weighted Remez exchange, then rounding to f32 with a greedy
// +-ulp search) and states what it approximates, on which interval, and its error. The
// end-to-end accuracy of each target's emitters is in docs/math_accuracy.md.
#pragma once

#include <cstdint>
#include <span>

namespace snippets::math_coefficients {

/// exp(r) = 1 + r + r^2 q(r) for |r| <= ln2/2 + 1e-4; relative error 3.2e-9 (2^-28.2).
inline constexpr std::uint32_t exp_q[] = {0x3efffffe, 0x3e2aaa49, 0x3d2aac69, 0x3c091ce5,
                                          0x3ab511ea};
/// expm1(r) = r + r^2 q(r) for |r| <= ln2/2 + 1e-4; relative error 7.6e-10 (2^-30.3).
inline constexpr std::uint32_t expm1_q[] = {0x3f000000, 0x3e2aaaaa, 0x3d2aaa68,
                                            0x3c088913, 0x3ab6b93a, 0x395019fe};
/// log1p(f) = f + f^2 s(f) for f in [-1/4, 1/2]; relative error 5.6e-9 (2^-27.4).
inline constexpr std::uint32_t log1p_s[] = {0xbf000000, 0x3eaaaad3, 0xbe800013,
                                            0x3e4cb43b, 0xbe2a79a7, 0x3e144d49,
                                            0xbe06c96e, 0x3dd5fccf, 0xbd37f4a1};

/// The two branches of erf: x + x p(x^2) below `split`, 1 - exp(q(|x|)) above it (|x|
/// clamped to `clamp`, where erf is 1 in f32), each with its coefficient table.
struct ErfTables {
  std::span<const std::uint32_t> small_p, large_q;
  float split, clamp;
};
/// erf(x) = x + x p(x^2) for |x| < 0.875: relative error 1.6e-8 (2^-25.9).
inline constexpr std::uint32_t erf_small_p[] = {0x3e0375d4, 0xbec09386, 0x3de7108e,
                                                0xbcdb79c7, 0x3ba4e4fb, 0xba229d63};
/// erf(z) = 1 - exp(q(z)) for z in [0.875, 3.92], q ~ log(erfc(z)) fitted with the weight
/// erfc(z): absolute error of erf 1.1e-9 (2^-29.7). erfc(3.92) < 2^-25: erf rounds to 1 above.
inline constexpr std::uint32_t erf_large_q[] = {0x392fe94b, 0xbf9092f4, 0xbf22269b, 0xbddda649,
                                                0x3ccd89c2, 0xbb885f37, 0x39e2f7e1, 0xb7b017ca};
inline constexpr ErfTables erf_tables{erf_small_p, erf_large_q, 0.875f, 3.92f};
/// For Gelu, 1 + erf(x / sqrt(2)) without rounding x / sqrt(2): below 0.875 sqrt(2), the
/// small table with the scaling folded in (in double, rounded once; relative error 2.7e-8);
/// above, erfc(|x| / sqrt(2)) = exp(q(|x|)) fitted for its relative error (4.5e-8) up to
/// |x| = 6, so that the negative tail x erfc / 2 keeps its digits (1 - erf would cancel).
inline constexpr std::uint32_t gelu_erf_small_p[] = {0xbe4ef75a, 0xbe082c07, 0x3ca3632c,
                                                     0xbb1b3158, 0x3969322b, 0xb765f8d8};
inline constexpr std::uint32_t gelu_erfc_q[] = {0x3968c206, 0xbf4c80f3, 0xbea20898, 0xbd1d50b1,
                                                0x3bce9391, 0xba3d792a, 0x3833e679, 0x35d84da7,
                                                0xb513f92e, 0x333b35d8, 0xb0b0121c};
inline constexpr ErfTables gelu_erf_tables{gelu_erf_small_p, gelu_erfc_q, 0.875f * 1.41421356f,
                                           6.0f};

/// f64 (general Power): log2(1 + f) = f p(f) for f in [sqrt(1/2) - 1, sqrt(2) - 1]; relative
/// error 2.6e-12.
inline constexpr std::uint64_t log2_p_f64[] = {
    0x3ff71547652b58f6, 0xbfe71547651b7067, 0x3fdec709de33c772, 0xbfd715478883c4f5,
    0x3fd2776b6cd03c1a, 0xbfcec6f2e0109170, 0x3fca61b7dcbd2a18, 0xbfc7188d314bdfad,
    0x3fc481fad266365f, 0xbfc23d65003dc3e6, 0x3fc0acdedd834334, 0xbfc13b891405120a,
    0x3fc0f628925d5596, 0xbfb1da6d77e0e67a};
/// f64: 2^r = 1 + r p(r) for |r| <= 1/2; relative error 8.1e-13.
inline constexpr std::uint64_t exp2_p_f64[] = {
    0x3fe62e42fef89d1e, 0x3fcebfbdff8ede88, 0x3fac6b08dced34d5, 0x3f83b2ab5ed6f868,
    0x3f55d874d070b7fe, 0x3f2430aa883470e7, 0x3ef00d85338b2c01, 0x3eb61c4f014886cd};

} // namespace snippets::math_coefficients
