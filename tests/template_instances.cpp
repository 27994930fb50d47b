// tests/template_instances.cpp: the one place the unit tests instantiate compile(), lower(),
// tokenize() and the reference interpreter for x64::Traits; every other test file sees them
// as `extern` through the precompiled header (snippets/extern_templates.hpp).
#define SNIPPETS_DEFINE_TEMPLATES
#include "snippets/extern_templates.hpp"
