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

#include "chartpainter.h"
#include "comparebar.h"

#include "orrery/core/store.h"

#include <QWidget>

#include <memory>

class QComboBox;
class QCustomPlot;
class QLabel;
class QStandardItemModel;

namespace orrery::gui {

class ChartArea;
class ChartLegend;
class ComparisonTabs;
class ImportanceView;
class ParallelCoordinates;
class RunSelection;
class RunsTableModel;
class StoreReader;

// The view decides what is charted (the metric choice, x, the options) and keeps its parts in
// step: the bar (CompareBar), the charts (ChartArea, drawn by ChartPainter) and the tabs below
// them (ComparisonTabs).
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
    QString xMetric() const { return m_options.xMetric; }
    // On (the default): y spans what the visible x range shows, on every zoom and pan; off: the
    // whole history's values, so a zoom does not move y.
    void setFitYToView(bool on);
    bool fitYToView() const { return m_options.fitY; }
    void setLogY(bool on);
    void setSmoothing(double weight);  // 0 .. 0.99
    void setGroupBy(const QString &param);  // empty: one curve per run

    QList<QCustomPlot *> charts() const;
    // The group headings over the panels, in order (tests); a panel's group is metricGroup().
    QStringList chartGroups() const;
    ChartLegend *legend() const;
    QLabel *groupLegend() const;  // grouped: each band's colour and group
    // What Compare says instead of charts (nothing selected, nothing logged); empty while charts show.
    QString emptyMessage() const;
    // The smoothing slider's value as shown beside it.
    QString smoothingText() const;
    // Whether the charts follow the data: true until the user zooms or pans, again after a
    // double-click or a new selection.
    bool following() const;
    // The run emphasised in every chart, dimming the others (0: every run as drawn); hovering a
    // curve or a legend entry sets it.
    core::RunId highlightedRun() const;
    ParallelCoordinates *parallelCoordinates() const;
    ImportanceView *importanceView() const;
    QComboBox *scatterParam() const;
    QCustomPlot *scatter() const;
    QStandardItemModel *diffModel() const;
    // The x range every chart shows; setting it re-queries like a pan or zoom does.
    void setXRange(double lo, double hi);
    // The value and source points a chart curve of `run` holds now (tests).
    QList<std::pair<double, double>> curve(int chart, core::RunId run) const;
    QList<std::pair<double, double>> band(int chart, const QString &group,
                                          int which) const;  // 0 mean, 1 lo, 2 hi
    // Renders the charts into one image/vector file (by suffix: png, svg, pdf).
    bool exportCharts(const QString &path, QString *error = nullptr);
    // How many re-queries have come back (benchmarks and tests wait on it).
    int completedQueries() const;
    // Off: a zoom or pan only redraws the data already fetched (what W&B and MLflow do; the
    // benchmark's baseline). On by default.
    void setRequeryOnZoom(bool on);

    // The newest snapshot's metric keys (for the metric chooser; the first one charts by default).
    void setMetricKeys(const QStringList &keys);
    // The table's runs changed (live refresh): re-read the histories of the selection. While the
    // tab is hidden this only marks it stale; it reads when next shown.
    void refresh();

Q_SIGNALS:
    void queried();  // a re-query's result was drawn
    void metricChoiceChanged();  // the Metrics menu or the search changed what is charted

protected:
    void showEvent(QShowEvent *event) override;  // a refresh that waited while hidden

private:
    enum class MetricChoice { Default, Search, Chosen };
    void applyMetricChoice(bool force);
    // The charts and the tabs below them again for what is charted (`rebuild`: other metrics or
    // another x, so new panels) and the selection: the legend, the tabs, then a re-read (of the
    // whole history, or where `fullRange` is false of the visible range).
    void showCharts(bool rebuild, bool fullRange);

    StoreReader *m_reader;
    RunSelection *m_selection;
    RunsTableModel *m_runs;
    QStringList m_metrics, m_metricKeys;
    MetricChoice m_metricChoice = MetricChoice::Default;
    QString m_metricFilter;
    ChartOptions m_options;  // before the chart area, which reads it until it is gone
    CompareBar m_bar;
    std::unique_ptr<ChartArea> m_chartArea;
    std::unique_ptr<ComparisonTabs> m_tabs;
    bool m_stale = false;  // a refresh came while hidden
};

}  // namespace orrery::gui
