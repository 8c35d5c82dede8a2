// SPDX-License-Identifier: GPL-3.0-or-later
//
// `orrery experiments ...` and `orrery runs ...`: the tracking store's face. Each command opens
// the store, calls core, and only formats what core returns.
#pragma once

#include "command_table.h"
#include "commands.h"

#include "orrery/core/store.h"

#include <QStringList>

#include <memory>

namespace orrery::cli {

// Opens the store for a command (read-write, creating and migrating; reading commands fall back
// to read-only where the file cannot be written). Throws core::StoreError.
std::unique_ptr<core::TrackingStore>
openStore(const Context &ctx, core::TrackingStore::Mode mode = core::TrackingStore::Mode::ReadWrite);

int runExperiments(const Context &ctx, const QStringList &args);
// `orrery runs VERB`: the verbs with their handlers (the command table dispatches them).
QList<VerbInfo> runsVerbs();

}  // namespace orrery::cli
