// SPDX-License-Identifier: GPL-3.0-or-later
#include "parallelcoordinates.h"

#include "runcolors.h"

#include "orrery/core/format.h"
#include "orrery/core/params.h"

#include <QMouseEvent>
#include <QPainter>
#include <QSet>

#include <algorithm>
#include <cmath>

namespace orrery::gui {

namespace {
constexpr int kMarginX = 60, kTop = 28, kBottom = 24;
}

std::optional<double> ParallelAxes::Axis::position(const QString &value) const
{
    if (value.isEmpty())
        return std::nullopt;
    if (kind == Kind::Categorical) {
        const qsizetype i = categories.indexOf(value);
        if (i < 0)
            return std::nullopt;
        return categories.size() == 1 ? 0.5 : double(i) / double(categories.size() - 1);
    }
    bool ok = false;
    double v = value.toDouble(&ok);
    if (!ok || !std::isfinite(v) || (kind == Kind::Log && v <= 0))
        return std::nullopt;
    if (kind == Kind::Log)
        v = std::log10(v);
    return hi > lo ? (v - lo) / (hi - lo) : 0.5;
}

QString ParallelAxes::Axis::labelAt(double p) const
{
    if (kind == Kind::Categorical) {
        if (categories.isEmpty())
            return {};
        const auto i = categories.size() == 1 ? 0 : qsizetype(std::lround(p * double(categories.size() - 1)));
        return categories.value(std::clamp<qsizetype>(i, 0, categories.size() - 1));
    }
    const double v = lo + p * (hi - lo);
    return core::formatNumber(kind == Kind::Log ? std::pow(10.0, v) : v, 3);
}

ParallelAxes ParallelAxes::build(const QList<core::RunRow> &runs, const QString &metric)
{
    ParallelAxes out;
    QList<core::Params> params;
    for (const core::RunRow &r : runs)
        params.push_back(r.params);
    QStringList keys = core::differingParams(params);
    QList<QStringList> values;  // per axis, per run
    for (const QString &k : std::as_const(keys)) {
        QStringList v;
        for (const core::RunRow &r : runs)
            v.push_back(r.params.value(k));
        values.push_back(v);
        Axis a;
        a.key = QStringLiteral("params.") + k;
        a.label = k;
        out.axes.push_back(a);
    }
    if (!metric.isEmpty()) {
        QStringList v;
        for (const core::RunRow &r : runs) {
            const core::LatestMetric *m = r.metric(metric);
            v.push_back(m && std::isfinite(m->last.value) ? QString::number(m->last.value, 'g', 17)
                                                          : QString());
        }
        values.push_back(v);
        Axis a;
        a.key = QStringLiteral("metrics.") + metric;
        a.label = metric;
        out.axes.push_back(a);
    }
    for (qsizetype i = 0; i < out.axes.size(); ++i) {
        Axis &a = out.axes[i];
        bool numeric = true;
        double lo = INFINITY, hi = -INFINITY;
        QSet<QString> distinct;
        for (const QString &text : std::as_const(values[i])) {
            if (text.isEmpty())
                continue;
            distinct.insert(text);
            bool ok = false;
            const double v = text.toDouble(&ok);
            if (!ok || !std::isfinite(v)) {
                numeric = false;
                continue;
            }
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
        if (!numeric || distinct.isEmpty()) {
            a.kind = Axis::Kind::Categorical;
            a.categories = QStringList(distinct.begin(), distinct.end());
            std::sort(a.categories.begin(), a.categories.end());
        } else if (lo > 0 && hi / lo > 100) {
            a.kind = Axis::Kind::Log;
            a.lo = std::log10(lo);
            a.hi = std::log10(hi);
        } else {
            a.lo = lo;
            a.hi = hi;
        }
    }
    for (qsizetype r = 0; r < runs.size(); ++r) {
        Line line;
        line.run = runs[r].run.id;
        for (qsizetype i = 0; i < out.axes.size(); ++i)
            line.positions.push_back(out.axes[i].position(values[i][r]));
        out.lines.push_back(line);
    }
    return out;
}

QList<core::RunId> ParallelAxes::inside(const QMap<int, std::pair<double, double>> &brushes) const
{
    QList<core::RunId> out;
    for (const Line &l : lines) {
        bool in = true;
        for (auto it = brushes.cbegin(); in && it != brushes.cend(); ++it) {
            const auto p = l.positions.value(it.key());
            in = p && *p >= it->first && *p <= it->second;
        }
        if (in)
            out.push_back(l.run);
    }
    return out;
}

ParallelCoordinates::ParallelCoordinates(QWidget *parent) : QWidget(parent)
{
    setMouseTracking(false);
    setMinimumHeight(160);
}

void ParallelCoordinates::setRuns(const QList<core::RunRow> &runs, const QString &metric)
{
    ParallelAxes next = ParallelAxes::build(runs, metric);
    // Brushes stay on axes that are still there (the same key at the same place).
    QMap<int, std::pair<double, double>> kept;
    for (auto it = m_brushes.cbegin(); it != m_brushes.cend(); ++it)
        if (it.key() < next.axes.size() && it.key() < m_axes.axes.size() &&
            next.axes[it.key()].key == m_axes.axes[it.key()].key)
            kept.insert(it.key(), *it);
    m_axes = std::move(next);
    m_brushes = kept;
    update();
}

void ParallelCoordinates::setHighlighted(const QList<core::RunId> &runs)
{
    m_highlighted = runs;
    update();
}

int ParallelCoordinates::axisX(int axis) const
{
    const int n = int(m_axes.axes.size());
    if (n <= 1)
        return width() / 2;
    return kMarginX + (width() - 2 * kMarginX) * axis / (n - 1);
}

int ParallelCoordinates::positionY(double p) const
{
    const int h = height() - kTop - kBottom;
    return kTop + int(std::lround((1.0 - p) * h));
}

double ParallelCoordinates::positionAt(int y) const
{
    const int h = std::max(1, height() - kTop - kBottom);
    return std::clamp(1.0 - double(y - kTop) / h, 0.0, 1.0);
}

int ParallelCoordinates::axisNear(int x) const
{
    for (int i = 0; i < m_axes.axes.size(); ++i)
        if (std::abs(axisX(i) - x) <= 12)
            return i;
    return -1;
}

void ParallelCoordinates::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    p.fillRect(rect(), palette().base());
    if (m_axes.axes.isEmpty()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect(), Qt::AlignCenter,
                   tr("Select runs whose params differ to see their parallel coordinates"));
        return;
    }
    const QSet<core::RunId> highlighted(m_highlighted.begin(), m_highlighted.end());
    // Unselected lines first, faint; the selection on top in full colour. Polylines with 1 px
    // pens, antialiased only for the selection: QPainter's raster path for antialiased, wide or
    // curved strokes made 100 lines cost 50 ms a paint, and the view repaints on every refresh.
    const bool many = m_axes.lines.size() > 50;
    QPolygonF segment;
    for (int pass = 0; pass < 2; ++pass) {
        p.setRenderHint(QPainter::Antialiasing, pass == 1 || !many);
        for (const ParallelAxes::Line &l : std::as_const(m_axes.lines)) {
            const bool on = highlighted.contains(l.run);
            if (on != (pass == 1))
                continue;
            QColor c = runColor(l.run);
            if (!on && !highlighted.isEmpty())
                c.setAlpha(40);
            p.setPen(QPen(c, on ? 2.0 : 0.0));  // 0: a cosmetic 1 px pen
            segment.clear();
            for (int i = 0; i <= l.positions.size(); ++i) {
                if (i < l.positions.size() && l.positions[i]) {
                    segment.push_back(QPointF(axisX(i), positionY(*l.positions[i])));
                    continue;
                }
                if (segment.size() > 1)  // a run without this param: a gap
                    p.drawPolyline(segment);
                segment.clear();
            }
        }
    }
    p.setRenderHint(QPainter::Antialiasing);
    const QColor fg = palette().color(QPalette::Text);
    for (int i = 0; i < m_axes.axes.size(); ++i) {
        const auto &a = m_axes.axes[i];
        const int x = axisX(i);
        p.setPen(QPen(fg, 1.5));
        p.drawLine(x, positionY(0), x, positionY(1));
        QString title = a.label;
        if (a.kind == ParallelAxes::Axis::Kind::Log)
            title += tr(" (log)");
        p.drawText(QRect(x - kMarginX, 4, 2 * kMarginX, kTop - 6), Qt::AlignCenter, title);
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(QRect(x + 4, positionY(1) - 2, kMarginX, 14), Qt::AlignLeft, a.labelAt(1));
        p.drawText(QRect(x + 4, positionY(0) - 12, kMarginX, 14), Qt::AlignLeft, a.labelAt(0));
        if (auto b = m_brushes.find(i); b != m_brushes.end()) {
            QColor brush = palette().color(QPalette::Highlight);
            brush.setAlpha(90);
            p.fillRect(QRect(x - 6, positionY(b->second), 12, positionY(b->first) - positionY(b->second)),
                       brush);
        }
    }
}

void ParallelCoordinates::mousePressEvent(QMouseEvent *e)
{
    m_dragAxis = axisNear(int(e->position().x()));
    m_dragFrom = positionAt(int(e->position().y()));
    m_dragMoved = false;
}

void ParallelCoordinates::mouseMoveEvent(QMouseEvent *e)
{
    if (m_dragAxis < 0)
        return;
    const double to = positionAt(int(e->position().y()));
    if (std::abs(positionY(to) - positionY(m_dragFrom)) < 3 && !m_dragMoved)
        return;
    m_dragMoved = true;
    m_brushes.insert(m_dragAxis, {std::min(m_dragFrom, to), std::max(m_dragFrom, to)});
    update();
}

void ParallelCoordinates::mouseReleaseEvent(QMouseEvent *e)
{
    if (m_dragAxis < 0)
        return;
    if (!m_dragMoved)
        m_brushes.remove(m_dragAxis);  // a click clears the axis' brush
    else
        mouseMoveEvent(e);
    m_dragAxis = -1;
    update();
    Q_EMIT brushed(m_brushes.isEmpty() ? QList<core::RunId>{} : m_axes.inside(m_brushes));
}

}  // namespace orrery::gui
