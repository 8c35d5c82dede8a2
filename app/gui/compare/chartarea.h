// SPDX-License-Identifier: GPL-3.0-or-later
//
// The Compare tab's charts, the upper part of CompareView: the legend of the charted runs (the
// baseline run first) over a grid of panels, one QCustomPlot per metric under its group's heading,
// all on one x range with aligned axes, or what to do when there is nothing to chart. Hovering a
// curve or a legend entry emphasises that run in every panel. Charts nobody zoomed follow the data
// as it grows; every zoom or pan re-queries the store for the visible range at each panel's pixel
// width (off the UI thread, at most one query a frame and one in flight), and ChartPainter draws
// the answers. CompareView owns it and the options it draws by; its widgets are the view's
// children. UI thread only.
#pragma once

#include "chartpainter.h"

#include "orrery/core/historycache.h"
#include "orrery/core/store.h"

#include <QElapsedTimer>
#include <QHash>
#include <QList>
#include <QMap>
#include <QObject>
#include <QTimer>

#include <memory>

class QCustomPlot;
class QGridLayout;
class QLabel;
class QStackedWidget;
class QWidget;

namespace orrery::gui {

class ChartLegend;
class RunSelection;
class RunsTableModel;
class StoreReader;

// The panel group of a metric: its prefix with the slash ("train/"), or "" for none.
QString metricGroup(const QString &key);

class ChartArea : public QObject {
    Q_OBJECT
public:
    ChartArea(StoreReader *reader, RunSelection *selection, RunsTableModel *runs, const ChartOptions &options,
              QWidget *view);
    ~ChartArea() override;

    // The legend, then the panels (or what to do when there is nothing to chart), in the view.
    QWidget *build();
    // New panels, one per metric, each following its whole history until a zoom (query them next).
    void rebuild(const QStringList &metrics);
    // The legend of the charted runs, or what Compare says instead of charts: that nothing is
    // selected, else `noMetrics` where there are runs but no panel.
    void updateLegendAndEmpty(const QString &noMetrics);
    // Reads every panel's metric for the charted runs: the whole history (`fullRange`), else the
    // visible range; each answer is drawn as it comes (queried()).
    void query(bool fullRange);
    // A new selection: it starts from its own data's range, no run emphasised, the panels'
    // margins as its tick labels need.
    void startOver();
    void setHighlightedRun(core::RunId run);
    void setXRange(double lo, double hi);  // re-queries like a pan or zoom does
    void resetZoom();  // back to the whole history (double-click does this)
    // The view's options changed: log y (the axes' scales too), fit y, or what is drawn
    // (smoothing, grouping: every panel again from the data it holds).
    void applyLogY();
    void applyFitY();
    void redraw();

    QList<QCustomPlot *> charts() const { return m_charts; }
    QStringList chartGroups() const;  // the group headings over the panels, in order
    ChartLegend *legend() const { return m_legend; }
    QLabel *groupLegend() const { return m_groupLegend; }
    QString emptyMessage() const;  // empty while charts show
    bool following() const { return m_following; }
    core::RunId highlightedRun() const { return m_highlight; }
    int completedQueries() const { return m_completed; }
    void setRequeryOnZoom(bool on) { m_requeryOnZoom = on; }
    QList<std::pair<double, double>> curve(int chart, core::RunId run) const;
    QList<std::pair<double, double>> band(int chart, const QString &group, int which) const;
    bool exportCharts(const QString &path, QString *error);

Q_SIGNALS:
    void queried();  // a re-query's result was drawn

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;  // the pointer left a chart

private:
    QCustomPlot *addChart(const QString &key);
    void connectChart(QCustomPlot *plot);
    void layoutCharts();
    void alignMargins(QCustomPlot *plot);
    void xRangeChanged(QCustomPlot *source);
    void scheduleQuery();
    void draw(int chart, const ChartHistories &histories, bool rescale);
    void followData(int chart, QCustomPlot *plot);

    StoreReader *m_reader;
    RunSelection *m_selection;
    RunsTableModel *m_runs;
    const ChartOptions &m_options;  // the view's
    QWidget *m_view;  // the widgets' parent, whose palette the panels take
    ChartPainter m_painter;
    QStringList m_keys;  // the panels' metrics, in order

    QStackedWidget *m_chartStack = nullptr;  // the panels, or what to do when there is nothing
    QLabel *m_emptyLabel = nullptr;
    ChartLegend *m_legend = nullptr;
    QLabel *m_groupLegend = nullptr;  // grouped: each band's colour and group
    QGridLayout *m_chartGrid = nullptr;
    QList<QLabel *> m_groupLabels;
    QList<QCustomPlot *> m_charts;
    bool m_following = true;
    core::RunId m_highlight = 0;
    int m_leftMargin = 0, m_rightMargin = 0;  // every panel's, so their x ticks line up
    QHash<int, ChartHistories> m_data;  // per chart
    QHash<int, QHash<core::RunId, core::MetricHistory>> m_xData;  // per chart: the x metric's histories
    QMap<int, std::pair<double, double>> m_fullX;  // per chart: its data's x extent at the last full query

    // Used on the reader thread only (every read runs there, one at a time); shared so a read in
    // flight keeps it alive after this view is gone.
    std::shared_ptr<core::HistoryCache> m_histories = std::make_shared<core::HistoryCache>();
    static constexpr int kMinQueryIntervalMs = 16;  // one display frame (scheduleQuery)
    QTimer m_queryTimer;  // coalesces range changes: at most one query per frame, one in flight
    QTimer m_settleTimer;  // a zoom or pan has rested: antialiased again
    bool m_interacting = false;
    QElapsedTimer m_sinceQuery;
    int m_inFlight = 0;  // charts whose answer to the latest query has not come back
    bool m_queryPending = false;
    bool m_requeryOnZoom = true;
    bool m_syncing = false;
    quint64 m_generation = 0;
    int m_completed = 0;
};

}  // namespace orrery::gui
