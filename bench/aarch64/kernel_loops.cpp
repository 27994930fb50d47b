// SPDX-License-Identifier: Apache-2.0
// bench/aarch64/kernel_loops.cpp: writes the code of the AArch64 kernels of three fused
// workloads (relu(a*b+c), Gelu (tanh form), Softmax over rows; [256, 1024] f32) and of a
// MatMul ([256, 256] x [256, 256] f32, B an input) for scripts/aarch64-loop-counts, which
// counts the instructions of their innermost loops per vector of results, and of the
// MatMul's K loop per FMLA (docs/benchmarks.md, "AArch64"). Run under qemu-aarch64:
//   kernel_loops <dir>
// writes <dir>/<workload>.bin (the instructions, without the constant pool) and prints, per
// workload, the element increments of its innermost loops in code order.
#include <cstdio>
#include <fstream>
#include <string>
#include <variant>
#include <vector>

#include "snippets/snippets.hpp"

using namespace snippets;
using G = ir::Graph<aarch64::Traits>;

namespace {

/// The increments of the loops that contain no other loop, in LIR (= code) order.
std::vector<std::int64_t> innermost_increments(const ir::LinearIR<aarch64::Traits>& lir) {
  std::vector<std::int64_t> out;
  std::vector<std::pair<std::size_t, bool>> open; // loop id, innermost so far
  for (const auto& e : lir) {
    if (const auto* b = std::get_if<ir::LoopBegin>(&e->op)) {
      if (!open.empty()) open.back().second = false;
      open.push_back({b->loop_id, true});
    } else if (std::holds_alternative<ir::LoopEnd>(e->op)) {
      const auto [id, innermost] = open.back();
      open.pop_back();
      const ir::LoopInfo& info = lir.loops().at(id);
      if (innermost && !info.evaluate_once) out.push_back(info.increment);
    }
  }
  return out;
}

void write(const std::string& dir, const std::string& name, const G& g) {
  const auto lir = lower(g, aarch64::Isa::neon);
  const CompiledKernel k = compile(g);
  const KernelCode& code = k.kernel_code();
  std::ofstream(dir + "/" + name + ".bin", std::ios::binary)
      .write(reinterpret_cast<const char*>(code.bytes.data()),
             static_cast<std::streamsize>(code.text_bytes));
  std::printf("%s", name.c_str());
  for (const std::int64_t inc : innermost_increments(lir)) std::printf(" %lld", (long long)inc);
  std::printf("\n");
}

} // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : ".";
  const Shape s{256, 1024};
  {
    G g;
    const auto a = g.parameter(ElementType::f32, s), b = g.parameter(ElementType::f32, s),
               c = g.parameter(ElementType::f32, s);
    g.result(g.relu(g.add(g.multiply(a, b), c)));
    write(dir, "relu_fma", g);
  }
  {
    G g;
    g.result(g.gelu(g.parameter(ElementType::f32, s), ir::GeluApproximation::tanh));
    write(dir, "gelu_tanh", g);
  }
  {
    G g;
    g.result(g.softmax(g.parameter(ElementType::f32, s), -1));
    write(dir, "softmax_rows", g);
  }
  {
    G g;
    const Shape m{256, 256};
    g.result(g.matmul(g.parameter(ElementType::f32, m), g.parameter(ElementType::f32, m)));
    write(dir, "matmul", g);
  }
}
