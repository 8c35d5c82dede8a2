// SPDX-License-Identifier: GPL-3.0-or-later
//
// `orrery db backup FILE` and `orrery db check`: the store is the user's record of weeks of work
// (docs/store.md "Backups and checks"; core/storecheck.h does the work).
#pragma once

#include "command_table.h"

namespace orrery::cli {

QList<VerbInfo> dbVerbs();

}  // namespace orrery::cli
