// SPDX-License-Identifier: Apache-2.0
// snippets/snippets.hpp: the public API in one include.
//
// Build a data-flow Graph with the builder; compile() a body into one JIT kernel (by the
// backend of the graph's traits type; DefaultTraits: x86-64 with AVX2 or AVX-512) and run it, or
// build a Program from a whole model (tokenized into Subgraphs, one kernel each); the reference
// interpreter evaluates any graph.
#pragma once

#include "snippets/backend_traits.hpp"
#include "snippets/compile.hpp"
#include "snippets/debug/statistics.hpp"
#include "snippets/default_traits.hpp"
#include "snippets/error.hpp"
#include "snippets/ir/element_type.hpp"
#include "snippets/ir/graph.hpp"
#include "snippets/ir/layout.hpp"
#include "snippets/ir/printer.hpp"
#include "snippets/ir/shape.hpp"
#include "snippets/passes/tokenize.hpp"
#include "snippets/program/program.hpp"
#include "snippets/reference/interpreter.hpp"
#include "snippets/version.hpp"
