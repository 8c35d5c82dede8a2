// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QList>
#include <QString>

namespace orrery::core {

// One line of `orrery doctor` (and of the GUI's About/Environment page): a fact about this
// machine that Orrery depends on, whether it holds, and what to do when it does not.
struct Check {
    enum class Status { Ok, Warning, Failed };
    QString name;
    Status status = Status::Ok;
    QString detail;  // what was found: a version, a path, the error
    QString hint;  // what to do about a Warning or Failed; empty when Ok
};

QString statusLabel(Check::Status status);

// True when no check failed (warnings allowed).
bool allPassed(const QList<Check> &checks);

// The checks of core's own dependencies: Qt, SQLite (and that the data directory takes a WAL
// database), the configuration directory, and the trainer (its `--version --json`).
// Runs orrery-train once (a few seconds for LibTorch to load); call off the UI thread.
QList<Check> coreChecks();

}  // namespace orrery::core
