// SPDX-License-Identifier: Apache-2.0
// Profiling aids: perf map entries (SNIPPETS_JIT_PROFILE=perf) and the performance counters
// (cycles: RDTSC around the kernel and each loop; chrono: steady_clock around each call).
#include <doctest/doctest.h>
#include <unistd.h>
#include <x86intrin.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "snippets/compile.hpp"
#include "snippets/debug/perf_counters.hpp"
#include "snippets/program/program.hpp"
#include "snippets/reference/interpreter.hpp"

using namespace snippets;
constexpr auto f32 = ElementType::f32;

namespace {

ir::Graph<x64::Traits> scale_bias(Dim rows, Dim cols) {
  ir::Graph<x64::Traits> g;
  auto x = g.parameter(f32, {rows, cols}, "x");
  auto b = g.parameter(f32, {rows, 1}, "b");
  g.result(g.relu(g.add(g.multiply(x, g.scalar(f32, 0.5)), b)), "y");
  return g;
}

std::vector<reference::Tensor> inputs(Dim rows, Dim cols) {
  std::vector<double> x(static_cast<std::size_t>(rows * cols)), b(static_cast<std::size_t>(rows));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = double(i % 97) - 40;
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = double(i % 7) - 3;
  return {reference::Tensor::from_values(f32, {rows, cols}, x),
          reference::Tensor::from_values(f32, {rows, 1}, b)};
}

/// The perf map lines naming `symbol`.
std::vector<std::string> perf_map_lines(const std::string& symbol) {
  std::ifstream f(debug::perf_map_path());
  std::vector<std::string> out;
  for (std::string line; std::getline(f, line);)
    if (line.size() > symbol.size() && line.ends_with(" " + symbol)) out.push_back(line);
  return out;
}

/// Time-stamp-counter ticks per nanosecond, measured against steady_clock.
double tsc_per_ns() {
  const auto t0 = std::chrono::steady_clock::now();
  const auto c0 = __rdtsc();
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  const auto c1 = __rdtsc();
  const auto ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0);
  return double(c1 - c0) / ns.count();
}

} // namespace

TEST_CASE("debug perf map: one '<start> <size> <name>' line per kernel variant") {
  const std::string name = "perf_map_test_" + std::to_string(::getpid());
  ir::Graph<x64::Traits> g;
  g.result(g.relu(g.parameter(f32, {64, 64})));
  auto k = compile(g, {.streaming_threshold_bytes = 1, .name = name, .debug = {.perf_map = true}});
  REQUIRE(k.has_streaming_variant());
  for (const bool nt : {false, true}) {
    const auto lines = perf_map_lines("snippets:" + name + (nt ? ":nt" : ""));
    REQUIRE(lines.size() == 1);
    // "<start-hex> <size-hex> <name>", lowercase hex, single spaces
    const std::string& line = lines[0];
    const std::size_t sp1 = line.find(' '), sp2 = line.find(' ', sp1 + 1);
    REQUIRE(sp2 != std::string::npos);
    const std::string start = line.substr(0, sp1), size = line.substr(sp1 + 1, sp2 - sp1 - 1);
    for (const std::string& hex : {start, size}) {
      REQUIRE_FALSE(hex.empty());
      CHECK(hex.find_first_not_of("0123456789abcdef") == std::string::npos);
    }
    CHECK(line.substr(sp2 + 1) == "snippets:" + name + (nt ? ":nt" : ""));
    const auto& code = k.kernel_code(nt);
    CHECK(std::stoull(start, nullptr, 16) == reinterpret_cast<std::uintptr_t>(code.bytes.data()));
    CHECK(std::stoull(size, nullptr, 16) == code.text_bytes);
  }
  // off: no line
  compile(g, {.name = name + "_off", .debug = {.perf_map = false}});
  CHECK(perf_map_lines("snippets:" + name + "_off").empty());
  if (!std::getenv("SNIPPETS_JIT_PROFILE")) std::remove(debug::perf_map_path().c_str());
}

TEST_CASE("debug counters (cycles): loops add up to the kernel, the kernel to the clock") {
  const Dim rows = 64, cols = 20000; // ~5 MB per tensor: long enough to time
  const auto g = scale_bias(rows, cols);
  auto k = compile(g, {.name = "timed", .debug = {.counters = debug::Counters::cycles}});
  const auto in = inputs(rows, cols);
  std::vector<reference::Tensor> out;
  for (int i = 0; i < 4; ++i) out = k.run(in, {.threads = 2});
  // the instrumented kernel still computes the right thing
  const auto ref = reference::evaluate(g, in);
  int bad = 0;
  for (std::size_t i = 0; i < out[0].size(); ++i) bad += out[0].at(i) != ref[0].at(i);
  CHECK(bad == 0);

  const auto r = debug::counter_report(k);
  CHECK(r.mode == debug::Counters::cycles);
  CHECK(r.runs == 4);
  CHECK(r.calls == 8); // two chunks per run
  REQUIRE(r.regions.size() >= 3);
  CHECK(r.regions[0].name == "kernel");
  CHECK(r.regions[0].entries == r.calls);
  // each region's children fit in it, and the loops are most of the kernel
  for (std::size_t p = 0; p < r.regions.size(); ++p) {
    std::uint64_t children = 0;
    for (const auto& c : r.regions)
      if (c.parent == int(p)) children += c.ticks;
    CAPTURE(r.regions[p].name);
    CHECK(children <= r.regions[p].ticks);
    if (p == 0) CHECK(children >= r.regions[0].ticks * 8 / 10);
  }
  // the row loop is entered once per call, its inner loops once per row
  CHECK(r.regions[1].name.starts_with("loop #0 dim 0 work runtime"));
  CHECK(r.regions[1].entries == r.calls);
  CHECK(r.regions[2].entries == std::uint64_t(rows) * 4);
  // kernel ticks, in nanoseconds, are the time the calls took (within 30%, noisy machine)
  const double kernel_ns = double(r.regions[0].ticks) / tsc_per_ns();
  CHECK(kernel_ns <= double(r.call_ns) * 1.3);
  CHECK(kernel_ns >= double(r.call_ns) * 0.7);
  CHECK(r.call_ns <= 2 * r.run_ns + 1000000); // at most two threads busy during each run

  std::ostringstream os;
  debug::print_counters(os, k);
  CHECK(os.str().starts_with("kernel 'timed' ("));
  CHECK(os.str().find("counters cycles): 4 runs, wall ") != std::string::npos);
  CHECK(os.str().find("\n  kernel ") != std::string::npos);
  CHECK(os.str().find("\n    loop #0 dim 0 work runtime inc 1 ") != std::string::npos);

  debug::reset_counters(k);
  CHECK(debug::counter_report(k).runs == 0);
  CHECK(debug::counter_report(k).regions[0].ticks == 0);
}

TEST_CASE("debug counters (chrono): calls and runs are timed, no region inside the kernel") {
  const auto g = scale_bias(16, 1000);
  auto k = compile(g, {.name = "clocked", .debug = {.counters = debug::Counters::chrono}});
  const auto in = inputs(16, 1000);
  std::vector<reference::Tensor> out;
  for (int i = 0; i < 3; ++i) out = k.run(in, {.threads = 2});
  const auto r = debug::counter_report(k);
  CHECK(r.mode == debug::Counters::chrono);
  CHECK(r.runs == 3);
  CHECK(r.calls >= 3);
  CHECK(r.regions.empty());
  CHECK(r.call_ns > 0);
  CHECK(r.run_ns > 0);
  std::ostringstream os;
  debug::print_counters(os, k);
  CHECK(os.str().find("(avx") != std::string::npos);
  CHECK(os.str().find("counters chrono): 3 runs") != std::string::npos);
}

TEST_CASE("debug counters: off by default, and the report says how to switch them on") {
  auto k = compile(scale_bias(2, 8));
  k.run(inputs(2, 8));
  const auto r = debug::counter_report(k);
  CHECK(r.mode == debug::Counters::off);
  CHECK(r.runs == 0);
  std::ostringstream os;
  debug::print_counters(os, k);
  CHECK(os.str().find("counters off: set CompileOptions::debug.counters or "
                      "SNIPPETS_PERF_COUNTERS") != std::string::npos);
}

TEST_CASE("debug counters: a Program names each kernel after its Subgraph") {
  ir::Graph<x64::Traits> g;
  auto x = g.parameter(f32, {4, 64}, "x");
  auto mm = g.make(ir::Opaque{"Shuffle", {{f32, {4, 64}}}}, {g.relu(x)}, "shuffle")[0];
  g.result(g.abs(g.add(mm, x)), "y");
  ProgramOptions<x64::Traits> opt;
  opt.compile.debug.counters = debug::Counters::cycles;
  opt.opaque["Shuffle"] = [](std::span<const ConstTensorView> in, std::span<const TensorView> out) {
    std::memcpy(out[0].data, in[0].data, 4 * 64 * sizeof(float));
  };
  Program<x64::Traits> program(g, opt);
  const std::vector<reference::Tensor> in = {reference::Tensor::from_values(f32, {4, 64}, {-1.0})};
  program.run(in);
  std::ostringstream os;
  debug::print_counters(os, program);
  const std::string text = os.str();
  int kernels = 0;
  for (const auto& step : program.steps()) {
    if (!step.kernel) continue;
    ++kernels;
    const std::string name(program.graph().node(step.node).name);
    CHECK(step.kernel->name() == name);
    CHECK(text.find("kernel '" + name + "' (") != std::string::npos);
  }
  CHECK(kernels == 2);
}
