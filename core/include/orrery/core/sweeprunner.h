// SPDX-License-Identifier: GPL-3.0-or-later
//
// The sweep runner: from a parsed spec to a finished sweep (docs/sweeps.md "Running a sweep").
// It submits the trials through an Executor, and on each tick follows every active trial of the
// sweeps it is given: one poll of the executor for all of them, one batched read of their
// events.jsonl from the stored offsets, ingest into the store, then the decisions — resolve the
// attempts that ended (exit.json, else the executor's word), resubmit failed and preempted ones
// resuming from their checkpoints, stop bad trials early, suggest the next bayes trials.
//
// Everything it knows lives in the store, so any process can pick a sweep up where another left
// it (`orrery sweep submit` returns at once; `sweep watch`, the monitor and the GUI re-attach).
// Several may follow one sweep at once: each reads and ingests (a compare-and-swap on the
// offset), but only the holder of the sweep's lease in the store acts on it — resolves ended
// attempts, resubmits, stops early, suggests, ends the sweep; the others report who acts. The
// user's own actions (cancel, stopTrial, retryTrial) need no lease: a follower writes its decisions
// on an attempt only over the state it read, so it never undoes them.
//
// Threads: a runner uses its store and executor from the calling thread only (one runner per
// thread, each with its own TrackingStore).
#pragma once

#include "orrery/core/executor.h"
#include "orrery/core/notice.h"
#include "orrery/core/store.h"
#include "orrery/core/sweepplan.h"
#include "orrery/core/sweeprules.h"  // kMaxPreemptions, the rules the runner applies
#include "orrery/core/sweepspec.h"

#include <QDateTime>
#include <QList>
#include <QString>
#include <QStringList>

#include <functional>
#include <memory>

namespace orrery::core {

// How long a follower's lease on a sweep lasts without a renewal (each tick renews it): four
// times `sweep watch`'s slowest default pace (15 s), so a quiet holder keeps it, and a crashed
// one's sweep is taken over by another follower within a minute.
constexpr qint64 kSweepLeaseTtlMs = 60'000;

// Who follows: the lease holder's id in the store, and how long its leases last.
struct Follower {
    QString id;  // empty: processFollowerId()
    qint64 leaseTtlMs = kSweepLeaseTtlMs;  // keep it a few times the caller's slowest tick interval
};
// The one lease policy: a follower that ticks at most every `slowestTickMs` holds its leases for
// four of those (at least kSweepLeaseTtlMs), so a quiet holder keeps them and a crashed one's are
// taken over soon after. `sweep watch`, the monitor and the window's follower all take theirs here.
Follower followerForPace(qint64 slowestTickMs);

// This process's follower id, "<host>:<pid>:<8 random hex digits>", the same for its lifetime
// (so successive ticks, and followActiveSweeps' runner per call, renew the same lease).
QString processFollowerId();
// Whether the follower with this id is known to be gone: it ran on this machine (its id's host)
// and its process no longer exists. A stopped process (a closed laptop lid, SIGSTOP) is not gone:
// its lease lapses after the TTL, and the fence keeps it from acting on a stale read when it
// wakes. Another machine's follower is never known to be gone.
bool followerIsGone(const QString &followerId);

struct TickReport {
    int active = 0;  // attempts queued or running after the tick
    int running = 0;
    qint64 points = 0;  // metric points ingested
    qint64 bytes = 0;  // event bytes read
    bool moreToRead = false;  // a file had more than one read's worth: tick again soon
    double ingestMs = 0;  // of the tick, the time spent storing what was read
    QStringList events;  // what happened, one line each, for the user ("trial 3 failed: ...")
    QStringList errors;  // what went wrong talking to the executor; retried next tick
    // What a person is told about (notice.h): a sweep ended, a trial failed for good, a hang was
    // ended, a budget stopped a sweep. Only the lease holder decides, so each comes once.
    QList<Notice> notices;
    // Sweeps this tick only read because another follower holds their lease: its holder and
    // expiry. Their trials are counted in active/running, nothing was decided for them.
    QList<SweepLease> followedElsewhere;
};

// How often a follower ticks (`sweep watch`, the GUI's follower): at once while a file has more
// to read, `fastMs` after a tick in which something happened, then doubling every two quiet
// ticks up to `slowMs`. `quietTicks` is the caller's count, carried from tick to tick.
struct TickPace {
    int fastMs = 1000, slowMs = 30000;
};
int nextTickIntervalMs(const TickReport &last, const TickPace &pace, int &quietTicks);

class SweepRunner {
public:
    // The schema types the stored trial params when a sweep is picked up again (bayes needs
    // them); it is the local trainer's, which is assumed to match the cluster's.
    SweepRunner(TrackingStore &store, Executor &executor, TrainerSchema schema, Follower follower = {});
    // Leaves the leases in place: a follower that stops following calls releaseLeases().
    ~SweepRunner();

    // This runner's follower id (the lease holder's name in the store).
    QString followerId() const;
    // Gives back every sweep lease this follower holds, so another follower acts at once rather
    // than after the lease expires. Call it on a clean exit (Ctrl-C included).
    void releaseLeases();

    // Creates the sweep, its runs and trials in the store, and launches the first trials (grid
    // and random: all of them in one batch; bayes: the first max_concurrent). Throws
    // std::runtime_error when the executor refuses; the sweep is then recorded as failed.
    SweepId submit(const SubmitPlan &plan);
    // What submit would launch (the executor's description of the first batch).
    QByteArray describe(const SubmitPlan &plan);

    // One follow step for these sweeps (all on this runner's executor). Takes or renews the lease
    // of each active sweep first; sweeps another follower holds are read and ingested only.
    TickReport tick(const QList<SweepId> &sweeps);
    // Cancels every active attempt of the sweep; the sweep ends as cancelled.
    void cancel(SweepId sweep);
    // Stops one queued or running trial now, as early stopping does: its task is cancelled (the
    // trainer checkpoints on SIGTERM), the attempt becomes stopping ("stopped by the user", then
    // ": reason" when one is given) and the next tick settles it as stopped; its run is tagged
    // orrery.stopped_early = "by the user". The sweep goes on. Like cancel, it needs no lease
    // (docs/sweeps.md "Acting on one trial"). Throws std::runtime_error naming what is wrong: no
    // such sweep or trial, or a trial that is not queued or running ("trial 3 is completed; only
    // a queued or running trial can be stopped").
    void stopTrial(SweepId sweep, int trial, const QString &reason = {});
    // Runs one failed, stopped, cancelled or lost trial again now: a new attempt through the same
    // launch as an automatic retry, resuming from the trial's checkpoint (--resume auto). A sweep
    // that had ended runs again until it ends anew. The attempt is marked as the user's
    // (Trial::userRetry): the runner's retry budget (`retries`) counts from it, so a user's retry
    // starts the budget afresh and never uses it up; early stopping leaves the trial alone. No
    // lease needed. Throws std::runtime_error for no such sweep or trial, a trial that is active
    // or completed, a sweep being cancelled, a failed trial whose follower is resubmitting it
    // anyway, or an executor that refuses the launch (the attempt is then recorded as failed).
    void retryTrial(SweepId sweep, int trial);

    // True when the sweep has nothing active and nothing left to launch.
    bool isDone(SweepId sweep) const;
    // The tick interval to use next: fast while trials start, slower as they run long
    // (from `fast` to `slow`, doubling after each quiet tick). Configurable by the caller.
    using Pace = TickPace;
    int nextIntervalMs(const TickReport &last, const Pace &pace);

private:
    struct Impl;
    std::unique_ptr<Impl> d;
};

// One follow step for every sweep of the store that is still going, grouped by executor: one
// runner tick (one poll, one batched read) per cluster, and one for this machine. `executorFor`
// gives the executor of a sweep's cluster ("" for local), or nullptr with *problem set (those
// sweeps are skipped and the problem reported in errors). What the monitor and the GUI call; on
// exit they call store.releaseSweepLeases(follower id).
TickReport
followActiveSweeps(TrackingStore &store, const TrainerSchema &schema,
                   const std::function<Executor *(const QString &cluster, QString *problem)> &executorFor,
                   const Follower &follower = {});

}  // namespace orrery::core
