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

// `orrery experiments VERB` and `orrery runs VERB`: the declared verbs with their handlers (the
// command table parses their arguments, makes their help and dispatches them).
QList<VerbInfo> experimentsVerbs();
QList<VerbInfo> runsVerbs();
// A usage error of `orrery runs VERB` found after parsing (a bad option value): the message and the
// verb's help on stderr; returns the usage exit status.
int runsUsageError(const QString &verb, const QString &message);

}  // namespace orrery::cli
