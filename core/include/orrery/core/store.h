// SPDX-License-Identifier: GPL-3.0-or-later
//
// The tracking store: experiments, runs, params, tags, metrics, artifacts, sweeps and trials in
// one SQLite file, with MLflow's concepts and names where they fit (docs/store.md).
//
// Ownership and threads: a TrackingStore is one SQLite connection and belongs to the thread that
// uses it (open one per thread; readers never block the writer in WAL mode). Several processes
// may open the same file; writes take SQLite's write lock up front (BEGIN IMMEDIATE) and wait on
// a busy timeout, so two writers queue instead of failing with "database is locked".
//
// Its calls come in parts, each a class of its own that TrackingStore is (a public base), so code
// that needs one part takes it by reference: sweeps and trials (SweepBook, sweepbook.h), ingest of
// run files (IngestBook, ingestbook.h) and run housekeeping (HousekeepingBook, housekeepingbook.h).
// The ids, errors and value types are in storetypes.h.
#pragma once

#include "orrery/core/housekeepingbook.h"
#include "orrery/core/ingestbook.h"
#include "orrery/core/storetypes.h"
#include "orrery/core/sweepbook.h"

#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>

#include <functional>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace orrery::core {

class TrackingStore : public SweepBook, public IngestBook, public HousekeepingBook {
public:
    enum class Mode { ReadWrite, ReadOnly };

    // Opens (creating it and its directory if needed) and migrates to the current schema. A file
    // written by a newer Orrery opens read-only: readOnlyReason() says so, and writes throw.
    static std::unique_ptr<TrackingStore> open(const QString &path, Mode mode = Mode::ReadWrite);
    ~TrackingStore();

    static int currentSchemaVersion();
    int schemaVersion() const;
    QString path() const;
    bool isReadOnly() const;
    QString readOnlyReason() const;

    // --- experiments and runs (MLflow) -------------------------------------------------------
    ExperimentId ensureExperiment(const QString &name);
    std::optional<Experiment> experiment(const QString &name) const;
    QList<Experiment> experiments() const;
    void setExperimentTag(ExperimentId id, const QString &key, const QString &value);

    RunId createRun(ExperimentId experiment, const QString &name, qint64 startTimeMs = 0,
                    const QString &runDir = {});
    void endRun(RunId run, RunStatus status, qint64 endTimeMs = 0);
    void setRunStatus(RunId run, RunStatus status);
    // When the run started, as an imported run's own records say (a W&B run's start_time).
    void setRunStart(RunId run, qint64 startTimeMs);
    // A run by numeric id, uuid, uuid prefix (at least 6 hex digits) or exact name.
    std::optional<Run> findRun(const QString &ref) const;
    std::optional<Run> run(RunId id) const;
    std::optional<RunId> runByDirectory(const QString &runDir) const;
    RunDetails details(RunId run) const;

    // Params are immutable once logged (as MLflow): logging a different value for a logged key
    // throws; the same value again is fine. Tags overwrite.
    void logParams(RunId run, const QList<std::pair<QString, QString>> &params);
    void setTags(RunId run, const QList<std::pair<QString, QString>> &tags);
    void logMetrics(RunId run, const QList<std::pair<QString, MetricPoint>> &points);
    void addArtifact(RunId run, const Artifact &artifact);
    // A run's sample artifacts of one kind ("video": the sample clips; "image": their contact
    // sheets), by step. Artifacts announced without a step are left out.
    QList<Artifact> samples(RunId run, const QString &kind = QStringLiteral("video")) const;
    // The sample of `kind` nearest to `step` (the earlier one on a tie), or nullopt.
    std::optional<Artifact> sampleNear(RunId run, qint64 step,
                                       const QString &kind = QStringLiteral("video")) const;
    // Records that `path` (as announced) of `run` now has a local copy (a cluster's sample
    // fetched into the cache), with its size. False when the run has no such artifact.
    bool setArtifactLocalCopy(RunId run, const QString &path, const QString &localPath, qint64 size);
    // The cluster profile a run was trained on (its sweep's), or empty: this machine.
    QString clusterOf(RunId run) const;

    // The runs `query` selects, with their latest metrics, tags and the params it names.
    // `withoutParams`, when given, is called once with the rows before their params are in (in
    // the same read transaction: it may read the store): a table of every param of thousands of
    // runs is read beside it on a connection of its own, so work that needs the runs and their
    // metrics but no params (the window's sweep overviews) overlaps the longest part of the read.
    // The rows do not move afterwards; their params are filled in place.
    QList<RunRow> queryRuns(const RunQuery &query,
                            const std::function<void(const QList<RunRow> &)> &withoutParams = {}) const;
    QStringList metricKeys(RunId run) const;
    // Every metric key / param key logged by any run (sorted): a table's column chooser.
    QStringList metricKeys() const;
    QStringList paramKeys() const;
    MetricHistory history(RunId run, const QString &key, const HistoryQuery &query = {}) const;
    // (point count, last step) of a run's metric, from latest_metrics: changes whenever the
    // series does (a cache's key). nullopt when the run has no such metric.
    std::optional<std::pair<qint64, qint64>> seriesVersion(RunId run, const QString &key) const;
    // Every point of a run's metric, in step order (export).
    std::vector<MetricPoint> allPoints(RunId run, const QString &key) const;
    qint64 pointCount(RunId run) const;

    // --- MLflow mirror bookkeeping -----------------------------------------------------------
    struct MirrorState {
        QString remoteRunId;
        QMap<QString, qint64> lastStep;  // metric key → last step sent
        bool paramsSent = false;
    };
    MirrorState mirrorState(const QString &server, RunId run) const;
    void saveMirrorState(const QString &server, RunId run, const MirrorState &state);

    // Runs `f` in one write transaction (for callers that batch several calls).
    void writeTransaction(const std::function<void()> &f);

    using Impl = StoreImpl;  // core/src/storeimpl.h

private:
    // One attempt at open(); throws sql::Error when SQLite answered busy where its busy handler
    // does not wait (open() then tries again).
    static std::unique_ptr<TrackingStore> openOnce(const QString &path, Mode mode);
    explicit TrackingStore(std::unique_ptr<Impl> d);
    std::unique_ptr<Impl> d;
};

}  // namespace orrery::core
