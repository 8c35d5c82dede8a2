// SPDX-License-Identifier: GPL-3.0-or-later
#include "runstablemodel.h"

#include "runcolors.h"

#include "orrery/core/format.h"

#include <QColor>
#include <QDateTime>
#include <QPalette>
#include <QScopedValueRollback>

#include <algorithm>
#include <cmath>

namespace orrery::gui {

using core::RunRow;

namespace {

QString duration(qint64 ms)
{
    if (ms < 0)
        return {};
    const qint64 s = ms / 1000;
    if (s < 3600)
        return QStringLiteral("%1:%2").arg(s / 60).arg(s % 60, 2, 10, QLatin1Char('0'));
    return QStringLiteral("%1:%2:%3")
        .arg(s / 3600)
        .arg(s / 60 % 60, 2, 10, QLatin1Char('0'))
        .arg(s % 60, 2, 10, QLatin1Char('0'));
}

// Numbers sort as numbers, text as text, numbers before text; a missing value is invalid.
bool lessValue(const QVariant &a, const QVariant &b)
{
    const bool an = a.typeId() == QMetaType::Double, bn = b.typeId() == QMetaType::Double;
    if (an && bn) {
        const double x = a.toDouble(), y = b.toDouble();
        if (std::isnan(x) || std::isnan(y))
            return !std::isnan(x) && std::isnan(y);
        return x < y;
    }
    if (an != bn)
        return an;
    return a.toString() < b.toString();
}

// Ended: end − start; running: the refresh's clock − start; else none (-1).
qint64 durationMs(const core::Run &run, qint64 nowMs)
{
    if (!run.startTimeMs)
        return -1;
    if (run.endTimeMs)
        return run.endTimeMs - run.startTimeMs;
    return run.status == core::RunStatus::Running ? std::max<qint64>(0, nowMs - run.startTimeMs) : -1;
}

QVariant paramValue(const QString &text)
{
    bool ok = false;
    const double v = text.toDouble(&ok);
    return ok ? QVariant(v) : QVariant(text);
}

}  // namespace

void RunsTableModel::setSweeps(SweepIndex sweeps)
{
    m_sweeps = std::move(sweeps);
    m_trialOfRun.clear();
    for (const SweepNode &node : std::as_const(m_sweeps.sweeps))
        for (const core::TrialSummary &t : node.trials)
            if (t.trial.runId) {
                TrialInfo info{t.trial.id, t.step, &t.trial.config, node.trialUsage.value(t.trial.index), {}};
                if (const auto g = node.runGoodput.constFind(t.trial.runId); g != node.runGoodput.cend())
                    info.goodput = *g;
                m_trialOfRun.insert(t.trial.runId, info);
            }
}

std::optional<std::pair<qint64, qint64>> RunsTableModel::progressOf(core::RunId run) const
{
    const auto it = m_trialOfRun.constFind(run);
    if (it == m_trialOfRun.cend())
        return std::nullopt;
    auto total = m_totals.constFind(it->trialId);
    if (total == m_totals.cend())
        total = m_totals.insert(it->trialId, core::configuredSteps(*it->config).value_or(-1));
    if (*total <= 0)
        return std::nullopt;
    return std::pair<qint64, qint64>{std::max<qint64>(it->step, 0), *total};
}

void RunsTableModel::setRuns(QList<RunRow> rows, const QStringList &paramKeys, const QStringList &metricKeys)
{
    m_nowMs = QDateTime::currentMSecsSinceEpoch();
    QList<core::RunId> ids;
    ids.reserve(rows.size());
    for (const RunRow &r : std::as_const(rows))
        ids.push_back(r.run.id);
    const SweepNode *leading = m_sweeps.leadingSweep(ids);
    const QString sweepMetric = leading ? leading->sweep.metricName : QString();
    // The same runs in the same columns (a live refresh): replace the values, keep the view.
    bool sameShape = paramKeys == m_params && metricKeys == m_metrics && rows.size() == m_rows.size() &&
        sweepMetric == m_sweepMetric;
    if (sameShape) {
        QHash<core::RunId, qsizetype> incoming;
        for (qsizetype i = 0; i < rows.size(); ++i)
            incoming.insert(rows[i].run.id, i);
        for (const RunRow &r : std::as_const(m_rows))
            if (!incoming.contains(r.run.id)) {
                sameShape = false;
                break;
            }
        if (sameShape) {
            for (RunRow &r : m_rows)
                r = std::move(rows[incoming.value(r.run.id)]);
            applyOrder();
            if (m_fetched > 0) {
                Q_EMIT dataChanged(index(0, 0), index(m_fetched - 1, columnCount() - 1));
                if (!m_groupBy.isEmpty())
                    Q_EMIT headerDataChanged(Qt::Vertical, 0, m_fetched - 1);
            }
            return;
        }
    }
    beginResetModel();
    m_rows = std::move(rows);
    m_params = paramKeys;
    m_metrics = metricKeys;
    m_sweepMetric = sweepMetric;
    applyOrder();
    m_fetched = std::min<int>(int(m_rows.size()), kFetchBatch);
    endResetModel();
}

void RunsTableModel::setGroupBy(const QString &paramKey)
{
    if (paramKey == m_groupBy)
        return;
    beginResetModel();
    m_groupBy = paramKey;
    applyOrder();
    endResetModel();
}

const RunRow *RunsTableModel::runAt(int row) const
{
    return row >= 0 && row < m_fetched ? &m_rows[row] : nullptr;
}

int RunsTableModel::rowOfRun(core::RunId run) const
{
    const int row = m_rowOfRun.value(run, -1);
    return row < m_fetched ? row : -1;
}

const RunRow *RunsTableModel::findRun(core::RunId run) const
{
    const int row = m_rowOfRun.value(run, -1);
    return row >= 0 ? &m_rows[row] : nullptr;
}

int RunsTableModel::paramColumn(const QString &key) const
{
    const int i = int(m_params.indexOf(key));
    return i < 0 ? -1 : FixedColumns + i;
}

int RunsTableModel::metricColumn(const QString &key) const
{
    const int i = int(m_metrics.indexOf(key));
    return i < 0 ? -1 : FixedColumns + int(m_params.size()) + i;
}

QString RunsTableModel::columnKey(int column) const
{
    static const char *const kFixed[] = {"run",      "status",   "sweep-metric", "experiment", "started",
                                         "duration", "progress", "gpu-hours",    "goodput"};
    static_assert(std::size(kFixed) == FixedColumns);
    if (column < 0 || column >= columnCount())
        return {};
    if (column < FixedColumns)
        return QString::fromLatin1(kFixed[column]);
    const int p = column - FixedColumns;
    if (p < m_params.size())
        return QLatin1String("param:") + m_params[p];
    return QLatin1String("metric:") + m_metrics[p - int(m_params.size())];
}

int RunsTableModel::columnOfKey(const QString &key) const
{
    if (key.startsWith(QLatin1String("param:")))
        return paramColumn(key.mid(6));
    if (key.startsWith(QLatin1String("metric:")))
        return metricColumn(key.mid(7));
    for (int c = 0; c < FixedColumns; ++c)
        if (columnKey(c) == key)
            return c;
    return -1;
}

QStringList RunsTableModel::varyingParams() const
{
    QList<core::RunId> ids;
    ids.reserve(m_rows.size());
    for (const RunRow &r : m_rows)
        ids.push_back(r.run.id);
    QStringList out = core::keysOf(m_sweeps.sweptParams(ids));
    // Within each sweep (and among the runs of none): a key some runs lack differs there, but
    // the constants of one sweep are not made to differ by another sweep's runs. The first 5,000
    // runs of each: enough to see what varies, bounded for 100,000.
    QHash<core::SweepId, QList<core::Params>> bySweep;
    for (const RunRow &r : m_rows) {
        QList<core::Params> &params = bySweep[m_sweeps.sweepOfRun.value(r.run.id, 0)];
        if (params.size() < 5000)
            params.push_back(r.params);
    }
    QStringList differing;
    for (const QList<core::Params> &params : std::as_const(bySweep))
        differing += core::differingParams(params);
    differing.sort();
    for (const QString &k : std::as_const(differing))
        if (!out.contains(k) && m_params.contains(k))
            out.push_back(k);
    out.removeIf([this](const QString &k) { return !m_params.contains(k); });
    return out;
}

QList<core::RunId> RunsTableModel::baselineRuns() const
{
    QList<core::RunId> out;
    for (const RunRow &r : m_rows) {
        if (!r.isBaseline())
            break;  // applyOrder puts them first
        out.push_back(r.run.id);
    }
    return out;
}

int RunsTableModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : m_fetched;
}

int RunsTableModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : FixedColumns + int(m_params.size() + m_metrics.size());
}

QVariant RunsTableModel::sortValue(const RunRow &row, int column) const
{
    switch (column) {
    case RunColumn:
        return row.run.name;
    case StatusColumn:
        return core::toString(row.run.status);
    case SweepMetricColumn:
        if (const core::LatestMetric *lm = m_sweepMetric.isEmpty() ? nullptr : row.metric(m_sweepMetric))
            return lm->last.value;
        return {};
    case ExperimentColumn:
        return row.run.experimentName;
    case StartedColumn:
        return double(row.run.startTimeMs);
    case DurationColumn: {
        const qint64 ms = durationMs(row.run, m_nowMs);
        return ms >= 0 ? QVariant(double(ms)) : QVariant();
    }
    case ProgressColumn:
        if (const auto p = progressOf(row.run.id))
            return double(p->first) / double(p->second);
        return {};
    case GpuHoursColumn:
        if (const auto it = m_trialOfRun.constFind(row.run.id);
            it != m_trialOfRun.cend() && it->usage.attempts > 0)
            return it->usage.gpuHours;
        return {};
    case GoodputColumn:
        if (const auto it = m_trialOfRun.constFind(row.run.id); it != m_trialOfRun.cend() && it->goodput)
            return *it->goodput;
        return {};
    default:
        break;
    }
    const int p = column - FixedColumns;
    if (p < m_params.size()) {
        const auto it = row.params.constFind(m_params[p]);
        return it == row.params.cend() ? QVariant() : paramValue(*it);
    }
    const int m = p - int(m_params.size());
    if (m < m_metrics.size())
        if (const core::LatestMetric *lm = row.metric(m_metrics[m]))
            return lm->last.value;
    return {};
}

QVariant RunsTableModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const RunRow &row = m_rows[index.row()];
    const int column = index.column();
    switch (role) {
    case RunIdRole:
        return row.run.id;
    case GroupCaptionRole:
        return m_groupCaptions.value(index.row());
    case SortRole:
        return sortValue(row, column);
    case Qt::DecorationRole:
        return column == RunColumn ? QVariant(runColor(row.run.id)) : QVariant();
    case Qt::BackgroundRole:
        if (!m_groupBy.isEmpty() && m_groupShade.value(index.row()))
            return QPalette().alternateBase();
        return {};
    case Qt::TextAlignmentRole:
        return column == SweepMetricColumn || column >= StartedColumn
            ? QVariant(Qt::AlignRight | Qt::AlignVCenter)
            : QVariant();
    case Qt::ToolTipRole:
        if (column == RunColumn)
            return QStringLiteral("%1 (run %2, %3)\n%4%5")
                .arg(row.run.name)
                .arg(row.run.id)
                .arg(row.run.uuid, row.run.runDir,
                     row.isBaseline() ? tr("\n★ the baseline run: shown first everywhere") : QString());
        return {};
    case Qt::DisplayRole:
        break;
    default:
        return {};
    }
    switch (column) {
    case RunColumn:
        return row.isBaseline() ? QStringLiteral("★ ") + row.run.name : row.run.name;
    case SweepMetricColumn:
        if (const core::LatestMetric *lm = m_sweepMetric.isEmpty() ? nullptr : row.metric(m_sweepMetric))
            return core::formatNumber(lm->last.value, 5);
        return QString();
    case StartedColumn:
        return row.run.startTimeMs
            ? QDateTime::fromMSecsSinceEpoch(row.run.startTimeMs).toString(QStringLiteral("yyyy-MM-dd hh:mm"))
            : QString();
    case DurationColumn:
        return duration(durationMs(row.run, m_nowMs));
    case ProgressColumn:
        if (const auto p = progressOf(row.run.id))
            return QStringLiteral("%1/%2 (%3%)").arg(p->first).arg(p->second).arg(100 * p->first / p->second);
        return QString();
    case GpuHoursColumn: {
        const QVariant h = sortValue(row, column);
        return h.isValid() ? core::formatHours(h.toDouble()) : QString();
    }
    case GoodputColumn: {
        const QVariant g = sortValue(row, column);
        return g.isValid() ? QStringLiteral("%1%").arg(100 * g.toDouble(), 0, 'f', 0) : QString();
    }
    default:
        break;
    }
    const int p = column - FixedColumns;
    if (p >= 0 && p < m_params.size())
        return row.params.value(m_params[p]);
    const int m = p - int(m_params.size());
    if (m >= 0 && m < m_metrics.size()) {
        const core::LatestMetric *lm = row.metric(m_metrics[m]);
        return lm ? core::formatNumber(lm->last.value, 5) : QString();
    }
    return sortValue(row, column);
}

QVariant RunsTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation == Qt::Vertical && role == Qt::DisplayRole && !m_groupBy.isEmpty())
        return groupCaption(section);  // the group's band: its value and run count on its first row
    if (orientation != Qt::Horizontal || (role != Qt::DisplayRole && role != Qt::ToolTipRole) ||
        section < 0 || section >= columnCount())
        return QAbstractTableModel::headerData(section, orientation, role);
    if (section == SweepMetricColumn) {
        if (role == Qt::ToolTipRole)
            return m_sweepMetric.isEmpty()
                ? tr("The metric of the sweep most of these runs belong to (none does)")
                : tr("%1: the metric of the sweep most of these runs belong to").arg(m_sweepMetric);
        return m_sweepMetric.isEmpty() ? tr("Metric") : m_sweepMetric;
    }
    static const char *const kFixed[] = {"Run",      "Status",   "",      "Experiment", "Started",
                                         "Duration", "Progress", "GPU-h", "Goodput"};
    if (role == Qt::ToolTipRole && section == GoodputColumn)
        return tr("Training time over the run's wall time (queue, start-up, evaluation, samples and "
                  "checkpoints are the rest): orrery runs goodput");
    if (role == Qt::ToolTipRole && section == ProgressColumn)
        return tr("A sweep trial's latest step over its config's train.steps");
    if (section < FixedColumns)
        return QString::fromLatin1(kFixed[section]);
    // Long metric names (train/loss_ema_0.999) are elided in the header: the tooltip has them whole.
    const int p = section - FixedColumns;
    if (p < m_params.size())
        return m_params[p];
    return m_metrics[p - int(m_params.size())];
}

void RunsTableModel::sort(int column, Qt::SortOrder order)
{
    Q_EMIT layoutAboutToBeChanged({}, QAbstractItemModel::VerticalSortHint);
    const QModelIndexList before = persistentIndexList();
    QList<core::RunId> runsBefore;
    for (const QModelIndex &i : before)
        runsBefore.push_back(m_rows[i.row()].run.id);
    m_sortColumn = column;
    m_sortOrder = order;
    applyOrder();
    QModelIndexList after;
    for (qsizetype i = 0; i < before.size(); ++i) {
        const int row = m_rowOfRun.value(runsBefore[i], -1);
        after.push_back(row >= 0 && row < m_fetched ? index(row, before[i].column()) : QModelIndex());
    }
    changePersistentIndexList(before, after);
    Q_EMIT layoutChanged({}, QAbstractItemModel::VerticalSortHint);
}

void RunsTableModel::applyOrder()
{
    const int groupColumn = m_groupBy.isEmpty() ? -1 : paramColumn(m_groupBy);
    if (m_sortColumn >= 0 || groupColumn >= 0) {
        std::vector<std::pair<QVariant, QVariant>> keys;  // (group, sort) per row
        keys.reserve(std::size_t(m_rows.size()));
        for (const RunRow &r : std::as_const(m_rows))
            keys.push_back({groupColumn >= 0 ? sortValue(r, groupColumn) : QVariant(),
                            m_sortColumn >= 0 ? sortValue(r, m_sortColumn) : QVariant()});
        std::vector<qsizetype> order(std::size_t(m_rows.size()));
        for (std::size_t i = 0; i < order.size(); ++i)
            order[i] = qsizetype(i);
        const bool descending = m_sortOrder == Qt::DescendingOrder;
        std::stable_sort(order.begin(), order.end(), [&](qsizetype a, qsizetype b) {
            const auto &ka = keys[std::size_t(a)], &kb = keys[std::size_t(b)];
            if (groupColumn >= 0) {
                if (lessValue(ka.first, kb.first))
                    return true;
                if (lessValue(kb.first, ka.first))
                    return false;
            }
            // Missing values last in either order.
            if (ka.second.isValid() != kb.second.isValid())
                return ka.second.isValid();
            return descending ? lessValue(kb.second, ka.second) : lessValue(ka.second, kb.second);
        });
        QList<RunRow> sorted;
        sorted.reserve(m_rows.size());
        for (qsizetype i : order)
            sorted.push_back(std::move(m_rows[i]));
        m_rows = std::move(sorted);
    }
    // The baseline first, whatever the order (its place in the sort is kept among baselines).
    const auto baselines =
        std::stable_partition(m_rows.begin(), m_rows.end(), [](const RunRow &r) { return r.isBaseline(); });
    const int firstOfGroups = int(baselines - m_rows.begin());
    reindex();
    m_groupShade.clear();
    m_groupCaptions.clear();
    if (groupColumn >= 0) {
        int shade = 0, start = firstOfGroups;
        if (firstOfGroups > 0)
            m_groupCaptions.insert(0, tr("★ baseline"));
        auto caption = [&](int first, int end) {
            const auto it = m_rows[first].params.constFind(m_groupBy);
            const QString value = it == m_rows[first].params.cend() ? tr("(none)") : *it;
            m_groupCaptions.insert(first,
                                   end - first == 1
                                       ? tr("%1 = %2 · 1 run").arg(m_groupBy, value)
                                       : tr("%1 = %2 · %3 runs").arg(m_groupBy, value).arg(end - first));
        };
        QVariant previous;
        for (int i = 0; i < int(m_rows.size()); ++i) {
            const QVariant g = i < firstOfGroups ? QVariant() : sortValue(m_rows[i], groupColumn);
            if (i > firstOfGroups && (lessValue(previous, g) || lessValue(g, previous))) {
                shade ^= 1;
                caption(start, i);
                start = i;
            }
            m_groupShade.push_back(i < firstOfGroups ? 0 : shade);
            previous = g;
        }
        if (start < int(m_rows.size()))
            caption(start, int(m_rows.size()));
    }
}

QString RunsTableModel::groupCaption(int row) const
{
    return m_groupCaptions.value(row);
}

void RunsTableModel::reindex()
{
    m_rowOfRun.clear();
    m_rowOfRun.reserve(m_rows.size());
    for (qsizetype i = 0; i < m_rows.size(); ++i)
        m_rowOfRun.insert(m_rows[i].run.id, int(i));
}

bool RunsTableModel::canFetchMore(const QModelIndex &parent) const
{
    return !parent.isValid() && m_fetched < m_rows.size();
}

void RunsTableModel::fetchMore(const QModelIndex &parent)
{
    // Views (and QAbstractItemModelTester) may ask again from inside rowsInserted: one batch at a time.
    if (parent.isValid() || m_fetched >= m_rows.size() || m_fetching)
        return;
    const QScopedValueRollback guard(m_fetching, true);
    const int more = std::min<int>(kFetchBatch, int(m_rows.size()) - m_fetched);
    beginInsertRows({}, m_fetched, m_fetched + more - 1);
    m_fetched += more;
    endInsertRows();
}

}  // namespace orrery::gui
