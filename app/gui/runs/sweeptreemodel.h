// SPDX-License-Identifier: GPL-3.0-or-later
//
// The left dock's tree: experiments → sweeps → trials, each with a state badge (a dot in the
// phase's colour: queued, running, done, failed, stopped), the sweep's best value of its metric
// and each trial's latest step. Updated in place from each snapshot, so expansion and selection
// survive live refreshes.
#pragma once

#include "snapshot.h"

#include <QHash>
#include <QStandardItemModel>

#include <utility>

namespace orrery::gui {

class SweepTreeModel : public QStandardItemModel {
    Q_OBJECT
public:
    enum Column { NameColumn, StateColumn, BestColumn, UsageColumn, StepColumn, Columns };
    enum Kind { ExperimentItem = 1, SweepItem, TrialItem };
    // IdRole: an experiment's, a sweep's id, a trial's run id. Sweeps and trials also carry
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

    // The runs an item stands for: a trial's run, a sweep's trials' runs, an experiment's runs.
    QList<core::RunId> runsOf(const QModelIndex &index) const;
    QModelIndex sweepIndex(core::SweepId sweep) const;

    static QIcon phaseIcon(core::Phase phase);

private:
    QStandardItem *child(QStandardItem *parent, int kind, qint64 id, const QString &name);

    // Each item by (parent, kind and id): finding a sweep's trial was a walk over its children,
    // quadratic in a 10,000-trial sweep on every refresh (seconds, bench_runs_scale).
    QHash<std::pair<quintptr, qint64>, QStandardItem *> m_items;
};

}  // namespace orrery::gui
