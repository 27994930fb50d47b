// SPDX-License-Identifier: Apache-2.0
// debug/options.hpp: the SNIPPETS_DUMP_LIR syntax, its error messages, and how C++ options
// and environment variables combine.
#include <doctest/doctest.h>

#include "error_id.hpp"
#include "snippets/debug/options.hpp"

using namespace snippets;

TEST_CASE("debug dump spec: passes, dir and formats are parsed") {
  const auto d =
      debug::parse_dump_options("passes=InsertLoops,AssignRegisters dir=/tmp/x formats=text,dot");
  CHECK(d.passes == std::vector<std::string>{"InsertLoops", "AssignRegisters"});
  CHECK(d.dir == "/tmp/x");
  CHECK(d.text);
  CHECK(d.dot);
  CHECK(d.wants("AssignRegisters"));
  CHECK_FALSE(d.wants("MarkLoops"));
}

TEST_CASE("debug dump spec: defaults are text into snippets_dump, keys in any order") {
  const auto d = debug::parse_dump_options("  formats=dot   passes=all ");
  CHECK(d.passes == std::vector<std::string>{"all"});
  CHECK(d.dir == "snippets_dump");
  CHECK_FALSE(d.text);
  CHECK(d.dot);
  CHECK(d.wants("AnyPass"));
  CHECK(debug::parse_dump_options("passes=Body").text);
}

TEST_CASE("debug dump spec: malformed values throw bad_dump_lir with the expected syntax") {
  for (const char* bad :
       {"", "InsertLoops", "passes=", "passes=A,,B", "passes=A dir=x dir=y", "passes=A formats=svg",
        "passes=A colour=red", "dir=/tmp", "passes=Insert-Loops"}) {
    CAPTURE(bad);
    CHECK(error_id([&] { debug::parse_dump_options(bad); }) == "snippets.debug.bad_dump_lir");
    try {
      debug::parse_dump_options(bad);
    } catch (const Error& e) {
      const std::string what = e.what();
      CHECK(what.find("SNIPPETS_DUMP_LIR='") != std::string::npos);
      CHECK(what.find("expected \"passes=<Pass>[,<Pass>...] [dir=<directory>] "
                      "[formats=text|dot[,...]]\"") != std::string::npos);
    }
  }
}

TEST_CASE("debug dump spec: the message names the part that is wrong") {
  try {
    debug::parse_dump_options("passes=A formats=svg");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("unknown format 'svg'") != std::string::npos);
  }
}

TEST_CASE("debug options: a set field wins over the environment, implied code maps") {
  debug::DebugOptions o;
  o.dump = debug::DumpOptions{};
  o.jit_dump = "";
  o.perf_map = false;
  o.counters = debug::Counters::cycles;
  o.segfault_detector = false;
  const auto r = debug::resolve(o);
  CHECK_FALSE(r.dump.enabled());
  CHECK(r.jit_dump.empty());
  CHECK_FALSE(r.perf_map);
  CHECK(r.counters == debug::Counters::cycles);
  CHECK_FALSE(r.counters_from_env);
  CHECK(r.code_map); // cycle counters need the code map
  CHECK(r.instrumented());
  o.counters = debug::Counters::chrono;
  CHECK_FALSE(debug::resolve(o).code_map);
  CHECK_FALSE(debug::resolve(o).instrumented()); // chrono adds no instruction
  o.segfault_detector = true;
  CHECK(debug::resolve(o).code_map);
  CHECK(debug::resolve(o).instrumented());
}

TEST_CASE("debug file stems keep only safe characters") {
  CHECK(debug::file_stem("Subgraph 'Relu/5'") == "Subgraph__Relu_5_");
  CHECK(debug::file_stem("") == "kernel");
  CHECK(debug::file_stem("a.b-c_d") == "a.b-c_d");
}
