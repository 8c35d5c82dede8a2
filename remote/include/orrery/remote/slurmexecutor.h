// SPDX-License-Identifier: GPL-3.0-or-later
//
// The Executor of one Slurm cluster (core/executor.h; docs/sweeps.md "Slurm executor"): one job
// array per batch, submitted in one SSH command; one squeue per poll; one remote command to read
// every followed file.
#pragma once

#include "orrery/core/executor.h"
#include "orrery/core/sweepplan.h"
#include "orrery/remote/connection.h"
#include "orrery/remote/profile.h"
#include "orrery/remote/sbatch.h"
#include "orrery/remote/slurm.h"

#include <QString>

#include <optional>

namespace orrery::remote {

// Runs trials as Slurm job arrays on the cluster of `profile`, over `connection` (which must
// outlive it). Every call blocks on SSH round trips: use it from a worker thread. Not
// thread-safe (it remembers what it learnt of the cluster: accounting, perl, the home
// directory); one per worker.
class SlurmExecutor : public core::Executor {
public:
    // `configDir` holds the per-cluster sbatch template override (<configDir>/clusters/NAME.sbatch).
    SlurmExecutor(ClusterProfile profile, Connection &connection, QString configDir);

    // Slurm places each retry on nodes of its choosing (--exclude keeps the suspects out).
    bool choosesNodes() const override { return true; }
    QString name() const override;
    // The profile's remote root; "~" or "$HOME" at its start resolved on the cluster (one command
    // the first time, then remembered).
    QString defaultRoot() override;
    // The sbatch script launch() submits for `batch`: batchScript (no remote call).
    QByteArray describe(const core::LaunchBatch &batch) override;
    // One remote command: the trial configs and the script travel as a tar archive on stdin,
    // and `tar -x`, removing stale exit.json files and `sbatch` run in one shell line.
    core::Launched launch(const core::LaunchBatch &batch) override;
    // One command over SSH: the script into <sweep dir>/.orrery/ and run there on the
    // cluster's filesystem (the program's `workdir` is taken from the home directory).
    core::CodeSnapshot snapshotCode(const QString &sweepDir, const core::RenderedCommand &command) override;
    // One squeue for all ids (by their array jobs); ids squeue no longer lists are asked of sacct
    // (one more command) where the cluster keeps accounting, else they are Unknown.
    QHash<QString, core::TaskStatus> poll(const QStringList &taskIds) override;
    // MaxArraySize and MaxJobCount (`scontrol show config`) and, where the cluster keeps
    // accounting, the user's MaxSubmitJobs of their associations and QOS (sacctmgr): one command
    // the first time, then remembered.
    core::SubmitLimits submitLimits() override;
    // Pending tasks are cancelled; running ones get SIGTERM in their batch shell and their
    // steps (the trainer checkpoints and exits; nothing is SIGKILLed): one remote command.
    void cancel(const QStringList &taskIds) override;
    // A plain `scancel` of each task: Slurm's own end of a job (SIGCONT and SIGTERM to every
    // process, SIGKILL after the cluster's KillWait), which a stopped or wedged step cannot ignore.
    void kill(const QStringList &taskIds) override;
    // One remote `perl` reading every file (batchread.h); where perl is missing, per-file SFTP.
    QList<core::FileChunk> readFiles(const QList<core::FileRead> &reads) override;
    // <sweepDir>/logs/<arrayjob>_<task>.out and .err, as the template names them (%A_%a).
    QStringList logPaths(const QString &sweepDir, const QString &taskId, const QString &runDir) override;
    // The nodes of the partition a trial runs in (its `partition`, else the profile's, else the
    // cluster's default): one sinfo the first time, then remembered for this executor's life.
    QStringList schedulableNodes(const core::SweepResources &resources) override;
    // One sinfo (fresh, not the cached one): those of `nodes` isNodeUnusable says Slurm runs
    // nothing on, with their state.
    QHash<QString, QString> failedNodes(const QStringList &nodes) override;

    // What readFiles uses: nullopt until the first read, then whether perl was found.
    std::optional<bool> hasPerl() const { return m_perl; }
    // Forces the per-file SFTP reader (the benchmark's peer; clusters without perl).
    void setUsePerl(bool use) { m_perl = use; }

private:
    QList<core::FileChunk> readFilesSftp(const QList<core::FileRead> &reads);
    // Fills the queued tasks' expected start (squeue --start): one more command, only when some
    // task is queued.
    void expectedStarts(const QStringList &arrays, QHash<QString, core::TaskStatus> &statuses);

    ClusterProfile m_profile;
    Connection &m_connection;
    QString m_configDir;
    SlurmClient m_slurm;
    std::optional<bool> m_perl;
    QString m_root;
    std::optional<slurm::ClusterInfo> m_clusterInfo;  // schedulableNodes' sinfo
    std::optional<core::SubmitLimits> m_limits;
};

// --- the pure pieces, tested on their own (tests/remote/tst_slurmexecutor.cpp) -----------------

// The script and its preview (tests/core/tst_sweepplan.cpp: the preview is what describe gives).

// The files a task's run dir gets before its array task starts: trial.yaml, and for a command
// sweep command.argv, command.env and command.workdir (each word, NAME=value or path ended by a
// NUL byte, read as data by the sbatch script: resources/sbatch/array.sbatch).
QList<std::pair<QByteArray, QByteArray>> runDirFiles(const core::TaskLaunch &task);

// What the sbatch template is rendered with for `batch` on the cluster of `profile`: the batch's
// name, directories, throttle and resources, the profile's partition/account defaults, setup
// lines and trainer.
SbatchJob sbatchJobFor(const ClusterProfile &profile, const core::LaunchBatch &batch);
// The script SlurmExecutor submits for `batch`: the cluster's template (sbatchTemplateFor, an
// override under `configDir` or the default) rendered with sbatchJobFor. Throws SbatchError
// (an unsafe value, an empty batch, an unreadable override).
QByteArray batchScript(const ClusterProfile &profile, const QString &configDir,
                       const core::LaunchBatch &batch);
// A plan's first batch as the cluster of `profile` would get it, without connecting: batchScript
// of core::firstBatch in sweepDirectory(profile.remoteRoot, experiment, sweepDirName). A "~" in
// the remote root stays as written (only the cluster resolves it); submission names the
// directory core::sweepDirectoryName(name, now), a preview may show a placeholder instead.
// `sweep plan --cluster` and the GUI's launcher show it. Throws SbatchError.
QByteArray previewSbatch(const ClusterProfile &profile, const QString &configDir,
                         const core::SubmitPlan &plan, const QList<core::PlannedTrial> &trials,
                         const QString &sweepDirName);

// The sbatch command line launch() runs for `batch` (its script named `scriptName`): --parsable,
// the --array range with the throttle, and --exclude=<the batch's excludeNodes> where it has any.
// Throws RemoteError for a node name Slurm could not take.
QList<QByteArray> sbatchArguments(const core::LaunchBatch &batch, const QByteArray &scriptName);

// A Slurm job state (squeue's %T, sacct's State) and reason as the runner sees it: PENDING,
// REQUEUED, CONFIGURING, RESIZING, SUSPENDED... → Queued ("PENDING (Resources)");
// RUNNING, COMPLETING, STAGE_OUT, SIGNALING → Running (COMPLETING: the task's processes may still
// be ending, and a retry must not start on top of them); COMPLETED, FAILED, CANCELLED, TIMEOUT,
// OUT_OF_MEMORY, NODE_FAIL, PREEMPTED, BOOT_FAIL, DEADLINE... → Ended, detail the state and the
// reason ("FAILED (NonZeroExitCode)"); a state this code does not know → Unknown, detail it.
core::TaskStatus taskStatusOf(const QString &state, const QString &reason = {});
// The array task ids one squeue record stands for: "123_[2-5,7%2]" → 123_2 .. 123_5, 123_7;
// "123_4" and "123" → themselves. Empty for an id that is not one.
QStringList expandArrayTasks(const QString &jobId);

}  // namespace orrery::remote
