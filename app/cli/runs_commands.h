// SPDX-License-Identifier: GPL-3.0-or-later
//
// `orrery experiments ...` and `orrery runs ...`: the tracking store's face. Each command opens
// the store, calls core, and only formats what core returns.
#pragma once

#include <QStringList>

namespace orrery::cli {

struct Context {
    QString dbPath;  // --db, else $ORRERY_DB, else the app data location
};

int runExperiments(const Context &ctx, const QStringList &args);
int runRuns(const Context &ctx, const QStringList &args);

}  // namespace orrery::cli
