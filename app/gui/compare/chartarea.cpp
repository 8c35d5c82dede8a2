// SPDX-License-Identifier: GPL-3.0-or-later
#include "chartarea.h"

#include "chartlegend.h"
#include "runselection.h"
#include "runstablemodel.h"
#include "storereader.h"

#include "orrery/core/format.h"

#include "qcp.h"

#include <QDateTime>
#include <QFileInfo>
#include <QGridLayout>
#include <QLabel>
#include <QPdfWriter>
#include <QScrollArea>
#include <QSet>
#include <QStackedWidget>
#include <QSvgGenerator>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <functional>

namespace orrery::gui {

using core::MetricHistory;
using core::RunId;

namespace {

constexpr int kMaxCurves = 64;  // selected runs charted at once
constexpr int kSettleMs = 150;  // a zoom or pan this long ago is over: draw antialiased again
constexpr int kHoverPx = 8;  // a curve this close to the pointer (pixels) is the one hovered

QString roleOf(const QCPGraph *g)
{
    return g->property("role").toString();
}

// The runs charted: the selection (up to kMaxCurves) and its experiments' baselines, which lead.
QList<RunId> chartedRuns(const RunSelection &selection, const RunsTableModel &model)
{
    QList<RunId> runs = selection.runs().mid(0, kMaxCurves);
    // The starred baseline of each experiment the selection is in is charted with it, selected
    // or not: the line the other runs are judged against.
    QSet<core::ExperimentId> experiments;
    for (RunId id : std::as_const(runs))
        if (const core::RunRow *r = model.findRun(id))
            experiments.insert(r->run.experimentId);
    for (RunId id : model.baselineRuns())
        if (const core::RunRow *r = model.findRun(id);
            r && experiments.contains(r->run.experimentId) && !runs.contains(id))
            runs.push_back(id);
    std::stable_partition(runs.begin(), runs.end(), [&model](RunId id) {
        const core::RunRow *r = model.findRun(id);
        return r && r->isBaseline();
    });
    return runs;
}

// An axis on a log scale with decade ticks, or back on a linear one.
void setLogScale(QCPAxis *axis, bool on)
{
    axis->setScaleType(on ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
    axis->setTicker(on ? QSharedPointer<QCPAxisTicker>(new QCPAxisTickerLog)
                       : QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
}

// A panel in the palette's colours: its background, its axes' lines and labels.
void stylePanel(QCustomPlot *plot, const QPalette &palette)
{
    plot->setBackground(palette.base());
    for (QCPAxis *axis : {plot->xAxis, plot->yAxis}) {
        axis->setBasePen(QPen(palette.color(QPalette::Text)));
        axis->setTickPen(QPen(palette.color(QPalette::Text)));
        axis->setSubTickPen(QPen(palette.color(QPalette::Text)));
        axis->setTickLabelColor(palette.color(QPalette::Text));
        axis->setLabelColor(palette.color(QPalette::Text));
    }
}

// The x axis as x is: the x metric's name under it, dates, or hours:minutes:seconds.
void setXTicks(QCustomPlot *plot, const ChartOptions &options)
{
    if (!options.xMetric.isEmpty()) {
        plot->xAxis->setLabel(options.xMetric);
    } else if (options.axis == core::XAxis::WallTime) {
        auto ticker = QSharedPointer<QCPAxisTickerDateTime>(new QCPAxisTickerDateTime);
        ticker->setDateTimeFormat(QStringLiteral("MM-dd\nhh:mm"));
        plot->xAxis->setTicker(ticker);
    } else if (options.axis == core::XAxis::RelativeTime) {
        auto ticker = QSharedPointer<QCPAxisTickerTime>(new QCPAxisTickerTime);
        ticker->setTimeFormat(QStringLiteral("%h:%m:%s"));
        plot->xAxis->setTicker(ticker);
    }
}

// The run whose curve passes within kHoverPx of the pointer (at the nearest point in x), else 0.
RunId runNear(QCustomPlot *plot, const QPoint &pos)
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
    return best;
}

// The hover's tooltip: the metric and x under the pointer, then each curve's (and each group
// mean's) value at the point nearest in x, at most 20.
QString hoverText(QCustomPlot *plot, const QPoint &pos, const ChartOptions &options)
{
    const double x = plot->xAxis->pixelToCoord(pos.x());
    QString text =
        QStringLiteral("<b>%1</b> %2")
            .arg(plot->yAxis->label().toHtmlEscaped(),
                 !options.xMetric.isEmpty()
                     ? QStringLiteral("%1 %2").arg(options.xMetric.toHtmlEscaped()).arg(x, 0, 'g', 5)
                     : options.axis == core::XAxis::Step
                     ? QStringLiteral("step %1").arg(qint64(std::lround(x)))
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
    return text;
}

// What a panel asks the store for: its metric at two pixels a bucket, over the whole history or
// over the visible range.
core::HistoryQuery historyQuery(QCustomPlot *plot, const ChartOptions &options, bool fullRange)
{
    core::HistoryQuery q;
    q.axis = options.xMetric.isEmpty() ? options.axis : core::XAxis::Step;
    q.buckets = std::max(100, plot->axisRect()->width() / 2);  // two pixels a bucket: min and max drawn apart
    if (!fullRange && options.xMetric.isEmpty()) {  // x in the x metric's units is no step range: all of it
        // The visible range in the store's units (steps, or ms), a little wider so a pan
        // shows data at once at its edges.
        const QCPRange r = plot->xAxis->range();
        const double scale = options.axis == core::XAxis::Step ? 1.0 : 1000.0;
        const double pad = (r.upper - r.lower) * 0.05;
        q.from = qint64(std::floor((r.lower - pad) * scale));
        q.to = qint64(std::ceil((r.upper + pad) * scale));
    }
    return q;
}

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

QString metricGroup(const QString &key)
{
    const qsizetype slash = key.indexOf(QLatin1Char('/'));
    return slash > 0 ? key.left(slash + 1) : QString();
}

ChartArea::ChartArea(StoreReader *reader, RunSelection *selection, RunsTableModel *runs,
                     const ChartOptions &options, QWidget *view)
    : m_reader(reader), m_selection(selection), m_runs(runs), m_options(options), m_view(view),
      m_painter(options, runs)
{
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
}

ChartArea::~ChartArea() = default;

QWidget *ChartArea::build()
{
    auto *chartArea = new QWidget(m_view);
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
    connect(m_legend, &ChartLegend::hovered, this, &ChartArea::setHighlightedRun);
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

QStringList ChartArea::chartGroups() const
{
    QStringList out;
    for (const QLabel *l : m_groupLabels)
        out.push_back(l->text());
    return out;
}

void ChartArea::rebuild(const QStringList &metrics)
{
    qDeleteAll(m_charts);
    m_charts.clear();
    m_data.clear();
    m_xData.clear();
    m_fullX.clear();
    m_painter.forgetFullY();
    m_following = true;  // other metrics: each chart starts from its whole history
    m_leftMargin = m_rightMargin = 0;
    m_keys = metrics;
    for (const QString &key : std::as_const(m_keys))
        m_charts.push_back(addChart(key));
    layoutCharts();
}

// A panel: drag and wheel move x only (every panel follows), Ctrl+drag zooms to a rectangle.
QCustomPlot *ChartArea::addChart(const QString &key)
{
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
    plot->addLayer(QStringLiteral("highlight"), plot->layer(QStringLiteral("main")), QCustomPlot::limAbove);
    plot->yAxis->setLabel(key);
    stylePanel(plot, m_view->palette());
    setXTicks(plot, m_options);
    if (m_options.logY)
        setLogScale(plot->yAxis, true);
    connectChart(plot);
    plot->installEventFilter(this);
    return plot;
}

void ChartArea::connectChart(QCustomPlot *plot)
{
    connect(plot->xAxis, qOverload<const QCPRange &>(&QCPAxis::rangeChanged), this,
            [this, plot] { xRangeChanged(plot); });
    connect(plot, &QCustomPlot::mousePress, this, [plot](QMouseEvent *e) {
        // Ctrl+drag: rubber-band zoom; a plain drag pans.
        plot->setSelectionRectMode(e->modifiers() & Qt::ControlModifier ? QCP::srmZoom : QCP::srmNone);
    });
    connect(plot, &QCustomPlot::mouseDoubleClick, this, [this] { resetZoom(); });
    connect(plot, &QCustomPlot::mouseMove, this, [this, plot](QMouseEvent *e) {
        if (!e->buttons()) {
            setHighlightedRun(runNear(plot, e->pos()));
            QToolTip::showText(plot->mapToGlobal(e->pos()), hoverText(plot, e->pos(), m_options), plot);
        }
    });
    connect(plot, &QCustomPlot::afterLayout, this, [this, plot] { alignMargins(plot); });
}

// The panels in a grid under their group's heading: one column for up to two charts, else two
// (every group the same, so a column's panels have one width and their x ticks line up).
void ChartArea::layoutCharts()
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
        (m_charts.size() == 2 && metricGroup(m_keys.value(0)) != metricGroup(m_keys.value(1)));
    int row = 0, col = 0;
    QString group = QStringLiteral("-");
    for (int i = 0; i < m_charts.size(); ++i) {
        const QString g = metricGroup(m_keys.value(i));
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
void ChartArea::alignMargins(QCustomPlot *plot)
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

QString ChartArea::emptyMessage() const
{
    return m_chartStack->currentWidget() == m_emptyLabel ? m_emptyLabel->text() : QString();
}

void ChartArea::updateLegendAndEmpty(const QString &noMetrics)
{
    QList<ChartLegend::Entry> entries;
    for (RunId id : chartedRuns(*m_selection, *m_runs)) {
        const core::RunRow *r = m_runs->findRun(id);
        entries.push_back({id, r ? r->run.name : QString::number(id), r && r->isBaseline()});
    }
    m_legend->setEntries(entries);
    QString empty;
    if (entries.isEmpty())
        empty = tr("Nothing selected.\n\nSelect runs in the Runs table (Ctrl+1), or a sweep or trial in the "
                   "Experiments & sweeps tree, and their metrics are charted here.");
    else if (m_keys.isEmpty())
        empty = noMetrics;
    m_emptyLabel->setText(empty);
    m_legend->setVisible(!entries.isEmpty());
    m_chartStack->setCurrentWidget(empty.isEmpty() ? m_chartStack->widget(0) : m_emptyLabel);
}

void ChartArea::startOver()
{
    m_following = true;  // a new selection starts from its own data's range
    setHighlightedRun(0);
    m_leftMargin = m_rightMargin = 0;  // its tick labels may be narrower
    for (QCustomPlot *plot : std::as_const(m_charts))
        plot->axisRect()->setMinimumMargins(QMargins());
}

bool ChartArea::eventFilter(QObject *watched, QEvent *event)
{
    if (event->type() == QEvent::Leave && m_charts.contains(static_cast<QCustomPlot *>(watched)))
        setHighlightedRun(0);
    return QObject::eventFilter(watched, event);
}

void ChartArea::xRangeChanged(QCustomPlot *source)
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
    const bool requery = m_requeryOnZoom && m_options.xMetric.isEmpty();  // the store's ranges are of steps
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
            m_painter.fitY(m_charts[i], i, false);
            if (m_charts[i] == source)
                source->replot(QCustomPlot::rpQueuedReplot);
        }
    }
    scheduleQuery();
}

void ChartArea::scheduleQuery()
{
    if (!m_requeryOnZoom || !m_options.xMetric.isEmpty())
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

void ChartArea::setXRange(double lo, double hi)
{
    if (m_charts.isEmpty())
        return;
    m_charts.front()->xAxis->setRange(lo, hi);  // syncs the others and schedules the re-query
    if (!m_requeryOnZoom)
        m_charts.front()->replot(QCustomPlot::rpQueuedReplot);
}

void ChartArea::resetZoom()
{
    m_following = true;
    query(true);
}

void ChartArea::query(bool fullRange)
{
    const quint64 generation = ++m_generation;
    m_sinceQuery.start();
    m_queryPending = false;
    m_inFlight = int(m_charts.size());
    if (fullRange)
        m_fullX.clear();  // the extent of this answer's data, not of an earlier selection's
    const QList<RunId> runs = chartedRuns(*m_selection, *m_runs);
    const QString xKey = m_options.xMetric;  // a parametric chart reads each run's x metric beside y
    for (int i = 0; i < m_charts.size(); ++i) {
        const core::HistoryQuery q = historyQuery(m_charts[i], m_options, fullRange);
        const QString key = m_keys.value(i);
        using Result = std::pair<ChartHistories, QHash<RunId, MetricHistory>>;
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

void ChartArea::draw(int chart, const ChartHistories &histories, bool rescale)
{
    QCustomPlot *plot = m_charts.value(chart);
    if (!plot)
        return;
    const QStringList groupEntries = m_painter.draw(plot, histories, m_xData.value(chart), rescale);
    if (chart == 0) {  // the bands are the same groups in every chart: said once
        m_groupLegend->setText(tr("Mean ± std of: %1").arg(groupEntries.join(QStringLiteral(" &nbsp; "))));
        m_groupLegend->setVisible(!groupEntries.isEmpty());
    }
    if (rescale)
        followData(chart, plot);
    // A parametric chart's points are always its whole history (a zoom does not re-read them).
    m_painter.fitY(plot, chart, rescale || m_following || !m_options.xMetric.isEmpty());
    ChartPainter::applyHighlight(plot, m_highlight);
    plot->replot(QCustomPlot::rpQueuedReplot);
}

// One x range for all charts: the union of their data's (eval/loss may start later than
// train/loss), as `plot` now holds its chart's whole history.
void ChartArea::followData(int chart, QCustomPlot *plot)
{
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
    if (m_fullX.isEmpty())
        return;
    QCPRange all(m_fullX.first().first, m_fullX.first().second);
    for (const auto &[lo, hi] : std::as_const(m_fullX))
        all = QCPRange(std::min(all.lower, lo), std::max(all.upper, hi));
    // Padded, so the first and last points are whole dots inside the axis.
    const double pad = all.upper > all.lower ? (all.upper - all.lower) * ChartPainter::kPad : 0.5;
    all = QCPRange(all.lower - pad, all.upper + pad);
    m_syncing = true;
    for (QCustomPlot *other : std::as_const(m_charts)) {
        other->xAxis->setRange(all);
        if (other != plot)
            other->replot(QCustomPlot::rpQueuedReplot);
    }
    m_syncing = false;
}

void ChartArea::applyLogY()
{
    for (QCustomPlot *plot : std::as_const(m_charts))
        setLogScale(plot->yAxis, m_options.logY);
    redraw();
}

void ChartArea::applyFitY()
{
    for (int i = 0; i < m_charts.size(); ++i) {
        m_painter.fitY(m_charts[i], i, false);
        m_charts[i]->replot(QCustomPlot::rpQueuedReplot);
    }
}

void ChartArea::redraw()
{
    for (int i = 0; i < m_charts.size(); ++i)
        draw(i, m_data.value(i), false);
}

void ChartArea::setHighlightedRun(RunId run)
{
    if (run == m_highlight)
        return;
    m_highlight = run;
    m_legend->setHighlighted(run);
    for (QCustomPlot *plot : std::as_const(m_charts)) {
        ChartPainter::applyHighlight(plot, m_highlight);
        plot->replot(QCustomPlot::rpQueuedReplot);
    }
}

QList<std::pair<double, double>> ChartArea::curve(int chart, RunId run) const
{
    return pointsOf(m_charts.value(chart), [run](const QCPGraph *g) {
        return roleOf(g) == QLatin1String("curve") && g->property("run").toLongLong() == run;
    });
}

QList<std::pair<double, double>> ChartArea::band(int chart, const QString &group, int which) const
{
    return pointsOf(m_charts.value(chart), [&](const QCPGraph *g) {
        return roleOf(g) == QLatin1String("band") && g->property("group").toString() == group &&
            g->property("which").toInt() == which;
    });
}

bool ChartArea::exportCharts(const QString &path, QString *error)
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
        image.fill(m_view->palette().color(QPalette::Base));
        image.setDevicePixelRatio(2);
        ok = paint(&image) && image.save(path);
    }
    if (!ok && error)
        *error = tr("could not write %1").arg(path);
    return ok;
}

}  // namespace orrery::gui
