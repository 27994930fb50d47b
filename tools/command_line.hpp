// SPDX-License-Identifier: Apache-2.0
// tools/command_line.hpp: option values of the command-line tools (snippets-run and the
// conformance runner).
//
// A value must be the whole argument: "--threads 4x" is refused, not read as 4. Errors are
// [snippets.tool.usage] and name the option, so "--threads abc" says which option and what it
// takes (docs/errors.md lists the tools' ids).
#pragma once

#include <charconv>
#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>

#include "snippets/error.hpp"

namespace snippets::tools {

/// A whole number in [min, max] given to `option`.
inline long long whole_number(std::string_view option, std::string_view text, long long min,
                              long long max = std::numeric_limits<int>::max()) {
  long long v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  const bool whole = ec == std::errc{} && end == text.data() + text.size();
  if (!whole || v < min || v > max)
    raise("snippets.tool.usage", std::string(option) + " takes a whole number from " +
                                     std::to_string(min) + " to " + std::to_string(max) +
                                     ", not '" + std::string(text) + "'");
  return v;
}

/// A tolerance of the output checks given to `option`: finite and not negative (a NaN
/// tolerance would make every comparison false, and a negative one every element fail).
inline double tolerance(std::string_view option, std::string_view text) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  const bool whole = ec == std::errc{} && end == text.data() + text.size();
  if (!whole || !std::isfinite(v) || v < 0)
    raise("snippets.tool.usage", std::string(option) +
                                     " takes a finite number >= 0 (e.g. 1e-5), not '" +
                                     std::string(text) + "'");
  return v;
}

} // namespace snippets::tools
