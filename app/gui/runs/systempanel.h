// SPDX-License-Identifier: GPL-3.0-or-later
//
// The System dock (tabified with Details): the current run's machine figures over its wall time,
// from the `system` events the bundled trainer writes every train.system_every_s seconds
// (docs/trainer.md "System metrics"), which the store files as metrics under their own names:
// node<n>/cpu_pct and node<n>/rss_gb per node, gpu<r>/util, gpu<r>/mem_gb and gpu<r>/power_w per
// rank. One chart per figure (CPU, memory, GPU utilisation, GPU memory, GPU power), one line per
// node or GPU, x in minutes since the run's first sample. A run without system events (a command
// sweep's, an older trainer's, system_every_s 0) says so instead of showing empty charts.
// Read on the store reader, shown when the read comes back; UI thread only.
#pragma once

#include "orrery/core/store.h"

#include <QMap>
#include <QStringList>
#include <QWidget>

#include <vector>

class QCustomPlot;
class QLabel;
class QVBoxLayout;

namespace orrery::gui {

class StoreReader;

class SystemPanel : public QWidget {
    Q_OBJECT
public:
    explicit SystemPanel(StoreReader *reader, QWidget *parent = nullptr);

    // 0: nothing; again for the same run: re-read (live). Read now when the panel is visible,
    // else when it is next shown.
    void showRun(core::RunId run);
    core::RunId run() const { return m_run; }

    // The figures a run's system metric keys are filed under: "cpu" (node<n>/cpu_pct), "memory"
    // (node<n>/rss_gb), "gpu_util", "gpu_mem", "gpu_power"; empty for any other key.
    static QString figureOf(const QString &metricKey);

    // What is on screen: the charts' titles in order, and per title its lines' names ("node0").
    QStringList chartTitles() const;
    QStringList linesOf(const QString &title) const;
    // The empty state's text; "" while charts are shown.
    QString emptyText() const;

Q_SIGNALS:
    void shown(core::RunId run);

protected:
    void showEvent(QShowEvent *event) override;

private:
    void read();
    struct Series {
        QString key;
        std::vector<core::MetricPoint> points;
    };
    void fill(const std::vector<Series> &series);

    StoreReader *m_reader;
    core::RunId m_run = 0;
    bool m_stale = false;  // m_run changed or has new points while the panel was hidden
    bool m_onScreen = true;  // in a dock: whether its tab is the one shown
    QLabel *m_empty;
    QWidget *m_charts;
    QVBoxLayout *m_chartLayout;
    QList<QCustomPlot *> m_plots;
    QMap<QString, QStringList> m_lines;  // title → line names, as drawn
};

}  // namespace orrery::gui
