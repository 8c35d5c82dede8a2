// SPDX-License-Identifier: GPL-3.0-or-later
//
// The left dock's tree: experiments → sweeps → trials, each with a state badge (a dot in the
// phase's colour: queued, running, done, failed, stopped), the sweep's best value of its metric
// and each trial's latest step. Updated in place from each snapshot, so expansion and selection
// survive live refreshes. A sweep's trial rows are made when it is first expanded (fetchMore):
// 100,000 trials were 500,000 items built on every open (1.2 s, bench_runs_scale) for rows nobody
// had opened; the sweep's own row (counts, state, best, usage) comes from its overview alone.
#pragma once

#include "snapshot.h"

#include <QHash>
#include <QSet>
#include <QStandardItemModel>

#include <utility>

namespace orrery::gui {

class SweepTreeModel : public QStandardItemModel {
    Q_OBJECT
public:
    enum Column { NameColumn, StateColumn, BestColumn, UsageColumn, StepColumn, Columns };
    enum Kind { ExperimentItem = 1, SweepItem, TrialItem };
    // IdRole: an experiment's, a sweep's id, a trial's run id (0 once its run was deleted: the
    // sweep keeps the trial's history). Sweeps and trials also carry
    // what their actions need: the sweep's id and cluster, the trial's index and state, the
    // directory (the sweep's, the trial's run directory) on the machine it ran on.
    enum Role {
        KindRole = Qt::UserRole + 1,
        IdRole,
        RunsRole,
        SweepRole,
        ClusterRole,
        TrialRole,
        StateRole,
        DirRole
    };

    explicit SweepTreeModel(QObject *parent = nullptr);

    void setSnapshot(const Snapshot &snapshot);

    // A sweep's trials: made on its first fetchMore (the view's expand), then kept up to date.
    bool hasChildren(const QModelIndex &parent = {}) const override;
    bool canFetchMore(const QModelIndex &parent) const override;
    void fetchMore(const QModelIndex &parent) override;

    // The runs an item stands for: a trial's run, a sweep's trials' runs, an experiment's runs.
    QList<core::RunId> runsOf(const QModelIndex &index) const;
    QModelIndex sweepIndex(core::SweepId sweep) const;

    static QIcon phaseIcon(core::Phase phase);

private:
    // The row of `parent` for `key` (an experiment's or sweep's id, a trial's index), made where
    // missing; its IdRole set to `id`.
    QStandardItem *child(QStandardItem *parent, int kind, qint64 key, qint64 id, const QString &name);
    // Removes the rows of `parent` whose key is not in `keep` (deleted elsewhere) with all below;
    // every key of `keep` must have its row already.
    void prune(QStandardItem *parent, int kind, const QSet<qint64> &keep);
    // The sweep whose trials `parent` would hold, where they are not made yet; 0 otherwise.
    core::SweepId unfetchedSweep(const QModelIndex &parent) const;
    void setTrials(QStandardItem *sweep, const SweepNode &node);
    // setSnapshot's steps: the experiments (stale ones removed), then each one's sweeps; true
    // when a sweep that had no trials has some now (its row gains an expander).
    void setExperiments(const Snapshot &snapshot);
    bool setSweeps(const Snapshot &snapshot);

    // Each item by (parent, kind and key): finding a sweep's trial was a walk over its children,
    // quadratic in a 10,000-trial sweep on every refresh (seconds, bench_runs_scale).
    QHash<std::pair<quintptr, qint64>, QStandardItem *> m_items;
    QHash<core::SweepId, SweepNode> m_nodes;  // each sweep as of the latest snapshot
    QSet<core::SweepId> m_fetched;  // the sweeps whose trial rows exist
    QSet<core::RunId> m_archived;  // of the latest snapshot (Snapshot::archived)
};

}  // namespace orrery::gui
