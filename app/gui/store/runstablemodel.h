// SPDX-License-Identifier: GPL-3.0-or-later
//
// The Runs table: one row per run of the current snapshot, columns Run, Status, the leading
// sweep's metric (the three the view pins), Experiment, Started, Duration, then one per param and
// one per metric (hidden or shown by the view). The starred baseline run (RunRow::isBaseline) is
// the first row whatever the order. Sorts by any column (numbers as numbers, missing values last),
// groups by a param (the group is the first sort key, shades alternate per group and the vertical
// header captions each group's first row with its value and run count), and hands rows to the
// view on demand (fetchMore), so 100,000 runs never lay out 100,000 rows at once. Live refreshes
// that keep the same runs update cells in place (one dataChanged) instead of resetting the view;
// a running run's duration is counted to the refresh's clock.
#pragma once

#include "snapshot.h"

#include "orrery/core/store.h"

#include <QAbstractTableModel>
#include <QHash>
#include <QStringList>

#include <optional>

namespace orrery::gui {

class RunsTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum FixedColumn {
        RunColumn,
        StatusColumn,
        SweepMetricColumn,  // the leading sweep's metric (sweepMetric())
        ExperimentColumn,
        StartedColumn,
        DurationColumn,
        ProgressColumn,  // a sweep trial's run: step / total (its config's train.steps), %
        GpuHoursColumn,  // a sweep trial's run: GPU-hours over its attempts
        GoodputColumn,  // training time over wall time (read only while the column is shown)
        FixedColumns
    };
    static constexpr int kPinnedColumns = SweepMetricColumn + 1;  // Run, Status, the sweep metric
    // GroupCaptionRole: on a group's first row, "seed = 0 · 7 runs" (empty elsewhere).
    enum Role { RunIdRole = Qt::UserRole + 1, SortRole, GroupCaptionRole };
    static constexpr int kFetchBatch = 2000;

    using QAbstractTableModel::QAbstractTableModel;

    void setRuns(QList<core::RunRow> rows, const QStringList &paramKeys, const QStringList &metricKeys);
    // The snapshot's sweeps and which run is whose (the window sets it before setRuns): every view
    // that has this model reads the leading sweep of its runs here.
    void setSweeps(SweepIndex sweeps);
    const SweepIndex &sweeps() const { return m_sweeps; }
    void setGroupBy(const QString &paramKey);  // empty: no grouping
    QString groupBy() const { return m_groupBy; }

    const core::RunRow *runAt(int row) const;
    int rowOfRun(core::RunId run) const;  // -1 when not fetched yet or absent
    const core::RunRow *findRun(core::RunId run) const;  // fetched or not; nullptr when absent
    // The starred baseline runs (one per experiment at most), which lead the rows.
    QList<core::RunId> baselineRuns() const;
    const QList<core::RunRow> &allRuns() const { return m_rows; }
    int totalRuns() const { return int(m_rows.size()); }
    const QStringList &paramKeys() const { return m_params; }
    const QStringList &metricKeys() const { return m_metrics; }
    int paramColumn(const QString &key) const;  // -1 when absent
    int metricColumn(const QString &key) const;
    // The leading sweep's metric of the runs (SweepIndex::leadingSweep), shown pinned; empty when
    // no run belongs to a sweep.
    const QString &sweepMetric() const { return m_sweepMetric; }
    // A column's stable name, what the view saves: "run", "status", "sweep-metric",
    // "experiment", "started", "duration", "progress", "gpu-hours", "goodput", "param:KEY",
    // "metric:KEY".
    QString columnKey(int column) const;
    int columnOfKey(const QString &key) const;  // -1 when absent
    // The params that vary within what is shown, the sweeps' swept params first (the leading
    // sweep's in its spec's order, then the other sweeps'), then those that differ between the
    // runs of one sweep (or between the runs of no sweep); a param some sweeps lack and others
    // hold constant is not among them. What the view shows until the user chooses.
    QStringList varyingParams() const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    void sort(int column, Qt::SortOrder order = Qt::AscendingOrder) override;
    bool canFetchMore(const QModelIndex &parent) const override;
    void fetchMore(const QModelIndex &parent) override;

private:
    // A sweep trial's run as the snapshot's sweeps know it.
    struct TrialInfo {
        qint64 trialId = 0, step = -1;
        const QString *config = nullptr;  // its resolved trial.yaml, in m_sweeps
        core::Usage usage;
        std::optional<double> goodput;
    };
    std::optional<std::pair<qint64, qint64>> progressOf(core::RunId run) const;  // (step, total)
    QVariant sortValue(const core::RunRow &row, int column) const;
    QString groupCaption(int row) const;
    void applyOrder();
    void reindex();

    QList<core::RunRow> m_rows;
    SweepIndex m_sweeps;
    QStringList m_params, m_metrics;
    QString m_sweepMetric;
    qint64 m_nowMs = 0;  // the refresh's clock: a running run's duration
    QString m_groupBy;
    int m_sortColumn = -1;
    Qt::SortOrder m_sortOrder = Qt::AscendingOrder;
    int m_fetched = 0;
    bool m_fetching = false;
    QHash<core::RunId, int> m_rowOfRun;
    QHash<core::RunId, TrialInfo> m_trialOfRun;
    mutable QHash<qint64, qint64> m_totals;  // train.steps by trial id (-1: none), parsed once
    QList<int> m_groupShade;  // per row: 0/1, alternating per group
    QHash<int, QString> m_groupCaptions;  // by a group's first row
};

}  // namespace orrery::gui
