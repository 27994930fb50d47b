// SPDX-License-Identifier: Apache-2.0
// IR dumps around passes (CompileOptions::debug.dump, SNIPPETS_DUMP_LIR): which files, in
// which order, with which contents; the Pipeline hook they hang on; unknown names and I/O
// failures.
#include <doctest/doctest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "error_id.hpp"
#include "snippets/compile.hpp"
#include "snippets/ir/lir_printer.hpp"
#include "snippets/ir/printer.hpp"

using namespace snippets;
namespace fs = std::filesystem;

namespace {

ir::Graph<x64::Traits> relu_fma() {
  ir::Graph<x64::Traits> g;
  auto a = g.parameter(ElementType::f32, {3, 17}, "a");
  auto b = g.parameter(ElementType::f32, {3, 1}, "b");
  g.result(g.relu(g.add(g.multiply(a, b), g.scalar(ElementType::f32, 1.5))), "y");
  return g;
}

/// A fresh directory under /tmp, removed at the end of the test.
struct TempDir {
  fs::path path;
  TempDir() {
    char tmpl[] = "/tmp/snippets_debug_XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~TempDir() { fs::remove_all(path); }
  std::vector<std::string> files() const {
    std::vector<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(path))
      if (e.is_regular_file()) out.push_back(fs::relative(e.path(), path).string());
    std::sort(out.begin(), out.end());
    return out;
  }
  std::string read(const std::string& name) const {
    std::ifstream f(path / name);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
  }
};

std::string nn(std::size_t i) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%02zu", i);
  return buf;
}

} // namespace

TEST_CASE("debug dumps: files after the chosen passes, numbered by their place in the trace") {
  TempDir tmp;
  const auto g = relu_fma();
  std::vector<std::string_view> trace;
  CompileOptions opt{.isa = x64::Isa::avx2, .trace = &trace, .name = "relu fma"};
  opt.debug.dump = debug::parse_dump_options(
      "passes=InsertLoops,AssignRegisters,Body,DataFlow formats=text,dot dir=" +
      (tmp.path / "sub/dir").string());
  compile(g, opt);
  const auto pos = [&](std::string_view p) {
    return nn(std::size_t(std::find(trace.begin(), trace.end(), p) - trace.begin()) + 1);
  };
  const std::size_t data_flow = std::size_t(
      std::find(trace.begin(), trace.end(), "OptimizeDomain") - trace.begin()); // LIR starts
  const std::string loops = "sub/dir/relu_fma_" + pos("InsertLoops") + "_InsertLoops";
  const std::string regs = "sub/dir/relu_fma_" + pos("AssignRegisters") + "_AssignRegisters";
  std::vector<std::string> expected = {"sub/dir/relu_fma_00_Body.dot",
                                       "sub/dir/relu_fma_00_Body.txt",
                                       "sub/dir/relu_fma_" + nn(data_flow) + "_DataFlow.dot",
                                       "sub/dir/relu_fma_" + nn(data_flow) + "_DataFlow.txt",
                                       loops + ".cfg.dot",
                                       loops + ".dfg.dot",
                                       loops + ".txt",
                                       regs + ".cfg.dot",
                                       regs + ".dfg.dot",
                                       regs + ".txt"};
  std::sort(expected.begin(), expected.end());
  CHECK(tmp.files() == expected);
  CHECK(tmp.read("sub/dir/relu_fma_00_Body.txt") == ir::to_string(g));
  CHECK(tmp.read(loops + ".txt").starts_with("domain [3,17] | args 2 in 1 out"));
  CHECK(tmp.read(loops + ".txt").find(" v0") == std::string::npos); // no registers yet
  CHECK(tmp.read(regs + ".txt").find(" v0") != std::string::npos);
  CHECK(tmp.read(regs + ".cfg.dot").starts_with("digraph G {\n"));
  CHECK(tmp.read(regs + ".dfg.dot").find("LoopBegin") == std::string::npos);
}

TEST_CASE("debug dumps: the dump after the last pass is the detailed text of lower()") {
  TempDir tmp;
  const auto g = relu_fma();
  std::vector<std::string_view> trace;
  CompileOptions opt{.trace = &trace, .name = "k"};
  opt.debug.dump = debug::DumpOptions{.passes = {"all"}, .dir = tmp.path.string()};
  auto lir = lower(g, x64::Isa::avx2, opt);
  const std::string last = "k_" + nn(trace.size()) + "_" + std::string(trace.back()) + ".txt";
  CHECK(tmp.read(last) == ir::to_string(lir, {.detailed = true}));
  // every Linear IR pass has a text dump, plus Body, DataFlow and Pipeline; no DOT unless asked
  const auto lir_passes = trace.end() - std::find(trace.begin(), trace.end(), "OptimizeDomain");
  CHECK(tmp.files().size() == std::size_t(lir_passes) + 3);
  CHECK(tmp.read("k_00_Pipeline.txt") ==
        "data flow:\n" + passes::describe<passes::DataFlowPipeline<passes::DefaultDataFlow>>() +
            "lowering:\n" + passes::describe<passes::DefaultLowering>());
}

TEST_CASE("debug dumps: nothing is written when no dump is asked for") {
  TempDir tmp;
  CompileOptions opt;
  opt.debug.dump = debug::DumpOptions{.passes = {}, .dir = tmp.path.string()};
  compile(relu_fma(), opt);
  CHECK(tmp.files().empty());
}

TEST_CASE("debug dumps: a pass name that never ran is reported on stderr, once") {
  TempDir tmp;
  CompileOptions opt{.name = "k"};
  opt.debug.dump = debug::DumpOptions{.passes = {"InsertLoopz"}, .dir = tmp.path.string()};
  std::ostringstream captured;
  auto* old = std::cerr.rdbuf(captured.rdbuf());
  compile(relu_fma(), opt);
  compile(relu_fma(), opt);
  std::cerr.rdbuf(old);
  const std::string err = captured.str();
  CHECK(err.find("names pass 'InsertLoopz' but no pass of that name ran") != std::string::npos);
  CHECK(err.find("InsertLoops") != std::string::npos); // the names that did run
  CHECK(err.find("InsertLoopz") == err.rfind("InsertLoopz"));
  CHECK(tmp.files().empty());
}

TEST_CASE("debug dumps: an unwritable directory throws dump_failed") {
  CompileOptions opt;
  opt.debug.dump = debug::DumpOptions{.passes = {"Body"}, .dir = "/proc/snippets/no"};
  CHECK(error_id([&] { compile(relu_fma(), opt); }) == "snippets.debug.dump_failed");
}

TEST_CASE("debug hook: Pipeline calls after_pass after every leaf pass, in trace order") {
  auto lir = passes::convert_to_linear_ir(relu_fma());
  passes::PassContext<x64::Traits> ctx;
  std::vector<std::string_view> seen;
  std::vector<std::size_t> sizes;
  ctx.after_pass = [&](std::string_view pass, ir::LinearIR<x64::Traits>& l) {
    seen.push_back(pass);
    sizes.push_back(l.size());
  };
  passes::Pipeline<passes::Pipeline<passes::OptimizeDomain, passes::MarkLoops>,
                   passes::InsertBuffers, passes::InsertLoadStore>{}
      .run(lir, ctx);
  CHECK(seen == ctx.trace);
  CHECK(seen == std::vector<std::string_view>{"OptimizeDomain", "MarkLoops", "InsertBuffers",
                                              "InsertLoadStore"});
  CHECK(sizes.back() > sizes.front()); // InsertLoadStore added expressions before the call
}
