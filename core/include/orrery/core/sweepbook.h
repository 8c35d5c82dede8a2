// SPDX-License-Identifier: GPL-3.0-or-later
//
// Sweeps, trials, sweep leases and suspect nodes: TrackingStore's SweepBook facet (store.h).
#pragma once

#include "orrery/core/storetypes.h"

#include <QList>
#include <QString>

#include <optional>

namespace orrery::core {

// TrackingStore::Impl (core/src/storeimpl.h): the store's SQLite connection and caches.
struct StoreImpl;
class TrackingStore;

// The sweeps-and-trials part of a TrackingStore: sweeps, their trials' attempts and summaries, a
// sweep's best run, the followers' sweep leases and each cluster's suspect nodes (tables sweeps,
// trials, sweep_leases, suspect_nodes). It keeps no data of its own, only a pointer to its
// store's Impl (the SQLite connection), and a TrackingStore is the only way to get one: every
// TrackingStore is a SweepBook, so code that needs only sweeps can take a `SweepBook &`.
// Threads: as its TrackingStore (store.h), it belongs to the thread that uses that store.
class SweepBook {
public:
    // --- sweeps and trials -------------------------------------------------------------------
    SweepId createSweep(const Sweep &sweep);
    std::optional<Sweep> sweep(SweepId id) const;
    std::optional<Sweep> findSweep(const QString &ref) const;  // id or name
    QList<Sweep> sweeps() const;
    void setSweepState(SweepId id, const QString &state, const QString &arrayJobId = {});
    qint64 addTrial(const Trial &trial);
    void updateTrial(const Trial &trial);
    // updateTrial only while the stored attempt is still in `expectedState` (a compare-and-swap):
    // false, with nothing written, when another process changed it since it was read (a user
    // stopped or cancelled it between a follower's read and its decision).
    bool updateTrialIf(const QString &expectedState, const Trial &trial);
    QList<Trial> trials(SweepId sweep) const;  // every attempt, by index then attempt
    QList<Trial> attemptsOfRun(RunId run) const;  // a trial's attempts share its run, by attempt
    void setSweepMessage(SweepId id, const QString &message);
    // Every trial of the sweep, by index: one read of the attempts and one of the runs' latest
    // metrics (queryRuns), whatever the number of trials.
    QList<TrialSummary> trialSummaries(SweepId sweep) const;
    // The run with the best latest value of the sweep's metric, by its goal, among the runs
    // still in contention (running, queued or finished); only where none has the metric, among
    // all. A run stopped early, cancelled or failed is out: its latest value is from an earlier,
    // noisier step, and it has no final sample or checkpoint to offer.
    std::optional<RunRow> bestRun(SweepId sweep) const;

    // --- sweep leases: one follower acts on a sweep at a time ----------------------------------
    // Takes or renews the lease on `sweep` for `follower` until now + ttlMs, atomically (one
    // BEGIN IMMEDIATE transaction, so processes queue on it): granted when nobody holds it,
    // `follower` already does, or the holder's lease has expired (a crashed follower). Returns the
    // lease as it stands after the call: heldBy(follower) when granted, else the other holder's.
    // A renewal keeps acquiredMs; a lease taken anew (first, after a release or an expiry) starts
    // it again. `nowMs` 0: this machine's clock (tests pass their own).
    SweepLease acquireSweepLease(SweepId sweep, const QString &follower, qint64 ttlMs, qint64 nowMs = 0);
    // Ends the lease on `sweep` at once if `holder` still holds it (a follower known to be gone:
    // its process no longer exists), so the next acquireSweepLease takes it without waiting for
    // the TTL. Returns whether it did.
    bool expireSweepLease(SweepId sweep, const QString &holder);
    // The lease on `sweep` as stored (expired or not), or nullopt when nobody took one.
    std::optional<SweepLease> sweepLease(SweepId sweep) const;
    // Gives back `follower`'s lease on `sweep`, or on every sweep when `sweep` is 0 (a clean exit);
    // another follower's lease is left alone. Returns how many were released.
    int releaseSweepLeases(const QString &follower, SweepId sweep = 0);

    // --- suspect nodes: per cluster, the nodes kept out of submissions -------------------------
    // Adds `node` (or replaces its entry: a node that fails again gets the newer reason, source
    // and expiry). Throws for an empty cluster or node name.
    void addSuspectNode(const SuspectNode &node);
    // The cluster's suspects not expired at `nowMs` (0: this machine's clock), oldest first.
    QList<SuspectNode> suspectNodes(const QString &cluster, qint64 nowMs = 0) const;
    // Removes `node` from the cluster's list, or every node when `node` is empty; expired entries
    // of the cluster go too. Returns how many unexpired entries were removed.
    int clearSuspectNodes(const QString &cluster, const QString &node = {}, qint64 nowMs = 0);

private:
    friend class TrackingStore;  // it alone makes one, as its base (what store() relies on)
    explicit SweepBook(StoreImpl &impl) : d(&impl) { }
    ~SweepBook() = default;
    SweepBook(const SweepBook &) = delete;
    SweepBook &operator=(const SweepBook &) = delete;
    // The TrackingStore this is part of: trialSummaries and bestRun read runs with its queryRuns.
    const TrackingStore &store() const;

    using Impl = StoreImpl;
    Impl *const d;  // the store's connection and caches, owned by the TrackingStore
};

}  // namespace orrery::core
