// SPDX-License-Identifier: Apache-2.0
// snippets/target/aarch64/emitters/math.hpp: the transcendental ops (placeholder, filled in
// by the next step of issue 33).
#pragma once

#include "snippets/target/aarch64/emitters/emitter.hpp"
