// SPDX-License-Identifier: Apache-2.0
// JIT tests of boolean kernel inputs and outputs (target/x64/memory_access.hpp: one byte per
// element, read as 0.0f or 1.0f with any non-zero byte true, as the reference interpreter
// decodes it, and written as exactly 0 or 1, a value != 0 (NaN included) being true), the ops
// that read and write them in a kernel (comparisons, on booleans too, logical ops, Select,
// Convert), and the tokenizer and Programs that now keep them inside kernels.
//
// Boolean outputs are compared byte for byte with the reference's (0 or 1: jit_test_util.hpp's
// compare), so a kernel that wrote 0xff or 2 for true fails even though both decode as true. Every
// kernel is compiled for AVX2 and AVX-512, unrolled once and four times, and run with 1 and 2
// threads.
#include "jit_test_util.hpp"

#include <memory>

using namespace snippets;
using namespace snippets::jit_test;

namespace {

constexpr ElementType boolean = ElementType::boolean, u8 = ElementType::u8;

/// Compiles `g` for every ISA and unroll, runs it with 1 and 2 threads and compares every
/// output with the reference.
void check(const Graph& g, const std::vector<Tensor>& inputs) {
  const std::vector<Tensor> want = reference::evaluate(g, std::span<const Tensor>(inputs));
  for_each_isa([&](x64::Isa isa) {
    for (const int unroll : {1, 4}) {
      INFO("unroll = " << unroll);
      const CompiledKernel k = compile(g, {.isa = isa, .unroll = unroll});
      for (const int threads : {1, 2}) {
        INFO("threads = " << threads);
        const auto got = k.run(std::span<const Tensor>(inputs), with_threads(threads));
        REQUIRE(got.size() == want.size());
        for (std::size_t o = 0; o < got.size(); ++o) {
          INFO("output " << o);
          const std::string report = compare(got[o], want[o], exact);
          CHECK_MESSAGE(report.empty(), report);
        }
      }
    }
  });
}

} // namespace

TEST_CASE("jit boolean: comparisons store 0 or 1 bytes at every size from 1 to 67") {
  for (Dim n = 1; n <= 67; ++n) {
    INFO("n = " << n);
    Graph g;
    const auto x = g.parameter(f32, {2, n}, "x");
    const auto y = g.parameter(f32, {n}, "y"); // broadcast along the outer dimension
    g.result(g.greater(x, y), "gt");
    g.result(g.equal(x, y), "eq");
    g.result(g.not_equal(x, x), "nan"); // NaN != NaN: true
    g.result(g.less_equal(x, g.scalar(f32, 0.5)), "le");
    g.result(g.convert(g.subtract(x, y), boolean), "nonzero"); // -0 false, NaN true
    const Tensor tx = make_tensor({2, n}, 100 + std::uint64_t(n));
    check(g, {tx, share_values(tx, make_tensor({n}, 200 + std::uint64_t(n)))});
  }
}

TEST_CASE("jit boolean: inputs read any non-zero byte as true, for logical ops, Select and "
          "Convert, with broadcasting") {
  for (Dim n = 1; n <= 67; ++n) {
    INFO("n = " << n);
    const auto seed = std::uint64_t(n) * 7;
    { // boolean in, boolean out
      Graph g;
      const auto a = g.parameter(boolean, {2, n}, "a");
      const auto b = g.parameter(boolean, {n}, "b");    // broadcast along the outer dimension
      const auto c = g.parameter(boolean, {2, 1}, "c"); // broadcast along the innermost
      g.result(g.logical_and(a, b), "and");
      g.result(g.logical_or(a, c), "or");
      g.result(g.logical_xor(a, b), "xor");
      g.result(g.logical_not(a), "not");
      g.result(a, "copy");           // non-zero bytes leave as 1
      g.result(g.equal(a, b), "eq"); // comparisons on booleans: false < true
      g.result(g.greater(a, c), "gt");
      check(g, {make_raw_booleans({2, n}, seed), make_raw_booleans({n}, seed + 1),
                make_raw_booleans({2, 1}, seed + 2)});
    }
    { // boolean conditions select numbers; booleans become numbers
      Graph g;
      const auto a = g.parameter(boolean, {2, n}, "a");
      const auto c = g.parameter(boolean, {2, 1}, "c");
      const auto x = g.parameter(f32, {2, n}, "x");
      const auto y = g.parameter(f32, {1, n}, "y");
      g.result(g.select(a, x, y), "where");
      g.result(g.select(c, g.relu(x), g.negative(y)), "where_rows");
      g.result(g.convert(a, f32), "as_f32");
      g.result(g.convert(a, u8), "as_u8");
      g.result(g.select(a, c, g.logical_not(c)), "select_booleans");
      g.result(g.logical_xor(a, g.scalar(boolean, 0.25)), "xor_true"); // a non-zero scalar: true
      check(g, {make_raw_booleans({2, n}, seed + 3), make_raw_booleans({2, 1}, seed + 4),
                make_tensor({2, n}, seed + 5), make_tensor({1, n}, seed + 6)});
    }
  }
}

TEST_CASE("jit boolean: tails never touch memory past or before a boolean tensor") {
  std::uint64_t seed = 5000;
  for (const Dim n :
       {Dim{1}, Dim{2}, Dim{3}, Dim{7}, Dim{9}, Dim{15}, Dim{17}, Dim{31}, Dim{33}, Dim{65}}) {
    INFO("n = " << n);
    Graph g;
    const auto a = g.parameter(boolean, {3, n}, "a");
    const auto b = g.parameter(boolean, {3, 1}, "b"); // a one-element load per row
    const auto x = g.parameter(f32, {3, n}, "x");
    g.result(g.logical_xor(a, b), "xor");
    g.result(g.greater(x, g.scalar(f32, 0)), "positive");
    g.result(g.select(a, x, g.scalar(f32, -1)), "where");
    const Tensor ta = make_raw_booleans({3, n}, ++seed), tb = make_raw_booleans({3, 1}, ++seed),
                 tx = make_tensor({3, n}, ++seed);
    const auto want = reference::evaluate(g, {ta, tb, tx});
    for_each_isa([&](x64::Isa isa) {
      for (const int unroll : {1, 4}) {
        INFO("unroll = " << unroll);
        const CompiledKernel k = compile(g, {.isa = isa, .unroll = unroll});
        for (const Guard where : {Guard::after, Guard::before}) {
          GuardedBuffer ga(ta.byte_size(), where), gb(tb.byte_size(), where),
              gx(tx.byte_size(), where);
          std::memcpy(ga.data(), ta.data(), ta.byte_size());
          std::memcpy(gb.data(), tb.data(), tb.byte_size());
          std::memcpy(gx.data(), tx.data(), tx.byte_size());
          std::vector<std::unique_ptr<GuardedBuffer>> outs;
          std::vector<TensorView> out;
          for (const Tensor& w : want) {
            outs.push_back(std::make_unique<GuardedBuffer>(w.byte_size(), where));
            out.push_back({w.type(), w.shape(), outs.back()->data()});
          }
          const ConstTensorView in[] = {
              {boolean, {3, n}, ga.data()}, {boolean, {3, 1}, gb.data()}, {f32, {3, n}, gx.data()}};
          for (const int threads : {1, 2}) {
            k.run(in, out, with_threads(threads));
            for (std::size_t o = 0; o < want.size(); ++o) {
              Tensor got(want[o].type(), want[o].shape());
              std::memcpy(got.data(), outs[o]->data(), got.byte_size());
              const std::string report = compare(got, want[o], exact);
              CHECK_MESSAGE(report.empty(), report);
            }
          }
        }
      }
    });
  }
}

TEST_CASE("jit boolean: dynamic kernels read and write booleans, run-time tails included") {
  Graph g;
  const auto a = g.parameter(boolean, {dynamic, dynamic}, "a");
  const auto x = g.parameter(f32, {dynamic, dynamic}, "x");
  g.result(g.select(a, x, g.negative(x)), "where");
  g.result(g.logical_not(a), "not");
  g.result(g.greater(x, g.scalar(f32, 0)), "positive");
  std::uint64_t seed = 6000;
  for_each_isa([&](x64::Isa isa) {
    const CompiledKernel k = compile(g, {.isa = isa});
    REQUIRE(k.is_dynamic());
    for (const Dim n : {Dim{1}, Dim{7}, Dim{15}, Dim{17}, Dim{33}, Dim{67}}) {
      INFO("n = " << n);
      const Tensor ta = make_raw_booleans({2, n}, ++seed), tx = make_tensor({2, n}, ++seed);
      const auto want = reference::evaluate(g, {ta, tx});
      for (const Guard where : {Guard::after, Guard::before}) {
        GuardedBuffer ga(ta.byte_size(), where), gx(tx.byte_size(), where);
        std::memcpy(ga.data(), ta.data(), ta.byte_size());
        std::memcpy(gx.data(), tx.data(), tx.byte_size());
        std::vector<std::unique_ptr<GuardedBuffer>> outs;
        std::vector<TensorView> out;
        for (const Tensor& w : want) {
          outs.push_back(std::make_unique<GuardedBuffer>(w.byte_size(), where));
          out.push_back({w.type(), w.shape(), outs.back()->data()});
        }
        const ConstTensorView in[] = {{boolean, {2, n}, ga.data()}, {f32, {2, n}, gx.data()}};
        for (const int threads : {1, 2}) {
          k.run(in, out, with_threads(threads));
          for (std::size_t o = 0; o < want.size(); ++o) {
            Tensor got(want[o].type(), want[o].shape());
            std::memcpy(got.data(), outs[o]->data(), got.byte_size());
            const std::string report = compare(got, want[o], exact);
            CHECK_MESSAGE(report.empty(), report);
          }
        }
      }
    }
  });
}

TEST_CASE("jit boolean: a Where with a boolean input, and a mask output, run in kernels") {
  Graph m;
  const auto x = m.parameter(f32, {4, 37}, "x");
  const auto cond = m.parameter(boolean, {4, 37}, "cond");
  const auto y = m.select(cond, m.relu(x), m.multiply(x, m.scalar(f32, 0.5)));
  m.result(m.add(y, m.scalar(f32, 1)), "y");
  m.result(m.logical_and(m.greater(x, m.scalar(f32, 0)), cond), "mask");
  const Program<> program(m);
  check_steps_are_kernels(program); // one per output (TokenizeOptions::max_result_outputs)
  for (const auto& step : program.steps())
    CHECK_MESSAGE(step.kind != Program<>::StepKind::reference, step.note);
  const std::vector<Tensor> in = {make_tensor({4, 37}, 7), make_raw_booleans({4, 37}, 8)};
  const auto want = reference::evaluate(m, std::span<const Tensor>(in));
  for (const int threads : {1, 2}) {
    const auto got = program.run(in, with_threads(threads));
    for (std::size_t o = 0; o < want.size(); ++o) {
      const std::string report = compare(got[o], want[o], exact);
      CHECK_MESSAGE(report.empty(), report);
    }
  }
}

TEST_CASE("jit boolean: loads and stores carry the boolean type; a Convert to boolean folds into "
          "its Store") {
  Graph g;
  const auto x = g.parameter(f32, {64}, "x");
  const auto a = g.parameter(boolean, {64}, "a");
  g.result(g.convert(g.select(a, x, g.negative(x)), boolean), "y");
  auto lowered = lower(g, x64::Isa::avx512);
  const std::string lir = ir::to_string(lowered);
  INFO(lir);
  CHECK(lir.find("Load x16 boolean") != std::string::npos);
  CHECK(lir.find("Store x16 boolean") != std::string::npos);
  CHECK(lir.find("Convert") == std::string::npos);
  Tensor tx = make_tensor({64}, 9);
  check(g, {tx, make_raw_booleans({64}, 10)});
}
