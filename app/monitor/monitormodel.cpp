// SPDX-License-Identifier: GPL-3.0-or-later
#include "monitormodel.h"

#include "orrery/core/format.h"
#include "orrery/core/healthreport.h"
#include "orrery/core/params.h"
#include "orrery/core/pendingreason.h"
#include "orrery/core/sweepoverview.h"
#include "orrery/remote/nodes.h"
#include "orrery/remote/sweepoperations.h"

#include <QDateTime>
#include <QHash>
#include <QSet>

#include <algorithm>
#include <cmath>

namespace orrery::monitor {

namespace {

QString clock(qint64 ms)
{
    return QDateTime::fromMSecsSinceEpoch(ms).toString(QStringLiteral("HH:mm:ss"));
}

QString ago(qint64 thenMs, qint64 nowMs)
{
    const qint64 s = std::max<qint64>(0, (nowMs - thenMs) / 1000);
    if (s < 120)
        return QStringLiteral("%1 s ago").arg(s);
    if (s < 7200)
        return QStringLiteral("%1 min ago").arg(s / 60);
    return QStringLiteral("at %1").arg(clock(thenMs));
}

QString cut(const QString &text, int width, const QString &ellipsis)
{
    if (width <= 0)
        return {};
    if (text.size() <= width)
        return text;
    if (width <= ellipsis.size())
        return text.left(width);
    return text.left(width - ellipsis.size()) + ellipsis;
}

QString firstLine(const QString &text)
{
    return text.section(QLatin1Char('\n'), 0, 0).trimmed();
}

}  // namespace

// --- trials ---------------------------------------------------------------------------------

namespace {

// The monitor's "done" is every trial that ended without failing: stopped early or cancelled too.
TrialCounts fromPhases(const core::PhaseCounts &p)
{
    return TrialCounts{p.done + p.stopped, p.running, p.queued, p.failed, p.total};
}

}  // namespace

TrialCounts countTrials(const QList<core::Trial> &trials)
{
    return fromPhases(core::countPhases(trials));
}

QStringList compactParams(const QList<QMap<QString, QString>> &params)
{
    QStringList keys;
    for (const auto &p : params)
        for (auto it = p.begin(); it != p.end(); ++it)
            if (!keys.contains(it.key()))
                keys.append(it.key());
    keys.sort();
    const QStringList differing = core::differingParams(params);
    const QStringList &shown = differing.isEmpty() ? keys : differing;
    QHash<QString, int> shortUses;
    for (const QString &key : shown)
        ++shortUses[key.section(QLatin1Char('.'), -1)];
    QStringList out;
    for (const auto &p : params) {
        QStringList parts;
        for (const QString &key : shown) {
            if (!p.contains(key))
                continue;
            const QString shortKey = key.section(QLatin1Char('.'), -1);
            parts.append((shortUses.value(shortKey) == 1 ? shortKey : key) + QLatin1Char('=') + p.value(key));
        }
        out.append(parts.join(QLatin1Char(' ')));
    }
    return out;
}

// --- snapshots ------------------------------------------------------------------------------

namespace {

// The best run's metric in at most `sparkWidth` buckets (each bucket's last value).
std::vector<double> bestHistory(const core::TrackingStore &store, core::RunId run, const QString &metric,
                                int sparkWidth)
{
    std::vector<double> out;
    core::HistoryQuery q;
    q.buckets = std::max(1, sparkWidth);
    const core::MetricHistory h = store.history(run, metric, q);
    if (h.downsampled) {
        for (const core::HistoryBucket &b : h.buckets)
            out.push_back(b.last.value);
    } else {
        for (const core::MetricPoint &p : h.points)
            out.push_back(p.value);
    }
    return out;
}

// The sweep at a glance, as `orrery sweep status` and the window show it. `prices` keeps each
// cluster's price read once a snapshot; `progress` as readStore's.
SweepSummary summarizeSweep(const core::TrackingStore &store, const core::Sweep &sw, qint64 nowMs,
                            int sparkWidth, QHash<QString, std::optional<core::Price>> &prices,
                            QHash<core::SweepId, core::SweepProgressTracker> *progress)
{
    SweepSummary s;
    s.sweep = sw;
    s.active = core::isActive(sw.sweepState());
    core::OverviewOptions options;
    options.nowMs = nowMs;
    options.bestVideo = false;  // shown by neither
    // Priced as `sweep list` and the window price it: the monitor showed no cost.
    if (!prices.contains(sw.cluster))
        prices.insert(sw.cluster, remote::executorPrice(sw.cluster));
    options.price = prices.value(sw.cluster);
    core::SweepProgressTracker once;
    if (s.active)  // an active sweep's rates need the tracker kept between reads
        options.tracker = progress ? &(*progress)[sw.id] : &once;
    const core::SweepOverview o = core::readSweepOverview(store, sw, options);
    s.usage = o.usage;
    s.price = o.price;
    s.progress = o.progress;
    s.counts = fromPhases(o.counts);
    if (o.best) {
        s.best = o.best->value;
        s.bestRun = o.best->name;
        s.bestHistory = bestHistory(store, o.best->run, sw.metricName, sparkWidth);
    }
    return s;
}

// The trials of sweep snap.trialsOf, why its queued ones wait and each one's usage, as of
// snap.takenMs. One read of the attempts and one of the runs' metrics, whatever the number of
// trials; the params are the trials' own (what the plan gave them), so a queued trial shows its too.
void readTrials(const core::TrackingStore &store, StoreSnapshot &snap)
{
    // A trial table longer than any screen is not shown further (the sweep's own view has it all).
    constexpr qsizetype kMaxTrials = 1000;
    const QList<core::TrialSummary> summaries = store.trialSummaries(snap.trialsOf).mid(0, kMaxTrials);
    QList<core::Params> params;
    for (const core::TrialSummary &s : summaries)
        params.append(core::paramsFromJson(s.trial.params));
    const QStringList compact = compactParams(params);
    QHash<int, core::Usage> usage;
    const QList<core::Trial> attempts = store.trials(snap.trialsOf);
    for (const core::Trial &t : attempts)
        usage[t.index] += core::attemptUsage(t, snap.takenMs);
    snap.trialsWaiting = core::queuedSummary(core::latestAttempts(attempts), snap.takenMs);
    for (qsizetype i = 0; i < summaries.size(); ++i) {
        const core::TrialSummary &s = summaries[i];
        TrialRow row;
        row.trial = s.trial;
        row.params = compact.value(i);
        if (s.step >= 0)
            row.step = s.step;
        row.latest = s.latest;
        row.best = s.best;
        row.usage = usage.value(s.trial.index);
        snap.trials.append(row);
    }
}

}  // namespace

StoreSnapshot readStore(const core::TrackingStore &store, core::SweepId trialsOf, int sparkWidth,
                        int maxSweeps, QHash<core::SweepId, core::SweepProgressTracker> *progress)
{
    StoreSnapshot snap;
    snap.valid = true;
    snap.takenMs = QDateTime::currentMSecsSinceEpoch();

    QList<core::Sweep> all = store.sweeps();
    std::stable_sort(all.begin(), all.end(), [](const core::Sweep &a, const core::Sweep &b) {
        const bool aa = core::isActive(a.sweepState()), ba = core::isActive(b.sweepState());
        return aa != ba ? aa : a.id > b.id;
    });
    QHash<QString, std::optional<core::Price>> prices;  // each cluster's read once a snapshot
    for (const core::Sweep &sw : all) {
        if (!core::isActive(sw.sweepState()) && snap.sweeps.size() >= maxSweeps)
            break;
        snap.sweeps.append(summarizeSweep(store, sw, snap.takenMs, sparkWidth, prices, progress));
    }
    if (progress)  // the rates of sweeps that ended are not needed again
        progress->removeIf([&](auto it) {
            return std::none_of(snap.sweeps.begin(), snap.sweeps.end(),
                                [&](const SweepSummary &s) { return s.active && s.sweep.id == it.key(); });
        });

    if (trialsOf == 0)
        return snap;
    snap.trialsOf = trialsOf;
    readTrials(store, snap);
    return snap;
}

// --- tables ---------------------------------------------------------------------------------

QStringList layoutTable(const Table &table, int width, const QString &ellipsis)
{
    const qsizetype columns = table.header.size();
    QList<int> natural(columns, 0);
    for (qsizetype c = 0; c < columns; ++c) {
        natural[c] = int(table.header[c].size());
        for (const QStringList &row : table.rows)
            natural[c] = std::max(natural[c], int(row.value(c).size()));
    }
    QList<int> visible;
    for (int c = 0; c < columns; ++c)
        visible.append(c);
    QList<int> w = natural;
    auto total = [&] {
        int sum = 0;
        for (int c : visible)
            sum += w[c];
        return sum + 2 * std::max<int>(0, int(visible.size()) - 1);
    };
    auto shrinkFlex = [&] {
        w = natural;
        if (table.flexColumn >= 0 && visible.contains(table.flexColumn) && total() > width) {
            const int minimum = std::min(natural[table.flexColumn], 8);
            w[table.flexColumn] = std::max(minimum, w[table.flexColumn] - (total() - width));
        }
    };
    shrinkFlex();
    for (int drop : table.dropOrder) {
        if (total() <= width)
            break;
        visible.removeAll(drop);
        shrinkFlex();
    }

    auto line = [&](const QStringList &cells) {
        QString text;
        for (qsizetype i = 0; i < visible.size(); ++i) {
            const int c = visible[i];
            const QString cell = cut(cells.value(c), w[c], ellipsis);
            const bool last = i + 1 == visible.size();
            if (i > 0)
                text += QStringLiteral("  ");
            if (table.rightAligned.contains(c))
                text += cell.rightJustified(w[c]);
            else
                text += last ? cell : cell.leftJustified(w[c]);
        }
        while (text.endsWith(QLatin1Char(' ')))
            text.chop(1);
        return text.left(std::max(0, width));
    };
    QStringList out{line(table.header)};
    for (const QStringList &row : table.rows)
        out.append(line(row));
    return out;
}

QString formatValue(double value)
{
    return core::formatNumber(value, 4);  // 4 significant digits fit the monitor's columns
}

QString formatMegabytes(qint64 mb)
{
    if (mb < 1024)
        return QStringLiteral("%1M").arg(mb);
    const double g = double(mb) / 1024;
    if (g < 1024)
        return QString::number(g, 'f', g < 100 ? 1 : 0) + QLatin1Char('G');
    const double t = g / 1024;
    return QString::number(t, 'f', t < 100 ? 1 : 0) + QLatin1Char('T');
}

QString usageBar(int used, int total, int width, Glyphs glyphs)
{
    if (total <= 0 || width < 3)
        return {};
    const int inner = width - 2;
    const int filled = std::clamp(int(std::lround(double(used) / total * inner)), 0, inner);
    const QChar full = glyphs == Glyphs::Unicode ? QChar(0x2588) : QLatin1Char('#');  // █
    const QChar empty = glyphs == Glyphs::Unicode ? QChar(0x2591) : QLatin1Char('.');  // ░
    return QLatin1Char('[') + QString(filled, full) + QString(inner - filled, empty) + QLatin1Char(']');
}

Table partitionTable(const ClusterSnapshot &cluster, Glyphs glyphs)
{
    Table t;
    t.header = {QStringLiteral("PARTITION"), QStringLiteral("AVAIL"),     QStringLiteral("NODES UP"),
                QStringLiteral("CPUS IDLE"), QStringLiteral("GPUS IDLE"), QStringLiteral("GPUS USED"),
                QStringLiteral("TIMELIMIT")};
    t.rightAligned = {2, 3, 4};
    t.dropOrder = {6, 5};
    QHash<QString, const remote::slurm::Node *> nodes;
    for (const remote::slurm::Node &n : cluster.info.nodes)
        nodes.insert(n.name, &n);
    for (const remote::slurm::Partition &p : cluster.info.partitions) {
        int up = 0;
        for (const QString &name : p.nodes)
            if (const remote::slurm::Node *n = nodes.value(name); n && remote::isNodeUp(n->state))
                ++up;
        t.rows.append({p.name + (p.isDefault ? QStringLiteral("*") : QString()),
                       p.up ? QStringLiteral("up") : QStringLiteral("down"),
                       QStringLiteral("%1/%2").arg(up).arg(p.nodes.size()),
                       QStringLiteral("%1/%2").arg(p.cpusIdle).arg(p.cpusTotal),
                       p.gpusTotal > 0
                           ? QStringLiteral("%1/%2").arg(p.gpusTotal - p.gpusUsed).arg(p.gpusTotal)
                           : QStringLiteral("-"),
                       usageBar(p.gpusUsed, p.gpusTotal, 12, glyphs), p.timeLimit});
    }
    return t;
}

Table nodeTable(const ClusterSnapshot &cluster, const QList<core::SuspectNode> &suspects)
{
    Table t;
    t.header = {QStringLiteral("NODE"),      QStringLiteral("STATE"),     QStringLiteral("CPUS ALLOC"),
                QStringLiteral("MEM ALLOC"), QStringLiteral("GPUS USED"), QStringLiteral("PARTITIONS")};
    t.rightAligned = {2, 3, 4};
    t.flexColumn = 5;
    t.dropOrder = {5};
    if (!suspects.isEmpty()) {
        // Orrery's own word on a node: kept out of submissions, and why.
        t.header << QStringLiteral("ORRERY");
        t.flexColumn = 6;
        t.dropOrder = {5, 6};
    }
    for (const remote::slurm::Node &n : cluster.info.nodes) {
        QStringList row{n.name,
                        n.state,
                        QStringLiteral("%1/%2").arg(n.cpusAllocated).arg(n.cpusTotal),
                        formatMegabytes(n.memoryAllocatedMb) + QLatin1Char('/') + formatMegabytes(n.memoryMb),
                        n.gpusTotal > 0 ? QStringLiteral("%1/%2").arg(n.gpusUsed).arg(n.gpusTotal)
                                        : QStringLiteral("-"),
                        n.partitions.join(QLatin1Char(','))};
        if (!suspects.isEmpty()) {
            QString mark;
            for (const core::SuspectNode &s : suspects)
                if (s.node == n.name)
                    mark = QStringLiteral("suspect (%1): %2").arg(s.source, s.reason);
            row << mark;
        }
        t.rows.append(row);
    }
    return t;
}

Table queueTable(const ClusterSnapshot &cluster)
{
    Table t;
    t.header = {QStringLiteral("JOBID"),  QStringLiteral("NAME"),    QStringLiteral("STATE"),
                QStringLiteral("REASON"), QStringLiteral("ELAPSED"), QStringLiteral("NODES")};
    t.rightAligned = {4};
    t.flexColumn = 1;
    t.dropOrder = {5, 3};
    for (const remote::slurm::Job &j : cluster.queue) {
        QString nodes = QString::number(j.nodes);
        if (!j.nodeList.isEmpty())
            nodes += QLatin1Char(' ') + j.nodeList;
        t.rows.append({j.jobId, j.name, j.state, j.reason, j.elapsed, nodes});
    }
    return t;
}

// "42% ETA 1m12s" for an active sweep whose trials say their total steps; "-" otherwise.
QString progressCell(const std::optional<core::SweepProgress> &p)
{
    if (!p || p->stepsTotal <= 0)
        return QStringLiteral("-");
    QString cell = QStringLiteral("%1%").arg(int(100.0 * double(p->stepsDone) / double(p->stepsTotal)));
    if (p->etaMs)
        cell += QStringLiteral(" ETA ") + core::formatDuration(*p->etaMs);
    return cell;
}

Table sweepTable(const StoreSnapshot &store, int sparkWidth, Glyphs glyphs)
{
    Table t;
    t.header = {QStringLiteral("SWEEP"),  QStringLiteral("WHERE"),          QStringLiteral("STATE"),
                QStringLiteral("METRIC"), QStringLiteral("TRIALS d/r/q/f"), QStringLiteral("STEPS"),
                QStringLiteral("BEST"),   QStringLiteral("TREND"),          QStringLiteral("GPU-H")};
    t.rightAligned = {6, 8};
    t.flexColumn = 0;
    t.dropOrder = {3, 8, 2, 7, 5};
    for (const SweepSummary &s : store.sweeps) {
        const TrialCounts &c = s.counts;
        QString metric = s.sweep.metricName;
        if (!metric.isEmpty())
            metric += QLatin1Char(' ') + core::bestWord(s.sweep.metricGoal);
        t.rows.append({s.sweep.name, s.sweep.cluster.isEmpty() ? QStringLiteral("local") : s.sweep.cluster,
                       s.sweep.state, metric,
                       QStringLiteral("%1/%2/%3/%4 of %5")
                           .arg(c.done)
                           .arg(c.running)
                           .arg(c.queued)
                           .arg(c.failed)
                           .arg(c.total),
                       progressCell(s.progress), s.best ? formatValue(*s.best) : QStringLiteral("-"),
                       sparkline(s.bestHistory, sparkWidth, glyphs),
                       s.usage.attempts == 0 ? QStringLiteral("-")
                           : s.price
                           ? QStringLiteral("%1 · %2").arg(core::formatHours(s.usage.gpuHours),
                                                           core::formatCost(s.usage.gpuHours, *s.price))
                           : core::formatHours(s.usage.gpuHours)});
    }
    return t;
}

Table trialTable(const StoreSnapshot &store)
{
    Table t;
    t.header = {QStringLiteral("#"),      QStringLiteral("STATE"), QStringLiteral("ATTEMPT"),
                QStringLiteral("PARAMS"), QStringLiteral("STEP"),  QStringLiteral("LATEST"),
                QStringLiteral("BEST"),   QStringLiteral("GPU-H")};
    t.rightAligned = {0, 2, 4, 5, 6, 7};
    t.flexColumn = 3;
    t.dropOrder = {2, 7, 4};
    // The latest attempt's health check (docs/sweeps.md "Health check"), the first column to go.
    t.header << QStringLiteral("HEALTH");
    t.dropOrder.prepend(8);
    const QString none = QStringLiteral("-");
    for (const TrialRow &r : store.trials)
        t.rows.append({QString::number(r.trial.index), r.trial.state, QString::number(r.trial.attempt),
                       r.params, r.step ? QString::number(*r.step) : none,
                       r.latest ? formatValue(*r.latest) : none, r.best ? formatValue(*r.best) : none,
                       r.usage.attempts > 0 ? core::formatHours(r.usage.gpuHours) : none,
                       core::healthCell(r.trial.health)});
    return t;
}

// --- the screen -----------------------------------------------------------------------------

QString sanitizeLogLine(const QString &lineIn, int width, const QString &ellipsis)
{
    if (width <= 0)
        return {};
    QStringView line(lineIn);
    while (line.endsWith(QLatin1Char('\r')))
        line.chop(1);
    if (const qsizetype cr = line.lastIndexOf(QLatin1Char('\r')); cr >= 0)
        line = line.mid(cr + 1);
    // Every character takes a cell at least: what lies past width + 1 of them is cut anyway.
    line = line.left(width + 1);
    QString out;
    out.reserve(line.size());
    for (const QChar c : line) {
        const char16_t u = c.unicode();
        if (u == u'\t') {
            do
                out += QLatin1Char(' ');
            while (out.size() % 8 != 0);
        } else if (u < 0x20 || u == 0x7f || (u >= 0x80 && u < 0xa0)) {
            out += QLatin1Char('?');
        } else {
            out += c;
        }
    }
    return cut(out, width, ellipsis);
}

MonitorModel::MonitorModel(Options options) : m_options(std::move(options))
{ }

void MonitorModel::setCluster(ClusterSnapshot snapshot)
{
    m_cluster = std::move(snapshot);
}

void MonitorModel::setStore(StoreSnapshot snapshot)
{
    if (!snapshot.actionMessage.isEmpty()) {
        m_status = snapshot.actionMessage;
        m_statusError = snapshot.actionFailed;
    }
    // A read that did not load the open log view's trial keeps the tail shown so far.
    if (m_logs && snapshot.logs.of != *m_logs && m_store.logs.of == *m_logs)
        snapshot.logs = std::move(m_store.logs);
    m_store = std::move(snapshot);
    if (!m_store.sweeps.isEmpty() && selectedSweepIndex() < 0)
        m_selectedSweep = m_store.sweeps.front().sweep.id;
    if (m_store.trialsOf == m_trialsOf)
        m_trialRow = std::clamp(m_trialRow, 0, std::max(0, int(m_store.trials.size()) - 1));
}

const SweepSummary *MonitorModel::summaryOf(core::SweepId sweep) const
{
    for (const SweepSummary &s : m_store.sweeps)
        if (s.sweep.id == sweep)
            return &s;
    return nullptr;
}

int MonitorModel::selectedSweepIndex() const
{
    for (qsizetype i = 0; i < m_store.sweeps.size(); ++i)
        if (m_store.sweeps[i].sweep.id == m_selectedSweep)
            return int(i);
    return -1;
}

core::SweepId MonitorModel::wantedTrials() const
{
    if (m_trialsOf != 0)
        return m_trialsOf;
    return selectedSweepIndex() >= 0 ? m_selectedSweep : 0;
}

int MonitorModel::sparkWidth(int screenWidth)
{
    return std::clamp(screenWidth / 5, 8, 40);
}

void MonitorModel::move(int delta)
{
    if (m_focus == Panel::Cluster) {
        const int lines = int(clusterLines(1000, 0).size());
        m_clusterScroll = std::clamp(m_clusterScroll + delta, 0, std::max(0, lines - 1));
    } else if (showingTrials()) {
        m_trialRow = std::clamp(m_trialRow + delta, 0, std::max(0, int(m_store.trials.size()) - 1));
    } else if (!m_store.sweeps.isEmpty()) {
        const int i =
            std::clamp(std::max(0, selectedSweepIndex()) + delta, 0, int(m_store.sweeps.size()) - 1);
        m_selectedSweep = m_store.sweeps[i].sweep.id;
    }
}

MonitorModel::Effect MonitorModel::askCancel()
{
    if (m_focus != Panel::Sweeps)
        return Effect::None;
    const core::SweepId id = showingTrials() ? m_trialsOf : (selectedSweepIndex() >= 0 ? m_selectedSweep : 0);
    const SweepSummary *s = summaryOf(id);
    if (!s)
        return Effect::None;
    if (!s->active) {
        m_status = QStringLiteral("sweep %1 is %2: nothing to cancel").arg(s->sweep.name, s->sweep.state);
        m_statusError = false;
        return Effect::Redraw;
    }
    const int active = s->counts.running + s->counts.queued;
    m_prompt = QStringLiteral("Cancel sweep %1 (%2 active trial%3)? y/n")
                   .arg(s->sweep.name)
                   .arg(active)
                   .arg(active == 1 ? QString() : QStringLiteral("s"));
    m_promptSweep = id;
    return Effect::Redraw;
}

MonitorModel::Effect MonitorModel::openLogs()
{
    if (m_focus != Panel::Sweeps)
        return Effect::None;
    if (!showingTrials()) {
        m_status = QStringLiteral("logs are per trial: Enter shows the sweep's trials, then l");
        m_statusError = false;
        return Effect::Redraw;
    }
    if (m_store.trialsOf != m_trialsOf || m_trialRow >= m_store.trials.size())
        return Effect::None;
    m_logs = core::LogRequest{m_trialsOf, m_store.trials[m_trialRow].trial.index};
    return Effect::RefreshNow;  // the store worker reads it now
}

namespace {

// How far a moving key moves the focused panel's selection (or its scroll); 0 for any other key.
int moveOf(Key key)
{
    constexpr int kPage = 10;
    constexpr int kFar = 1'000'000;
    switch (key) {
    case Key::Up:
        return -1;
    case Key::Down:
        return 1;
    case Key::PageUp:
        return -kPage;
    case Key::PageDown:
        return kPage;
    case Key::Home:
        return -kFar;
    case Key::End:
        return kFar;
    default:
        return 0;
    }
}

}  // namespace

MonitorModel::Effect MonitorModel::answerPrompt(Key key)
{
    m_prompt.clear();
    if (key != Key::Yes) {
        m_status = QStringLiteral("not cancelled");
        return Effect::Redraw;
    }
    m_cancelRequest = std::exchange(m_promptSweep, 0);
    m_status = QStringLiteral("cancelling%1")
                   .arg(m_options.glyphs == Glyphs::Unicode ? QStringLiteral("…") : QStringLiteral("..."));
    return Effect::CancelSweep;
}

MonitorModel::Effect MonitorModel::enter()
{
    if (m_focus == Panel::Cluster) {
        m_zoomed = !m_zoomed;
        return Effect::Redraw;
    }
    if (showingTrials() || selectedSweepIndex() < 0)
        return Effect::None;
    m_trialsOf = m_selectedSweep;
    m_trialRow = 0;
    return m_store.trialsOf == m_trialsOf ? Effect::Redraw : Effect::RefreshNow;
}

MonitorModel::Effect MonitorModel::back()
{
    if (m_zoomed) {
        m_zoomed = false;
        return Effect::Redraw;
    }
    if (m_focus == Panel::Sweeps && showingTrials()) {
        m_trialsOf = 0;
        return Effect::Redraw;
    }
    return Effect::None;
}

MonitorModel::Effect MonitorModel::press(Key key)
{
    m_status.clear();  // a message lasts until the next key
    if (!m_prompt.isEmpty())  // any answer but y is no
        return answerPrompt(key);
    if (m_logs) {  // the log view: back, and quit, refresh, cancel (its sweep), help; the rest waits
        if (key == Key::Back) {
            m_logs.reset();
            return Effect::Redraw;
        }
        if (key != Key::Quit && key != Key::Refresh && key != Key::Cancel && key != Key::Help)
            return Effect::Redraw;  // clears a message
    }
    switch (key) {
    case Key::Cancel:
        return askCancel();
    case Key::Logs:
        return openLogs();
    case Key::Yes:
    case Key::Other:
        return Effect::Redraw;
    case Key::Quit:
        return Effect::Quit;
    case Key::Refresh:
        return Effect::RefreshNow;
    case Key::Help:
        m_help = !m_help;
        return Effect::Redraw;
    case Key::Up:
    case Key::Down:
    case Key::PageUp:
    case Key::PageDown:
    case Key::Home:
    case Key::End:
        move(moveOf(key));
        return Effect::Redraw;
    case Key::Tab:
    case Key::Left:
    case Key::Right:
        m_zoomed = false;
        m_focus = m_focus == Panel::Cluster ? Panel::Sweeps : Panel::Cluster;
        return Effect::Redraw;
    case Key::Enter:
        return enter();
    case Key::Back:
        return back();
    }
    return Effect::None;
}

QList<ScreenLine> MonitorModel::clusterLines(int width, qint64 nowMs) const
{
    const QString ellipsis = m_options.glyphs == Glyphs::Unicode ? QStringLiteral("…") : QStringLiteral("~");
    QList<ScreenLine> out;
    if (m_cluster.cluster.isEmpty()) {
        for (const QString &line : m_cluster.notice.split(QLatin1Char('\n')))
            out.append({cut(line, width, ellipsis), Style::Dim});
        return out;
    }
    if (!m_cluster.error.isEmpty()) {
        QString text = QStringLiteral("connection problem: %1 (retrying every %2 s")
                           .arg(firstLine(m_cluster.error))
                           .arg(m_options.refreshSeconds);
        text += m_cluster.polled ? QStringLiteral("; data from %1)").arg(clock(m_cluster.takenMs))
                                 : QStringLiteral(")");
        out.append({cut(text, width, ellipsis), Style::Error});
    }
    if (!m_cluster.polled) {
        if (m_cluster.error.isEmpty())
            out.append({QStringLiteral("connecting to %1%2").arg(m_cluster.cluster, ellipsis).left(width),
                        Style::Dim});
        return out;
    }
    Q_UNUSED(nowMs);
    auto add = [&](const Table &table) {
        const QStringList lines = layoutTable(table, width, ellipsis);
        for (qsizetype i = 0; i < lines.size(); ++i)
            out.append({lines[i], i == 0 ? Style::ColumnHeader : Style::Normal});
    };
    add(partitionTable(m_cluster, m_options.glyphs));
    add(nodeTable(m_cluster, m_store.suspects));
    if (m_cluster.queue.isEmpty())
        out.append({cut(QStringLiteral("no jobs of yours in the queue"), width, ellipsis), Style::Dim});
    else
        add(queueTable(m_cluster));
    return out;
}

QList<ScreenLine> MonitorModel::sweepLines(int width, int rows) const
{
    const QString ellipsis = m_options.glyphs == Glyphs::Unicode ? QStringLiteral("…") : QStringLiteral("~");
    QList<ScreenLine> out;
    if (!m_store.error.isEmpty())
        out.append(
            {cut(QStringLiteral("store: ") + firstLine(m_store.error), width, ellipsis), Style::Error});
    if (!m_store.hookError.isEmpty())
        out.append(
            {cut(QStringLiteral("follow: ") + firstLine(m_store.hookError), width, ellipsis), Style::Error});
    if (!m_store.valid) {
        out.append({cut(QStringLiteral("reading the store") + ellipsis, width, ellipsis), Style::Dim});
        return out;
    }
    if (m_store.sweeps.isEmpty()) {
        out.append({cut(QStringLiteral("no sweeps in this database yet"), width, ellipsis), Style::Dim});
        return out;
    }
    const QStringList lines =
        layoutTable(sweepTable(m_store, sparkWidth(width), m_options.glyphs), width, ellipsis);
    out.append({lines.front(), Style::ColumnHeader});
    const int body = std::max(1, rows - int(out.size()));
    const int selected = std::max(0, selectedSweepIndex());
    const int first = std::max(0, selected - body + 1);
    for (int i = first; i < std::min<int>(int(lines.size()) - 1, first + body); ++i)
        out.append(
            {lines[i + 1], i == selected && m_focus == Panel::Sweeps ? Style::Selected : Style::Normal});
    return out;
}

QList<ScreenLine> MonitorModel::trialLines(int width, int rows) const
{
    const QString ellipsis = m_options.glyphs == Glyphs::Unicode ? QStringLiteral("…") : QStringLiteral("~");
    QList<ScreenLine> out;
    if (m_store.trialsOf != m_trialsOf) {
        out.append({cut(QStringLiteral("reading the trials") + ellipsis, width, ellipsis), Style::Dim});
        return out;
    }
    if (m_store.trials.isEmpty()) {
        out.append({cut(QStringLiteral("no trials yet"), width, ellipsis), Style::Dim});
        return out;
    }
    // Why queued trials wait, above their table (the sweep status line's words).
    if (!m_store.trialsWaiting.isEmpty() && rows > 2) {
        out.append({cut(QStringLiteral("waiting: ") + m_store.trialsWaiting, width, ellipsis), Style::Dim});
        --rows;
    }
    const QStringList lines = layoutTable(trialTable(m_store), width, ellipsis);
    out.append({lines.front(), Style::ColumnHeader});
    const int body = std::max(1, rows - 1);
    const int first = std::max(0, m_trialRow - body + 1);
    for (int i = first; i < std::min<int>(int(lines.size()) - 1, first + body); ++i)
        out.append(
            {lines[i + 1], i == m_trialRow && m_focus == Panel::Sweeps ? Style::Selected : Style::Normal});
    return out;
}

QList<ScreenLine> MonitorModel::logLines(int width, int rows) const
{
    const QString ellipsis = m_options.glyphs == Glyphs::Unicode ? QStringLiteral("…") : QStringLiteral("~");
    QList<ScreenLine> out;
    const core::LogTail &tail = m_store.logs;
    if (!m_logs || tail.of != *m_logs) {
        out.append({cut(QStringLiteral("reading the logs") + ellipsis, width, ellipsis), Style::Dim});
        return out;
    }
    if (!tail.error.isEmpty())
        out.append({cut(QStringLiteral("logs: ") + firstLine(tail.error), width, ellipsis), Style::Error});
    if (tail.files.isEmpty()) {
        if (tail.error.isEmpty())
            out.append({cut(QStringLiteral("this trial has no log files"), width, ellipsis), Style::Dim});
        return out;
    }
    // Each file gets a heading and an equal share of the rows; what one does not need goes to
    // the others.
    const int files = int(tail.files.size());
    int left = std::max(0, rows - int(out.size()) - files);
    QList<int> share(files, 0);
    for (bool gave = true; left > 0 && gave;) {
        gave = false;
        for (int i = 0; i < files && left > 0; ++i)
            if (share[i] < tail.files[i].lines.size()) {
                ++share[i];
                --left;
                gave = true;
            }
    }
    for (int i = 0; i < files; ++i) {
        const core::LogFile &f = tail.files[i];
        QString heading = QStringLiteral("==> %1 <==").arg(f.path);
        if (!f.exists)
            heading += QStringLiteral(" (not there yet)");
        else if (f.lines.isEmpty())
            heading += QStringLiteral(" (empty)");
        out.append({sanitizeLogLine(heading, width, ellipsis), Style::ColumnHeader});
        for (qsizetype j = f.lines.size() - share[i]; j < f.lines.size(); ++j)
            out.append({sanitizeLogLine(f.lines[j], width, ellipsis), Style::Normal});
    }
    return out;
}

namespace {

QString ellipsisFor(Glyphs glyphs)
{
    return glyphs == Glyphs::Unicode ? QStringLiteral("…") : QStringLiteral("~");
}

// A whole line of the screen: cut to `width`, padded to it.
QString padded(const QString &text, int width, const QString &ellipsis)
{
    return cut(text, width, ellipsis).leftJustified(width);
}

// `lines` as whole lines of the screen, blank ones below them to fill `rows`.
QList<ScreenLine> fillRows(const QList<ScreenLine> &lines, int rows, int width, const QString &ellipsis)
{
    QList<ScreenLine> out;
    for (int i = 0; i < rows; ++i)
        out.append(i < lines.size() ? ScreenLine{padded(lines[i].text, width, ellipsis), lines[i].style}
                                    : ScreenLine{padded(QString(), width, ellipsis), Style::Normal});
    return out;
}

// The top bar: what is shown and how fresh it is, the time at its right end where it fits.
QString titleBar(const ClusterSnapshot &cluster, const StoreSnapshot &store, int width, qint64 nowMs)
{
    QString title = QStringLiteral(" orrery monitor");
    if (!cluster.cluster.isEmpty()) {
        title += QStringLiteral("  cluster %1: ").arg(cluster.cluster);
        if (!cluster.error.isEmpty())
            title += QStringLiteral("UNREACHABLE");
        else if (cluster.polled)
            title += QStringLiteral("updated ") + ago(cluster.takenMs, nowMs);
        else
            title += QStringLiteral("connecting");
    }
    int active = 0;
    for (const SweepSummary &s : store.sweeps)
        active += s.active ? 1 : 0;
    title += QStringLiteral("  sweeps: %1 active").arg(active);
    const QString now = clock(nowMs) + QLatin1Char(' ');
    if (title.size() + now.size() + 1 <= width)
        title = title.leftJustified(width - now.size()) + now;
    return title;
}

// A panel's name line; the one with the keyboard marked.
ScreenLine heading(const QString &text, bool focused, int width, Glyphs glyphs)
{
    const QString marker = glyphs == Glyphs::Unicode ? QStringLiteral("▶ ") : QStringLiteral("> ");
    return ScreenLine{padded((focused ? marker : QStringLiteral("  ")) + text, width, ellipsisFor(glyphs)),
                      focused ? Style::Focused : Style::Heading};
}

QString clusterTitle(const ClusterSnapshot &cluster)
{
    return cluster.cluster.isEmpty()
        ? QStringLiteral("Cluster")
        : QStringLiteral("Cluster %1: partitions, nodes, your queue").arg(cluster.cluster);
}

// The sweeps panel's name: "Sweeps", or whose trials it shows (`shown`; 0: none).
QString sweepsTitle(core::SweepId shown, const StoreSnapshot &store)
{
    if (shown == 0)
        return QStringLiteral("Sweeps");
    QString title = QStringLiteral("Trials of sweep %1").arg(shown);
    for (const SweepSummary &s : store.sweeps)
        if (s.sweep.id == shown) {
            title = QStringLiteral("Trials of %1").arg(s.sweep.name);
            if (!s.sweep.metricName.isEmpty())
                title +=
                    QStringLiteral(" (%1, %2)").arg(s.sweep.metricName, core::toString(s.sweep.metricGoal));
        }
    return title + QStringLiteral("  Esc back");
}

}  // namespace

ScreenLine MonitorModel::helpLine(int width) const
{
    const bool unicode = m_options.glyphs == Glyphs::Unicode;
    const QString ellipsis = ellipsisFor(m_options.glyphs);
    if (!m_prompt.isEmpty())
        return {padded(QLatin1Char(' ') + m_prompt, width, ellipsis), Style::Focused};
    if (!m_status.isEmpty())
        return {padded(QLatin1Char(' ') + m_status, width, ellipsis),
                m_statusError ? Style::Error : Style::Help};
    QString help;
    if (m_help)  // fits in 80 columns; docs/monitor.md has the rest (PgUp/PgDn, Home/End, ? again)
        help = unicode
            ? QStringLiteral(" Tab panel  ↑↓ move  Enter open  Esc back  l logs  c cancel  r refresh  q quit")
            : QStringLiteral(
                  " Tab panel  j/k move  Enter open  Esc back  l logs  c cancel  r refresh  q quit");
    else
        help = QStringLiteral(" q quit  ? help  Enter details  l logs  c cancel  Tab panel  r refresh (%1 s)")
                   .arg(m_options.refreshSeconds);
    return {padded(help, width, ellipsis), Style::Help};
}

QList<ScreenLine> MonitorModel::logView(int width, int body) const
{
    QString logsTitle = QStringLiteral("Logs of trial %1").arg(m_logs->trial);
    if (const SweepSummary *s = summaryOf(m_logs->sweep))
        logsTitle += QStringLiteral(" of %1").arg(s->sweep.name);
    if (m_store.logs.of == *m_logs)
        logsTitle += QStringLiteral(" (attempt %1, %2)").arg(m_store.logs.attempt).arg(m_store.logs.state);
    QList<ScreenLine> out{heading(logsTitle + QStringLiteral("  Esc back"), true, width, m_options.glyphs)};
    out += fillRows(logLines(width, body - 1), body - 1, width, ellipsisFor(m_options.glyphs));
    return out;
}

int MonitorModel::clusterShare(int body, int clusterLineCount) const
{
    if (m_zoomed)
        return body;
    if (body < 6)  // no room for two panels: the one with the keyboard
        return m_focus == Panel::Cluster ? body : 0;
    const int clusterNeed = clusterLineCount + 1;
    const int sweepNeed = 2 + int(m_trialsOf ? m_store.trials.size() : m_store.sweeps.size()) + 1;
    int rows = std::min(clusterNeed, std::max(std::min(3, body), body / 2));
    if (sweepNeed < body - rows)
        rows = std::min(clusterNeed, body - sweepNeed);
    if (body - rows < 2 && body >= 4)
        rows = body - 2;
    return rows;
}

QList<ScreenLine> MonitorModel::clusterPanel(const QList<ScreenLine> &lines, int room, int width) const
{
    const bool unicode = m_options.glyphs == Glyphs::Unicode;
    const QString ellipsis = ellipsisFor(m_options.glyphs);
    QList<ScreenLine> out;
    const int scroll = std::clamp(m_clusterScroll, 0, std::max(0, int(lines.size()) - room));
    for (int i = 0; i < room; ++i) {
        const int at = scroll + i;
        if (at < lines.size()) {
            ScreenLine line = lines[at];
            const bool more = i == room - 1 && at + 1 < lines.size();
            if (more)
                line = {QStringLiteral("%1 %2 more (↑↓ to scroll, Enter to zoom)")
                            .arg(ellipsis)
                            .arg(lines.size() - at),
                        Style::Dim};
            if (!unicode)
                line.text.replace(QStringLiteral("↑↓"), QStringLiteral("up/down"));
            out.append({padded(line.text, width, ellipsis), line.style});
        } else {
            out.append({padded(QString(), width, ellipsis), Style::Normal});
        }
    }
    return out;
}

QList<ScreenLine> MonitorModel::panels(int width, int body, qint64 nowMs) const
{
    const QList<ScreenLine> clusterShown = clusterLines(width, nowMs);
    const int clusterRows = clusterShare(body, int(clusterShown.size()));
    const int sweepRows = body - clusterRows;
    QList<ScreenLine> out;
    if (clusterRows > 0) {
        out.append(heading(clusterTitle(m_cluster), m_focus == Panel::Cluster, width, m_options.glyphs));
        out += clusterPanel(clusterShown, clusterRows - 1, width);
    }
    if (sweepRows > 0) {
        out.append(
            heading(sweepsTitle(m_trialsOf, m_store), m_focus == Panel::Sweeps, width, m_options.glyphs));
        const int room = sweepRows - 1;
        const QList<ScreenLine> lines = m_trialsOf ? trialLines(width, room) : sweepLines(width, room);
        out += fillRows(lines, room, width, ellipsisFor(m_options.glyphs));
    }
    return out;
}

QList<ScreenLine> MonitorModel::render(int width, int height, qint64 nowMs) const
{
    QList<ScreenLine> screen;
    if (width <= 0 || height <= 0)
        return screen;
    const QString ellipsis = ellipsisFor(m_options.glyphs);
    screen.append({padded(titleBar(m_cluster, m_store, width, nowMs), width, ellipsis), Style::Title});
    if (height == 1)
        return screen;
    const int body = height - 2;  // between the top bar and the keys
    if (body > 0 && m_logs)  // the log view takes the whole body
        screen += logView(width, body);
    else if (body > 0)
        screen += panels(width, body, nowMs);
    screen.append(helpLine(width));
    return screen;
}

}  // namespace orrery::monitor
