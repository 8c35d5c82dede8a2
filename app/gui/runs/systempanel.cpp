// SPDX-License-Identifier: GPL-3.0-or-later
#include "systempanel.h"

#include "qcp.h"
#include "runcolors.h"
#include "storereader.h"

#include <QDockWidget>
#include <QLabel>
#include <QRegularExpression>
#include <QScrollArea>
#include <QVBoxLayout>

#include <algorithm>
#include <limits>

namespace orrery::gui {

namespace {

struct Figure {
    const char *id;
    const char *title;  // translated in fill()
};
// In the order they are shown: the trainer's own processes first, then its GPUs.
constexpr Figure kFigures[] = {
    {"cpu", QT_TRANSLATE_NOOP("orrery::gui::SystemPanel", "CPU (% of one core)")},
    {"memory", QT_TRANSLATE_NOOP("orrery::gui::SystemPanel", "Memory (GB resident)")},
    {"gpu_util", QT_TRANSLATE_NOOP("orrery::gui::SystemPanel", "GPU utilisation (%)")},
    {"gpu_mem", QT_TRANSLATE_NOOP("orrery::gui::SystemPanel", "GPU memory (GB used)")},
    {"gpu_power", QT_TRANSLATE_NOOP("orrery::gui::SystemPanel", "GPU power (W)")},
};

// Where a plot is readable in a dock: the figure and its axis ticks, not more.
constexpr int kChartHeight = 190;

// A figure's chart, empty: its title above, ticks readable at a dock's chart height and, with
// `legend`, one below in one row in `font` (inside it would hide lines that run flat near the top).
QCustomPlot *newChart(QWidget *parent, const Figure &figure, const QString &title, bool legend,
                      const QFont &font)
{
    auto *plot = new QCustomPlot(parent);
    plot->setObjectName(QStringLiteral("systemChart_%1").arg(QLatin1String(figure.id)));
    plot->setMinimumHeight(kChartHeight);
    plot->plotLayout()->insertRow(0);
    plot->plotLayout()->addElement(0, 0, new QCPTextElement(plot, title));
    plot->xAxis->setLabel(SystemPanel::tr("minutes"));
    plot->yAxis->ticker()->setTickCount(4);  // readable labels at a dock's chart height
    if (legend) {
        QFont legendFont = font;
        legendFont.setPointSizeF(legendFont.pointSizeF() * 0.85);
        plot->legend->setFont(legendFont);
        plot->legend->setVisible(true);
        plot->legend->setBorderPen(Qt::NoPen);
        plot->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
        plot->legend->setMargins(QMargins(4, 0, 4, 0));
        plot->legend->setIconSize(14, 8);
        plot->axisRect()->insetLayout()->take(plot->legend);
        plot->plotLayout()->addElement(2, 0, plot->legend);
        plot->plotLayout()->setRowStretchFactor(2, 0.001);
    }
    plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    return plot;
}

// One node's or GPU's line, x in minutes since `originMs`, in the runs' colour of `index`.
void addLine(QCustomPlot *plot, const QString &name, const std::vector<core::MetricPoint> &points,
             std::int64_t originMs, int index)
{
    QVector<double> xs, ys;
    xs.reserve(qsizetype(points.size()));
    ys.reserve(qsizetype(points.size()));
    for (const core::MetricPoint &p : points) {
        xs << double(p.timeMs - originMs) / 60'000.0;
        ys << p.value;
    }
    QCPGraph *g = plot->addGraph();
    g->setName(name);
    // The runs' categorical palette, by line: node0 and gpu0 look alike on every chart.
    g->setPen(QPen(runColor(core::RunId(index)), 1.5));
    // One sample alone is a dot, not an invisible line.
    g->setScatterStyle(xs.size() == 1 ? QCPScatterStyle(QCPScatterStyle::ssDisc, 6) : QCPScatterStyle());
    g->setData(xs, ys, true);
}

// Room at both ends so the newest sample is not cut at the edge; 0 at the bottom (these figures
// count up from nothing) and a little above the highest.
void fitRanges(QCustomPlot *plot)
{
    plot->rescaleAxes();
    const QCPRange x = plot->xAxis->range();
    const double pad = std::max(0.05, (x.upper - x.lower) * 0.03);
    plot->xAxis->setRange(x.lower - pad, x.upper + pad);
    const QCPRange y = plot->yAxis->range();
    plot->yAxis->setRange(std::min(0.0, y.lower), y.upper * 1.08 + (y.upper == y.lower ? 1 : 0));
}

}  // namespace

SystemPanel::SystemPanel(StoreReader *reader, QWidget *parent)
    : QWidget(parent), m_reader(reader), m_empty(new QLabel(this)), m_charts(new QWidget)
{
    setObjectName(QStringLiteral("systemPanel"));
    m_empty->setObjectName(QStringLiteral("systemEmpty"));
    m_empty->setWordWrap(true);
    m_empty->setAlignment(Qt::AlignCenter);
    m_empty->setTextFormat(Qt::PlainText);
    m_empty->setText(tr("Select a run to see its CPU, memory and GPU use over time."));
    m_chartLayout = new QVBoxLayout(m_charts);
    m_chartLayout->setContentsMargins(0, 0, 0, 0);
    auto *scroll = new QScrollArea(this);
    scroll->setWidget(m_charts);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);  // charts take the dock's width
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_empty, 1);
    layout->addWidget(scroll, 1);
    scroll->hide();
    // A dock tabbed away stays "visible" to Qt; its dock says when its tab is the one shown.
    if (auto *dock = qobject_cast<QDockWidget *>(parent))
        connect(dock, &QDockWidget::visibilityChanged, this, [this](bool onScreen) {
            m_onScreen = onScreen;
            if (onScreen && m_stale) {
                m_stale = false;
                read();
            }
        });
    connect(this, &SystemPanel::shown, this, [this, scroll] {
        scroll->setVisible(!m_plots.isEmpty());
        m_empty->setVisible(m_plots.isEmpty());
    });
}

QString SystemPanel::figureOf(const QString &key)
{
    static const QRegularExpression node(QStringLiteral("^node[0-9]+/(cpu_pct|rss_gb)$"));
    static const QRegularExpression gpu(QStringLiteral("^gpu[0-9]+/(util|mem_gb|power_w)$"));
    if (const auto m = node.match(key); m.hasMatch())
        return m.captured(1) == QLatin1String("cpu_pct") ? QStringLiteral("cpu") : QStringLiteral("memory");
    if (const auto m = gpu.match(key); m.hasMatch()) {
        const QString f = m.captured(1);
        return f == QLatin1String("util")  ? QStringLiteral("gpu_util")
            : f == QLatin1String("mem_gb") ? QStringLiteral("gpu_mem")
                                           : QStringLiteral("gpu_power");
    }
    return {};
}

void SystemPanel::showRun(core::RunId run)
{
    m_run = run;
    if (!run) {
        m_stale = false;
        fill({});
        return;
    }
    // Behind the Details tab nobody sees it: read when it is shown, not on every live refresh.
    m_stale = !isVisible() || !m_onScreen;
    if (!m_stale)
        read();
}

void SystemPanel::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    if (m_stale) {
        m_stale = false;
        read();
    }
}

void SystemPanel::read()
{
    const core::RunId run = m_run;
    m_reader->read<std::vector<Series>>(
        this,
        [run](const core::TrackingStore &store) {
            std::vector<Series> out;
            for (const QString &key : store.metricKeys(run)) {
                if (figureOf(key).isEmpty())
                    continue;
                // A sample every 15 s is 5,760 a day: min/max buckets beyond that keep the spikes.
                core::HistoryQuery q;
                q.buckets = 1000;
                q.axis = core::XAxis::WallTime;
                out.push_back({key, store.history(run, key, q).points});
            }
            return out;
        },
        [this, run](std::vector<Series> series) {
            if (run == m_run)
                fill(series);
        });
}

void SystemPanel::fill(const std::vector<Series> &series)
{
    qDeleteAll(m_plots);  // from a read's callback, never from a plot's own signal
    m_plots.clear();
    m_lines.clear();
    // Minutes since the run's first system sample: the same origin on every chart.
    std::int64_t origin = std::numeric_limits<std::int64_t>::max();
    for (const Series &s : series)
        if (!s.points.empty())
            origin = std::min(origin, s.points.front().timeMs);
    for (const Figure &figure : kFigures) {
        std::vector<const Series *> mine;
        for (const Series &s : series)
            if (!s.points.empty() && figureOf(s.key) == QLatin1String(figure.id))
                mine.push_back(&s);
        if (mine.empty())
            continue;
        std::sort(mine.begin(), mine.end(), [](const Series *a, const Series *b) {
            // node2 before node10
            const QString na = a->key.section(QLatin1Char('/'), 0, 0),
                          nb = b->key.section(QLatin1Char('/'), 0, 0);
            return na.size() != nb.size() ? na.size() < nb.size() : na < nb;
        });
        const QString title = tr(figure.title);
        QCustomPlot *plot = newChart(m_charts, figure, title, mine.size() > 1, font());
        int i = 0;
        for (const Series *s : mine) {
            const QString line = s->key.section(QLatin1Char('/'), 0, 0);
            addLine(plot, line, s->points, origin, ++i);
            m_lines[title] << line;
        }
        fitRanges(plot);
        plot->replot();
        m_chartLayout->addWidget(plot);
        m_plots << plot;
    }
    if (m_plots.isEmpty())
        m_empty->setText(m_run ? tr("This run has no system metrics: the bundled trainer writes them "
                                    "every train.system_every_s seconds (0 turns them off); a program of "
                                    "your own logs none unless it writes `system` events.")
                               : tr("Select a run to see its CPU, memory and GPU use over time."));
    Q_EMIT shown(m_run);
}

QStringList SystemPanel::chartTitles() const
{
    QStringList titles;
    for (const Figure &f : kFigures)
        if (m_lines.contains(tr(f.title)))
            titles << tr(f.title);
    return titles;
}

QStringList SystemPanel::linesOf(const QString &title) const
{
    return m_lines.value(title);
}

QString SystemPanel::emptyText() const
{
    return m_plots.isEmpty() ? m_empty->text() : QString();
}

}  // namespace orrery::gui
