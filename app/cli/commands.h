// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QCommandLineParser>
#include <QStringList>

namespace orrery::cli {

// Exit codes (UX.md): 0 ok, 1 the operation failed, 2 usage error.
enum ExitCode { kOk = 0, kFailed = 1, kUsage = 2 };

// What every command gets besides its arguments.
struct Context {
    QString dbPath;  // --db, else $ORRERY_DB, else the app data location
};

// `orrery doctor [--json]`: every environment check, as a table or one JSON object.
int runDoctor(const QCommandLineParser &args);

}  // namespace orrery::cli
