// SPDX-License-Identifier: Apache-2.0
// Inserting your own pass into the default lowering pipeline, at compile time.
//
// A pass is any struct with a pass_tag, a name and a run(); pipelines are types, so adding
// one is a type alias. This one reports how many memory accesses each loop has, right after
// InsertLoops; the kernel is otherwise the default one.
#include <cstdio>

#include "snippets/snippets.hpp"

namespace passes = snippets::passes;

struct ReportMemoryAccesses {
  using pass_tag = passes::lir_pass_tag;
  static constexpr std::string_view name = "ReportMemoryAccesses";

  template <class T>
  passes::Preserved run(snippets::ir::LinearIR<T>& lir, passes::PassContext<T>&) const {
    int loads = 0, stores = 0;
    for (auto& e : lir) {
      loads += std::holds_alternative<snippets::ir::Load>(e->op) ||
               std::holds_alternative<snippets::ir::BroadcastLoad>(e->op);
      stores += std::holds_alternative<snippets::ir::Store>(e->op);
    }
    std::printf("after InsertLoops: %d loads, %d stores in %zu expressions\n", loads, stores,
                lir.size());
    return passes::Preserved::all;
  }
};

using MyLowering = passes::Pipeline<
    passes::insert_after_t<passes::DefaultControlFlow, passes::InsertLoops, ReportMemoryAccesses>,
    passes::DefaultPreparation>;

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
  return out[0].at(300) == 3.0f ? 0 : 1;
}
