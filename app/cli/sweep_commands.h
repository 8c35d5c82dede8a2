// SPDX-License-Identifier: GPL-3.0-or-later
//
// `orrery sweep ...`: sweep specs and their trials. The work is in core (sweepplan: the plan and
// its preview; sweeprunner) and remote (slurmexecutor: the sbatch preview); this file parses
// flags and prints.
#pragma once

#include "runs_commands.h"

#include <QStringList>

namespace orrery::cli {

// `orrery sweep <verb> ...` (args after "sweep"). Returns an exit code.
int runSweep(const Context &ctx, const QStringList &args);

extern const char *const kSweepUsage;

}  // namespace orrery::cli
