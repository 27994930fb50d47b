// SPDX-License-Identifier: Apache-2.0
// FoldDequantizeIntoMatMul (passes/fold_dequantize_into_matmul.hpp): the QDQ MatMul
// (DequantizeLinear on u8/i8 activations and i8 weights around an f32 MatMul) becomes the int8
// product with the scales on its accumulators. The integer sums are compared bit for bit with
// the reference's (exact in double); the f32 results with the reference of the unfolded graph
// (double) within a few units in the last place of the largest result, and a requantized u8
// within one step (the roundings may move a value across a rounding boundary).
#include <iomanip>

#include "matmul_test_util.hpp"
#include "snippets/passes/fold_dequantize_into_matmul.hpp"

using namespace snippets;
using namespace snippets::jit_test;
using ir::Value;

namespace {

constexpr ElementType u8 = ElementType::u8, i8 = ElementType::i8, i32 = ElementType::i32;

/// How the QDQ MatMul is spelled.
struct Qdq {
  ElementType x_type = u8;
  double zx = 0, sx = 0.0173;
  std::vector<double> sw{0.0041}; // one, or one per column
  std::vector<double> zw{0};      // one, or one per column
  ElementType w_type = i8;
  bool weight_input = false; // wq a Parameter (else a Constant)
  bool epilogue = false;     // + bias, relu, QuantizeLinear to u8
};

struct Built {
  Graph g;
  std::vector<Tensor> inputs;
};

/// (Convert(q) - z) * s, as the ONNX importer writes DequantizeLinear.
Value dequantize(Graph& g, Value q, std::span<const double> z, std::span<const double> s) {
  auto operand = [&](std::span<const double> v) {
    return v.size() == 1 ? g.scalar(f32, v[0])
                         : g.constant(f32, Shape{Dim(v.size())}, {v.begin(), v.end()});
  };
  Value d = g.convert(q, f32);
  if (z.size() > 1 || z[0] != 0) d = g.subtract(d, operand(z));
  return g.multiply(d, operand(s));
}

Built qdq_matmul(const Qdq& q, Dim m, Dim k, Dim n, std::uint64_t seed) {
  Built b;
  Graph& g = b.g;
  const auto x = g.parameter(q.x_type, Shape{m, k}, "x");
  b.inputs.push_back(bytes(q.x_type, Shape{m, k}, seed));
  const Tensor w = bytes(q.w_type, Shape{k, n}, seed + 1);
  Value wq;
  if (q.weight_input) {
    wq = g.parameter(q.w_type, Shape{k, n}, "w");
    b.inputs.push_back(w);
  } else {
    wq = g.constant(q.w_type, Shape{k, n}, w.values().v);
  }
  const std::vector<double> zx{q.zx}, sx{q.sx};
  Value y = g.matmul(dequantize(g, x, zx, sx), dequantize(g, wq, q.zw, q.sw));
  if (q.epilogue) {
    const auto bias = g.parameter(f32, Shape{n}, "bias");
    b.inputs.push_back(uniform(Shape{n}, seed + 2, -3, 3));
    y = g.relu(g.add(y, bias));
    g.result(y, "f32");
    g.result(g.quantize(y, g.scalar(f32, 0.37), g.scalar(f32, 3.0), u8), "u8");
  } else {
    g.result(y, "y");
  }
  return b;
}

std::string ops_of(const Graph& g) {
  std::string s;
  for (ir::NodeId id : g.topological_order()) {
    const ir::Node<DefaultTraits>& n = g.node(id);
    if (const auto* mm = std::get_if<ir::MatMul>(&n.op))
      s += "MatMul(" + std::string(to_string(n.outputs[0].type)) + ", zx " +
           std::to_string(mm->a_zero_point) + ") ";
  }
  return s;
}

/// The MatMul node of `g`.
Value matmul_of(const Graph& g) {
  for (ir::NodeId id = 0; id < g.size(); ++id)
    if (ir::is<ir::MatMul>(g.node(id).op)) return Value{g.id(), {id, 0}};
  FAIL("no MatMul");
  return {};
}

/// Within `ulps` units in the last place of the largest |want| (f32), or of one quantization
/// step (u8).
std::string compare_close(const Tensor& got, const Tensor& want, double ulps) {
  if (got.shape() != want.shape() || got.type() != want.type()) return "types or shapes differ";
  double largest = 0;
  for (std::size_t i = 0; i < want.size(); ++i) largest = std::max(largest, std::abs(want.at(i)));
  const double tol = want.type() == f32 ? ulps * largest * 0x1p-24 : 1.0;
  std::ostringstream os;
  os << std::setprecision(10);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < want.size(); ++i)
    if (!(std::abs(got.at(i) - want.at(i)) <= tol) && bad++ < 5)
      os << "\n  at " << i << ": got " << got.at(i) << ", want " << want.at(i);
  return bad ? std::to_string(bad) + " differ beyond " + std::to_string(tol) + os.str()
             : std::string{};
}

/// Folds `b.g` (the int8 product must appear), compiles the folded body on every ISA with its
/// sums as an extra output, and checks the sums bit for bit against the reference of the folded
/// body and the outputs against the reference of the unfolded one.
void check_folded(const Built& b) {
  // per-column scales: a kernel reads a Constant of several values as an input (the tokenizer
  // makes it one), so the folded body gets them as Parameters
  std::vector<Tensor> inputs = b.inputs;
  Graph folded =
      passes::rebuild(passes::FoldDequantizeIntoMatMul{}.run(b.g),
                      [&](Graph& out, const ir::Node<DefaultTraits>& n,
                          std::span<const Value>) -> std::optional<std::vector<Value>> {
                        const auto* c = std::get_if<ir::Constant>(&n.op);
                        if (!c || c->output.type != f32 || c->values.size() < 2)
                          return std::nullopt;
                        inputs.push_back(Tensor::from_values(f32, c->output.shape, c->values));
                        return std::vector{out.parameter(f32, c->output.shape, n.name)};
                      });
  const Value acc = matmul_of(folded);
  REQUIRE(folded.type(acc).type == i32);
  folded.result(acc, "sums");
  const auto want = reference::evaluate(b.g, std::span<const Tensor>(b.inputs));
  const auto sums = reference::evaluate(folded, std::span<const Tensor>(inputs)).back();
  for_each_isa([&](x64::Isa isa) {
    for (const bool native : {true, false}) {
      if (native && !x64::Traits::int8_dot(isa)) continue;
      INFO((native ? "VPDPBUSD" : "VPMADDWD"));
      const CompiledKernel k = compile(folded, {.isa = isa, .native_int8 = native});
      for (const int threads : {1, 3}) {
        const auto got = k.run(std::span<const Tensor>(inputs), with_threads(threads));
        REQUIRE(got.size() == want.size() + 1);
        CHECK(compare(got.back(), sums, exact) == "");
        for (std::size_t i = 0; i < want.size(); ++i) {
          INFO("output " << i);
          const std::string r = compare_close(got[i], want[i], 6);
          CHECK_MESSAGE(r.empty(), r);
        }
      }
    }
  });
}

} // namespace

TEST_CASE("FoldDequantizeIntoMatMul: a QDQ MatMul becomes the int8 product, scales on its sums") {
  const Built b = qdq_matmul({.zx = 131}, 5, 9, 7, 1);
  const Graph out = passes::FoldDequantizeIntoMatMul{}.run(b.g);
  CHECK(ops_of(out) == "MatMul(i32, zx 131) ");
  // Multiply(Convert_f32(sums), sx * sw) before the Result
  const ir::Node<DefaultTraits>& y = out.node(out.node(out.results()[0]).inputs[0].node);
  REQUIRE(ir::is<ir::Multiply>(y.op));
  const auto& scale = std::get<ir::Scalar>(out.node(y.inputs[1].node).op);
  CHECK(scale.value == double(float(0.0173 * 0.0041)));
  CHECK(ir::is<ir::Convert>(out.node(y.inputs[0].node).op));
  // a product already folded, and any other MatMul, are left as they are
  CHECK(ops_of(passes::FoldDequantizeIntoMatMul{}.run(out)) == ops_of(out));
}

TEST_CASE("FoldDequantizeIntoMatMul: u8 and i8 activations, zero points, per-column scales") {
  std::uint64_t seed = 10;
  const std::vector<double> columns{0.003, 0.011, 0.0007, 0.02, 0.005, 0.009, 0.0123};
  for (const auto& [xt, zx] : {std::pair{u8, 0.0}, std::pair{u8, 128.0}, std::pair{u8, 255.0},
                               std::pair{i8, 0.0}, std::pair{i8, -5.0}})
    for (const bool per_column : {false, true})
      for (const bool epilogue : {false, true}) {
        INFO(to_string(xt) << " x less " << zx << (per_column ? ", per-column" : ", per-tensor")
                           << " scales" << (epilogue ? ", bias, relu, QuantizeLinear" : ""));
        Qdq q{.x_type = xt, .zx = zx, .epilogue = epilogue};
        if (per_column) q.sw = columns;
        check_folded(qdq_matmul(q, 13, 37, 7, seed += 3));
      }
}

TEST_CASE("FoldDequantizeIntoMatMul: deep sums past 2^24 and an i8 weight input") {
  check_folded(qdq_matmul({.x_type = u8, .zx = 7}, 19, 1031, 33, 50));
  check_folded(qdq_matmul({.x_type = i8, .weight_input = true, .epilogue = true}, 17, 70, 45, 60));
}

TEST_CASE("FoldDequantizeIntoMatMul: weight zero points fold into constant weights") {
  // u8 weights with zero point 128 are i8 weights; per-column zero points within i8's range
  Qdq q{.zw = {128}, .w_type = u8};
  Built b = qdq_matmul(q, 6, 11, 5, 70);
  CHECK(ops_of(passes::FoldDequantizeIntoMatMul{}.run(b.g)) == "MatMul(i32, zx 0) ");
  check_folded(b);
  // per-column zero points on i8 weights whose values stay within i8 less them
  Graph g;
  const auto x = g.parameter(u8, Shape{4, 3}, "x");
  const auto w = g.constant(i8, Shape{3, 2}, {1, -2, 3, -4, 5, -6});
  const std::vector<double> zx{0}, sx{0.5}, zw{1, -2}, sw{0.25, 0.125};
  g.result(g.matmul(dequantize(g, x, zx, sx), dequantize(g, w, zw, sw)));
  CHECK(ops_of(passes::FoldDequantizeIntoMatMul{}.run(g)) == "MatMul(i32, zx 0) ");
  Built c;
  c.g = passes::remove_dead_nodes(g);
  c.inputs = {bytes(u8, Shape{4, 3}, 71)};
  check_folded(c);
}

TEST_CASE("FoldDequantizeIntoMatMul: left an f32 product where the int8 product does not apply") {
  auto unchanged = [](const Graph& g) {
    CHECK(ops_of(passes::FoldDequantizeIntoMatMul{}.run(g)) == "MatMul(f32, zx 0) ");
  };
  // a weight zero point on a B input
  unchanged(qdq_matmul({.zw = {3}, .weight_input = true}, 4, 8, 4, 1).g);
  // weights less their zero point outside i8
  unchanged(qdq_matmul({.zw = {-100}}, 4, 8, 4, 1).g);
  // u8 weights without a zero point (255 is no i8)
  unchanged(qdq_matmul({.w_type = u8}, 4, 8, 4, 1).g);
  // a zero point that is not an integer, or outside x's range
  unchanged(qdq_matmul({.zx = 0.5}, 4, 8, 4, 1).g);
  unchanged(qdq_matmul({.x_type = i8, .zx = 200}, 4, 8, 4, 1).g);
  // constant weights with batches of their own (packed once, for one batch)
  {
    Graph g;
    const auto x = g.parameter(u8, Shape{2, 4, 8}, "x");
    const auto w = g.constant(i8, Shape{2, 8, 4}, std::vector<double>(64, 1));
    const std::vector<double> z{0}, s{0.5};
    g.result(g.matmul(dequantize(g, x, z, s), dequantize(g, w, z, s)));
    unchanged(g);
  }
  // a transposed A; per-row scales of A; an f32 B
  {
    Graph g;
    const auto x = g.parameter(u8, Shape{8, 4}, "x");
    const auto w = g.constant(i8, Shape{8, 4}, std::vector<double>(32, 1));
    const std::vector<double> z{0}, s{0.5};
    g.result(g.matmul(dequantize(g, x, z, s), dequantize(g, w, z, s), true, false));
    unchanged(g);
  }
  {
    Graph g;
    const auto x = g.parameter(u8, Shape{4, 8}, "x");
    const auto w = g.constant(i8, Shape{8, 4}, std::vector<double>(32, 1));
    const std::vector<double> z{0}, s{0.5}, rows{1, 2, 3, 4};
    const auto a = g.multiply(g.convert(x, f32), g.constant(f32, Shape{4, 1}, rows));
    g.result(g.matmul(a, dequantize(g, w, z, s)));
    unchanged(g);
  }
  {
    Graph g;
    const auto x = g.parameter(u8, Shape{4, 8}, "x");
    const std::vector<double> z{0}, s{0.5};
    g.result(g.matmul(dequantize(g, x, z, s), g.parameter(f32, Shape{8, 4}, "w")));
    unchanged(g);
  }
}

TEST_CASE("FoldDequantizeIntoMatMul: a Program folds a model's QDQ MatMul into one int8 kernel") {
  const Built b =
      qdq_matmul({.zx = 128, .sw = {0.002, 0.004, 0.003, 0.001, 0.005, 0.007}, .epilogue = true},
                 33, 64, 6, 90);
  const Program<> program(b.g);
  std::string products; // the kernels' (a second kernel quantizes the f32 output it shares)
  for (const auto& step : program.steps()) {
    REQUIRE(step.kind == Program<>::StepKind::kernel);
    products +=
        ops_of(*std::get<ir::Subgraph<DefaultTraits>>(program.graph().node(step.node).op).body);
  }
  CHECK(products == "MatMul(i32, zx 128) ");
  const auto got = program.run(b.inputs);
  const auto want = reference::evaluate(b.g, std::span<const Tensor>(b.inputs));
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) CHECK(compare_close(got[i], want[i], 6) == "");
}
