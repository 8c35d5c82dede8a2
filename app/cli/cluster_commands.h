// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "command_table.h"

#include "orrery/remote/deploy.h"
#include "orrery/remote/session.h"

#include <QStringList>

#include <functional>

namespace orrery::cli {

// `orrery cluster VERB ...`: the verbs with their handlers, for the command table.
QList<VerbInfo> clusterVerbs();
// `orrery cluster --help` (the command's own help; the table dispatches the verbs).
int runCluster(const QStringList &args);

extern const char *const kClusterUsage;

// Secrets asked on the terminal (echo off; nothing is asked without one); an unknown host key is
// trusted only with `acceptNewHostKey` (--accept-new-host-key), a changed one never.
remote::AuthCallbacks terminalCallbacks(bool acceptNewHostKey);

// Shows a trainer deploy's progress on stderr: a redrawn line on a terminal, else a line per
// phase (and per tenth of the compile). One per deploy.
std::function<void(const QString &cluster, const remote::DeployProgress &)> deployProgressPrinter();

}  // namespace orrery::cli
