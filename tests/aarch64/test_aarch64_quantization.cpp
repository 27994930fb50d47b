// SPDX-License-Identifier: Apache-2.0
// tests/aarch64/test_aarch64_quantization.cpp: FakeQuantize and Quantize on the AArch64 target
// (passes/decompose_quantization.hpp writes them as ops with NEON emitters), bit for bit against
// the reference under qemu: every per-tensor form of the decomposition, per-channel ranges and
// scales as inputs, u8 and i8 outputs, ties, saturation and NaN, sizes 1 to 67, 1 and 2 threads.
#include "a64_test_util.hpp"
#include "quantization_test_util.hpp"

using namespace snippets;
using namespace snippets::a64_test;
using namespace snippets::quantization_test;

namespace {

void check(const G& g, const std::vector<Tensor>& in) { check_kernel(g, in, exact, true); }

} // namespace

TEST_CASE("aarch64: FakeQuantize in every form of its decomposition, sizes 1 to 67") {
  std::uint64_t seed = 40;
  for (const Ranges& r : per_tensor) {
    INFO("ranges " << r.describe());
    for (Dim n = 1; n <= 67; n += 11) {
      const Shape s{2, n};
      const Tensor x = around_tensor(s, ++seed, r.il, r.ih, r.step());
      check(fake_quantize_graph(s, r), {x});
      if (r.ol == 0 && r.oh == 255) check(fake_quantize_graph(s, r, u8), {x});
    }
  }
}

TEST_CASE("aarch64: per-channel FakeQuantize ranges and Quantize scales as inputs, u8 and i8") {
  const Shape s{2, 3, 13};
  const Shape rs{3, 1};
  G g;
  const auto x = g.parameter(f32, s, "x");
  std::vector<decltype(g.parameter(f32, rs))> p;
  for (const char* name : {"il", "ih", "ol", "oh", "scale", "zp"})
    p.push_back(g.parameter(f32, rs, name));
  g.result(g.fake_quantize(x, p[0], p[1], p[2], p[3], 11), "fq");
  g.result(g.quantize(x, p[4], p[5], u8), "u");
  g.result(g.quantize(x, p[4], g.scalar(f32, -5), i8), "i");
  std::vector<Tensor> in{around_tensor(s, 9, -4, 4, 0.5)};
  const std::vector<std::vector<double>> ranges = {{-4, 1, 2},   {4, -1, 2},    {0, 0, 1},
                                                   {1, 255, -1}, {0.5, 0.1, 3}, {0, 128, 255}};
  for (const auto& v : ranges) in.push_back(Tensor::from_values(f32, rs, v));
  check(g, in);
}
