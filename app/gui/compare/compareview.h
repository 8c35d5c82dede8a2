// SPDX-License-Identifier: GPL-3.0-or-later
//
// The Compare tab (UX.md): metric charts (QCustomPlot) in a grid of panels grouped by the metric's
// prefix (train/, eval/, perf/, system/, the rest), all on one x range — step, wall time or time
// since start — with aligned axes; one curve per selected run in its colour, a legend (the
// baseline run first, ★) and a hover highlight across every chart; log y; EMA smoothing with
// the raw curve faint; a min/max envelope where the store downsampled; group by a param → mean ±
// std band where the group's runs overlap. Charts nobody zoomed follow the data as it grows. Every
// zoom or pan re-queries the store for the visible range at the chart's pixel width (off the UI
// thread, at most ~30 times a second), so a one-step spike is visible at every zoom. Below:
// parallel coordinates (brushing selects runs everywhere), a param-vs-metric scatter, and the
// table of params that differ between the selected runs.
#pragma once

#include "orrery/core/curves.h"
#include "orrery/core/historycache.h"
#include "orrery/core/store.h"

#include <QElapsedTimer>
#include <QHash>
#include <QMap>
#include <QPointer>
#include <QTimer>
#include <QWidget>

#include <memory>

class QCheckBox;
class QComboBox;
class QCustomPlot;
class QCPGraph;
class QGridLayout;
class QLabel;
class QLineEdit;
class QStackedWidget;
class QSlider;
class QStandardItemModel;
class QTableView;
class QTabWidget;
class QToolButton;
class QVBoxLayout;

namespace orrery::gui {

class ChartLegend;
class ImportanceView;
class ParallelCoordinates;
class RunSelection;
class RunsTableModel;
class StoreReader;

class CompareView : public QWidget {
    Q_OBJECT
public:
    CompareView(StoreReader *reader, RunSelection *selection, RunsTableModel *runs,
                QWidget *parent = nullptr);
    ~CompareView() override;

    // What is charted (tests and the window's state). The metrics are the ones chosen in the
    // Metrics menu (setMetrics), else those the search picks (setMetricFilter), else the default:
    // the leading sweep's metric first, then eval/loss and train/loss, of the metrics the
    // selected runs have logged (so a metric appears once it has data).
    void setMetrics(const QStringList &keys);
    // A substring of the metric names, or a /regular expression/; empty: the default metrics.
    void setMetricFilter(const QString &pattern);
    QString metricFilter() const { return m_metricFilter; }
    QStringList metrics() const { return m_metrics; }
    // The user's choice of metrics as it is kept between sessions (the window saves it per
    // database): the menu's metrics, or a search; both empty: the default metrics.
    struct MetricChoiceState {
        QStringList chosen;
        QString filter;
    };
    MetricChoiceState metricChoice() const;
    void setMetricChoice(const MetricChoiceState &state);
    void setXAxis(core::XAxis axis);  // also ends charting against a metric
    // Charts every metric against `key` instead of step or time (a parametric chart: eval/loss
    // against GPU-hours or tokens; core::pairByStep). A zoom then replots the points read (the
    // store's range queries are by step); empty: back to the step/time axis.
    void setXMetric(const QString &key);
    QString xMetric() const { return m_xMetric; }
    // On (the default): y spans what the visible x range shows, on every zoom and pan; off: the
    // whole history's values, so a zoom does not move y.
    void setFitYToView(bool on);
    bool fitYToView() const { return m_fitY; }
    void setLogY(bool on);
    void setSmoothing(double weight);  // 0 .. 0.99
    void setGroupBy(const QString &param);  // empty: one curve per run
    void setShowAllParams(bool on);

    QList<QCustomPlot *> charts() const { return m_charts; }
    // The panel group of a metric: its prefix with the slash ("train/"), or "" for none.
    static QString metricGroup(const QString &key);
    // The group headings over the panels, in order (tests).
    QStringList chartGroups() const;
    ChartLegend *legend() const { return m_legend; }
    QLabel *groupLegend() const { return m_groupLegend; }  // grouped: each band's colour and group
    // What Compare says instead of charts (nothing selected, nothing logged); empty while charts show.
    QString emptyMessage() const;
    // The smoothing slider's value as shown beside it.
    QString smoothingText() const;
    // Whether the charts follow the data: true until the user zooms or pans, again after a
    // double-click (resetZoom) or a new selection.
    bool following() const { return m_following; }
    // Emphasises `run` in every chart and dims the others (0: every run as drawn); hovering a
    // curve or a legend entry does this.
    void setHighlightedRun(core::RunId run);
    core::RunId highlightedRun() const { return m_highlight; }
    ParallelCoordinates *parallelCoordinates() const { return m_parallel; }
    ImportanceView *importanceView() const { return m_importance; }
    QComboBox *scatterParam() const { return m_scatterParam; }
    QCustomPlot *scatter() const { return m_scatter; }
    QStandardItemModel *diffModel() const { return m_diff; }
    // The x range every chart shows; setting it re-queries like a pan or zoom does.
    void setXRange(double lo, double hi);
    // Back to the whole history (double-click does this).
    void resetZoom();
    // The value and source points a chart curve of `run` holds now (tests).
    QList<std::pair<double, double>> curve(int chart, core::RunId run) const;
    QList<std::pair<double, double>> band(int chart, const QString &group,
                                          int which) const;  // 0 mean, 1 lo, 2 hi
    // Renders the charts into one image/vector file (by suffix: png, svg, pdf).
    bool exportCharts(const QString &path, QString *error = nullptr);
    // How many re-queries have come back (benchmarks and tests wait on it).
    int completedQueries() const { return m_completed; }
    // Off: a zoom or pan only redraws the data already fetched (what W&B and MLflow do; the
    // benchmark's baseline). On by default.
    void setRequeryOnZoom(bool on) { m_requeryOnZoom = on; }

    // The newest snapshot's metric keys (for the metric chooser; the first one charts by default).
    void setMetricKeys(const QStringList &keys);
    // The table's runs changed (live refresh): re-read the histories of the selection. While the
    // tab is hidden this only marks it stale; it reads when next shown.
    void refresh();

Q_SIGNALS:
    void queried();  // a re-query's result was drawn
    void metricChoiceChanged();  // the Metrics menu or the search changed what is charted

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;  // the pointer left a chart
    void showEvent(QShowEvent *event) override;  // a refresh that waited while hidden

private:
    // The constructor's parts.
    QWidget *buildChartControls();
    QWidget *buildGroupControls();
    void connectControls();
    QWidget *buildChartArea();
    QWidget *buildBelow();
    struct Curve;
    enum class MetricChoice { Default, Search, Chosen };
    void rebuildCharts();
    void layoutCharts();
    void alignMargins(QCustomPlot *plot);
    void applyMetricChoice(bool force);
    QStringList defaultMetrics() const;
    QStringList searchedMetrics(bool *valid) const;
    QStringList groupedByPrefix(const QStringList &keys) const;
    QList<core::RunId> chartedRuns() const;
    void updateLegendAndEmpty();
    void styleGraph(QCPGraph *g, core::RunId run, const QColor &colour, double width);
    void applyHighlight(QCustomPlot *plot);
    void hoverCurve(QCustomPlot *plot, const QPoint &pos);
    void setFullXRange(QCustomPlot *plot);
    void selectionChanged(const QObject *source);
    void scheduleQuery();
    void query(bool fullRange);
    void draw(int chart, const QList<std::pair<core::RunId, core::MetricHistory>> &histories, bool rescale);
    void fitY(int chart, bool whole);
    std::vector<core::CurvePoint> curvePoints(int chart, core::RunId run, const core::MetricHistory &h) const;
    void xRangeChanged(QCustomPlot *source);
    void showHover(QCustomPlot *plot, const QPoint &pos);
    void updateBottom();
    double toX(const core::MetricPoint &p, qint64 origin) const;

    StoreReader *m_reader;
    RunSelection *m_selection;
    RunsTableModel *m_runs;
    QStringList m_metrics, m_metricKeys;
    core::XAxis m_axis = core::XAxis::Step;
    QString m_xMetric;  // non-empty: x is this metric's value at each point's step
    bool m_fitY = true;
    bool m_logY = false;
    double m_smoothing = 0;
    QString m_groupBy;
    bool m_showAll = false;

    QToolButton *m_metricButton = nullptr;
    QToolButton *m_exportButton = nullptr;
    QComboBox *m_axisBox = nullptr;
    QComboBox *m_groupBox = nullptr;
    QCheckBox *m_logBox = nullptr;
    QCheckBox *m_fitYBox = nullptr;
    QSlider *m_smoothSlider = nullptr;
    QLabel *m_smoothLabel = nullptr;
    QLineEdit *m_metricSearch = nullptr;
    QTimer m_searchTimer;  // a search rebuilds the charts: once typing pauses, not per key
    QStackedWidget *m_chartStack = nullptr;  // the panels, or what to do when there is nothing
    QLabel *m_emptyLabel = nullptr;
    ChartLegend *m_legend = nullptr;
    QLabel *m_groupLegend = nullptr;
    QGridLayout *m_chartGrid = nullptr;
    QList<QLabel *> m_groupLabels;
    QList<QCustomPlot *> m_charts;
    MetricChoice m_metricChoice = MetricChoice::Default;
    QString m_metricFilter;
    bool m_following = true;
    core::RunId m_highlight = 0;
    int m_leftMargin = 0, m_rightMargin = 0;  // every panel's, so their x ticks line up
    QHash<int, QList<std::pair<core::RunId, core::MetricHistory>>> m_data;  // per chart
    QHash<int, QHash<core::RunId, core::MetricHistory>> m_xData;  // per chart: the x metric's histories
    QMap<int, std::pair<double, double>> m_fullY;  // per chart: y over the whole history as last read in full
    QMap<int, std::pair<double, double>> m_fullX;  // per chart: its data's x extent at the last full query
    QTabWidget *m_below = nullptr;  // parallel coordinates, scatter, differences
    ParallelCoordinates *m_parallel = nullptr;
    QComboBox *m_scatterParam = nullptr;
    QCustomPlot *m_scatter = nullptr;
    ImportanceView *m_importance = nullptr;
    QStandardItemModel *m_diff = nullptr;
    QTableView *m_diffView = nullptr;
    QCheckBox *m_showAllBox = nullptr;

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
    bool m_stale = false;  // a refresh came while hidden
    bool m_syncing = false;
    quint64 m_generation = 0;
    int m_completed = 0;
};

}  // namespace orrery::gui
