// SPDX-License-Identifier: Apache-2.0
// snippets/debug/pass_dumper.hpp: writes the IR after chosen passes to files (the engine of
// SNIPPETS_DUMP_LIR and CompileOptions::debug.dump; the syntax is in debug/options.hpp).
//
// compile() makes one PassDumper per kernel, hooks it into PassContext::after_pass, and calls
// body() for the pseudo-passes Body and DataFlow. Files, in `dir` (created if missing):
//   <kernel>_00_Body.txt                 the Subgraph body as given (ir/printer.hpp)
//   <kernel>_04_DataFlow.txt             the body after the data-flow passes
//   <kernel>_NN_<Pass>.txt               the Linear IR after <Pass>, detailed (lir_printer.hpp)
//   <kernel>_NN_<Pass>.cfg.dot/.dfg.dot  its control-flow and data-flow graphs (formats=dot)
// NN is the pass's 1-based position in CompileOptions::trace (data-flow passes first), so the
// files sort in the order the passes ran. A name in `passes` that no pass has is reported once
// on stderr with the names that did run (a typo should not go unnoticed, nor stop the program).
// I/O failures throw [snippets.debug.dump_failed].
#pragma once

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <string_view>

#include "snippets/debug/dot_graph.hpp"
#include "snippets/debug/files.hpp"
#include "snippets/debug/options.hpp"

namespace snippets::debug {

class PassDumper {
public:
  PassDumper(DumpOptions opt, std::string kernel)
      : opt_(std::move(opt)), stem_(file_stem(kernel)) {}

  bool enabled() const { return opt_.enabled(); }

  /// Dumps a data-flow body under a pseudo-pass name (Body, DataFlow) at trace position `index`.
  template <class T> void body(std::string_view pass, std::size_t index, const ir::Graph<T>& g) {
    if (!opt_.wants(pass)) return;
    if (opt_.text) write(path(index, pass, ".txt"), ir::to_string(g));
    if (opt_.dot) write(path(index, pass, ".dot"), to_dot_text(body_graph(g)));
  }

  /// Writes the pipelines the kernel is compiled with (pseudo-pass Pipeline, position 0).
  void pipeline(const std::string& text) {
    if (opt_.wants("Pipeline") && opt_.text) write(path(0, "Pipeline", ".txt"), text);
  }

  /// Dumps the Linear IR after `pass`, the `index`-th pass (1-based, data flow included).
  template <class T> void lir(std::string_view pass, std::size_t index, ir::LinearIR<T>& lir) {
    if (!opt_.wants(pass)) return;
    if (opt_.text) write(path(index, pass, ".txt"), ir::to_string(lir, {.detailed = true}));
    if (opt_.dot) {
      write(path(index, pass, ".cfg.dot"), to_dot_text(lir_graph(lir, LirGraphKind::control_flow)));
      write(path(index, pass, ".dfg.dot"), to_dot_text(lir_graph(lir, LirGraphKind::data_flow)));
    }
  }

  /// Reports requested names that are not in `trace` (once per name and process).
  void finish(std::span<const std::string_view> trace) const {
    if (!enabled()) return;
    static std::mutex m;
    static std::set<std::string> reported;
    const std::lock_guard lock(m);
    for (const auto& want : opt_.passes) {
      if (want == "all" || want == "Body" || want == "DataFlow" || want == "Pipeline") continue;
      if (std::find(trace.begin(), trace.end(), want) != trace.end()) continue;
      if (!reported.insert(want).second) continue;
      std::cerr << "snippets: the LIR dump names pass '" << want
                << "' but no pass of that name ran; the passes were:";
      for (auto p : trace) std::cerr << ' ' << p;
      std::cerr << '\n';
    }
  }

  /// The files written so far, in order.
  const std::vector<std::string>& files() const { return files_; }

private:
  std::string path(std::size_t index, std::string_view pass, std::string_view ext) const {
    char nn[24];
    std::snprintf(nn, sizeof nn, "_%02zu_", index);
    return detail::join_path(opt_.dir, std::string(stem_).append(nn).append(pass).append(ext));
  }

  void write(const std::string& path, const std::string& text) {
    if (!dir_ready_ && !opt_.dir.empty()) detail::make_directories(opt_.dir);
    dir_ready_ = true;
    detail::write_file(path, text);
    files_.push_back(path);
  }

  DumpOptions opt_;
  std::string stem_;
  bool dir_ready_ = false;
  std::vector<std::string> files_;
};

} // namespace snippets::debug
