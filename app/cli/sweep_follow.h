// SPDX-License-Identifier: GPL-3.0-or-later
//
// The verbs of `orrery sweep` that run and follow sweeps (sweep_commands.cpp parses the spec).
#pragma once

#include "runs_commands.h"

#include "orrery/core/sweeprunner.h"

#include <QStringList>

namespace orrery::cli {

struct SubmitArgs {
    core::SubmitPlan plan;
    QString cluster;  // empty: this machine
    bool dryRun = false;
    bool watch = false;  // follow until the sweep ends
    bool json = false;
};
int runSweepSubmit(const Context &ctx, const SubmitArgs &args);

// list, status, watch, cancel, best, logs, and supervise (the local executor's batch runner).
int runSweepFollow(const Context &ctx, const QString &verb, const QStringList &args);

}  // namespace orrery::cli
