// SPDX-License-Identifier: GPL-3.0-or-later
//
// Ingest of run files into the tracking store: TrackingStore's IngestBook facet (store.h).
#pragma once

#include "orrery/core/storetypes.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QList>
#include <QString>
#include <QStringList>

#include <functional>
#include <optional>
#include <utility>

namespace orrery::core {

// TrackingStore::Impl (core/src/storeimpl.h): the store's SQLite connection and caches.
struct StoreImpl;
class TrackingStore;

// The ingest part of a TrackingStore: a run's events.jsonl and text metrics applied from their
// stored offsets (table ingest_state), exit.json, whole run directories, and the phase records
// that ingest keeps (run_phases). It keeps no data of its own, only a pointer to its store's Impl
// (the SQLite connection), and builds on the store's run calls (createRun, setTags, endRun). A
// TrackingStore is the only way to get one: every TrackingStore is an IngestBook.
// Threads: as its TrackingStore (store.h), it belongs to the thread that uses that store.
class IngestBook {
public:
    // --- ingest of events.jsonl --------------------------------------------------------------
    IngestState ingestState(RunId run, const QString &file) const;
    // Every file of the run with an ingest state, by name (the TensorBoard event files a listing
    // found are followed from here: runfiles.h).
    QList<std::pair<QString, IngestState>> ingestStates(RunId run) const;
    // Applies the complete lines of `data`, which starts at byte `fromOffset` of `file` (a
    // name relative to the run dir, e.g. "events.jsonl"). The points, the run's new state and
    // the new offset (after the last complete line) are committed in one transaction, so a
    // crash at any instant neither loses nor duplicates a point. If the stored offset is not
    // `fromOffset` (another writer ingested meanwhile) nothing is applied: applied == false.
    IngestResult ingestEvents(RunId run, const QString &file, qint64 fromOffset, QByteArrayView data);
    // Metric points the caller read from a text file of the run (a command's standard output,
    // command.h: parseMetricLines), stored with the file's new offset and line count in one
    // transaction. As ingestEvents: nothing is applied when the stored offset is not `fromOffset`.
    IngestResult ingestTextMetrics(RunId run, const QString &file, qint64 fromOffset, qint64 consumed,
                                   qint64 lines, const QList<std::pair<QString, MetricPoint>> &points);
    // Ingests a run directory (events.jsonl from its stored offset, then exit.json), creating the
    // run in `experiment` on first sight. `cancel` is polled between transactions.
    struct DirectoryIngest {
        RunId run = 0;
        bool created = false;
        IngestResult events;
        bool exited = false;
        // TensorBoard event files and a W&B offline run's .wandb file in the directory
        // (runfiles.h): their points are counted in events.points too.
        qint64 filePoints = 0;
        qint64 media = 0;
        QStringList notes;  // what was skipped or ignored there, one line each
    };
    // Applies exit.json (the trainer's last word: {"state", "reason", "step"}) to the run: its
    // end status, time and the tags orrery.exit_state / orrery.exit_reason. Returns the state
    // ("completed", "failed", "preempted"), or nullopt with *error when the text is not valid.
    std::optional<QString> applyExit(RunId run, const QByteArray &exitJson, qint64 timeMs, QString *error);
    // `progress` (optional) is told, after each chunk, how far into events.jsonl the store is and
    // the file's size, in bytes.
    DirectoryIngest ingestRunDirectory(const QString &runDir, const QString &experiment,
                                       const std::function<bool()> &cancel = {},
                                       const std::function<void(qint64 offset, qint64 size)> &progress = {});
    // The phase records of a run's trainer processes, by process start (ingest keeps them from
    // `phases` events; goodput.h reads them).
    QList<ProcessPhases> runPhases(RunId run) const;

private:
    friend class TrackingStore;  // it alone makes one, as its base (what store() relies on)
    explicit IngestBook(StoreImpl &impl) : d(&impl) { }
    ~IngestBook() = default;
    IngestBook(const IngestBook &) = delete;
    IngestBook &operator=(const IngestBook &) = delete;
    // The TrackingStore this is part of: ingest creates and ends runs and tags them with its calls.
    TrackingStore &store();

    using Impl = StoreImpl;
    Impl *const d;  // the store's connection and caches, owned by the TrackingStore
};

// The run directories under `root` (itself included): those holding events.jsonl or exit.json,
// a W&B offline run's run-*.wandb, or TensorBoard event files (unless a directory above it is a
// run directory: its event files belong to that run), sorted. What `orrery runs ingest DIR` and
// the GUI's import take.
QStringList findRunDirectories(const QString &root);

}  // namespace orrery::core
