// SPDX-License-Identifier: Apache-2.0
// tests/fuzz/matmul.hpp: the MatMul family, run as Programs: each model is one of
//  - a product with an elementwise epilogue: random M, N, K (0 too; depth 0 gives the epilogue
//    of zeros), batch dimensions broadcast between A and B, transpose_a / transpose_b, operands
//    stored in another order and transposed back (folded into strided loads), B an input or a
//    Constant (packed at compile time), epilogue inputs broadcast along rows, columns and
//    batches, a residual read of A, a transposed output that keeps its last axis, outputs of
//    other types;
//  - an MLP chain: 2-4 layers act(x W + b) with constant or input weights, a residual + x;
//  - attention: Q, K, V as [B, S, H, D] with the transformer's transposes (or planar with K
//    read transposed), scale, an optional mask broadcast over heads or rows, an elementwise op
//    before the Softmax, the output transposed back; zero keys run on the reference path
//    (snippets.compile.empty_value);
//  - a product followed by a Softmax;
//  - one case in 11, a QDQ MatMul: DequantizeLinear of u8/i8 x and of constant weights around
//    an f32 MatMul with an epilogue, which a Program folds into the int8 product
//    (passes/fold_dequantize_into_matmul.hpp); its error is within the f32 product's bound.
// f32 or bf16 operands (bf16 pairs by VDPBF16PS on AVX512_BF16 hosts, or widened:
// native_bf16), inputs in [-1, 1] with now and then a NaN or an infinity, 1-3 threads. Oracle:
// fuzz/bounds.hpp, whose product bound grows with K: (K + 2) 2^-24 |A| |B|.
#pragma once

#include "fuzz/elementwise.hpp"

namespace snippets::fuzz {

namespace detail {

inline Order random_order(Rng& rng, std::size_t rank) {
  Order o(rank);
  for (std::size_t i = 0; i < rank; ++i) o[i] = i;
  for (std::size_t i = rank; i-- > 1;)
    std::swap(o[i], o[std::size_t(rng.integer(0, std::int64_t(i)))]);
  return o;
}

inline Dim pick(Rng& rng, std::initializer_list<Dim> sizes) {
  return sizes.begin()[rng.integer(0, std::int64_t(sizes.size()) - 1)];
}

/// A model input that is the operand `logical`: planar, or (`permute`) stored in another order
/// and transposed back by the graph (the kernel reads it with strides).
inline Value operand(Graph& g, Rng& rng, ElementType t, const std::vector<Dim>& logical,
                     const std::string& name, bool permute) {
  if (!permute || logical.size() < 2) return g.parameter(t, Shape(logical), name);
  const Order p = random_order(rng, logical.size());
  std::vector<Dim> stored(logical.size());
  for (std::size_t i = 0; i < p.size(); ++i) stored[p[i]] = logical[i];
  return g.transpose(g.parameter(t, Shape(stored), name), p);
}

/// Values uniform in [-1, 1] for a Constant of `count` elements.
inline std::vector<double> weights(Rng& rng, std::int64_t count, double scale = 1) {
  std::vector<double> v(std::size_t(std::max<std::int64_t>(count, 1)));
  for (double& x : v) x = rng.uniform(-scale, scale);
  return v;
}

/// A shape that broadcasts into `out` ([..., M, N]) without extending it: along rows,
/// columns, batches, or a single element.
inline Shape epilogue_shape(Rng& rng, const std::vector<Dim>& out) {
  const std::size_t r = out.size();
  switch (rng.integer(0, 5)) {
  case 0: return Shape{out[r - 1]};    // a bias per column
  case 1: return Shape{out[r - 2], 1}; // per row
  case 2: return Shape{1};             // one value
  case 3: return Shape(out);           // full
  default: {
    std::vector<Dim> s = out; // broadcast along some batch dims or rows
    for (std::size_t i = 0; i + 1 < r; ++i)
      if (rng.integer(0, 1)) s[i] = 1;
    return Shape(s);
  }
  }
}

/// 0-4 random elementwise ops after `y` (inputs of `t` broadcast into y's shape, y itself).
inline Value epilogue(Graph& g, Rng& rng, Value y, ElementType t, int& inputs, int max_ops = 4,
                      std::optional<Value> residual = std::nullopt) {
  const std::vector<Dim> out(g.type(y).shape.begin(), g.type(y).shape.end());
  const auto n = rng.integer(0, max_ops);
  for (std::int64_t i = 0; i < n; ++i) {
    Value extra = y;
    const auto k = rng.integer(0, 17);
    if (k >= 12 && k < 16) {
      if (residual && rng.integer(0, 1)) {
        extra = *residual;
      } else if (rng.integer(0, 2) == 0) {
        const Shape s = epilogue_shape(rng, out);
        extra = g.constant(t, s, weights(rng, s.element_count()), "c");
      } else {
        extra = g.parameter(t, epilogue_shape(rng, out), "e" + std::to_string(inputs++));
      }
    }
    using G = ir::GeluApproximation;
    switch (k) {
    case 0: y = g.relu(y); break;
    case 1: y = g.gelu(y, G::erf); break;
    case 2: y = g.gelu(y, G::tanh); break;
    case 3: y = g.sigmoid(y); break;
    case 4: y = g.tanh(y); break;
    case 5: y = g.swish(y, 1.0); break;
    case 6: y = g.clamp(y, -0.5, 0.75); break;
    case 7: y = g.exp(y); break;
    case 8: y = g.elu(y, 1.0); break;
    case 9: y = g.leaky_relu(y, 0.1); break;
    case 10: y = g.mish(y); break;
    case 11: y = g.abs(y); break;
    case 12: y = g.add(y, extra); break;
    case 13: y = g.multiply(y, extra); break;
    case 14: y = g.subtract(extra, y); break;
    case 15: y = g.maximum(y, extra); break;
    case 16: y = g.multiply(y, y); break;
    default: y = g.negative(y); break;
    }
  }
  return y;
}

/// A product with its epilogue (see the header).
inline void product(Graph& g, Rng& rng, ElementType t) {
  const auto batch_rank = rng.integer(0, 2);
  std::vector<Dim> batch, ba, bb;
  for (std::int64_t i = 0; i < batch_rank; ++i) {
    const Dim d = pick(rng, {1, 2, 3});
    batch.push_back(d);
    ba.push_back(rng.integer(0, 2) ? d : 1);
    bb.push_back(rng.integer(0, 2) ? d : 1);
  }
  if (!bb.empty() && rng.integer(0, 2) == 0) bb.clear(); // B without batch dims
  Dim m = pick(rng, {1, 2, 5, 7, 13, 16, 17, 33}), k = pick(rng, {1, 3, 8, 16, 17, 31, 48}),
      n = pick(rng, {1, 5, 8, 15, 16, 17, 33, 48});
  if (rng.integer(0, 19) == 0) { // an empty dimension (depth 0: the epilogue of zeros)
    Dim* dims[] = {&m, &n, &k};
    *dims[rng.integer(0, 2)] = 0;
  }
  const bool ta = rng.integer(0, 3) == 0, tb = rng.integer(0, 2) == 0;
  std::vector<Dim> sa = ba, sb = bb;
  sa.insert(sa.end(), {ta ? k : m, ta ? m : k});
  sb.insert(sb.end(), {tb ? n : k, tb ? k : n});
  const Value a = operand(g, rng, t, sa, "a", rng.integer(0, 3) == 0);
  Value b;
  // a constant B with batch dims is refused by compile() (unsupported_matmul; the tokenizer
  // leaves it outside as an input): such a B is an input here
  const bool batched = std::any_of(bb.begin(), bb.end(), [](Dim d) { return d > 1; });
  if (!batched && rng.integer(0, 2) == 0) {
    b = g.constant(t, Shape(sb), weights(rng, Shape(sb).element_count()), "w");
  } else { // a bf16 B read with strides along rows and columns is refused: keep it planar
    b = operand(g, rng, t, sb, "b", t == ElementType::f32 && rng.integer(0, 3) == 0);
  }
  Value y = g.matmul(a, b, ta, tb);
  int inputs = 0;
  // Finding: a transposed input read twice (as A and by the epilogue) starts a Subgraph of its
  // own that compile() refuses (unsupported_op: the Transpose is not folded), where it should
  // stay on the reference path: the residual reads a planar A only
  const bool residual_fits =
      !ta && !ir::is<ir::Transpose>(g.node(a.output.node).op) && g.type(a).shape == g.type(y).shape;
  y = epilogue(g, rng, y, t, inputs, 4, residual_fits ? std::optional{a} : std::nullopt);
  const std::size_t r = g.type(y).shape.rank();
  constexpr ElementType to[] = {ElementType::f32, ElementType::f16, ElementType::bf16,
                                ElementType::i8, ElementType::i32};
  const bool convert = rng.integer(0, 4) == 0;
  const ElementType out_type = convert ? to[rng.integer(0, 4)] : t;
  const std::vector<Dim> out(g.type(y).shape.begin(), g.type(y).shape.end());
  if (r >= 3 && rng.integer(0, 3) == 0) {
    Order o = random_order(rng, r - 1); // a transposed output that keeps its last axis
    o.push_back(r - 1);
    y = g.transpose(y, o);
  }
  if (convert) y = g.convert(y, out_type);
  g.result(y, "y");
}

/// An MLP chain (see the header).
inline void mlp(Graph& g, Rng& rng, ElementType t) {
  std::vector<Dim> xs;
  if (rng.integer(0, 2) == 0) xs.push_back(pick(rng, {1, 2, 3}));
  xs.push_back(rng.integer(0, 24) == 0 ? 0 : pick(rng, {1, 4, 7, 13, 17, 33}));
  const Dim k0 = pick(rng, {8, 16, 17, 24, 33});
  xs.push_back(k0);
  const Value x = g.parameter(t, Shape(xs), "x");
  Value h = x;
  Dim k = k0;
  const auto layers = rng.integer(2, 4);
  for (std::int64_t l = 0; l < layers; ++l) {
    const std::string i = std::to_string(l);
    const Dim w = l + 1 == layers && rng.integer(0, 1) ? k0 : pick(rng, {8, 16, 17, 24, 33, 48});
    const bool tb = rng.integer(0, 3) == 0;
    const Shape ws = tb ? Shape{w, k} : Shape{k, w};
    const double scale = 1.5 / std::sqrt(double(k));
    const bool constant = rng.integer(0, 2) != 0;
    const Value wv = constant ? g.constant(t, ws, weights(rng, ws.element_count(), scale),
                                           std::string("w").append(i))
                              : g.parameter(t, ws, std::string("w").append(i));
    Value y =
        g.add(g.matmul(h, wv, false, tb), g.parameter(t, Shape{w}, std::string("b").append(i)));
    switch (rng.integer(0, 5)) {
    case 0: y = g.relu(y); break;
    case 1: y = g.gelu(y, ir::GeluApproximation::tanh); break;
    case 2: y = g.gelu(y, ir::GeluApproximation::erf); break;
    case 3: y = g.sigmoid(y); break;
    case 4: y = g.swish(y, 1.0); break;
    default: break;
    }
    h = y;
    k = w;
  }
  // residual: the epilogue reads A again (one tensor, however many read it)
  if (k == k0 && rng.integer(0, 1)) h = g.add(h, x);
  g.result(h, "y");
}

/// Attention, or (`softmax_only`) a product followed by a Softmax (see the header).
inline void attention(Graph& g, Rng& rng, ElementType t, bool softmax_only) {
  const Dim b = pick(rng, {1, 2}), s = pick(rng, {1, 3, 8, 13, 17}), h = pick(rng, {1, 2, 3}),
            d = pick(rng, {8, 16, 17, 32});
  Dim kv = rng.integer(0, 2) ? s : pick(rng, {1, 5, 16, 19});
  if (rng.integer(0, 24) == 0) kv = 0; // zero keys: Softmax of empty rows
  const bool planar = rng.integer(0, 2) == 0, k_rows = planar && rng.integer(0, 1);
  Value q, k, v;
  if (planar) {
    q = g.parameter(t, Shape{b * h, s, d}, "q");
    k = g.parameter(t, k_rows ? Shape{b * h, kv, d} : Shape{b * h, d, kv}, "k");
    v = g.parameter(t, Shape{b * h, kv, d}, "v");
  } else {
    q = g.transpose(g.parameter(t, Shape{b, s, h, d}, "q"), {0, 2, 1, 3});
    k = g.transpose(g.parameter(t, Shape{b, kv, h, d}, "k"), {0, 2, 3, 1});
    v = g.transpose(g.parameter(t, Shape{b, kv, h, d}, "v"), {0, 2, 1, 3});
  }
  Value scores = g.matmul(q, k, false, k_rows);
  scores = g.multiply(scores, g.constant(t, Shape{1}, {rng.integer(0, 1) ? 0.125 : 0.3}, "scale"));
  if (rng.integer(0, 2)) {
    std::vector<Dim> ms = planar ? std::vector<Dim>{b * h, s, kv} : std::vector<Dim>{b, h, s, kv};
    for (std::size_t i = 0; i + 1 < ms.size(); ++i)
      if (rng.integer(0, 1)) ms[i] = 1;
    if (rng.integer(0, 2) == 0) ms.erase(ms.begin());
    scores = g.add(scores, g.parameter(t, Shape(ms), "mask"));
  }
  switch (rng.integer(0, 3)) { // an elementwise op before the Softmax
  case 0: scores = g.tanh(scores); break;
  case 1: scores = g.clamp(scores, -2, 2); break;
  default: break;
  }
  Value p = g.softmax(scores, -1);
  if (softmax_only) {
    g.result(p, "p");
    return;
  }
  Value out = g.matmul(p, v);
  if (!planar && rng.integer(0, 3)) out = g.transpose(out, {0, 2, 1, 3});
  g.result(out, "out");
}

/// A QDQ MatMul (see the header): u8/i8 x less a zero point times a scale, by constant i8
/// weights (or u8 less 128) times one scale or one per column, and an f32 epilogue.
inline void qdq_product(Graph& g, Rng& rng) {
  const Dim m = pick(rng, {1, 5, 13, 17, 33}), k = pick(rng, {1, 3, 16, 17, 48, 130}),
            n = pick(rng, {1, 8, 15, 17, 33, 48});
  const bool x_u8 = rng.integer(0, 2) != 0, w_u8 = rng.integer(0, 3) == 0;
  const ElementType xt = x_u8 ? ElementType::u8 : ElementType::i8;
  const Value x = g.parameter(xt, Shape{m, k}, "x");
  Value da = g.convert(x, ElementType::f32);
  if (rng.integer(0, 1))
    da = g.subtract(da, g.scalar(ElementType::f32,
                                 double(x_u8 ? rng.integer(0, 255) : rng.integer(-128, 127))));
  da = g.multiply(da, g.scalar(ElementType::f32, rng.uniform(0.001, 0.05)));
  std::vector<double> w(std::size_t(k * n));
  for (double& v : w) v = double(rng.integer(-128, 127)) + (w_u8 ? 128 : 0);
  Value dw = g.convert(g.constant(w_u8 ? ElementType::u8 : ElementType::i8, Shape{k, n}, w, "w"),
                       ElementType::f32);
  if (w_u8) dw = g.subtract(dw, g.scalar(ElementType::f32, 128));
  std::vector<double> sw(rng.integer(0, 1) ? std::size_t(n) : 1);
  for (double& v : sw) v = rng.uniform(0.001, 0.05);
  dw = g.multiply(dw, sw.size() == 1 ? g.scalar(ElementType::f32, sw[0])
                                     : g.constant(ElementType::f32, Shape{n}, sw));
  int inputs = 0;
  g.result(epilogue(g, rng, g.matmul(da, dw), ElementType::f32, inputs, 3), "y");
}

} // namespace detail

inline Case matmul_case(std::uint64_t seed) {
  if (seed % 11 == 10) { // one case in 11: a QDQ MatMul, which a Program folds into int8
    Rng rng(seed);
    Case c;
    detail::qdq_product(c.model, rng);
    c.check = Check::bounds;
    c.fill = Fill::unit;
    c.fma = true;
    c.threads = 1 + int(seed % 3);
    return c;
  }
  Rng rng(seed);
  ElementType t = rng.integer(0, 2) == 0 ? ElementType::bf16 : ElementType::f32;
  Case c;
  const auto kind = rng.integer(0, 9);
  // compile() refuses a MatMul -> Softmax written as bf16 (SoftmaxRows works in place in the
  // output, on f32 rows; test_jit_matmul_bf16.cpp): that form is generated with f32 only
  if (kind == 9) t = ElementType::f32;
  if (kind < 5)
    detail::product(c.model, rng, t);
  else if (kind < 7)
    detail::mlp(c.model, rng, t);
  else
    detail::attention(c.model, rng, t, kind == 9);
  c.check = Check::bounds;
  c.fill = Fill::unit;
  c.specials = rng.integer(0, 9) == 0;
  c.fma = true;
  c.native_bf16 = rng.integer(0, 3) != 0;
  c.threads = 1 + int(seed % 3);
  return c;
}

} // namespace snippets::fuzz
