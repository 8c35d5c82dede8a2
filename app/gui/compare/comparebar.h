// SPDX-License-Identifier: GPL-3.0-or-later
//
// The Compare tab's bar, over the charts: their controls (Metrics ▾, the metric search, x, log y,
// fit y, smoothing), then Group by and Export…. Two groups on one row, or on two where the tab is
// narrow (WrapLayout): the bar does not set the window's least width, so a 1,500 px window keeps
// both docks' widths on this tab. Its widgets are the view's children, made in focus-chain order;
// what they do is the view's (each control calls its setter), and the view keeps them showing
// what it charts. CompareView owns it; UI thread only.
#pragma once

#include "orrery/core/store.h"

#include <QCoreApplication>
#include <QStringList>
#include <QTimer>

class QCheckBox;
class QComboBox;
class QHBoxLayout;
class QLabel;
class QLayout;
class QLineEdit;
class QSlider;
class QToolButton;
class QWidget;

namespace orrery::gui {

class CompareView;

class CompareBar {
    Q_DECLARE_TR_FUNCTIONS(CompareBar)

public:
    // The bar's layout, its controls connected to `view`'s setters.
    QLayout *build(CompareView *view);
    // The Metrics menu: `keys` (in panel order) under their group's heading, those `view` charts
    // checked; checking one adds it to the view's metrics, unchecking removes it.
    void setMetricMenu(CompareView *view, const QStringList &keys);
    // x: the step and time axes, then every metric of `keys` (and `xMetric` where it is not
    // among them), the current one selected; no signal.
    void setXChoices(const QStringList &keys, core::XAxis axis, const QString &xMetric);
    // Group by: none, then every param, `groupBy` selected; no signal.
    void setGroupChoices(const QStringList &params, const QString &groupBy);

    QToolButton *metricButton = nullptr;
    QLineEdit *metricSearch = nullptr;
    QTimer searchTimer;  // a search rebuilds the charts: once typing pauses, not per key
    QComboBox *axisBox = nullptr;
    QCheckBox *logBox = nullptr;
    QCheckBox *fitYBox = nullptr;
    QSlider *smoothSlider = nullptr;
    QLabel *smoothLabel = nullptr;
    QComboBox *groupBox = nullptr;
    QToolButton *exportButton = nullptr;

private:
    QWidget *buildChartControls(CompareView *view);
    void addMetricControls(CompareView *view, QHBoxLayout *controls);
    void addAxisControls(CompareView *view, QHBoxLayout *controls);
    void addSmoothingControls(CompareView *view, QHBoxLayout *controls);
    QWidget *buildGroupControls(CompareView *view);
    void connectTo(CompareView *view);
};

}  // namespace orrery::gui
