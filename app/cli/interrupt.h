// SPDX-License-Identifier: GPL-3.0-or-later
//
// Ctrl-C (and SIGTERM) during long CLI work: while an InterruptScope lives, the first signal only
// sets a flag the work polls, so it can end cleanly (finish the current transaction, detach from
// a sweep, stop a remote build); a second one ends the process at once, as if nothing caught it.
// The default handlers come back with the scope's end; the flag stays readable until the next
// scope begins.
#pragma once

namespace orrery::cli {

class InterruptScope {
public:
    InterruptScope();
    ~InterruptScope();
    InterruptScope(const InterruptScope &) = delete;
    InterruptScope &operator=(const InterruptScope &) = delete;

    // Whether a signal came during the current (or the last) scope.
    static bool requested();
};

}  // namespace orrery::cli
