// tests/template_instances.cpp: the one place the project's programs (unit tests, examples,
// tools, benchmarks) instantiate compile(), lower(), tokenize() and the reference interpreter
// for x64::Traits: the top level's snippets_instances library. Every other source sees them as
// `extern` (snippets/extern_templates.hpp, through the tests' precompiled header or
// snippets_prebuilt's -include).
#define SNIPPETS_DEFINE_TEMPLATES
#include "snippets/extern_templates.hpp"
