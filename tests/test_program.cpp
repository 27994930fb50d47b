// SPDX-License-Identifier: Apache-2.0
// tests/test_program.cpp: whole-model execution (program/program.hpp), the buffer planner
// (support/memory_plan.hpp) and fusion statistics (debug/statistics.hpp).
#include <doctest/doctest.h>

#include <sstream>
#include <thread>

#include "error_id.hpp"
#include "jit_test_util.hpp"
#include "snippets/snippets.hpp"

using namespace snippets;
using namespace snippets::jit_test;
using ir::Value;

namespace {

using StepKind = Program<>::StepKind;

/// y = x @ w for planar f32 x [M, K], w [K, N], on buffers.
void matmul(std::span<const ConstTensorView> in, std::span<const TensorView> out) {
  const auto* x = static_cast<const float*>(in[0].data);
  const auto* w = static_cast<const float*>(in[1].data);
  auto* y = static_cast<float*>(out[0].data);
  const auto m = in[0].shape[0], k = in[0].shape[1], n = in[1].shape[1];
  for (Dim i = 0; i < m; ++i)
    for (Dim j = 0; j < n; ++j) {
      double s = 0;
      for (Dim l = 0; l < k; ++l) s += double(x[i * k + l]) * double(w[l * n + j]);
      y[i * n + j] = static_cast<float>(s);
    }
}

/// The same on doubles, for the reference interpreter.
std::vector<reference::Values> matmul_values(std::span<const reference::Values> in) {
  const auto m = in[0].shape[0], k = in[0].shape[1], n = in[1].shape[1];
  reference::Values y{f32, {m, n}, std::vector<double>(static_cast<std::size_t>(m * n))};
  for (Dim i = 0; i < m; ++i)
    for (Dim j = 0; j < n; ++j) {
      double s = 0;
      for (Dim l = 0; l < k; ++l)
        s += in[0].v[static_cast<std::size_t>(i * k + l)] *
             in[1].v[static_cast<std::size_t>(l * n + j)];
      y.v[static_cast<std::size_t>(i * n + j)] = static_cast<float>(s); // as the kernel rounds
    }
  return {y};
}

/// A transformer MLP tail: MatMul -> bias -> Relu -> MatMul -> bias -> residual, then a
/// scale and a clamp, with both MatMuls Opaque. Every elementwise op is correctly rounded and
/// no Multiply feeds an Add, so the program matches the reference (each node rounded to f32)
/// bit for bit; approximate ops would be amplified by the second MatMul's sums.
struct Mlp {
  Graph g;
  std::vector<Tensor> inputs;
  reference::Options ref;
  Mlp(Dim tokens, Dim width, Dim hidden) {
    const Value x = g.parameter(f32, {tokens, width}, "x");
    const Value w1 = g.parameter(f32, {width, hidden}, "w1");
    const Value b1 = g.parameter(f32, {hidden}, "b1");
    const Value w2 = g.parameter(f32, {hidden, width}, "w2");
    const Value b2 = g.parameter(f32, {width}, "b2");
    const Value h = g.relu(g.add(mm(x, w1, {tokens, hidden}, "mm1"), b1));
    const Value y = g.add(g.add(mm(h, w2, {tokens, width}, "mm2"), b2), x);
    g.result(g.clamp(g.multiply(y, g.scalar(f32, 0.5)), -4.0, 4.0), "y");
    std::uint64_t seed = 10;
    for (ir::NodeId p : g.parameters())
      inputs.push_back(make_tensor(g.node(p).outputs[0].shape, seed++, Pattern::finite));
    ref.opaque["MatMul"] = matmul_values;
    ref.round_each_node = true; // the program stores every intermediate as f32
  }
  Value mm(Value a, Value b, Shape out, const std::string& name) {
    return g.make(ir::Opaque{"MatMul", {{f32, std::move(out)}}}, {a, b}, name)[0];
  }
  ProgramOptions<x64::Traits> options() const {
    ProgramOptions<x64::Traits> opt;
    opt.opaque["MatMul"] = matmul;
    return opt;
  }
};

} // namespace

TEST_CASE("program: a model with Opaque MatMuls runs fused kernels and matches the reference") {
  Mlp m(17, 24, 40);
  const auto want = reference::evaluate(m.g, m.inputs, m.ref);
  for_each_isa([&](x64::Isa isa) {
    auto opt = m.options();
    opt.compile.isa = isa;
    const Program<> program(m.g, opt);
    int kernels = 0, opaque = 0;
    for (const auto& step : program.steps()) {
      kernels += step.kind == StepKind::kernel;
      opaque += step.kind == StepKind::opaque;
      CHECK(step.note == "");
    }
    CHECK(kernels == 2);
    CHECK(opaque == 2);
    for (int threads : {1, 2}) {
      INFO("threads = " << threads);
      CHECK(compare(program.run(m.inputs, with_threads(threads))[0], want[0], exact) == "");
    }
  });
}

TEST_CASE("program: unfused, reference-only and fused programs agree") {
  Mlp m(9, 16, 33);
  const auto fused = Program<>(m.g, m.options()).run(m.inputs)[0];
  auto unfused_opt = m.options();
  unfused_opt.tokenize.fuse = false;
  const Program<> unfused(m.g, unfused_opt);
  CHECK(unfused.steps().size() == 8); // 6 elementwise kernels and 2 MatMuls
  auto ref_opt = m.options();
  ref_opt.reference_only = true;
  const Program<> reference_only(m.g, ref_opt);
  for (const auto& step : reference_only.steps()) CHECK(step.kind != StepKind::kernel);
  CHECK(compare(unfused.run(m.inputs)[0], fused, exact) == "");
  CHECK(compare(reference_only.run(m.inputs)[0], fused, exact) == "");
}

TEST_CASE("program: intermediates share memory when their lifetimes do not overlap") {
  // a chain of Opaque steps: each intermediate dies after the next step
  Graph g;
  Value v = g.parameter(f32, {64, 64}, "x");
  for (int i = 0; i < 6; ++i)
    v = g.make(ir::Opaque{"Twice", {g.type(v)}}, {g.relu(v)},
               std::string("twice").append(std::to_string(i)))[0];
  g.result(v, "y");
  ProgramOptions<x64::Traits> opt;
  opt.opaque["Twice"] = [](std::span<const ConstTensorView> in, std::span<const TensorView> out) {
    const auto* x = static_cast<const float*>(in[0].data);
    auto* y = static_cast<float*>(out[0].data);
    for (Dim i = 0; i < in[0].shape.element_count(); ++i) y[i] = 2 * x[i];
  };
  opt.reference.opaque["Twice"] = [](std::span<const reference::Values> in) {
    reference::Values y = in[0];
    for (double& e : y.v) e *= 2;
    return std::vector{y};
  };
  const Program<> program(g, opt);
  const std::int64_t tensor = 64 * 64 * 4;
  CHECK(program.unplanned_bytes() == 11 * tensor);
  CHECK(program.arena_bytes() == 2 * tensor); // ping-pong between two buffers
  const std::vector<Tensor> in{make_tensor({64, 64}, 4)};
  CHECK(compare(program.run(in)[0], reference::evaluate(g, in, opt.reference)[0], exact) == "");
}

TEST_CASE("program: one Program runs from many threads, each with its own context") {
  Mlp m(33, 16, 24);
  const Program<> program(m.g, m.options());
  const auto want = program.run(m.inputs)[0];
  std::vector<std::string> failures(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      ExecutionContext ctx = program.make_context();
      Tensor out(f32, want.shape());
      std::vector<ConstTensorView> in;
      for (const auto& x : m.inputs) in.push_back({x.type(), x.shape(), x.data()});
      const TensorView out_view{f32, out.shape(), out.data()};
      for (int run = 0; run < 20; ++run) {
        program.run(ctx, in, std::span(&out_view, 1), with_threads(1));
        if (const auto diff = compare(out, want, exact); !diff.empty()) failures[t] = diff;
      }
    });
  for (auto& t : threads) t.join();
  for (const auto& f : failures) CHECK(f == "");
}

TEST_CASE("program: a Subgraph that cannot be compiled falls back to the reference path") {
  // a hand-built Subgraph with a sum over axes 0 and 2 of 3 inside: no x64 kernel does that
  Graph body;
  body.result(body.reduce_sum(body.parameter(f32, {4, 8, 3}, "x"), {0, 2}, true), "s");
  auto shared = std::make_shared<const Graph>(std::move(body));
  Graph g;
  const Value x = g.parameter(f32, {4, 8, 3}, "x");
  g.result(g.make(ir::Subgraph<x64::Traits>{shared, {"ReduceSum"}}, {x}, "sg")[0], "y");
  const Program<> program(g, {.tokenized = true});
  REQUIRE(program.steps().size() == 1);
  CHECK(program.steps()[0].kind == StepKind::reference);
  CHECK(program.steps()[0].note.find("snippets.compile.reduce_axis") != std::string::npos);
  const std::vector<Tensor> in{make_tensor({4, 8, 3}, 6, Pattern::finite)};
  CHECK(compare(program.run(in)[0], reference::evaluate(g, in)[0], approx) == "");
}

TEST_CASE("program: Reshape, Transpose, Broadcast and Slice between kernels are host copies") {
  // each reads a kernel's output (abs(a)), so none is folded into a kernel's loads or stores
  for (const ElementType t : {f32, ElementType::f16, ElementType::bf16, ElementType::i32,
                              ElementType::i8, ElementType::u8}) {
    for (const Dim mid : {Dim{3}, Dim{0}}) {
      INFO(to_string(t) << ", middle extent " << mid);
      ir::Graph<DefaultTraits> model;
      const auto y = model.abs(model.parameter(t, Shape{2, mid, 5}, "a"));
      model.result(model.reshape(y, {-1, 5}), "reshaped");
      model.result(model.transpose(y, {2, 0, 1}), "transposed");
      model.result(model.broadcast(model.slice(y, 0, 1, 1), Shape{4, 2, mid, 5}), "broadcast");
      model.result(model.slice(y, 1, mid > 0 ? 1 : 0, mid > 0 ? 2 : 0), "sliced");
      const Program<> program(model);
      int host = 0; // the tokenizer may fold some of them into the kernel; the rest are copies
      for (const auto& step : program.steps()) {
        const auto& op = program.graph().node(step.node).op;
        INFO(step.note);
        if (ir::is<ir::Subgraph<DefaultTraits>>(op)) CHECK(step.kind == StepKind::kernel);
        if (ir::is<ir::Reshape>(op) || ir::is<ir::Transpose>(op) || ir::is<ir::Broadcast>(op) ||
            ir::is<ir::Slice>(op)) {
          CHECK(step.kind == StepKind::host);
          ++host;
        }
      }
      CHECK(host >= 2); // the Reshape and the Broadcast at least (a kernel reads the Slice of
                        // the middle axis in place: passes/slice_reads.hpp)
      const std::vector<Tensor> in{
          Tensor::from_values(t, Shape{2, mid, 5}, make_values(10 * mid, 7, Pattern::finite))};
      const auto got = program.run(in);
      const auto want = reference::evaluate(model, in);
      REQUIRE(got.size() == want.size());
      for (std::size_t o = 0; o < got.size(); ++o) {
        REQUIRE(got[o].shape() == want[o].shape());
        CHECK(got[o].values().v == want[o].values().v);
      }
    }
  }
}

TEST_CASE("program: a Reshape is a view of its input's memory, not a copy") {
  // abs -> Reshape -> Softmax (rows of 48: another kernel) -> Reshape -> Result, and a Reshape
  // of the input returned as it is; static and dynamic first dimension
  for (const Dim batch : {Dim{4}, Dim{dynamic}}) {
    INFO("batch " << batch);
    Graph g;
    const Value x = g.parameter(f32, {batch, 6, 8}, "x");
    const Value rows = g.reshape(g.abs(x), {-1, 48});
    g.result(g.reshape(g.softmax(rows, -1), {-1, 6, 8}), "y");
    g.result(g.reshape(x, {-1, 48}), "x_rows");
    const Program<> program(g);
    const auto plan = program.plan({Shape{4, 6, 8}});
    int views = 0, kernels = 0;
    for (const auto& step : program.steps()) {
      kernels += step.kind == StepKind::kernel;
      if (!ir::is<ir::Reshape>(program.graph().node(step.node).op)) continue;
      REQUIRE(step.kind == StepKind::host);
      const auto& in = plan->values[step.inputs[0]];
      const auto& out = plan->values[step.outputs[0]];
      if (in.place == out.place && in.index == out.index) ++views;
    }
    CHECK(kernels == 2);
    CHECK(views == 2); // abs's output read as rows; the Softmax written straight into y
    CHECK(plan->arena_bytes < 2 * 4 * 48 * 4); // abs's output only
    for (const Dim n : {Dim{4}, Dim{1}, Dim{0}}) {
      if (batch != dynamic && n != batch) continue;
      const std::vector<Tensor> in{make_tensor({n, 6, 8}, 3, Pattern::finite)};
      const auto got = program.run(in);
      const auto want = reference::evaluate(g, in);
      CHECK(compare(got[0], want[0], approx) == "");
      CHECK(compare(got[1], want[1], exact) == "");
    }
  }
}

TEST_CASE("program: Results that repeat a value or return an input are copied") {
  Graph g;
  const Value x = g.parameter(f32, {5}, "x");
  const Value r = g.relu(x);
  g.result(r, "a");
  g.result(r, "b");
  g.result(x, "c");
  const Program<> program(g);
  const std::vector<Tensor> in{make_tensor({5}, 7)};
  const auto got = program.run(in);
  const auto want = reference::evaluate(g, in);
  for (int i = 0; i < 3; ++i) CHECK(compare(got[i], want[i], exact) == "");
}

TEST_CASE("program: bad models and bad buffers are errors") {
  Graph g;
  const Value x = g.parameter(f32, {4, 4}, "x");
  g.result(g.make(ir::Opaque{"Unknown", {g.type(x)}}, {x}, "u")[0]);
  CHECK(error_id([&] { Program<> p(g); }) == "snippets.program.opaque_without_kernel");

  Graph nhwc;
  nhwc.result(nhwc.relu(nhwc.parameter(f32, {1, 2, 3, 4}, "x", Layout::channels_last(4))));
  CHECK(error_id([&] { Program<> p(nhwc); }) == "snippets.program.layout_unsupported");

  Graph ok;
  ok.result(ok.relu(ok.parameter(f32, {4, 4}, "x")));
  const Program<> program(ok);
  Tensor in(f32, {4, 4}), out(f32, {4, 4}), small(f32, {4});
  const ConstTensorView iv{f32, {4, 4}, in.data()};
  const TensorView ov{f32, {4, 4}, out.data()};
  auto ctx = program.make_context();
  CHECK(error_id([&] { program.run(ctx, {}, std::span(&ov, 1)); }) == "snippets.run.arg_count");
  const ConstTensorView bad_shape{f32, {4}, small.data()};
  CHECK(error_id([&] { program.run(ctx, std::span(&bad_shape, 1), std::span(&ov, 1)); }) ==
        "snippets.run.shape_mismatch");
  const TensorView null_out{f32, {4, 4}, nullptr};
  CHECK(error_id([&] { program.run(ctx, std::span(&iv, 1), std::span(&null_out, 1)); }) ==
        "snippets.run.null_pointer");

  // a context made for a smaller program
  Mlp m(8, 8, 8);
  const Program<> big(m.g, m.options());
  ExecutionContext tiny(0);
  std::vector<ConstTensorView> views;
  for (const auto& t : m.inputs) views.push_back({t.type(), t.shape(), t.data()});
  Tensor y(f32, {8, 8});
  const TensorView yv{f32, {8, 8}, y.data()};
  CHECK(error_id([&] { big.run(tiny, views, std::span(&yv, 1)); }) ==
        "snippets.program.context_mismatch");
}

TEST_CASE("memory plan: overlapping lifetimes never share bytes, disjoint ones do") {
  SUBCASE("small cases") {
    const BufferRequest reqs[] = {{100, 0, 1}, {100, 2, 3}, {50, 1, 2}};
    const MemoryPlan plan = plan_memory(reqs);
    CHECK(plan.offsets[0] == plan.offsets[1]); // 0 dies before 1 is born
    CHECK(plan.offsets[2] >= 128);             // lives with both
    CHECK(plan.total_bytes == 192);
  }
  SUBCASE("property: random lifetimes") {
    Rng rng(99);
    for (int trial = 0; trial < 200; ++trial) {
      std::vector<BufferRequest> reqs(static_cast<std::size_t>(rng.integer(1, 24)));
      for (auto& r : reqs) {
        r.bytes = rng.integer(0, 5000);
        r.def = static_cast<std::size_t>(rng.integer(0, 20));
        r.end = r.def + static_cast<std::size_t>(rng.integer(0, 6));
      }
      const MemoryPlan plan = plan_memory(reqs);
      std::int64_t sum = 0;
      for (std::size_t i = 0; i < reqs.size(); ++i) {
        sum += (reqs[i].bytes + 63) / 64 * 64;
        CHECK(plan.offsets[i] % 64 == 0);
        CHECK(plan.offsets[i] + reqs[i].bytes <= plan.total_bytes);
        for (std::size_t j = 0; j < i; ++j) {
          if (!lifetimes_overlap(reqs[i], reqs[j]) || !reqs[i].bytes || !reqs[j].bytes) continue;
          const bool apart = plan.offsets[i] + reqs[i].bytes <= plan.offsets[j] ||
                             plan.offsets[j] + reqs[j].bytes <= plan.offsets[i];
          CHECK(apart);
        }
      }
      CHECK(plan.total_bytes <= sum);
    }
  }
}

TEST_CASE("statistics: bytes the unfused ops would move against the fused kernel") {
  Graph g;
  const Value a = g.parameter(f32, {1024}, "a");
  const Value b = g.parameter(f32, {1024}, "b");
  g.result(g.relu(g.add(g.multiply(a, g.scalar(f32, 2.0)), b)), "y");
  const Graph t = passes::tokenize(g);
  const auto stats = debug::statistics(t);
  REQUIRE(stats.size() == 1);
  // multiply: read a, write 1; add: read 2, write 1; relu: read 1, write 1 -> 7 tensors
  CHECK(stats[0].unfused_bytes == 7 * 4096);
  CHECK(stats[0].fused_bytes == 3 * 4096); // a, b, y
  CHECK(stats[0].ratio() == doctest::Approx(7.0 / 3.0));
  std::ostringstream os;
  debug::print_statistics(os, t);
  CHECK(os.str() == "Subgraph 'Relu_5': 3 ops [Multiply_3 Add_4 Relu_5], 2 in / 1 out, unfused "
                    "28672 B, fused 12288 B, 2.33x less traffic\n"
                    "1 Subgraph(s): unfused 28672 B, fused 12288 B, 2.33x\n");
  os << 2.4e-7; // the caller's formatting is left as it was
  CHECK(os.str().ends_with("2.4e-07"));
}
