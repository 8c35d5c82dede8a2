// SPDX-License-Identifier: GPL-3.0-or-later
#include "comparebar.h"

#include "chartarea.h"
#include "compareview.h"

#include "wraplayout.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QSlider>
#include <QToolButton>
#include <QToolTip>

#include <algorithm>

namespace orrery::gui {

namespace {
constexpr int kTimeAxes = 3;  // the x choices before the metrics: step, wall time, relative time
}  // namespace

QLayout *CompareBar::build(CompareView *view)
{
    auto *bar = new WrapLayout;
    bar->setObjectName(QStringLiteral("compareBar"));
    bar->addWidget(buildChartControls(view));
    bar->addWidget(buildGroupControls(view));
    connectTo(view);
    return bar;
}

// The charts' controls: metrics, search, x, log and fit y, smoothing.
QWidget *CompareBar::buildChartControls(CompareView *view)
{
    auto *chartControls = new QWidget(view);
    chartControls->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    auto *controls = new QHBoxLayout(chartControls);
    controls->setContentsMargins(0, 0, 0, 0);
    addMetricControls(view, controls);
    addAxisControls(view, controls);
    addSmoothingControls(view, controls);
    controls->addStretch(1);  // one row: grouping and Export at the right end
    return chartControls;
}

// Metrics ▾ and the search, which sets the view's filter once typing pauses.
void CompareBar::addMetricControls(CompareView *view, QHBoxLayout *controls)
{
    metricButton = new QToolButton(view);
    metricButton->setText(tr("Metrics"));
    metricButton->setPopupMode(QToolButton::InstantPopup);
    metricButton->setMenu(new QMenu(metricButton));
    metricButton->setObjectName(QStringLiteral("metricButton"));
    controls->addWidget(metricButton);
    metricSearch = new QLineEdit(view);
    metricSearch->setObjectName(QStringLiteral("metricSearch"));
    metricSearch->setPlaceholderText(tr("Search metrics or /regex/"));
    metricSearch->setClearButtonEnabled(true);
    // The whole placeholder readable beside the clear button where there is room; on a narrow
    // screen its start ("Search metrics"), so this bar does not set the window's least width.
    const int placeholder = view->fontMetrics().horizontalAdvance(metricSearch->placeholderText());
    metricSearch->setMinimumWidth(view->fontMetrics().horizontalAdvance(tr("Search metrics")) + 20);
    metricSearch->setMaximumWidth(placeholder + 40);
    metricSearch->setToolTip(tr("Charts the metrics whose names contain this text (or match /a regular "
                                "expression/); empty: the sweep's metric"));
    controls->addWidget(metricSearch, 1);
    searchTimer.setSingleShot(true);
    searchTimer.setInterval(250);
    QObject::connect(metricSearch, &QLineEdit::textChanged, &searchTimer, qOverload<>(&QTimer::start));
    QObject::connect(&searchTimer, &QTimer::timeout, view,
                     [this, view] { view->setMetricFilter(metricSearch->text()); });
}

// x, log y and fit y.
void CompareBar::addAxisControls(CompareView *view, QHBoxLayout *controls)
{
    controls->addWidget(new QLabel(tr("x:"), view));
    axisBox = new QComboBox(view);
    axisBox->addItem(tr("Step"), int(core::XAxis::Step));
    axisBox->addItem(tr("Wall time"), int(core::XAxis::WallTime));
    axisBox->addItem(tr("Relative time"), int(core::XAxis::RelativeTime));
    axisBox->setObjectName(QStringLiteral("xAxisBox"));
    axisBox->setToolTip(tr("What x is: the step, the time, or another metric (each point against "
                           "that metric's value at its step)"));
    // As wide as "Wall time": its list shows "Relative time" whole.
    axisBox->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    axisBox->setMinimumContentsLength(9);
    controls->addWidget(axisBox);
    logBox = new QCheckBox(tr("Log y"), view);
    controls->addWidget(logBox);
    fitYBox = new QCheckBox(tr("Fit y"), view);
    fitYBox->setObjectName(QStringLiteral("fitYBox"));
    fitYBox->setChecked(view->fitYToView());
    fitYBox->setToolTip(tr("y follows what the zoomed x range shows; off: y spans the whole history"));
    controls->addWidget(fitYBox);
}

// The smoothing slider and its value beside it.
void CompareBar::addSmoothingControls(CompareView *view, QHBoxLayout *controls)
{
    controls->addWidget(new QLabel(tr("Smoothing:"), view));
    smoothSlider = new QSlider(Qt::Horizontal, view);
    smoothSlider->setObjectName(QStringLiteral("smoothSlider"));
    smoothSlider->setRange(0, 99);
    // Wide enough to set a weight by hand: squeezed by the bar, it was a 15 px handle.
    smoothSlider->setMinimumWidth(90);
    smoothSlider->setMaximumWidth(160);
    smoothSlider->setToolTip(tr("EMA weight (the raw curve stays, faint)"));
    controls->addWidget(smoothSlider);
    smoothLabel = new QLabel(view);
    smoothLabel->setObjectName(QStringLiteral("smoothValue"));
    // Wide enough for "0.99" so the controls to the right do not move as the slider does.
    smoothLabel->setMinimumWidth(view->fontMetrics().horizontalAdvance(QStringLiteral("0.99 ")));
    smoothLabel->setText(view->smoothingText());
    controls->addWidget(smoothLabel);
}

// Group by and Export….
QWidget *CompareBar::buildGroupControls(CompareView *view)
{
    auto *groupControls = new QWidget(view);
    groupControls->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
    auto *grouping = new QHBoxLayout(groupControls);
    grouping->setContentsMargins(0, 0, 0, 0);
    grouping->addWidget(new QLabel(tr("Group by:"), view));
    groupBox = new QComboBox(view);
    groupBox->setObjectName(QStringLiteral("compareGroupBox"));
    // As wide as a short param name, not the longest one (its list still shows them whole): a box
    // that grew to `data.source_timeout_s` made the tab, and so the window, wider.
    groupBox->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    groupBox->setMinimumContentsLength(8);
    groupBox->addItem(tr("(none)"));
    groupBox->setToolTip(tr("Runs sharing this param's value become one mean ± std band (e.g. over seeds)"));
    grouping->addWidget(groupBox);
    grouping->addStretch(1);
    exportButton = new QToolButton(view);
    exportButton->setText(tr("Export…"));
    exportButton->setObjectName(QStringLiteral("exportButton"));
    grouping->addWidget(exportButton);
    return groupControls;
}

// Export, x, fit and log y, smoothing and grouping, to the view's setters.
void CompareBar::connectTo(CompareView *view)
{
    QObject::connect(exportButton, &QToolButton::clicked, view, [view] {
        const QString path =
            QFileDialog::getSaveFileName(view, tr("Export charts"), QStringLiteral("charts.png"),
                                         tr("PNG image (*.png);;SVG (*.svg);;PDF (*.pdf)"));
        QString error;
        if (!path.isEmpty() && !view->exportCharts(path, &error))
            QToolTip::showText(view->mapToGlobal(QPoint(view->width() / 2, 20)), error, view);
    });
    QObject::connect(axisBox, &QComboBox::currentIndexChanged, view, [this, view] {
        const QVariant choice = axisBox->currentData();
        if (choice.typeId() == QMetaType::QString)
            view->setXMetric(choice.toString());
        else
            view->setXAxis(core::XAxis(choice.toInt()));
    });
    QObject::connect(fitYBox, &QCheckBox::toggled, view, &CompareView::setFitYToView);
    QObject::connect(logBox, &QCheckBox::toggled, view, &CompareView::setLogY);
    QObject::connect(smoothSlider, &QSlider::valueChanged, view,
                     [view](int v) { view->setSmoothing(v / 100.0); });
    QObject::connect(groupBox, &QComboBox::currentIndexChanged, view,
                     [this, view](int i) { view->setGroupBy(i <= 0 ? QString() : groupBox->itemText(i)); });
}

void CompareBar::setMetricMenu(CompareView *view, const QStringList &keys)
{
    QMenu *menu = metricButton->menu();
    menu->clear();
    QString section = QStringLiteral("-");
    for (const QString &k : keys) {
        if (metricGroup(k) != section) {  // 77 metrics read better under their prefixes
            section = metricGroup(k);
            menu->addSection(section.isEmpty() ? tr("other") : section);
        }
        QAction *a = menu->addAction(k);
        a->setCheckable(true);
        a->setChecked(view->metrics().contains(k));
        QObject::connect(a, &QAction::toggled, view, [view, k](bool on) {
            QStringList next = view->metrics();
            if (on && !next.contains(k))
                next.push_back(k);
            if (!on)
                next.removeAll(k);
            view->setMetrics(next);
        });
    }
}

void CompareBar::setXChoices(const QStringList &keys, core::XAxis axis, const QString &xMetric)
{
    const QSignalBlocker block(axisBox);
    while (axisBox->count() > kTimeAxes)
        axisBox->removeItem(kTimeAxes);
    axisBox->insertSeparator(kTimeAxes);
    QStringList xKeys = keys;
    if (!xMetric.isEmpty() && !xKeys.contains(xMetric))
        xKeys << xMetric;
    for (const QString &k : std::as_const(xKeys))
        axisBox->addItem(k, k);
    axisBox->setCurrentIndex(xMetric.isEmpty() ? axisBox->findData(int(axis)) : axisBox->findData(xMetric));
}

void CompareBar::setGroupChoices(const QStringList &params, const QString &groupBy)
{
    groupBox->blockSignals(true);
    const QString group = groupBy;
    groupBox->clear();
    groupBox->addItem(tr("(none)"));
    groupBox->addItems(params);
    groupBox->setCurrentIndex(std::max(0, groupBox->findText(group)));
    groupBox->blockSignals(false);
}

}  // namespace orrery::gui
