// SPDX-License-Identifier: Apache-2.0
// snippets/debug.hpp: every debug tool in one include (kept out of snippets/snippets.hpp: the
// Graphviz part of Boost.Graph is slow to parse). compile() itself already honours the debug
// options and environment variables; this header adds the functions you call yourself:
//   debug::to_dot(lir, kind), debug::to_dot(model)      Graphviz (debug/dot.hpp)
//   debug::disassemble(kernel), debug::write_code(...)   machine code (debug/disassembler.hpp)
//   debug::print_counters(os, kernel or program)         counters (debug/perf_counters.hpp)
//   ir::to_string(lir, {.detailed = true}), ir::to_string(graph)   text dumps
// See docs/debugging.md.
#pragma once

#include "snippets/compile.hpp"
#include "snippets/debug/disassembler.hpp"
#include "snippets/debug/dot.hpp"
#include "snippets/debug/dot_graph.hpp"
#include "snippets/debug/options.hpp"
#include "snippets/debug/pass_dumper.hpp"
#include "snippets/debug/perf_counters.hpp"
#include "snippets/debug/perf_map.hpp"
#include "snippets/debug/segfault_detector.hpp"
#include "snippets/debug/statistics.hpp"
#include "snippets/ir/lir_printer.hpp"
#include "snippets/ir/printer.hpp"
#include "snippets/program/program.hpp"
