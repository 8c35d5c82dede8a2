// SPDX-License-Identifier: GPL-3.0-or-later
#include "compareview.h"

#include "chartarea.h"
#include "comparisontabs.h"
#include "parallelcoordinates.h"
#include "runselection.h"
#include "runstablemodel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QRegularExpression>
#include <QSet>
#include <QSlider>
#include <QSplitter>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace orrery::gui {

using core::RunId;

namespace {

constexpr int kMaxCharts = 24;  // panels a search picks at most (each is a query per refresh)
// The panel groups that lead, in this order; other prefixes follow by name, then unprefixed keys.
constexpr const char *kGroupOrder[] = {"train/", "eval/", "perf/", "system/"};

// Keys in panel order: the groups in order of their first key (so the sweep's metric, listed
// first, leads with its group), the keys of a group together in their given order.
QStringList groupedByPrefix(const QStringList &keys)
{
    QStringList groups;
    for (const QString &k : keys)
        if (!groups.contains(metricGroup(k)))
            groups.push_back(metricGroup(k));
    QStringList out;
    for (const QString &g : std::as_const(groups))
        for (const QString &k : keys)
            if (metricGroup(k) == g)
                out.push_back(k);
    return out;
}

// The metrics the selected runs have logged, in the snapshot's order; every metric of the
// database while nothing is selected.
QStringList loggedMetrics(const QStringList &keys, const QList<RunId> &selected, const RunsTableModel &runs)
{
    QSet<QString> logged;
    for (RunId id : selected)
        if (const core::RunRow *r = runs.findRun(id))
            for (const core::LatestMetric &m : r->latest)
                logged.insert(m.key);
    if (selected.isEmpty())
        return keys;
    QStringList out;
    for (const QString &k : keys)
        if (logged.contains(k))
            out.push_back(k);
    return out;
}

// The metrics charted by default, of the `keys` the `selected` runs have logged.
QStringList defaultMetrics(const QStringList &keys, const QList<RunId> &selected, const RunsTableModel &runs)
{
    const QStringList pool = loggedMetrics(keys, selected, runs);
    QStringList out;
    // The sweep's own metric first (UX.md "Views built around the sweep"), then the kinds of
    // metric most runs are judged by, then whatever there is.
    if (const SweepNode *sweep = runs.sweeps().leadingSweep(selected))
        if (pool.contains(sweep->sweep.metricName))
            out.push_back(sweep->sweep.metricName);
    for (const char *preferred : {"eval/loss", "train/loss"})
        if (pool.contains(QLatin1String(preferred)) && !out.contains(QLatin1String(preferred)))
            out.push_back(QLatin1String(preferred));
    if (out.isEmpty() && !pool.isEmpty())
        out.push_back(pool.front());
    return out;
}

// The metrics the search `filter` picks of the `keys` the `selected` runs have logged (`valid`:
// false for a regular expression that does not parse).
QStringList searchedMetrics(const QString &filter, const QStringList &keys, const QList<RunId> &selected,
                            const RunsTableModel &runs, bool *valid)
{
    *valid = true;
    const QStringList pool = loggedMetrics(keys, selected, runs);
    QStringList out;
    if (filter.size() > 2 && filter.startsWith(QLatin1Char('/')) && filter.endsWith(QLatin1Char('/'))) {
        const QRegularExpression re(filter.mid(1, filter.size() - 2),
                                    QRegularExpression::CaseInsensitiveOption);
        *valid = re.isValid();
        if (*valid)
            out = pool.filter(re);
    } else {
        out = pool.filter(filter, Qt::CaseInsensitive);
    }
    // By group, in the fixed group order, so a search of "loss" shows train/ above eval/.
    auto rank = [](const QString &k) {
        const QString g = metricGroup(k);
        for (int i = 0; i < int(std::size(kGroupOrder)); ++i)
            if (g == QLatin1String(kGroupOrder[i]))
                return std::pair{i, QString()};
        return std::pair{g.isEmpty() ? 1000 : 100, g};
    };
    std::stable_sort(out.begin(), out.end(),
                     [&](const QString &a, const QString &b) { return rank(a) < rank(b); });
    return out.mid(0, kMaxCharts);
}

// What Compare says where runs are selected but no metric is charted.
QString noMetricsText(bool searching, const QString &filter)
{
    return searching
        ? CompareView::tr("No metric of the selected runs matches “%1”.").arg(filter)
        : CompareView::tr("The selected runs have logged no metrics yet; their charts appear with the first "
                          "points.");
}

}  // namespace

CompareView::CompareView(StoreReader *reader, RunSelection *selection, RunsTableModel *runs, QWidget *parent)
    : QWidget(parent), m_reader(reader), m_selection(selection), m_runs(runs),
      m_chartArea(std::make_unique<ChartArea>(reader, selection, runs, m_options, this)),
      m_tabs(std::make_unique<ComparisonTabs>(reader, selection, runs, this))
{
    QLayout *bar = m_bar.build(this);

    auto *split = new QSplitter(Qt::Vertical, this);
    split->addWidget(m_chartArea->build());
    split->addWidget(m_tabs->build());
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    // Three fifths to the charts from the start: the stretch factors share only the space beyond
    // the size hints, and the parallel coordinates' hint took most of a laptop's height.
    split->setSizes({3000, 2000});
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    layout->addWidget(split, 1);

    connect(m_chartArea.get(), &ChartArea::queried, this, &CompareView::queried);
    connect(m_selection, &RunSelection::changed, this, [this] {
        m_tabs->parallelCoordinates()->setHighlighted(m_selection->runs());
        m_chartArea->startOver();
        const QStringList before = m_metrics;
        applyMetricChoice(false);  // the leading sweep's metric may be another one
        if (m_metrics == before)
            showCharts(false, true);
    });
    m_chartArea->updateLegendAndEmpty(noMetricsText(m_metricChoice == MetricChoice::Search, m_metricFilter));
}

CompareView::~CompareView() = default;

void CompareView::setMetricKeys(const QStringList &keys)
{
    if (keys == m_metricKeys)
        return;
    m_metricKeys = keys;
    m_bar.setMetricMenu(this, groupedByPrefix(keys));
    m_bar.setXChoices(keys, m_options.axis, m_options.xMetric);  // x may be any metric, after step and time
    applyMetricChoice(false);  // a metric that got its first points may join the charts
    m_bar.setGroupChoices(m_runs->paramKeys(), m_options.groupBy);
    m_tabs->updateParamChoices();
}

void CompareView::setMetrics(const QStringList &keys)
{
    const bool changed = m_metricChoice != MetricChoice::Chosen || groupedByPrefix(keys) != m_metrics;
    m_metricChoice = MetricChoice::Chosen;
    const QStringList grouped = groupedByPrefix(keys);
    if (changed)
        Q_EMIT metricChoiceChanged();
    if (grouped == m_metrics)
        return;
    m_metrics = grouped;
    showCharts(true, true);
}

void CompareView::setMetricFilter(const QString &pattern)
{
    const MetricChoice before = m_metricChoice;
    const QString filter = m_metricFilter;
    m_metricFilter = pattern.trimmed();
    if (m_bar.metricSearch->text().trimmed() != m_metricFilter) {
        const QSignalBlocker block(m_bar.metricSearch);
        m_bar.metricSearch->setText(pattern);
    }
    m_metricChoice = m_metricFilter.isEmpty() ? MetricChoice::Default : MetricChoice::Search;
    applyMetricChoice(true);
    if (m_metricChoice != before || m_metricFilter != filter)
        Q_EMIT metricChoiceChanged();
}

CompareView::MetricChoiceState CompareView::metricChoice() const
{
    switch (m_metricChoice) {
    case MetricChoice::Chosen:
        return {m_metrics, {}};
    case MetricChoice::Search:
        return {{}, m_metricFilter};
    case MetricChoice::Default:
        break;
    }
    return {};
}

void CompareView::setMetricChoice(const MetricChoiceState &state)
{
    if (!state.chosen.isEmpty())
        setMetrics(state.chosen);
    else
        setMetricFilter(state.filter);  // empty: the default metrics
}

// Recomputes the charted metrics unless the user chose them in the menu; rebuilds the charts
// when they changed (or when `force`: a new search of the same metrics still starts over).
void CompareView::applyMetricChoice(bool force)
{
    QStringList next = m_metrics;
    if (m_metricChoice == MetricChoice::Default) {
        next = defaultMetrics(m_metricKeys, m_selection->runs(), *m_runs);
    } else if (m_metricChoice == MetricChoice::Search) {
        bool valid = true;
        const QStringList found =
            searchedMetrics(m_metricFilter, m_metricKeys, m_selection->runs(), *m_runs, &valid);
        QPalette pal = m_bar.metricSearch->palette();
        pal.setColor(QPalette::Text, valid ? palette().color(QPalette::Text) : QColor(200, 0, 0));
        m_bar.metricSearch->setPalette(pal);
        if (valid)
            next = found;
    }
    for (QAction *a : m_bar.metricButton->menu()->actions()) {
        const QSignalBlocker block(a);
        a->setChecked(next.contains(a->text()));
    }
    next = groupedByPrefix(next);
    if (next == m_metrics && !force)
        return;
    m_metrics = next;
    showCharts(true, true);
}

void CompareView::setXAxis(core::XAxis axis)
{
    if (axis == m_options.axis && m_options.xMetric.isEmpty())
        return;
    m_options.axis = axis;
    m_options.xMetric.clear();
    const QSignalBlocker block(m_bar.axisBox);
    m_bar.axisBox->setCurrentIndex(m_bar.axisBox->findData(int(axis)));
    showCharts(true, true);
}

void CompareView::setXMetric(const QString &key)
{
    if (key == m_options.xMetric)
        return;
    m_options.xMetric = key;
    const QSignalBlocker block(m_bar.axisBox);
    int index = key.isEmpty() ? m_bar.axisBox->findData(int(m_options.axis)) : m_bar.axisBox->findData(key);
    if (index < 0) {  // not logged (yet) by the runs shown: offered all the same
        m_bar.axisBox->addItem(key, key);
        index = m_bar.axisBox->count() - 1;
    }
    m_bar.axisBox->setCurrentIndex(index);
    showCharts(true, true);
}

void CompareView::setFitYToView(bool on)
{
    m_options.fitY = on;
    const QSignalBlocker block(m_bar.fitYBox);
    m_bar.fitYBox->setChecked(on);
    m_chartArea->applyFitY();
}

void CompareView::setLogY(bool on)
{
    m_options.logY = on;
    m_bar.logBox->setChecked(on);
    m_chartArea->applyLogY();
}

void CompareView::setSmoothing(double weight)
{
    m_options.smoothing = std::clamp(weight, 0.0, 0.99);
    const QSignalBlocker block(m_bar.smoothSlider);
    m_bar.smoothSlider->setValue(int(std::lround(m_options.smoothing * 100)));
    m_bar.smoothLabel->setText(smoothingText());
    m_chartArea->redraw();
}

void CompareView::setGroupBy(const QString &param)
{
    m_options.groupBy = param;
    const QSignalBlocker block(m_bar.groupBox);
    m_bar.groupBox->setCurrentIndex(std::max(0, m_bar.groupBox->findText(param)));
    m_chartArea->redraw();
}

QString CompareView::smoothingText() const
{
    return m_options.smoothing > 0 ? QString::number(m_options.smoothing, 'f', 2) : tr("off");
}

void CompareView::showCharts(bool rebuild, bool fullRange)
{
    if (rebuild)
        m_chartArea->rebuild(m_metrics);
    m_chartArea->updateLegendAndEmpty(noMetricsText(m_metricChoice == MetricChoice::Search, m_metricFilter));
    m_tabs->update(m_metrics);  // the parallel coordinates' last axis is the first chart's metric
    m_chartArea->query(fullRange);
}

void CompareView::refresh()
{
    // Hidden (another tab is current): nothing to draw, and a live refresh of 100,000 runs need
    // not lay out parallel coordinates nobody sees. Done when the tab is shown.
    if (!isVisible()) {
        m_stale = true;
        return;
    }
    m_stale = false;
    const QStringList before = m_metrics;
    applyMetricChoice(false);  // a metric that got its first points joins the charts
    if (m_metrics != before)
        return;  // rebuilt and queried
    // A chart nobody zoomed follows the new points (its whole history, rescaled); a zoomed one
    // keeps the user's range and shows what arrived inside it.
    showCharts(false, m_chartArea->following());
}

void CompareView::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    if (m_stale)
        refresh();
}

QList<QCustomPlot *> CompareView::charts() const
{
    return m_chartArea->charts();
}

QStringList CompareView::chartGroups() const
{
    return m_chartArea->chartGroups();
}

ChartLegend *CompareView::legend() const
{
    return m_chartArea->legend();
}

QLabel *CompareView::groupLegend() const
{
    return m_chartArea->groupLegend();
}

QString CompareView::emptyMessage() const
{
    return m_chartArea->emptyMessage();
}

bool CompareView::following() const
{
    return m_chartArea->following();
}

RunId CompareView::highlightedRun() const
{
    return m_chartArea->highlightedRun();
}

ParallelCoordinates *CompareView::parallelCoordinates() const
{
    return m_tabs->parallelCoordinates();
}

ImportanceView *CompareView::importanceView() const
{
    return m_tabs->importanceView();
}

QComboBox *CompareView::scatterParam() const
{
    return m_tabs->scatterParam();
}

QCustomPlot *CompareView::scatter() const
{
    return m_tabs->scatter();
}

QStandardItemModel *CompareView::diffModel() const
{
    return m_tabs->diffModel();
}

void CompareView::setXRange(double lo, double hi)
{
    m_chartArea->setXRange(lo, hi);
}

QList<std::pair<double, double>> CompareView::curve(int chart, RunId run) const
{
    return m_chartArea->curve(chart, run);
}

QList<std::pair<double, double>> CompareView::band(int chart, const QString &group, int which) const
{
    return m_chartArea->band(chart, group, which);
}

bool CompareView::exportCharts(const QString &path, QString *error)
{
    return m_chartArea->exportCharts(path, error);
}

int CompareView::completedQueries() const
{
    return m_chartArea->completedQueries();
}

void CompareView::setRequeryOnZoom(bool on)
{
    m_chartArea->setRequeryOnZoom(on);
}

}  // namespace orrery::gui
