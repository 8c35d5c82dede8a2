// SPDX-License-Identifier: GPL-3.0-or-later
//
// `orrery runs goodput RUN | --sweep SWEEP [--json]`: where a run's (or a sweep's) wall time went,
// as core::runGoodput / core::sweepGoodput compute it (goodput.h); this only formats.
#pragma once

#include "commands.h"

#include <QStringList>

namespace orrery::cli {

int runsGoodput(const Context &ctx, const QStringList &args);

}  // namespace orrery::cli
