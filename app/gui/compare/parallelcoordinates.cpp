// SPDX-License-Identifier: GPL-3.0-or-later
#include "parallelcoordinates.h"

#include "runcolors.h"

#include "orrery/core/format.h"
#include "orrery/core/params.h"
#include "orrery/core/paths.h"

#include <QContextMenuEvent>
#include <QDialog>
#include <QDialogButtonBox>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
#include <QMouseEvent>
#include <QPainter>
#include <QPushButton>
#include <QSet>
#include <QSettings>
#include <QUrl>
#include <QVBoxLayout>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

namespace orrery::gui {

namespace {
constexpr int kMarginX = 60, kTop = 28, kBottom = 24;
constexpr int kLegend = 28;  // the colour scale's strip at the right
constexpr int kSteps = 32;  // the colour scale's steps, each a batch of lines

// 1 px lines straight into a premultiplied ARGB image (Bresenham, source-over). QPainter's raster
// engine spends ~60 ns a pixel on a cosmetic line (a span call per pixel): 5,000 runs of 5
// segments took ~340 ms a paint on the 2-core dev machine; this takes a few ms.
void rasterLines(QImage &image, const QVector<QLine> &lines, const QColor &colour, qreal scale)
{
    const int w = image.width(), h = image.height();
    const qsizetype stride = image.bytesPerLine() / 4;
    auto *bits = reinterpret_cast<QRgb *>(image.bits());
    const uint a = uint(colour.alpha()), keep = 255 - a;
    const uint r = uint(colour.red()) * a / 255, g = uint(colour.green()) * a / 255,
               b = uint(colour.blue()) * a / 255;
    for (const QLine &l : lines) {
        int x0 = int(l.x1() * scale), y0 = int(l.y1() * scale);
        const int x1 = int(l.x2() * scale), y1 = int(l.y2() * scale);
        const int dx = std::abs(x1 - x0), dy = -std::abs(y1 - y0), sx = x0 < x1 ? 1 : -1,
                  sy = y0 < y1 ? 1 : -1;
        int err = dx + dy;
        for (;;) {
            if (x0 >= 0 && x0 < w && y0 >= 0 && y0 < h) {
                QRgb &d = bits[qsizetype(y0) * stride + x0];
                d = keep == 0
                    ? qRgba(int(r), int(g), int(b), 255)
                    : qRgba(int(r + uint(qRed(d)) * keep / 255), int(g + uint(qGreen(d)) * keep / 255),
                            int(b + uint(qBlue(d)) * keep / 255), int(a + uint(qAlpha(d)) * keep / 255));
            }
            if (x0 == x1 && y0 == y1)
                break;
            const int e2 = 2 * err;
            if (e2 >= dy) {
                err += dy;
                x0 += sx;
            }
            if (e2 <= dx) {
                err += dx;
                y0 += sy;
            }
        }
    }
}

// Draws what is rastered in `layer` so far (if anything), and empties it.
void drawLayer(QPainter &p, QImage &layer, qreal dpr)
{
    if (layer.isNull())
        return;
    layer.setDevicePixelRatio(dpr);
    p.drawImage(0, 0, layer);
    layer = QImage();
}

// The user's axes of a sweep, in Orrery's settings file (a sweep name may hold '/', which
// QSettings reads as a group).
QString settingsKey(const QString &scope)
{
    return QStringLiteral("parallelCoordinates/axes/") + QString::fromLatin1(QUrl::toPercentEncoding(scope));
}
}  // namespace

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

namespace {

// One axis' values, per run: the text (categorical axes; none for the metric) and the number
// (NaN: none). Numbers are parsed once and a metric is never turned into text: for 5,000 runs
// this is most of setRuns.
struct Column {
    QStringList texts;
    std::vector<double> numbers;
};

Column paramColumn(const QList<core::RunRow> &runs, const QString &key)
{
    const double none = std::numeric_limits<double>::quiet_NaN();
    Column column;
    column.numbers.reserve(size_t(runs.size()));
    for (const core::RunRow &r : runs) {
        const QString v = r.params.value(key);
        bool ok = false;
        const double d = v.toDouble(&ok);
        column.texts.push_back(v);
        column.numbers.push_back(ok && std::isfinite(d) ? d : none);
    }
    return column;
}

Column metricColumn(const QList<core::RunRow> &runs, const QString &metric)
{
    const double none = std::numeric_limits<double>::quiet_NaN();
    Column column;
    column.numbers.reserve(size_t(runs.size()));
    for (const core::RunRow &r : runs) {
        const core::LatestMetric *m = r.metric(metric);
        column.numbers.push_back(m && std::isfinite(m->last.value) ? m->last.value : none);
    }
    return column;
}

// Fits `a` to its column: its kind, its range or categories, the runs it has no place for.
// Returns whether it is numeric (linear or log).
bool fitAxis(ParallelAxes::Axis &a, const Column &column, const QSet<QString> &logParams)
{
    int numbersSeen = 0, textsSeen = 0;
    double lo = INFINITY, hi = -INFINITY;
    for (size_t r = 0; r < column.numbers.size(); ++r) {
        const double v = column.numbers[r];
        if (std::isnan(v)) {
            if (!column.texts.isEmpty() && !column.texts[qsizetype(r)].isEmpty())
                ++textsSeen;
            else
                ++a.missing;
            continue;
        }
        ++numbersSeen;
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    }
    // Numeric where most values are numbers: one "oops" among 20 learning rates is a value
    // off the axis, not a reason to make the axis categorical.
    const bool any = numbersSeen > 0, numeric = any && textsSeen * 4 <= numbersSeen;
    if (numeric)
        a.notNumbers = textsSeen;
    if (!numeric || !any) {
        QSet<QString> distinct;
        for (const QString &text : std::as_const(column.texts))
            if (!text.isEmpty())
                distinct.insert(text);
        a.kind = ParallelAxes::Axis::Kind::Categorical;
        a.categories = QStringList(distinct.begin(), distinct.end());
        std::sort(a.categories.begin(), a.categories.end());
    } else if (lo > 0 && (hi / lo > 100 || (hi > lo && logParams.contains(a.label)))) {
        a.kind = ParallelAxes::Axis::Kind::Log;
        a.lo = std::log10(lo);
        a.hi = std::log10(hi);
    } else {
        a.lo = lo;
        a.hi = hi;
    }
    return numeric;
}

// The line of the run in row `r` of the columns: its position on each axis.
ParallelAxes::Line lineOf(core::RunId run, qsizetype r, const QList<ParallelAxes::Axis> &axes,
                          const QList<Column> &columns, const QList<bool> &numericAxis)
{
    ParallelAxes::Line line;
    line.run = run;
    line.positions.reserve(axes.size());
    for (qsizetype i = 0; i < axes.size(); ++i) {
        const ParallelAxes::Axis &a = axes[i];
        if (!numericAxis[i]) {
            line.positions.push_back(a.position(columns[i].texts.value(r)));
            continue;
        }
        double v = columns[i].numbers[size_t(r)];
        if (std::isnan(v) || (a.kind == ParallelAxes::Axis::Kind::Log && v <= 0)) {
            line.positions.push_back(std::nullopt);
            continue;
        }
        if (a.kind == ParallelAxes::Axis::Kind::Log)
            v = std::log10(v);
        line.positions.push_back(a.hi > a.lo ? (v - a.lo) / (a.hi - a.lo) : 0.5);
    }
    return line;
}

}  // namespace

ParallelAxes ParallelAxes::build(const QList<core::RunRow> &runs, const QStringList &keys,
                                 const QSet<QString> &logParams, const QString &metric)
{
    ParallelAxes out;
    QList<Column> columns;
    for (const QString &k : std::as_const(keys)) {
        columns.push_back(paramColumn(runs, k));
        Axis a;
        a.key = QStringLiteral("params.") + k;
        a.label = k;
        out.axes.push_back(a);
    }
    if (!metric.isEmpty()) {
        columns.push_back(metricColumn(runs, metric));
        Axis a;
        a.key = QStringLiteral("metrics.") + metric;
        a.label = metric;
        out.axes.push_back(a);
    }
    QList<bool> numericAxis;
    for (qsizetype i = 0; i < out.axes.size(); ++i)
        numericAxis.push_back(fitAxis(out.axes[i], columns[i], logParams));
    for (qsizetype r = 0; r < runs.size(); ++r)
        out.lines.push_back(lineOf(runs[r].run.id, r, out.axes, columns, numericAxis));
    return out;
}

std::pair<double, double> ParallelCoordinates::scaleRange() const
{
    const qsizetype metricAxis = m_axes.axes.size() - 1;
    double lo = 1, hi = 0;  // the scale's runs' extent on the metric axis
    for (const ParallelAxes::Line &l : m_axes.lines)
        if (const auto pos = l.positions.value(metricAxis);
            pos && (m_plan.scaleRuns.isEmpty() || m_plan.scaleRuns.contains(l.run))) {
            lo = std::min(lo, *pos);
            hi = std::max(hi, *pos);
        }
    return {lo, hi};
}

double ParallelCoordinates::colourOf(double position, std::pair<double, double> range) const
{
    const auto [lo, hi] = range;
    const double share = hi > lo ? std::clamp((position - lo) / (hi - lo), 0.0, 1.0) : 1.0;
    return m_plan.higherIsBetter ? share : 1.0 - share;
}

std::optional<double> ParallelCoordinates::colourPosition(core::RunId run) const
{
    const qsizetype metricAxis = m_axes.axes.size() - 1;
    if (metricAxis < 0 || !m_axes.axes[metricAxis].key.startsWith(QLatin1String("metrics.")))
        return std::nullopt;
    for (const ParallelAxes::Line &l : m_axes.lines)
        if (l.run == run)
            if (const auto pos = l.positions.value(metricAxis))
                return colourOf(*pos, scaleRange());
    return std::nullopt;
}

QString ParallelCoordinates::offAxisText(const ParallelAxes::Axis &a)
{
    QStringList parts;
    if (a.missing)
        parts << tr("%n run(s) without it", nullptr, a.missing);
    if (a.notNumbers)
        parts << tr("%n not a number", nullptr, a.notNumbers);
    return parts.join(QStringLiteral(" · "));
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

void ParallelCoordinates::setRuns(const QList<core::RunRow> &runs, const ParallelPlan &plan)
{
    m_runs = runs;
    // A brush narrows the selection, and the axes follow the selection: the axes being brushed
    // stay while the brush's own selection comes back.
    if (!m_emitting)
        m_plan = plan;
    rebuild();
}

QStringList ParallelCoordinates::params() const
{
    if (!m_plan.scope.isEmpty()) {
        auto it = m_chosen.constFind(m_plan.scope);
        if (it == m_chosen.cend()) {
            const QSettings settings(core::guiSettingsPath(), QSettings::IniFormat);
            it = m_chosen.insert(m_plan.scope, settings.value(settingsKey(m_plan.scope)).toStringList());
        }
        if (!it->isEmpty())
            return *it;
    }
    return m_plan.defaults;
}

void ParallelCoordinates::setChosenParams(const QStringList &params)
{
    if (!m_plan.scope.isEmpty()) {
        QSettings settings(core::guiSettingsPath(), QSettings::IniFormat);
        if (params.isEmpty())
            settings.remove(settingsKey(m_plan.scope));
        else
            settings.setValue(settingsKey(m_plan.scope), params);
        m_chosen.insert(m_plan.scope, params);
    } else {
        m_plan.defaults = params;  // runs of no sweep: kept until the selection changes
    }
    m_brushes.clear();
    rebuild();
}

void ParallelCoordinates::moveAxis(int from, int to)
{
    QStringList keys = params();
    if (from < 0 || to < 0 || from >= keys.size() || to >= keys.size())
        return;  // the metric axis stays last
    keys.move(from, to);
    setChosenParams(keys);
}

void ParallelCoordinates::chooseAxes()
{
    QDialog dialog(this);
    dialog.setWindowTitle(tr("Parallel coordinates: axes"));
    auto *layout = new QVBoxLayout(&dialog);
    auto *search = new QLineEdit(&dialog);
    search->setPlaceholderText(tr("Search params"));
    search->setClearButtonEnabled(true);
    layout->addWidget(search);
    auto *list = new QListWidget(&dialog);
    list->setDragDropMode(QAbstractItemView::InternalMove);  // drag to reorder
    const QStringList chosen = params();
    QStringList order = chosen;
    for (const QString &k : std::as_const(m_plan.available))
        if (!order.contains(k))
            order.push_back(k);
    for (const QString &k : std::as_const(order)) {
        auto *item = new QListWidgetItem(k, list);
        item->setFlags(item->flags() | Qt::ItemIsUserCheckable | Qt::ItemIsDragEnabled);
        item->setCheckState(chosen.contains(k) ? Qt::Checked : Qt::Unchecked);
    }
    layout->addWidget(list, 1);
    connect(search, &QLineEdit::textChanged, list, [list](const QString &text) {
        for (int i = 0; i < list->count(); ++i)
            list->item(i)->setHidden(!list->item(i)->text().contains(text, Qt::CaseInsensitive));
    });
    auto *buttons = new QDialogButtonBox(
        QDialogButtonBox::Ok | QDialogButtonBox::Cancel | QDialogButtonBox::Reset, &dialog);
    connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    connect(buttons->button(QDialogButtonBox::Reset), &QPushButton::clicked, &dialog, [&dialog, this] {
        setChosenParams({});  // the sweep's own params again
        dialog.reject();
    });
    layout->addWidget(buttons);
    if (dialog.exec() != QDialog::Accepted)
        return;
    QStringList next;
    for (int i = 0; i < list->count(); ++i)
        if (list->item(i)->checkState() == Qt::Checked)
            next.push_back(list->item(i)->text());
    setChosenParams(next);
}

void ParallelCoordinates::contextMenuEvent(QContextMenuEvent *e)
{
    QMenu menu(this);
    const int axis = axisNear(e->pos().x());
    const int params = int(m_axes.axes.size()) - (m_plan.metric.isEmpty() ? 0 : 1);
    if (axis >= 0 && axis < params) {
        menu.addAction(tr("Move left"), this, [this, axis] { moveAxis(axis, axis - 1); })
            ->setEnabled(axis > 0);
        menu.addAction(tr("Move right"), this, [this, axis] { moveAxis(axis, axis + 1); })
            ->setEnabled(axis + 1 < params);
        menu.addAction(tr("Remove axis"), this, [this, axis] {
            QStringList keys = this->params();
            keys.removeAt(axis);
            setChosenParams(keys.isEmpty() ? QStringList{} : keys);
        });
        menu.addSeparator();
    }
    menu.addAction(tr("Choose axes…"), this, &ParallelCoordinates::chooseAxes);
    menu.exec(e->globalPos());
}

QColor ParallelCoordinates::metricColor(double position) const
{
    // Viridis' ends and middle: dark blue (worst) → teal → yellow (best), legible on light and
    // dark palettes and for the common colour-vision deficiencies.
    const double t = std::clamp(m_plan.higherIsBetter ? position : 1.0 - position, 0.0, 1.0);
    static const QColor stops[] = {QColor(68, 1, 84), QColor(33, 145, 140), QColor(253, 231, 37)};
    const int i = t < 0.5 ? 0 : 1;
    const double u = t < 0.5 ? t * 2 : (t - 0.5) * 2;
    const QColor &a = stops[i], &b = stops[i + 1];
    return QColor(int(a.red() + (b.red() - a.red()) * u), int(a.green() + (b.green() - a.green()) * u),
                  int(a.blue() + (b.blue() - a.blue()) * u));
}

void ParallelCoordinates::rebuild()
{
    const QStringList keys = params();
    ParallelAxes next = ParallelAxes::build(m_runs, keys, m_plan.log, m_plan.metric);
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
    return kMarginX + (width() - 2 * kMarginX - kLegend) * axis / (n - 1);
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

// The runs' segments by colour step and pass, and how each pass is drawn.
struct ParallelCoordinates::LineBatches {
    using Steps = std::vector<QVector<QLine>>;
    // [pass][step]: pass 0 the runs not selected, 1 the selection; step kSteps holds the runs
    // without the metric (or, with no metric axis, none).
    std::array<Steps, 2> segments{Steps(kSteps + 1), Steps(kSteps + 1)};
    QList<const ParallelAxes::Line *> ownColour;  // no metric axis: each run in its own colour
    QSet<core::RunId> highlighted;
    QList<int> xs;  // each axis' x
    bool partial = false;  // some runs are selected, not all: the others faint
    bool fewSelected = false;  // at most 50 selected: antialiased, and wider where partial
    bool many = false;  // more than 50 runs: the others without antialiasing
    bool smooth(bool selected) const { return selected ? fewSelected : !many; }
};

ParallelCoordinates::LineBatches ParallelCoordinates::batchLines(qsizetype metricAxis) const
{
    LineBatches b;
    b.highlighted = QSet<core::RunId>(m_highlighted.begin(), m_highlighted.end());
    b.partial = !b.highlighted.isEmpty() && b.highlighted.size() < m_axes.lines.size();
    b.fewSelected = b.highlighted.size() <= 50;
    b.many = m_axes.lines.size() > 50;
    for (int i = 0; i < m_axes.axes.size(); ++i)
        b.xs.push_back(axisX(i));
    const std::pair<double, double> scale = scaleRange();  // the leading sweep's runs' extent
    for (const ParallelAxes::Line &l : std::as_const(m_axes.lines)) {
        if (metricAxis < 0) {
            b.ownColour.push_back(&l);
            continue;
        }
        const auto pos = l.positions.value(metricAxis);
        const int step = !pos ? kSteps : std::clamp(int(colourOf(*pos, scale) * kSteps), 0, kSteps - 1);
        QVector<QLine> &out = b.segments[b.highlighted.contains(l.run) ? 1 : 0][size_t(step)];
        // A run without a value on an axis (another sweep's param) goes straight on to the next
        // axis it has one on: dropping its segments dropped the run.
        qsizetype last = -1;
        for (qsizetype i = 0; i < l.positions.size(); ++i) {
            if (!l.positions[i])
                continue;
            if (last >= 0)
                out.push_back(
                    QLine(b.xs[last], positionY(*l.positions[last]), b.xs[i], positionY(*l.positions[i])));
            last = i;
        }
    }
    return b;
}

// One pass' batched segments, step by step, worst first; 1 px lines drawn without antialiasing
// go through an image (rasterLines), which lies under the lines drawn after them.
void ParallelCoordinates::paintSteps(QPainter &p, const LineBatches &b, bool selected) const
{
    const bool smooth = b.smooth(selected);
    const qreal dpr = devicePixelRatioF();
    QImage layer;  // many runs: their 1 px lines rastered here, then drawn in one go
    for (int step = 0; step <= kSteps; ++step) {
        const QVector<QLine> &segments = b.segments[selected ? 1 : 0][size_t(step)];
        if (segments.isEmpty())
            continue;
        const double good = (step + 0.5) / kSteps;
        QColor c = step == kSteps ? palette().color(QPalette::PlaceholderText)
                                  : metricColor(m_plan.higherIsBetter ? good : 1.0 - good);
        if (!selected && b.partial)
            c.setAlpha(50);
        const bool wide = selected && b.partial && b.fewSelected;
        if (!smooth && !wide) {
            if (layer.isNull()) {
                layer = QImage(size() * dpr, QImage::Format_ARGB32_Premultiplied);
                layer.fill(Qt::transparent);
            }
            rasterLines(layer, segments, c, dpr);
            continue;
        }
        drawLayer(p, layer, dpr);  // what is rastered so far lies under these
        p.setPen(QPen(c, wide ? 2.0 : 0.0));  // 0: a cosmetic 1 px pen
        p.drawLines(segments);
    }
    drawLayer(p, layer, dpr);
}

// One pass' runs in their own colours, a polyline per stretch of axes they have values on.
void ParallelCoordinates::paintOwnColour(QPainter &p, const LineBatches &b, bool selected) const
{
    QPolygonF segment;
    for (const ParallelAxes::Line *l : std::as_const(b.ownColour)) {
        if (b.highlighted.contains(l->run) != selected)
            continue;
        QColor c = runColor(l->run);
        if (!selected && b.partial)
            c.setAlpha(50);
        p.setPen(QPen(c, selected && b.partial && b.fewSelected ? 2.0 : 0.0));
        segment.clear();
        for (int i = 0; i <= l->positions.size(); ++i) {
            if (i < l->positions.size() && l->positions[i]) {
                segment.push_back(QPointF(b.xs[i], positionY(*l->positions[i])));
                continue;
            }
            if (segment.size() > 1)
                p.drawPolyline(segment);
            segment.clear();
        }
    }
}

// The legend: the scale beside the metric's axis, its best end named.
void ParallelCoordinates::paintColourScale(QPainter &p) const
{
    const int x = width() - kLegend + 8, top = positionY(1), bottom = positionY(0);
    QLinearGradient g(0, bottom, 0, top);
    for (double t : {0.0, 0.5, 1.0})
        g.setColorAt(t, metricColor(t));
    p.fillRect(QRect(x, top, 10, bottom - top), g);
    p.setPen(palette().color(QPalette::Text));
    p.drawText(QRect(x - 14, m_plan.higherIsBetter ? top - 16 : bottom + 2, 40, 14), Qt::AlignCenter,
               tr("best"));
}

// Each axis: its line, its title (and what it has no place for), its ends' values, its brush.
void ParallelCoordinates::paintAxes(QPainter &p) const
{
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
        if (const QString off = offAxisText(a); !off.isEmpty()) {
            p.setPen(palette().color(QPalette::PlaceholderText));
            p.drawText(QRect(x - kMarginX, positionY(0) + 4, 2 * kMarginX, 14), Qt::AlignCenter, off);
            p.setPen(fg);
        }
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
    const qsizetype metricAxis = !m_plan.metric.isEmpty() && !m_axes.axes.isEmpty() &&
            m_axes.axes.back().key == QStringLiteral("metrics.") + m_plan.metric
        ? m_axes.axes.size() - 1
        : -1;
    // Colour = the metric on a scale whose best end is bright, in 32 steps: the segments of each
    // step go to QPainter in one drawLines call (a pen and a call per run made 5,000 runs cost
    // ~300 ms a paint; batched, a few ms). Steps drawn worst first, so the best runs lie on top;
    // unselected runs first and faint, the selection on top (wider when it is a few runs).
    // Antialiasing only for a few lines: QPainter's raster path for antialiased or wide strokes
    // made 100 lines cost 50 ms a paint, and the view repaints on every refresh.
    const LineBatches batches = batchLines(metricAxis);
    for (const bool selected : {false, true}) {
        p.setRenderHint(QPainter::Antialiasing, batches.smooth(selected));
        paintSteps(p, batches, selected);
        paintOwnColour(p, batches, selected);
    }
    if (metricAxis >= 0)
        paintColourScale(p);
    p.setRenderHint(QPainter::Antialiasing);
    paintAxes(p);
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
    m_emitting = true;
    Q_EMIT brushed(m_brushes.isEmpty() ? QList<core::RunId>{} : m_axes.inside(m_brushes));
    m_emitting = false;
}

}  // namespace orrery::gui
