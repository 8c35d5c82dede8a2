// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QStringList>

namespace orrery::cli {

// `orrery cluster add|list|show|test|remove ...` (args after "cluster"). Returns an exit code.
int runCluster(const QStringList &args);

extern const char *const kClusterUsage;

}  // namespace orrery::cli
