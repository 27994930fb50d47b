# SPDX-License-Identifier: Apache-2.0
# Runs a command-line tool and checks its exit status and what it prints, for the ctests of
# snippets-run and snippets-onnx-conformance (a test fails when the tool exits with another
# status, or its stdout + stderr do not match OUTPUT).
# Usage: cmake -DSTATUS=<exit status> -DOUTPUT=<regex> "-DTOOL_COMMAND=<tool>;<args>..."
#              -P expect_exit.cmake
# (the command is a list: arguments after the script would be parsed by cmake itself, "-i" too)
if(NOT DEFINED STATUS OR NOT DEFINED OUTPUT OR NOT TOOL_COMMAND)
  message(FATAL_ERROR "expect_exit.cmake needs -DSTATUS=..., -DOUTPUT=... and -DTOOL_COMMAND=...")
endif()
execute_process(COMMAND ${TOOL_COMMAND} RESULT_VARIABLE status OUTPUT_VARIABLE out
                ERROR_VARIABLE out)
list(JOIN TOOL_COMMAND " " shown)
if(NOT status STREQUAL STATUS)
  message(FATAL_ERROR "${shown}\nexited with ${status}, expected ${STATUS}; it printed:\n${out}")
endif()
if(NOT out MATCHES "${OUTPUT}")
  message(FATAL_ERROR "${shown}\nexited with ${status} as expected, but its output does not match "
                      "'${OUTPUT}':\n${out}")
endif()
message(STATUS "${shown}: exit status ${status}, output matches '${OUTPUT}'")
