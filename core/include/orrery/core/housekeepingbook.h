// SPDX-License-Identifier: GPL-3.0-or-later
//
// Run housekeeping (docs/store.md "Run housekeeping"): TrackingStore's HousekeepingBook facet
// (store.h).
#pragma once

#include "orrery/core/storetypes.h"

#include <QList>
#include <QString>
#include <QStringList>

#include <optional>

namespace orrery::core {

// TrackingStore::Impl (core/src/storeimpl.h): the store's SQLite connection and caches.
struct StoreImpl;

// The run housekeeping part of a TrackingStore: rename, note, tags removed, archive, delete and
// the experiment's baseline star. It keeps no data of its own, only a pointer to its store's Impl
// (the SQLite connection), and a TrackingStore is the only way to get one: every TrackingStore is
// a HousekeepingBook.
// Threads: as its TrackingStore (store.h), it belongs to the thread that uses that store.
class HousekeepingBook {
public:
    // --- run housekeeping (docs/store.md "Run housekeeping") ------------------------------------
    // The one implementation behind `orrery runs tag|note|rename|archive|delete|baseline` and the
    // window's run menu. Each call is one transaction; an unknown run id throws StoreError and
    // writes nothing.
    // A new display name (not empty; names need not be unique: ids and uuids are).
    void renameRun(RunId run, const QString &name);
    // The run's note (kNoteTag, MLflow's own key); empty text removes it.
    void setRunNote(RunId run, const QString &text);
    // Removes these tags (a key the run does not have is no error). setTags adds and overwrites.
    void removeTags(RunId run, const QStringList &keys);
    // Archives (runs.lifecycle_stage 'archived': hidden unless RunQuery::includeArchived) or
    // restores ('active') every run of `runs`.
    void archiveRuns(const QList<RunId> &runs, bool archived);
    // Every archived run's id (the window's tree marks their trials and leaves them out).
    QList<RunId> archivedRuns() const;
    // Deletes runs for good: the run row and with it its metrics (chunks, latest values), params,
    // tags, artifacts records, ingest offsets, phase records and MLflow mirror bookkeeping (the
    // schema's ON DELETE CASCADE). Its trials keep their attempts' history with no run
    // (trials.run_id ON DELETE SET NULL). Refuses, deleting nothing, when any of the runs belongs to
    // an attempt still queued, running, stopping or cancelling: the follower would write to it.
    // Files on disk (the run directory) are left alone.
    void deleteRuns(const QList<RunId> &runs);
    // Stars the run as its experiment's baseline (kBaselineTag = "true"), un-starring the
    // experiment's previous baseline in the same transaction; `baseline` false removes the star.
    void setBaseline(RunId run, bool baseline);
    // The experiment's starred baseline run, if any.
    std::optional<RunId> baselineOf(ExperimentId experiment) const;

private:
    friend class TrackingStore;  // it alone makes one, as its base, with its Impl
    explicit HousekeepingBook(StoreImpl &impl) : d(&impl) { }
    ~HousekeepingBook() = default;
    HousekeepingBook(const HousekeepingBook &) = delete;
    HousekeepingBook &operator=(const HousekeepingBook &) = delete;

    using Impl = StoreImpl;
    Impl *const d;  // the store's connection and caches, owned by the TrackingStore
};

}  // namespace orrery::core
