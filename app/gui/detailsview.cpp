// SPDX-License-Identifier: GPL-3.0-or-later
#include "detailsview.h"

#include "runcolors.h"
#include "storereader.h"

#include "orrery/core/format.h"

#include <QDateTime>
#include <QHeaderView>

namespace orrery::gui {

DetailsView::DetailsView(StoreReader *reader, QWidget *parent) : QTreeWidget(parent), m_reader(reader)
{
    setColumnCount(2);
    setHeaderLabels({tr("Field"), tr("Value")});
    header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    setRootIsDecorated(true);
    setUniformRowHeights(true);
    setAlternatingRowColors(true);
    setSelectionMode(QAbstractItemView::ExtendedSelection);
}

void DetailsView::showRun(core::RunId run)
{
    m_run = run;
    if (!run) {
        clear();
        return;
    }
    m_reader->read<Read>(
        this,
        [run](const core::TrackingStore &store) {
            return Read{store.details(run), store.attemptsOfRun(run)};
        },
        [this, run](Read read) {
            if (run == m_run)
                fill(read);
        });
}

namespace {
QString when(qint64 ms)
{
    return ms ? QDateTime::fromMSecsSinceEpoch(ms).toString(QStringLiteral("yyyy-MM-dd hh:mm:ss"))
              : QString();
}
}  // namespace

void DetailsView::fill(const Read &read)
{
    const core::RunDetails &d = read.details;
    clear();
    auto section = [this](const QString &title, bool expanded = true) {
        auto *item = new QTreeWidgetItem(this, {title});
        QFont f = item->font(0);
        f.setBold(true);
        item->setFont(0, f);
        item->setExpanded(expanded);
        return item;
    };
    auto field = [](QTreeWidgetItem *parent, const QString &k, const QString &v) {
        auto *item = new QTreeWidgetItem(parent, {k, v});
        item->setToolTip(1, v);
        return item;
    };
    QTreeWidgetItem *run = section(d.run.name);
    run->setIcon(0, [&] {
        QPixmap pm(12, 12);
        pm.fill(runColor(d.run.id));
        return QIcon(pm);
    }());
    field(run, tr("id"), QStringLiteral("%1 (%2)").arg(d.run.id).arg(d.run.uuid));
    field(run, tr("experiment"), d.run.experimentName);
    field(run, tr("status"), core::toString(d.run.status));
    field(run, tr("started"), when(d.run.startTimeMs));
    field(run, tr("ended"), when(d.run.endTimeMs));
    field(run, tr("run dir"), d.run.runDir);

    QTreeWidgetItem *params = section(tr("Params (%1)").arg(d.params.size()));
    for (auto it = d.params.cbegin(); it != d.params.cend(); ++it)
        field(params, it.key(), it.value());

    QTreeWidgetItem *metrics = section(tr("Latest metrics (%1)").arg(d.metrics.size()));
    for (const core::LatestMetric &m : d.metrics)
        field(metrics, m.key,
              tr("%1 at step %2 · min %3 · max %4 · %5 points")
                  .arg(core::formatNumber(m.last.value, 6))
                  .arg(m.last.step)
                  .arg(core::formatNumber(m.min, 4), core::formatNumber(m.max, 4))
                  .arg(m.count));

    QTreeWidgetItem *attempts = section(tr("Attempts (%1)").arg(read.attempts.size()));
    for (const core::Trial &t : read.attempts) {
        QTreeWidgetItem *a =
            field(attempts, tr("trial %1 · attempt %2").arg(t.index).arg(t.attempt),
                  t.exitReason.isEmpty() ? t.state : QStringLiteral("%1: %2").arg(t.state, t.exitReason));
        if (!t.slurmJobId.isEmpty())
            field(a, tr("Slurm job"),
                  t.slurmTaskId.isEmpty() ? t.slurmJobId : t.slurmJobId + QLatin1Char('_') + t.slurmTaskId);
        if (!t.task.isEmpty())
            field(a, tr("task"), t.task);
        if (!t.detail.isEmpty())
            field(a, tr("executor said"), t.detail);
        field(a, tr("submitted"), when(t.submittedMs));
        field(a, tr("ended"), when(t.endedMs));
        field(a, tr("run dir"), t.runDir);
    }

    QTreeWidgetItem *artifacts =
        section(tr("Artifacts (%1)").arg(d.artifacts.size()), d.artifacts.size() <= 20);
    for (const core::Artifact &a : d.artifacts)
        field(artifacts, a.path,
              QStringLiteral("%1%2 · %3")
                  .arg(a.kind, a.step >= 0 ? tr(" at step %1").arg(a.step) : QString(),
                       a.localPath.isEmpty() ? a.remotePath : a.localPath));

    QTreeWidgetItem *tags = section(tr("Tags (%1)").arg(d.tags.size()), false);
    for (auto it = d.tags.cbegin(); it != d.tags.cend(); ++it)
        field(tags, it.key(), it.value());
    Q_EMIT shown(d.run.id);
}

}  // namespace orrery::gui
