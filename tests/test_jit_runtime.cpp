// SPDX-License-Identifier: Apache-2.0
// JIT tests of runtime/compiled_kernel.hpp, runtime/executor.hpp, target/x64/code_buffer.hpp
// and compile.hpp: W^X code pages, concurrent runs of one kernel, the run-time argument
// checks (which must fail before any memory is touched), the compile-time errors, ISA
// selection, the pass trace, the verifier, custom executors and zero-size tensors.
#include "jit_test_util.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

using namespace snippets;
using namespace snippets::jit_test;

namespace {

struct Mapping {
  std::uintptr_t lo = 0, hi = 0;
  std::string perms, line;
};

/// The current mappings of this process, from /proc/self/maps.
std::vector<Mapping> memory_maps() {
  std::vector<Mapping> out;
  std::ifstream f("/proc/self/maps");
  std::string line;
  while (std::getline(f, line)) {
    Mapping m;
    m.line = line;
    std::istringstream is(line);
    std::string range;
    is >> range >> m.perms;
    const auto dash = range.find('-');
    m.lo = std::stoull(range.substr(0, dash), nullptr, 16);
    m.hi = std::stoull(range.substr(dash + 1), nullptr, 16);
    out.push_back(m);
  }
  return out;
}

/// relu(a * b + a) on two [3, 17] inputs: the example of the brief.
Graph& example_graph(Graph& g) {
  const auto a = g.parameter(f32, {3, 17}), b = g.parameter(f32, {3, 1});
  g.result(g.relu(g.add(g.multiply(a, b), a)));
  return g;
}

} // namespace

TEST_CASE("jit runtime: compiled code is never writable and executable at once (W^X)") {
  Graph g;
  example_graph(g);
  std::vector<CompiledKernel> kernels;
  for_each_isa([&](x64::Isa isa) { kernels.push_back(compile(g, {.isa = isa})); });
  const std::vector<Mapping> maps = memory_maps();
  REQUIRE(!maps.empty());
  for (const Mapping& m : maps) {
    INFO(m.line);
    CHECK(!(m.perms.size() >= 3 && m.perms[1] == 'w' && m.perms[2] == 'x'));
  }
  for (const CompiledKernel& k : kernels) {
    INFO("isa = " << k.signature().isa);
    REQUIRE(!k.code().empty());
    const auto code = reinterpret_cast<std::uintptr_t>(k.code().data());
    const Mapping* home = nullptr;
    for (const Mapping& m : maps)
      if (m.lo <= code && code < m.hi) home = &m;
    REQUIRE(home != nullptr);
    INFO(home->line);
    CHECK(home->perms == "r-xp");
    // the whole code (and its constant table) lies in that one mapping
    CHECK(code + k.code().size() <= home->hi);
  }
}

TEST_CASE("jit runtime: one kernel runs concurrently from 4 threads with correct results") {
  Graph g;
  const Shape s{4, 3, 1000}, c{1, 3, 1};
  const auto a = g.parameter(f32, s), b = g.parameter(f32, c);
  g.result(g.maximum(g.subtract(a, g.multiply(a, b)), b));
  for_each_isa([&](x64::Isa isa) {
    const CompiledKernel k = compile(g, {.isa = isa, .fma = false});
    constexpr int n_threads = 4, rounds = 20;
    std::vector<std::vector<Tensor>> inputs(n_threads);
    std::vector<Tensor> want(n_threads);
    reference::Options ro;
    ro.round_each_node = true;
    for (int t = 0; t < n_threads; ++t) {
      inputs[t] = {make_tensor(s, 3000 + t), make_tensor(c, 3100 + t)};
      want[t] = reference::evaluate(g, std::span<const Tensor>(inputs[t]), ro).at(0);
    }
    std::vector<std::string> failures(n_threads);
    std::vector<std::thread> pool;
    for (int t = 0; t < n_threads; ++t)
      pool.emplace_back([&, t] {
        for (int r = 0; r < rounds && failures[t].empty(); ++r) {
          // odd threads run OpenMP teams of their own inside the std::thread
          const auto out = k.run(std::span<const Tensor>(inputs[t]), with_threads(1 + t % 2));
          failures[t] = compare(out.at(0), want[t], exact);
        }
      });
    for (auto& th : pool) th.join();
    for (int t = 0; t < n_threads; ++t) {
      INFO("thread " << t);
      CHECK_MESSAGE(failures[t].empty(), failures[t]);
    }
  });
}

TEST_CASE("jit runtime: run() rejects wrong arguments before touching any memory") {
  Graph g;
  example_graph(g); // inputs f32[3,17], f32[3,1]; output f32[3,17]
  // every pointer is a PROT_NONE page: if the kernel ran, or run() read a buffer, the test
  // would crash instead of seeing the error
  const NoAccessPage page;
  void* p = page.data();
  const Shape a{3, 17}, b{3, 1};
  for_each_isa([&](x64::Isa isa) {
    const CompiledKernel k = compile(g, {.isa = isa});
    const TensorView out[] = {{f32, a, p}};
    auto run = [&](std::vector<ConstTensorView> in, std::vector<TensorView> outs) {
      return error_id([&] { k.run(in, outs, with_threads(2)); });
    };
    const std::vector<TensorView> outs(std::begin(out), std::end(out));
    CHECK(run({{f32, a, p}}, outs) == "snippets.run.arg_count");
    CHECK(run({{f32, a, p}, {f32, b, p}, {f32, b, p}}, outs) == "snippets.run.arg_count");
    CHECK(run({{f32, a, p}, {f32, b, p}}, {}) == "snippets.run.arg_count");
    CHECK(run({{f32, a, p}, {f32, b, p}}, {out[0], out[0]}) == "snippets.run.arg_count");
    CHECK(run({{ElementType::i32, a, p}, {f32, b, p}}, outs) == "snippets.run.type_mismatch");
    CHECK(run({{f32, a, p}, {ElementType::f16, b, p}}, outs) == "snippets.run.type_mismatch");
    CHECK(run({{f32, a, p}, {f32, b, p}}, {{ElementType::bf16, a, p}}) ==
          "snippets.run.type_mismatch");
    CHECK(run({{f32, Shape{3, 16}, p}, {f32, b, p}}, outs) == "snippets.run.shape_mismatch");
    CHECK(run({{f32, a, p}, {f32, Shape{3}, p}}, outs) == "snippets.run.shape_mismatch");
    CHECK(run({{f32, a, p}, {f32, Shape{1, 3, 1}, p}}, outs) == "snippets.run.shape_mismatch");
    CHECK(run({{f32, a, p}, {f32, b, p}}, {{f32, Shape{3, 17, 1}, p}}) ==
          "snippets.run.shape_mismatch");
    CHECK(run({{f32, a, nullptr}, {f32, b, p}}, outs) == "snippets.run.null_pointer");
    CHECK(run({{f32, a, p}, {f32, b, nullptr}}, outs) == "snippets.run.null_pointer");
    CHECK(run({{f32, a, p}, {f32, b, p}}, {{f32, a, nullptr}}) == "snippets.run.null_pointer");
    // the Tensor convenience overload checks the same way
    const Tensor ta(f32, a), tb(f32, Shape{3, 2});
    CHECK(error_id([&] { k.run({ta}); }) == "snippets.run.arg_count");
    CHECK(error_id([&] { k.run({ta, tb}); }) == "snippets.run.shape_mismatch");
  });
}

TEST_CASE("jit runtime: compile() rejects what a kernel cannot do, with stable ids") {
  for_each_isa([&](x64::Isa isa) {
    const CompileOptions opt{.isa = isa};
    { // an op without an emitter
      Graph g;
      const auto a = g.parameter(f32, {8, 8});
      g.result(g.make(ir::Opaque{"Foreign", {{f32, {8, 8}}}}, {a})[0]);
      CHECK(error_id([&] { compile(g, opt); }) == "snippets.compile.unsupported_op");
    }
    { // an i32 parameter
      Graph g;
      g.result(g.abs(g.parameter(ElementType::i32, {8})));
      CHECK(error_id([&] { compile(g, opt); }) == "snippets.compile.unsupported_type");
    }
    { // more inputs and outputs than data pointer registers
      Graph g;
      std::vector<ir::Value> in;
      for (int i = 0; i < x64::Traits::data_pointer_registers; ++i)
        in.push_back(g.parameter(f32, {8}));
      ir::Value t = in[0];
      for (std::size_t i = 1; i < in.size(); ++i) t = g.add(t, in[i]);
      g.result(t);
      CHECK(error_id([&] { compile(g, opt); }) == "snippets.compile.too_many_io");
    }
    { // a PowerStatic exponent the emitter cannot do
      Graph g;
      g.result(g.power_static(g.parameter(f32, {8}), 0.3));
      CHECK(error_id([&] { compile(g, opt); }) == "snippets.compile.unsupported_attribute");
    }
    { // Results of different shapes
      Graph g;
      const auto a = g.parameter(f32, {3, 17}), b = g.parameter(f32, {3, 1});
      g.result(g.relu(a));
      g.result(g.relu(b));
      CHECK(error_id([&] { compile(g, opt); }) == "snippets.compile.output_shape");
    }
    { // a Constant of distinct values (it would have to be an input)
      Graph g;
      g.result(g.add(g.parameter(f32, {3}), g.constant(f32, {3}, {1, 2, 3})));
      CHECK(error_id([&] { compile(g, opt); }) == "snippets.compile.tensor_constant");
    }
    { // no Result
      Graph g;
      g.parameter(f32, {3});
      CHECK(error_id([&] { compile(g, opt); }) == "snippets.compile.no_outputs");
    }
    { // a Result that is a constant
      Graph g;
      g.parameter(f32, {3});
      g.result(g.scalar(f32, 1));
      CHECK(error_id([&] { compile(g, opt); }) == "snippets.compile.constant_output");
    }
    { // an unroll factor out of range
      Graph g;
      g.result(g.relu(g.parameter(f32, {8})));
      CHECK(error_id([&] { compile(g, {.isa = isa, .unroll = 0}); }) ==
            "snippets.compile.bad_option");
      CHECK(error_id([&] { compile(g, {.isa = isa, .unroll = 17}); }) ==
            "snippets.compile.bad_option");
    }
    { // the message names the op and the cause
      Graph g;
      const auto a = g.parameter(f32, {8, 8});
      g.result(g.make(ir::Opaque{"Foreign", {{f32, {8, 8}}}}, {a})[0]);
      try {
        compile(g, opt);
        FAIL("compile() accepted an Opaque op");
      } catch (const Error& e) {
        const std::string what = e.what();
        CHECK(what.find("[snippets.compile.unsupported_op]") == 0);
        CHECK(what.find("Opaque") != std::string::npos);
      }
    }
  });
}

TEST_CASE("jit runtime: an input the body does not use is accepted and ignored") {
  const Shape s{3, 17};
  Graph g;
  const auto a = g.parameter(f32, s);
  g.parameter(f32, {5});
  g.result(g.negative(a));
  check_jit(g, {make_tensor(s, 3150), make_tensor({5}, 3151)}, {.threads = {1, 2}});
}

TEST_CASE("jit runtime: an unused input of higher rank than the output compiles") {
  // Regression (both ISAs, fixed): convert_to_linear_ir right-aligns every Parameter to the rank of
  // the output domain with align_rank(s, rank), which computes rank - s.rank() as size_t; a
  // Parameter of higher rank than every Result (only possible when it is unused) underflows
  // it and compile() throws std::length_error ("cannot create std::vector larger than
  // max_size()") instead of compiling or raising a [snippets.compile.*] error. Repro:
  // a = Parameter f32[5], b = Parameter f32[3,5] (unused), g.result(relu(a)).
  Graph g;
  const auto a = g.parameter(f32, {5});
  g.parameter(f32, {3, 5});
  g.result(g.relu(a));
  for_each_isa(
      [&](x64::Isa isa) { CHECK(error_id([&] { compile(g, {.isa = isa}); }) == "no error"); });
}

TEST_CASE("jit runtime: nine inputs with a rank-4 broadcast domain compile within the data "
          "pointer budget") {
  // Regression (both ISAs, fixed): check_body accepts up to data_pointer_registers (10) inputs plus
  // outputs, but every argument takes one of the 13 usable GPRs and each loop level of the
  // collapsed domain needs a counter. 9 inputs + 1 output leave 3 counters, so a domain that
  // does not collapse below rank 4 fails late in AssignRegisters with
  // "[snippets.compile.register_pressure] the kernel needs more general-purpose registers
  // than the target has (3) at ''" (the LoopBegin has no name, so the message names nothing).
  // Repro: 7 inputs f32[2,3,4,5], one f32[1,3,1,5], one f32[2,1,4,1], Result = the Maximum
  // of all nine (domain [2,3,4,5]). Either the kernel should find the registers (keep loop
  // counters or rarely used pointers in memory) or check_body should reject the body up front
  // with [snippets.compile.too_many_io] counting the loop depth.
  Graph g;
  std::vector<ir::Value> in;
  std::vector<Tensor> tensors;
  std::uint64_t seed = 3170;
  for (const Shape& s : {Shape{2, 3, 4, 5}, Shape{2, 3, 4, 5}, Shape{2, 3, 4, 5}, Shape{2, 3, 4, 5},
                         Shape{2, 3, 4, 5}, Shape{2, 3, 4, 5}, Shape{2, 3, 4, 5}, Shape{1, 3, 1, 5},
                         Shape{2, 1, 4, 1}}) {
    in.push_back(g.parameter(f32, s));
    tensors.push_back(make_tensor(s, ++seed));
  }
  ir::Value t = in[0];
  for (std::size_t i = 1; i < in.size(); ++i) t = g.maximum(t, in[i]);
  g.result(t);
  check_jit(g, tensors, {.threads = {1, 3}});
}

TEST_CASE("jit runtime: buffers at any byte offset give the same results") {
  // Views need no alignment: a pointer 1, 2 or 3 bytes past a vector boundary works.
  const Shape s{3, 37}, c{3, 1};
  Graph g;
  const auto a = g.parameter(f32, s), b = g.parameter(f32, c);
  g.result(g.maximum(g.subtract(a, g.multiply(a, b)), b));
  const std::vector<Tensor> in = {make_tensor(s, 3160), make_tensor(c, 3161)};
  for_each_isa([&](x64::Isa isa) {
    const CompiledKernel k = compile(g, {.isa = isa, .fma = false});
    const Tensor want = k.run(std::span<const Tensor>(in)).at(0);
    for (std::size_t offset = 0; offset < 4; ++offset) {
      INFO("byte offset " << offset);
      std::vector<unsigned char> ba(in[0].byte_size() + 64), bb(in[1].byte_size() + 64),
          bo(want.byte_size() + 64);
      std::memcpy(ba.data() + offset, in[0].data(), in[0].byte_size());
      std::memcpy(bb.data() + offset, in[1].data(), in[1].byte_size());
      const ConstTensorView views[] = {{f32, s, ba.data() + offset}, {f32, c, bb.data() + offset}};
      const TensorView outs[] = {{f32, s, bo.data() + offset}};
      k.run(views, outs, with_threads(2));
      Tensor got(f32, s);
      std::memcpy(got.data(), bo.data() + offset, got.byte_size());
      const std::string report = compare(got, want, exact);
      CHECK_MESSAGE(report.empty(), report);
    }
  });
}

TEST_CASE("jit runtime: the largest body within the data pointer budget compiles and runs") {
  // data_pointer_registers - 1 inputs and one output: one under the too_many_io limit
  const int n_in = x64::Traits::data_pointer_registers - 1;
  const Shape s{3, 17};
  Graph g;
  std::vector<ir::Value> in;
  std::vector<Tensor> tensors;
  for (int i = 0; i < n_in; ++i) {
    in.push_back(g.parameter(f32, i % 3 == 2 ? Shape{3, 1} : s));
    tensors.push_back(make_tensor(i % 3 == 2 ? Shape{3, 1} : s, 3200 + i, Pattern::finite));
  }
  ir::Value t = in[0];
  for (std::size_t i = 1; i < in.size(); ++i) t = g.maximum(g.subtract(t, in[i]), in[i]);
  g.result(t);
  check_jit(g, tensors, {.threads = {1, 3}, .round_each_node = true});
}

TEST_CASE("jit runtime: CompileOptions selects the ISA") {
  Graph g;
  example_graph(g);
  const Tensor a = make_tensor({3, 17}, 3300), b = make_tensor({3, 1}, 3301);
  const Tensor want = compile(g, {.isa = x64::Isa::avx2}).run({a, b}).at(0);
  for_each_isa([&](x64::Isa isa) {
    const CompiledKernel k = compile(g, {.isa = isa});
    CHECK(k.signature().isa == x64::to_string(isa));
    // the same results from either ISA (FMA in both)
    const std::string report = compare(k.run({a, b}).at(0), want, exact);
    CHECK_MESSAGE(report.empty(), report);
  });
  // the two ISAs give different machine code for the same body
  if (x64::host_supports(x64::Isa::avx512)) {
    const CompiledKernel k512 = compile(g, {.isa = x64::Isa::avx512});
    const CompiledKernel k2 = compile(g, {.isa = x64::Isa::avx2});
    CHECK(!std::equal(k512.code().begin(), k512.code().end(), k2.code().begin(), k2.code().end()));
  } else {
    test::skip_on_host("avx512");
  }
  // without an ISA, compile() picks the best the host has (unless SNIPPETS_MAX_ISA caps it)
  CHECK(compile(g).signature().isa == x64::to_string(x64::best_host_isa()));
}

TEST_CASE("jit runtime: CompileOptions.trace lists the passes in the documented order") {
  // passes/default_pipelines.hpp: DefaultDataFlow, DefaultControlFlow, DefaultPreparation
  const std::vector<std::string_view> expected = {"FoldDequantizeIntoMatMul",
                                                  "DecomposeCompositeReductions",
                                                  "DecomposeSoftmax",
                                                  "DecomposeQuantization",
                                                  "FuseTransposeIntoParameter",
                                                  "FuseTransposeIntoResult",
                                                  "Canonicalize",
                                                  "ConvertConstantsToScalars",
                                                  "ConvertPowerToPowerStatic",
                                                  "AlignElementTypes",
                                                  "OptimizeDomain",
                                                  "TileColumns",
                                                  "TileStridedReads",
                                                  "MultiplyByReciprocal",
                                                  "FuseMultiplyAdd",
                                                  "MarkLoops",
                                                  "DecomposeReductions",
                                                  "FuseLoops",
                                                  "InsertBuffers",
                                                  "InsertLoadStore",
                                                  "InsertBroadcastMove",
                                                  "LoadMoveBroadcastToBroadcastLoad",
                                                  "ExtractLoopInvariants",
                                                  "InitLoops",
                                                  "AllocateBuffers",
                                                  "CleanRepeatedDataPointerShifts",
                                                  "InsertLoops",
                                                  "InitLiveRanges",
                                                  "InsertRegSpills",
                                                  "AssignRegisters",
                                                  "InsertSpecificIterations",
                                                  "PrefetchNextRows",
                                                  "CleanupLoopOffsets",
                                                  "OptimizeLoopSingleEvaluation"};
  Graph g;
  example_graph(g);
  for_each_isa([&](x64::Isa isa) {
    std::vector<std::string_view> trace;
    compile(g, {.isa = isa, .trace = &trace});
    std::string joined;
    for (auto name : trace) joined += std::string(name) + " ";
    INFO("trace: " << joined);
    CHECK(trace == expected);
  });
}

TEST_CASE("jit runtime: verify = true runs the verifier after every pass without complaint") {
  std::uint64_t seed = 3400;
  const std::vector<std::vector<Shape>> cases = {
      {Shape{3, 17}, Shape{3, 1}},
      {Shape{1, 16, 29, 7}, Shape{1, 16, 29, 1}},
      {Shape{2, 1, 5}, Shape{1, 3, 5}},
      {Shape{}, Shape{1000}},
      {Shape{2, 3, 1, 2, 1, 9}, Shape{1, 3, 4, 1, 5, 1}}};
  for (const auto& shapes : cases) {
    INFO("shapes " << shapes[0].to_string() << " " << shapes[1].to_string());
    Graph g;
    const auto a = g.parameter(f32, shapes[0]), b = g.parameter(f32, shapes[1]);
    g.result(g.select(g.greater(a, b), g.add(g.multiply(a, b), b), g.hswish(a)));
    const std::vector<Tensor> in = {make_tensor(shapes[0], ++seed), make_tensor(shapes[1], ++seed)};
    const std::vector<Tensor> want = reference::evaluate(g, std::span<const Tensor>(in));
    for_each_isa([&](x64::Isa isa) {
      std::vector<std::string_view> trace, verified_trace;
      CompiledKernel k = compile(g, {.isa = isa, .trace = &trace});
      CHECK(error_id([&] {
              k = compile(g, {.isa = isa, .verify = true, .trace = &verified_trace});
            }) == "no error");
      CHECK(verified_trace == trace); // verifying changes nothing about what runs
      const std::string report = compare(k.run(std::span<const Tensor>(in)).at(0), want[0], approx);
      CHECK_MESSAGE(report.empty(), report);
    });
  }
}

TEST_CASE("jit runtime: a custom executor runs every chunk exactly once") {
  Graph g;
  const Shape s{5, 3, 33};
  const auto a = g.parameter(f32, s), b = g.parameter(f32, {1, 3, 1});
  g.result(g.maximum(g.subtract(a, g.multiply(a, b)), b));
  const std::vector<Tensor> in = {make_tensor(s, 3500), make_tensor({1, 3, 1}, 3501)};
  reference::Options ro;
  ro.round_each_node = true;
  const Tensor want = reference::evaluate(g, std::span<const Tensor>(in), ro).at(0);
  for_each_isa([&](x64::Isa isa) {
    const CompiledKernel k = compile(g, {.isa = isa, .fma = false});
    for (const int threads : {1, 2, 3, 5, 9}) {
      INFO("threads = " << threads);
      int calls = 0, largest_n = 0;
      RunOptions opt;
      opt.threads = threads;
      // sequential, last chunk first: chunks must not depend on their order
      opt.parallel_for = [&](int n, const std::function<void(int)>& body) {
        largest_n = std::max(largest_n, n);
        for (int i = n; i-- > 0;) {
          ++calls;
          body(i);
        }
      };
      const Tensor got = k.run(std::span<const Tensor>(in), opt).at(0);
      CHECK(calls == largest_n);
      CHECK(largest_n == std::min(threads, 5)); // the outer dimension has 5 rows
      const std::string report = compare(got, want, exact);
      CHECK_MESSAGE(report.empty(), report);
    }
  });
}

TEST_CASE("jit runtime: the streaming variant (non-temporal stores) matches the reference on "
          "aligned outputs, and misaligned outputs fall back to ordinary stores") {
  // streaming_threshold_bytes = 1 builds the variant for small outputs too; run() takes it
  // when every output is vector-aligned. A misaligned VMOVNTPS faults, so a pass also shows
  // that run() never picks the variant for a misaligned output.
  struct Case {
    std::vector<Shape> inputs;
    bool flat; // rows are trivially aligned: the variant always exists
  };
  const Case cases[] = {{{Shape{1}, Shape{1}}, true},
                        {{Shape{7}, Shape{7}}, true},
                        {{Shape{17}, Shape{}}, true},
                        {{Shape{3, 33}, Shape{3, 33}}, true},
                        {{Shape{3, 1000}, Shape{1}}, true},
                        {{Shape{4099}, Shape{4099}}, true},
                        {{Shape{5, 64}, Shape{5, 1}}, false},
                        {{Shape{5, 48}, Shape{5, 1}}, false},
                        {{Shape{5, 40}, Shape{5, 1}}, false},
                        {{Shape{2, 3, 16}, Shape{1, 3, 1}}, false},
                        {{Shape{2, 3, 17}, Shape{1, 3, 1}}, false}};
  std::uint64_t seed = 3700;
  for (const Case& c : cases) {
    INFO("shapes " << c.inputs[0].to_string() << " " << c.inputs[1].to_string());
    Graph g;
    const auto a = g.parameter(f32, c.inputs[0]), b = g.parameter(f32, c.inputs[1]);
    g.result(g.maximum(g.subtract(a, g.multiply(a, b)), b));
    const std::vector<Tensor> in = {make_tensor(c.inputs[0], ++seed),
                                    make_tensor(c.inputs[1], ++seed)};
    reference::Options ro;
    ro.round_each_node = true;
    const Tensor want = reference::evaluate(g, std::span<const Tensor>(in), ro).at(0);
    for_each_isa([&](x64::Isa isa) {
      for (const int unroll : {1, 4}) {
        INFO("unroll = " << unroll);
        const CompiledKernel k = compile(
            g, {.isa = isa, .fma = false, .unroll = unroll, .streaming_threshold_bytes = 1});
        const std::vector<Dim>& dom = k.signature().domain;
        const bool rows_aligned = dom.size() == 1 || (dom.back() * 4) % (x64::lanes(isa) * 4) == 0;
        CHECK(k.has_streaming_variant() == rows_aligned);
        if (c.flat) CHECK(k.has_streaming_variant());
        for (const std::size_t offset : {0, 4}) {
          INFO("output offset " << offset << " bytes from a 64-byte boundary");
          for (const int threads : {1, 2, 3}) {
            INFO("threads = " << threads);
            AlignedBuffer out(want.byte_size(), offset);
            const ConstTensorView views[] = {{f32, c.inputs[0], in[0].data()},
                                             {f32, c.inputs[1], in[1].data()}};
            const TensorView outs[] = {{f32, want.shape(), out.data()}};
            k.run(views, outs, with_threads(threads));
            Tensor got(f32, want.shape());
            std::memcpy(got.data(), out.data(), got.byte_size());
            const std::string report = compare(got, want, exact);
            CHECK_MESSAGE(report.empty(), report);
          }
        }
      }
    });
  }
  // the default threshold keeps small outputs on ordinary stores
  Graph g;
  g.result(g.relu(g.parameter(f32, {1000})));
  for_each_isa([&](x64::Isa isa) { CHECK(!compile(g, {.isa = isa}).has_streaming_variant()); });
}

TEST_CASE("jit runtime: a zero-size tensor runs without touching memory") {
  const NoAccessPage page;
  for (const auto& [sa, sb] :
       {std::pair{Shape{0, 5}, Shape{0, 5}}, std::pair{Shape{0, 5}, Shape{1, 5}},
        std::pair{Shape{3, 0}, Shape{3, 1}}, std::pair{Shape{0}, Shape{}}}) {
    INFO("shapes " << sa.to_string() << " " << sb.to_string());
    Graph g;
    const auto a = g.parameter(f32, sa), b = g.parameter(f32, sb);
    g.result(g.relu(g.add(g.multiply(a, b), a)));
    for_each_isa([&](x64::Isa isa) {
      const CompiledKernel k = compile(g, {.isa = isa});
      const Shape out_shape = k.signature().outputs.at(0).shape;
      CHECK(out_shape.element_count() == 0);
      // the zero-size tensors point at a PROT_NONE page; the [1,5] / rank-0 input is real
      const Tensor tb = make_tensor(sb, 3600);
      const ConstTensorView in[] = {{f32, sa, page.data()},
                                    {f32, sb, sb.element_count() ? tb.data() : page.data()}};
      const TensorView out[] = {{f32, out_shape, page.data()}};
      for (const int threads : {0, 1, 3})
        CHECK(error_id([&] { k.run(in, out, with_threads(threads)); }) == "no error");
      // null pointers are fine for empty tensors
      const ConstTensorView in_null[] = {{f32, sa, nullptr}, {f32, sb, tb.data()}};
      const TensorView out_null[] = {{f32, out_shape, nullptr}};
      CHECK(error_id([&] { k.run(in_null, out_null); }) == "no error");
      // and the Tensor overload returns an empty output
      const auto outs = k.run({Tensor(f32, sa), tb});
      REQUIRE(outs.size() == 1);
      CHECK(outs[0].shape() == out_shape);
      CHECK(outs[0].size() == 0);
    });
  }
}

TEST_CASE("compile: timings name every stage once, in order, and add up to the compile") {
  Graph g;
  const auto x = g.parameter(f32, {7, 33}, "x");
  g.result(g.sigmoid(g.add(g.multiply(x, g.scalar(f32, 2.0)), x)));
  std::vector<CompileTiming> timings;
  std::vector<std::string_view> trace;
  const auto start = std::chrono::steady_clock::now();
  compile(g, {.trace = &trace, .timings = &timings});
  const auto wall = std::chrono::steady_clock::now() - start;
  // DataFlow, ToLinearIR, one entry per lowering pass (the tail of the trace), Emit
  REQUIRE(timings.size() > 5);
  const std::size_t lowering = timings.size() - 3;
  REQUIRE(trace.size() > lowering);
  CHECK(timings.front().stage == "DataFlow");
  CHECK(timings[1].stage == "ToLinearIR");
  CHECK(timings.back().stage == "Emit");
  for (std::size_t i = 0; i < lowering; ++i)
    CHECK(timings[2 + i].stage == trace[trace.size() - lowering + i]);
  CHECK(std::find_if(timings.begin(), timings.end(), [](const CompileTiming& t) {
          return t.stage == "AssignRegisters";
        }) != timings.end());
  std::chrono::nanoseconds sum{};
  for (const CompileTiming& t : timings) {
    CHECK(t.time.count() >= 0);
    sum += t.time;
  }
  CHECK(sum <= wall);
}

TEST_CASE("jit runtime: a thread count beyond max_threads() is capped, not handed to OpenMP") {
  CHECK(max_threads() >= 256);
  Graph g;
  g.result(g.sigmoid(g.parameter(f32, {4096, 8}, "x")), "y");
  const std::vector<Tensor> in{make_tensor({4096, 8}, 11)};
  const auto want = reference::evaluate(g, in);
  const CompiledKernel k = compile(g);
  for (const int threads : {200000, -5}) {
    INFO("threads = " << threads);
    CHECK(compare(k.run(std::span<const Tensor>(in), with_threads(threads))[0], want[0], approx) ==
          "");
  }
}
