// SPDX-License-Identifier: GPL-3.0-or-later
//
// `orrery experiments ...` and `orrery runs ...`: the tracking store's face. Each command opens
// the store, calls core, and only formats what core returns.
#pragma once

#include "orrery/core/store.h"

#include <QStringList>

#include <memory>

namespace orrery::cli {

struct Context {
    QString dbPath;  // --db, else $ORRERY_DB, else the app data location
};

// Opens the store for a command (read-write, creating and migrating; reading commands fall back
// to read-only where the file cannot be written). Throws core::StoreError.
std::unique_ptr<core::TrackingStore>
openStore(const Context &ctx, core::TrackingStore::Mode mode = core::TrackingStore::Mode::ReadWrite);

int runExperiments(const Context &ctx, const QStringList &args);
int runRuns(const Context &ctx, const QStringList &args);

}  // namespace orrery::cli
