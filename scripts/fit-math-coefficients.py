#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Derives the polynomial coefficients of include/snippets/target/x64/emitters/math.hpp.

Method: the Remez exchange algorithm for a weighted minimax fit that is linear in the
coefficients (target(x) ~ fixed(x) + sum_j a_j * basis_j(x), minimising
max |weight(x) * error(x)| over an interval), with the linear systems solved in 60-digit
decimal arithmetic and the error scanned on a dense grid refined around each extremum. The
f32 polynomials are then rounded to f32 one coefficient at a time, lowest degree first, and
the remaining coefficients are re-fitted after each rounding, so that the rounding of one
coefficient is absorbed by the others. The f64 ones (general Power) are rounded to double.

Only the Python standard library is used (math, decimal, struct). Run:

    python3 scripts/fit-math-coefficients.py            # prints C++ tables and error bounds

The printed tables are what math.hpp holds; the printed bounds are the approximation errors
of the rounded coefficients evaluated exactly (evaluation rounding is not included; the
accuracy tests measure the end-to-end error of the emitted code).
"""

import math
import struct
from decimal import Decimal, getcontext

getcontext().prec = 60


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def f32_hex(x):
    return "0x%08x" % struct.unpack("<I", struct.pack("<f", x))[0]


def f64_hex(x):
    return "0x%016x" % struct.unpack("<Q", struct.pack("<d", x))[0]


def solve(a, b):
    """Gaussian elimination with partial pivoting in Decimal."""
    n = len(b)
    m = [[Decimal(repr(v)) if not isinstance(v, Decimal) else v for v in row] + [Decimal(repr(bv))]
         for row, bv in zip(a, b)]
    for col in range(n):
        piv = max(range(col, n), key=lambda r: abs(m[r][col]))
        m[col], m[piv] = m[piv], m[col]
        for r in range(col + 1, n):
            f = m[r][col] / m[col][col]
            if f:
                for c in range(col, n + 1):
                    m[r][c] -= f * m[col][c]
    x = [Decimal(0)] * n
    for r in range(n - 1, -1, -1):
        s = m[r][n] - sum(m[r][c] * x[c] for c in range(r + 1, n))
        x[r] = s / m[r][r]
    return [float(v) for v in x]


class Fit:
    """g(x) ~ sum_j a_j x^j over [lo, hi], minimising max |w(x) * (g(x) - p(x))|.

    Callers pass the divided form: to fit exp(r) = 1 + r + r^2 q(r) with a relative error,
    g(r) = (exp(r) - 1 - r) / r^2 and w(r) = r^2 / exp(r), so that no cancellation noise
    enters the fit. `fixed` maps a power to a coefficient that is not fitted."""

    def __init__(self, g, w, powers, lo, hi, fixed=None, grid=3000):
        self.g, self.w, self.powers = g, w, list(powers)
        self.lo, self.hi = lo, hi
        self.fixed = dict(fixed or {})
        # Chebyshev-distributed grid: dense near the ends, where the extrema crowd
        self.grid = [lo + (hi - lo) * (1 - math.cos(math.pi * i / grid)) / 2 for i in range(grid + 1)]
        self.gv = [g(x) for x in self.grid]
        self.wv = [w(x) for x in self.grid]

    def free(self):
        return [d for d in self.powers if d not in self.fixed]

    @staticmethod
    def poly(coeffs, x):
        return sum(c * x ** d for d, c in coeffs.items())

    def errors(self, coeffs):
        return [wv * (gv - self.poly(coeffs, x)) for x, gv, wv in zip(self.grid, self.gv, self.wv)]

    def remez(self, iterations=40):
        free = self.free()
        n = len(free)
        if n == 0:
            return dict(self.fixed)
        ref = [self.lo + (self.hi - self.lo) * (1 - math.cos(math.pi * (i + 0.5) / (n + 1))) / 2
               for i in range(n + 1)]
        best, best_worst = None, math.inf
        for _ in range(iterations):
            rows, rhs = [], []
            for i, x in enumerate(ref):
                rows.append([x ** d for d in free] + [(-1) ** i / self.w(x)])
                rhs.append(self.g(x) - sum(c * x ** d for d, c in self.fixed.items()))
            sol = solve(rows, rhs)
            coeffs = dict(self.fixed)
            coeffs.update(dict(zip(free, sol[:n])))
            level = abs(sol[n])
            new_ref, worst = self.exchange(self.errors(coeffs), n + 1)
            if worst < best_worst:
                best, best_worst = coeffs, worst
            if new_ref is None or worst <= level * (1 + 1e-5):
                break
            ref = new_ref
        return best

    def exchange(self, e, count):
        """The `count` alternating extrema of the error with the largest values (None when the
        error does not alternate often enough)."""
        segs, start = [], 0
        for i in range(1, len(e) + 1):
            if i == len(e) or (e[i] >= 0) != (e[start] >= 0):
                k = max(range(start, i), key=lambda j: abs(e[j]))
                segs.append([self.grid[k], e[k]])
                start = i
        worst = max(abs(v) for v in e)
        while len(segs) > count:
            k = min(range(len(segs)), key=lambda j: abs(segs[j][1]))
            if k == 0 or k == len(segs) - 1:
                segs.pop(k)
            else:  # drop it and the smaller of its neighbours: the rest still alternates
                j = k - 1 if abs(segs[k - 1][1]) < abs(segs[k + 1][1]) else k + 1
                for idx in sorted((k, j), reverse=True):
                    segs.pop(idx)
        if len(segs) < count:
            return None, worst
        return [x for x, _ in segs], worst

    def max_error(self, coeffs, points=100000):
        worst = 0.0
        for i in range(points + 1):
            x = self.lo + (self.hi - self.lo) * i / points
            worst = max(worst, abs(self.w(x) * (self.g(x) - self.poly(coeffs, x))))
        return worst

    def fit_rounded(self, rounding, step):
        """Remez in real arithmetic, then every coefficient rounded to nearest and improved by a
        greedy search: move one coefficient by +-1 or +-2 units of its last place while that
        lowers the maximum error on the grid, until no move does."""
        coeffs = self.remez()
        for d in self.free():
            coeffs[d] = rounding(coeffs[d])
        powers = {d: [x ** d for x in self.grid] for d in coeffs}

        def worst(cs):
            best = 0.0
            for i in range(len(self.grid)):
                p = 0.0
                for d, c in cs.items():
                    p += c * powers[d][i]
                best = max(best, abs(self.wv[i] * (self.gv[i] - p)))
            return best

        current = worst(coeffs)
        improved = True
        while improved:
            improved = False
            for d in self.free():
                for k in (1, -1, 2, -2):
                    trial = dict(coeffs)
                    trial[d] = step(coeffs[d], k)
                    e = worst(trial)
                    if e < current:
                        coeffs, current, improved = trial, e, True
                        break
        return coeffs


def f32_step(x, k):
    """x moved by k units in the last place of f32."""
    i = struct.unpack("<i", struct.pack("<f", x))[0]
    i += k if x >= 0 else -k
    return struct.unpack("<f", struct.pack("<i", i))[0]


def series_or(f, series, x, small=1e-3):
    return series(x) if abs(x) < small else f(x)


def report(name, coeffs, fit, fmt, note):
    err = fit.max_error(coeffs)
    print(f"// {name}: {note}; max error {err:.2e} (2^{math.log2(err):.1f})")
    body = ", ".join(fmt(coeffs[d]) for d in sorted(coeffs))
    print(f"{name} = {{{body}}}")
    print("//   " + ", ".join(repr(coeffs[d]) for d in sorted(coeffs)))
    print()


def main():
    ln2 = math.log(2.0)
    # |r| <= ln2/2 after Cody-Waite, plus the rounding of n = round(fl(x * log2e)), |x| <= 104
    R = ln2 / 2 + 1e-4
    # (exp(r) - 1 - r) / r^2, accurate near 0
    em_g = lambda r: series_or(lambda r: (math.expm1(r) - r) / (r * r),
                               lambda r: 1 / 2 + r / 6 + r * r / 24 + r ** 3 / 120, r)

    fit = Fit(em_g, lambda r: r * r / math.exp(r), range(5), -R, R)
    report("exp_q", fit.fit_rounded(f32, f32_step), fit, f32_hex,
           "exp(r) = 1 + r + r^2 q(r), |r| <= ln2/2 + 1e-4, relative error of exp")

    # the same of degree 4, for results kept as bf16 (8 significand bits)
    fit = Fit(em_g, lambda r: r * r / math.exp(r), range(3), -R, R)
    report("exp_q_short", fit.fit_rounded(f32, f32_step), fit, f32_hex,
           "exp(r) = 1 + r + r^2 q(r), |r| <= ln2/2 + 1e-4, relative error of exp")

    fit = Fit(em_g, lambda r: r * r / abs(math.expm1(r)) if r else 0.0, range(6), -R, R)
    report("expm1_q", fit.fit_rounded(f32, f32_step), fit, f32_hex,
           "expm1(r) = r + r^2 q(r), |r| <= ln2/2 + 1e-4, relative error of expm1")

    lp_g = lambda f: series_or(lambda f: (math.log1p(f) - f) / (f * f),
                               lambda f: -1 / 2 + f / 3 - f * f / 4 + f ** 3 / 5, f)
    fit = Fit(lp_g, lambda f: f * f / abs(math.log1p(f)) if f else 0.0, range(9), -0.25, 0.5)
    report("log1p_s", fit.fit_rounded(f32, f32_step), fit, f32_hex,
           "log1p(f) = f + f^2 s(f), f in [-1/4, 1/2], relative error of log1p")

    A, Z = 0.875, 3.92  # erfc(3.92) < 2^-25: beyond Z, erf rounds to 1
    c = 2 / math.sqrt(math.pi)
    ep_g = lambda u: series_or(lambda u: math.erf(math.sqrt(u)) / math.sqrt(u) - 1,
                               lambda u: c * (1 - u / 3 + u * u / 10 - u ** 3 / 42) - 1, u)
    fit = Fit(ep_g, lambda u: 1 / (1 + ep_g(u)), range(6), 0.0, A * A)
    small = fit.fit_rounded(f32, f32_step)
    report("erf_small_p", small, fit, f32_hex,
           f"erf(x) = x + x p(x^2), |x| < {A}, relative error of erf")

    fit = Fit(lambda z: math.log(math.erfc(z)), math.erfc, range(8), A, Z)
    large = fit.fit_rounded(f32, f32_step)
    report("erf_large_q", large, fit, f32_hex,
           f"erf(z) = 1 - exp(q(z)), z in [{A}, {Z}], absolute error of erf (weight erfc(z))")

    # Gelu (erf form) needs erf(x / sqrt(2)) below sqrt2 * A: the small polynomial with the
    # argument scaling folded into the coefficients (computed in double, rounded to f32 once),
    # so that x is never rounded on the way in.
    k = 1 / math.sqrt(2.0)
    g_small = {0: f32(k * (1 + small[0]) - 1)}
    g_small.update({d: f32(k * small[d] / 2 ** d) for d in small if d})
    print("// gelu_erf_small_p: erf(x/sqrt2) = x + x p(x^2), |x| < sqrt2 * A; from erf_small_p")
    print("gelu_erf_small_p = {" + ", ".join(f32_hex(g_small[d]) for d in sorted(g_small)) + "}")
    worst = 0.0
    for i in range(20001):
        x = math.sqrt(2) * A * i / 20000
        got = x + x * sum(c * (x * x) ** d for d, c in g_small.items())
        if x: worst = max(worst, abs(got - math.erf(x * k)) / math.erf(x * k))
    print(f"//   max relative error {worst:.2e}")
    print()
    # ... and above it 1 + erf(x/sqrt2) = erfc(|x|/sqrt2) (x < 0) or 2 - erfc (x > 0), so its
    # own fit of log(erfc(x/sqrt2)) with weight 1: the error of q is the relative error of
    # erfc, which the negative tail x * erfc / 2 keeps. Up to x = 6 (|gelu| < 6e-9 beyond).
    fit = Fit(lambda x: math.log(math.erfc(x * k)), lambda x: 1.0, range(11), math.sqrt(2) * A, 6.0)
    report("gelu_erfc_q", fit.fit_rounded(f32, f32_step), fit, f32_hex,
           f"erfc(x/sqrt2) = exp(q(x)), x in [sqrt2 * {A}, 6], relative error of erfc")

    print("// Cody-Waite split of ln2: ln2_hi = f32(ln2) is a multiple of 2^-24, so x - n*ln2_hi")
    print("// is exact for |n| <= 2^8 (FMA); ln2_lo = f32(ln2 - ln2_hi)")
    hi_ = f32(ln2)
    print(f"ln2_hi = {f32_hex(hi_)}  // {hi_!r}")
    print(f"ln2_lo = {f32_hex(f32(ln2 - hi_))}  // {f32(ln2 - hi_)!r}")
    print(f"log2e = {f32_hex(f32(1 / ln2))}")
    print(f"ln2 = {f32_hex(hi_)}; inv_sqrt2 = {f32_hex(f32(k))}")
    print(f"gelu_tanh c1 = 2 sqrt(2/pi) = {f32_hex(f32(2 * math.sqrt(2 / math.pi)))}, "
          f"c2 = 2 * 0.044715 * sqrt(2/pi) = {f32_hex(f32(2 * 0.044715 * math.sqrt(2 / math.pi)))}")
    print(f"log2e_f64 = {f64_hex(1 / ln2)}")
    print()

    lo, hi = math.sqrt(0.5) - 1, math.sqrt(2.0) - 1
    l2_g = lambda f: series_or(lambda f: math.log1p(f) / (f * ln2),
                               lambda f: (1 - f / 2 + f * f / 3 - f ** 3 / 4) / ln2, f, 1e-6)
    fit = Fit(l2_g, lambda f: 1 / l2_g(f), range(14), lo, hi)
    report("log2_p_f64", fit.remez(), fit, f64_hex,
           "log2(1 + f) = f p(f), f in [sqrt(1/2) - 1, sqrt(2) - 1], relative error")

    e2_g = lambda r: series_or(lambda r: math.expm1(r * ln2) / r,
                               lambda r: ln2 * (1 + r * ln2 / 2 + (r * ln2) ** 2 / 6), r, 1e-6)
    fit = Fit(e2_g, lambda r: abs(r) / 2.0 ** r if r else 0.0, range(8), -0.5, 0.5)
    report("exp2_p_f64", fit.remez(), fit, f64_hex,
           "2^r = 1 + r p(r), |r| <= 1/2, relative error")


if __name__ == "__main__":
    main()
