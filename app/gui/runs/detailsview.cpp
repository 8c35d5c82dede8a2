// SPDX-License-Identifier: GPL-3.0-or-later
#include "detailsview.h"

#include "runcolors.h"
#include "storereader.h"

#include "orrery/core/format.h"
#include "orrery/core/healthreport.h"
#include "orrery/remote/sweepoperations.h"

#include <QDateTime>
#include <QHeaderView>
#include <QPainter>

#include <algorithm>

namespace orrery::gui {

DetailsView::DetailsView(StoreReader *reader, QWidget *parent) : QTreeWidget(parent), m_reader(reader)
{
    setColumnCount(2);
    setHeaderLabels({tr("Field"), tr("Value")});
    // The field column at a fixed share (long artifact paths would push the values out of view);
    // the value takes the rest, its full text in the tooltip.
    header()->setSectionResizeMode(0, QHeaderView::Interactive);
    header()->resizeSection(0, 170);
    header()->setStretchLastSection(true);
    setRootIsDecorated(true);
    setUniformRowHeights(true);
    setAlternatingRowColors(true);
    setSelectionMode(QAbstractItemView::ExtendedSelection);
    setIconSize(QSize(60, 10));  // the goodput parts' bars
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
            Read r{store.details(run), store.attemptsOfRun(run), {}, {}, {}};
            const qint64 now = QDateTime::currentMSecsSinceEpoch();
            r.usage = core::usageOf(r.attempts, now);
            if (!r.attempts.isEmpty())
                if (const auto sw = store.sweep(r.attempts.front().sweepId))
                    r.price = remote::executorPrice(sw->cluster);
            r.goodput = core::runGoodput(store, run, now);
            return r;
        },
        [this, run](Read read) {
            if (run == m_run)
                fill(read);
        });
}

namespace {
// A part's share of the wall time as a bar: training in green, the rest grey.
QIcon shareBar(double share, bool training)
{
    constexpr int kWidth = 60, kHeight = 10;
    QPixmap pm(kWidth, kHeight);
    pm.fill(Qt::transparent);
    QPainter p(&pm);
    p.setPen(QColor(0x9e, 0x9e, 0x9e));
    p.drawRect(0, 0, kWidth - 1, kHeight - 1);
    p.fillRect(1, 1, int(std::clamp(share, 0.0, 1.0) * (kWidth - 2)), kHeight - 2,
               training ? QColor(0x2e, 0x7d, 0x32) : QColor(0x90, 0x90, 0x90));
    return QIcon(pm);
}

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

    // What it used and where the time went: `orrery runs show` and `runs goodput`'s figures.
    const core::GoodputParts &g = read.goodput.total;
    QTreeWidgetItem *usage = section(tr("Usage"));
    field(usage, tr("GPU-hours"),
          read.usage.attempts > 0 ? core::usageCell(read.usage, read.price) : tr("none yet"))
        ->setToolTip(1, core::describeUsage(read.usage, read.price));
    if (g.wallS > 0)
        field(usage, tr("goodput"), tr("%1% of the wall time trained").arg(100.0 * g.goodput(), 0, 'f', 1));
    if (g.wallS > 0) {
        for (const core::GoodputPart &part : core::labelledParts(g)) {
            QTreeWidgetItem *item = field(
                usage, part.label,
                tr("%1 s · %2%").arg(part.seconds, 0, 'f', 1).arg(100.0 * part.seconds / g.wallS, 0, 'f', 1));
            item->setIcon(1, shareBar(part.seconds / g.wallS, part.label == QLatin1String("training")));
        }
        field(usage, tr("wall"),
              tr("%1 s over %n attempt(s)", nullptr, int(read.goodput.attempts.size()))
                  .arg(g.wallS, 0, 'f', 1));
    }

    QTreeWidgetItem *params = section(tr("Params (%1)").arg(d.params.size()), d.params.size() <= 20);
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
        // The health check's verdict per node (docs/sweeps.md "Health check"), as `runs show` says it.
        const QList<core::HealthNodeLine> nodes = core::healthNodes(t.health);
        if (!nodes.isEmpty()) {
            int failed = 0;
            for (const core::HealthNodeLine &n : nodes)
                failed += n.pass ? 0 : 1;
            QTreeWidgetItem *health =
                field(a, tr("health check"),
                      failed == 0 ? tr("passed on %n node(s)", nullptr, int(nodes.size()))
                                  : tr("failed on %1 of %n node(s)", nullptr, int(nodes.size())).arg(failed));
            for (const core::HealthNodeLine &n : nodes) {
                QTreeWidgetItem *item =
                    field(health, n.node,
                          (n.pass ? tr("passed") : tr("failed: %1").arg(n.reason)) +
                              (n.figures.isEmpty() ? QString() : QStringLiteral(" · ") + n.figures));
                if (!n.pass)  // the sweep tree's colour for failed
                    item->setForeground(1, QColor(0xe53935));
            }
        }
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
