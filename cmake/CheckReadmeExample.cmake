# SPDX-License-Identifier: Apache-2.0
# Script mode: fails when the C++ example in README.md differs from examples/readme_example.cpp
# (which CI builds and runs), so the front page never shows code that does not work.
file(READ "${ROOT}/README.md" readme)
file(READ "${ROOT}/examples/readme_example.cpp" example)
# drop the license line and the file's comment line
string(REGEX REPLACE "^// SPDX-License-Identifier: [^\n]*\n" "" example "${example}")
string(REGEX REPLACE "^[^\n]*\n" "" example "${example}")
string(FIND "${readme}" "${example}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "README.md's example is not examples/readme_example.cpp; copy one into the other")
endif()
