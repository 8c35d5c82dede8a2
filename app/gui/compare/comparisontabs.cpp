// SPDX-License-Identifier: GPL-3.0-or-later
#include "comparisontabs.h"

#include "importanceview.h"
#include "parallelcoordinates.h"
#include "runcolors.h"
#include "runselection.h"
#include "runstablemodel.h"

#include "orrery/core/format.h"
#include "orrery/core/params.h"

#include "qcp.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHeaderView>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace orrery::gui {

using core::RunId;

namespace {

// The parallel coordinates' axes for the `focus` runs: the leading sweep's swept params (on a log
// axis where it samples them so) and its metric, else `chartMetric`.
ParallelPlan parallelPlan(const RunsTableModel &runs, const QList<RunId> &focus, const SweepNode *leading,
                          const QString &chartMetric)
{
    const QList<core::SweptParam> swept = runs.sweeps().sweptParams(focus);
    ParallelPlan plan;
    plan.available = runs.paramKeys();
    if (!swept.isEmpty()) {
        plan.defaults = core::keysOf(swept);
        for (const core::SweptParam &sp : swept)
            if (sp.log)
                plan.log.insert(sp.key);
        plan.scope = leading ? leading->sweep.name : QString();
    } else {
        // Runs of no sweep: what differs among them, at most 10 axes (the chooser has the rest).
        QList<core::Params> params;
        for (RunId id : focus)
            if (const core::RunRow *r = runs.findRun(id))
                params.push_back(r->params);
        plan.defaults = core::differingParams(params).mid(0, 10);
    }
    plan.metric = leading && !leading->sweep.metricName.isEmpty() ? leading->sweep.metricName : chartMetric;
    plan.higherIsBetter = leading && leading->sweep.metricGoal == core::Goal::Maximize;
    if (leading)
        for (const core::TrialSummary &t : leading->trials)
            if (t.trial.runId)
                plan.scaleRuns.insert(t.trial.runId);
    return plan;
}

// A run's row of the differences: its name, its value of each param in `keys`, its latest value
// of each metric.
QStringList diffCells(const core::RunRow *r, const QStringList &keys, const QStringList &metrics)
{
    QStringList out{r->run.name};
    for (const QString &k : keys)
        out.push_back(r->params.value(k));
    for (const QString &m : metrics) {
        const core::LatestMetric *lm = r->metric(m);
        out.push_back(lm ? core::formatNumber(lm->last.value, 5) : QString());
    }
    return out;
}

// Whether `model` shows the `selected` runs, in order, under `header` already.
bool showsRows(const QStandardItemModel *model, const QStringList &header,
               const QList<const core::RunRow *> &selected)
{
    bool same = model->rowCount() == selected.size() && model->columnCount() == header.size();
    for (int c = 0; same && c < header.size(); ++c)
        same = model->horizontalHeaderItem(c) && model->horizontalHeaderItem(c)->text() == header[c];
    for (int r = 0; same && r < selected.size(); ++r)
        same = model->item(r, 0)->data(Qt::UserRole).toLongLong() == selected[r]->run.id;
    return same;
}

}  // namespace

ComparisonTabs::ComparisonTabs(StoreReader *reader, RunSelection *selection, RunsTableModel *runs,
                               QWidget *view)
    : m_reader(reader), m_selection(selection), m_runs(runs), m_view(view)
{ }

QWidget *ComparisonTabs::build()
{
    m_tabs = new QTabWidget(m_view);
    m_parallel = new ParallelCoordinates(m_tabs);
    m_tabs->addTab(m_parallel, tr("Parallel coordinates"));
    QWidget *scatterPage = buildScatterPage();
    m_tabs->addTab(scatterPage, tr("Scatter"));
    QWidget *diffPage = buildDiffPage();
    m_tabs->addTab(diffPage, tr("Differences"));
    m_importance = new ImportanceView(m_reader, m_tabs);
    m_tabs->addTab(m_importance, tr("Importance"));
    connect(m_showAllBox, &QCheckBox::toggled, this, &ComparisonTabs::setShowAllParams);
    // A param the user picks stays; until then the scatter follows the selection's sweep (every
    // change this view makes itself is made with the box's signals blocked).
    connect(m_scatterParam, &QComboBox::currentIndexChanged, this, [this] {
        m_scatterParam->setProperty("chosen", m_scatterParam->currentText());
        update(m_metrics);
    });
    connect(m_tabs, &QTabWidget::currentChanged, this, [this] { update(m_metrics); });
    connect(m_parallel, &ParallelCoordinates::brushed, this,
            [this](const QList<RunId> &brushed) { m_selection->select(brushed, m_parallel); });
    return m_tabs;
}

QWidget *ComparisonTabs::buildScatterPage()
{
    auto *scatterPage = new QWidget(m_tabs);
    auto *scatterLayout = new QVBoxLayout(scatterPage);
    m_scatterParam = new QComboBox(scatterPage);
    scatterLayout->addWidget(m_scatterParam);
    m_scatter = new QCustomPlot(scatterPage);
    scatterLayout->addWidget(m_scatter, 1);
    return scatterPage;
}

QWidget *ComparisonTabs::buildDiffPage()
{
    auto *diffPage = new QWidget(m_tabs);
    auto *diffLayout = new QVBoxLayout(diffPage);
    m_showAllBox = new QCheckBox(tr("Show all params"), diffPage);
    diffLayout->addWidget(m_showAllBox);
    m_diff = new QStandardItemModel(diffPage);
    m_diffView = new QTableView(diffPage);
    m_diffView->setModel(m_diff);
    m_diffView->setObjectName(QStringLiteral("diffView"));
    m_diffView->horizontalHeader()->setStretchLastSection(true);
    m_diffView->verticalHeader()->hide();
    m_diffView->setEditTriggers(QAbstractItemView::NoEditTriggers);
    diffLayout->addWidget(m_diffView, 1);
    return diffPage;
}

void ComparisonTabs::updateParamChoices()
{
    const QString current = m_scatterParam->currentText();
    m_scatterParam->blockSignals(true);
    m_scatterParam->clear();
    m_scatterParam->addItems(m_runs->paramKeys());
    m_scatterParam->setCurrentIndex(std::max(0, m_scatterParam->findText(current)));
    m_scatterParam->blockSignals(false);
}

void ComparisonTabs::setShowAllParams(bool on)
{
    m_showAll = on;
    const QSignalBlocker block(m_showAllBox);
    m_showAllBox->setChecked(on);
    update(m_metrics);
}

void ComparisonTabs::update(const QStringList &metrics)
{
    m_metrics = metrics;
    const QList<core::RunRow> all = m_runs->allRuns().mid(0, 5000);  // painting more lines says nothing more

    // The selection's sweep leads (UX.md "Views built around the sweep"): its swept params are
    // the axes and the scatter's x, its metric the last axis and the scatter's y. Nothing
    // selected: the table's runs.
    QList<RunId> focus = m_selection->runs();
    if (focus.isEmpty())
        for (const core::RunRow &r : all)
            focus.push_back(r.run.id);
    const SweepNode *leading = m_runs->sweeps().leadingSweep(focus);
    const ParallelPlan plan = parallelPlan(*m_runs, focus, leading, m_metrics.value(0));
    m_parallel->setRuns(all, plan);
    m_parallel->setHighlighted(m_selection->runs());
    m_importance->setSweep(leading ? leading->sweep.id : 0, leading ? leading->counts.ended() : 0);
    updateScatter(all, plan);
    updateDiff();
}

// The scatter: a param against the sweep's metric, every run grey, the selection in colour;
// drawn when its tab shows (a live refresh each second need not redraw a hidden plot). By
// default the sweep's first swept param (never a constant), else the first that differs.
void ComparisonTabs::updateScatter(const QList<core::RunRow> &all, const ParallelPlan &plan)
{
    const QString chosen = m_scatterParam->property("chosen").toString();
    const QString defaultParam = plan.defaults.value(0);
    const QString want = !chosen.isEmpty() ? chosen : defaultParam;
    if (!want.isEmpty() && m_scatterParam->currentText() != want && m_scatterParam->findText(want) >= 0) {
        const QSignalBlocker block(m_scatterParam);
        m_scatterParam->setCurrentIndex(m_scatterParam->findText(want));
    }
    const QString param = m_scatterParam->currentText(), metric = plan.metric;
    const bool logX = chosen.isEmpty() || chosen == defaultParam ? plan.log.contains(param) : false;
    if (m_tabs->currentWidget() != m_scatter->parentWidget())
        return;
    m_scatter->clearGraphs();
    if (!param.isEmpty() && !metric.isEmpty())
        plotScatter(all, param, metric, logX);
    m_scatter->replot(QCustomPlot::rpQueuedReplot);
}

// Each run's `param` against its latest `metric`; x on a log axis where its values span more
// than two decades, or over any span where the sweep samples `param` on a log scale (`logX`).
void ComparisonTabs::plotScatter(const QList<core::RunRow> &all, const QString &param, const QString &metric,
                                 bool logX)
{
    QVector<double> xs, ys;
    QCPGraph *others = m_scatter->addGraph();
    others->setLineStyle(QCPGraph::lsNone);
    others->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, QColor(150, 150, 150), 5));
    bool positive = true;
    double lo = INFINITY, hi = -INFINITY;
    for (const core::RunRow &r : all) {
        bool ok = false;
        const double x = r.params.value(param).toDouble(&ok);
        const core::LatestMetric *m = r.metric(metric);
        if (!ok || !m || !std::isfinite(m->last.value))
            continue;
        positive = positive && x > 0;
        lo = std::min(lo, x);
        hi = std::max(hi, x);
        if (m_selection->contains(r.run.id)) {
            QCPGraph *g = m_scatter->addGraph();
            g->setLineStyle(QCPGraph::lsNone);
            g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, runColor(r.run.id), 9));
            g->setData({x}, {m->last.value});
        } else {
            xs.push_back(x);
            ys.push_back(m->last.value);
        }
    }
    others->setData(xs, ys);
    const bool log = positive && lo > 0 && (hi / lo > 100 || (logX && hi > lo));
    m_scatter->xAxis->setScaleType(log ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
    m_scatter->xAxis->setTicker(log ? QSharedPointer<QCPAxisTicker>(new QCPAxisTickerLog)
                                    : QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
    m_scatter->xAxis->setLabel(param);
    m_scatter->yAxis->setLabel(metric);
    m_scatter->rescaleAxes();
    m_scatter->xAxis->scaleRange(1.1);
    m_scatter->yAxis->scaleRange(1.1);
}

// The params that differ between the selected runs (all of them with "show all"), then the
// charted metrics.
void ComparisonTabs::updateDiff()
{
    QList<const core::RunRow *> selected;
    QList<core::Params> params;
    for (RunId id : m_selection->runs())
        if (const core::RunRow *r = m_runs->findRun(id)) {
            selected.push_back(r);
            params.push_back(r->params);
        }
    const QStringList keys = m_showAll ? m_runs->paramKeys() : core::differingParams(params);
    QStringList header{tr("Run")};
    header += keys;
    for (const QString &m : std::as_const(m_metrics))
        header.push_back(m);
    // The same runs and columns (a live refresh): change the texts in place, no relayout.
    if (showsRows(m_diff, header, selected)) {
        for (int r = 0; r < selected.size(); ++r) {
            const QStringList texts = diffCells(selected[r], keys, m_metrics);
            for (int c = 1; c < texts.size(); ++c)
                if (m_diff->item(r, c)->text() != texts[c])
                    m_diff->item(r, c)->setText(texts[c]);
        }
        return;
    }
    m_diff->clear();
    m_diff->setHorizontalHeaderLabels(header);
    for (const core::RunRow *r : std::as_const(selected)) {
        QList<QStandardItem *> row;
        for (const QString &text : diffCells(r, keys, m_metrics))
            row.push_back(new QStandardItem(text));
        row.front()->setData(runColor(r->run.id), Qt::DecorationRole);
        row.front()->setData(r->run.id, Qt::UserRole);
        m_diff->appendRow(row);
    }
}

}  // namespace orrery::gui
