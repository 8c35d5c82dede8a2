// SPDX-License-Identifier: GPL-3.0-or-later
//
// How one Compare chart shows the store's answer for its metric: per run a curve in the run's
// colour (faint under its EMA when smoothing, dots where it has few points) and the min/max
// envelope where the store downsampled; per group of runs (group by a param) a mean ± std band
// where all of the group's runs have points; then y fitted to what the chart shows and the hovered
// run emphasised. The chart area owns the painter; the options it draws by are the view's, which
// outlives it. Remembers each chart's y extent over its whole history (fitY). UI thread only.
#pragma once

#include "orrery/core/store.h"

#include <QHash>
#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>

#include <utility>

class QCustomPlot;

namespace orrery::gui {

class RunsTableModel;

// What the charts show, as the Compare tab's controls set it.
struct ChartOptions {
    core::XAxis axis = core::XAxis::Step;
    QString xMetric;  // non-empty: x is this metric's value at each point's step
    bool fitY = true;  // y spans what the visible x range shows; off: the whole history
    bool logY = false;
    double smoothing = 0;  // the EMA weight, 0 .. 0.99; 0: off
    QString groupBy;  // empty: one curve per run
};

// One chart's answer: each charted run's history of the chart's metric.
using ChartHistories = QList<std::pair<core::RunId, core::MetricHistory>>;

class ChartPainter {
public:
    // The margin around the data's extent, as a share of it each side: the last eval point is a
    // whole dot (5 px) inside the axis, not a half-dot on its edge.
    static constexpr double kPad = 0.03;

    ChartPainter(const ChartOptions &options, const RunsTableModel *runs);

    // Draws `histories` into `plot`, reusing its graphs in order (a pan frame of 20 curves then
    // allocates nothing); `xHistories`: each run's x metric for a parametric chart. `rescale`: the
    // whole history was read, so a band spans where its runs overlap, not only the visible range.
    // Returns the group legend's entries (HTML): each band's colour and what it is the mean of.
    QStringList draw(QCustomPlot *plot, const ChartHistories &histories,
                     const QHash<core::RunId, core::MetricHistory> &xHistories, bool rescale);
    // y over what the visible x range shows (Fit y, the default), else over the whole history as
    // last read in full (`wholeData`: the chart holds that history now, so it is measured here).
    void fitY(QCustomPlot *plot, int chart, bool wholeData);
    void forgetFullY() { m_fullY.clear(); }
    // Emphasises the graphs of the run `highlight` in `plot` and dims the others (0: every run as
    // drawn).
    static void applyHighlight(QCustomPlot *plot, core::RunId highlight);

private:
    const ChartOptions &m_options;
    const RunsTableModel *m_runs;
    QMap<int, std::pair<double, double>> m_fullY;  // per chart: y over the whole history as last read in full
};

}  // namespace orrery::gui
