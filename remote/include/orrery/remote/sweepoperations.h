// SPDX-License-Identifier: GPL-3.0-or-later
//
// Every sweep operation a person can ask for, written once (ARCHITECTURE.md "Operations: written
// once, called by every face"): check a spec, preview it for a target (trials, the priced worst
// case, the sbatch script or the local command lines), submit it (deploying the trainer where
// needed, with progress and cancel), follow, cancel, stop or retry a trial, find a trial's logs,
// and the sweep overview with the executor's price. `orrery sweep ...`, the monitor's keys and the
// window's launcher, sweep actions and log view call these and differ only in how they ask and how
// they show the result; none of them builds an Executors or a SweepRunner of its own.
//
// A SweepOperations owns what an operation needs: the executors (one connection per cluster,
// kept while it lives), the trainer's schema (loaded once, when an operation first needs it) and
// the runners that act, on the store the caller gives it. Like the runner, it is used from one
// thread (the one that owns the store connection); the progress callbacks run on that thread.
//
// Failures are OperationError (what went wrong, said for a person, and whether the request or the
// operation is at fault) at every method; nothing else escapes but std::bad_alloc.
#pragma once

#include "orrery/core/store.h"
#include "orrery/core/sweepoverview.h"
#include "orrery/core/sweepplan.h"
#include "orrery/core/sweepreport.h"
#include "orrery/core/sweeprunner.h"
#include "orrery/core/usage.h"
#include "orrery/remote/executors.h"

#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>

namespace orrery::remote {

// core::Error's kinds as the operations use them: Invalid (a spec error, no such sweep or trial,
// a refused action), Failed (a file unreadable, a refusal by Slurm), Cancelled (nothing was
// submitted), Unavailable (the cluster cannot be reached, the store cannot be written now: the
// same call may succeed later; a follower's tick reports it and tries again).
class OperationError : public core::Error {
public:
    OperationError(Kind kind, const QString &message) : core::Error(kind, message) { }
    Kind kind() const { return errorKind(); }
};

// A spec read and checked for submission: parsed and validated against the trainer's schema, its
// base config read, its first trials planned, and (where asked) the trainer's own checks of their
// configs.
struct CheckedSpec {
    core::PlanLoad load;
    // The trainer's cross-key refusals ("FILE:LINE: trial 3: ...": core::checkPlanWithTrainer).
    QList<core::SpecError> refusals;

    bool ok() const { return load.plan.has_value() && refusals.isEmpty(); }
    const core::SubmitPlan &plan() const { return *load.plan; }
    const QList<core::PlannedTrial> &trials() const { return load.trials; }
    // Everything wrong, as file:line problems (line 0: no line): what the launcher underlines and
    // the CLI prints, one per line.
    QList<core::SpecError> problems() const;
    // The same as lines for a terminal: "FILE:LINE: message", the others as they are (they name
    // their file).
    QStringList problemLines() const;
    // What the spec holds that Orrery accepts and ignores (W&B's `project`, `entity`, ...), as
    // file:line notes: shown by `sweep plan` and `submit` (and the launcher), never an error.
    QList<core::SpecError> warnings() const;
    // Whether the problems are the user's to fix in the spec (exit status 2) rather than an
    // unreadable file (exit status 1).
    bool problemIsUsage() const { return load.readError.isEmpty(); }
};

// What a submission would do, before anything is spent or connected to.
struct SweepPreview {
    core::PlanPreview plan;  // summary, trial table, a command sweep's commands
    core::WorstCase worst;
    std::optional<core::Price> price;  // the target cluster's, where its profile names one
    QString target;  // "" (this machine) or the cluster's name
    // The first batch as the executor would get it: the sbatch script (with "<sweep-id>" for the
    // directory submission names) or the local command lines; empty with launchProblem set when
    // it cannot be shown (no such profile, a value the script refuses).
    QByteArray launch;
    QString launchProblem;

    QString worstCaseText() const { return core::describeWorstCase(worst, price); }
    // `sweep submit --dry-run --json`: planJson, dry_run, worst_case, launch.
    QJsonObject toJson(const CheckedSpec &spec) const;
};

// How long-running operations report and stop: `say` gets one line per step ("Connecting to c1…",
// "c1: building the trainer — configure 40%", the runner's events while an action settles);
// `cancelled` is polled between steps. Both optional; both called on the operation's thread.
struct OperationProgress {
    std::function<void(const QString &line)> say;
    std::function<bool()> cancelled;
    // A cluster's trainer build while submit deploys it; unset: reported through `say`.
    std::function<void(const QString &cluster, const DeployProgress &)> deploy;

    void report(const QString &line) const
    {
        if (say)
            say(line);
    }
    bool isCancelled() const { return cancelled && cancelled(); }
};

// What cancel / stop / retry did, for the user: a line, and whether the trials have settled (a
// cancelled or stopped trial checkpoints before it ends; see Settle).
struct ActionOutcome {
    QString message;
    bool settled = true;  // false: still stopping when the wait ended (a follower finishes the record)
};

// Where a trial's logs are: its attempt and the executor's paths (stdout, stderr, then others).
struct TrialLogs {
    core::Sweep sweep;
    core::Trial attempt;
    QStringList paths;
    QString title;  // "lr-sweep · trial 3 · attempt 1"
};

// The one settle policy of an action that ends trials (cancel, stop): a trainer checkpoints
// before it exits, so its trial is recorded ended seconds later. A command (`orrery sweep cancel`)
// waits for that — it follows the sweep until the trials it ended are recorded, up to kSettleMs —
// so the store says "cancelled" when it returns. A face that shows the sweep live (the window,
// the monitor) returns at once and shows the trials ending as its refreshes read them (its own
// follower, or whichever follower holds the sweep, records them); blocking there would freeze it.
enum class Settle { Wait, Return };
constexpr int kSettleMs = 60'000;  // a trainer checkpoints on SIGTERM: seconds, not minutes

class SweepOperations {
public:
    struct Options {
        // SSH prompts of the connections this object opens (the CLI: the terminal's); unused
        // with `connections`.
        AuthCallbacks prompts;
        // The caller's connections (the window's ClusterHub: one per cluster, with its dialogs).
        Executors::ConnectionSource connections;
        // Who acts on the sweeps: the lease holder's id and TTL (core::followerForPace).
        core::Follower follower;
        Settle settle = Settle::Wait;
        // A schema the caller has already loaded (the launcher's, for checking as one types);
        // else loaded when first needed.
        std::optional<core::TrainerSchema> schema;
    };
    SweepOperations(core::TrackingStore &store, Options options);
    // Without a store: for what needs none (prepare, the executors, the schema). The others
    // throw OperationError(Failed).
    explicit SweepOperations(Options options);
    // Gives back the leases this object's runners took, so another follower acts at once.
    ~SweepOperations();
    SweepOperations(const SweepOperations &) = delete;
    SweepOperations &operator=(const SweepOperations &) = delete;

    core::TrackingStore &store() const;
    // The trainer's schema (`orrery-train --print-schema`); throws OperationError when there is
    // no trainer to ask.
    const core::TrainerSchema &schema();
    // The executor of a cluster ("": this machine); throws OperationError when it is unreachable.
    core::Executor &executor(const QString &cluster);
    // A sweep by id or name (the newest of that name); throws OperationError(Invalid) naming it.
    core::Sweep sweep(const QString &ref) const;
    core::Sweep sweep(core::SweepId id) const;

    // --- specs and submission --------------------------------------------------------------
    // Reads and checks a spec: the file, or (the launcher) the text typed for `path`.
    // `withTrainer`: also the trainer's own checks of the first trials' configs (about a second).
    // Static forms take the schema (a check needs no store: `sweep plan`, the launcher as one types).
    // `count` > 0: W&B's `--count N`, at most N trials (core::loadSubmitPlan): what a random or
    // bayes spec without run_cap needs.
    CheckedSpec checkSpecFile(const QString &path, bool withTrainer, int count = 0);
    static CheckedSpec checkSpecFile(const QString &path, const core::TrainerSchema &schema, bool withTrainer,
                                     int count = 0);
    static CheckedSpec checkSpecText(const QByteArray &yaml, const QString &path,
                                     const core::TrainerSchema &schema, bool withTrainer, int count = 0);
    // A recorded sweep's spec as it was submitted (the stored YAML, read for its spec file's
    // path so relative paths resolve as they did), checked again: what "Launch again" and
    // `orrery sweep relaunch` submit as a new sweep. `count` as for checkSpecFile.
    CheckedSpec checkStoredSpec(const core::Sweep &sweep, bool withTrainer, int count = 0);
    // What submitting a checked spec to `cluster` would do; connects to nothing, touches nothing.
    static SweepPreview preview(const CheckedSpec &spec, const QString &cluster);
    // Submits a checked spec: deploys the bundled trainer on a cluster that lacks it (a command
    // sweep needs none), connects, records the sweep and launches its first batch. Returns the
    // sweep's id. Cancelled between steps: OperationError(Cancelled), nothing submitted.
    core::SweepId submit(const CheckedSpec &spec, const QString &cluster,
                         const OperationProgress &progress = {});
    // What submit does before it touches the store: deploys the bundled trainer where the cluster
    // lacks it (`withTrainer`) and connects. The window runs it on a pool thread, then submit on
    // its store writer, so a first deploy (minutes) never holds the writer up.
    void prepare(const QString &cluster, bool withTrainer, const OperationProgress &progress = {});

    // --- sharing --------------------------------------------------------------------------
    // A sweep as one self-contained HTML file (core/sweepreport.h): read from the store, its
    // best runs' samples read where they are (a local copy, this machine's file, or the
    // cluster's over the executor's batched read; a cluster that cannot be reached leaves them
    // linked, said in the page), priced at the executor's price. `progress` says each part; cancelled:
    // OperationError(Cancelled).
    QByteArray report(const core::Sweep &sweep, core::ReportOptions options = {},
                      const OperationProgress &progress = {});

    // --- acting on a sweep (no lease needed; docs/sweeps.md "Acting on one trial") -----------
    // Cancels every queued or running trial; the sweep ends as cancelled. A cancel types no
    // params, so it needs no trainer (a laptop that only watches can cancel).
    ActionOutcome cancel(core::SweepId sweep, const OperationProgress &progress = {});
    // Stops one queued or running trial now, as early stopping would; the sweep goes on.
    ActionOutcome stopTrial(core::SweepId sweep, int trial, const QString &reason,
                            const OperationProgress &progress = {});
    // Runs one ended trial again: a new attempt resuming from its checkpoint.
    ActionOutcome retryTrial(core::SweepId sweep, int trial);
    // Where trial `trial`'s logs are: its latest attempt's, or attempt `attempt` (>= 0).
    TrialLogs logs(core::SweepId sweep, int trial, int attempt = -1);

    // --- following ---------------------------------------------------------------------------
    // One follow step of one sweep (`sweep watch`), by its executor's runner.
    core::TickReport tick(core::SweepId sweep);
    bool isDone(core::SweepId sweep);
    // One follow step of every active sweep of the store (the window's follower, the monitor).
    core::TickReport followActive();
    QString followerId() const { return m_options.follower.id; }
    // Gives back every lease now (the destructor does it too).
    void releaseLeases();

    // --- the overview --------------------------------------------------------------------------
    // The sweep at a glance with its executor's price (core::readSweepOverview).
    core::SweepOverview overview(const core::Sweep &sweep, core::SweepProgressTracker *tracker = nullptr,
                                 bool goodput = false) const;

private:
    core::SweepRunner &runner(const QString &cluster, bool needSchema);
    static bool runsOwnCommand(const core::Sweep &sw);
    // Follows the sweep until `settled` holds or kSettleMs pass (Settle::Wait), reporting events.
    bool settle(core::SweepId sweep, const QString &cluster, const std::function<bool()> &settled,
                const OperationProgress &progress);

    core::TrackingStore *m_store = nullptr;
    Options m_options;
    std::unique_ptr<Executors> m_executors;
    std::optional<core::TrainerSchema> m_schema;
    QString m_schemaProblem;
    std::map<QString, std::unique_ptr<core::SweepRunner>> m_runners;  // by cluster
};

// The local trainer's schema (`orrery-train --print-schema`); OperationError(Failed) saying why
// when there is no trainer to ask.
core::TrainerSchema loadTrainerSchema();

// The price per GPU-hour of where a sweep runs ("": this machine, which has none).
std::optional<core::Price> executorPrice(const QString &cluster);

}  // namespace orrery::remote
