// SPDX-License-Identifier: Apache-2.0
// Inserting your own pass into the default lowering pipeline, at compile time.
//
// A pass is any struct with a pass_tag, a name and a run(); pipelines are types, so adding
// one is a type alias, checked when it compiles (a pass placed before what it needs does not
// build). This one reports how many memory accesses the kernel has, right after InsertLoops;
// DefaultLowering has InsertLoops in both of its stages (loop nests, and MatMul kernels), so
// it runs on every kind of kernel. The kernels are otherwise the default ones.
#include <cstdio>

#include "snippets/snippets.hpp"

namespace passes = snippets::passes;

struct ReportMemoryAccesses {
  using pass_tag = passes::lir_pass_tag;
  static constexpr std::string_view name = "ReportMemoryAccesses";

  template <class T> void run(snippets::ir::LinearIR<T>& lir, passes::PassContext<T>&) const {
    int loads = 0, stores = 0;
    for (auto& e : lir) {
      loads += std::holds_alternative<snippets::ir::Load>(e->op) ||
               std::holds_alternative<snippets::ir::BroadcastLoad>(e->op);
      stores += std::holds_alternative<snippets::ir::Store>(e->op);
    }
    std::printf("after InsertLoops: %d loads, %d stores in %zu expressions\n", loads, stores,
                lir.size());
  }
};

using MyLowering =
    passes::insert_after_t<passes::DefaultLowering, passes::InsertLoops, ReportMemoryAccesses>;

int main() {
  using namespace snippets;
  ir::Graph<x64::Traits> g;
  auto x = g.parameter(ElementType::f32, {4, 100});
  auto bias = g.parameter(ElementType::f32, {4, 1});
  g.result(g.relu(g.add(x, bias)));
  auto kernel = compile<x64::Traits, MyLowering>(g);
  auto out = kernel.run({reference::Tensor::from_values(ElementType::f32, {4, 100}, {-1.0}),
                         reference::Tensor::from_values(ElementType::f32, {4, 1}, {1, 2, 3, 4})});
  std::printf("relu(-1 + bias) for the four rows: %g %g %g %g\n", out[0].at(0), out[0].at(100),
              out[0].at(200), out[0].at(300));
  // a MatMul body goes through the Brgemm stage of the same pipeline
  ir::Graph<x64::Traits> mm;
  auto a = mm.parameter(ElementType::f32, {8, 16});
  auto w = mm.constant(ElementType::f32, {16, 4}, std::vector<double>(64, 0.5));
  mm.result(mm.relu(mm.matmul(a, w)));
  auto product = compile<x64::Traits, MyLowering>(mm);
  auto y = product.run({reference::Tensor::from_values(ElementType::f32, {8, 16}, {1.0})});
  std::printf("relu(ones x 0.5): %g\n", y[0].at(0));
  return out[0].at(300) == 3.0f && y[0].at(0) == 8.0f ? 0 : 1;
}
