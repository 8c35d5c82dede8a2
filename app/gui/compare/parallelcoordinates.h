// SPDX-License-Identifier: GPL-3.0-or-later
//
// Parallel coordinates: one vertical axis per param of the plan (the sweep's swept params, or the
// user's choice for that sweep, kept in the settings file), then the sweep's metric; one polyline
// per run coloured by its metric on a scale whose best end (by the sweep's goal) is bright, the
// selection drawn on top and wider. An axis is linear, logarithmic (a log-distributed param, or
// positive numbers spanning more than two decades) or categorical (any text). Dragging along an
// axis brushes a range; the runs inside every brush become the selection everywhere (brushed() →
// RunSelection). A click on an axis clears its brush; the right button moves or removes an axis
// and opens the chooser of every param.
#pragma once

#include "orrery/core/store.h"

#include <QHash>
#include <QList>
#include <QMap>
#include <QSet>
#include <QWidget>

#include <optional>

class QPainter;

namespace orrery::gui {

// The axes and the runs' positions on them (0 = bottom, 1 = top), without any painting: what
// the widget draws and what a brush tests.
struct ParallelAxes {
    struct Axis {
        QString key;  // "params.<key>" or "metrics.<key>"
        QString label;
        enum class Kind { Linear, Log, Categorical } kind = Kind::Linear;
        double lo = 0, hi = 1;  // numeric range (log: of log10)
        QStringList categories;  // categorical: in order, bottom to top
        // Runs with no place on it: without the param (another sweep's runs), or a value that
        // is not a number on a numeric axis ("oops" among learning rates). Said under its title.
        int missing = 0, notNumbers = 0;
        // Where a raw value sits on the axis, or nullopt when the run has none.
        std::optional<double> position(const QString &value) const;
        QString labelAt(double position) const;
    };
    struct Line {
        core::RunId run = 0;
        QList<std::optional<double>> positions;  // one per axis
    };
    QList<Axis> axes;
    QList<Line> lines;

    // `params` in order (those in `logParams` on a log axis where their values are positive),
    // then `metric` (latest values).
    static ParallelAxes build(const QList<core::RunRow> &runs, const QStringList &params,
                              const QSet<QString> &logParams, const QString &metric);
    // Runs whose position on every brushed axis lies inside its brush [lo, hi].
    QList<core::RunId> inside(const QMap<int, std::pair<double, double>> &brushes) const;
};

// Which axes to show, as the Compare view decides them from the selection's sweep.
struct ParallelPlan {
    QString scope;  // the leading sweep's name: the user's axis choice is kept under it
    QStringList defaults;  // the swept params (else up to 10 params that differ)
    QStringList available;  // every param, for the chooser
    QSet<QString> log;  // params read on a log axis (core::SweptParam::log)
    QString metric;
    bool higherIsBetter = false;  // the metric's goal: which end of the colour scale is best
    // The runs the colour scale spans (the leading sweep's): its best run is the brightest even
    // beside another sweep's better runs, which take the scale's end. Empty: every run.
    QSet<core::RunId> scaleRuns;
};

class ParallelCoordinates : public QWidget {
    Q_OBJECT
public:
    explicit ParallelCoordinates(QWidget *parent = nullptr);

    void setRuns(const QList<core::RunRow> &runs, const ParallelPlan &plan);
    const ParallelPlan &plan() const { return m_plan; }
    // The params on the axes now: the user's choice for the plan's scope, else its defaults.
    QStringList params() const;
    // The user's choice (saved under the scope in the settings file; empty: back to the defaults).
    void setChosenParams(const QStringList &params);
    void moveAxis(int from, int to);
    // The searchable list of every param (a dialog); tests drive setChosenParams instead.
    void chooseAxes();
    // The colour of a metric position (0 bottom .. 1 top) on the scale: best end bright.
    QColor metricColor(double position) const;
    // Where a run's line sits on the colour scale, 0 (worst) .. 1 (best): its metric within the
    // range of the plan's scaleRuns; nullopt without the metric.
    std::optional<double> colourPosition(core::RunId run) const;
    void setHighlighted(const QList<core::RunId> &runs);
    const ParallelAxes &axes() const { return m_axes; }
    const QMap<int, std::pair<double, double>> &brushes() const { return m_brushes; }

    // Geometry, for tests and painting: the x of axis i and the y of position p (0..1).
    int axisX(int axis) const;
    int positionY(double position) const;
    // What an axis says under it of the runs it has no place for ("3 runs without it · 1 not a
    // number"); empty when every run is on it.
    static QString offAxisText(const ParallelAxes::Axis &axis);

Q_SIGNALS:
    void brushed(const QList<core::RunId> &runs);

protected:
    void paintEvent(QPaintEvent *) override;
    void mousePressEvent(QMouseEvent *) override;
    void mouseMoveEvent(QMouseEvent *) override;
    void mouseReleaseEvent(QMouseEvent *) override;
    void contextMenuEvent(QContextMenuEvent *) override;
    QSize sizeHint() const override { return {600, 260}; }

private:
    double positionAt(int y) const;
    // The colour scale: the plan's scaleRuns' extent on the metric axis, and a position on it.
    std::pair<double, double> scaleRange() const;
    double colourOf(double position, std::pair<double, double> range) const;
    int axisNear(int x) const;

    void rebuild();

    // Painting: the runs' lines batched by colour step (the selection in a pass of its own, on
    // top), the colour scale, the axes.
    struct LineBatches;
    LineBatches batchLines(qsizetype metricAxis) const;
    void paintSteps(QPainter &p, const LineBatches &b, bool selected) const;
    void paintOwnColour(QPainter &p, const LineBatches &b, bool selected) const;
    void paintColourScale(QPainter &p) const;
    void paintAxes(QPainter &p) const;

    QList<core::RunRow> m_runs;
    ParallelPlan m_plan;
    // The axes chosen per sweep (scope), as the settings file holds them: read once per scope,
    // not on every live refresh; empty: the sweep's own params.
    mutable QHash<QString, QStringList> m_chosen;
    ParallelAxes m_axes;
    QList<core::RunId> m_highlighted;
    QMap<int, std::pair<double, double>> m_brushes;
    int m_dragAxis = -1;
    double m_dragFrom = 0;
    bool m_dragMoved = false;
    bool m_emitting = false;  // brushed() is out: the selection it makes keeps these axes
};

}  // namespace orrery::gui
