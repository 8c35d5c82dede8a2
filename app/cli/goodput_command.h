// SPDX-License-Identifier: GPL-3.0-or-later
//
// `orrery runs goodput RUN | --sweep SWEEP [--json]`: where a run's (or a sweep's) wall time went,
// as core::runGoodput / core::sweepGoodput compute it (goodput.h); this only formats.
#pragma once

#include "command_table.h"

namespace orrery::cli {

// `runs goodput`, declared for the command table (which parses its options and makes its help).
VerbInfo goodputVerb();

}  // namespace orrery::cli
