// SPDX-License-Identifier: Apache-2.0
// Tests of reductions and Softmax over a dynamic innermost axis on x86-64, AVX2 and AVX-512
// (passes/cleanup_loop_offsets.hpp, passes/allocate_buffers.hpp, runtime/runtime_config.hpp,
// target/x64/kernel_emitter.hpp): the cases every target runs (dynamic_reduce_cases.hpp), the
// run-time configuration of a row-reducing kernel, its lowered LIR, and what stays refused.
#include "dynamic_reduce_cases.hpp"
#include "error_id.hpp"

using namespace snippets;
using namespace snippets::dynamic_reduce_test;

TEST_CASE("dynamic reduce: Softmax over rows of 1 to 67 elements runs on one kernel") {
  softmax_rows();
}

TEST_CASE("dynamic reduce: ReduceSum and ReduceMax give per-row outputs next to full ones") {
  per_row_outputs();
}

TEST_CASE("dynamic reduce: NaN and infinities in the main loop and the tail propagate") {
  nan_and_infinities();
}

TEST_CASE("dynamic reduce: LayerNorm over rows of 1 to 67 with scale and shift of shape [C]") {
  layer_norm_rows();
}

TEST_CASE("dynamic reduce: LayerNorm with scale and shift of shape [1] and of a static row") {
  layer_norm_broadcast();
}

TEST_CASE("dynamic reduce: a scale broadcast along the row only at run time compiles once more") {
  scale_variant();
}

TEST_CASE("dynamic reduce: AddSoftmax of 4-D scores with a broadcast mask and bias") {
  add_softmax();
}

TEST_CASE("dynamic reduce: a single row, rank 1, and rows of one element") { single_row(); }

TEST_CASE("dynamic reduce: empty rows and empty batches") { empty_rows(); }

TEST_CASE("dynamic reduce: ReduceMin, ReduceProd, ReduceSumSquare, L1, L2 and ReduceMean rows") {
  reduce_ops_rows();
}

TEST_CASE(
    "dynamic reduce: an output takes the innermost extent of the inputs it reads along the row") {
  output_extents();
}

TEST_CASE("dynamic reduce: tails never touch memory outside a tensor") { guard_pages(); }

TEST_CASE("dynamic reduce: configure() keeps rows whole and splits the rows among threads") {
  Graph g;
  g.result(g.softmax(g.parameter(f32, {Q, Q, Q}), -1));
  const CompiledKernel k = compile(g);
  REQUIRE(k.signature().dynamic.has_value());
  CHECK(k.signature().dynamic->rows);
  const RuntimeConfig c = k.configure(std::vector<Shape>{Shape{2, 3, 10}});
  CHECK(c.domain[2] == 10); // an elementwise kernel would run one loop of 60
  CHECK(c.domain[1] == 6);  // the rows merge
  CHECK(c.split == 1);
  const RuntimeConfig one = k.configure(std::vector<Shape>{Shape{1, 1, 300}});
  CHECK(one.domain[2] == 300);
  CHECK(one.split < 2); // never the row
  Graph r;
  r.result(r.reduce_max(r.parameter(f32, {Q, Q}), {-1}, true));
  const CompiledKernel kr = compile(r);
  const RuntimeConfig cr = kr.configure(std::vector<Shape>{Shape{4, 9}});
  CHECK(kr.output_shapes(cr).at(0) == Shape{4, 1});
}

TEST_CASE("dynamic reduce: configure() once and run_configured() many times, with the row's "
          "scratch") {
  Graph g;
  g.result(g.softmax(g.parameter(f32, {Q, Q}), -1));
  const CompiledKernel k = compile(g);
  REQUIRE(k.signature().dynamic.has_value());
  CHECK(k.signature().dynamic->scratch_rows >= 1); // exp(x - max) waits in a row of scratch
  for (const Dim n : {3, 100, 5000}) {
    const Shape s{6, n};
    const RuntimeConfig cfg = k.configure(std::vector<Shape>{s});
    const Tensor x = uniform(s, std::uint64_t(n), -5, 5);
    const Tensor want = reference::evaluate(g, {x}).at(0);
    Tensor out(f32, s);
    const void* in[] = {x.data()};
    void* outs[] = {out.data()};
    for (int i = 0; i < 3; ++i) {
      k.run_configured(cfg, in, outs, with_threads(1 + i));
      CHECK(compare(out, want, softmax_tol).empty());
    }
  }
}

TEST_CASE("dynamic reduce: the lowered LIR walks each row in loops of a run-time length") {
  Graph g;
  g.result(g.softmax(g.parameter(f32, {Q, Q}), -1));
  ir::LinearIR<x64::Traits> lir = lower(g, x64::Isa::avx512, {.unroll = 2});
  const std::string text = ir::to_string(lir);
  INFO(text);
  CHECK(lir.dynamic);
  CHECK(text.starts_with("domain [?,?]"));
  CHECK(text.find("ReduceAccumulate x? max_ignore_nan") != std::string::npos); // masked tail
  CHECK(text.find("ReduceAccumulate x? sum") != std::string::npos);
  // x is read again by the second loop: the first loop's tail moves it back; the Buffer of
  // exp(x - max) goes back after each loop; the output is written once per row
  CHECK(text.find("rewind 4B/walked") != std::string::npos);
  CHECK(lir.buffer_pointers == 1);
  CHECK(lir.buffer_rows == std::vector<std::int64_t>{0});
  CHECK(lir.scratch_rows == 1);
  CHECK(lir.scratch_bytes == 0);
}

TEST_CASE("dynamic reduce: what stays static is refused with snippets.compile.dynamic_reduce") {
  Graph outer; // over another axis
  outer.result(outer.reduce_sum(outer.parameter(f32, {Q, Q}), {0}, true));
  CHECK(error_id([&] { (void)compile(outer); }) == "snippets.compile.dynamic_reduce");
  Graph softmax_outer;
  softmax_outer.result(softmax_outer.softmax(softmax_outer.parameter(f32, {Q, 8}), 0));
  CHECK(error_id([&] { (void)compile(softmax_outer); }) == "snippets.compile.dynamic_reduce");
  Graph dropped; // keep_dims = false
  dropped.result(dropped.reduce_max(dropped.parameter(f32, {Q, Q}), {-1}, false));
  CHECK(error_id([&] { (void)compile(dropped); }) == "snippets.compile.dynamic_reduce");
}
