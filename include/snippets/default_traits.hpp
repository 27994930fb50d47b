// SPDX-License-Identifier: Apache-2.0
// snippets/default_traits.hpp: the backend a Program, a Model or a KernelCache uses when none
// is named. Everything else takes its backend from the graph's traits type; this is the one
// line outside target/ that names a target (scripts/check-seam enforces it).
#pragma once

#include "snippets/target/x64/traits.hpp"

namespace snippets {

using DefaultTraits = x64::Traits;

} // namespace snippets
