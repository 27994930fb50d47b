// SPDX-License-Identifier: Apache-2.0
// Compile-time pipelines: composition, editing, and a user pass inserted into the default.
#include <doctest/doctest.h>

#include <type_traits>

#include "snippets/compile.hpp"

using namespace snippets;
namespace p = snippets::passes;

namespace {
/// Counts the expressions it sees; proves a user pass runs where it was inserted.
struct CountExpressions {
  using pass_tag = p::lir_pass_tag;
  static constexpr std::string_view name = "CountExpressions";
  static inline std::size_t seen = 0;
  template <class T> p::Preserved run(ir::LinearIR<T>& lir, p::PassContext<T>&) const {
    seen = lir.size();
    return p::Preserved::all;
  }
};
} // namespace

static_assert(std::is_same_v<decltype(p::MarkLoops{} | p::FuseLoops{}),
                             p::Pipeline<p::MarkLoops, p::FuseLoops>>);
static_assert(std::is_same_v<decltype(p::Pipeline<p::MarkLoops>{} |
                                      p::Pipeline<p::FuseLoops, p::InitLoops>{}),
                             p::Pipeline<p::MarkLoops, p::FuseLoops, p::InitLoops>>);
static_assert(std::is_same_v<p::insert_after_t<p::Pipeline<p::MarkLoops, p::InitLoops>,
                                               p::MarkLoops, p::FuseLoops>,
                             p::Pipeline<p::MarkLoops, p::FuseLoops, p::InitLoops>>);
static_assert(std::is_same_v<p::insert_before_t<p::Pipeline<p::MarkLoops, p::InitLoops>,
                                                p::InitLoops, p::FuseLoops>,
                             p::Pipeline<p::MarkLoops, p::FuseLoops, p::InitLoops>>);
static_assert(
    std::is_same_v<p::remove_t<p::Pipeline<p::MarkLoops, p::FuseLoops, p::InitLoops>, p::FuseLoops>,
                   p::Pipeline<p::MarkLoops, p::InitLoops>>);
static_assert(std::is_same_v<
              p::replace_t<p::Pipeline<p::MarkLoops, p::FuseLoops>, p::FuseLoops, p::InitLoops>,
              p::Pipeline<p::MarkLoops, p::InitLoops>>);

TEST_CASE("a user pass inserted after InsertLoops runs there and the kernel still works") {
  using Mine =
      p::Pipeline<p::insert_after_t<p::DefaultControlFlow, p::InsertLoops, CountExpressions>,
                  p::DefaultPreparation>;
  ir::Graph<x64::Traits> g;
  auto x = g.parameter(ElementType::f32, {20});
  g.result(g.relu(x));
  std::vector<std::string_view> trace;
  auto k = compile<x64::Traits, Mine>(g, {.trace = &trace});
  auto it = std::find(trace.begin(), trace.end(), "InsertLoops");
  REQUIRE(it != trace.end());
  CHECK(*(it + 1) == "CountExpressions");
  CHECK(CountExpressions::seen > 0);
  std::vector<double> v(20);
  for (int i = 0; i < 20; ++i) v[std::size_t(i)] = i - 10;
  auto out = k.run({reference::Tensor::from_values(ElementType::f32, {20}, v)});
  for (int i = 0; i < 20; ++i) CHECK(out[0].at(std::size_t(i)) == std::max(0, i - 10));
}
