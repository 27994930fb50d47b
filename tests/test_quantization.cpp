// SPDX-License-Identifier: Apache-2.0
// Tests of FakeQuantize and Quantize: the ops (ir/op_tags.hpp: type inference, printer,
// builder), their f32 reference semantics (reference/quantization.hpp), their decomposition
// into kernel ops (passes/decompose_quantization.hpp: the decomposed body computes the op's
// formula bit for bit, in its lean and its Select forms) and the kernels: every quantized
// result is compared with the reference bit for bit on AVX2 and AVX-512, unrolled once and four
// times, with 1-3 threads, over every tail length, per-tensor and per-channel ranges, inputs
// that hit the ends of the ranges and their f32 neighbours, ties of round half to even,
// saturation, NaN and infinities, and zero sizes. The Programs at the end check what the
// tokenizer makes of quantized models: one kernel each.
#include "quantization_test_util.hpp"

using namespace snippets;
using namespace snippets::jit_test;
using namespace snippets::quantization_test;

namespace {

constexpr ElementType i32 = ElementType::i32;
constexpr Dim inner_sizes[] = {1, 7, 8, 15, 16, 17, 33, 100};

/// Every ISA, unroll 1 and 4, 1-3 threads, bit for bit against the reference with each node
/// rounded to f32 (the ops before a quantization are exact on the inputs given, so FMA
/// contraction changes nothing; the decomposition never contracts).
void check(const Graph& g, const std::vector<Tensor>& in) {
  check_jit(
      g, in,
      {.tol = exact, .threads = {1, 2, 3}, .fma = true, .round_each_node = true, .unroll = {1, 4}});
}

/// `g` as a Program on every ISA: one kernel step and no intermediate memory, its outputs the
/// reference's bit for bit with 1 and 3 threads.
void check_one_kernel(const Graph& g, const std::vector<Tensor>& in) {
  const auto want = reference::evaluate(g, in);
  for_each_isa([&](x64::Isa isa) {
    ProgramOptions<TestedTraits> opt;
    opt.compile.isa = isa;
    const Program<> p(g, opt);
    check_steps_are_kernels(p);
    CHECK(p.steps().size() == 1);
    CHECK(p.arena_bytes() == 0);
    for (const int threads : {1, 3}) {
      const auto got = p.run(in, with_threads(threads));
      for (std::size_t i = 0; i < got.size(); ++i) {
        const std::string report = compare(got[i], want.at(i), exact);
        CHECK_MESSAGE(report.empty(), report);
      }
    }
  });
}

/// A u8 tensor of random bytes.
Tensor bytes(const Shape& s, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<double> v(std::size_t(s.element_count()));
  for (double& x : v) x = double(rng.integer(0, 255));
  return Tensor::from_values(u8, s, v);
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

/// The op names of `g`, in id order.
std::string ops_of(const Graph& g) {
  std::string s;
  for (ir::NodeId id = 0; id < g.size(); ++id) s += std::string(g.node(id).op_name()) + " ";
  return s;
}

} // namespace

TEST_CASE("FakeQuantize and Quantize: types, NUMPY broadcasting of the ranges, attributes") {
  Graph g;
  const auto x = g.parameter(f32, {2, 3, 4}, "x");
  const auto per_channel = g.parameter(f32, {3, 1}, "c");
  const auto one = g.scalar(f32, 1);
  const auto y = g.fake_quantize(x, per_channel, one, one, per_channel, 16);
  CHECK(g.type(y) == ir::TensorType{f32, {2, 3, 4}});
  const auto wide = g.fake_quantize(x, g.parameter(f32, {5, 1, 1, 1}), one, one, one, 2);
  CHECK(g.type(wide).shape == Shape{5, 2, 3, 4}); // the ranges may broadcast x, as in OpenVINO
  const auto q = g.quantize(x, per_channel, one, i8);
  CHECK(g.type(q) == ir::TensorType{i8, {2, 3, 4}});
  const auto h = g.parameter(f16, {7}, "h");
  CHECK(g.type(g.quantize(h, g.scalar(f16, 2), g.scalar(f16, 0))).type == u8);
  const std::string text = ir::to_string(g);
  CHECK(text.find("FakeQuantize 'FakeQuantize_") != std::string::npos);
  CHECK(text.find("{levels=16} -> f32[2,3,4]") != std::string::npos);
  CHECK(text.find("{to=i8} -> i8[2,3,4]") != std::string::npos);

  const std::size_t before = g.size();
  const auto bad = g.parameter(f32, {4, 1}, "bad");
  CHECK(error_id([&] { g.fake_quantize(x, bad, one, one, one, 256); }) ==
        "snippets.shape.not_broadcastable");
  CHECK(error_id([&] { g.quantize(x, bad, one); }) == "snippets.shape.not_broadcastable");
  for (const std::int64_t levels :
       {std::int64_t{1}, std::int64_t{0}, std::int64_t{-3}, ir::FakeQuantize::max_levels + 1})
    CHECK(error_id([&] { g.fake_quantize(x, one, one, one, one, levels); }) ==
          "snippets.graph.bad_attribute");
  CHECK(error_id([&] { g.fake_quantize(x, one, one, one, one, ir::FakeQuantize::max_levels); }) ==
        "no error");
  for (const ElementType to : {f32, i32, ElementType::boolean, f16})
    CHECK(error_id([&] { g.quantize(x, one, one, to); }) == "snippets.graph.bad_attribute");
  CHECK(error_id([&] { g.quantize(x, one, g.scalar(u8, 3)); }) ==
        "snippets.graph.unsupported_type"); // a zero point of u8: Convert it to x's type
  CHECK(error_id([&] { g.fake_quantize(h, one, one, one, one, 3); }) ==
        "snippets.graph.type_mismatch");
  const auto ints = g.parameter(u8, {4}, "ints");
  const auto c8 = g.scalar(u8, 1);
  CHECK(error_id([&] { g.fake_quantize(ints, c8, c8, c8, c8, 3); }) ==
        "snippets.graph.unsupported_type");
  CHECK(error_id([&] { g.quantize(ints, c8, c8); }) == "snippets.graph.unsupported_type");
  CHECK(error_id([&] { g.apply(ir::FakeQuantize{3}, x, one, one, one); }) ==
        "snippets.graph.arity");
  CHECK(g.size() == before + 5); // the nodes built above: no failed construction left one
}

TEST_CASE("reference FakeQuantize: exact ends, ties to even, NaN, inverted and empty ranges") {
  auto fq = [](double x, Ranges r) {
    return reference::formula(ir::FakeQuantize{r.levels}, x, r.il, r.ih, r.ol, r.oh);
  };
  const Ranges identity{0, 10, 0, 10, 11}; // one level per integer
  const double xs[] = {-1, 0, 0.5, 1.5, 2.5, 3.49, 9.5, 10, 11, inf, -inf};
  const double want[] = {0, 0, 0, 2, 2, 3, 10, 10, 10, 10, 0};
  for (std::size_t i = 0; i < std::size(xs); ++i) CHECK(fq(xs[i], identity) == want[i]);
  CHECK(std::isnan(fq(qnan, identity)));
  CHECK(std::isnan(fq(1, {qnan, 10, 0, 10, 11}))); // NaN ranges: no end applies
  // the ends give the output range exactly, even where the formula rounds next to it
  const Ranges thirds{0, 1, 0, 0.1, 4};
  CHECK(fq(2, thirds) == float(0.1));
  CHECK(fq(next_up(1), thirds) == float(0.1));
  CHECK(fq(-1, thirds) == 0);
  CHECK(fq(0, thirds) == 0);
  // inverted input range: x <= min -> ol, x > max -> oh, between: the formula (isc < 0)
  const Ranges inverted{1, -1, 0, 2, 3}; // isc = 2 / -2, osc = 1
  CHECK(fq(-1, inverted) == 0);
  CHECK(fq(1.5, inverted) == 2);
  CHECK(fq(0, inverted) == 1);   // (0 - 1) * -1 = 1
  CHECK(fq(0.9, inverted) == 0); // round(0.1) = 0
  // an empty input range: only the ends
  CHECK(fq(1.5, {1.5, 1.5, -2, 2, 5}) == -2);
  CHECK(fq(1.6, {1.5, 1.5, -2, 2, 5}) == 2);
  // the steps are f32: (x - il) * isc rounds to a tie in f32 where double would not
  const Ranges tenths{0, 25.5, 0, 255, 256}; // isc = 10
  CHECK(fq(0.35, tenths) == 4); // f32(f32(0.35) * 10) = 3.5 -> 4; in double 3.4999999 -> 3
  // the result takes x's type; the interpreter rounds it
  Graph g;
  const auto h = g.parameter(f16, {1}, "h");
  auto c = [&](double v) { return g.scalar(f16, v); };
  g.result(g.fake_quantize(h, c(0), c(1), c(0), c(0.1), 4), "y");
  const auto out = reference::evaluate(g, {Tensor::from_values(f16, {1}, {0.5})});
  const double osc = float(round_to(f16, 0.1) / 3); // 0.5 * 3 = 1.5 -> 2 levels of osc
  CHECK(out[0].at(0) == round_to(f16, float(2 * osc)));
}

TEST_CASE("reference Quantize: ONNX's test vectors, ties of the f32 quotient, saturation, NaN") {
  auto q = [](double x, double s, double z, ElementType to = u8) {
    return reference::formula(ir::Quantize{to}, x, s, z);
  };
  const double xs[] = {0, 2, 3, 1000, -254, -1000}; // ONNX's test_quantizelinear
  const double want[] = {128, 129, 130, 255, 1, 0};
  for (std::size_t i = 0; i < std::size(xs); ++i) CHECK(q(xs[i], 2, 128) == want[i]);
  CHECK(q(2.5, 1, 0) == 2);
  CHECK(q(3.5, 1, 0) == 4);
  CHECK(q(-2.5, 1, 0, i8) == -2);
  CHECK(q(-2.5, 1, 0) == 0);
  CHECK(q(300, 1, 0, i8) == 127);
  CHECK(q(-300, 1, 0, i8) == -128);
  CHECK(q(inf, 1, 0, i8) == 127);
  CHECK(q(qnan, 1, 10) == 0); // as Convert
  CHECK(q(1, 0, 3) == 255);   // x / 0 = inf
  CHECK(q(0, 0, 3) == 0);     // 0 / 0 = NaN
  // f32(0.75 / f32(0.1)) is 7.5, a tie (to 8); the double quotient 7.4999999 would give 7
  CHECK(q(0.75, 0.1, 0) == 8);
  CHECK(q(0.35, 0.1, 0) == 4); // f32(0.35): 3.5 -> 4 (double: 3.4999999 -> 3)
}

TEST_CASE("DecomposeQuantization: no quantization op is left, and the body computes the op's "
          "formula bit for bit in each form") {
  const Shape s{3, 700};
  std::uint64_t seed = 1;
  for (const Ranges& r : per_tensor) {
    INFO("ranges " << r.describe());
    const Graph g = fake_quantize_graph(s, r);
    const Graph d = passes::DecomposeQuantization{}.run(g);
    const std::string ops = ops_of(d);
    CHECK(ops.find("FakeQuantize") == std::string::npos);
    const Tensor x = around_tensor(s, ++seed, r.il, r.ih, r.step());
    reference::Options ro;
    ro.round_each_node = true;
    const std::string report =
        compare(reference::evaluate(d, {x}, ro).at(0), reference::evaluate(g, {x}).at(0), exact);
    CHECK_MESSAGE(report.empty(), report);
  }
  // the forms: a clamp for ordinary ranges, Selects where an end needs them
  auto form = [&](const Ranges& r) {
    return ops_of(passes::DecomposeQuantization{}.run(fake_quantize_graph(s, r)));
  };
  const std::string lean = form({0, 255, 0, 255, 256});
  CHECK(lean.find("Select") == std::string::npos);
  CHECK(lean.find("Maximum") != std::string::npos);
  CHECK(lean.find("Subtract") == std::string::npos); // il = +0, ol = +0: no shift, no offset
  CHECK(lean.find("Multiply") != std::string::npos);
  CHECK(form({2, -2, -1, 1, 9}).find("Select") != std::string::npos);     // inverted
  CHECK(form({-8, 8, -0.0, 32, 33}).find("Select") != std::string::npos); // ol = -0
  // Quantize: a division, the rounding, the zero point (left out when it is 0), the Convert
  Graph q;
  const auto x = q.parameter(f32, s, "x");
  q.result(q.quantize(x, q.scalar(f32, 0.5), q.scalar(f32, 3), i8), "a");
  q.result(q.quantize(x, q.scalar(f32, 0.5), q.scalar(f32, 0)), "b");
  const std::string qops = ops_of(passes::DecomposeQuantization{}.run(q));
  CHECK(count(qops, "Quantize") == 0);
  CHECK(count(qops, "Divide") == 2);
  CHECK(count(qops, "Round") == 2);
  CHECK(count(qops, "Add") == 1);
  CHECK(count(qops, "Convert") == 2);
}

TEST_CASE("jit FakeQuantize: per-tensor ranges in every form, every tail length, u8 and f32 "
          "outputs") {
  std::uint64_t seed = 100;
  for (const Ranges& r : per_tensor) {
    INFO("ranges " << r.describe());
    for (const Dim n : inner_sizes) {
      for (const Shape& s : {Shape{n}, Shape{3, n}}) {
        INFO("shape = " << s.to_string());
        const Tensor x = around_tensor(s, ++seed, r.il, r.ih, r.step());
        check(fake_quantize_graph(s, r), {x});
        if (r.ol == 0 && r.oh == 255) check(fake_quantize_graph(s, r, u8), {x});
      }
    }
  }
}

TEST_CASE("jit FakeQuantize: per-channel ranges broadcast over [N, C, H, W], inputs or "
          "constants, ordinary, inverted and empty channels") {
  for (const Shape& s : {Shape{2, 3, 5, 7}, Shape{1, 4, 3, 16}, Shape{3, 5, 1, 33}}) {
    INFO("shape = " << s.to_string());
    const Dim c = s[1];
    const Shape rs{1, c, 1, 1};
    std::vector<double> il, ih, ol, oh;
    Rng rng{std::uint64_t(c)};
    for (Dim k = 0; k < c; ++k) {
      const double lo = rng.uniform(-4, 0), hi = rng.uniform(0.5, 4);
      il.push_back(k % 4 == 1 ? hi : lo);                   // channel 1: inverted
      ih.push_back(k % 4 == 1 ? lo : k % 4 == 2 ? lo : hi); // channel 2: empty
      ol.push_back(k % 4 == 3 ? 0.0 : rng.uniform(-2, 0));
      oh.push_back(k % 4 == 3 ? 255.0 : rng.uniform(0, 2));
    }
    std::vector<double> xv = around(std::size_t(s.element_count()), std::uint64_t(c), -4, 4, 0.25);
    for (std::size_t i = 0; i < xv.size(); i += 5) // the channel's own ends
      xv[i] = (i / 7) % 2 ? il[(i / std::size_t(s[2] * s[3])) % std::size_t(c)]
                          : ih[(i / std::size_t(s[2] * s[3])) % std::size_t(c)];
    const Tensor x = Tensor::from_values(f32, s, xv);
    for (const bool as_inputs : {true, false}) {
      INFO("ranges as " << (as_inputs ? "inputs" : "constants"));
      Graph g;
      const auto xp = g.parameter(f32, s, "x");
      std::vector<Tensor> in{x};
      auto range = [&](const std::vector<double>& v, const char* name) {
        if (!as_inputs) return g.constant(f32, rs, v, name);
        in.push_back(Tensor::from_values(f32, rs, v));
        return g.parameter(f32, rs, name);
      };
      const auto y = g.fake_quantize(xp, range(il, "il"), range(ih, "ih"), range(ol, "ol"),
                                     range(oh, "oh"), 15);
      g.result(y, "y");
      if (as_inputs) {
        check(g, in);
      } else { // a model: the tokenizer passes the constants to one kernel as inputs
        check_one_kernel(g, in);
      }
    }
  }
}

TEST_CASE("jit Quantize: u8 and i8 outputs, per tensor and per channel, ties, saturation, NaN") {
  std::uint64_t seed = 300;
  for (const Dim n : inner_sizes) {
    const Shape s{2, 3, n};
    INFO("shape = " << s.to_string());
    for (const ElementType to : {u8, i8}) {
      // per tensor: a scale of 0.1 (f32 ties where double has none) and one of 0.5 (halves)
      for (const double scale : {0.1, 0.5}) {
        Graph g;
        const auto x = g.parameter(f32, s, "x");
        g.result(g.quantize(x, g.scalar(f32, scale), g.scalar(f32, to == u8 ? 128 : -3), to));
        check(g, {around_tensor(s, ++seed, -70, 70, scale)});
      }
      // per channel: scale and zero point as inputs [3, 1]
      Graph g;
      const auto x = g.parameter(f32, s, "x");
      const auto sc = g.parameter(f32, {3, 1}, "scale"), zp = g.parameter(f32, {3, 1}, "zp");
      g.result(g.quantize(x, sc, zp, to), "q");
      const std::vector<double> zps =
          to == u8 ? std::vector<double>{0, 128, 255} : std::vector<double>{-128, 0, 127};
      check(g, {around_tensor(s, ++seed, -100, 100, 0.5),
                Tensor::from_values(f32, {3, 1}, {0.5, 0.1, 3}),
                Tensor::from_values(f32, {3, 1}, zps)});
    }
  }
}

TEST_CASE("jit quantization: f16 and bf16 inputs are quantized in f32 and keep their type") {
  const Shape s{2, 37};
  for (const ElementType t : {f16, bf16}) {
    INFO("type = " << to_string(t));
    const Tensor x = around_tensor(s, 7, -8, 8, 0.5, t);
    check(fake_quantize_graph(s, {-8, 8, -1, 1, 33}, t, t), {x});
    check(fake_quantize_graph(s, {-8, 8, 0, 255, 256}, u8, t), {x});
    Graph g;
    const auto xp = g.parameter(t, s, "x");
    g.result(g.quantize(xp, g.scalar(t, 0.5), g.scalar(t, 1), i8), "q");
    check(g, {x});
  }
}

TEST_CASE("jit quantization: zero-sized tensors give empty outputs") {
  for (const Shape& s : {Shape{0}, Shape{3, 0}, Shape{0, 5}}) {
    INFO("shape = " << s.to_string());
    Graph g;
    const auto x = g.parameter(f32, s, "x");
    auto c = [&](double v) { return g.scalar(f32, v); };
    g.result(g.quantize(x, c(2), c(1)), "q");
    g.result(g.fake_quantize(x, c(2), c(-2), c(0), c(1), 7), "fq");
    for_each_isa([&](x64::Isa isa) {
      const auto out = compile(g, {.isa = isa}).run({Tensor(f32, s)});
      CHECK(out.at(0).type() == u8);
      CHECK(out.at(0).shape() == s);
      CHECK(out.at(0).size() == 0);
      CHECK(out.at(1).type() == f32);
      CHECK(out.at(1).size() == 0);
    });
  }
}

TEST_CASE("program: quantize(relu(x * s + b)) is one kernel that stores u8") {
  const Shape s{4, 3, 29};
  for (const bool fake : {false, true}) {
    INFO((fake ? "FakeQuantize + Convert" : "Quantize"));
    Graph g;
    const auto x = g.parameter(f32, s, "x");
    const auto b = g.parameter(f32, {3, 1}, "b");
    const auto a = g.relu(g.add(g.multiply(x, g.scalar(f32, 0.5)), b));
    auto c = [&](double v) { return g.scalar(f32, v); };
    const auto q = fake ? g.convert(g.fake_quantize(a, c(0), c(63.75), c(0), c(255), 256), u8)
                        : g.quantize(a, c(0.25), c(0));
    g.result(q, "q");
    // x / 4 + b with b a multiple of 1/8: exact, so FMA changes nothing; ties at k/8
    std::vector<double> xv(std::size_t(s.element_count()));
    Rng rng(5);
    for (double& v : xv) v = double(rng.integer(-100, 700)) / 4;
    const std::vector<Tensor> in{Tensor::from_values(f32, s, xv),
                                 Tensor::from_values(f32, {3, 1}, {0.125, -1, 3.375})};
    check_one_kernel(g, in);
  }
}

TEST_CASE("program: dequantize(u8 x) * w + b is one kernel reading u8, and a quantize -> "
          "dequantize pair stays in it") {
  const Shape s{5, 2, 19};
  Graph g;
  const auto x = g.parameter(u8, s, "x");
  const auto zp = g.constant(f32, {2, 1}, {128, 3});
  const auto scale = g.constant(f32, {2, 1}, {0.5, 0.25});
  const auto d = g.multiply(g.subtract(g.convert(x, f32), zp), scale);
  const auto w = g.parameter(f32, {19}, "w");
  const auto y = g.add(g.multiply(d, w), g.scalar(f32, 0.5));
  const auto q = g.quantize(y, g.scalar(f32, 2), g.scalar(f32, 10), i8);
  g.result(g.multiply(g.convert(q, f32), g.scalar(f32, 2)), "qdq");
  std::vector<double> wv(19);
  for (std::size_t i = 0; i < wv.size(); ++i) wv[i] = double(int(i) - 9) / 8;
  const std::vector<Tensor> in{bytes(s, 3), Tensor::from_values(f32, {19}, wv)};
  check_one_kernel(g, in);
}
