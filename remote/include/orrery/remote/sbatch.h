// SPDX-License-Identifier: GPL-3.0-or-later
//
// The sweep's sbatch script, rendered from a template users can read and override per cluster
// (resources/sbatch/array.sbatch; docs/sweeps.md). Every substituted value is quoted with
// shellQuote, or refused when it cannot be carried safely (see SbatchError).
#pragma once

#include "orrery/core/error.h"
#include "orrery/core/sweepspec.h"

#include <QByteArray>
#include <QString>
#include <QStringList>

#include <stdexcept>

namespace orrery::remote {

// A value the script refuses (a hostile partition name, a bad time): the request is wrong.
class SbatchError : public core::Error {
public:
    explicit SbatchError(const QString &message) : core::Error(Kind::Invalid, message) { }
};

struct SbatchJob {
    QString jobName;
    QString sweepDir;  // absolute, on the cluster; the job's working directory (logs/ under it)
    QStringList trialDirs;  // absolute; array task i runs trialDirs[i]
    int maxConcurrent = 1;
    core::SweepResources resources;  // an empty partition/account: the profile's default
    QString defaultPartition, defaultAccount;  // the profile's
    QStringList setup;  // the profile's setup lines (shell code, by design)
    QString trainer;  // orrery-train on the cluster; empty: orrery-train from PATH
    // Tasks run the sweep's own command (command.argv in their run dirs): the template must know
    // how (a cluster's own copy made before command sweeps does not).
    bool commands = false;
    // `launch: per_node`: one task per node (with the CPUs of all its GPUs' ranks), which starts
    // its own process per GPU (torchrun, accelerate launch).
    bool perNode = false;
    // Some task's words hold {{node_rank}}, {{master_addr}} or {{master_port}} (command.late): the
    // template must fill them (a copy made before launchers does not).
    bool nodeWords = false;
    // orrery-train's health-check words (core::healthCheckArgs), run on every node before the
    // task's program; empty: no check. A cluster's own template without {{health_check}} (made
    // before health checks) runs without it.
    QStringList healthCheck;
};

// The template shipped with Orrery (compiled in from resources/sbatch/array.sbatch).
QByteArray defaultSbatchTemplate();
// Where a cluster's own template is looked up: <configDir>/clusters/<cluster>.sbatch.
QString sbatchOverridePath(const QString &configDir, const QString &cluster);
// The override if it exists, else the default. Throws SbatchError when the override is unreadable.
QByteArray sbatchTemplateFor(const QString &configDir, const QString &cluster);

// Substitutes {{placeholders}} (not in comment lines: '#' other than '#SBATCH' is copied as is). Values in
// #SBATCH lines are read by sbatch's own parser, which ends at a newline and treats backslashes as escapes
// even inside quotes, and Slurm expands '%' in file names: those bytes are refused there with a message
// naming the value. In the shell body every value is shellQuote'd (any byte but NUL). Throws SbatchError: an
// unknown placeholder, a refused value, no trials, or a template without {{trial_dirs}} / {{trainer}}.
QByteArray renderSbatch(const QByteArray &templ, const SbatchJob &job);

}  // namespace orrery::remote
