// SPDX-License-Identifier: GPL-3.0-or-later
//
// Where trials run: the one interface the sweep runner (sweeprunner.h) drives, implemented by the
// LocalExecutor (core/localexecutor.h: child processes on this machine, the embedded default) and
// the SlurmExecutor (remote/slurmexecutor.h: one job array per batch over SSH). docs/sweeps.md.
//
// The runner owns every decision (what to launch, when to retry, whom to stop early); an executor
// only carries them out and reports what it sees. Every call may block (SSH round trips): call
// them off the UI thread. Each method throws std::runtime_error (RemoteError on a cluster) with a
// message fit for the user when it cannot do its job; the runner records it and tries again on
// the next tick.
#pragma once

#include "orrery/core/codesnapshot.h"
#include "orrery/core/error.h"
#include "orrery/core/sweepspec.h"

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QString>
#include <QStringList>

#include <optional>
#include <stdexcept>

namespace orrery::core {

// One attempt of one trial.
struct TaskLaunch {
    QString runDir;  // absolute, on the executor's machine; created by the executor
    QByteArray config;  // the resolved trainer config (a command's params), written as <runDir>/trial.yaml
    // A sweep of the user's own command (command.h): what runs instead of the bundled trainer,
    // with these ORRERY_* variables, in this directory. argv empty: the trainer.
    RenderedCommand command;
    // More files the executor writes into the run dir before the task starts (name relative to
    // it, a plain file name; bytes): a config-file sweep's config, ${args_json_file}'s args.json.
    QList<std::pair<QString, QByteArray>> files;
    int attempt = 0;  // of its trial: a retry's local logs start with core::attemptMarker
};

// Trials launched together: one job array on Slurm (`%maxConcurrent`), one local supervisor.
struct LaunchBatch {
    QString sweepName;  // the Slurm job name
    QString sweepDir;  // absolute, on the executor's machine (logs/ and the batch's files under it)
    int batch = 0;  // 0, 1, ... within the sweep: names the batch's files (sbatch script, queue)
    QList<TaskLaunch> tasks;
    int maxConcurrent = 1;
    // The deep health check before each task's program (healthCheckArgs: `--health-check --set
    // NAME=VALUE ...` for orrery-train, run once per node); empty: none.
    QStringList healthCheck;
    SweepResources resources;  // ranks per trial = nodes x max(1, gpus_per_node)
    // Nodes the batch must not run on (the cluster's suspect nodes: sbatch --exclude). The
    // local executor has one node and ignores it.
    QStringList excludeNodes;
};

// What an executor knows about one task.
struct TaskStatus {
    enum class State {
        Queued,  // waiting for a slot (Slurm: PENDING, REQUEUED, ...)
        Running,
        Ended,  // gone from the queue or exited: the runner reads exit.json for the verdict
        Unknown,  // the executor has no record of it (Slurm forgot it and there is no accounting)
    };
    State state = State::Unknown;
    // How it ended, or why it waits, as the executor says it: "COMPLETED", "FAILED (exit 1)",
    // "OUT_OF_MEMORY", "NODE_FAIL", "PENDING (Resources)", "signal 9". Empty when nothing to say.
    QString detail;
    std::optional<int> exitCode;  // when known
    // How long the task has run, or ran, on its allocation, where the executor knows it (Slurm:
    // squeue's elapsed time; here: since the supervisor started it). The runner dates an attempt's
    // start by it (now - elapsed), in this machine's clock, so GPU-hours count from the real start
    // whenever the first poll that sees the task running comes (docs/sweeps.md "GPU-hours and cost").
    std::optional<qint64> elapsedMs;
    // The nodes it runs or ran on (Slurm's NodeList, expanded), where the executor knows them.
    QStringList nodes;
    // A queued task's expected start (unix ms) where the scheduler gives one (squeue --start).
    std::optional<qint64> expectedStartMs;
};

// --- array limits (docs/sweeps.md "Array limits") ----------------------------------------------

// What an executor takes at once, as its cluster states it; 0: no limit stated. The runner sizes
// its batches by them (sweeprules.h submitRoom).
struct SubmitLimits {
    int maxArraySize = 0;  // a batch's tasks are indices 0..n-1 of one array: n must stay below it
    int maxJobCount = 0;  // the tasks the scheduler keeps at once (Slurm: MaxJobCount)
    int maxSubmitJobs = 0;  // the user's queued and running tasks (an association's or QOS's)
    bool operator==(const SubmitLimits &) const = default;
};

// What Executor::launch did: the batch queued (its task ids), or held back. A hold is an answer,
// not an error: the batch was refused for a limit that frees as tasks end (a full queue, the
// user's submit limit, an array larger than allowed, the cluster's disk full), nothing was
// queued, and the runner keeps the attempts pending and tries again on a later tick; the sweep
// goes on.
struct Launched {
    QStringList taskIds;  // in the batch's order; empty when held
    QString held;  // why the batch was not queued; empty: it was
    static Launched heldBack(const QString &why) { return {{}, why}; }
};

// Thrown by Executor::launch (and snapshotCode, which a launch may need first) when the executor
// could not be reached or its reply was lost with the connection (dropped, timed out): the batch
// may or may not be queued. Launching the same batch number again answers the recorded job ids
// rather than queueing it twice (docs/sweeps.md "The sbatch script"), so the runner keeps the
// attempts pending under the same batch number and launches them again on a later tick; no retry
// of the trial is spent on it.
class LaunchInterrupted : public Error {
public:
    explicit LaunchInterrupted(const std::string &message) : Error(Kind::Unavailable, message) { }
};

// Reading a file from a byte offset: the runner's way to follow events.jsonl and exit.json.
// Or, with `list`, listing a directory: the regular files under it (recursively, at most
// kMaxListDepth levels down, symbolic links not followed) with their sizes, in the same round
// trip as the reads (how the runner discovers TensorBoard event files and sample files).
struct FileRead {
    QString path;  // absolute, on the executor's machine
    qint64 offset = 0;
    qint64 maxBytes = 4 << 20;  // at most this much per read (the rest comes next tick)
    bool list = false;  // list the directory `path` instead (maxBytes: at most this many entries)
    static FileRead listing(const QString &dir, qint64 maxEntries = kMaxListEntries)
    {
        FileRead r;
        r.path = dir;
        r.maxBytes = maxEntries;
        r.list = true;
        return r;
    }
    static constexpr qint64 kMaxListEntries = 4096;
    static constexpr int kMaxListDepth = 8;
};
struct FileEntry {
    QString path;  // relative to the listed directory, '/'-separated
    qint64 size = 0;
    bool operator==(const FileEntry &) const = default;
};
struct FileChunk {
    bool exists = false;
    qint64 size = -1;  // the file's size now (a listing: the number of entries)
    QByteArray data;  // bytes [offset, min(size, offset + maxBytes))
    QList<FileEntry> entries;  // a listing's files, sorted by path
};
// The listing of a directory on this machine, as FileRead::listing asks for it (the local
// executor's answer; `runs ingest` uses it too). exists == false when `dir` is not a directory.
FileChunk listDirectory(const QString &dir, qint64 maxEntries = FileRead::kMaxListEntries);

class Executor {
public:
    virtual ~Executor() = default;

    // "local", or the cluster's name (stored with the sweep so `sweep watch` can re-attach).
    virtual QString name() const = 0;
    // Where sweep directories go: the local data dir's runs/, or the cluster profile's remote root.
    virtual QString defaultRoot() = 0;

    // What `launch` would do, for `sweep submit --dry-run`: the rendered sbatch script, or the
    // local command lines. Throws when the batch cannot be launched (a refused value).
    virtual QByteArray describe(const LaunchBatch &batch) = 0;
    // Writes each task's trial.yaml and starts the batch. Returns one task id per task, in order
    // ("123_4" on Slurm, "<batch>.<i>" locally): what poll/cancel/logPaths take; or the batch held
    // back for a limit (Launched::held). The batch is either launched as a whole or not at all
    // (a hold or a throw leaves nothing queued). A run dir may hold
    // an earlier attempt (a retry resumes from its checkpoint): launch removes its exit.json
    // before queueing, so the verdict read after this attempt ends is this attempt's.
    virtual Launched launch(const LaunchBatch &batch) = 0;
    // Freezes a command sweep's program directory (its `workdir`, as the rendered command names
    // it) into <sweepDir>/code, and returns the snapshot's record (codesnapshot.h). Once per sweep:
    // a later call finds the snapshot there and returns its record unchanged, so every batch,
    // retry and follower of the sweep runs the code as it was at submission. Throws when the
    // directory cannot be frozen (not there, a full disk): the submission fails, nothing queued.
    virtual CodeSnapshot snapshotCode(const QString &sweepDir, const RenderedCommand &command) = 0;
    // The cluster's limits on what may be queued (Slurm: MaxArraySize, MaxJobCount, the user's
    // MaxSubmitJobs; asked once, then remembered). None by default: the local supervisor takes
    // any batch. May throw like the others; the runner then launches as if there were none.
    virtual SubmitLimits submitLimits() { return {}; }
    // The state of these tasks, in as few round trips as the executor can (Slurm: one squeue).
    virtual QHash<QString, TaskStatus> poll(const QStringList &taskIds) = 0;
    // Stops these tasks (SIGTERM first: the trainer checkpoints). Unknown or ended ids are ignored.
    virtual void cancel(const QStringList &taskIds) = 0;
    // Ends these tasks outright, for a hung task that did not end on cancel's SIGTERM: a stopped
    // (SIGSTOP) or wedged process does not act on TERM. Nothing is checkpointed. The default is
    // cancel (an executor whose cancel already ends everything).
    virtual void kill(const QStringList &taskIds) { cancel(taskIds); }
    // Reads several files at once (Slurm: one round trip for all of them). One chunk per read,
    // in order; a missing file gives exists == false.
    virtual QList<FileChunk> readFiles(const QList<FileRead> &reads) = 0;
    // The task's standard output and error files (`sweep logs`), which may not exist yet.
    virtual QStringList logPaths(const QString &sweepDir, const QString &taskId, const QString &runDir) = 0;
    // True where a retry can be placed on other nodes than the failed attempt's (Slurm): only then
    // is a failure blamed on a node a node fault (kept out, retried without using `retries`). This
    // machine's executor has one node: a failed health check here is the trial's failure.
    virtual bool choosesNodes() const { return false; }
    // The nodes a trial with these resources may be placed on (Slurm: its partition's nodes, one
    // sinfo the first time, then remembered), so the runner never excludes so many suspect nodes
    // that a trial can no longer fit (docs/sweeps.md "Bad nodes kept out"). Empty: not known, or
    // nothing to exclude from (the local executor's one node).
    virtual QStringList schedulableNodes(const SweepResources &resources)
    {
        Q_UNUSED(resources);
        return {};
    }
    // Of these nodes, those the scheduler runs no jobs on any more (Slurm: down, drained,
    // failing, not responding), each with the scheduler's word for its state: how the runner tells
    // a task Slurm requeued after a node failure from one requeued for another reason. One round
    // trip; empty where nothing is known (the local executor).
    virtual QHash<QString, QString> failedNodes(const QStringList &nodes)
    {
        Q_UNUSED(nodes);
        return {};
    }
};

}  // namespace orrery::core
