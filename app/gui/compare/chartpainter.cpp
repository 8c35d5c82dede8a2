// SPDX-License-Identifier: GPL-3.0-or-later
#include "chartpainter.h"

#include "runcolors.h"
#include "runstablemodel.h"

#include "orrery/core/curves.h"

#include "qcp.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

namespace orrery::gui {

using core::MetricHistory;
using core::RunId;

namespace {

constexpr int kMaxEnvelopes = 4;  // min/max bands drawn up to this many curves
constexpr int kSparse = 60;  // a curve of at most this many points shows them as dots

// A value as the chart can draw it: NaN and ±inf become gaps, and so do non-positive values
// on a log axis.
double drawable(double v, bool logY)
{
    if (!std::isfinite(v) || (logY && v <= 0))
        return std::numeric_limits<double>::quiet_NaN();
    return v;
}

// A point's x on the step or time axis: the step, or seconds (since the run's `origin`, relative).
double xOf(const core::MetricPoint &p, qint64 origin, core::XAxis axis)
{
    switch (axis) {
    case core::XAxis::Step:
        return double(p.step);
    case core::XAxis::WallTime:
        return double(p.timeMs) / 1000.0;
    case core::XAxis::RelativeTime:
        return double(p.timeMs - origin) / 1000.0;
    }
    return 0;
}

// A run's points on a chart as drawn: (x, y) by the chosen axis, or against the x metric (its
// history among `xHistories`).
std::vector<core::CurvePoint> curvePoints(const ChartOptions &options, RunId run, const MetricHistory &h,
                                          const QHash<RunId, MetricHistory> &xHistories)
{
    std::vector<core::CurvePoint> pts;
    if (!options.xMetric.isEmpty()) {
        auto stepValues = [](const MetricHistory &history) {
            std::vector<core::StepValue> out;
            out.reserve(history.points.size());
            for (const core::MetricPoint &p : history.points)
                out.push_back({p.step, p.value});
            return out;
        };
        pts = core::pairByStep(stepValues(xHistories.value(run)), stepValues(h));
        for (core::CurvePoint &p : pts)
            p.y = drawable(p.y, options.logY);
        return pts;
    }
    pts.reserve(h.points.size());
    for (const core::MetricPoint &p : h.points)
        pts.push_back({xOf(p, h.origin, options.axis), drawable(p.value, options.logY)});
    return pts;
}

// A run's graph in its colour and width, remembered so a hover can emphasise or dim it and
// give it back as it was.
void styleGraph(QCPGraph *g, RunId run, const QColor &colour, double width)
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

// How a run's curve is named and coloured, and how its points lie.
struct CurveStyle {
    RunId run = 0;
    QString name;
    QColor colour;
    bool sortedX = false;  // x never goes back: QCustomPlot need not sort
    bool sparse = false;  // an eval every N steps: its points show as dots
};

// One answer drawn into one chart. The graphs of the last answer are reused in order, the surplus
// removed at the end: a pan frame of 20 curves then allocates nothing and registers nothing with
// the plot's layers.
class AnswerDrawing {
public:
    AnswerDrawing(QCustomPlot *plot, const ChartOptions &options)
        : m_plot(plot), m_options(options), m_mainLayer(plot->layer(QStringLiteral("main")))
    { }
    // `curves`: how many runs the chart draws.
    void drawRun(RunId run, const core::RunRow *row, const std::vector<core::CurvePoint> &pts,
                 const MetricHistory &h, qsizetype curves);
    QStringList drawBands(bool rescale);
    void removeSurplus()
    {
        while (m_plot->graphCount() > m_used)
            m_plot->removeGraph(m_plot->graphCount() - 1);
    }

private:
    QCPGraph *nextGraph();
    void addToGroup(const QString &group, RunId run, const std::vector<core::CurvePoint> &pts, bool sortedX);
    void drawEnvelope(RunId run, const MetricHistory &h, const QColor &colour);
    void drawCurve(const CurveStyle &style, const std::vector<core::CurvePoint> &pts, double width);
    void drawSmoothed(const CurveStyle &style, const std::vector<core::CurvePoint> &pts,
                      const QVector<double> &xs);
    void drawBand(const std::vector<core::BandPoint> &band, const QColor &colour, const QString &name,
                  const QString &group);

    QCustomPlot *m_plot;
    const ChartOptions &m_options;
    QCPLayer *m_mainLayer;
    int m_used = 0;
    // Groups: runs sharing the group param's value.
    QMap<QString, QList<std::vector<core::CurvePoint>>> m_groups;
    QMap<QString, RunId> m_groupColour;
};

QCPGraph *AnswerDrawing::nextGraph()
{
    QCPGraph *g = m_used < m_plot->graphCount() ? m_plot->graph(m_used) : m_plot->addGraph();
    ++m_used;
    g->setName(QString());
    g->setPen(QPen());
    g->setBrush(Qt::NoBrush);
    g->setChannelFillGraph(nullptr);
    g->setScatterStyle(QCPScatterStyle());
    if (g->layer() != m_mainLayer)
        g->setLayer(m_mainLayer);
    for (const char *p : {"role", "run", "group", "which", "colour", "width"})
        g->setProperty(p, QVariant());
    return g;
}

void AnswerDrawing::drawRun(RunId run, const core::RunRow *row, const std::vector<core::CurvePoint> &pts,
                            const MetricHistory &h, qsizetype curves)
{
    const QColor colour = runColor(run);
    // Points come in step order: on the step axis x is sorted already (QCustomPlot need not
    // sort 20 curves again each frame); a wall clock may step back, so time axes sort.
    const bool parametric = !m_options.xMetric.isEmpty();
    // A parametric curve keeps its step order where x goes back (QCPGraph would sort it).
    const bool sortedX = parametric ? core::xNonDecreasing(pts) : m_options.axis == core::XAxis::Step;
    const QString name = row ? row->run.name : QString::number(run);
    if (!m_options.groupBy.isEmpty())
        addToGroup(row ? row->params.value(m_options.groupBy) : QString(), run, pts, sortedX);
    // The envelope: each bucket's min and max, a faint band under the curve. With many
    // curves the bands only hide each other (and cost a fill each): the curves themselves
    // pass through every bucket's min and max anyway.
    if (h.downsampled && !h.buckets.empty() && curves <= kMaxEnvelopes && !parametric)
        drawEnvelope(run, h, colour);
    const double width = curves > kMaxEnvelopes ? 1.0 : 1.5;  // 1 px lines draw fastest
    drawCurve({run, name, colour, sortedX, pts.size() <= kSparse}, pts, width);
}

void AnswerDrawing::addToGroup(const QString &group, RunId run, const std::vector<core::CurvePoint> &pts,
                               bool sortedX)
{
    auto &members = m_groups[group];
    members.push_back(pts);
    if (!sortedX)  // a band bins by x
        std::sort(members.back().begin(), members.back().end(),
                  [](const core::CurvePoint &a, const core::CurvePoint &b) { return a.x < b.x; });
    if (!m_groupColour.contains(group))
        m_groupColour.insert(group, run);
}

void AnswerDrawing::drawEnvelope(RunId run, const MetricHistory &h, const QColor &colour)
{
    QVector<double> xs, lo, hi;
    for (const core::HistoryBucket &b : h.buckets) {
        if (b.count <= b.nanCount)
            continue;
        xs.push_back((xOf(b.first, h.origin, m_options.axis) + xOf(b.last, h.origin, m_options.axis)) / 2);
        lo.push_back(drawable(b.min.value, m_options.logY));
        hi.push_back(drawable(b.max.value, m_options.logY));
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

// The run's raw curve (faint under the EMA when smoothing or grouping), then its EMA.
void AnswerDrawing::drawCurve(const CurveStyle &style, const std::vector<core::CurvePoint> &pts, double width)
{
    const bool smoothing = m_options.smoothing > 0;
    QVector<double> xs, ys;
    xs.reserve(qsizetype(pts.size()));
    ys.reserve(qsizetype(pts.size()));
    for (const core::CurvePoint &p : pts) {
        xs.push_back(p.x);
        ys.push_back(p.y);
    }
    QCPGraph *raw = nextGraph();
    raw->setName(style.name);
    QColor rawColour = style.colour;
    if (smoothing || !m_options.groupBy.isEmpty())
        rawColour.setAlpha(60);
    if (style.sparse)
        raw->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 5));
    styleGraph(raw, style.run, rawColour, width);
    raw->setData(xs, ys, style.sortedX);
    raw->setProperty("role", smoothing ? QStringLiteral("raw") : QStringLiteral("curve"));
    if (smoothing)
        drawSmoothed(style, pts, xs);
}

void AnswerDrawing::drawSmoothed(const CurveStyle &style, const std::vector<core::CurvePoint> &pts,
                                 const QVector<double> &xs)
{
    const auto smooth = core::emaSmooth(pts, m_options.smoothing);
    QVector<double> sy;
    sy.reserve(qsizetype(smooth.size()));
    for (const core::CurvePoint &p : smooth)
        sy.push_back(p.y);
    QCPGraph *g = nextGraph();
    g->setName(style.name);
    g->setProperty("role", QStringLiteral("curve"));
    QColor c = style.colour;
    if (!m_options.groupBy.isEmpty())
        c.setAlpha(90);
    // A one-point series has no line to draw: its dot is the curve.
    if (style.sparse)
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 5));
    styleGraph(g, style.run, c, 1.8);
    g->setData(xs, sy, style.sortedX);
}

QStringList AnswerDrawing::drawBands(bool rescale)
{
    QStringList entries;
    const double lo = m_plot->xAxis->range().lower, hi = m_plot->xAxis->range().upper;
    const int bins = std::max(10, m_plot->axisRect()->width() / 3);
    for (auto it = m_groups.cbegin(); it != m_groups.cend(); ++it) {
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
        const QColor colour = runColor(m_groupColour.value(it.key()));
        const QString name =
            QStringLiteral("%1 = %2 (%3 runs)").arg(m_options.groupBy, it.key()).arg(it.value().size());
        entries << QStringLiteral("<span style='color:%1'>\u25ac</span> %2")
                       .arg(colour.name(), name.toHtmlEscaped());
        drawBand(band, colour, name, it.key());
    }
    return entries;
}

// A group's band: the fill between mean - std and mean + std, and the mean over it.
void AnswerDrawing::drawBand(const std::vector<core::BandPoint> &band, const QColor &colour,
                             const QString &name, const QString &group)
{
    QVector<double> xs, mean, bandLo, bandHi;
    for (const core::BandPoint &b : band) {
        xs.push_back(b.x);
        mean.push_back(b.mean);
        bandLo.push_back(drawable(b.mean - b.std, m_options.logY));
        bandHi.push_back(drawable(b.mean + b.std, m_options.logY));
    }
    QColor fill = colour;
    fill.setAlpha(60);
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
        g->setProperty("group", group);
        g->setProperty("which", which);
    }
}

// y over the graphs' points whose x lies in `keys` (QCPRange(): every x), or nullopt for none.
std::optional<QCPRange> valuesOver(QCustomPlot *plot, const QCPRange &keys, bool logY)
{
    std::optional<QCPRange> y;
    for (int g = 0; g < plot->graphCount(); ++g) {
        bool found = false;
        const QCPRange r = plot->graph(g)->getValueRange(found, logY ? QCP::sdPositive : QCP::sdBoth, keys);
        if (found)
            y = y ? QCPRange(std::min(y->lower, r.lower), std::max(y->upper, r.upper)) : r;
    }
    return y;
}

}  // namespace

ChartPainter::ChartPainter(const ChartOptions &options, const RunsTableModel *runs)
    : m_options(options), m_runs(runs)
{ }

QStringList ChartPainter::draw(QCustomPlot *plot, const ChartHistories &histories,
                               const QHash<RunId, MetricHistory> &xHistories, bool rescale)
{
    AnswerDrawing drawing(plot, m_options);
    for (const auto &[run, h] : histories)
        drawing.drawRun(run, m_runs->findRun(run), curvePoints(m_options, run, h, xHistories), h,
                        histories.size());
    QStringList groupEntries;
    if (!m_options.groupBy.isEmpty())
        groupEntries = drawing.drawBands(rescale);
    drawing.removeSurplus();  // before the ranges: they are of this answer's graphs only
    return groupEntries;
}

void ChartPainter::fitY(QCustomPlot *plot, int chart, bool wholeData)
{
    if (!plot)
        return;
    if (wholeData) {
        if (const auto all = valuesOver(plot, QCPRange(), m_options.logY))
            m_fullY.insert(chart, {all->lower, all->upper});
        else
            m_fullY.remove(chart);
    }
    std::optional<QCPRange> y;
    const auto whole = m_fullY.constFind(chart);
    if (!m_options.fitY && whole != m_fullY.constEnd() && (!m_options.logY || whole->first > 0))
        y = QCPRange(whole->first, whole->second);
    else
        y = valuesOver(plot, plot->xAxis->range(), m_options.logY);
    if (!y)
        return;
    if (m_options.logY) {  // the same share of the decades shown, each side
        const double decades = std::max(std::log10(y->upper / y->lower), 0.1);
        const double f = std::pow(10.0, decades * kPad);
        plot->yAxis->setRange(y->lower / f, y->upper * f);
    } else {
        const auto [lo, hi] = core::valueAxisRange(y->lower, y->upper, 0.05);
        plot->yAxis->setRange(lo, hi);
    }
}

void ChartPainter::applyHighlight(QCustomPlot *plot, RunId highlight)
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
        const bool emphasised = highlight && run == highlight;
        if (highlight && !emphasised)
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

}  // namespace orrery::gui
