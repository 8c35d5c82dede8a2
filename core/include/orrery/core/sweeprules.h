// SPDX-License-Identifier: GPL-3.0-or-later
//
// The sweep runner's rules (sweeprunner.h) as plain functions over plain data: how an attempt
// ended (its verdict) and over what span, whether an attempt that failed or was preempted is
// resubmitted, which running trials early stopping stops, and how a sweep ends. The runner reads
// the store and the executor, asks these, and carries out what they say (writes, launches,
// cancels, the events it reports); tests/core/tst_sweeprules.cpp pins them case by case.
//
// Pure functions: no store, no executor, no clock (the caller passes the time in); safe from
// any thread.
#pragma once

#include "orrery/core/earlystop.h"
#include "orrery/core/executor.h"
#include "orrery/core/states.h"
#include "orrery/core/store.h"
#include "orrery/core/sweepspec.h"
#include "orrery/core/usage.h"

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QMap>
#include <QString>

#include <cstdint>
#include <optional>
#include <utility>

namespace orrery::core {

// EX_TEMPFAIL ("try again"): what the trainer exits with on SIGTERM, and what a command of the
// user's own exits with to say it was preempted.
constexpr int kExitPreempted = 75;

// --- an attempt's verdict --------------------------------------------------------------------

// What a tick knows of an attempt whose task ended, or that the executor has no record of.
struct AttemptOutcome {
    TaskStatus status;  // the executor's word: Ended or Unknown
    // exit.json's bytes where the trainer wrote one and the tick read it (possibly empty or
    // torn); nullopt where there is none or it was not read.
    std::optional<QByteArray> exitJson;
    bool readAnswered = true;  // false: the tick's batched read failed, exit.json was not looked for
    TrialState before = TrialState::Running;  // the attempt's state as the tick read it
    // The nodes the attempt ran on (the executor's word, else what the trial recorded): whom a
    // node-level failure without a named node blames.
    QStringList nodes;
};

// --- bad nodes (docs/sweeps.md "Bad nodes kept out") -------------------------------------------

// How long an automatic suspect stays out of submissions: a day, long enough for an admin to see
// the node drained or fixed, short enough that a transient fault does not shrink the cluster
// for good. The user's own entries (`orrery cluster nodes --add`) never expire.
constexpr qint64 kSuspectExpiryMs = 24 * 3600 * 1000LL;
// How many times a trial may be preempted (exit 75, Slurm PREEMPTED) and come back; preemptions
// do not use up `retries`.
constexpr int kMaxPreemptions = 20;
// How many times a trial may fail on a bad node and come back without using up `retries` (as
// kMaxPreemptions bounds preemptions): past it, a node fault counts as an ordinary failure.
constexpr int kMaxNodeFaults = 5;

// A failure blamed on nodes rather than on the trial.
struct NodeFault {
    QStringList nodes;  // the nodes blamed; never empty
    // "health" (the health check failed), "node" (the node itself: a rank's CUDA/NCCL device
    // error, a node-level OOM-kill, as exit.json's "cause" says), "device" (exit.json's reason is
    // a device fault: deviceFaultWords), "node-fail" (Slurm's NODE_FAIL), "oom" (Slurm's
    // OUT_OF_MEMORY on a one-node attempt).
    QString cause;
    QString reason;  // what happened, in words ("health check failed on node2: ...")
};
// Which failures are node-level, and which node: exit.json with state failed and "cause" health
// or node (its "node", else the attempt's node when it had one), or without a cause a reason that
// names a device fault (deviceFaultWords: the bundled trainer writes the exception's text, and
// LibTorch's and NCCL's words for a broken GPU are these); with no exit.json, Slurm's NODE_FAIL
// (the attempt's nodes) or OUT_OF_MEMORY on a one-node attempt. nullopt for anything else, and
// where no node can be named.
std::optional<NodeFault> nodeFault(const AttemptOutcome &outcome);
// The words of a failure that is the GPU's or the node's, not the program's: CUDA's
// "uncorrectable ECC error encountered", "unspecified launch failure", "GPU has fallen off the bus",
// "all CUDA-capable devices are busy or unavailable", "no CUDA-capable device is detected", NCCL's
// "unhandled cuda error" and "unhandled system error", an Xid. Not "out of memory" nor "an illegal
// memory access" (a model too large, a bug: the trial's own). Empty when `reason` names none.
QString deviceFaultWords(const QString &reason);
// The reason an attempt that failed on a bad node records: "node fault on node2 (health): <why>".
// isNodeFault recognises it in a stored attempt (so the retry rule counts it apart, after a
// restart too, without a column of its own).
QString nodeFaultReason(const NodeFault &fault);
bool isNodeFault(const Trial &attempt);

// Empty when `node` can be a Slurm node name (letters, digits, '.', '_', '-'; not starting with
// '-'), else why not: what `orrery cluster nodes --add` and sbatch --exclude accept.
QString nodeNameError(const QString &node);
// The user's own suspect (`orrery cluster nodes --add`, the Cluster tab): source "user", never
// expiring. Throws std::invalid_argument naming what is wrong: a node name Slurm could not have,
// an empty reason.
SuspectNode userSuspect(const QString &cluster, const QString &node, const QString &reason, qint64 nowMs);

// Which suspects a submission may exclude: those in `schedulable` (the partition's nodes; a name
// outside it would make sbatch refuse the job), at most as many as leave `needed` nodes (the
// trial's `nodes`), the oldest dropped first. `suspects` oldest first; `schedulable` empty: not
// known, every suspect is excluded.
struct Exclusion {
    QStringList exclude;  // for LaunchBatch::excludeNodes
    QStringList dropped;  // suspects left in so the trial still fits
    QString note;  // empty, or why some suspects were not excluded
};
Exclusion excludedNodes(const QList<SuspectNode> &suspects, const QStringList &schedulable, int needed);

struct AttemptVerdict {
    // How the task ended: completed, failed, preempted or lost.
    TrialState ended = TrialState::Failed;
    // What the attempt is recorded as: `ended`, or stopped (cancelled) when it was being stopped
    // (cancelled): the trainer's "preempted" was then our own SIGTERM. Such an attempt keeps the
    // reason it was stopped for and is never resubmitted.
    TrialState state = TrialState::Failed;
    QString reason;  // exit.json's "reason", or what the executor said; empty for a clean end
    QString step;  // exit.json's "step" ("" without one)
    std::optional<qint64> exitMs;  // exit.json's "t" (unix ms) where it wrote a positive one
    // How the run ends where no exit.json records it (TrackingStore::applyExit records the end of
    // a readable one; an unreadable one ends nothing): nullopt when there was an exit.json.
    std::optional<RunStatus> runEnd;

    // Stopped or cancelled by us: settled as such, not judged by how the task ended.
    bool settled() const { return state != ended; }
    // The reason as the trial records it: "reason (step N)", "step N" or "reason".
    QString exitReason() const;
};

// The verdict rule, for an attempt that was queued, running, stopping or cancelling:
// - exit.json decides where the trainer wrote it: its "state" completed or preempted, anything
//   else (and an unreadable file) failed;
// - else, for a task that ended, its exit status: 0 completed, 75 (kExitPreempted) or Slurm's
//   PREEMPTED preempted, anything else (NODE_FAIL, TIMEOUT, CANCELLED, no status) failed;
// - else (the executor has no record of it) lost;
// - an attempt being stopped or cancelled settles as stopped or cancelled, however it ended.
// nullopt: nothing known yet (no record of the task, and the read failed): ask again next tick.
std::optional<AttemptVerdict> attemptVerdict(const AttemptOutcome &outcome);

// --- an attempt's time span (docs/sweeps.md "GPU-hours and cost") -----------------------------

// When an attempt first seen running started: `elapsed` before now (usage.h runningSinceMs), but
// never before its submission (nor after now).
qint64 runningAttemptStartMs(qint64 submittedMs, std::optional<qint64> elapsedMs, qint64 nowMs);
// The last event of this attempt's trainer: the newest update of the run's processes (TrackingStore::
// runPhases) that started at or after the attempt's submission (earlier ones are earlier attempts').
// 0: none.
qint64 attemptLastEventMs(const QList<ProcessPhases> &phases, qint64 submittedMs);
// The span of an attempt that ended (usage.h endedAttemptSpan): it ends no earlier than its
// trainer's last event and starts no earlier than its submission (Slurm's elapsed is whole
// seconds, and the last poll's for a job that has ended).
AttemptSpan endedSpan(qint64 startedMs, qint64 submittedMs, std::optional<qint64> elapsedMs,
                      std::optional<qint64> exitMs, const QList<ProcessPhases> &phases, qint64 nowMs);

// A task the executor still has (queued or running): the attempt as it now stands.
struct LiveAttempt {
    Trial trial;  // with the executor's detail, its start once seen running, running once running
    bool startedRunning = false;  // queued until this poll, running now
    bool changed = false;  // something to write
    // Running on these nodes until this poll, queued again now: the scheduler requeued the task
    // itself (Slurm's --requeue, after a node failure or a preemption). The runner asks whether
    // those nodes failed (Executor::failedNodes). The attempt forgets them (so it asks once) and
    // says so in its detail.
    QStringList requeuedFrom;
};
LiveAttempt liveAttempt(const Trial &read, const TaskStatus &status, qint64 nowMs);

// --- resubmission ----------------------------------------------------------------------------

// The trial's earlier attempts that the retry rule counts: from its latest attempt a user
// launched (SweepRunner::retryTrial) on, so a user's retry starts the budget afresh and is never
// counted against it. `attempts` may hold other trials' attempts too.
struct AttemptCounts {
    int failures = 0, preemptions = 0;
    int nodeFaults = 0;  // failures blamed on a bad node (isNodeFault): not in `failures`
    int hangs = 0;  // attempts the runner ended as hung (isHungAttempt)
    QString previousReason;  // the last counted failure's
};
AttemptCounts countEarlierAttempts(const QList<Trial> &attempts, const Trial &ended);

// The retry rule for `ended`, the latest attempt of its trial, which ended `verdict` (failed,
// lost or preempted) with ended.exitReason: empty when the runner resubmits it, else why not.
// Preemptions do not use up `retries` but are limited to kMaxPreemptions (above); nor do
// failures on a bad node (isNodeFault), limited to kMaxNodeFaults; a failure is retried up to
// `retries` times, but not after failing the same way twice.
QString whyNotResubmitted(const QList<Trial> &attempts, const Trial &ended, TrialState verdict, int retries);

// The attempt after `t`: the same trial, run dir, params and config (so it resumes from the
// trial's checkpoint), nothing of how `t` went.
Trial nextAttempt(const Trial &t);

enum class Resubmit : std::uint8_t {
    Yes,  // launch `next`
    GivenUp,  // the retry rule says no (`why`)
    OverBudget,  // the rule says yes, but the sweep's budget could be exceeded
};
struct ResubmitDecision {
    Resubmit action = Resubmit::Yes;
    QString why;  // GivenUp: whyNotResubmitted's reason
    // What the ended attempt is recorded as: its verdict, but failed for a preempted attempt that
    // is not resubmitted; and its reason, with "; not resubmitted: the budget could be exceeded".
    TrialState state = TrialState::Failed;
    QString exitReason;
    Trial next;  // Yes: the attempt to launch
};
// Whether `ended` (the latest attempt of its trial, recorded with its verdict, failed, lost or
// preempted, and its reason) is resubmitted. `budgetRoom`: how many more attempts the sweep's
// budget lets the runner launch now, less those it already resubmits this tick (a large number
// without a budget).
ResubmitDecision decideResubmission(const QList<Trial> &attempts, const Trial &ended, int retries,
                                    int budgetRoom);

// Whether the runner resubmits `latest` itself, so a user's retry of it would launch a second
// trainer in its run dir (SweepRunner::retryTrial refuses it while a follower holds the lease):
// it failed, was lost or preempted, was launched (has a task), and the retry rule says yes. A
// trial out of preemptions is stored failed: the rule given "failed" would misjudge it.
bool runnerResubmits(const QList<Trial> &attempts, const Trial &latest, int retries);

// --- hangs (docs/sweeps.md "Hangs") ---------------------------------------------------------

// `hang_timeout: auto`: an attempt may go this many times its longest gap between two signs of
// progress seen so far without any, and never less than the floor: 5 minutes covers a checkpoint
// write or an evaluation pass of the bundled trainer's configs with room to spare.
constexpr qint64 kHangFloorMs = 5 * 60'000;
constexpr int kHangPaceFactor = 5;
// `auto`: how long an attempt may run before its first progress (LibTorch, the rendezvous, the
// model and the checkpoint load, a data loader's warm-up). An explicit hang_timeout T allows 2 T.
constexpr qint64 kAutoStartupGraceMs = 15 * 60'000;
// After a hung attempt was asked to end (SIGTERM, after its stacks were asked for), how long it
// has before it is killed outright (SIGCONT + SIGKILL here, a plain scancel on Slurm).
constexpr qint64 kHangKillGraceMs = 10'000;
// How many times one trial may hang and be resumed; hangs do not use up `retries` (a hang is
// usually the node's or the interconnect's fault, as a preemption is the scheduler's).
constexpr int kMaxHangs = 3;
// What a hung attempt's exit reason starts with: the runner's mark, read back by the retry rule.
inline constexpr char kHungPrefix[] = "hung: ";

struct HangLimits {
    qint64 progressMs = kHangFloorMs;  // the longest allowed gap between two signs of progress
    qint64 startupMs = kAutoStartupGraceMs;  // the longest allowed wait for the first one
    QString rule;  // how the limit came about: "hang_timeout 10m", "hang_timeout auto: ..."
};
// The limits for one attempt: the spec's hang_timeout (nullopt: auto), and the longest gap
// between two signs of its progress this follower has seen (0: none yet).
HangLimits hangLimits(std::optional<qint64> hangTimeoutMs, qint64 longestGapMs);

// True when the runner marked the attempt hung (its exit reason starts with kHungPrefix).
bool isHungAttempt(const Trial &t);

struct Hang {
    enum class Action : std::uint8_t {
        End,  // newly hung: mark it, ask for its stacks, end it (SIGTERM)
        Kill,  // marked before and still running kHangKillGraceMs later: kill it outright
    };
    int trial = 0;  // index
    Action action = Action::End;
    QString message;  // End: "no progress for 12m (hang_timeout 10m)"
};
// The running attempts among `latest` (the latest attempt of each trial) that are hung now. An
// attempt is judged only once it runs (startedMs set): from its last progress (progressMs, where
// it is not before its start) against limits.progressMs, or, with none yet, from its start
// against limits.startupMs. `longestGapMs`: per trial index (hangLimits). A marked attempt
// (isHungAttempt) is not judged again; it is killed once kHangKillGraceMs passed beyond its limit.
QList<Hang> hungAttempts(const QMap<int, Trial> &latest, std::optional<qint64> hangTimeoutMs,
                         const QHash<int, qint64> &longestGapMs, qint64 nowMs);

// --- array limits (docs/sweeps.md "Array limits") ----------------------------------------------

// How many of `waiting` attempts one launch may hand the executor now: one batch is one array
// with indices 0..n-1, so n stays within MaxArraySize (Slurm refuses an index at or above it),
// and the sweep's `active` tasks (queued or running) count against the user's submit limit and
// the cluster's job count. The rest stay pending in the store for a later tick. `*why` (where
// given) names the limit that holds some back, empty when all fit.
int submitRoom(const SubmitLimits &limits, int active, int waiting, QString *why = nullptr);

// How many pending attempts a later tick launches: enough to bring the sweep's active tasks up to
// max_concurrent (each batch's array carries %max_concurrent, so a later batch launched while an
// earlier one still runs would let up to twice that run at once; topping up to max_concurrent keeps
// the total within it), within `budgetRoom` and submitRoom. 0: none now.
int laterBatchRoom(int maxConcurrent, int active, int budgetRoom, const SubmitLimits &limits, int waiting,
                   QString *why = nullptr);

// --- early stopping --------------------------------------------------------------------------

struct EarlyStop {
    int trial = 0;  // index
    QString reason;  // the rule's (StopDecision::reason): the run's tag orrery.stopped_early
    QString exitReason;  // what the stopping attempt records: "stopped early: <reason>"
};
// True when the spec stops trials early (early_terminate and a metric to judge).
bool stopsEarly(const SweepSpec &spec);
// The running trials the spec's early_terminate rule stops now. `latest`: the latest attempt of
// each trial, by index; `attempts`: every attempt of the sweep; `points`: each trial's values of
// the sweep's metric (step, value), in logging order, by index (trials without any are left
// out). A trial a user retried still counts in the comparisons but is not stopped: the user's
// call overrides the rule's (else a trial retried after an early stop would be stopped again on
// its first tick, its history unchanged).
QList<EarlyStop> earlyStops(const SweepSpec &spec, const QMap<int, Trial> &latest,
                            const QList<Trial> &attempts,
                            const QHash<int, QList<std::pair<qint64, double>>> &points);

// --- metric.target ---------------------------------------------------------------------------

// W&B's metric.target (its sweep config schema: "the sweep will finish once any run reaches the
// goal for this value"; its docs: the sweep creates no new runs once a run reached it). Reached:
// a completed trial's last value of the metric at or below the target (minimize), at or above it
// (maximize); running trials go on. `latest`: the latest attempt of each trial by index;
// `lastValues`: each trial's last value of the sweep's metric (missing or NaN: none). The lowest
// such index; nullopt without a target or while none reached it.
struct TargetHit {
    int trial = 0;
    double value = 0;
    QString message;  // "metric.target reached: trial 3 completed with eval/loss 0.12 (target <= 0.15)"
};
std::optional<TargetHit> targetReached(const SweepSpec &spec, const QMap<int, Trial> &latest,
                                       const QHash<int, double> &lastValues);
// What a reached target stops: the trials handed to the executor and not started yet (queued),
// as W&B creates no new run; by index.
QList<int> notStartedTrials(const QMap<int, Trial> &latest);

// --- the sweep's verdict ---------------------------------------------------------------------

// The latest attempts of a sweep's trials, counted for the sweep's verdict.
struct SweepTally {
    int active = 0, running = 0, completed = 0, failed = 0, stopped = 0, cancelled = 0;
    int pending = 0;  // recorded, not yet handed to the executor (held by its limits): still to launch
    qsizetype trials = 0;
};
// Failed counts every ended attempt that is not completed, stopped or cancelled (failed, lost,
// preempted).
SweepTally tallyTrials(const QMap<int, Trial> &latest);

struct SweepVerdict {
    SweepState state = SweepState::Unknown;
    QString message;
};
// The sweep-verdict rule: how a sweep in state `now` ends once none of its trials is active and
// none is left to launch, with its one-line summary; nullopt while it goes on. A cancelled sweep
// ends cancelled; one where no trial completed or was stopped early, failed; else finished.
// Trials still to launch: bayes suggests up to run_cap; grid and random under a budget launch the
// `planned` trials their first batch held back. `budgetStop`: why the budget launches no more
// (BudgetState::explain), empty while it allows the next. `targetStop`: TargetHit::message where
// metric.target was reached (then nothing more is launched, and the message leads with it).
std::optional<SweepVerdict> sweepVerdict(const SweepTally &c, const SweepSpec &spec, SweepState now,
                                         int planned = 0, const QString &budgetStop = {},
                                         const QString &targetStop = {});

}  // namespace orrery::core
