// SPDX-License-Identifier: GPL-3.0-or-later
#include "compareview.h"

#include "chartlegend.h"
#include "importanceview.h"
#include "parallelcoordinates.h"
#include "runcolors.h"
#include "runselection.h"
#include "runstablemodel.h"
#include "storereader.h"

#include "orrery/core/curves.h"
#include "orrery/core/format.h"
#include "orrery/core/params.h"

#include "qcp.h"
#include "wraplayout.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPdfWriter>
#include <QRegularExpression>
#include <QScrollArea>
#include <QSet>
#include <QSlider>
#include <QSplitter>
#include <QStackedWidget>
#include <QStandardItemModel>
#include <QSvgGenerator>
#include <QTabWidget>
#include <QTableView>
#include <QToolButton>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace orrery::gui {

using core::MetricHistory;
using core::RunId;

namespace {

constexpr int kMaxCurves = 64;  // selected runs charted at once
constexpr int kMaxEnvelopes = 4;  // min/max bands drawn up to this many curves
constexpr int kMaxCharts = 24;  // panels a search picks at most (each is a query per refresh)
constexpr int kSparse = 60;  // a curve of at most this many points shows them as dots
// The margin around the data's extent, as a share of it each side: the last eval point is a
// whole dot (5 px) inside the axis, not a half-dot on its edge.
constexpr double kPad = 0.03;
constexpr int kTimeAxes = 3;  // the x choices before the metrics: step, wall time, relative time
constexpr int kSettleMs = 150;  // a zoom or pan this long ago is over: draw antialiased again
constexpr int kHoverPx = 8;  // a curve this close to the pointer (pixels) is the one hovered
// The panel groups that lead, in this order; other prefixes follow by name, then unprefixed keys.
constexpr const char *kGroupOrder[] = {"train/", "eval/", "perf/", "system/"};

QString roleOf(const QCPGraph *g)
{
    return g->property("role").toString();
}

// A value as the chart can draw it: NaN and ±inf become gaps, and so do non-positive values
// on a log axis.
double drawable(double v, bool logY)
{
    if (!std::isfinite(v) || (logY && v <= 0))
        return std::numeric_limits<double>::quiet_NaN();
    return v;
}

}  // namespace

CompareView::CompareView(StoreReader *reader, RunSelection *selection, RunsTableModel *runs, QWidget *parent)
    : QWidget(parent), m_reader(reader), m_selection(selection), m_runs(runs)
{
    auto *bar = new WrapLayout;
    bar->setObjectName(QStringLiteral("compareBar"));
    bar->addWidget(buildChartControls());
    bar->addWidget(buildGroupControls());
    connectControls();

    auto *split = new QSplitter(Qt::Vertical, this);
    split->addWidget(buildChartArea());
    split->addWidget(buildBelow());
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    // Three fifths to the charts from the start: the stretch factors share only the space beyond
    // the size hints, and the parallel coordinates' hint took most of a laptop's height.
    split->setSizes({3000, 2000});
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    layout->addWidget(split, 1);

    m_queryTimer.setSingleShot(true);
    connect(&m_queryTimer, &QTimer::timeout, this, [this] { query(false); });
    m_settleTimer.setSingleShot(true);
    m_settleTimer.setInterval(kSettleMs);
    connect(&m_settleTimer, &QTimer::timeout, this, [this] {
        m_interacting = false;
        for (QCustomPlot *plot : std::as_const(m_charts)) {
            plot->setNotAntialiasedElements(QCP::aeFills);
            plot->replot(QCustomPlot::rpQueuedReplot);
        }
    });
    connect(m_selection, &RunSelection::changed, this, &CompareView::selectionChanged);
    updateLegendAndEmpty();
}

// The charts' controls: metrics, search, x, log and fit y, smoothing. Two groups on one row, or
// on two where the tab is narrow (WrapLayout): the bar does not set the window's least width, so
// a 1,500 px window keeps both docks' widths on this tab.
QWidget *CompareView::buildChartControls()
{
    auto *chartControls = new QWidget(this);
    chartControls->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    auto *controls = new QHBoxLayout(chartControls);
    controls->setContentsMargins(0, 0, 0, 0);
    m_metricButton = new QToolButton(this);
    m_metricButton->setText(tr("Metrics"));
    m_metricButton->setPopupMode(QToolButton::InstantPopup);
    m_metricButton->setMenu(new QMenu(m_metricButton));
    m_metricButton->setObjectName(QStringLiteral("metricButton"));
    controls->addWidget(m_metricButton);
    m_metricSearch = new QLineEdit(this);
    m_metricSearch->setObjectName(QStringLiteral("metricSearch"));
    m_metricSearch->setPlaceholderText(tr("Search metrics or /regex/"));
    m_metricSearch->setClearButtonEnabled(true);
    // The whole placeholder readable beside the clear button where there is room; on a narrow
    // screen its start ("Search metrics"), so this bar does not set the window's least width.
    const int placeholder = fontMetrics().horizontalAdvance(m_metricSearch->placeholderText());
    m_metricSearch->setMinimumWidth(fontMetrics().horizontalAdvance(tr("Search metrics")) + 20);
    m_metricSearch->setMaximumWidth(placeholder + 40);
    m_metricSearch->setToolTip(tr("Charts the metrics whose names contain this text (or match /a regular "
                                  "expression/); empty: the sweep's metric"));
    controls->addWidget(m_metricSearch, 1);
    m_searchTimer.setSingleShot(true);
    m_searchTimer.setInterval(250);
    connect(m_metricSearch, &QLineEdit::textChanged, &m_searchTimer, qOverload<>(&QTimer::start));
    connect(&m_searchTimer, &QTimer::timeout, this, [this] { setMetricFilter(m_metricSearch->text()); });
    controls->addWidget(new QLabel(tr("x:"), this));
    m_axisBox = new QComboBox(this);
    m_axisBox->addItem(tr("Step"), int(core::XAxis::Step));
    m_axisBox->addItem(tr("Wall time"), int(core::XAxis::WallTime));
    m_axisBox->addItem(tr("Relative time"), int(core::XAxis::RelativeTime));
    m_axisBox->setObjectName(QStringLiteral("xAxisBox"));
    m_axisBox->setToolTip(tr("What x is: the step, the time, or another metric (each point against "
                             "that metric's value at its step)"));
    // As wide as "Wall time": its list shows "Relative time" whole.
    m_axisBox->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_axisBox->setMinimumContentsLength(9);
    controls->addWidget(m_axisBox);
    m_logBox = new QCheckBox(tr("Log y"), this);
    controls->addWidget(m_logBox);
    m_fitYBox = new QCheckBox(tr("Fit y"), this);
    m_fitYBox->setObjectName(QStringLiteral("fitYBox"));
    m_fitYBox->setChecked(m_fitY);
    m_fitYBox->setToolTip(tr("y follows what the zoomed x range shows; off: y spans the whole history"));
    controls->addWidget(m_fitYBox);
    controls->addWidget(new QLabel(tr("Smoothing:"), this));
    m_smoothSlider = new QSlider(Qt::Horizontal, this);
    m_smoothSlider->setObjectName(QStringLiteral("smoothSlider"));
    m_smoothSlider->setRange(0, 99);
    // Wide enough to set a weight by hand: squeezed by the bar, it was a 15 px handle.
    m_smoothSlider->setMinimumWidth(90);
    m_smoothSlider->setMaximumWidth(160);
    m_smoothSlider->setToolTip(tr("EMA weight (the raw curve stays, faint)"));
    controls->addWidget(m_smoothSlider);
    m_smoothLabel = new QLabel(this);
    m_smoothLabel->setObjectName(QStringLiteral("smoothValue"));
    // Wide enough for "0.99" so the controls to the right do not move as the slider does.
    m_smoothLabel->setMinimumWidth(fontMetrics().horizontalAdvance(QStringLiteral("0.99 ")));
    m_smoothLabel->setText(smoothingText());
    controls->addWidget(m_smoothLabel);
    controls->addStretch(1);  // one row: grouping and Export at the right end
    return chartControls;
}

// Group by and Export….
QWidget *CompareView::buildGroupControls()
{
    auto *groupControls = new QWidget(this);
    groupControls->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
    auto *grouping = new QHBoxLayout(groupControls);
    grouping->setContentsMargins(0, 0, 0, 0);
    grouping->addWidget(new QLabel(tr("Group by:"), this));
    m_groupBox = new QComboBox(this);
    m_groupBox->setObjectName(QStringLiteral("compareGroupBox"));
    // As wide as a short param name, not the longest one (its list still shows them whole): a box
    // that grew to `data.source_timeout_s` made the tab, and so the window, wider.
    m_groupBox->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_groupBox->setMinimumContentsLength(8);
    m_groupBox->addItem(tr("(none)"));
    m_groupBox->setToolTip(
        tr("Runs sharing this param's value become one mean ± std band (e.g. over seeds)"));
    grouping->addWidget(m_groupBox);
    grouping->addStretch(1);
    m_exportButton = new QToolButton(this);
    m_exportButton->setText(tr("Export…"));
    m_exportButton->setObjectName(QStringLiteral("exportButton"));
    grouping->addWidget(m_exportButton);
    return groupControls;
}

// Export, x, fit and log y, smoothing and grouping, to the view's setters.
void CompareView::connectControls()
{
    connect(m_exportButton, &QToolButton::clicked, this, [this] {
        const QString path =
            QFileDialog::getSaveFileName(this, tr("Export charts"), QStringLiteral("charts.png"),
                                         tr("PNG image (*.png);;SVG (*.svg);;PDF (*.pdf)"));
        QString error;
        if (!path.isEmpty() && !exportCharts(path, &error))
            QToolTip::showText(mapToGlobal(QPoint(width() / 2, 20)), error, this);
    });
    connect(m_axisBox, &QComboBox::currentIndexChanged, this, [this] {
        const QVariant choice = m_axisBox->currentData();
        if (choice.typeId() == QMetaType::QString)
            setXMetric(choice.toString());
        else
            setXAxis(core::XAxis(choice.toInt()));
    });
    connect(m_fitYBox, &QCheckBox::toggled, this, &CompareView::setFitYToView);
    connect(m_logBox, &QCheckBox::toggled, this, &CompareView::setLogY);
    connect(m_smoothSlider, &QSlider::valueChanged, this, [this](int v) { setSmoothing(v / 100.0); });
    connect(m_groupBox, &QComboBox::currentIndexChanged, this,
            [this](int i) { setGroupBy(i <= 0 ? QString() : m_groupBox->itemText(i)); });
}

// The legend, then the panels (or what to do when there is nothing to chart).
QWidget *CompareView::buildChartArea()
{
    auto *chartArea = new QWidget(this);
    auto *chartLayout = new QVBoxLayout(chartArea);
    chartLayout->setContentsMargins(0, 0, 0, 0);
    chartLayout->setSpacing(2);
    m_legend = new ChartLegend(chartArea);
    chartLayout->addWidget(m_legend);
    // Grouped: each band's colour and what it is the mean ± std of.
    m_groupLegend = new QLabel(chartArea);
    m_groupLegend->setObjectName(QStringLiteral("groupLegend"));
    m_groupLegend->setWordWrap(true);
    m_groupLegend->hide();
    chartLayout->addWidget(m_groupLegend);
    connect(m_legend, &ChartLegend::hovered, this, &CompareView::setHighlightedRun);
    m_chartStack = new QStackedWidget(chartArea);
    auto *scroll = new QScrollArea(m_chartStack);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    auto *panels = new QWidget(scroll);
    m_chartGrid = new QGridLayout(panels);
    m_chartGrid->setContentsMargins(0, 0, 0, 0);
    m_chartGrid->setSpacing(2);
    scroll->setWidget(panels);
    m_chartStack->addWidget(scroll);
    m_emptyLabel = new QLabel(m_chartStack);
    m_emptyLabel->setObjectName(QStringLiteral("compareEmpty"));
    m_emptyLabel->setAlignment(Qt::AlignCenter);
    m_emptyLabel->setWordWrap(true);
    m_chartStack->addWidget(m_emptyLabel);
    chartLayout->addWidget(m_chartStack, 1);

    return chartArea;
}

// Below the charts: parallel coordinates, scatter, differing params, importance.
QWidget *CompareView::buildBelow()
{
    auto *below = new QTabWidget(this);
    m_below = below;
    m_parallel = new ParallelCoordinates(below);
    below->addTab(m_parallel, tr("Parallel coordinates"));
    auto *scatterPage = new QWidget(below);
    auto *scatterLayout = new QVBoxLayout(scatterPage);
    m_scatterParam = new QComboBox(scatterPage);
    scatterLayout->addWidget(m_scatterParam);
    m_scatter = new QCustomPlot(scatterPage);
    scatterLayout->addWidget(m_scatter, 1);
    below->addTab(scatterPage, tr("Scatter"));
    auto *diffPage = new QWidget(below);
    auto *diffLayout = new QVBoxLayout(diffPage);
    m_showAllBox = new QCheckBox(tr("Show all params"), diffPage);
    diffLayout->addWidget(m_showAllBox);
    m_diff = new QStandardItemModel(diffPage);
    m_diffView = new QTableView(diffPage);
    m_diffView->setModel(m_diff);
    m_diffView->setObjectName(QStringLiteral("diffView"));
    m_diffView->horizontalHeader()->setStretchLastSection(true);
    m_diffView->verticalHeader()->hide();
    m_diffView->setEditTriggers(QAbstractItemView::NoEditTriggers);
    diffLayout->addWidget(m_diffView, 1);
    below->addTab(diffPage, tr("Differences"));
    m_importance = new ImportanceView(m_reader, below);
    below->addTab(m_importance, tr("Importance"));
    connect(m_showAllBox, &QCheckBox::toggled, this, &CompareView::setShowAllParams);
    // A param the user picks stays; until then the scatter follows the selection's sweep (every
    // change this view makes itself is made with the box's signals blocked).
    connect(m_scatterParam, &QComboBox::currentIndexChanged, this, [this] {
        m_scatterParam->setProperty("chosen", m_scatterParam->currentText());
        updateBottom();
    });
    connect(below, &QTabWidget::currentChanged, this, [this] { updateBottom(); });
    connect(m_parallel, &ParallelCoordinates::brushed, this,
            [this](const QList<RunId> &brushed) { m_selection->select(brushed, m_parallel); });
    return below;
}

CompareView::~CompareView() = default;

void CompareView::setMetricKeys(const QStringList &keys)
{
    if (keys == m_metricKeys)
        return;
    m_metricKeys = keys;
    QMenu *menu = m_metricButton->menu();
    menu->clear();
    QString section = QStringLiteral("-");
    for (const QString &k : groupedByPrefix(keys)) {
        if (metricGroup(k) != section) {  // 77 metrics read better under their prefixes
            section = metricGroup(k);
            menu->addSection(section.isEmpty() ? tr("other") : section);
        }
        QAction *a = menu->addAction(k);
        a->setCheckable(true);
        a->setChecked(m_metrics.contains(k));
        connect(a, &QAction::toggled, this, [this, k](bool on) {
            QStringList next = m_metrics;
            if (on && !next.contains(k))
                next.push_back(k);
            if (!on)
                next.removeAll(k);
            setMetrics(next);
        });
    }
    {  // x may be any metric, after the step and time axes
        const QSignalBlocker block(m_axisBox);
        while (m_axisBox->count() > kTimeAxes)
            m_axisBox->removeItem(kTimeAxes);
        m_axisBox->insertSeparator(kTimeAxes);
        QStringList xKeys = keys;
        if (!m_xMetric.isEmpty() && !xKeys.contains(m_xMetric))
            xKeys << m_xMetric;
        for (const QString &k : std::as_const(xKeys))
            m_axisBox->addItem(k, k);
        m_axisBox->setCurrentIndex(m_xMetric.isEmpty() ? m_axisBox->findData(int(m_axis))
                                                       : m_axisBox->findData(m_xMetric));
    }
    applyMetricChoice(false);  // a metric that got its first points may join the charts
    m_groupBox->blockSignals(true);
    const QString group = m_groupBy;
    m_groupBox->clear();
    m_groupBox->addItem(tr("(none)"));
    m_groupBox->addItems(m_runs->paramKeys());
    m_groupBox->setCurrentIndex(std::max(0, m_groupBox->findText(group)));
    m_groupBox->blockSignals(false);
    const QString scatter = m_scatterParam->currentText();
    m_scatterParam->blockSignals(true);
    m_scatterParam->clear();
    m_scatterParam->addItems(m_runs->paramKeys());
    m_scatterParam->setCurrentIndex(std::max(0, m_scatterParam->findText(scatter)));
    m_scatterParam->blockSignals(false);
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
    rebuildCharts();
}

void CompareView::setMetricFilter(const QString &pattern)
{
    const MetricChoice before = m_metricChoice;
    const QString filter = m_metricFilter;
    m_metricFilter = pattern.trimmed();
    if (m_metricSearch->text().trimmed() != m_metricFilter) {
        const QSignalBlocker block(m_metricSearch);
        m_metricSearch->setText(pattern);
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

QString CompareView::metricGroup(const QString &key)
{
    const qsizetype slash = key.indexOf(QLatin1Char('/'));
    return slash > 0 ? key.left(slash + 1) : QString();
}

// Keys in panel order: the groups in order of their first key (so the sweep's metric, listed
// first, leads with its group), the keys of a group together in their given order.
QStringList CompareView::groupedByPrefix(const QStringList &keys) const
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

QStringList CompareView::chartGroups() const
{
    QStringList out;
    for (const QLabel *l : m_groupLabels)
        out.push_back(l->text());
    return out;
}

// The metrics the selected runs have logged, in the snapshot's order; every metric of the
// database while nothing is selected.
static QStringList loggedMetrics(const QStringList &keys, const QList<RunId> &selected,
                                 const RunsTableModel *runs)
{
    QSet<QString> logged;
    for (RunId id : selected)
        if (const core::RunRow *r = runs->findRun(id))
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

QStringList CompareView::defaultMetrics() const
{
    const QList<RunId> selected = m_selection->runs();
    const QStringList pool = loggedMetrics(m_metricKeys, selected, m_runs);
    QStringList out;
    // The sweep's own metric first (UX.md "Views built around the sweep"), then the kinds of
    // metric most runs are judged by, then whatever there is.
    if (const SweepNode *sweep = m_runs->sweeps().leadingSweep(selected))
        if (pool.contains(sweep->sweep.metricName))
            out.push_back(sweep->sweep.metricName);
    for (const char *preferred : {"eval/loss", "train/loss"})
        if (pool.contains(QLatin1String(preferred)) && !out.contains(QLatin1String(preferred)))
            out.push_back(QLatin1String(preferred));
    if (out.isEmpty() && !pool.isEmpty())
        out.push_back(pool.front());
    return out;
}

QStringList CompareView::searchedMetrics(bool *valid) const
{
    *valid = true;
    const QStringList pool = loggedMetrics(m_metricKeys, m_selection->runs(), m_runs);
    QStringList out;
    if (m_metricFilter.size() > 2 && m_metricFilter.startsWith(QLatin1Char('/')) &&
        m_metricFilter.endsWith(QLatin1Char('/'))) {
        const QRegularExpression re(m_metricFilter.mid(1, m_metricFilter.size() - 2),
                                    QRegularExpression::CaseInsensitiveOption);
        *valid = re.isValid();
        if (*valid)
            out = pool.filter(re);
    } else {
        out = pool.filter(m_metricFilter, Qt::CaseInsensitive);
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

// Recomputes the charted metrics unless the user chose them in the menu; rebuilds the charts
// when they changed (or when `force`: a new search of the same metrics still starts over).
void CompareView::applyMetricChoice(bool force)
{
    QStringList next = m_metrics;
    if (m_metricChoice == MetricChoice::Default) {
        next = defaultMetrics();
    } else if (m_metricChoice == MetricChoice::Search) {
        bool valid = true;
        const QStringList found = searchedMetrics(&valid);
        QPalette pal = m_metricSearch->palette();
        pal.setColor(QPalette::Text, valid ? palette().color(QPalette::Text) : QColor(200, 0, 0));
        m_metricSearch->setPalette(pal);
        if (valid)
            next = found;
    }
    for (QAction *a : m_metricButton->menu()->actions()) {
        const QSignalBlocker block(a);
        a->setChecked(next.contains(a->text()));
    }
    next = groupedByPrefix(next);
    if (next == m_metrics && !force)
        return;
    m_metrics = next;
    rebuildCharts();
}

void CompareView::setXAxis(core::XAxis axis)
{
    if (axis == m_axis && m_xMetric.isEmpty())
        return;
    m_axis = axis;
    m_xMetric.clear();
    const QSignalBlocker block(m_axisBox);
    m_axisBox->setCurrentIndex(m_axisBox->findData(int(axis)));
    rebuildCharts();
}

void CompareView::setXMetric(const QString &key)
{
    if (key == m_xMetric)
        return;
    m_xMetric = key;
    const QSignalBlocker block(m_axisBox);
    int index = key.isEmpty() ? m_axisBox->findData(int(m_axis)) : m_axisBox->findData(key);
    if (index < 0) {  // not logged (yet) by the runs shown: offered all the same
        m_axisBox->addItem(key, key);
        index = m_axisBox->count() - 1;
    }
    m_axisBox->setCurrentIndex(index);
    rebuildCharts();
}

void CompareView::setFitYToView(bool on)
{
    m_fitY = on;
    const QSignalBlocker block(m_fitYBox);
    m_fitYBox->setChecked(on);
    for (int i = 0; i < m_charts.size(); ++i) {
        fitY(i, false);
        m_charts[i]->replot(QCustomPlot::rpQueuedReplot);
    }
}

void CompareView::setLogY(bool on)
{
    m_logY = on;
    m_logBox->setChecked(on);
    for (QCustomPlot *plot : std::as_const(m_charts)) {
        plot->yAxis->setScaleType(on ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
        plot->yAxis->setTicker(on ? QSharedPointer<QCPAxisTicker>(new QCPAxisTickerLog)
                                  : QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
    }
    for (int i = 0; i < m_charts.size(); ++i)
        draw(i, m_data.value(i), false);
}

void CompareView::setSmoothing(double weight)
{
    m_smoothing = std::clamp(weight, 0.0, 0.99);
    const QSignalBlocker block(m_smoothSlider);
    m_smoothSlider->setValue(int(std::lround(m_smoothing * 100)));
    m_smoothLabel->setText(smoothingText());
    for (int i = 0; i < m_charts.size(); ++i)
        draw(i, m_data.value(i), false);
}

void CompareView::setGroupBy(const QString &param)
{
    m_groupBy = param;
    const QSignalBlocker block(m_groupBox);
    m_groupBox->setCurrentIndex(std::max(0, m_groupBox->findText(param)));
    for (int i = 0; i < m_charts.size(); ++i)
        draw(i, m_data.value(i), false);
}

QString CompareView::smoothingText() const
{
    return m_smoothing > 0 ? QString::number(m_smoothing, 'f', 2) : tr("off");
}

void CompareView::setShowAllParams(bool on)
{
    m_showAll = on;
    const QSignalBlocker block(m_showAllBox);
    m_showAllBox->setChecked(on);
    updateBottom();
}

void CompareView::rebuildCharts()
{
    qDeleteAll(m_charts);
    m_charts.clear();
    m_data.clear();
    m_xData.clear();
    m_fullX.clear();
    m_fullY.clear();
    m_following = true;  // other metrics: each chart starts from its whole history
    m_leftMargin = m_rightMargin = 0;
    for (const QString &key : std::as_const(m_metrics)) {
        auto *plot = new QCustomPlot(m_chartGrid->parentWidget());
        plot->setObjectName(QStringLiteral("chart:") + key);
        plot->setMinimumHeight(150);
        plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
        plot->axisRect()->setRangeDrag(Qt::Horizontal);
        plot->axisRect()->setRangeZoom(Qt::Horizontal);
        plot->setNoAntialiasingOnDrag(true);
        plot->setAutoAddPlottableToLegend(false);  // the legend is ChartLegend, over all charts
        // Polylines of thousands of points and envelope fills: the fast raster paths (an
        // antialiased fill of a 1,400-bucket band costs QPainter tens of ms per curve).
        plot->setPlottingHints(QCP::phFastPolylines | QCP::phCacheLabels);
        plot->setNotAntialiasedElements(m_interacting ? QCP::aeAll : QCP::aeFills);
        // The hovered run's curves are drawn above the others.
        plot->addLayer(QStringLiteral("highlight"), plot->layer(QStringLiteral("main")),
                       QCustomPlot::limAbove);
        plot->yAxis->setLabel(key);
        plot->setBackground(palette().base());
        for (QCPAxis *axis : {plot->xAxis, plot->yAxis}) {
            axis->setBasePen(QPen(palette().color(QPalette::Text)));
            axis->setTickPen(QPen(palette().color(QPalette::Text)));
            axis->setSubTickPen(QPen(palette().color(QPalette::Text)));
            axis->setTickLabelColor(palette().color(QPalette::Text));
            axis->setLabelColor(palette().color(QPalette::Text));
        }
        if (!m_xMetric.isEmpty()) {
            plot->xAxis->setLabel(m_xMetric);
        } else if (m_axis == core::XAxis::WallTime) {
            auto ticker = QSharedPointer<QCPAxisTickerDateTime>(new QCPAxisTickerDateTime);
            ticker->setDateTimeFormat(QStringLiteral("MM-dd\nhh:mm"));
            plot->xAxis->setTicker(ticker);
        } else if (m_axis == core::XAxis::RelativeTime) {
            auto ticker = QSharedPointer<QCPAxisTickerTime>(new QCPAxisTickerTime);
            ticker->setTimeFormat(QStringLiteral("%h:%m:%s"));
            plot->xAxis->setTicker(ticker);
        }
        if (m_logY) {
            plot->yAxis->setScaleType(QCPAxis::stLogarithmic);
            plot->yAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTickerLog));
        }
        connect(plot->xAxis, qOverload<const QCPRange &>(&QCPAxis::rangeChanged), this,
                [this, plot] { xRangeChanged(plot); });
        connect(plot, &QCustomPlot::mousePress, this, [plot](QMouseEvent *e) {
            // Ctrl+drag: rubber-band zoom; a plain drag pans.
            plot->setSelectionRectMode(e->modifiers() & Qt::ControlModifier ? QCP::srmZoom : QCP::srmNone);
        });
        connect(plot, &QCustomPlot::mouseDoubleClick, this, [this] { resetZoom(); });
        connect(plot, &QCustomPlot::mouseMove, this, [this, plot](QMouseEvent *e) {
            if (!e->buttons()) {
                hoverCurve(plot, e->pos());
                showHover(plot, e->pos());
            }
        });
        connect(plot, &QCustomPlot::afterLayout, this, [this, plot] { alignMargins(plot); });
        plot->installEventFilter(this);
        m_charts.push_back(plot);
    }
    layoutCharts();
    updateLegendAndEmpty();
    updateBottom();  // the parallel coordinates' last axis is the first chart's metric
    query(true);
}

// The panels in a grid under their group's heading: one column for up to two charts, else two
// (every group the same, so a column's panels have one width and their x ticks line up).
void CompareView::layoutCharts()
{
    qDeleteAll(m_groupLabels);
    m_groupLabels.clear();
    while (m_chartGrid->count())
        delete m_chartGrid->takeAt(0);
    for (int r = 0; r < m_chartGrid->rowCount(); ++r)
        m_chartGrid->setRowStretch(r, 0);
    const int columns = m_charts.size() > 2 ? 2 : 1;
    for (int c = 0; c < 2; ++c)
        m_chartGrid->setColumnStretch(c, c < columns ? 1 : 0);
    // Headings where there is more than one group (one chart, or two of a kind, need none).
    const bool headings = m_charts.size() > 2 ||
        (m_charts.size() == 2 && metricGroup(m_metrics.value(0)) != metricGroup(m_metrics.value(1)));
    int row = 0, col = 0;
    QString group = QStringLiteral("-");
    for (int i = 0; i < m_charts.size(); ++i) {
        const QString g = metricGroup(m_metrics.value(i));
        if (g != group) {
            group = g;
            if (col)
                ++row;
            col = 0;
            if (headings) {
                auto *label = new QLabel(group.isEmpty() ? tr("other") : group, m_chartGrid->parentWidget());
                label->setObjectName(QStringLiteral("chartGroup"));
                QFont f = label->font();
                f.setBold(true);
                label->setFont(f);
                m_chartGrid->addWidget(label, row++, 0, 1, columns);
                m_groupLabels.push_back(label);
            }
        }
        m_chartGrid->addWidget(m_charts[i], row, col);
        m_chartGrid->setRowStretch(row, 1);
        if (++col == columns) {
            col = 0;
            ++row;
        }
    }
}

// QCPMarginGroup aligns axis rects inside one QCustomPlot only; across panels, every panel's
// left and right margins are raised to the widest any panel needs (its tick labels), so the
// axes of panels in one column start and end at the same pixel.
void CompareView::alignMargins(QCustomPlot *plot)
{
    const QMargins m = plot->axisRect()->margins();
    if (m.left() <= m_leftMargin && m.right() <= m_rightMargin)
        return;
    m_leftMargin = std::max(m_leftMargin, m.left());
    m_rightMargin = std::max(m_rightMargin, m.right());
    for (QCustomPlot *other : std::as_const(m_charts)) {
        other->axisRect()->setMinimumMargins(QMargins(m_leftMargin, 0, m_rightMargin, 0));
        if (other != plot)
            other->replot(QCustomPlot::rpQueuedReplot);
    }
}

// The runs charted: the selection (up to kMaxCurves) and its experiments' baselines, which lead.
QList<RunId> CompareView::chartedRuns() const
{
    QList<RunId> runs = m_selection->runs().mid(0, kMaxCurves);
    // The starred baseline of each experiment the selection is in is charted with it, selected
    // or not: the line the other runs are judged against.
    QSet<core::ExperimentId> experiments;
    for (RunId id : std::as_const(runs))
        if (const core::RunRow *r = m_runs->findRun(id))
            experiments.insert(r->run.experimentId);
    for (RunId id : m_runs->baselineRuns())
        if (const core::RunRow *r = m_runs->findRun(id);
            r && experiments.contains(r->run.experimentId) && !runs.contains(id))
            runs.push_back(id);
    std::stable_partition(runs.begin(), runs.end(), [this](RunId id) {
        const core::RunRow *r = m_runs->findRun(id);
        return r && r->isBaseline();
    });
    return runs;
}

QString CompareView::emptyMessage() const
{
    return m_chartStack->currentWidget() == m_emptyLabel ? m_emptyLabel->text() : QString();
}

void CompareView::updateLegendAndEmpty()
{
    QList<ChartLegend::Entry> entries;
    for (RunId id : chartedRuns()) {
        const core::RunRow *r = m_runs->findRun(id);
        entries.push_back({id, r ? r->run.name : QString::number(id), r && r->isBaseline()});
    }
    m_legend->setEntries(entries);
    QString empty;
    if (entries.isEmpty())
        empty = tr("Nothing selected.\n\nSelect runs in the Runs table (Ctrl+1), or a sweep or trial in the "
                   "Experiments & sweeps tree, and their metrics are charted here.");
    else if (m_metrics.isEmpty())
        empty = m_metricChoice == MetricChoice::Search
            ? tr("No metric of the selected runs matches “%1”.").arg(m_metricFilter)
            : tr("The selected runs have logged no metrics yet; their charts appear with the first points.");
    m_emptyLabel->setText(empty);
    m_legend->setVisible(!entries.isEmpty());
    m_chartStack->setCurrentWidget(empty.isEmpty() ? m_chartStack->widget(0) : m_emptyLabel);
}

void CompareView::selectionChanged(const QObject *)
{
    m_parallel->setHighlighted(m_selection->runs());
    m_following = true;  // a new selection starts from its own data's range
    setHighlightedRun(0);
    m_leftMargin = m_rightMargin = 0;  // its tick labels may be narrower
    for (QCustomPlot *plot : std::as_const(m_charts))
        plot->axisRect()->setMinimumMargins(QMargins());
    const QStringList before = m_metrics;
    applyMetricChoice(false);  // the leading sweep's metric may be another one
    if (m_metrics == before) {
        updateLegendAndEmpty();
        updateBottom();
        query(true);
    }
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
    updateLegendAndEmpty();
    updateBottom();
    // A chart nobody zoomed follows the new points (its whole history, rescaled); a zoomed one
    // keeps the user's range and shows what arrived inside it.
    query(m_following);
}

void CompareView::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    if (m_stale)
        refresh();
}

bool CompareView::eventFilter(QObject *watched, QEvent *event)
{
    if (event->type() == QEvent::Leave && m_charts.contains(static_cast<QCustomPlot *>(watched)))
        setHighlightedRun(0);
    return QWidget::eventFilter(watched, event);
}

void CompareView::xRangeChanged(QCustomPlot *source)
{
    if (m_syncing)
        return;
    m_following = false;  // the user zoomed or panned: the range stays until a double-click
    // While the range moves, curves are drawn without antialiasing (what QCustomPlot does for a
    // drag, setNoAntialiasingOnDrag; antialiased lines are most of a software-raster frame of
    // 20 curves), and antialiased again once it has rested for kSettleMs.
    if (!m_interacting) {
        m_interacting = true;
        for (QCustomPlot *plot : std::as_const(m_charts))
            plot->setNotAntialiasedElements(QCP::aeAll);
    }
    m_settleTimer.start();
    // One replot per frame: when the re-query goes out at once its answer replots (a few ms
    // later); while one is still in flight, show the old points at the new range meanwhile.
    const bool requery = m_requeryOnZoom && m_xMetric.isEmpty();  // the store's ranges are of steps
    const bool replotNow = !requery || m_inFlight > 0 || m_queryTimer.isActive();
    m_syncing = true;
    for (QCustomPlot *plot : std::as_const(m_charts))
        if (plot != source) {
            plot->xAxis->setRange(source->xAxis->range());
            if (replotNow)
                plot->replot(QCustomPlot::rpQueuedReplot);
        }
    m_syncing = false;
    if (!requery) {  // the points read are all there are: y follows the range here
        for (int i = 0; i < m_charts.size(); ++i) {
            fitY(i, false);
            if (m_charts[i] == source)
                source->replot(QCustomPlot::rpQueuedReplot);
        }
    }
    scheduleQuery();
}

void CompareView::scheduleQuery()
{
    if (!m_requeryOnZoom || !m_xMetric.isEmpty())
        return;
    // Leading edge: the first range change queries at once (after the events already queued,
    // so one wheel burst is one query); then at most one per display frame (16 ms) and never two
    // in flight: a pan faster than the store answers asks once for where it ended. The interval
    // is counted from the last query's start, so it must stay below the pace of a steady wheel
    // or drag (30 a second): at 33 ms, one late frame made every later one wait out the rest of
    // the interval, and each frame then took the whole 33 ms (bench_gui: p95 39 ms, 21 at 16).
    if (m_inFlight > 0) {
        m_queryPending = true;
        return;
    }
    if (m_queryTimer.isActive())
        return;
    const qint64 since = m_sinceQuery.isValid() ? m_sinceQuery.elapsed() : 1000;
    m_queryTimer.start(int(std::max<qint64>(0, kMinQueryIntervalMs - since)));
}

void CompareView::setXRange(double lo, double hi)
{
    if (m_charts.isEmpty())
        return;
    m_charts.front()->xAxis->setRange(lo, hi);  // syncs the others and schedules the re-query
    if (!m_requeryOnZoom)
        m_charts.front()->replot(QCustomPlot::rpQueuedReplot);
}

void CompareView::resetZoom()
{
    m_following = true;
    query(true);
}

double CompareView::toX(const core::MetricPoint &p, qint64 origin) const
{
    switch (m_axis) {
    case core::XAxis::Step:
        return double(p.step);
    case core::XAxis::WallTime:
        return double(p.timeMs) / 1000.0;
    case core::XAxis::RelativeTime:
        return double(p.timeMs - origin) / 1000.0;
    }
    return 0;
}

void CompareView::query(bool fullRange)
{
    const quint64 generation = ++m_generation;
    m_sinceQuery.start();
    m_queryPending = false;
    m_inFlight = int(m_charts.size());
    if (fullRange)
        m_fullX.clear();  // the extent of this answer's data, not of an earlier selection's
    const QList<RunId> runs = chartedRuns();
    const QString xKey = m_xMetric;  // a parametric chart reads each run's x metric beside y
    for (int i = 0; i < m_charts.size(); ++i) {
        QCustomPlot *plot = m_charts[i];
        core::HistoryQuery q;
        q.axis = xKey.isEmpty() ? m_axis : core::XAxis::Step;
        q.buckets =
            std::max(100, plot->axisRect()->width() / 2);  // two pixels a bucket: min and max drawn apart
        if (!fullRange && xKey.isEmpty()) {  // x in the x metric's units is no step range: all of it
            // The visible range in the store's units (steps, or ms), a little wider so a pan
            // shows data at once at its edges.
            const QCPRange r = plot->xAxis->range();
            const double scale = m_axis == core::XAxis::Step ? 1.0 : 1000.0;
            const double pad = (r.upper - r.lower) * 0.05;
            q.from = qint64(std::floor((r.lower - pad) * scale));
            q.to = qint64(std::ceil((r.upper + pad) * scale));
        }
        const QString key = m_metrics.value(i);
        using Histories = QList<std::pair<RunId, MetricHistory>>;
        using Result = std::pair<Histories, QHash<RunId, MetricHistory>>;
        m_reader->read<Result>(
            this,
            [runs, key, xKey, q, cache = m_histories](const core::TrackingStore &store) {
                Result out;
                for (RunId run : runs) {
                    out.first.push_back({run, cache->history(store, run, key, q)});
                    if (!xKey.isEmpty())
                        out.second.insert(run, cache->history(store, run, xKey, q));
                }
                return out;
            },
            [this, i, generation, fullRange](Result result) {
                if (generation != m_generation || i >= m_charts.size())
                    return;  // a newer query is on its way
                if (--m_inFlight == 0 && m_queryPending)
                    scheduleQuery();  // the range moved while this one ran: ask for where it is now
                m_data.insert(i, result.first);
                m_xData.insert(i, result.second);
                // A zoom since this query went out wins over the whole history it asked for.
                draw(i, result.first, fullRange && m_following);
                ++m_completed;
                Q_EMIT queried();
            });
    }
}

void CompareView::draw(int chart, const QList<std::pair<RunId, MetricHistory>> &histories, bool rescale)
{
    QCustomPlot *plot = m_charts.value(chart);
    if (!plot)
        return;
    // The graphs of the last answer are reused in order, the surplus removed at the end: a pan
    // frame of 20 curves then allocates nothing and registers nothing with the plot's layers.
    int used = 0;
    QCPLayer *mainLayer = plot->layer(QStringLiteral("main"));
    auto nextGraph = [&]() {
        QCPGraph *g = used < plot->graphCount() ? plot->graph(used) : plot->addGraph();
        ++used;
        g->setName(QString());
        g->setPen(QPen());
        g->setBrush(Qt::NoBrush);
        g->setChannelFillGraph(nullptr);
        g->setScatterStyle(QCPScatterStyle());
        if (g->layer() != mainLayer)
            g->setLayer(mainLayer);
        for (const char *p : {"role", "run", "group", "which", "colour", "width"})
            g->setProperty(p, QVariant());
        return g;
    };
    const bool smoothing = m_smoothing > 0;
    // Points come in step order: on the step axis x is sorted already (QCustomPlot need not
    // sort 20 curves again each frame); a wall clock may step back, so time axes sort.
    const bool parametric = !m_xMetric.isEmpty();
    // Groups: runs sharing the group param's value.
    QMap<QString, QList<std::vector<core::CurvePoint>>> groups;
    QMap<QString, RunId> groupColour;
    for (const auto &[run, h] : histories) {
        const QColor colour = runColor(run);
        const std::vector<core::CurvePoint> pts = curvePoints(chart, run, h);
        // A parametric curve keeps its step order where x goes back (QCPGraph would sort it).
        const bool sortedX = parametric ? core::xNonDecreasing(pts) : m_axis == core::XAxis::Step;
        const core::RunRow *row = m_runs->findRun(run);
        const QString name = row ? row->run.name : QString::number(run);
        if (!m_groupBy.isEmpty()) {
            const QString g = row ? row->params.value(m_groupBy) : QString();
            auto &members = groups[g];
            members.push_back(pts);
            if (!sortedX)  // a band bins by x
                std::sort(members.back().begin(), members.back().end(),
                          [](const core::CurvePoint &a, const core::CurvePoint &b) { return a.x < b.x; });
            if (!groupColour.contains(g))
                groupColour.insert(g, run);
        }
        // The envelope: each bucket's min and max, a faint band under the curve. With many
        // curves the bands only hide each other (and cost a fill each): the curves themselves
        // pass through every bucket's min and max anyway.
        if (h.downsampled && !h.buckets.empty() && histories.size() <= kMaxEnvelopes && !parametric) {
            QVector<double> xs, lo, hi;
            for (const core::HistoryBucket &b : h.buckets) {
                if (b.count <= b.nanCount)
                    continue;
                xs.push_back((toX(b.first, h.origin) + toX(b.last, h.origin)) / 2);
                lo.push_back(drawable(b.min.value, m_logY));
                hi.push_back(drawable(b.max.value, m_logY));
            }
            QColor faint = colour;
            faint.setAlpha(50);
            QCPGraph *gLo = nextGraph();
            gLo->setPen(Qt::NoPen);
            gLo->setData(xs, lo, true);
            gLo->setProperty("role", QStringLiteral("envelope"));
            QCPGraph *gHi = nextGraph();
            gHi->setPen(Qt::NoPen);
            gHi->setChannelFillGraph(gLo);
            gHi->setData(xs, hi, true);
            gHi->setProperty("role", QStringLiteral("envelope"));
            styleGraph(gHi, run, faint, 0);
        }
        QVector<double> xs, ys;
        xs.reserve(qsizetype(pts.size()));
        ys.reserve(qsizetype(pts.size()));
        for (const core::CurvePoint &p : pts) {
            xs.push_back(p.x);
            ys.push_back(p.y);
        }
        QCPGraph *raw = nextGraph();
        raw->setName(name);
        QColor rawColour = colour;
        if (smoothing || !m_groupBy.isEmpty())
            rawColour.setAlpha(60);
        const double width = histories.size() > kMaxEnvelopes ? 1.0 : 1.5;  // 1 px lines draw fastest
        const bool sparse = pts.size() <= kSparse;  // an eval every N steps shows its points
        if (sparse)
            raw->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 5));
        styleGraph(raw, run, rawColour, width);
        raw->setData(xs, ys, sortedX);
        raw->setProperty("role", smoothing ? QStringLiteral("raw") : QStringLiteral("curve"));
        if (smoothing) {
            const auto smooth = core::emaSmooth(pts, m_smoothing);
            QVector<double> sy;
            sy.reserve(qsizetype(smooth.size()));
            for (const core::CurvePoint &p : smooth)
                sy.push_back(p.y);
            QCPGraph *g = nextGraph();
            g->setName(name);
            g->setProperty("role", QStringLiteral("curve"));
            QColor c = colour;
            if (!m_groupBy.isEmpty())
                c.setAlpha(90);
            // A one-point series has no line to draw: its dot is the curve.
            if (sparse)
                g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 5));
            styleGraph(g, run, c, 1.8);
            g->setData(xs, sy, sortedX);
        }
    }
    QStringList groupEntries;
    if (!m_groupBy.isEmpty()) {
        const double lo = plot->xAxis->range().lower, hi = plot->xAxis->range().upper;
        const int bins = std::max(10, plot->axisRect()->width() / 3);
        for (auto it = groups.cbegin(); it != groups.cend(); ++it) {
            // Only where every run of the group has points: a mean ± std of the seeds, never
            // of whichever run happens to reach a step.
            const auto common = core::commonXRange(it.value());
            if (!common)
                continue;
            double xMin = common->first, xMax = common->second;
            if (!rescale) {
                xMin = std::max(xMin, lo);
                xMax = std::min(xMax, hi);
            }
            if (xMin > xMax)
                continue;
            const auto band = core::meanStdBand(it.value(), xMin, xMax, bins);
            QVector<double> xs, mean, bandLo, bandHi;
            for (const core::BandPoint &b : band) {
                xs.push_back(b.x);
                mean.push_back(b.mean);
                bandLo.push_back(drawable(b.mean - b.std, m_logY));
                bandHi.push_back(drawable(b.mean + b.std, m_logY));
            }
            const QColor colour = runColor(groupColour.value(it.key()));
            QColor fill = colour;
            fill.setAlpha(60);
            const QString name =
                QStringLiteral("%1 = %2 (%3 runs)").arg(m_groupBy, it.key()).arg(it.value().size());
            groupEntries << QStringLiteral("<span style='color:%1'>\u25ac</span> %2")
                                .arg(colour.name(), name.toHtmlEscaped());
            QCPGraph *gLo = nextGraph();
            gLo->setPen(Qt::NoPen);
            gLo->setData(xs, bandLo, true);
            QCPGraph *gHi = nextGraph();
            gHi->setPen(Qt::NoPen);
            gHi->setBrush(fill);
            gHi->setChannelFillGraph(gLo);
            gHi->setData(xs, bandHi, true);
            QCPGraph *gMean = nextGraph();
            gMean->setPen(QPen(colour, 2.5));
            gMean->setName(name);
            gMean->setData(xs, mean, true);
            for (auto [g, which] : {std::pair{gMean, 0}, {gLo, 1}, {gHi, 2}}) {
                g->setProperty("role", QStringLiteral("band"));
                g->setProperty("group", it.key());
                g->setProperty("which", which);
            }
        }
    }
    if (chart == 0) {  // the bands are the same groups in every chart: said once
        m_groupLegend->setText(tr("Mean ± std of: %1").arg(groupEntries.join(QStringLiteral(" &nbsp; "))));
        m_groupLegend->setVisible(!groupEntries.isEmpty());
    }
    while (plot->graphCount() > used)  // before the ranges: they are of this answer's graphs only
        plot->removeGraph(plot->graphCount() - 1);
    if (rescale) {
        // One x range for all charts: the union of their data's (eval/loss may start later
        // than train/loss).
        bool found = false;
        QCPRange keys;
        for (int g = 0; g < plot->graphCount(); ++g) {
            bool f = false;
            const QCPRange r = plot->graph(g)->getKeyRange(f);
            if (f) {
                keys = found ? QCPRange(std::min(keys.lower, r.lower), std::max(keys.upper, r.upper)) : r;
                found = true;
            }
        }
        if (found)
            m_fullX.insert(chart, {keys.lower, keys.upper});
        else
            m_fullX.remove(chart);
        if (!m_fullX.isEmpty()) {
            QCPRange all(m_fullX.first().first, m_fullX.first().second);
            for (const auto &[lo, hi] : std::as_const(m_fullX))
                all = QCPRange(std::min(all.lower, lo), std::max(all.upper, hi));
            // Padded, so the first and last points are whole dots inside the axis.
            const double pad = all.upper > all.lower ? (all.upper - all.lower) * kPad : 0.5;
            all = QCPRange(all.lower - pad, all.upper + pad);
            m_syncing = true;
            for (QCustomPlot *other : std::as_const(m_charts)) {
                other->xAxis->setRange(all);
                if (other != plot)
                    other->replot(QCustomPlot::rpQueuedReplot);
            }
            m_syncing = false;
        }
    }
    // A parametric chart's points are always its whole history (a zoom does not re-read them).
    fitY(chart, rescale || m_following || parametric);
    applyHighlight(plot);
    plot->replot(QCustomPlot::rpQueuedReplot);
}

// y over what the visible x range shows (Fit y, the default), else over the whole history as last
// read in full (`wholeData`: the chart holds that history now, so it is measured here).
void CompareView::fitY(int chart, bool wholeData)
{
    QCustomPlot *plot = m_charts.value(chart);
    if (!plot)
        return;
    auto valuesOver = [&](const QCPRange &keys) -> std::optional<QCPRange> {  // QCPRange(): every x
        std::optional<QCPRange> y;
        for (int g = 0; g < plot->graphCount(); ++g) {
            bool found = false;
            const QCPRange r =
                plot->graph(g)->getValueRange(found, m_logY ? QCP::sdPositive : QCP::sdBoth, keys);
            if (found)
                y = y ? QCPRange(std::min(y->lower, r.lower), std::max(y->upper, r.upper)) : r;
        }
        return y;
    };
    if (wholeData) {
        if (const auto all = valuesOver(QCPRange()))
            m_fullY.insert(chart, {all->lower, all->upper});
        else
            m_fullY.remove(chart);
    }
    std::optional<QCPRange> y;
    const auto whole = m_fullY.constFind(chart);
    if (!m_fitY && whole != m_fullY.constEnd() && (!m_logY || whole->first > 0))
        y = QCPRange(whole->first, whole->second);
    else
        y = valuesOver(plot->xAxis->range());
    if (!y)
        return;
    if (m_logY) {  // the same share of the decades shown, each side
        const double decades = std::max(std::log10(y->upper / y->lower), 0.1);
        const double f = std::pow(10.0, decades * kPad);
        plot->yAxis->setRange(y->lower / f, y->upper * f);
    } else {
        const auto [lo, hi] = core::valueAxisRange(y->lower, y->upper, 0.05);
        plot->yAxis->setRange(lo, hi);
    }
}

// A run's points on `chart` as drawn: (x, y) by the chosen axis, or against the x metric.
std::vector<core::CurvePoint> CompareView::curvePoints(int chart, RunId run, const MetricHistory &h) const
{
    std::vector<core::CurvePoint> pts;
    if (!m_xMetric.isEmpty()) {
        auto stepValues = [](const MetricHistory &history) {
            std::vector<core::StepValue> out;
            out.reserve(history.points.size());
            for (const core::MetricPoint &p : history.points)
                out.push_back({p.step, p.value});
            return out;
        };
        pts = core::pairByStep(stepValues(m_xData.value(chart).value(run)), stepValues(h));
        for (core::CurvePoint &p : pts)
            p.y = drawable(p.y, m_logY);
        return pts;
    }
    pts.reserve(h.points.size());
    for (const core::MetricPoint &p : h.points)
        pts.push_back({toX(p, h.origin), drawable(p.value, m_logY)});
    return pts;
}

// A run's graph in its colour and width, remembered so a hover can emphasise or dim it and
// give it back as it was.
void CompareView::styleGraph(QCPGraph *g, RunId run, const QColor &colour, double width)
{
    g->setProperty("run", run);
    g->setProperty("colour", colour);
    g->setProperty("width", width);
    if (width > 0)
        g->setPen(QPen(colour, width));
    else
        g->setBrush(colour);  // an envelope: a fill, no line
    if (g->scatterStyle().shape() != QCPScatterStyle::ssNone)
        g->setScatterStyle(
            QCPScatterStyle(g->scatterStyle().shape(), colour, colour, g->scatterStyle().size()));
}

void CompareView::applyHighlight(QCustomPlot *plot)
{
    QCPLayer *top = plot->layer(QStringLiteral("highlight")), *main = plot->layer(QStringLiteral("main"));
    for (int i = 0; i < plot->graphCount(); ++i) {
        QCPGraph *g = plot->graph(i);
        const QVariant runValue = g->property("run");
        if (!runValue.isValid())
            continue;  // a group's band: not one run's
        const RunId run = runValue.toLongLong();
        QColor colour = g->property("colour").value<QColor>();
        double width = g->property("width").toDouble();
        const bool emphasised = m_highlight && run == m_highlight;
        if (m_highlight && !emphasised)
            colour.setAlphaF(colour.alphaF() * 0.2);  // the others step back
        if (emphasised && width > 0)
            width += 1.5;
        if (width > 0)
            g->setPen(QPen(colour, width));
        else
            g->setBrush(colour);
        if (g->scatterStyle().shape() != QCPScatterStyle::ssNone)
            g->setScatterStyle(
                QCPScatterStyle(g->scatterStyle().shape(), colour, colour, g->scatterStyle().size()));
        g->setLayer(emphasised ? top : main);
    }
}

void CompareView::setHighlightedRun(RunId run)
{
    if (run == m_highlight)
        return;
    m_highlight = run;
    m_legend->setHighlighted(run);
    for (QCustomPlot *plot : std::as_const(m_charts)) {
        applyHighlight(plot);
        plot->replot(QCustomPlot::rpQueuedReplot);
    }
}

// The run whose curve passes within kHoverPx of the pointer (at the nearest point in x), if any.
void CompareView::hoverCurve(QCustomPlot *plot, const QPoint &pos)
{
    const double x = plot->xAxis->pixelToCoord(pos.x());
    RunId best = 0;
    double bestDistance = kHoverPx + 1;
    for (int g = 0; g < plot->graphCount(); ++g) {
        QCPGraph *graph = plot->graph(g);
        if (roleOf(graph) != QLatin1String("curve") || graph->data()->isEmpty())
            continue;
        auto it = graph->data()->findBegin(x, false);
        if (it == graph->data()->constEnd())
            --it;
        for (auto c : {it, it == graph->data()->constBegin() ? it : it - 1}) {
            if (!std::isfinite(c->value))
                continue;
            const double d = std::hypot(plot->xAxis->coordToPixel(c->key) - pos.x(),
                                        plot->yAxis->coordToPixel(c->value) - pos.y());
            if (d < bestDistance) {
                bestDistance = d;
                best = graph->property("run").toLongLong();
            }
        }
    }
    setHighlightedRun(best);
}

void CompareView::showHover(QCustomPlot *plot, const QPoint &pos)
{
    const double x = plot->xAxis->pixelToCoord(pos.x());
    QString text =
        QStringLiteral("<b>%1</b> %2")
            .arg(plot->yAxis->label().toHtmlEscaped(),
                 !m_xMetric.isEmpty()
                     ? QStringLiteral("%1 %2").arg(m_xMetric.toHtmlEscaped()).arg(x, 0, 'g', 5)
                     : m_axis == core::XAxis::Step ? QStringLiteral("step %1").arg(qint64(std::lround(x)))
                     : plot->xAxis->ticker().dynamicCast<QCPAxisTickerDateTime>()
                     ? QDateTime::fromMSecsSinceEpoch(qint64(x * 1000))
                           .toString(QStringLiteral("yyyy-MM-dd hh:mm:ss"))
                     : QStringLiteral("%1 s").arg(x, 0, 'f', 1));
    int lines = 0;
    for (int g = 0; g < plot->graphCount(); ++g) {
        QCPGraph *graph = plot->graph(g);
        const QString role = roleOf(graph);
        if (role != QLatin1String("curve") &&
            !(role == QLatin1String("band") && graph->property("which").toInt() == 0))
            continue;
        auto points = graph->data();
        if (points->isEmpty())
            continue;
        auto it = points->findBegin(x, false);
        if (it == points->constEnd())
            --it;
        if (it != points->constBegin()) {
            auto prev = it - 1;
            if (std::abs(prev->key - x) < std::abs(it->key - x))
                it = prev;
        }
        const QColor c = graph->pen().color();
        text += QStringLiteral("<br><span style=\"color:%1\">■</span> %2: %3")
                    .arg(QColor(c.red(), c.green(), c.blue()).name(), graph->name().toHtmlEscaped(),
                         core::formatNumber(it->value, 5));
        if (++lines >= 20)
            break;
    }
    QToolTip::showText(plot->mapToGlobal(pos), text, plot);
}

void CompareView::updateBottom()
{
    QList<core::RunRow> all = m_runs->allRuns().mid(0, 5000);  // painting more lines says nothing more

    // The selection's sweep leads (UX.md "Views built around the sweep"): its swept params are
    // the axes and the scatter's x, its metric the last axis and the scatter's y. Nothing
    // selected: the table's runs.
    QList<RunId> focus = m_selection->runs();
    if (focus.isEmpty())
        for (const core::RunRow &r : std::as_const(all))
            focus.push_back(r.run.id);
    const SweepIndex &sweeps = m_runs->sweeps();
    const SweepNode *leading = sweeps.leadingSweep(focus);
    const QList<core::SweptParam> swept = sweeps.sweptParams(focus);
    ParallelPlan plan;
    plan.available = m_runs->paramKeys();
    if (!swept.isEmpty()) {
        plan.defaults = core::keysOf(swept);
        for (const core::SweptParam &sp : swept)
            if (sp.log)
                plan.log.insert(sp.key);
        plan.scope = leading ? leading->sweep.name : QString();
    } else {
        // Runs of no sweep: what differs among them, at most 10 axes (the chooser has the rest).
        QList<core::Params> params;
        for (RunId id : std::as_const(focus))
            if (const core::RunRow *r = m_runs->findRun(id))
                params.push_back(r->params);
        plan.defaults = core::differingParams(params).mid(0, 10);
    }
    plan.metric =
        leading && !leading->sweep.metricName.isEmpty() ? leading->sweep.metricName : m_metrics.value(0);
    plan.higherIsBetter = leading && leading->sweep.metricGoal == core::Goal::Maximize;
    if (leading)
        for (const core::TrialSummary &t : leading->trials)
            if (t.trial.runId)
                plan.scaleRuns.insert(t.trial.runId);
    m_parallel->setRuns(all, plan);
    m_parallel->setHighlighted(m_selection->runs());
    m_importance->setSweep(leading ? leading->sweep.id : 0, leading ? leading->counts.ended() : 0);

    // The scatter: a param against the sweep's metric, every run grey, the selection in colour;
    // drawn when its tab shows (a live refresh each second need not redraw a hidden plot). By
    // default the sweep's first swept param (never a constant), else the first that differs.
    const QString chosen = m_scatterParam->property("chosen").toString();
    const QString defaultParam = plan.defaults.value(0);
    const QString want = !chosen.isEmpty() ? chosen : defaultParam;
    if (!want.isEmpty() && m_scatterParam->currentText() != want && m_scatterParam->findText(want) >= 0) {
        const QSignalBlocker block(m_scatterParam);
        m_scatterParam->setCurrentIndex(m_scatterParam->findText(want));
    }
    const QString param = m_scatterParam->currentText(), metric = plan.metric;
    const bool logX = chosen.isEmpty() || chosen == defaultParam ? plan.log.contains(param) : false;
    const bool scatterShown = m_below->currentWidget() == m_scatter->parentWidget();
    if (scatterShown)
        m_scatter->clearGraphs();
    if (scatterShown && !param.isEmpty() && !metric.isEmpty()) {
        QVector<double> xs, ys;
        QCPGraph *others = m_scatter->addGraph();
        others->setLineStyle(QCPGraph::lsNone);
        others->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, QColor(150, 150, 150), 5));
        bool positive = true;
        double lo = INFINITY, hi = -INFINITY;
        for (const core::RunRow &r : all) {
            bool ok = false;
            const double x = r.params.value(param).toDouble(&ok);
            const core::LatestMetric *m = r.metric(metric);
            if (!ok || !m || !std::isfinite(m->last.value))
                continue;
            positive = positive && x > 0;
            lo = std::min(lo, x);
            hi = std::max(hi, x);
            if (m_selection->contains(r.run.id)) {
                QCPGraph *g = m_scatter->addGraph();
                g->setLineStyle(QCPGraph::lsNone);
                g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, runColor(r.run.id), 9));
                g->setData({x}, {m->last.value});
            } else {
                xs.push_back(x);
                ys.push_back(m->last.value);
            }
        }
        others->setData(xs, ys);
        const bool log = positive && lo > 0 && (hi / lo > 100 || (logX && hi > lo));
        m_scatter->xAxis->setScaleType(log ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
        m_scatter->xAxis->setTicker(log ? QSharedPointer<QCPAxisTicker>(new QCPAxisTickerLog)
                                        : QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
        m_scatter->xAxis->setLabel(param);
        m_scatter->yAxis->setLabel(metric);
        m_scatter->rescaleAxes();
        m_scatter->xAxis->scaleRange(1.1);
        m_scatter->yAxis->scaleRange(1.1);
    }
    if (scatterShown)
        m_scatter->replot(QCustomPlot::rpQueuedReplot);

    // The params that differ between the selected runs (all of them with "show all").
    QList<const core::RunRow *> selected;
    QList<core::Params> params;
    for (RunId id : m_selection->runs())
        if (const core::RunRow *r = m_runs->findRun(id)) {
            selected.push_back(r);
            params.push_back(r->params);
        }
    QStringList keys = m_showAll ? m_runs->paramKeys() : core::differingParams(params);
    QStringList header{tr("Run")};
    header += keys;
    for (const QString &m : std::as_const(m_metrics))
        header.push_back(m);
    auto cells = [&](const core::RunRow *r) {
        QStringList out{r->run.name};
        for (const QString &k : std::as_const(keys))
            out.push_back(r->params.value(k));
        for (const QString &m : std::as_const(m_metrics)) {
            const core::LatestMetric *lm = r->metric(m);
            out.push_back(lm ? core::formatNumber(lm->last.value, 5) : QString());
        }
        return out;
    };
    // The same runs and columns (a live refresh): change the texts in place, no relayout.
    bool same = m_diff->rowCount() == selected.size() && m_diff->columnCount() == header.size();
    for (int c = 0; same && c < header.size(); ++c)
        same = m_diff->horizontalHeaderItem(c) && m_diff->horizontalHeaderItem(c)->text() == header[c];
    for (int r = 0; same && r < selected.size(); ++r)
        same = m_diff->item(r, 0)->data(Qt::UserRole).toLongLong() == selected[r]->run.id;
    if (same) {
        for (int r = 0; r < selected.size(); ++r) {
            const QStringList texts = cells(selected[r]);
            for (int c = 1; c < texts.size(); ++c)
                if (m_diff->item(r, c)->text() != texts[c])
                    m_diff->item(r, c)->setText(texts[c]);
        }
        return;
    }
    m_diff->clear();
    m_diff->setHorizontalHeaderLabels(header);
    for (const core::RunRow *r : std::as_const(selected)) {
        QList<QStandardItem *> row;
        for (const QString &text : cells(r))
            row.push_back(new QStandardItem(text));
        row.front()->setData(runColor(r->run.id), Qt::DecorationRole);
        row.front()->setData(r->run.id, Qt::UserRole);
        m_diff->appendRow(row);
    }
}

namespace {
// The points of the graphs of `plot` that `match` picks, in order.
QList<std::pair<double, double>> pointsOf(QCustomPlot *plot,
                                          const std::function<bool(const QCPGraph *)> &match)
{
    QList<std::pair<double, double>> out;
    for (int g = 0; plot && g < plot->graphCount(); ++g) {
        QCPGraph *graph = plot->graph(g);
        if (!match(graph))
            continue;
        for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it)
            out.push_back({it->key, it->value});
    }
    return out;
}
}  // namespace

QList<std::pair<double, double>> CompareView::curve(int chart, RunId run) const
{
    return pointsOf(m_charts.value(chart), [run](const QCPGraph *g) {
        return roleOf(g) == QLatin1String("curve") && g->property("run").toLongLong() == run;
    });
}

QList<std::pair<double, double>> CompareView::band(int chart, const QString &group, int which) const
{
    return pointsOf(m_charts.value(chart), [&](const QCPGraph *g) {
        return roleOf(g) == QLatin1String("band") && g->property("group").toString() == group &&
            g->property("which").toInt() == which;
    });
}

bool CompareView::exportCharts(const QString &path, QString *error)
{
    if (m_charts.isEmpty()) {
        if (error)
            *error = tr("nothing to export: choose a metric first");
        return false;
    }
    // The panels where the grid has them (side by side, group under group), not one column.
    QWidget *grid = m_charts.front()->parentWidget();
    QRect bounds;
    for (QCustomPlot *plot : std::as_const(m_charts))
        bounds |= QRect(plot->mapTo(grid, QPoint(0, 0)), plot->size());
    const int w = bounds.width(), h = bounds.height();
    auto paint = [&](QPaintDevice *device) {
        QCPPainter painter(device);
        for (QCustomPlot *plot : std::as_const(m_charts)) {
            painter.save();
            painter.translate(plot->mapTo(grid, QPoint(0, 0)) - bounds.topLeft());
            plot->toPainter(&painter, plot->width(), plot->height());
            painter.restore();
        }
        return painter.end();
    };
    const QString suffix = QFileInfo(path).suffix().toLower();
    bool ok = false;
    if (suffix == QLatin1String("svg")) {
        QSvgGenerator svg;
        svg.setFileName(path);
        svg.setSize(QSize(w, h));
        svg.setViewBox(QRect(0, 0, w, h));
        svg.setTitle(tr("Orrery charts"));
        ok = paint(&svg);
    } else if (suffix == QLatin1String("pdf")) {
        QPdfWriter pdf(path);
        pdf.setPageSize(QPageSize(QSizeF(w, h), QPageSize::Point));
        pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
        pdf.setResolution(72);
        ok = paint(&pdf);
    } else {
        QImage image(w * 2, h * 2, QImage::Format_ARGB32);
        image.fill(palette().color(QPalette::Base));
        image.setDevicePixelRatio(2);
        ok = paint(&image) && image.save(path);
    }
    if (!ok && error)
        *error = tr("could not write %1").arg(path);
    return ok;
}

}  // namespace orrery::gui
