// SPDX-License-Identifier: Apache-2.0
// snippets/passes/decompose_quantization.hpp: DecomposeQuantization (data flow), the seed's
// FakeQuantize decomposition: FakeQuantize and Quantize become the elementwise ops kernels
// have, computing the f32 steps that define them (reference/quantization.hpp), so a kernel
// quantizes bit for bit as the reference does.
//
//  - Quantize(x, s, z) as `to`: Convert_to(Round(x / s) + z). The Convert truncates (a no-op on
//    the rounded value), saturates and takes 0 for NaN, as the op does; a zero point of one
//    value 0 adds nothing (the sign of a zero does not survive the Convert).
//  - FakeQuantize(x, il, ih, ol, oh) with tensor ranges (per channel: body inputs, broadcast):
//      m = Round((x - il) * isc) * osc + ol        isc = (levels-1) / (ih - il),
//      Select(x <= lo, ol, Select(x > hi, oh, m))   osc = (oh - ol) / (levels-1),
//    with lo = Minimum(il, ih), hi = Maximum(il, ih): the ends are exact whatever the ranges
//    (inverted, empty, NaN), as the op defines them.
//  - FakeQuantize with ranges of one value each: the scales are folded into Scalars here, in
//    f32 (reference/quantization.hpp). When il < ih, the scales are finite, and m gives ol
//    exactly at il and oh exactly at ih (so the ends follow from a clamp), the leaner
//      Round((Minimum(Maximum(x, il), ih) - il) * isc) * osc + ol
//    is the same function (a NaN x stays NaN through the clamp; at the low end x - il is +0).
//    A step that changes nothing is left out: - il for il = +0, * osc for osc = 1, + ol for
//    ol = +0 with osc > 0 (then m >= +0). ol = -0 keeps the Select form (m + -0 loses the sign).
//    Otherwise the Select form, with Scalars.
// The product m * osc is added to ol as m - (-ol): FuseMultiplyAdd contracts a Multiply that
// feeds an Add, which would round once where the op rounds twice. f16 and bf16 operands are
// converted to f32 first (the op computes in f32) and the result back to their type. It runs
// first, before Canonicalize changes ranks, like DecomposeSoftmax.
#pragma once

#include <bit>
#include <cmath>
#include <string>

#include "snippets/passes/data_flow.hpp"
#include "snippets/passes/properties.hpp"
#include "snippets/reference/quantization.hpp"

namespace snippets::passes {

struct DecomposeQuantization {
  using pass_tag = data_flow_pass_tag;
  static constexpr std::string_view name = "DecomposeQuantization";
  using before = Properties<property::RanksAligned>;
  using establishes = Properties<property::QuantizationDecomposed>;

  template <class T> ir::Graph<T> run(const ir::Graph<T>& body) const {
    return rebuild(body,
                   [&](ir::Graph<T>& out, const ir::Node<T>& n,
                       std::span<const ir::Value> in) -> std::optional<std::vector<ir::Value>> {
                     if (const auto* fq = std::get_if<ir::FakeQuantize>(&n.op))
                       return std::vector{fake_quantize(out, n, *fq, in)};
                     if (const auto* q = std::get_if<ir::Quantize>(&n.op))
                       return std::vector{quantize(out, n, *q, in)};
                     return std::nullopt;
                   });
  }

private:
  static constexpr ElementType f32 = ElementType::f32;

  /// Builds the steps in `out`, named after the node.
  template <class T> struct Builder {
    ir::Graph<T>& g;
    const std::string& name;
    template <class Tag>
    ir::Value op(Tag tag, std::initializer_list<ir::Value> in, std::string_view step) {
      return g.make(std::move(tag), in, name + "/" + std::string(step))[0];
    }
    ir::Value scalar(double v, std::string_view step) {
      return g.scalar(f32, v, {}, name + "/" + std::string(step));
    }
    /// `v` as f32 (the op computes in f32).
    ir::Value as_f32(ir::Value v) {
      return g.type(v).type == f32 ? v : op(ir::Convert{f32}, {v}, "f32");
    }
    /// The one value of `v`, when a Scalar or a Constant of equal values holds it.
    std::optional<double> uniform(ir::Value v) const {
      const auto u = detail::uniform_value<T>(g.node(v.output.node).op);
      return u ? std::optional{round_to(g.type(v).type, *u)} : std::nullopt; // as it holds it
    }
  };

  static bool positive_zero(double v) { return v == 0 && !std::signbit(v); }

  template <class T>
  static ir::Value quantize(ir::Graph<T>& out, const ir::Node<T>& n, const ir::Quantize& q,
                            std::span<const ir::Value> in) {
    Builder<T> b{out, n.name};
    const ir::Value x = b.as_f32(in[0]);
    ir::Value r = b.op(ir::Round{}, {b.op(ir::Divide{}, {x, b.as_f32(in[1])}, "div")}, "round");
    if (b.uniform(in[2]) != 0.0 || out.type(r).shape != n.outputs[0].shape)
      r = b.op(ir::Add{}, {r, b.as_f32(in[2])}, "zero_point");
    return out.make(ir::Convert{q.to}, {r}, n.name)[0];
  }

  template <class T>
  static ir::Value fake_quantize(ir::Graph<T>& out, const ir::Node<T>& n,
                                 const ir::FakeQuantize& fq, std::span<const ir::Value> in) {
    Builder<T> b{out, n.name};
    const ir::Value x = b.as_f32(in[0]);
    std::optional<double> u[4];
    bool folded = out.type(x).shape == n.outputs[0].shape; // the ranges do not broadcast x
    for (int i = 0; i < 4; ++i) folded = (u[i] = b.uniform(in[std::size_t(i) + 1])) && folded;
    ir::Value y =
        folded ? fake_quantize_folded(
                     b, x, reference::fake_quantize_ranges(*u[0], *u[1], *u[2], *u[3], fq.levels))
               : fake_quantize_tensors(b, x, in, fq.levels);
    if (const ElementType t = n.outputs[0].type; t != f32) y = b.op(ir::Convert{t}, {y}, "back");
    return y;
  }

  /// round((c - il) * isc) * osc + ol; a null operand leaves its step out (the lean form).
  template <class T>
  static ir::Value middle(Builder<T>& b, ir::Value c, std::optional<ir::Value> il, ir::Value isc,
                          std::optional<ir::Value> osc, std::optional<ir::Value> neg_ol) {
    if (il) c = b.op(ir::Subtract{}, {c, *il}, "shift");
    ir::Value m = b.op(ir::Round{}, {b.op(ir::Multiply{}, {c, isc}, "scale")}, "round");
    if (osc) m = b.op(ir::Multiply{}, {m, *osc}, "rescale");
    return neg_ol ? b.op(ir::Subtract{}, {m, *neg_ol}, "offset") : m;
  }

  template <class T>
  static ir::Value ends(Builder<T>& b, ir::Value x, ir::Value lo, ir::Value hi, ir::Value ol,
                        ir::Value oh, ir::Value m) {
    const ir::Value above = b.op(ir::Greater{}, {x, hi}, "above");
    const ir::Value below = b.op(ir::LessEqual{}, {x, lo}, "below");
    return b.op(ir::Select{}, {below, ol, b.op(ir::Select{}, {above, oh, m}, "high")}, "low");
  }

  template <class T>
  static ir::Value fake_quantize_folded(Builder<T>& b, ir::Value x,
                                        const reference::FakeQuantizeRanges& r) {
    const auto same = [](double a, double c) {
      return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(c);
    };
    const bool lean = r.il < r.ih && std::isfinite(r.isc) && r.isc > 0 && std::isfinite(r.osc) &&
                      !(r.ol == 0 && std::signbit(r.ol)) &&
                      same(reference::fake_quantize_middle(r.il, r), r.ol) &&
                      same(reference::fake_quantize_middle(r.ih, r), r.oh);
    const ir::Value il = b.scalar(r.il, "il"), isc = b.scalar(r.isc, "isc");
    if (!lean)
      return ends(b, x, b.scalar(r.lo, "lo"), b.scalar(r.hi, "hi"), b.scalar(r.ol, "ol"),
                  b.scalar(r.oh, "oh"),
                  middle(b, x, il, isc, b.scalar(r.osc, "osc"), b.scalar(-r.ol, "neg_ol")));
    const ir::Value c =
        b.op(ir::Minimum{}, {b.op(ir::Maximum{}, {x, il}, "clamp_low"), b.scalar(r.ih, "ih")},
             "clamp_high");
    auto step = [&](bool needed, double v, std::string_view what) {
      return needed ? std::optional{b.scalar(v, what)} : std::nullopt;
    };
    return middle(b, c, positive_zero(r.il) ? std::nullopt : std::optional{il}, isc,
                  step(r.osc != 1.0, r.osc, "osc"),
                  step(!(positive_zero(r.ol) && r.osc > 0), -r.ol, "neg_ol"));
  }

  template <class T>
  static ir::Value fake_quantize_tensors(Builder<T>& b, ir::Value x, std::span<const ir::Value> in,
                                         std::int64_t levels) {
    const ir::Value il = b.as_f32(in[1]), ih = b.as_f32(in[2]);
    const ir::Value ol = b.as_f32(in[3]), oh = b.as_f32(in[4]);
    const ir::Value steps = b.scalar(double(levels - 1), "steps");
    const ir::Value isc =
        b.op(ir::Divide{}, {steps, b.op(ir::Subtract{}, {ih, il}, "in_range")}, "isc");
    const ir::Value osc =
        b.op(ir::Divide{}, {b.op(ir::Subtract{}, {oh, ol}, "out_range"), steps}, "osc");
    const ir::Value m = middle(b, x, il, isc, osc, b.op(ir::Negative{}, {ol}, "neg_ol"));
    return ends(b, x, b.op(ir::Minimum{}, {il, ih}, "lo"), b.op(ir::Maximum{}, {il, ih}, "hi"), ol,
                oh, m);
  }
};

} // namespace snippets::passes
