// SPDX-License-Identifier: GPL-3.0-or-later
#include "detailsview.h"

#include "blockingpool.h"
#include "logtext.h"
#include "runcolors.h"
#include "storereader.h"

#include "orrery/core/format.h"
#include "orrery/core/healthreport.h"
#include "orrery/core/logread.h"
#include "orrery/core/params.h"
#include "orrery/core/runfiles.h"
#include "orrery/remote/sweepoperations.h"

#include <QDateTime>
#include <QFontDatabase>
#include <QFutureWatcher>
#include <QHeaderView>
#include <QLabel>
#include <QPainter>
#include <QtConcurrent>

#include <algorithm>

namespace orrery::gui {

DetailsView::DetailsView(StoreReader *reader, QWidget *parent) : QTreeWidget(parent), m_reader(reader)
{
    setColumnCount(2);
    setHeaderLabels({tr("Field"), tr("Value")});
    // The field column at a fixed share (long artifact paths would push the values out of view);
    // the value takes the rest, its full text in the tooltip.
    header()->setSectionResizeMode(0, QHeaderView::Interactive);
    header()->resizeSection(0, 150);  // fitFieldColumn() fits it to each run's names
    header()->setStretchLastSection(true);
    setRootIsDecorated(true);
    setUniformRowHeights(false);  // a failed run's error line wraps (fill)
    // Cut in the middle: at the end, a narrow dock showed eval/loss_a, eval/loss_b, … all as
    // "eval/loss…"; the tooltip has the whole name.
    setTextElideMode(Qt::ElideMiddle);
    setAlternatingRowColors(true);
    setSelectionMode(QAbstractItemView::ExtendedSelection);
    setIconSize(QSize(60, 10));  // the goodput parts' bars
    connect(this, &QTreeWidget::itemDoubleClicked, this, [this](QTreeWidgetItem *item) {
        const QVariantList attempt = item->data(0, Qt::UserRole + 1).toList();
        if (attempt.size() == 3)
            Q_EMIT logsRequested(attempt[0].toLongLong(), attempt[1].toInt(), attempt[2].toInt());
    });
}

void DetailsView::showRun(core::RunId run)
{
    m_run = run;
    if (!run) {
        clear();
        m_note.clear();
        m_shown.reset();
        return;
    }
    m_reader->read<Read>(
        this,
        [run](const core::TrackingStore &store) {
            Read r{store.details(run), store.attemptsOfRun(run), {}, {}, {}, {}, {}, {}, {}};
            const qint64 now = QDateTime::currentMSecsSinceEpoch();
            r.usage = core::usageOf(r.attempts, now);
            if (!r.attempts.isEmpty()) {
                r.sweep = store.sweep(r.attempts.front().sweepId);
                if (r.sweep) {
                    r.price = remote::executorPrice(r.sweep->cluster);
                    r.swept = core::keysOf(core::sweptParams(*r.sweep, store.trials(r.sweep->id)));
                }
            }
            readStderrTail(r);
            r.goodput = core::runGoodput(store, run, now);
            return r;
        },
        [this, run](Read read) {
            if (run == m_run)
                fill(read);
        });
}

void DetailsView::readStderrTail(Read &r)
{
    for (const core::Trial &t : r.attempts)
        if (core::phaseOf(t.trialState()) == core::Phase::Failed)
            r.failed = t;  // attempts come in order: the latest failed one stays
    if (!r.failed && r.details.run.status == core::RunStatus::Failed && !r.attempts.isEmpty())
        r.failed = r.attempts.back();
    if (!r.failed && r.details.run.status != core::RunStatus::Failed)
        return;
    if (r.sweep && !r.sweep->cluster.isEmpty())
        return;  // read through the cluster's connection when shown (clusterStderr)
    // A run of this machine: its attempt's files, or (a failed run no sweep launched) its run
    // dir's, where the local executor writes them.
    core::Trial attempt = r.failed.value_or(core::Trial{});
    if (attempt.runDir.isEmpty())
        attempt.runDir = r.details.run.runDir;
    if (attempt.runDir.isEmpty()) {
        r.stderrTail = StderrTail{{}, {}, tr("the run has no run directory")};
        return;
    }
    remote::LogReader local({});
    r.stderrTail = tailOf(local, r.sweep.value_or(core::Sweep{}), attempt);
}

DetailsView::StderrTail DetailsView::tailOf(remote::LogReader &reader, const core::Sweep &sweep,
                                            const core::Trial &attempt)
{
    // The monitor's tail reader: the file's size, then its last LogTailer::kTailBytes.
    core::LogTailer tailer;
    core::LogTail tail;
    StderrTail out;
    try {
        tail = reader.tail(tailer, sweep, attempt);
    } catch (const remote::OperationError &e) {
        out.problem = reader.cluster().isEmpty()
            ? tr("could not read it: %1").arg(e.message())
            : tr("could not read it from %1: %2").arg(reader.cluster(), e.message());
        return out;
    }
    if (tail.files.size() < 2) {
        out.problem = tr("the executor names no stderr file");
        return out;
    }
    const core::LogFile &err = tail.files[1];
    out.path = err.path;
    if (!err.exists) {
        out.problem = tr("%1 is not there").arg(err.path);
        return out;
    }
    QStringList lines;
    for (const QString &line : err.lines)
        lines.append(appcommon::safeLogText(line.toUtf8()));
    while (!lines.isEmpty() && lines.back().trimmed().isEmpty())
        lines.removeLast();
    // Final once it has lines: an empty file may still be being written (a shared filesystem
    // shows a job's last bytes a moment after it ended).
    out.read = !lines.isEmpty();
    if (lines.isEmpty())
        out.problem = tr("%1 is empty").arg(err.path);
    out.lines = lines.mid(std::max<qsizetype>(0, lines.size() - kStderrLines));
    return out;
}

QString DetailsView::attemptKey(const core::Trial &attempt)
{
    return QStringLiteral("%1/%2/%3").arg(attempt.sweepId).arg(attempt.index).arg(attempt.attempt);
}

void DetailsView::setConnections(remote::Executors::ConnectionSource connections)
{
    m_connections = std::move(connections);
}

DetailsView::StderrTail DetailsView::clusterStderr(const core::Sweep &sweep, const core::Trial &attempt)
{
    const QString key = attemptKey(attempt);
    if (const auto it = m_clusterStderr.constFind(key);
        it != m_clusterStderr.cend() && !it->retry.hasExpired())
        return it->tail;
    StderrTail reading;
    // No connection to read it through, or no file yet: an attempt that failed before Slurm gave
    // it a task has no log.
    if (!m_connections || attempt.task.isEmpty()) {
        reading.problem = attempt.task.isEmpty()
            ? tr("on cluster %1: the attempt failed before Slurm started it (no log)").arg(sweep.cluster)
            : tr("on cluster %1, in the sweep's logs/ (task %2): open the log window")
                  .arg(sweep.cluster, attempt.task);
        return reading;
    }
    reading.problem = tr("reading it from %1…").arg(sweep.cluster);
    // One read per cluster at a time: browsing failed trials of a cluster that does not answer
    // must not hold every pool thread (the cluster tab's polls use them too); the next refresh
    // asks again.
    if (m_readingClusters.contains(sweep.cluster))
        return reading;
    m_readingClusters.insert(sweep.cluster);
    // Watched by a child of this view: a read that ends after the view went is dropped with it.
    auto *watcher = new QFutureWatcher<StderrTail>(this);
    connect(
        watcher, &QFutureWatcher<StderrTail>::finished, this, [this, watcher, key, cluster = sweep.cluster] {
            watcher->deleteLater();
            const StderrTail tail = watcher->result();
            m_readingClusters.remove(cluster);
            // A failed attempt's stderr is final once read; a failed read is tried again later.
            m_clusterStderr.insert(
                key, {tail, !tail.read ? QDeadlineTimer(kRetryMs) : QDeadlineTimer(QDeadlineTimer::Forever)});
            // Shown again only while its run is the one asked for (another may be on its way).
            if (m_shown && m_shown->details.run.id == m_run && m_shown->failed &&
                attemptKey(*m_shown->failed) == key) {
                Read shown = *m_shown;
                shown.stderrTail = tail;
                fill(shown);
            }
        });
    watcher->setFuture(
        QtConcurrent::run(blockingPool(), [connections = m_connections, sweep, attempt]() -> StderrTail {
            remote::LogReader reader(sweep.cluster, connections);
            return tailOf(reader, sweep, attempt);
        }));
    return reading;
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

namespace {
// An attempt in one line: "attempt 1 · failed: exit 3 · on node1,node2".
QString attemptLine(const core::Trial &t)
{
    QString s = QStringLiteral("%1").arg(t.state);
    if (!t.exitReason.isEmpty())
        s += QStringLiteral(": ") + t.exitReason;
    if (!t.nodes.isEmpty())
        s += DetailsView::tr(" · on %1").arg(t.nodes);
    return s;
}

// A param's prefix group: the part before the first '.' ("optim" of optim.lr), else "".
QString groupOf(const QString &key)
{
    const qsizetype dot = key.indexOf(QLatin1Char('.'));
    return dot > 0 ? key.left(dot) : QString();
}
}  // namespace

namespace {

// A field of the dock: a name and its value, both whole in their tooltips.
QTreeWidgetItem *field(QTreeWidgetItem *parent, const QString &k, const QString &v)
{
    auto *item = new QTreeWidgetItem(parent, {k, v});
    item->setToolTip(0, k);
    item->setToolTip(1, v);
    return item;
}

}  // namespace

QTreeWidgetItem *DetailsView::section(const QString &title, bool expanded)
{
    auto *item = new QTreeWidgetItem(this, {title});
    QFont f = item->font(0);
    f.setBold(true);
    item->setFont(0, f);
    item->setFirstColumnSpanned(true);
    item->setExpanded(expanded);
    return item;
}

void DetailsView::fill(const Read &read)
{
    m_shown = read;
    clear();
    fillRun(read);
    // A failed run: why, before anything else (UX.md "Why did trial 7 die?").
    if (read.failed || read.details.run.status == core::RunStatus::Failed)
        fillStderr(read);
    fillMetrics(read);
    fillParams(read);
    fillAttempts(read);
    fillUsage(read);
    fillFiles(read.details);
    fitFieldColumn();
    Q_EMIT shown(read.details.run.id);
}

// The run itself: its name (a star for the baseline), status, note, sweep, ids, times, dir.
void DetailsView::fillRun(const Read &read)
{
    const core::RunDetails &d = read.details;
    const bool baseline = d.tags.value(QLatin1String(core::kBaselineTag)) == QLatin1String("true");
    m_note = d.tags.value(QLatin1String(core::kNoteTag));
    QTreeWidgetItem *run = section(baseline ? QStringLiteral("\u2605 ") + d.run.name : d.run.name);
    run->setIcon(0, [&] {
        QPixmap pm(12, 12);
        pm.fill(runColor(d.run.id));
        return QIcon(pm);
    }());
    if (baseline)
        run->setToolTip(0,
                        tr("The baseline of experiment %1: charts, tables and the video grid show it first")
                            .arg(d.run.experimentName));
    field(run, tr("status"),
          read.failed && !read.failed->exitReason.isEmpty()
              ? QStringLiteral("%1 · %2").arg(core::toString(d.run.status), read.failed->exitReason)
              : core::toString(d.run.status));
    if (const QString note = d.tags.value(QLatin1String(core::kNoteTag)); !note.isEmpty())
        field(run, tr("note"), note);
    if (read.sweep && !read.attempts.isEmpty())
        field(run, tr("sweep"), tr("%1 · trial %2").arg(read.sweep->name).arg(read.attempts.front().index));
    field(run, tr("experiment"), d.run.experimentName);
    if (d.run.archived)
        field(run, tr("archived"), tr("yes: hidden unless Show archived is on"));
    field(run, tr("id"), QStringLiteral("%1 (%2)").arg(d.run.id).arg(d.run.uuid));
    field(run, tr("started"), when(d.run.startTimeMs));
    field(run, tr("ended"), when(d.run.endTimeMs));
    field(run, tr("run dir"), d.run.runDir);
}

// A failed attempt's stderr: the line that says why, then its last lines.
void DetailsView::fillStderr(const Read &read)
{
    const StderrTail tail = read.stderrTail ? *read.stderrTail
        : read.sweep && read.failed         ? clusterStderr(*read.sweep, *read.failed)
                                            : StderrTail{};
    QTreeWidgetItem *why =
        section(read.failed ? tr("stderr of attempt %1 (last lines)").arg(read.failed->attempt)
                            : tr("stderr (last lines)"));
    why->setData(0, Qt::UserRole, QStringLiteral("stderr"));
    why->setToolTip(0, tail.path);
    // The line that says why (core::errorLineOf) first, whole: wrapped, never cut at the
    // dock's edge ("tb_train.py: error: argument --lr: inva…" hid the value it refused).
    if (const QString error = core::errorLineOf(tail.lines); !error.isEmpty()) {
        auto *item = new QTreeWidgetItem(why);
        item->setFirstColumnSpanned(true);
        item->setData(0, Qt::UserRole, QStringLiteral("error"));
        item->setToolTip(0, error);
        auto *label = new QLabel(error.toHtmlEscaped());
        label->setObjectName(QStringLiteral("errorLine"));
        label->setWordWrap(true);
        label->setTextInteractionFlags(Qt::TextSelectableByMouse);
        label->setStyleSheet(QStringLiteral("font-weight: bold; color: #c62828;"));
        setItemWidget(item, 0, label);
        item->setSizeHint(0, QSize(0, label->heightForWidth(std::max(120, viewport()->width() - 40))));
    }
    const QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    for (const QString &line : tail.lines) {
        auto *item = new QTreeWidgetItem(why, {line});
        item->setFirstColumnSpanned(true);
        item->setFont(0, mono);
        item->setToolTip(0, line);  // whole, where the dock cuts it
    }
    if (!tail.problem.isEmpty()) {
        auto *item = new QTreeWidgetItem(why, {tail.problem});
        item->setFirstColumnSpanned(true);
    }
    if (read.failed && read.sweep) {
        auto *open = new QTreeWidgetItem(why, {tr("Double-click: open stdout and stderr of this attempt")});
        open->setFirstColumnSpanned(true);
        open->setForeground(0, palette().link());
        const core::Trial t = *read.failed;
        const core::SweepId sweep = read.sweep->id;
        open->setData(0, Qt::UserRole + 1, QVariantList{sweep, t.index, t.attempt});
    }
}

// The latest metrics, the sweep's own first.
void DetailsView::fillMetrics(const Read &read)
{
    const core::RunDetails &d = read.details;
    const QString sweepMetric = read.sweep ? read.sweep->metricName : QString();
    QList<core::LatestMetric> metrics = d.metrics;
    std::stable_partition(metrics.begin(), metrics.end(),
                          [&](const core::LatestMetric &m) { return m.key == sweepMetric; });
    QTreeWidgetItem *metricItems = section(tr("Latest metrics (%1)").arg(metrics.size()));
    for (const core::LatestMetric &m : metrics) {
        // Short enough for the dock's default width; the rest in the tooltip.
        QTreeWidgetItem *item =
            field(metricItems, m.key == sweepMetric ? m.key + QStringLiteral(" \u25c6") : m.key,
                  tr("%1 @ %2").arg(core::formatNumber(m.last.value, 6)).arg(m.last.step));
        item->setToolTip(1,
                         tr("%1 at step %2 · min %3 · max %4 · %5 points")
                             .arg(core::formatNumber(m.last.value, 6))
                             .arg(m.last.step)
                             .arg(core::formatNumber(m.min, 4), core::formatNumber(m.max, 4))
                             .arg(m.count));
        if (m.key == sweepMetric)
            item->setToolTip(
                0, tr("%1: the sweep's metric (%2)").arg(m.key, core::toString(read.sweep->metricGoal)));
    }
}

// The swept params lead, marked; the rest grouped by prefix, each group collapsed.
void DetailsView::fillParams(const Read &read)
{
    const core::RunDetails &d = read.details;
    if (!read.swept.isEmpty()) {
        QTreeWidgetItem *swept = section(tr("Swept params (%1)").arg(read.swept.size()));
        swept->setData(0, Qt::UserRole, QStringLiteral("swept"));
        for (const QString &k : read.swept) {
            QTreeWidgetItem *item =
                field(swept, k + QStringLiteral(" \u25c6"), d.params.value(k, tr("(not logged)")));
            QFont f = item->font(0);
            f.setBold(true);
            item->setFont(0, f);
            item->setToolTip(0, tr("%1: swept by sweep %2").arg(k, read.sweep->name));
        }
    }
    QMap<QString, QList<std::pair<QString, QString>>> groups;
    int others = 0;
    for (auto it = d.params.cbegin(); it != d.params.cend(); ++it)
        if (!read.swept.contains(it.key())) {
            groups[groupOf(it.key())].push_back({it.key(), it.value()});
            ++others;
        }
    QTreeWidgetItem *params =
        section(read.swept.isEmpty() ? tr("Params (%1)").arg(others) : tr("Other params (%1)").arg(others),
                others <= 20);
    params->setData(0, Qt::UserRole, QStringLiteral("params"));
    for (auto g = groups.cbegin(); g != groups.cend(); ++g) {
        QTreeWidgetItem *parent = params;
        if (!g.key().isEmpty() && g.value().size() > 1) {
            parent = new QTreeWidgetItem(params, {tr("%1.* (%2)").arg(g.key()).arg(g.value().size())});
            parent->setFirstColumnSpanned(true);
            parent->setExpanded(g.value().size() <= 5);
        }
        for (const auto &[k, v] : g.value())
            field(parent, k, v);
    }
}

// Each attempt: state, reason, nodes, what the executor said, its health check per node.
void DetailsView::fillAttempts(const Read &read)
{
    QTreeWidgetItem *attempts = section(tr("Attempts (%1)").arg(read.attempts.size()));
    attempts->setData(0, Qt::UserRole, QStringLiteral("attempts"));
    for (const core::Trial &t : read.attempts) {
        QTreeWidgetItem *a = field(attempts, tr("attempt %1").arg(t.attempt), attemptLine(t));
        if (core::phaseOf(t.trialState()) == core::Phase::Failed)  // the sweep tree's colour for failed
            a->setForeground(1, QColor(0xe53935));
        field(a, tr("state"), t.state);
        if (!t.exitReason.isEmpty())
            field(a, tr("exit reason"), t.exitReason);
        field(a, tr("nodes"), t.nodes.isEmpty() ? tr("(not known)") : t.nodes);
        if (!t.detail.isEmpty())
            field(a, tr("executor said"), t.detail);
        if (!t.slurmJobId.isEmpty())
            field(a, tr("Slurm job"),
                  t.slurmTaskId.isEmpty() ? t.slurmJobId : t.slurmJobId + QLatin1Char('_') + t.slurmTaskId);
        if (!t.task.isEmpty())
            field(a, tr("task"), t.task);
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
                if (!n.pass)
                    item->setForeground(1, QColor(0xe53935));
            }
        }
    }
}

// What it used and where the time went: `orrery runs show` and `runs goodput`'s figures.
void DetailsView::fillUsage(const Read &read)
{
    const core::GoodputParts &g = read.goodput.total;
    QTreeWidgetItem *usage = section(tr("Usage"), false);
    field(usage, tr("GPU-hours"),
          read.usage.attempts > 0 ? core::usageCell(read.usage, read.price) : tr("none yet"))
        ->setToolTip(1, core::describeUsage(read.usage, read.price));
    if (g.wallS > 0) {
        field(usage, tr("goodput"), tr("%1% of the wall time trained").arg(100.0 * g.goodput(), 0, 'f', 1));
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
}

// Artifacts and tags, collapsed.
void DetailsView::fillFiles(const core::RunDetails &d)
{
    QTreeWidgetItem *artifacts = section(tr("Artifacts (%1)").arg(d.artifacts.size()), false);
    for (const core::Artifact &a : d.artifacts)
        field(artifacts, a.path,
              QStringLiteral("%1%2 · %3")
                  .arg(a.kind, a.step >= 0 ? tr(" at step %1").arg(a.step) : QString(),
                       a.localPath.isEmpty() ? a.remotePath : a.localPath));

    QTreeWidgetItem *tags = section(tr("Tags (%1)").arg(d.tags.size()), false);
    for (auto it = d.tags.cbegin(); it != d.tags.cend(); ++it)
        field(tags, it.key(), it.value());
}

void DetailsView::fitFieldColumn()
{
    // The field column as wide as its names but never more than 45% of the view, so the values
    // stay readable at the dock's default width (a fixed 170 px left them a sliver).
    resizeColumnToContents(0);
    const int cap = std::max(90, int(viewport()->width() * 0.45));
    if (columnWidth(0) > cap)
        setColumnWidth(0, cap);
}

}  // namespace orrery::gui
