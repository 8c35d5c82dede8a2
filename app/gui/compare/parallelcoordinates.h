// SPDX-License-Identifier: GPL-3.0-or-later
//
// Parallel coordinates: one vertical axis per param that differs between the runs, then the
// chosen metric; one polyline per run in its colour. An axis is linear, logarithmic (positive
// numbers spanning more than two decades, e.g. a learning rate) or categorical (any text).
// Dragging along an axis brushes a range; the runs inside every brush become the selection
// everywhere (brushed() → RunSelection). A click on an axis clears its brush.
#pragma once

#include "orrery/core/store.h"

#include <QList>
#include <QMap>
#include <QWidget>

#include <optional>

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

    // Params that differ among `runs`, then `metric` (latest values).
    static ParallelAxes build(const QList<core::RunRow> &runs, const QString &metric);
    // Runs whose position on every brushed axis lies inside its brush [lo, hi].
    QList<core::RunId> inside(const QMap<int, std::pair<double, double>> &brushes) const;
};

class ParallelCoordinates : public QWidget {
    Q_OBJECT
public:
    explicit ParallelCoordinates(QWidget *parent = nullptr);

    void setRuns(const QList<core::RunRow> &runs, const QString &metric);
    void setHighlighted(const QList<core::RunId> &runs);
    const ParallelAxes &axes() const { return m_axes; }
    const QMap<int, std::pair<double, double>> &brushes() const { return m_brushes; }

    // Geometry, for tests and painting: the x of axis i and the y of position p (0..1).
    int axisX(int axis) const;
    int positionY(double position) const;

Q_SIGNALS:
    void brushed(const QList<core::RunId> &runs);

protected:
    void paintEvent(QPaintEvent *) override;
    void mousePressEvent(QMouseEvent *) override;
    void mouseMoveEvent(QMouseEvent *) override;
    void mouseReleaseEvent(QMouseEvent *) override;
    QSize sizeHint() const override { return {600, 260}; }

private:
    double positionAt(int y) const;
    int axisNear(int x) const;

    ParallelAxes m_axes;
    QList<core::RunId> m_highlighted;
    QMap<int, std::pair<double, double>> m_brushes;
    int m_dragAxis = -1;
    double m_dragFrom = 0;
    bool m_dragMoved = false;
};

}  // namespace orrery::gui
