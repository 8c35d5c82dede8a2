// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QString>

namespace orrery::core {

// Names the running application "orrery" (with Orrery's version) so that every face resolves
// the same QStandardPaths locations (~/.local/share/orrery, ~/.config/orrery). Call right after
// constructing the Q*Application.
void applyApplicationIdentity();

// Where Orrery keeps its files. Every face resolves paths through these, so the CLI and the GUI
// always open the same database.

// The tracking database: $ORRERY_DB if set, else <AppDataLocation>/orrery.sqlite.
QString defaultDatabasePath();

// The directory of cluster profiles and settings (<AppConfigLocation>).
QString configDirectory();

// Files Orrery can make again (fetched artifacts, TensorBoard media, the trainer's schema):
// $ORRERY_CACHE_DIR if set, else <CacheLocation> (~/.cache/orrery).
QString cacheDirectory();

// The desktop workbench's settings file (window geometry, docks, tab): <configDirectory>/orrery.conf.
QString guiSettingsPath();

// The orrery-train executable: $ORRERY_TRAINER if set, else the one next to the running
// executable (build tree and install tree both put them side by side), else the first on PATH.
// Empty when none is found.
QString trainerExecutable();

// The `orrery` CLI, found the same way ($ORRERY_CLI, beside the running executable, PATH): the
// local executor's supervisor (`orrery sweep supervise`), whichever face launches the sweep.
QString cliExecutable();

}  // namespace orrery::core
