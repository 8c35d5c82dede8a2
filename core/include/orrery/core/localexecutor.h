// SPDX-License-Identifier: GPL-3.0-or-later
//
// The embedded default executor: trials as local `orrery-train` processes (docs/sweeps.md
// "The local executor"). What Slurm is to a cluster, a small supervisor process is here: launch
// writes the batch to <sweep dir>/local/batch-N.json and starts a detached supervisor
// (`orrery sweep supervise FILE`, in its own session, so it outlives the command that launched
// it and a Ctrl-C in that terminal), which runs the batch's tasks at most max_concurrent at a
// time, each as `orrery-train --config trial.yaml --run-dir DIR --resume auto [--nproc N]` in
// its own process group, and records each task's state in <sweep dir>/local/task-ID.json
// (written atomically). poll reads those files; cancel marks a task and sends SIGTERM to its
// process group (the trainer checkpoints and exits); a queued task that is marked never starts.
#pragma once

#include "orrery/core/executor.h"

namespace orrery::core {

class LocalExecutor : public Executor {
public:
    // `trainer`: the orrery-train to run (empty: none here; launching its trials fails, a
    // command sweep's do not). `supervisor`: the program whose `sweep supervise FILE`
    // runs a batch (the `orrery` CLI). `root`: where sweep directories go (default: <data dir>/runs).
    LocalExecutor(QString trainer, QString supervisor, QString root = {});

    QString name() const override { return QStringLiteral("local"); }
    QString defaultRoot() override { return m_root; }
    QByteArray describe(const LaunchBatch &batch) override;
    Launched launch(const LaunchBatch &batch) override;
    // Runs the compiled-in orrery-code.sh on this machine (bash, git where the directory has it).
    CodeSnapshot snapshotCode(const QString &sweepDir, const RenderedCommand &command) override;
    QHash<QString, TaskStatus> poll(const QStringList &taskIds) override;
    void cancel(const QStringList &taskIds) override;
    // SIGCONT then SIGKILL to each running task's process group (a stopped process dies too).
    void kill(const QStringList &taskIds) override;
    QList<FileChunk> readFiles(const QList<FileRead> &reads) override;
    QStringList logPaths(const QString &sweepDir, const QString &taskId, const QString &runDir) override;

    // Ranks per trial for these resources: nodes x max(1, gpus_per_node), as on Slurm.
    static int ranksPerTrial(const SweepResources &resources);

private:
    QString m_trainer, m_supervisor, m_root;
    QHash<QString, QString> m_sweepDirOf;  // task id → its sweep dir (from launch or the id)
};

// The supervisor's body (`orrery sweep supervise FILE`): runs the batch to its end and returns
// 0, or 1 with a message on stderr when the batch file is unusable. SIGTERM to the supervisor
// forwards it to every running task and marks the queued ones cancelled.
int runLocalSupervisor(const QString &batchFile);

// The default root of local sweeps: <AppDataLocation>/runs.
QString defaultLocalRoot();

}  // namespace orrery::core
