// SPDX-License-Identifier: Apache-2.0
// tests/aarch64/test_aarch64_dynamic_reduce.cpp: reductions and Softmax over a dynamic
// innermost axis on the AArch64 target under qemu-aarch64: the cases every target runs
// (dynamic_reduce_cases.hpp: rows of 1 to 67 elements, per-row and full outputs, NaN and
// infinities, LayerNorm with scale and shift of [C] and [1], AddSoftmax with broadcast inputs,
// rank 1, empty rows and batches, guard pages, 1-3 threads).
#include <doctest/doctest.h>

#include "aarch64/a64_test_util.hpp"
#include "dynamic_reduce_cases.hpp"

using namespace snippets;
using namespace snippets::dynamic_reduce_test;

TEST_CASE("aarch64 dynamic reduce: Softmax over rows of 1 to 67 elements runs on one kernel") {
  softmax_rows();
}

TEST_CASE(
    "aarch64 dynamic reduce: ReduceSum and ReduceMax give per-row outputs next to full ones") {
  per_row_outputs();
}

TEST_CASE("aarch64 dynamic reduce: NaN and infinities in the main loop and the tail propagate") {
  nan_and_infinities();
}

TEST_CASE(
    "aarch64 dynamic reduce: LayerNorm over rows of 1 to 67 with scale and shift of shape [C]") {
  layer_norm_rows();
}

TEST_CASE(
    "aarch64 dynamic reduce: LayerNorm with scale and shift of shape [1] and of a static row") {
  layer_norm_broadcast();
}

TEST_CASE(
    "aarch64 dynamic reduce: a scale broadcast along the row only at run time compiles once more") {
  scale_variant();
}

TEST_CASE("aarch64 dynamic reduce: AddSoftmax of 4-D scores with a broadcast mask and bias") {
  add_softmax();
}

TEST_CASE("aarch64 dynamic reduce: a single row, rank 1, and rows of one element") { single_row(); }

TEST_CASE("aarch64 dynamic reduce: empty rows and empty batches") { empty_rows(); }

TEST_CASE(
    "aarch64 dynamic reduce: ReduceMin, ReduceProd, ReduceSumSquare, L1, L2 and ReduceMean rows") {
  reduce_ops_rows();
}

TEST_CASE("aarch64 dynamic reduce: an output takes the innermost extent of the inputs it reads "
          "along the row") {
  output_extents();
}

TEST_CASE("aarch64 dynamic reduce: tails never touch memory outside a tensor") { guard_pages(); }
