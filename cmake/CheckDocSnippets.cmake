# SPDX-License-Identifier: Apache-2.0
# ctest docs.snippets_compile: every ```cpp block of README.md and docs/*.md compiles, so the
# documentation never shows C++ that does not build against the headers it describes.
#
# Usage (script mode; every -D but ROOT is optional):
#   cmake -DROOT=<source dir> -DCXX=g++ -DOUT=/tmp/doc-snippets -DSEPARATE=ON \
#         -DINCLUDES="<dir>|<dir>" -DWITH_ONNX=ON -DFILES="docs/onnx.md|README.md" \
#         -P cmake/CheckDocSnippets.cmake
#
# The convention for writers (docs/testing.md repeats it):
#  - a block fenced as ```cpp is C++ that compiles. Pseudo-code, program output and shell
#    commands take another fence (```text, ```sh, ...) and are not checked;
#  - a block is compiled as a whole translation unit, unless an HTML comment that starts with
#    `<!-- snippet` ends (`-->` on a line of its own) on the line right before the fence. The
#    comment's lines are hidden C++ around the block: those before a line holding only `...`
#    go before the block, those after it go after (without such a line, all go before):
#        <!-- snippet
#        #include "snippets/snippets.hpp"
#        using namespace snippets;
#        void doc(const ir::Graph<x64::Traits>& body) {
#        ...
#        }
#        -->
#  - #include lines, in the block or in its comment, go to the top of the translation unit
#    (so a block that is a function body may still show the header it needs);
#  - `<!-- snippet onnx` marks a block that needs the ONNX importer (libonnx-dev); it is left
#    out, with a note, when the ONNX headers are missing (WITH_ONNX=OFF).
#
# How the blocks are compiled: `${CXX} -std=c++20 -fsyntax-only -fopenmp -I<ROOT>/include`
# (plus INCLUDES, `|`-separated, and ONNX's -DONNX_NAMESPACE=onnx -DONNX_ML=1). By default all
# blocks go into one translation unit, each in a namespace of its own: the headers are parsed
# and the library templates instantiated once, which takes seconds instead of a quarter of a
# minute per block. The price: a block that forgets an #include another block has is not
# caught. SEPARATE=ON compiles every block as a translation unit of its own (slower; run it when
# adding blocks). `#line` directives make the compiler's errors point at the Markdown file and
# line.
cmake_minimum_required(VERSION 3.25)

if(NOT ROOT)
  message(FATAL_ERROR "usage: cmake -DROOT=<source dir> [-DCXX=...] -P CheckDocSnippets.cmake")
endif()
if(NOT CXX)
  if(DEFINED ENV{CXX})
    set(CXX "$ENV{CXX}")
  else()
    set(CXX c++)
  endif()
endif()
if(NOT OUT)
  set(OUT "/tmp/snippets-doc-snippets")
endif()
string(REPLACE "|" ";" extra_includes "${INCLUDES}")
# empty items, and the system directories an imported target may name (-I would demote them)
list(REMOVE_ITEM extra_includes "" /usr/include /usr/local/include)
list(REMOVE_DUPLICATES extra_includes)
if(NOT DEFINED WITH_ONNX)
  set(WITH_ONNX OFF)
  foreach(dir IN LISTS extra_includes ITEMS /usr/include /usr/local/include)
    if(EXISTS "${dir}/onnx/onnx_pb.h")
      set(WITH_ONNX ON)
    endif()
  endforeach()
endif()
if(FILES) # e.g. -DFILES="docs/onnx.md|README.md": only these
  string(REPLACE "|" ";" files "${FILES}")
  list(TRANSFORM files PREPEND "${ROOT}/" OUTPUT_VARIABLE markdown_files)
else()
  file(GLOB docs "${ROOT}/docs/*.md")
  list(SORT docs)
  set(markdown_files "${ROOT}/README.md" ${docs})
endif()

# Markdown lines become CMake list items: ';', brackets and backslashes (which would split or
# join items) are replaced by control characters first and restored when the C++ is written.
# The parts of a block are kept as strings of "line;" (list(APPEND) drops a leading empty item).
string(ASCII 1 semicolon)
string(ASCII 2 open_bracket)
string(ASCII 3 close_bracket)
string(ASCII 4 backslash)

set(blocks 0)      # cpp blocks found
set(skipped "")    # blocks left out (ONNX missing)
set(needs_onnx OFF)
set(hoisted "")    # combined mode: every #include line of every block, once
set(bodies "")     # combined mode: the namespaces, one per block
set(sources "")    # separate mode: one file per block

# Appends `line` (an item of the lines list) to the C++ of the current block. An #include goes
# to `includes` instead, to be written at the top of the translation unit, and leaves an empty
# line behind, so the #line numbers stay true.
macro(add_cpp_line line)
  if("${line}" MATCHES "^[ \t]*#[ \t]*include")
    list(FIND includes "${line}" known)
    if(known EQUAL -1)
      list(APPEND includes "${line}")
    endif()
    string(APPEND cpp "\n")
  else()
    string(APPEND cpp "${line}\n")
  endif()
endmacro()

foreach(md IN LISTS markdown_files)
  file(RELATIVE_PATH name "${ROOT}" "${md}")
  file(READ "${md}" text)
  string(REPLACE "\\" "${backslash}" text "${text}")
  string(REPLACE ";" "${semicolon}" text "${text}")
  string(REPLACE "[" "${open_bracket}" text "${text}")
  string(REPLACE "]" "${close_bracket}" text "${text}")
  string(REPLACE "\n" ";" lines "${text}")

  set(n 0)
  set(fence "")          # "cpp", another language, or "" outside fences
  set(in_comment OFF)
  set(comment_end -1)    # line of the `-->` of the last snippet comment
  foreach(line IN LISTS lines)
    math(EXPR n "${n} + 1")
    if(in_comment)
      if(line MATCHES "^[ \t]*-->[ \t]*$")
        set(in_comment OFF)
        set(comment_end ${n})
      elseif(line MATCHES "^[ \t]*\\.\\.\\.[ \t]*$" AND NOT after)
        set(after ON)
        math(EXPR after_line "${n} + 1")
      elseif(after)
        string(APPEND post "${line};")
      else()
        string(APPEND pre "${line};")
      endif()
    elseif(fence STREQUAL "")
      if(line MATCHES "^[ \t]*<!-- snippet( [a-z ]*)?[ \t]*$")
        set(in_comment ON)
        set(options "${CMAKE_MATCH_1}")
        set(pre "")
        set(post "")
        set(after OFF)
        math(EXPR pre_line "${n} + 1")
      elseif(line MATCHES "^[ \t]*```[ \t]*([A-Za-z+]*)")
        set(fence "${CMAKE_MATCH_1}")
        if(fence STREQUAL "")
          set(fence "plain")
        endif()
        if(fence STREQUAL "cpp")
          math(EXPR block_line "${n} + 1")
          set(block "")
          math(EXPR previous "${n} - 1")
          set(wrapped OFF)
          if(comment_end EQUAL previous)
            set(wrapped ON)
          endif()
        endif()
      endif()
    elseif(line MATCHES "^[ \t]*```[ \t]*$")
      if(fence STREQUAL "cpp")
        math(EXPR blocks "${blocks} + 1")
        set(onnx OFF)
        if(wrapped AND options MATCHES "onnx")
          set(onnx ON)
        endif()
        if(onnx AND NOT WITH_ONNX)
          list(APPEND skipped "${name}:${block_line}")
        else()
          if(onnx)
            set(needs_onnx ON)
          endif()
          set(cpp "")
          set(includes "")
          if(wrapped)
            string(APPEND cpp "#line ${pre_line} \"${name}\"\n")
            foreach(l IN LISTS pre)
              add_cpp_line("${l}")
            endforeach()
          endif()
          string(APPEND cpp "#line ${block_line} \"${name}\"\n")
          foreach(l IN LISTS block)
            add_cpp_line("${l}")
          endforeach()
          if(wrapped AND after)
            string(APPEND cpp "#line ${after_line} \"${name}\"\n")
            foreach(l IN LISTS post)
              add_cpp_line("${l}")
            endforeach()
          endif()
          if(SEPARATE)
            set(source "${OUT}/block_${blocks}.cpp")
            string(REPLACE ";" "\n" includes "${includes}")
            set(cpp "${includes}\n${cpp}")
            string(REPLACE "${semicolon}" ";" cpp "${cpp}")
            string(REPLACE "${backslash}" "\\" cpp "${cpp}")
            string(REPLACE "${open_bracket}" "[" cpp "${cpp}")
            string(REPLACE "${close_bracket}" "]" cpp "${cpp}")
            file(WRITE "${source}" "// ${name}:${block_line}\n${cpp}")
            list(APPEND sources "${source}|${name}:${block_line}|${onnx}")
          else()
            foreach(include IN LISTS includes)
              list(FIND hoisted "${include}" known)
              if(known EQUAL -1)
                list(APPEND hoisted "${include}")
              endif()
            endforeach()
            string(APPEND bodies "// ${name}:${block_line}\nnamespace doc_snippet_${blocks} {\n"
                   "${cpp}} // namespace doc_snippet_${blocks}\n")
          endif()
        endif()
      endif()
      set(fence "")
    elseif(fence STREQUAL "cpp")
      string(APPEND block "${line};")
    endif()
  endforeach()
  if(NOT fence STREQUAL "" OR in_comment)
    message(FATAL_ERROR "${name}: a code fence or snippet comment is not closed")
  endif()
endforeach()

set(flags -std=c++20 -fsyntax-only -fopenmp "-I${ROOT}/include")
foreach(dir IN LISTS extra_includes)
  list(APPEND flags "-I${dir}")
endforeach()
set(onnx_flags -DONNX_NAMESPACE=onnx -DONNX_ML=1)
foreach(s IN LISTS skipped)
  message(STATUS "doc snippets: ${s} needs the ONNX headers (not found): not compiled")
endforeach()

string(TIMESTAMP start "%s")
set(failed 0)
if(SEPARATE)
  foreach(entry IN LISTS sources)
    string(REPLACE "|" ";" entry "${entry}")
    list(GET entry 0 source)
    list(GET entry 1 where)
    list(GET entry 2 onnx)
    set(block_flags ${flags})
    if(onnx)
      list(APPEND block_flags ${onnx_flags})
    endif()
    execute_process(COMMAND "${CXX}" ${block_flags} "${source}" RESULT_VARIABLE rc
                    OUTPUT_VARIABLE log ERROR_VARIABLE log)
    if(NOT rc EQUAL 0)
      math(EXPR failed "${failed} + 1")
      message("doc snippets: ${where} does not compile (${source}):\n${log}")
    endif()
  endforeach()
else()
  set(source "${OUT}/doc_snippets.cpp")
  string(REPLACE ";" "\n" includes "${hoisted}")
  set(cpp "// Every ```cpp block of README.md and docs/*.md (cmake/CheckDocSnippets.cmake)\n")
  string(APPEND cpp "${includes}\n${bodies}")
  string(REPLACE "${semicolon}" ";" cpp "${cpp}")
  string(REPLACE "${backslash}" "\\" cpp "${cpp}")
  string(REPLACE "${open_bracket}" "[" cpp "${cpp}")
  string(REPLACE "${close_bracket}" "]" cpp "${cpp}")
  file(WRITE "${source}" "${cpp}")
  if(needs_onnx)
    list(APPEND flags ${onnx_flags})
  endif()
  execute_process(COMMAND "${CXX}" ${flags} "${source}" RESULT_VARIABLE rc
                  OUTPUT_VARIABLE log ERROR_VARIABLE log)
  if(NOT rc EQUAL 0)
    set(failed "one or more")
    message("doc snippets: the blocks do not compile (all of them are in ${source}; "
            "-DSEPARATE=ON compiles each alone):\n${log}")
  endif()
endif()
string(TIMESTAMP stop "%s")
math(EXPR seconds "${stop} - ${start}")
list(LENGTH skipped n_skipped)
if(SEPARATE)
  set(mode "one translation unit per block")
else()
  set(mode "one translation unit")
endif()
if(NOT failed EQUAL 0)
  message(FATAL_ERROR "doc snippets: ${failed} of ${blocks} blocks failed (${mode}, ${seconds} s)")
endif()
message(STATUS "doc snippets: ${blocks} cpp blocks, ${n_skipped} left out, compiled in "
               "${seconds} s (${mode})")
