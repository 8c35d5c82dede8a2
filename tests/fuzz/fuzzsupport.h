// SPDX-License-Identifier: GPL-3.0-or-later
// Shared by the libFuzzer targets: a failed property is a crash, so libFuzzer keeps the input.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

namespace orrery::fuzz {

inline void check(bool condition)
{
    if (!condition)
        std::abort();
}

// Which of an executable's targets this run fuzzes: ORRERY_FUZZ_TARGET, as its index in `names`.
// One executable holds every target of its source file, so the suite compiles and links each file
// once (run_fuzzers.cmake sets the variable). Read once; a missing or unknown name ends the run
// with the names it knows.
inline int target(std::initializer_list<const char *> names)
{
    static const int chosen = [names] {
        const char *wanted = std::getenv("ORRERY_FUZZ_TARGET");
        int i = 0;
        for (const char *name : names) {
            if (wanted && std::strcmp(wanted, name) == 0)
                return i;
            ++i;
        }
        std::fprintf(stderr, "ORRERY_FUZZ_TARGET must be one of:");
        for (const char *name : names)
            std::fprintf(stderr, " %s", name);
        std::fprintf(stderr, "\n");
        std::exit(2);
    }();
    return chosen;
}

}  // namespace orrery::fuzz
