// SPDX-License-Identifier: Apache-2.0
// The open op set: ops declared outside the library (examples/squared_relu.hpp and below) are
// typed, printed, keyed, evaluated by the reference interpreter, fused by a backend that has
// their emitter and left outside the kernels of one that has not.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "error_id.hpp"
#include "jit_test_util.hpp"
#include "snippets/debug/dot.hpp"
#include "squared_relu.hpp"

using namespace snippets;
using namespace snippets::jit_test;
using my_ops::SquaredRelu;

namespace other_ops {
/// limit * tanh(x / limit): an op with an attribute and no emitter anywhere.
struct SoftClip {
  static constexpr std::string_view name = "SoftClip";
  static constexpr ir::OpCategory category = ir::OpCategory::unary;
  static constexpr bool float_only = true;
  double limit = 1.0;
  bool operator==(const SoftClip&) const = default;
  void print_attributes(std::ostream& os) const { os << "limit=" << limit; }
};
inline double formula(const SoftClip& op, double x) { return op.limit * std::tanh(x / op.limit); }

/// sqrt(a^2 + b^2): a binary op with no emitter.
struct Hypot {
  static constexpr std::string_view name = "Hypot";
  static constexpr ir::OpCategory category = ir::OpCategory::binary;
  static constexpr bool float_only = true;
  bool operator==(const Hypot&) const = default;
};
inline double formula(const Hypot&, double a, double b) { return std::hypot(a, b); }

struct Traits : my_ops::Traits {
  using extra_ops = ir::TypeList<SquaredRelu, SoftClip, Hypot>;
};
} // namespace other_ops

namespace {
using MyGraph = ir::Graph<my_ops::Traits>;

/// Every 4099th f32 bit pattern (both signs, subnormals, infinities, NaNs) and the values
/// where SquaredRelu decides: zeros, the smallest subnormal, the overflow threshold.
std::vector<float> dense_sweep() {
  std::vector<float> v;
  for (std::uint64_t bits = 0; bits <= 0xffffffffull; bits += 4099)
    v.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(bits)));
  for (float x : {0.0f, -0.0f, 0x1p-149f, -0x1p-149f, 0x1.fffffep+63f, 0x1p+64f, 1.0f, -1.0f})
    v.push_back(x);
  return v;
}

} // namespace

TEST_CASE("custom op: SquaredRelu matches its reference bit for bit over a dense sweep") {
  const std::vector<float> sweep = dense_sweep();
  const auto n = static_cast<Dim>(sweep.size());
  MyGraph body;
  const auto x = body.parameter(f32, Shape{n}, "x");
  body.result(body.make(SquaredRelu{}, {x})[0], "y");
  std::vector<double> values(sweep.begin(), sweep.end());
  const Tensor in = Tensor::from_values(f32, Shape{n}, values);
  const Tensor want = reference::evaluate(body, {in})[0];
  for_each_isa([&](x64::Isa isa) {
    for (int threads : {1, 2}) {
      INFO("threads = " << threads);
      CHECK(compare(compile(body, {.isa = isa}).run({in}, {.threads = threads})[0], want, exact) ==
            "");
    }
  });
}

TEST_CASE("custom op: fused with built-in ops into one kernel, with tails and broadcasting") {
  for (const Dim width : {1, 7, 16, 33}) {
    INFO("width = " << width);
    MyGraph model;
    const auto x = model.parameter(f32, Shape{3, width}, "x");
    const auto b = model.parameter(f32, Shape{1, width}, "b");
    model.result(model.relu(model.make(SquaredRelu{}, {model.add(x, b)})[0]), "y");
    const Program<my_ops::Traits> program(model);
    REQUIRE(program.steps().size() == 1);
    CHECK(program.steps()[0].kind == Program<my_ops::Traits>::StepKind::kernel);
    const std::vector<Tensor> in{
        Tensor::from_values(f32, Shape{3, width}, make_values(std::size_t(3 * width), 1)),
        Tensor::from_values(f32, Shape{1, width}, make_values(std::size_t(width), 2))};
    // the reference adds in double: the kernel's f32 sum squared is a few ulps away
    CHECK(compare(program.run(in)[0], reference::evaluate(model, in)[0], approx) == "");
  }
}

TEST_CASE("custom op: printed, drawn, keyed and made by name like a built-in one") {
  MyGraph g;
  const auto x = g.parameter(f32, Shape{2, 8}, "x");
  g.result(g.make(SquaredRelu{}, {x}, "act")[0], "y");
  CHECK(ir::to_string(g).find("%1 = SquaredRelu 'act'(%0:0) -> f32[2,8]") != std::string::npos);
  CHECK(debug::to_dot(g).find("SquaredRelu") != std::string::npos);
  CHECK(kernel_cache_key(g).find("SquaredRelu") != std::string::npos);
  CHECK(g.make("SquaredRelu", {x}).size() == 1);

  ir::Graph<other_ops::Traits> h;
  const auto y = h.parameter(f32, Shape{4}, "y");
  h.result(h.make(other_ops::SoftClip{2.5}, {y}, "clip")[0], "out");
  CHECK(ir::to_string(h).find("SoftClip 'clip'(%0:0) {limit=2.5} -> f32[4]") != std::string::npos);
  // an attribute changes the key, so two SoftClips never share a kernel
  ir::Graph<other_ops::Traits> h2;
  h2.result(h2.make(other_ops::SoftClip{3.0}, {h2.parameter(f32, Shape{4}, "y")}, "clip")[0],
            "out");
  CHECK(kernel_cache_key(h) != kernel_cache_key(h2));
  CHECK(error_id([&] { h.make("SoftClip", {y}); }) == "snippets.graph.unknown_op"); // attributes
}

TEST_CASE("custom op: a backend without its emitter leaves it outside the kernels") {
  ir::Graph<other_ops::Traits> model;
  const auto a = model.parameter(f32, Shape{4, 9}, "a");
  const auto b = model.parameter(f32, Shape{4, 9}, "b");
  const auto h = model.make(other_ops::Hypot{}, {model.exp(a), b}, "hypot")[0];
  const auto c = model.make(other_ops::SoftClip{2.0}, {h}, "clip")[0];
  model.result(model.make(SquaredRelu{}, {model.add(c, a)})[0], "y");
  const Program<other_ops::Traits> program(model);
  int kernels = 0, reference_steps = 0;
  for (const auto& step : program.steps()) {
    kernels += step.kind == Program<other_ops::Traits>::StepKind::kernel;
    reference_steps += step.kind == Program<other_ops::Traits>::StepKind::reference;
  }
  CHECK(kernels == 2);         // Exp; then Add and SquaredRelu
  CHECK(reference_steps == 2); // Hypot and SoftClip
  const std::vector<Tensor> in{Tensor::from_values(f32, Shape{4, 9}, make_values(36, 3)),
                               Tensor::from_values(f32, Shape{4, 9}, make_values(36, 4))};
  // f32 between the steps, double inside the reference ones: a few roundings apart
  CHECK(compare(program.run(in)[0], reference::evaluate(model, in)[0], Tolerance{16, 1e-6}) == "");

  ir::Graph<other_ops::Traits> body;
  body.result(body.make(other_ops::Hypot{}, {body.parameter(f32, Shape{4}, "p"),
                                             body.parameter(f32, Shape{4}, "q")})[0],
              "r");
  CHECK(error_id([&] { compile(body); }) == "snippets.compile.unsupported_op");
}

TEST_CASE("custom op: type inference follows the category") {
  ir::Graph<other_ops::Traits> g;
  const auto a = g.parameter(f32, Shape{3, 1}, "a");
  const auto b = g.parameter(f32, Shape{1, 5}, "b");
  const auto h = g.make(other_ops::Hypot{}, {a, b})[0];
  CHECK(g.type(h) == ir::TensorType{f32, Shape{3, 5}});
  const auto i = g.parameter(ElementType::i32, Shape{3}, "i");
  CHECK(error_id([&] { g.make(SquaredRelu{}, {i}); }) == "snippets.graph.unsupported_type");
  CHECK(error_id([&] { g.make(other_ops::Hypot{}, {a}); }) == "snippets.graph.arity");
}
