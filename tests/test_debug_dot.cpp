// SPDX-License-Identifier: Apache-2.0
// debug/dot.hpp and debug/dot_graph.hpp: Graphviz DOT of a Linear IR (control flow, data flow)
// and of a tokenized model (Subgraphs as clusters), and the agreement of the Boost writer with
// the dependency-free one compile()'s dumps use.
#include <doctest/doctest.h>

#include "snippets/compile.hpp"
#include "snippets/debug/dot.hpp"
#include "snippets/passes/tokenize.hpp"

using namespace snippets;
constexpr auto f32 = ElementType::f32;

namespace {
/// y = x + b[row] on [2,20], AVX2, no unrolling: two inner loops (main and tail) in a row loop.
ir::LinearIR<x64::Traits> row_bias() {
  ir::Graph<x64::Traits> g;
  auto x = g.parameter(f32, {2, 20}, "x");
  auto b = g.parameter(f32, {2, 1}, "b");
  g.result(g.add(x, b), "y");
  return lower(g, x64::Isa::avx2, {.unroll = 1});
}
} // namespace

TEST_CASE("debug DOT: the control-flow graph of a Linear IR matches the golden text") {
  auto lir = row_bias();
  CHECK(debug::to_dot(lir, debug::LirGraphKind::control_flow) == R"DOT(digraph G {
node [shape="box", fontname="monospace", fontsize="10"];
edge [fontname="monospace", fontsize="9"];
0[label="0: Parameter 'x' -> [2,20]", shape="ellipse"];
1[label="1: Parameter 'b' -> [2,1]", shape="ellipse"];
2[label="2: LoopBegin #0 -> [] g0", style="filled", fillcolor="lightgrey"];
3[label="3: BroadcastLoad 'b' (%1) -> [2,20] v0", color="blue"];
4[label="4: LoopBegin #1 -> [] g1", style="filled", fillcolor="lightgrey"];
5[label="5: Load x8 'x' (%0) -> [2,20] v1", color="blue"];
6[label="6: Add 'Add_2' (%5 v1, %3 v0) -> [2,20] v1"];
7[label="7: Store x8 'y' (%6 v1) -> [2,20]", color="blue"];
8[label="8: LoopEnd #1 (%4 g1)", style="filled", fillcolor="lightgrey"];
9[label="9: LoopBegin #2 -> [] g1", style="filled", fillcolor="lightgrey"];
10[label="10: Load x4 'x' (%0) -> [2,20] v1", color="blue"];
11[label="11: Add 'Add_2' (%10 v1, %3 v0) -> [2,20] v1"];
12[label="12: Store x4 'y' (%11 v1) -> [2,20]", color="blue"];
13[label="13: LoopEnd #2 (%9 g1)", style="filled", fillcolor="lightgrey"];
14[label="14: LoopEnd #0 (%2 g0)", style="filled", fillcolor="lightgrey"];
15[label="15: Result 'y' (%7)", shape="ellipse"];
0->1 ;
1->2 ;
2->3 ;
2->15 [label="skip #0", style="dotted"];
3->4 ;
4->5 ;
5->6 ;
6->7 ;
7->8 ;
8->9 ;
8->5 [label="repeat #1", style="dashed"];
9->10 ;
10->11 ;
11->12 ;
12->13 ;
13->14 ;
14->15 ;
14->3 [label="repeat #0", style="dashed"];
}
)DOT");
}

TEST_CASE("debug DOT: the data-flow graph leaves out loop markers and labels registers") {
  auto lir = row_bias();
  CHECK(debug::to_dot(lir, debug::LirGraphKind::data_flow) == R"DOT(digraph G {
node [shape="box", fontname="monospace", fontsize="10"];
edge [fontname="monospace", fontsize="9"];
0[label="0: Parameter 'x' -> [2,20]", shape="ellipse"];
1[label="1: Parameter 'b' -> [2,1]", shape="ellipse"];
2[label="3: BroadcastLoad 'b' (%1) -> [2,20] v0", color="blue", tooltip="loops #0"];
3[label="5: Load x8 'x' (%0) -> [2,20] v1", color="blue", tooltip="loops #0,#1"];
4[label="6: Add 'Add_2' (%5 v1, %3 v0) -> [2,20] v1", tooltip="loops #0,#1"];
5[label="7: Store x8 'y' (%6 v1) -> [2,20]", color="blue", tooltip="loops #0,#1"];
6[label="10: Load x4 'x' (%0) -> [2,20] v1", color="blue", tooltip="loops #0,#2"];
7[label="11: Add 'Add_2' (%10 v1, %3 v0) -> [2,20] v1", tooltip="loops #0,#2"];
8[label="12: Store x4 'y' (%11 v1) -> [2,20]", color="blue", tooltip="loops #0,#2"];
9[label="15: Result 'y' (%7)", shape="ellipse"];
0->3 [label="[2,20]"];
0->6 [label="[2,20]"];
1->2 [label="[2,1]"];
2->4 [label="v0"];
2->7 [label="v0"];
3->4 [label="v1"];
4->5 [label="v1"];
5->9 [label="[2,20]"];
6->7 [label="v1"];
7->8 [label="v1"];
}
)DOT");
}

TEST_CASE("debug DOT: write_graphviz and the dump writer agree byte for byte") {
  ir::Graph<x64::Traits> g;
  auto a = g.parameter(f32, {3, 17}, "a \"quoted\"");
  auto b = g.parameter(f32, {3, 1}, "b\\slash");
  g.result(g.relu(g.add(g.multiply(a, b), g.scalar(f32, 1.5))), "y");
  for (auto isa : {x64::Isa::avx2, x64::Isa::avx512}) {
    auto lir = lower(g, isa);
    for (auto kind : {debug::LirGraphKind::control_flow, debug::LirGraphKind::data_flow}) {
      const auto graph = debug::lir_graph(lir, kind);
      CHECK(debug::to_dot(graph) == debug::to_dot_text(graph));
    }
  }
  const auto body = debug::body_graph(g);
  CHECK(debug::to_dot(body) == debug::to_dot_text(body));
  CHECK(debug::to_dot_text(body).find(R"(label="%0 Parameter 'a \"quoted\"'\nf32[3,17]")") !=
        std::string::npos);
}

TEST_CASE("debug DOT: a tokenized model draws each Subgraph as a cluster of its ops") {
  ir::Graph<x64::Traits> g;
  auto a = g.parameter(f32, {3, 17}, "a");
  auto b = g.parameter(f32, {3, 1}, "b");
  auto s = g.relu(g.add(g.multiply(a, b), g.scalar(f32, 1.5)));
  auto mm = g.make(ir::Opaque{"MatMul", {{f32, {3, 17}}}}, {s}, "mm")[0];
  g.result(g.abs(g.add(mm, a)), "y");
  const auto t = passes::tokenize(g);
  const auto graph = debug::model_graph(t);
  const std::string dot = debug::to_dot(t);
  CHECK(dot == debug::to_dot_text(graph));
  REQUIRE(graph.clusters.size() == 2);
  // which ops went where: each cluster lists its vertices, whose labels name the absorbed ops
  auto labels = [&](std::size_t c) {
    std::string all;
    for (auto v : graph.clusters[c].vertices) all += graph.vertices[v].label + "|";
    return all;
  };
  CHECK(dot.find("subgraph cluster0 {\nlabel=\"Subgraph 'Relu_5' (%2): Multiply_3 Add_4 "
                 "Relu_5\";\nstyle=\"filled\";\nfillcolor=\"lightyellow\";\n2;\n3;\n4;\n5;\n6;\n7;"
                 "\n8;\n}\n") != std::string::npos);
  for (const char* op : {"in0: Parameter 'a'", "in1: Parameter 'b'", "Multiply 'Multiply_3'",
                         "Add 'Add_4'", "Relu 'Relu_5'", "out0: Result 'Relu_5'"})
    CHECK(labels(0).find(op) != std::string::npos);
  CHECK(labels(0).find("Abs") == std::string::npos);
  CHECK(labels(1).find("Add 'Add_7'") != std::string::npos);
  CHECK(labels(1).find("Abs 'Abs_8'") != std::string::npos);
  // the Opaque stays outside; model edges leave and enter the clusters at their ports
  CHECK(dot.find("9[label=\"%3 Opaque 'mm' {type_name=MatMul}\\nf32[3,17]\"];") !=
        std::string::npos);
  CHECK(dot.find("8->9 [label=\"%2:0\"];") != std::string::npos);  // out0 of cluster0 -> mm
  CHECK(dot.find("9->10 [label=\"%3:0\"];") != std::string::npos); // mm -> in0 of cluster1
  CHECK(dot.find("0->11 [label=\"%0:0\"];") != std::string::npos); // a -> in1 of cluster1
}
