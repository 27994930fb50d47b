// SPDX-License-Identifier: Apache-2.0
// snippets/compile/stage_clock.hpp: StageClock, the wall time of each stage of compile()
// (CompileOptions::timings).
#pragma once

#include <chrono>
#include <string_view>
#include <vector>

#include "snippets/compile/options.hpp"

namespace snippets {

namespace detail {

/// Appends the time since the previous lap to CompileOptions::timings, when it is set.
class StageClock {
public:
  explicit StageClock(std::vector<CompileTiming>* out) : out_(out) {
    if (out_) last_ = std::chrono::steady_clock::now();
  }
  bool enabled() const { return out_ != nullptr; }
  void lap(std::string_view stage) {
    if (!out_) return;
    const auto now = std::chrono::steady_clock::now();
    out_->push_back({stage, now - last_});
    last_ = now;
  }
  /// Starts the next lap now (time spent in between, e.g. writing dumps, is not counted).
  void restart() {
    if (out_) last_ = std::chrono::steady_clock::now();
  }

private:
  std::vector<CompileTiming>* out_;
  std::chrono::steady_clock::time_point last_;
};

} // namespace detail

} // namespace snippets
