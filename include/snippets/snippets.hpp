// snippets/snippets.hpp: the public API in one include.
//
// Build a data-flow Graph with the builder, evaluate it with the reference interpreter today;
// later stages tokenize it into Subgraphs and compile each into one JIT kernel.
#pragma once

#include "snippets/backend_traits.hpp"
#include "snippets/error.hpp"
#include "snippets/ir/element_type.hpp"
#include "snippets/ir/graph.hpp"
#include "snippets/ir/layout.hpp"
#include "snippets/ir/printer.hpp"
#include "snippets/ir/shape.hpp"
#include "snippets/reference/interpreter.hpp"
#include "snippets/version.hpp"
