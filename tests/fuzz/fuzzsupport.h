// SPDX-License-Identifier: GPL-3.0-or-later
// Shared by the libFuzzer targets: a failed property is a crash, so libFuzzer keeps the input.
#pragma once

#include <cstdlib>

namespace orrery::fuzz {

inline void check(bool condition)
{
    if (!condition)
        std::abort();
}

}  // namespace orrery::fuzz
