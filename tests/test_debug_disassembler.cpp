// SPDX-License-Identifier: Apache-2.0
// debug/disassembler.hpp and the code map: kernels as text (Zydis when the test binary links
// snippets::zydis, raw bytes otherwise), each expression's code under its LIR line; the code map
// and SNIPPETS_JIT_DUMP files; debug options that must not change a single instruction.
#include <doctest/doctest.h>
#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "host_skips.hpp"
#include "snippets/compile.hpp"
#include "snippets/debug/disassembler.hpp"

using namespace snippets;
constexpr auto f32 = ElementType::f32;

namespace {
ir::Graph<x64::Traits> relu_fma() {
  ir::Graph<x64::Traits> g;
  auto a = g.parameter(f32, {3, 17}, "a");
  auto b = g.parameter(f32, {3, 1}, "b");
  g.result(g.relu(g.add(g.multiply(a, b), g.scalar(f32, 1.5))), "y");
  return g;
}

std::vector<std::uint8_t> bytes_of(const CompiledKernel& k) {
  return {k.code().begin(), k.code().end()};
}

/// The bytes of the hex columns of a raw (undecoded) listing, in order.
std::vector<std::uint8_t> parse_raw_listing(const std::string& text) {
  std::vector<std::uint8_t> out;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == ';') continue;
    std::istringstream cols(line.substr(line.find("  ") + 2));
    std::string byte;
    while (cols >> byte) out.push_back(static_cast<std::uint8_t>(std::stoul(byte, nullptr, 16)));
  }
  return out;
}
} // namespace

TEST_CASE("debug code map: records cover the code in order and name every expression") {
  auto k = compile(relu_fma(), {.isa = x64::Isa::avx2, .name = "map", .debug = {.code_map = true}});
  const debug::CodeMap* map = k.kernel_code().map.get();
  REQUIRE(map);
  CHECK(map->records.front().text == "prologue");
  // after the return: the loads of the constants kept in registers, jumped to from the prologue
  REQUIRE(map->records.size() >= 2);
  CHECK(map->records[map->records.size() - 2].text == "epilogue");
  CHECK(map->records.back().text == "constants");
  CHECK(map->records.back().end == map->text_bytes);
  CHECK(map->text_bytes == k.kernel_code().text_bytes);
  CHECK(map->text_bytes < k.code().size()); // the constant table follows
  std::uint32_t at = 0;
  for (const auto& r : map->records) {
    CHECK(r.begin == at);
    CHECK(r.end >= r.begin);
    at = r.end;
  }
  auto lir = lower(relu_fma(), x64::Isa::avx2);
  lir.renumber();
  for (auto& e : lir) {
    const debug::CodeRecord* r = map->find_order(e->order);
    REQUIRE(r);
    CHECK(r->text == ir::expression_to_string(lir, *e));
  }
  const auto* load = map->find_order(6);
  REQUIRE(load);
  CHECK(load->text.find("Load x8 'a'") != std::string::npos);
  CHECK(load->emitter == "load: vmovups, full vector");
  CHECK(map->find_offset(load->begin) == load);
}

TEST_CASE("debug code map: a kernel that reduces rows names its accumulators too") {
  // ReduceAccumulate has no output: naming its emitter once read a missing output port
  ir::Graph<x64::Traits> g;
  auto x = g.convert(g.parameter(ElementType::bf16, {4, 96}, "x"), f32);
  auto d = g.subtract(x, g.reduce_sum(x, {-1}));
  g.result(g.convert(g.divide(d, g.reduce_sum(g.multiply(d, d), {-1})), ElementType::bf16), "y");
  auto k = compile(g, {.isa = x64::Isa::avx2, .name = "rows", .debug = {.code_map = true}});
  const debug::CodeMap* map = k.kernel_code().map.get();
  REQUIRE(map);
  bool accumulates = false;
  for (const auto& r : map->records) {
    CHECK_FALSE(r.text.empty());
    accumulates |= r.text.find("ReduceAccumulate") != std::string::npos;
  }
  CHECK(accumulates);
}

TEST_CASE("debug disassembly: each expression's instructions follow its LIR line") {
  for (auto isa : {x64::Isa::avx2, x64::Isa::avx512}) {
    if (!x64::host_supports(isa)) {
      snippets::test::skip_on_host(x64::to_string(isa));
      continue;
    }
    CAPTURE(x64::to_string(isa));
    auto k = compile(relu_fma(), {.isa = isa, .name = "relu", .debug = {.code_map = true}});
    const std::string text = debug::disassemble(k);
    CHECK(text.starts_with(std::string("; kernel 'relu' (") + std::string(x64::to_string(isa)) +
                           "): "));
    CHECK(text.find("; prologue   [kernel entry: save registers, load data pointers]\n") !=
          std::string::npos);
    CHECK(text.find("Load x1 'a' (%0) -> [3,17] v2   [load: vmovss, 1 lane]\n") !=
          std::string::npos);
    CHECK(text.find("Relu 'Relu_5' (%7 v2) -> [3,17] v2   [x64::Emitter<Relu>]\n") !=
          std::string::npos);
    CHECK(text.find("; constant table\n") != std::string::npos);
    if constexpr (debug::has_zydis) {
      CHECK(text.find("push rbx") != std::string::npos);
      CHECK(text.find("vfmadd") != std::string::npos);
      CHECK(text.find(isa == x64::Isa::avx512 ? "zmm" : "ymm") != std::string::npos);
      CHECK(text.find("ret\n") != std::string::npos);
      CHECK(text.find("(bad)") == std::string::npos);
    } else {
      CHECK(text.find("built without Zydis") != std::string::npos);
    }
  }
}

TEST_CASE("debug disassembly: raw bytes with the objdump command when not decoding") {
  auto k = compile(relu_fma(), {.debug = {.code_map = true}});
  const std::string text = debug::disassemble(k, {.decode = false});
  CHECK(text.find(";   objdump -D -b binary -mi386:x86-64 -M intel kernel.bin\n") !=
        std::string::npos);
  CHECK(parse_raw_listing(text) == bytes_of(k)); // every byte, in order, nothing else
  // without a code map: one block of code, and a hint how to get annotations
  auto plain = compile(relu_fma());
  const std::string raw = debug::disassemble(plain, {.decode = false});
  CHECK(raw.find("compile with CompileOptions::debug.code_map = true") != std::string::npos);
  CHECK(parse_raw_listing(raw) == bytes_of(plain));
}

TEST_CASE("debug options that only observe leave every instruction unchanged") {
  const auto g = relu_fma();
  for (auto isa : {x64::Isa::avx2, x64::Isa::avx512}) {
    if (!x64::host_supports(isa)) {
      snippets::test::skip_on_host(x64::to_string(isa));
      continue;
    }
    const auto plain = bytes_of(compile(g, {.isa = isa}));
    CHECK(bytes_of(compile(g, {.isa = isa, .debug = {.code_map = true}})) == plain);
    CHECK(bytes_of(compile(g, {.isa = isa, .debug = {.counters = debug::Counters::chrono}})) ==
          plain);
    CHECK(bytes_of(compile(g, {.isa = isa, .debug = {.perf_map = true}})) == plain);
    if (!std::getenv("SNIPPETS_JIT_PROFILE")) std::remove(debug::perf_map_path().c_str());
    // the instrumenting ones add code
    CHECK(bytes_of(compile(g, {.isa = isa, .debug = {.segfault_detector = true}})).size() >
          plain.size());
    CHECK(
        bytes_of(compile(g, {.isa = isa, .debug = {.counters = debug::Counters::cycles}})).size() >
        plain.size());
  }
}

TEST_CASE("debug JIT dump: the code and its disassembly are written per kernel variant") {
  char tmpl[] = "/tmp/snippets_jit_XXXXXX";
  const std::filesystem::path dir = ::mkdtemp(tmpl);
  ir::Graph<x64::Traits> g;
  g.result(g.relu(g.parameter(f32, {64, 64})));
  auto k = compile(g, {.streaming_threshold_bytes = 1,
                       .name = "jit/dump",
                       .debug = {.jit_dump = (dir / "out").string()}});
  REQUIRE(k.has_streaming_variant());
  std::ifstream bin(dir / "out/jit_dump.bin", std::ios::binary);
  const std::vector<std::uint8_t> written((std::istreambuf_iterator<char>(bin)),
                                          std::istreambuf_iterator<char>());
  CHECK(written == bytes_of(k));
  std::ifstream asm_file(dir / "out/jit_dump.asm");
  std::stringstream text;
  text << asm_file.rdbuf();
  CHECK(text.str() == debug::disassemble(k));
  CHECK(text.str().find("Relu") != std::string::npos); // the dump implies a code map
  CHECK(std::filesystem::exists(dir / "out/jit_dump.nt.bin"));
  CHECK(std::filesystem::exists(dir / "out/jit_dump.nt.asm"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("debug disassembly: AVX-512 kernels are emitted and decoded on any host (emit_only)") {
  // every kind of kernel: elementwise with a tail and a broadcast, a row reduction, Softmax,
  // a MatMul with an epilogue, an attention block
  std::vector<ir::Graph<x64::Traits>> bodies(5);
  bodies[0] = relu_fma();
  {
    auto& g = bodies[1];
    g.result(g.reduce_max(g.parameter(f32, {5, 37}, "x"), {1}, true), "y");
  }
  {
    auto& g = bodies[2];
    g.result(g.softmax(g.parameter(f32, {5, 37}, "x")), "y");
  }
  {
    auto& g = bodies[3];
    const auto m = g.matmul(g.parameter(f32, {9, 24}, "a"), g.parameter(f32, {24, 40}, "b"));
    g.result(g.relu(g.add(m, g.parameter(f32, {40}, "bias"))), "y");
  }
  {
    auto& g = bodies[4];
    const auto q = g.parameter(f32, {2, 16, 8}, "q"), k = g.parameter(f32, {2, 16, 8}, "k"),
               v = g.parameter(f32, {2, 16, 8}, "v");
    g.result(g.matmul(g.softmax(g.matmul(q, k, false, true)), v), "y");
  }
  for (const auto& g : bodies) {
    const CompiledKernel k = compile(g, {.isa = x64::Isa::avx512, .emit_only = true});
    CHECK(k.signature().isa == "avx512");
    CHECK(k.code().size() > 64);
    CHECK(k.signature().runnable == x64::host_supports(x64::Isa::avx512));
    const std::string text = debug::disassemble(k);
#if SNIPPETS_WITH_ZYDIS
    CHECK(text.find("zmm") != std::string::npos);
    CHECK(text.find("(bad)") == std::string::npos);
#else
    CHECK(!parse_raw_listing(text).empty());
#endif
    if (!k.signature().runnable) {
      std::vector<reference::Tensor> in;
      for (ir::NodeId p : g.parameters()) in.emplace_back(f32, g.node(p).outputs[0].shape);
      CHECK_THROWS_WITH(k.run(in), doctest::Contains("[snippets.run.emit_only]"));
    }
  }
}
