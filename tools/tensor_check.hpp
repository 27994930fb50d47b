// SPDX-License-Identifier: Apache-2.0
// tools/tensor_check.hpp: comparing a computed tensor with an expected one (snippets-run and the
// conformance runner).
//
// An element passes when |got - expected| <= atol + rtol * |expected| (numpy's allclose);
// NaN must meet NaN, infinities must be equal, and integer and boolean tensors must be equal.
// f16 and bf16 results may also differ by one unit in the last place of their format: test data
// disagree on how to round to them (ONNX 1.12's Cast to BFLOAT16 truncates, where snippets and
// later ONNX versions round to nearest even).
// The report gives the largest absolute error and where it is.
#pragma once

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include "snippets/frontend/onnx_tensor.hpp"

namespace snippets::tools {

struct Tolerance {
  double rtol = 1e-5;
  double atol = 1e-6;
};

struct CheckResult {
  bool ok = true;
  double max_abs_error = 0;
  std::string message; // what failed, empty when ok
};

/// One unit in the last place of `x` in a 16-bit float format.
inline double half_ulp(ElementType t, double x) {
  const int mant = t == ElementType::f16 ? 10 : 7;
  const int emin = t == ElementType::f16 ? -14 : -126;
  const int e = x == 0 ? emin : std::max(std::ilogb(x), emin);
  return std::ldexp(1.0, e - mant);
}

inline CheckResult check_tensor(const reference::Tensor& got, const onnx::HostTensor& expected,
                                Tolerance tol) {
  CheckResult r;
  std::ostringstream msg;
  const Shape want_shape = expected.shape();
  if (got.shape() != want_shape) {
    msg << "shape " << got.shape().to_string() << " but expected " << want_shape.to_string();
    return {false, 0, msg.str()};
  }
  if (onnx::data_type_of(got.type()) != expected.dtype) {
    msg << "type " << to_string(got.type()) << " but expected "
        << onnx::data_type_name(expected.dtype);
    return {false, 0, msg.str()};
  }
  const bool exact = !is_float(got.type());
  std::size_t worst = 0;
  bool bad = false;
  std::size_t bad_at = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = got.at(i), e = expected.values[i];
    bool pass;
    double err = 0;
    if (std::isnan(e) || std::isnan(g)) {
      pass = std::isnan(e) && std::isnan(g);
      err = pass ? 0 : INFINITY;
    } else if (std::isinf(e) || std::isinf(g)) {
      pass = g == e;
      err = pass ? 0 : INFINITY;
    } else {
      err = std::fabs(g - e);
      pass = exact ? g == e : err <= tol.atol + tol.rtol * std::fabs(e);
      if (!pass && (got.type() == ElementType::f16 || got.type() == ElementType::bf16))
        pass = err <= half_ulp(got.type(), e);
    }
    if (err > r.max_abs_error || (i == 0 && err == 0)) {
      r.max_abs_error = std::max(r.max_abs_error, err);
      worst = i;
    }
    if (!pass && !bad) {
      bad = true;
      bad_at = i;
    }
  }
  if (bad) {
    const std::size_t i = r.max_abs_error > 0 ? worst : bad_at;
    msg.precision(9);
    msg << "max abs error " << r.max_abs_error << " at element " << i << " (got " << got.at(i)
        << ", expected " << expected.values[i] << ")";
    r.ok = false;
    r.message = msg.str();
  }
  return r;
}

/// The same against a reference::Tensor (e.g. the reference interpreter's output).
inline CheckResult check_tensor(const reference::Tensor& got, const reference::Tensor& expected,
                                Tolerance tol) {
  return check_tensor(got, onnx::HostTensor::from_tensor(expected), tol);
}

} // namespace snippets::tools
