// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QList>
#include <QString>
#include <QStringList>

#include <optional>

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

// This machine, where sweeps run when no cluster is named (the local executor): CPU cores,
// memory (/proc/meminfo), GPUs (nvidia-smi, where it is installed) and load (/proc/loadavg).
// What `orrery doctor` prints as its "machine" line and the GUI's Cluster tab shows when no
// cluster is configured.
struct MachineInfo {
    int cpuCores = 0;
    double memoryGb = 0, availableGb = 0;  // 0: not known (no /proc/meminfo)
    std::optional<double> load1, load5, load15;
    bool hasNvidiaSmi = false;
    // One per GPU as nvidia-smi names it: "NVIDIA H100 80GB HBM3, 81559 MiB, 3 % busy".
    QStringList gpus;
    QString gpuProblem;  // nvidia-smi is there but did not answer
};
// Runs nvidia-smi when it is on PATH (bounded to 10 s): call off the UI thread.
MachineInfo readMachine();
// One line: "16 CPU cores, 125.6 GB memory (98.2 GB available), GPUs: none, load 0.52 0.40 0.33".
QString describeMachine(const MachineInfo &machine);

// The checks of core's own dependencies: Qt, SQLite (and that the data directory takes a WAL
// database), the configuration directory, the trainer (its `--version --json`) and this machine
// (readMachine: a fact, never a failure).
// Runs orrery-train once (a few seconds for LibTorch to load); call off the UI thread.
QList<Check> coreChecks();

}  // namespace orrery::core
