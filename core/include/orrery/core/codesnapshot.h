// SPDX-License-Identifier: GPL-3.0-or-later
//
// The code a command sweep runs, frozen at submission, and each trial's working directory made
// from it (docs/sweeps.md "Each trial in its own directory"). The rules live in one shell script,
// resources/sweep/orrery-code.sh, compiled in and shipped into each sweep directory, so the local
// executor and the sbatch script on a cluster run the same code; this header names its files and
// reads its record.
#pragma once

#include "orrery/core/command.h"
#include "orrery/core/error.h"

#include <QByteArray>
#include <QList>
#include <QString>
#include <QStringList>

#include <utility>

namespace orrery::core {

// What a snapshot froze: its record, .orrery-snapshot.json.
struct CodeSnapshot {
    QString source;  // the directory frozen (absolute, on the executor's machine)
    qint64 files = 0, bytes = 0;  // copied
    QString vcs;  // "git", "none", or "home" (workdir is the home directory: nothing frozen, all linked)
    QString gitCommit, gitBranch, gitRoot;  // empty without git (a commit: none before the first)
    bool gitDirty = false;  // changes or untracked files beside the commit
    QString diffPath;  // `git diff HEAD` of the repository, kept beside the snapshot; may be empty
    QStringList linked;  // entries linked, not copied (relative to `source`)
};

// The script's bytes (compiled in).
QByteArray codeScript();
// Where each piece lives: the script under the sweep directory's .orrery/, the snapshot in
// <sweep dir>/code, a trial's working directory in <run dir>/work.
QString codeScriptPath(const QString &sweepDir);
QString codeSnapshotDir(const QString &sweepDir);
QString trialWorkDir(const QString &runDir);
// The name of a trial's working directory under its run dir ("work"): the run-dir listing skips
// the frozen files in it (hard links of the snapshot), and lists what the program wrote.
QString trialWorkDirName();

// The script's arguments after `snapshot SRC CODE`: --link and --fresh from the spec.
QStringList codeSnapshotOptions(const CommandSpec::Code &code);
// Reads the record the script prints, or says why it is not one.
Parsed<CodeSnapshot> parseCodeSnapshot(const QByteArray &json);
// The tags a run of the snapshot gets: MLflow's own names for the commit and branch
// (mlflow.source.git.commit, mlflow.source.git.branch), orrery.code.* for the rest.
QList<std::pair<QString, QString>> codeSnapshotTags(const CodeSnapshot &snapshot);

}  // namespace orrery::core
