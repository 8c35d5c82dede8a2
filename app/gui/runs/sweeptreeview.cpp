// SPDX-License-Identifier: GPL-3.0-or-later
#include "sweeptreeview.h"

#include "runselection.h"
#include "sweeptreemodel.h"
#include "windowsettings.h"

#include <QHeaderView>
#include <QItemSelectionModel>
#include <QSet>

#include <algorithm>

namespace orrery::gui {

SweepTreeView::SweepTreeView(SweepTreeModel *model, RunSelection *selection, QWidget *parent)
    : QTreeView(parent), m_model(model), m_selection(selection)
{
    setObjectName(QStringLiteral("sweepTree"));
    setModel(m_model);
    setUniformRowHeights(true);
    setSelectionMode(QAbstractItemView::ExtendedSelection);
    header()->setSectionResizeMode(SweepTreeModel::NameColumn, QHeaderView::ResizeToContents);
    // A running sweep's state grows an ETA after the first snapshots: the column follows it.
    header()->setSectionResizeMode(SweepTreeModel::StateColumn, QHeaderView::ResizeToContents);
    header()->setSectionResizeMode(SweepTreeModel::UsageColumn, QHeaderView::ResizeToContents);
    connect(selectionModel(), &QItemSelectionModel::selectionChanged, this, [this] {
        if (m_syncing)
            return;
        QList<core::RunId> runs;
        for (const QModelIndex &i : selectionModel()->selectedRows())
            runs += m_model->runsOf(i);
        m_selection->select(runs, this);
    });
    connect(m_selection, &RunSelection::changed, this, [this](const QObject *source) {
        if (source != this)
            syncSelection();
    });
    connect(this, &QTreeView::doubleClicked, this, [this](const QModelIndex &i) {
        const QModelIndex name = i.siblingAtColumn(SweepTreeModel::NameColumn);
        if (name.data(SweepTreeModel::KindRole).toInt() == SweepTreeModel::TrialItem)
            Q_EMIT trialLogsRequested(name.data(SweepTreeModel::SweepRole).toLongLong(),
                                      name.data(SweepTreeModel::TrialRole).toInt());
    });
}

void SweepTreeView::saveExpansion(const QString &databasePath) const
{
    // The experiments ("e<id>") and sweeps ("s<id>") expanded, per database.
    QStringList expanded;
    for (int e = 0; e < m_model->rowCount(); ++e) {
        const QModelIndex experiment = m_model->index(e, 0);
        if (!isExpanded(experiment))
            continue;
        expanded << QStringLiteral("e%1").arg(experiment.data(SweepTreeModel::IdRole).toLongLong());
        for (int s = 0; s < m_model->rowCount(experiment); ++s)
            if (const QModelIndex sweep = m_model->index(s, 0, experiment); isExpanded(sweep))
                expanded << QStringLiteral("s%1").arg(sweep.data(SweepTreeModel::IdRole).toLongLong());
    }
    windowSettings()->setValue(databaseSettingsGroup(databasePath) + QLatin1String("/expanded"), expanded);
}

void SweepTreeView::restoreExpansion(const QString &databasePath)
{
    const QVariant saved =
        windowSettings()->value(databaseSettingsGroup(databasePath) + QLatin1String("/expanded"));
    if (!saved.isValid()) {
        expandToDepth(0);  // first time: each experiment's sweeps
        return;
    }
    const QStringList expanded = saved.toStringList();
    for (int e = 0; e < m_model->rowCount(); ++e) {
        const QModelIndex experiment = m_model->index(e, 0);
        if (!expanded.contains(
                QStringLiteral("e%1").arg(experiment.data(SweepTreeModel::IdRole).toLongLong())))
            continue;
        expand(experiment);
        for (int s = 0; s < m_model->rowCount(experiment); ++s) {
            const QModelIndex sweep = m_model->index(s, 0, experiment);
            if (expanded.contains(QStringLiteral("s%1").arg(sweep.data(SweepTreeModel::IdRole).toLongLong())))
                expand(sweep);
        }
    }
}

void SweepTreeView::syncSelection()
{
    // The tree's highlight says which runs are selected wherever they were chosen: a sweep all of
    // whose trials are selected, else the selected trials; nothing when none of them is.
    QSet<core::RunId> wanted;
    for (core::RunId r : m_selection->runs())
        wanted.insert(r);
    QItemSelection selection;
    auto selectRow = [&](const QModelIndex &i) {
        selection.select(i.siblingAtColumn(0), i.siblingAtColumn(SweepTreeModel::Columns - 1));
    };
    if (!wanted.isEmpty())
        for (int e = 0; e < m_model->rowCount(); ++e) {
            const QModelIndex experiment = m_model->index(e, 0);
            for (int sw = 0; sw < m_model->rowCount(experiment); ++sw) {
                const QModelIndex sweep = m_model->index(sw, 0, experiment);
                const QList<core::RunId> runs = m_model->runsOf(sweep);
                if (!runs.isEmpty() && std::all_of(runs.cbegin(), runs.cend(), [&](core::RunId r) {
                        return wanted.contains(r);
                    })) {
                    selectRow(sweep);
                    continue;
                }
                // Some of its trials: their rows, made now where the sweep was never expanded.
                if (m_model->canFetchMore(sweep) &&
                    std::any_of(runs.cbegin(), runs.cend(),
                                [&](core::RunId r) { return wanted.contains(r); }))
                    m_model->fetchMore(sweep);
                for (int t = 0; t < m_model->rowCount(sweep); ++t) {
                    const QModelIndex trial = m_model->index(t, 0, sweep);
                    if (wanted.contains(trial.data(SweepTreeModel::IdRole).toLongLong()))
                        selectRow(trial);
                }
            }
        }
    m_syncing = true;
    selectionModel()->select(selection, QItemSelectionModel::ClearAndSelect);
    m_syncing = false;
}

}  // namespace orrery::gui
