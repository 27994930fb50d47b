// SPDX-License-Identifier: Apache-2.0
// src/prebuilt.cpp: the one place that instantiates compile(), lower(), tokenize() and the
// reference interpreter for x64::Traits with the default pipelines: the snippets_instances
// static library behind snippets::prebuilt. Every source of a program that links
// snippets::prebuilt sees them as `extern` (snippets/extern_templates.hpp, force-included), so
// it compiles in seconds instead of instantiating them again.
#define SNIPPETS_DEFINE_TEMPLATES
#include "snippets/extern_templates.hpp"
