// SPDX-License-Identifier: Apache-2.0
// tests/test_bad_input.cpp: error catalogue cases that need their own process or many
// compilations (docs/errors.md lists every id and the test that triggers it):
//  - SNIPPETS_MAX_ISA, SNIPPETS_KERNEL_CACHE_CAPACITY and the debugging variables (read once
//    per process): bad values, good ones that turn their tools on, and a capped host that
//    refuses a higher ISA, checked by re-running this binary with the variable set;
//  - empty tensors through whole-model execution;
//  - compiling thousands of kernels leaves no mapping behind (every code buffer is released).
#include <doctest/doctest.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "error_id.hpp"
#include "jit_test_util.hpp"

extern char** environ;

using namespace snippets;
using namespace snippets::jit_test;

namespace {

/// Runs this test binary on one test case with `env` added; returns its exit status.
int run_child(const std::string& test_case, const std::vector<std::string>& env) {
  std::vector<std::string> vars(env);
  vars.emplace_back("SNIPPETS_TEST_CHILD=1");
  for (char** e = environ; *e; ++e)
    if (std::string(*e).rfind("SNIPPETS_MAX_ISA=", 0) != 0) vars.emplace_back(*e);
  std::vector<char*> envp;
  for (auto& v : vars) envp.push_back(v.data());
  envp.push_back(nullptr);
  std::string exe = "/proc/self/exe", filter = "-tc=" + test_case, quiet = "--no-version=true";
  char* argv[] = {exe.data(), filter.data(), quiet.data(), nullptr};
  pid_t pid = 0;
  if (posix_spawn(&pid, exe.c_str(), nullptr, nullptr, argv, envp.data()) != 0) return -1;
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

bool in_child() { return std::getenv("SNIPPETS_TEST_CHILD") != nullptr; }

Graph small_graph() {
  Graph g;
  g.result(g.relu(g.parameter(f32, {16}, "x")), "y");
  return g;
}

std::size_t mapping_count() {
  std::ifstream maps("/proc/self/maps");
  std::size_t n = 0;
  for (std::string line; std::getline(maps, line);) ++n;
  return n;
}

} // namespace

TEST_CASE("bad input child: SNIPPETS_MAX_ISA names no ISA") {
  if (!in_child()) return; // runs only when re-executed by the test below
  CHECK(error_id([] { compile(small_graph()); }) == "snippets.isa.bad_env");
  // a Program raises it too: a malformed variable is never a reason to fall back
  CHECK(error_id([] { const Program<> p(small_graph()); }) == "snippets.isa.bad_env");
}

TEST_CASE("bad input child: a host capped at AVX2 refuses AVX-512") {
  if (!in_child()) return;
  CHECK(x64::best_host_isa() == x64::Isa::avx2);
  CHECK_FALSE(x64::host_supports(x64::Isa::avx512));
  CHECK(error_id([] { compile(small_graph(), {.isa = x64::Isa::avx512}); }) ==
        "snippets.isa.unsupported_host");
  CHECK(compile(small_graph()).signature().isa == "avx2");
  // emitted for inspection, refused at run time
  const CompiledKernel k = compile(small_graph(), {.isa = x64::Isa::avx512, .emit_only = true});
  CHECK_FALSE(k.signature().runnable);
  CHECK(error_id([&] { k.run({make_tensor({16}, 1)}); }) == "snippets.run.emit_only");
}

TEST_CASE("bad input: SNIPPETS_MAX_ISA is checked and honoured (in child processes)") {
  if (in_child()) return;
  CHECK(run_child("bad input child: SNIPPETS_MAX_ISA names no ISA", {"SNIPPETS_MAX_ISA=avx1024"}) ==
        0);
  CHECK(run_child("bad input child: SNIPPETS_MAX_ISA names no ISA", {"SNIPPETS_MAX_ISA=sse"}) == 0);
  if (x64::cpu_supports(x64::Isa::avx512))
    CHECK(run_child("bad input child: a host capped at AVX2 refuses AVX-512",
                    {"SNIPPETS_MAX_ISA=avx2"}) == 0);
  else
    test::skip_on_host("avx512 (capping it needs a host that has it)");
}

TEST_CASE("bad input child: a debugging variable with an unknown value") {
  if (!in_child()) return;
  CHECK(error_id([] { compile(small_graph()); }) == "snippets.debug.bad_env");
}

TEST_CASE("bad input: debugging variables are checked when the first kernel compiles") {
  if (in_child()) return;
  CHECK(run_child("bad input child: a debugging variable with an unknown value",
                  {"SNIPPETS_PERF_COUNTERS=instructions"}) == 0);
  CHECK(run_child("bad input child: a debugging variable with an unknown value",
                  {"SNIPPETS_SEGFAULT_DETECTOR=maybe"}) == 0);
}

TEST_CASE("bad input child: a JIT dump directory that cannot be written") {
  if (!in_child()) return;
  CHECK(error_id([] { compile(small_graph()); }) == "snippets.debug.dump_failed");
  CHECK(error_id([] { const Program<> p(small_graph(), {.cache = nullptr}); }) ==
        "snippets.debug.dump_failed");
}

TEST_CASE("bad input: an unwritable SNIPPETS_JIT_DUMP is an error in compile() and Program "
          "alike (in a child process)") {
  if (in_child()) return;
  CHECK(run_child("bad input child: a JIT dump directory that cannot be written",
                  {"SNIPPETS_JIT_DUMP=/proc/self/no-such-dir"}) == 0);
}

namespace {
/// The text of a file ("" when it does not exist).
std::string file_text(const std::string& path) {
  std::ifstream f(path);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}
} // namespace

TEST_CASE("bad input child: the debugging variables turn their tools on") {
  if (!in_child()) return;
  const std::string dir = std::getenv("SNIPPETS_TEST_DIR");
  const CompiledKernel k = compile(small_graph(), {.name = "from_env"});
  // SNIPPETS_JIT_DUMP: the code and its disassembly
  CHECK(file_text(dir + "/code/from_env.bin").size() == k.code().size());
  CHECK(file_text(dir + "/code/from_env.asm").find("; kernel 'from_env'") != std::string::npos);
  // SNIPPETS_DUMP_LIR: the chosen pass, nothing else
  CHECK(file_text(dir + "/lir/from_env_00_Body.txt").empty());
  bool found = false;
  for (int i = 0; i < 40 && !found; ++i) {
    std::string n = std::to_string(i);
    if (n.size() < 2) n.insert(n.begin(), '0');
    found = !file_text(dir + "/lir/from_env_" + n + "_InsertLoops.txt").empty();
  }
  CHECK(found);
  // SNIPPETS_JIT_PROFILE=perf: a perf map entry naming the kernel
  CHECK(file_text(debug::perf_map_path()).find("snippets:from_env") != std::string::npos);
  std::remove(debug::perf_map_path().c_str());
}

TEST_CASE("bad input: SNIPPETS_JIT_DUMP, SNIPPETS_DUMP_LIR and SNIPPETS_JIT_PROFILE work through "
          "the environment (in a child process)") {
  if (in_child()) return;
  char tmpl[] = "/tmp/snippets-env-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  const std::string dir = tmpl;
  CHECK(run_child("bad input child: the debugging variables turn their tools on",
                  {"SNIPPETS_TEST_DIR=" + dir, "SNIPPETS_JIT_DUMP=" + dir + "/code",
                   "SNIPPETS_DUMP_LIR=passes=InsertLoops dir=" + dir + "/lir formats=text",
                   "SNIPPETS_JIT_PROFILE=perf"}) == 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("bad input child: SNIPPETS_KERNEL_CACHE_CAPACITY is not a count") {
  if (!in_child()) return;
  CHECK(error_id([] { default_kernel_cache(); }) == "snippets.cache.bad_env");
  CHECK(error_id([] { const Program<> p(small_graph()); }) == "snippets.cache.bad_env");
}

TEST_CASE("bad input: the kernel cache's capacity variable is checked (in a child process)") {
  if (in_child()) return;
  CHECK(run_child("bad input child: SNIPPETS_KERNEL_CACHE_CAPACITY is not a count",
                  {"SNIPPETS_KERNEL_CACHE_CAPACITY=lots"}) == 0);
}

TEST_CASE("bad input: empty tensors run through a Program and give empty outputs") {
  Graph g;
  const auto x = g.parameter(f32, {0, 7}, "x");
  const auto b = g.parameter(f32, {7}, "b");
  g.result(g.relu(g.add(x, b)), "y");
  g.result(g.multiply(b, b), "b2");
  const Program<> program(g);
  const std::vector<Tensor> in{Tensor(f32, {0, 7}), make_tensor({7}, 1)};
  const auto got = program.run(in);
  REQUIRE(got.size() == 2);
  CHECK(got[0].shape() == Shape{0, 7});
  CHECK(got[0].size() == 0);
  CHECK(compare(got[1], reference::evaluate(g, in)[1], exact) == "");
  // null data is fine for an empty tensor, and only there
  std::vector<ConstTensorView> views{{f32, {0, 7}, nullptr}, {f32, {7}, in[1].data()}};
  Tensor b2(f32, {7});
  const TensorView outs[] = {{f32, {0, 7}, nullptr}, {f32, {7}, b2.data()}};
  auto ctx = program.make_context();
  program.run(ctx, views, outs);
  CHECK(compare(b2, got[1], exact) == "");
}

TEST_CASE("bad input: thousands of compilations release their code (no mapping is left)") {
  const Graph g = small_graph();
  for (int i = 0; i < 50; ++i) compile(g); // warm up allocators and thread pools
  const std::size_t before = mapping_count();
  for (int i = 0; i < 3000; ++i) {
    const CompiledKernel k = compile(g, {.isa = i % 2 ? x64::Isa::avx2 : x64::best_host_isa()});
    CHECK_FALSE(k.code().empty());
  }
  const std::size_t after = mapping_count();
  INFO("mappings before " << before << ", after " << after);
  CHECK(after <= before + 8); // a leak would leave ~3000 code mappings
}
