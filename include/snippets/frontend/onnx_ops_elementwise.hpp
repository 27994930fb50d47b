// SPDX-License-Identifier: Apache-2.0
// snippets/frontend/onnx_ops_elementwise.hpp: ONNX elementwise and activation ops -> our op set.
//
// ONNX's multidirectional broadcasting is NUMPY broadcasting, which our binary ops implement.
// Ops without a tag of their own are written as short chains of ours (HardSigmoid, Selu,
// Celu, Sign, Reciprocal, Shrink, ThresholdedRelu, IsNaN, IsInf, Mean, Clip with run-time
// bounds); each converter says how. Attribute defaults are the ONNX ones.
#pragma once

#include <cmath>
#include <limits>

#include "snippets/frontend/onnx_node_context.hpp"

namespace snippets::onnx::detail {

/// Opset < 7 spelled broadcasting with attributes; suffix broadcasting (no axis) is NUMPY's.
template <class T> void check_legacy_broadcast(NodeContext<T>& c) {
  c.attr_int("broadcast", 0);
  if (c.has_attr("axis"))
    c.bad_attribute("legacy broadcasting along 'axis' (opset < 7) is not supported; upgrade the "
                    "model to opset 7 or later");
}

template <class Tag, class T> void convert_unary(NodeContext<T>& c) {
  c.set_out(0, c.op(Tag{}, {c.in(0)}));
}

template <class Tag, class T> void convert_binary(NodeContext<T>& c) {
  check_legacy_broadcast(c);
  c.set_out(0, c.op(Tag{}, {c.in(0), c.in(1)}));
}

/// Max, Min, Sum: any number of inputs, folded left.
template <class Tag, class T> void convert_variadic(NodeContext<T>& c) {
  ir::Value acc = c.in(0);
  for (std::size_t i = 1; i < c.input_count(); ++i) acc = c.op(Tag{}, {acc, c.in(i)});
  c.set_out(0, acc);
}

/// Mean = Sum / n.
template <class T> void convert_mean(NodeContext<T>& c) {
  ir::Value acc = c.in(0);
  for (std::size_t i = 1; i < c.input_count(); ++i) acc = c.op(ir::Add{}, {acc, c.in(i)});
  if (c.input_count() > 1) acc = c.op(ir::Divide{}, {acc, c.scalar(acc, double(c.input_count()))});
  c.set_out(0, acc);
}

template <class T> void convert_leaky_relu(NodeContext<T>& c) {
  c.set_out(0, c.op(ir::LeakyRelu{c.attr_float("alpha", 0.01)}, {c.in(0)}));
}

template <class T> void convert_elu(NodeContext<T>& c) {
  c.set_out(0, c.op(ir::Elu{c.attr_float("alpha", 1.0)}, {c.in(0)}));
}

/// Selu = gamma * Elu_alpha(x).
template <class T> void convert_selu(NodeContext<T>& c) {
  const double alpha = c.attr_float("alpha", 1.67326319217681884765625);
  const double gamma = c.attr_float("gamma", 1.05070102214813232421875);
  const ir::Value e = c.op(ir::Elu{alpha}, {c.in(0)});
  c.set_out(0, c.op(ir::Multiply{}, {e, c.scalar(e, gamma)}));
}

/// Celu = x > 0 ? x : alpha * (exp(x / alpha) - 1) = select(x > 0, x, alpha * Elu_1(x / alpha)).
template <class T> void convert_celu(NodeContext<T>& c) {
  const double alpha = c.attr_float("alpha", 1.0);
  const ir::Value x = c.in(0);
  const ir::Value e = c.op(ir::Elu{1.0}, {c.op(ir::Divide{}, {x, c.scalar(x, alpha)})});
  const ir::Value neg = c.op(ir::Multiply{}, {e, c.scalar(x, alpha)});
  c.set_out(0, c.op(ir::Select{}, {c.op(ir::Greater{}, {x, c.scalar(x, 0)}), x, neg}));
}

/// HardSigmoid = clamp(alpha * x + beta, 0, 1).
template <class T> void convert_hard_sigmoid(NodeContext<T>& c) {
  const double alpha = c.attr_float("alpha", 0.2), beta = c.attr_float("beta", 0.5);
  const ir::Value x = c.in(0);
  const ir::Value y = c.op(ir::Multiply{}, {x, c.scalar(x, alpha)});
  c.set_out(0, c.op(ir::Clamp{0, 1}, {c.op(ir::Add{}, {y, c.scalar(x, beta)})}));
}

/// ThresholdedRelu = x > alpha ? x : 0.
template <class T> void convert_thresholded_relu(NodeContext<T>& c) {
  const ir::Value x = c.in(0);
  const ir::Value keep = c.op(ir::Greater{}, {x, c.scalar(x, c.attr_float("alpha", 1.0))});
  c.set_out(0, c.op(ir::Select{}, {keep, x, c.scalar(x, 0)}));
}

/// Shrink = x < -lambd ? x + bias : (x > lambd ? x - bias : 0).
template <class T> void convert_shrink(NodeContext<T>& c) {
  const double bias = c.attr_float("bias", 0), lambd = c.attr_float("lambd", 0.5);
  const ir::Value x = c.in(0);
  const ir::Value hi =
      c.op(ir::Select{}, {c.op(ir::Greater{}, {x, c.scalar(x, lambd)}),
                          c.op(ir::Subtract{}, {x, c.scalar(x, bias)}), c.scalar(x, 0)});
  c.set_out(0, c.op(ir::Select{}, {c.op(ir::Less{}, {x, c.scalar(x, -lambd)}),
                                   c.op(ir::Add{}, {x, c.scalar(x, bias)}), hi}));
}

/// Reciprocal = 1 / x.
template <class T> void convert_reciprocal(NodeContext<T>& c) {
  const ir::Value x = c.in(0);
  c.set_out(0, c.op(ir::Divide{}, {c.scalar(x, 1), x}));
}

/// Sign = (x > 0) - (x < 0), NaN for NaN (as numpy).
template <class T> void convert_sign(NodeContext<T>& c) {
  const ir::Value x = c.in(0);
  const ElementType t = c.type(x).type;
  const ir::Value pos = c.op(ir::Convert{t}, {c.op(ir::Greater{}, {x, c.scalar(x, 0)})});
  const ir::Value neg = c.op(ir::Convert{t}, {c.op(ir::Less{}, {x, c.scalar(x, 0)})});
  ir::Value s = c.op(ir::Subtract{}, {pos, neg});
  if (is_float(t)) s = c.op(ir::Select{}, {c.op(ir::NotEqual{}, {x, x}), x, s});
  c.set_out(0, s);
}

template <class T> void convert_isnan(NodeContext<T>& c) {
  const ir::Value x = c.in(0);
  c.set_out(0, c.op(ir::NotEqual{}, {x, x}));
}

template <class T> void convert_isinf(NodeContext<T>& c) {
  const ir::Value x = c.in(0);
  const bool pos = c.attr_int("detect_positive", 1) != 0;
  const bool neg = c.attr_int("detect_negative", 1) != 0;
  const double inf = std::numeric_limits<double>::infinity();
  const ir::Value is_pos = c.op(ir::Equal{}, {x, c.scalar(x, inf)});
  const ir::Value is_neg = c.op(ir::Equal{}, {x, c.scalar(x, -inf)});
  if (pos && neg)
    c.set_out(0, c.op(ir::LogicalOr{}, {is_pos, is_neg}));
  else if (pos)
    c.set_out(0, is_pos);
  else if (neg)
    c.set_out(0, is_neg);
  else // neither: all false
    c.set_out(0, c.op(ir::NotEqual{}, {is_pos, is_pos}));
}

/// Pow(x, y): y is converted to x's type (ONNX lets the exponent's type differ).
template <class T> void convert_pow(NodeContext<T>& c) {
  const ir::Value x = c.in(0);
  ir::Value y = c.in(1);
  if (c.type(y).type != c.type(x).type) y = c.op(ir::Convert{c.type(x).type}, {y});
  c.set_out(0, c.op(ir::Power{}, {x, y}));
}

/// Mod: fmod = 1 is C fmod (our Mod), fmod = 0 the sign of the divisor (our FloorMod).
template <class T> void convert_mod(NodeContext<T>& c) {
  if (c.attr_int("fmod", 0) != 0)
    c.set_out(0, c.op(ir::Mod{}, {c.in(0), c.in(1)}));
  else
    c.set_out(0, c.op(ir::FloorMod{}, {c.in(0), c.in(1)}));
}

/// PRelu. Opset 7 and later broadcast the slope by NUMPY rules (unidirectionally): a
/// lower-rank slope lines up with x's last axes. Opsets 1 and 6 predate that: their slope is
/// "of size 1, shared across channels", or else one value per channel, so a rank-1 slope of C
/// values applies along axis 1 (the test data of libonnx-testdata's pytorch-converted
/// PReLU_*_multiparam cases, x [N,C,...] with a slope [C], say so). The slope is reshaped to
/// x's rank either way ([1,C,1,...,1] for the old per-channel form), so our PRelu never falls
/// back on its own rank-1 rule; a known slope is reshaped while loading (no Reshape step).
template <class T> void convert_prelu(NodeContext<T>& c) {
  c.ignore_attr("consumed_inputs"); // opset 1: a legacy optimization hint, no meaning
  const ir::Value x = c.in(0);
  const Shape& xs = c.type(x).shape;
  const HostTensor* known = c.host(1);
  const Shape ss = known ? known->shape() : c.type(c.in(1)).shape;
  std::vector<std::int64_t> dims(ss.begin(), ss.end());
  if (c.opset() < 7 && ss.rank() == 1 && ss[0] != 1 && xs.rank() >= 2) {
    dims.assign(xs.rank(), 1);
    dims[1] = ss[0];
  } else if (ss.rank() < xs.rank()) {
    dims.insert(dims.begin(), xs.rank() - ss.rank(), 1);
  }
  ir::Value slope;
  if (known && dims.size() != ss.rank()) {
    const ElementType t = require_element_type(known->dtype, c.who() + ": the slope");
    slope = c.g().constant(t, Shape(std::vector<Dim>(dims.begin(), dims.end())),
                           known->values.empty() ? std::vector<double>{0} : known->values,
                           c.node().input(1));
  } else {
    slope = c.in(1);
    if (dims.size() != ss.rank()) slope = c.op(ir::Reshape{dims}, {slope});
  }
  c.set_out(0, c.op(ir::PRelu{}, {x, slope}));
}

/// Clip: known bounds give a Clamp; run-time bounds give Maximum / Minimum (as numpy.clip;
/// min > max then yields max everywhere, as ONNX specifies).
template <class T> void convert_clip(NodeContext<T>& c) {
  const ir::Value x = c.in(0);
  std::optional<double> lo, hi;
  std::optional<ir::Value> lo_v, hi_v;
  if (c.opset() < 11) {
    if (c.has_attr("min")) lo = c.attr_float("min", 0);
    if (c.has_attr("max")) hi = c.attr_float("max", 0);
  } else {
    auto bound = [&](std::size_t i, std::optional<double>& k, std::optional<ir::Value>& v) {
      if (!c.has_in(i)) return;
      if (const HostTensor* h = c.host(i); h && h->values.size() == 1)
        k = h->values[0];
      else
        v = c.in(i);
    };
    bound(1, lo, lo_v);
    bound(2, hi, hi_v);
  }
  if (lo && hi && *lo <= *hi && !lo_v && !hi_v) {
    c.set_out(0, c.op(ir::Clamp{*lo, *hi}, {x}));
    return;
  }
  ir::Value y = x;
  if (lo) lo_v = c.scalar(x, *lo);
  if (hi) hi_v = c.scalar(x, *hi);
  if (lo_v) y = c.op(ir::Maximum{}, {y, *lo_v});
  if (hi_v) y = c.op(ir::Minimum{}, {y, *hi_v});
  c.set_out(0, y);
}

template <class T> void convert_where(NodeContext<T>& c) {
  c.set_out(0, c.op(ir::Select{}, {c.in(0), c.in(1), c.in(2)}));
}

template <class T> void convert_cast(NodeContext<T>& c) {
  const auto to = static_cast<int>(c.attr_int("to", 0));
  c.attr_int("saturate", 1);
  const ElementType t = require_element_type(to, c.who() + ": the target type");
  c.set_out(0, c.op(ir::Convert{t}, {c.in(0)}));
}

template <class T> void convert_cast_like(NodeContext<T>& c) {
  const ir::Value like = c.in(1);
  c.set_out(0, c.op(ir::Convert{c.type(like).type}, {c.in(0)}));
}

template <class T> void convert_hard_swish(NodeContext<T>& c) {
  c.set_out(0, c.op(ir::HSwish{}, {c.in(0)}));
}

/// Inference-mode Dropout: the identity, and a mask of ones.
template <class T> void convert_dropout(NodeContext<T>& c) {
  c.ignore_attr("seed");
  c.attr_float("ratio", 0.5);
  if (c.attr_int("is_test", 1) == 0) c.bad_attribute("is_test = 0 (training) is not supported");
  if (c.has_in(2)) {
    const HostTensor& training = c.constant(2, "training_mode");
    if (!training.values.empty() && training.values[0] != 0)
      c.bad_attribute("training_mode = true is not supported (inference only)");
  }
  const ir::Value x = c.in(0);
  c.set_out(0, x);
  if (c.has_out(1)) {
    HostTensor mask{pb::TensorProto::BOOL, {}, {}};
    mask.dims.assign(c.type(x).shape.begin(), c.type(x).shape.end());
    mask.values.assign(static_cast<std::size_t>(mask.element_count()), 1.0);
    c.set_out_host(1, std::move(mask));
  }
}

} // namespace snippets::onnx::detail
