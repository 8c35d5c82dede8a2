// SPDX-License-Identifier: GPL-3.0-or-later
#include "sweeptreemodel.h"

#include "orrery/core/format.h"

#include <QPainter>
#include <QPixmap>

namespace orrery::gui {

using core::Phase;

SweepTreeModel::SweepTreeModel(QObject *parent) : QStandardItemModel(parent)
{
    setHorizontalHeaderLabels({tr("Name"), tr("State"), tr("Best"), tr("GPU-h"), tr("Step")});
    // clear() (not virtual) takes every item: so does the lookup. Single rows go through prune().
    connect(this, &QAbstractItemModel::modelReset, this, [this] {
        m_items.clear();
        m_nodes.clear();
        m_fetched.clear();
    });
}

QIcon SweepTreeModel::phaseIcon(Phase phase)
{
    static QHash<int, QIcon> cache;
    auto it = cache.find(int(phase));
    if (it != cache.end())
        return *it;
    QColor c;
    switch (phase) {
    case Phase::Queued:
        c = QColor(0x9e9e9e);
        break;
    case Phase::Running:
        c = QColor(0x1e88e5);
        break;
    case Phase::Done:
        c = QColor(0x43a047);
        break;
    case Phase::Failed:
        c = QColor(0xe53935);
        break;
    case Phase::Stopped:
        c = QColor(0xfb8c00);
        break;
    }
    QPixmap pm(12, 12);
    pm.fill(Qt::transparent);
    QPainter p(&pm);
    p.setRenderHint(QPainter::Antialiasing);
    p.setPen(Qt::NoPen);
    p.setBrush(c);
    p.drawEllipse(1, 1, 10, 10);
    p.end();
    return *cache.insert(int(phase), QIcon(pm));
}

QStandardItem *SweepTreeModel::child(QStandardItem *parent, int kind, qint64 key, qint64 id,
                                     const QString &name)
{
    const std::pair<quintptr, qint64> mapKey{quintptr(parent), key * 4 + kind};
    if (QStandardItem *c = m_items.value(mapKey)) {
        if (c->text() != name)
            c->setText(name);
        if (c->data(IdRole).toLongLong() != id)
            c->setData(id, IdRole);
        return c;
    }
    QList<QStandardItem *> row;
    for (int col = 0; col < Columns; ++col) {
        auto *item = new QStandardItem;
        item->setEditable(false);
        item->setData(kind, KindRole);
        item->setData(id, IdRole);
        row.push_back(item);
    }
    row[NameColumn]->setText(name);
    parent->appendRow(row);
    m_items.insert(mapKey, row[NameColumn]);
    return row[NameColumn];
}

void SweepTreeModel::prune(QStandardItem *parent, int kind, const QSet<qint64> &keep)
{
    // Every key of `keep` has its row (the caller made them): as many rows as keys is nothing
    // stale, and a refresh costs no walk over every item (a live tick of 10,000-trial sweeps).
    if (parent->rowCount() == keep.size())
        return;
    QSet<QStandardItem *> gone;
    for (auto it = m_items.begin(); it != m_items.end();) {
        const qint64 key = it.key().second;
        if (it.key().first == quintptr(parent) && (key & 3) == kind && !keep.contains(key >> 2)) {
            gone.insert(it.value());
            it = m_items.erase(it);
        } else {
            ++it;
        }
    }
    if (gone.isEmpty())
        return;
    // The entries of the rows below them (a removed sweep's trials) go too.
    for (auto it = m_items.begin(); it != m_items.end();)
        it = gone.contains(reinterpret_cast<QStandardItem *>(it.key().first)) ? m_items.erase(it)
                                                                              : std::next(it);
    for (int r = parent->rowCount() - 1; r >= 0; --r) {
        QStandardItem *item = parent->child(r);
        if (!gone.contains(item))
            continue;
        if (kind == SweepItem) {
            m_nodes.remove(item->data(IdRole).toLongLong());
            m_fetched.remove(item->data(IdRole).toLongLong());
        }
        parent->removeRow(r);
    }
}

namespace {

void setCell(QStandardItem *nameItem, int column, const QString &text, const QIcon &icon = {})
{
    QStandardItem *parent = nameItem->parent() ? nameItem->parent() : nameItem->model()->invisibleRootItem();
    QStandardItem *cell = parent->child(nameItem->row(), column);
    if (cell->text() != text)
        cell->setText(text);
    if (!icon.isNull() || !cell->icon().isNull())
        cell->setIcon(icon);
}

// What a sweep's actions need (SweepTreeModel::Role): its trials' runs (none for a deleted or
// archived run), its id, cluster, state and directory.
void setSweepData(QStandardItem *sweep, const SweepNode &node, const QSet<core::RunId> &archived)
{
    QList<core::RunId> runs;
    for (const core::TrialSummary &t : node.trials)
        if (t.trial.runId && !archived.contains(t.trial.runId))  // deleted or archived: none
            runs.push_back(t.trial.runId);
    sweep->setData(QVariant::fromValue(runs), SweepTreeModel::RunsRole);
    sweep->setData(node.sweep.id, SweepTreeModel::SweepRole);
    sweep->setData(node.sweep.cluster, SweepTreeModel::ClusterRole);
    sweep->setData(node.sweep.state, SweepTreeModel::StateRole);
    sweep->setData(node.sweep.rootDir, SweepTreeModel::DirRole);
}

// The sweep's row: its state, best value and usage, and the tooltip that says them at length.
void showSweep(QStandardItem *sweep, const SweepNode &node)
{
    sweep->setToolTip(
        SweepTreeModel::tr("%1 · %2 trials: %3 done, %4 running, %5 queued, %6 failed, %7 stopped\n%8")
            .arg(node.sweep.method)
            .arg(node.counts.total)
            .arg(node.counts.done)
            .arg(node.counts.running)
            .arg(node.counts.queued)
            .arg(node.counts.failed)
            .arg(node.counts.stopped)
            .arg(node.sweep.message));
    // The sweep's word, with its failed trials where it finished with some ("finished (1
    // failed) · 2/2"), as `orrery sweep list` shows it.
    QString stateText = SweepTreeModel::tr("%1 · %2/%3")
                            .arg(node.stateText())
                            .arg(node.counts.ended())
                            .arg(node.counts.total);
    if (node.progress && node.progress->etaMs)
        stateText += SweepTreeModel::tr(" · ETA %1").arg(core::formatDuration(*node.progress->etaMs));
    if (node.progress && node.progress->stepsTotal > 0)
        sweep->setToolTip(sweep->toolTip() +
                          SweepTreeModel::tr("\nsteps %1/%2 (%3%)%4")
                              .arg(node.progress->stepsDone)
                              .arg(node.progress->stepsTotal)
                              .arg(100 * node.progress->stepsDone / node.progress->stepsTotal)
                              .arg(node.progress->etaMs
                                       ? SweepTreeModel::tr(", about %1 to go at the running trials' rate")
                                             .arg(core::formatDuration(*node.progress->etaMs))
                                       : QString()));
    const core::SweepOverview::Verdict verdict = node.verdict();
    setCell(sweep, SweepTreeModel::StateColumn, stateText,
            SweepTreeModel::phaseIcon(verdict == core::SweepOverview::Verdict::Active     ? Phase::Running
                                          : verdict == core::SweepOverview::Verdict::Good ? Phase::Done
                                                                                          : Phase::Failed));
    setCell(sweep, SweepTreeModel::BestColumn,
            node.best
                ? QStringLiteral("%1 %2").arg(node.sweep.metricName, core::formatNumber(node.best->value, 4))
                : QString());
    setCell(sweep, SweepTreeModel::UsageColumn, core::usageCell(node.usage, node.price));
    sweep->setToolTip(sweep->toolTip() + QLatin1Char('\n') + core::describeUsage(node.usage, node.price));
    if (!node.waiting.isEmpty())  // why its queued trials wait (core/pendingreason.h)
        sweep->setToolTip(sweep->toolTip() + SweepTreeModel::tr("\nwaiting: %1").arg(node.waiting));
}

}  // namespace

void SweepTreeModel::setExperiments(const Snapshot &snapshot)
{
    QHash<core::ExperimentId, QList<core::RunId>> runsOfExperiment;
    for (const core::RunRow &r : snapshot.runs)
        runsOfExperiment[r.run.experimentId].push_back(r.run.id);
    QStandardItem *root = invisibleRootItem();
    QSet<qint64> experiments;
    for (const core::Experiment &e : snapshot.experiments) {
        experiments.insert(e.id);
        QStandardItem *item = child(root, ExperimentItem, e.id, e.id, e.name);
        item->setData(QVariant::fromValue(runsOfExperiment.value(e.id)), RunsRole);
        setCell(item, StateColumn, tr("%n run(s)", nullptr, int(e.runCount)));
    }
    prune(root, ExperimentItem, experiments);
}

bool SweepTreeModel::setSweeps(const Snapshot &snapshot)
{
    QStandardItem *root = invisibleRootItem();
    bool grown = false;
    QHash<QStandardItem *, QSet<qint64>> sweepsOf;  // each experiment's sweeps in this snapshot
    for (int r = 0; r < root->rowCount(); ++r)
        sweepsOf.insert(root->child(r), {});
    for (const SweepNode &node : snapshot.sweeps) {
        QStandardItem *experiment = nullptr;
        for (int r = 0; r < root->rowCount(); ++r)
            if (root->child(r)->data(IdRole).toLongLong() == node.sweep.experimentId)
                experiment = root->child(r);
        if (!experiment)
            continue;
        sweepsOf[experiment].insert(node.sweep.id);
        QStandardItem *sweep = child(experiment, SweepItem, node.sweep.id, node.sweep.id, node.sweep.name);
        setSweepData(sweep, node, snapshot.archived);
        showSweep(sweep, node);
        const auto before = m_nodes.constFind(node.sweep.id);
        const bool hadTrials = before != m_nodes.cend() && !before->trials.isEmpty();
        m_nodes.insert(node.sweep.id, node);
        if (m_fetched.contains(node.sweep.id))
            setTrials(sweep, node);
        else
            grown = grown || (!hadTrials && !node.trials.isEmpty());
    }
    for (auto it = sweepsOf.cbegin(); it != sweepsOf.cend(); ++it)
        prune(it.key(), SweepItem, it.value());
    return grown;
}

void SweepTreeModel::setSnapshot(const Snapshot &snapshot)
{
    setExperiments(snapshot);
    m_archived = snapshot.archived;
    if (setSweeps(snapshot)) {
        // An unexpanded sweep that had no trials has some: its hasChildren() changed without a
        // row inserted, and a tree view asks it again only on a new layout.
        Q_EMIT layoutAboutToBeChanged();
        Q_EMIT layoutChanged();
    }
}

core::SweepId SweepTreeModel::unfetchedSweep(const QModelIndex &parent) const
{
    if (!parent.isValid() || parent.column() != NameColumn || parent.data(KindRole).toInt() != SweepItem)
        return 0;
    const core::SweepId id = parent.data(IdRole).toLongLong();
    return m_fetched.contains(id) ? 0 : id;
}

bool SweepTreeModel::hasChildren(const QModelIndex &parent) const
{
    if (const core::SweepId id = unfetchedSweep(parent)) {
        const auto it = m_nodes.constFind(id);
        return it != m_nodes.cend() && !it->trials.isEmpty();
    }
    return QStandardItemModel::hasChildren(parent);
}

bool SweepTreeModel::canFetchMore(const QModelIndex &parent) const
{
    return unfetchedSweep(parent) && hasChildren(parent);
}

void SweepTreeModel::fetchMore(const QModelIndex &parent)
{
    const core::SweepId id = unfetchedSweep(parent);
    const auto it = m_nodes.constFind(id);
    if (!id || it == m_nodes.cend())
        return;
    m_fetched.insert(id);
    setTrials(itemFromIndex(parent), *it);
}

void SweepTreeModel::setTrials(QStandardItem *sweep, const SweepNode &node)
{
    // Keyed by the trial's index: its run id changes (0 once the run is deleted, the sweep keeping
    // the trial's history), its index never does.
    QSet<qint64> indices;
    for (const core::TrialSummary &t : node.trials) {
        indices.insert(t.trial.index);
        QStandardItem *trial =
            child(sweep, TrialItem, t.trial.index, t.trial.runId, tr("trial %1").arg(t.trial.index));
        const bool archived = m_archived.contains(t.trial.runId);
        trial->setData(QVariant::fromValue(t.trial.runId && !archived ? QList<core::RunId>{t.trial.runId}
                                                                      : QList<core::RunId>{}),
                       RunsRole);
        trial->setData(node.sweep.id, SweepRole);
        trial->setData(node.sweep.cluster, ClusterRole);
        trial->setData(t.trial.index, TrialRole);
        trial->setData(t.trial.state, StateRole);
        trial->setData(t.trial.runDir, DirRole);
        const core::TrialState ts = t.trial.trialState();
        QString label = core::toText(ts);
        if (t.attempts > 1)
            label += tr(" (attempt %1)").arg(t.attempts);
        if (!t.trial.runId && !core::isActive(ts) && core::phaseOf(ts) != Phase::Queued)
            label += tr(" · run deleted");
        if (archived)
            label += tr(" · archived");
        setCell(trial, StateColumn, label, phaseIcon(core::phaseOf(ts)));
        setCell(trial, BestColumn, t.best ? core::formatNumber(*t.best, 4) : QString());
        setCell(trial, StepColumn, t.step >= 0 ? QString::number(t.step) : QString());
        setCell(trial, UsageColumn, core::usageCell(node.trialUsage.value(t.trial.index), node.price));
        const QString note = node.trialNote(t.trial);
        trial->setToolTip(note.isEmpty() ? t.trial.detail : note);
    }
    prune(sweep, TrialItem, indices);
}

QList<core::RunId> SweepTreeModel::runsOf(const QModelIndex &index) const
{
    const QModelIndex name = index.siblingAtColumn(NameColumn);
    return name.data(RunsRole).value<QList<core::RunId>>();
}

QModelIndex SweepTreeModel::sweepIndex(core::SweepId sweep) const
{
    const QModelIndexList found =
        match(index(0, 0), IdRole, sweep, -1, Qt::MatchRecursive | Qt::MatchExactly);
    for (const QModelIndex &i : found)
        if (i.data(KindRole).toInt() == SweepItem)
            return i;
    return {};
}

}  // namespace orrery::gui
