// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "orrery/remote/session.h"

#include <QStringList>

namespace orrery::cli {

// `orrery cluster add|list|show|test|remove ...` (args after "cluster"). Returns an exit code.
int runCluster(const QStringList &args);

extern const char *const kClusterUsage;

// Secrets asked on the terminal (echo off; nothing is asked without one); an unknown host key is
// trusted only with `acceptNewHostKey` (--accept-new-host-key), a changed one never.
remote::AuthCallbacks terminalCallbacks(bool acceptNewHostKey);

}  // namespace orrery::cli
