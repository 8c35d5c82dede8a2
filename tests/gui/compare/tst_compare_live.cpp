// SPDX-License-Identifier: GPL-3.0-or-later
// The Compare tab's charts over a real store, offscreen (issue 31): a chart nobody zoomed follows
// new points and new metrics, a zoomed one stays until a double-click, a new selection starts from
// its own data; the data's extent is padded (the last point a whole dot; a one-point smoothed
// series still a dot); the legend puts the baseline first (charted unselected too) and a hover emphasises one
// run in every chart; a metric search picks the panels, grouped by prefix with aligned axes; the smoothing
// slider shows its value; group bands only where the group's runs overlap; nothing selected says
// what to do; the leading sweep's metric charts first.
#include "testsupport.h"
#include "workbenchsupport.h"

#include "chartlegend.h"
#include "compareview.h"
#include "qcp.h"

#include "orrery/core/store.h"

#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QMouseEvent>
#include <QSlider>
#include <QStackedWidget>
#include <QTemporaryDir>

#include <cmath>
#include <tuple>

using namespace orrery::core;
using namespace orrery::gui;
using namespace orrery::test;

namespace {

// What a live refresh does after new points were stored, then waits for the charts' answers.
bool refreshed(Compare &c, const QString &path)
{
    const int before = c.view.completedQueries();
    c.load(path);
    c.view.refresh();
    return c.settle(before);
}

void logSteps(const QString &path, RunId run, const QString &key, qint64 from, qint64 to, double value = 1.0)
{
    auto store = TrackingStore::open(path);
    QList<std::pair<QString, MetricPoint>> pts;
    for (qint64 s = from; s <= to; ++s)
        pts.push_back({key, {s, 1'700'000'000'000 + s * 1000, value + 0.001 * double(s)}});
    store->logMetrics(run, pts);
}

QCPRange xRange(const Compare &c, int chart = 0)
{
    const QList<QCustomPlot *> charts = c.view.charts();
    return chart < charts.size() ? charts.at(chart)->xAxis->range() : QCPRange(0, 0);
}

// The graph that draws `run`'s curve on `chart`.
QCPGraph *curveGraph(const Compare &c, int chart, RunId run)
{
    QCustomPlot *plot = c.view.charts().value(chart);
    for (int g = 0; plot && g < plot->graphCount(); ++g)
        if (plot->graph(g)->property("role").toString() == QLatin1String("curve") &&
            plot->graph(g)->property("run").toLongLong() == run)
            return plot->graph(g);
    return nullptr;
}

void moveMouse(QWidget *w, QPoint pos)
{
    QMouseEvent move(QEvent::MouseMove, QPointF(pos), w->mapToGlobal(QPointF(pos)), Qt::NoButton,
                     Qt::NoButton, Qt::NoModifier);
    QCoreApplication::sendEvent(w, &move);
}

}  // namespace

class TestCompareLive : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void chartsFollowNewPointsUntilZoomed()
    {
        Fixture f;
        Compare c(f.path);
        c.load(f.path);
        int before = c.view.completedQueries();
        c.view.setMetrics({QStringLiteral("loss")});
        c.selection.select({f.runs[0], f.runs[1]}, nullptr);
        QVERIFY(c.settle(before));
        QVERIFY(c.view.following());
        QVERIFY(xRange(c).upper > 99);
        // The run goes on to step 199: the chart nobody zoomed grows with it.
        logSteps(f.path, f.runs[0], QStringLiteral("loss"), 100, 199);
        QVERIFY(refreshed(c, f.path));
        QCOMPARE(c.view.curve(0, f.runs[0]).last().first, 199.0);
        QVERIFY2(xRange(c).upper > 199, qPrintable(QString::number(xRange(c).upper)));
        // Zoomed in: the range stays while points arrive beyond it...
        before = c.view.completedQueries();
        c.view.setXRange(10, 20);
        QVERIFY(c.settle(before));
        QVERIFY(!c.view.following());
        logSteps(f.path, f.runs[0], QStringLiteral("loss"), 200, 249);
        QVERIFY(refreshed(c, f.path));
        QCOMPARE(xRange(c).lower, 10.0);
        QCOMPARE(xRange(c).upper, 20.0);
        // ...until a double-click: the whole history again, following.
        before = c.view.completedQueries();
        QTest::mouseDClick(c.view.charts().front(), Qt::LeftButton, {},
                           c.view.charts().front()->rect().center());
        QVERIFY(c.settle(before));
        QVERIFY(c.view.following());
        QVERIFY(xRange(c).upper > 249);
        QCOMPARE(c.view.curve(0, f.runs[0]).last().first, 249.0);
        // A new selection starts from its own data's range, whatever the last one's zoom was.
        before = c.view.completedQueries();
        c.view.setXRange(200, 240);
        QVERIFY(c.settle(before));
        before = c.view.completedQueries();
        c.selection.select({f.runs[5]}, nullptr);
        QVERIFY(c.settle(before));
        QVERIFY(c.view.following());
        QVERIFY2(xRange(c).lower < 0 && xRange(c).upper > 99 && xRange(c).upper < 110,
                 qPrintable(QStringLiteral("%1..%2").arg(xRange(c).lower).arg(xRange(c).upper)));
    }

    void aMetricAppearsWithItsFirstPoints()
    {
        Fixture f;
        Compare c(f.path);
        c.load(f.path);
        const int before = c.view.completedQueries();
        c.selection.select({f.runs[0], f.runs[3]}, nullptr);
        QVERIFY(c.settle(before));
        QCOMPARE(c.view.metrics(), QStringList{QStringLiteral("loss")});
        // eval/loss gets its first points (an eval every 10 steps): its chart appears, with them.
        auto store = TrackingStore::open(f.path);
        store->logMetrics(f.runs[3],
                          {{QStringLiteral("eval/loss"), {10, 1'700'000'010'000, 0.8}},
                           {QStringLiteral("eval/loss"), {20, 1'700'000'020'000, 0.7}}});
        QVERIFY(refreshed(c, f.path));
        QVERIFY(QTest::qWaitFor([&] { return c.view.curve(1, f.runs[3]).size() == 2; }, 5000));
        QCOMPARE(c.view.metrics(), (QStringList{QStringLiteral("loss"), QStringLiteral("eval/loss")}));
        // The whole history of both charts shows, on one x range.
        QCOMPARE(xRange(c, 1).lower, xRange(c, 0).lower);
        QCOMPARE(xRange(c, 1).upper, xRange(c, 0).upper);
        QVERIFY(xRange(c, 1).upper > 99);
    }

    void theDataExtentIsPadded()
    {
        Fixture f;
        RunId single = 0;
        {
            auto store = TrackingStore::open(f.path);
            single = store->createRun(store->ensureExperiment(QStringLiteral("shapes")),
                                      QStringLiteral("one-eval"));
            store->logMetrics(single, {{QStringLiteral("loss"), {40, 1'700'000'040'000, 0.9}}});
        }
        Compare c(f.path);
        c.load(f.path);
        int before = c.view.completedQueries();
        c.view.setMetrics({QStringLiteral("loss")});
        c.selection.select({f.runs[0], f.runs[20]}, nullptr);
        QVERIFY(c.settle(before));
        QCustomPlot *plot = c.view.charts().front();
        plot->replot(QCustomPlot::rpImmediateRefresh);
        const QRect rect = plot->axisRect()->rect();
        // The first and last points sit inside the axis by more than a dot's radius (5 px dots).
        for (const auto &[x, y] : c.view.curve(0, f.runs[20])) {
            const double px = plot->xAxis->coordToPixel(x), py = plot->yAxis->coordToPixel(y);
            QVERIFY2(px >= rect.left() + 3 && px <= rect.right() - 3, qPrintable(QString::number(x)));
            QVERIFY2(py >= rect.top() + 3 && py <= rect.bottom() - 3, qPrintable(QString::number(y)));
        }
        // Smoothing on: a series of one point is still a dot, not an empty line.
        c.view.setSmoothing(0.6);
        before = c.view.completedQueries();
        c.selection.select({single}, nullptr);
        QVERIFY(c.settle(before));
        QCPGraph *g = curveGraph(c, 0, single);
        QVERIFY(g);
        QCOMPARE(g->data()->size(), 1);
        QVERIFY(g->scatterStyle().shape() != QCPScatterStyle::ssNone);
        QVERIFY(g->scatterStyle().pen().color().alpha() == 255);  // the curve, not the faint raw one
        QVERIFY(xRange(c).lower < 40 && xRange(c).upper > 40);
    }

    void legendAndHoverHighlightAcrossCharts()
    {
        Fixture f;
        const RunId a = f.runs[1], base = f.runs[3], b = f.runs[12];
        {
            auto store = TrackingStore::open(f.path);
            store->setTags(base, {{QLatin1String(kBaselineTag), QStringLiteral("true")}});
            for (RunId r : {a, base, b})
                store->logMetrics(r,
                                  {{QStringLiteral("eval/loss"), {50, 1'700'000'050'000, double(r)}},
                                   {QStringLiteral("eval/loss"), {90, 1'700'000'090'000, double(r) + 1}}});
        }
        Compare c(f.path);
        c.load(f.path);
        const int before = c.view.completedQueries();
        c.view.setMetrics({QStringLiteral("loss"), QStringLiteral("eval/loss")});
        c.selection.select({a, base, b}, nullptr);
        QVERIFY(c.settle(before));
        QVERIFY(QTest::qWaitFor([&] { return curveGraph(c, 1, b) && curveGraph(c, 0, b); }, 5000));
        // The legend: the baseline first, marked.
        const auto entries = c.view.legend()->entries();
        QCOMPARE(entries.size(), 3);
        QCOMPARE(entries[0].run, base);
        QCOMPARE(ChartLegend::textOf(entries[0]), QStringLiteral("★ lr1-s0"));
        QCOMPARE(c.view.legend()->item(0)->text(), QStringLiteral("★ lr1-s0"));
        QCOMPARE(entries[1].run, a);
        QCOMPARE(entries[2].run, b);
        // Hover b's loss curve at step 50: b is emphasised in the other chart too, a is dimmed.
        QCustomPlot *plot = c.view.charts()[0];
        plot->replot(QCustomPlot::rpImmediateRefresh);
        const auto bCurve = c.view.curve(0, b);
        const QPoint at(int(std::lround(plot->xAxis->coordToPixel(bCurve[50].first))),
                        int(std::lround(plot->yAxis->coordToPixel(bCurve[50].second))));
        moveMouse(plot, at);
        QCOMPARE(c.view.highlightedRun(), b);
        QVERIFY(curveGraph(c, 1, b)->pen().widthF() > curveGraph(c, 1, a)->pen().widthF());
        QVERIFY(curveGraph(c, 1, a)->pen().color().alpha() < 100);
        QCOMPARE(curveGraph(c, 1, b)->pen().color().alpha(), 255);
        QCOMPARE(curveGraph(c, 1, b)->layer()->name(), QStringLiteral("highlight"));
        QVERIFY(c.view.legend()->item(2)->font().bold());
        // Leaving the chart gives every run back its own pen.
        QEvent leave(QEvent::Leave);
        QCoreApplication::sendEvent(plot, &leave);
        QCOMPARE(c.view.highlightedRun(), RunId(0));
        QCOMPARE(curveGraph(c, 1, a)->pen().color().alpha(), 255);
        // Hovering a legend entry does the same as hovering its curve.
        ChartLegend *legend = c.view.legend();
        legend->doItemsLayout();
        moveMouse(legend->viewport(), legend->visualItemRect(legend->item(1)).center());
        QCOMPARE(c.view.highlightedRun(), a);
        QVERIFY(curveGraph(c, 0, a)->pen().widthF() > curveGraph(c, 0, base)->pen().widthF());
        QCoreApplication::sendEvent(legend->viewport(), &leave);
        QCOMPARE(c.view.highlightedRun(), RunId(0));
        // The baseline is charted with runs of its experiment whether it is selected or not.
        const int again = c.view.completedQueries();
        c.selection.select({a, b}, nullptr);
        QVERIFY(c.settle(again));
        QVERIFY(QTest::qWaitFor([&] { return curveGraph(c, 0, base) != nullptr; }, 5000));
        QCOMPARE(c.view.legend()->entries().size(), 3);
        QCOMPARE(c.view.legend()->entries().front().run, base);
    }

    void metricSearchPicksPanelsGroupedByPrefixWithAlignedAxes()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("metrics.sqlite"));
        QList<RunId> runs;
        {
            auto store = TrackingStore::open(path);
            const ExperimentId e = store->ensureExperiment(QStringLiteral("e"));
            for (int i = 0; i < 2; ++i) {
                const RunId r = store->createRun(e, QStringLiteral("r%1").arg(i));
                QList<std::pair<QString, MetricPoint>> pts;
                for (qint64 s = 0; s < 30; ++s) {
                    const qint64 t = 1'700'000'000'000 + s * 1000;
                    pts.push_back({QStringLiteral("train/loss"), {s, t, 1.0 / (1 + s)}});
                    pts.push_back({QStringLiteral("train/lr"), {s, t, 1e-3}});
                    pts.push_back({QStringLiteral("perf/tokens_per_s"), {s, t, 123456.0 + 1000 * s}});
                    pts.push_back({QStringLiteral("system/gpu_util"), {s, t, 50.0 + s}});
                    pts.push_back({QStringLiteral("loss"), {s, t, 0.5}});
                    if (s >= 10)  // evals start later than training: the x range is still one
                        pts.push_back({QStringLiteral("eval/loss"), {s + 5, t, 0.9 / (1 + s)}});
                }
                store->logMetrics(r, pts);
                runs.push_back(r);
            }
        }
        Compare c(path);
        c.load(path);
        int before = c.view.completedQueries();
        c.selection.select(runs, nullptr);
        QVERIFY(c.settle(before));
        before = c.view.completedQueries();
        c.view.setMetricFilter(QStringLiteral("LOSS"));  // a substring, any case
        QVERIFY(c.settle(before));
        QCOMPARE(
            c.view.metrics(),
            (QStringList{QStringLiteral("train/loss"), QStringLiteral("eval/loss"), QStringLiteral("loss")}));
        QCOMPARE(c.view.chartGroups(),
                 (QStringList{QStringLiteral("train/"), QStringLiteral("eval/"), QStringLiteral("other")}));
        // A regular expression; the tokens' tick labels are wider than the others'.
        before = c.view.completedQueries();
        c.view.setMetricFilter(QStringLiteral("/^(perf|system|train)\\//"));
        QVERIFY(c.settle(before));
        QCOMPARE(c.view.metrics(),
                 (QStringList{QStringLiteral("train/loss"), QStringLiteral("train/lr"),
                              QStringLiteral("perf/tokens_per_s"), QStringLiteral("system/gpu_util")}));
        QCOMPARE(c.view.chartGroups(),
                 (QStringList{QStringLiteral("train/"), QStringLiteral("perf/"), QStringLiteral("system/")}));
        // Aligned: every panel of a column has its axis at the same pixels, on the same x range.
        auto aligned = [&] {
            QSet<int> lefts, rights;
            for (QCustomPlot *p : c.view.charts()) {
                p->replot(QCustomPlot::rpImmediateRefresh);
                lefts.insert(p->axisRect()->left());
                rights.insert(p->axisRect()->right());
            }
            return lefts.size() == 1 && rights.size() == 1;
        };
        QVERIFY(QTest::qWaitFor(aligned, 5000));
        for (QCustomPlot *p : c.view.charts())
            QVERIFY(p->xAxis->range() == xRange(c));
        QCOMPARE(c.view.charts()[0]->width(), c.view.charts()[2]->width());
        QCOMPARE(c.view.charts()[0]->x(), c.view.charts()[2]->x());  // a column of the grid
        // A regular expression that does not compile changes nothing.
        c.view.setMetricFilter(QStringLiteral("/(/"));
        QCOMPARE(c.view.metrics().size(), 4);
        // No search: the default again (no sweep here: eval/loss, then train/loss).
        c.view.setMetricFilter(QString());
        QCOMPARE(c.view.metrics(), (QStringList{QStringLiteral("eval/loss"), QStringLiteral("train/loss")}));
    }

    void smoothingSliderShowsItsValue()
    {
        Fixture f;
        Compare c(f.path);
        auto *label = c.view.findChild<QLabel *>(QStringLiteral("smoothValue"));
        QVERIFY(label);
        QCOMPARE(label->text(), QStringLiteral("off"));
        c.view.findChild<QSlider *>()->setValue(60);
        QCOMPARE(label->text(), QStringLiteral("0.60"));
        QCOMPARE(c.view.smoothingText(), QStringLiteral("0.60"));
        c.view.setSmoothing(0.25);
        QCOMPARE(label->text(), QStringLiteral("0.25"));
    }

    void groupBandsOnlyWhereTheGroupsRunsOverlap()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("bands.sqlite"));
        QList<RunId> runs;
        {
            auto store = TrackingStore::open(path);
            const ExperimentId e = store->ensureExperiment(QStringLiteral("e"));
            // Seed 0 ran to step 99, seed 1 started at 20 and stopped at 49 (same lr).
            for (auto [seed, from, to] : {std::tuple{0, 0, 99}, {1, 20, 49}}) {
                const RunId r = store->createRun(e, QStringLiteral("s%1").arg(seed));
                store->logParams(r,
                                 {{QStringLiteral("optim.lr"), QStringLiteral("0.001")},
                                  {QStringLiteral("seed"), QString::number(seed)}});
                QList<std::pair<QString, MetricPoint>> pts;
                for (qint64 s = from; s <= to; ++s)
                    pts.push_back({QStringLiteral("loss"), {s, 1'700'000'000'000 + s, 1.0 + seed}});
                store->logMetrics(r, pts);
                runs.push_back(r);
            }
        }
        Compare c(path);
        c.load(path);
        const int before = c.view.completedQueries();
        c.view.setMetrics({QStringLiteral("loss")});
        c.selection.select(runs, nullptr);
        QVERIFY(c.settle(before));
        c.view.setGroupBy(QStringLiteral("optim.lr"));
        const auto mean = c.view.band(0, QStringLiteral("0.001"), 0);
        const auto sd = c.view.band(0, QStringLiteral("0.001"), 2);
        QVERIFY(mean.size() >= 25);
        QCOMPARE(sd.size(), mean.size());
        for (qsizetype i = 0; i < mean.size(); ++i) {
            QVERIFY2(mean[i].first >= 19.5 && mean[i].first <= 49.5,
                     qPrintable(QString::number(mean[i].first)));
            QCOMPARE(mean[i].second, 1.5);  // both seeds, everywhere the band is
            QCOMPARE(sd[i].second, 2.0);
        }
        // Issue 41: the bands have a legend: each group's colour and its runs.
        QVERIFY(c.view.groupLegend()->isVisible());
        QVERIFY2(c.view.groupLegend()->text().contains(QStringLiteral("optim.lr = 0.001 (2 runs)")),
                 qPrintable(c.view.groupLegend()->text()));
        c.view.setGroupBy({});
        QTRY_VERIFY(!c.view.groupLegend()->isVisible());
    }

    void nothingSelectedSaysWhatToDo()
    {
        Fixture f;
        Compare c(f.path);
        c.load(f.path);
        QVERIFY(c.view.emptyMessage().contains(QStringLiteral("Select runs")));
        auto *label = c.view.findChild<QLabel *>(QStringLiteral("compareEmpty"));
        QVERIFY(label && label->isVisible());
        for (QCustomPlot *p : c.view.charts())
            QVERIFY(!p->isVisible());  // no empty 0–5 charts
        QVERIFY(!c.view.legend()->isVisible());
        const int before = c.view.completedQueries();
        c.selection.select({f.runs[0]}, nullptr);
        QVERIFY(c.settle(before));
        QVERIFY(c.view.emptyMessage().isEmpty());
        QVERIFY(!label->isVisible());
        QVERIFY(c.view.charts().front()->isVisible());
        c.selection.select({}, nullptr);
        QVERIFY(!c.view.emptyMessage().isEmpty());
    }

    void theLeadingSweepsMetricChartsFirst()
    {
        Fixture f;
        QTemporaryDir root;
        CommandSweep cmd;
        {
            auto store = TrackingStore::open(f.path);
            cmd = addCommandSweep(*store, root.path());
        }
        Compare c(f.path);
        c.load(f.path);
        int before = c.view.completedQueries();
        c.selection.select(cmd.runs, nullptr);
        QVERIFY(c.settle(before));
        QCOMPARE(c.view.metrics().value(0), QStringLiteral("train/loss"));
        before = c.view.completedQueries();
        c.selection.select(f.runs.mid(0, 6), nullptr);  // the lr sweep's metric is `loss`
        QVERIFY(c.settle(before));
        QCOMPARE(c.view.metrics().value(0), QStringLiteral("loss"));
        QVERIFY(!c.view.curve(0, f.runs[0]).isEmpty());
        // Chosen in the menu, the metrics stay whatever is selected.
        c.view.setMetrics({QStringLiteral("train/loss")});
        before = c.view.completedQueries();
        c.selection.select(f.runs.mid(0, 2), nullptr);
        QVERIFY(c.settle(before));
        QCOMPARE(c.view.metrics(), QStringList{QStringLiteral("train/loss")});
    }
    // Issue 41: a constant metric is a flat line in the middle of its chart, smoothed or not, and
    // a curve flat to rounding (values one ulp apart) too: never an axis a few ulps tall whose
    // two ticks read the same number.
    void aConstantMetricIsFlat()
    {
        Fixture f;
        {
            auto store = TrackingStore::open(f.path);
            QList<std::pair<QString, MetricPoint>> pts;
            const double c = 0.493946, next = std::nextafter(c, 1.0);
            for (qint64 s = 0; s < 200; ++s) {
                pts.push_back({QStringLiteral("eval/const"), {s, 1'700'000'000'000 + s, c}});
                pts.push_back({QStringLiteral("eval/ulp"), {s, 1'700'000'000'000 + s, s % 2 ? next : c}});
            }
            store->logMetrics(f.runs[0], pts);
        }
        Compare c(f.path);
        c.load(f.path);
        for (const char *metric : {"eval/const", "eval/ulp"})
            for (const int smooth : {0, 60}) {
                int before = c.view.completedQueries();
                c.view.setMetrics({QString::fromLatin1(metric)});
                c.view.findChild<QSlider *>(QStringLiteral("smoothSlider"))->setValue(smooth);
                c.selection.select({f.runs[0]}, nullptr);
                QVERIFY(c.settle(before));
                const QCPRange y = c.view.charts().front()->yAxis->range();
                const QString what = QStringLiteral("%1 smoothing %2: %3 .. %4")
                                         .arg(QLatin1String(metric))
                                         .arg(smooth)
                                         .arg(y.lower, 0, 'g', 17)
                                         .arg(y.upper, 0, 'g', 17);
                QVERIFY2(y.upper - y.lower > 0.01, qPrintable(what));
                QVERIFY2(y.lower < 0.493946 && y.upper > 0.493946, qPrintable(what));
                QVERIFY2(std::abs((y.lower + y.upper) / 2 - 0.493946) < 1e-3, qPrintable(what));
                c.selection.select({}, nullptr);
            }
    }

    // Issue 41: x by another metric — eval/loss against GPU-hours, each point at the GPU-hours of
    // its step (interpolated between GPU-hours' own points; none before it was logged), chosen
    // from the x box like the step and time axes; a zoom keeps every point and y fits the range.
    void aMetricAgainstAnother()
    {
        Fixture f;
        const RunId run = f.runs[0];
        {
            auto store = TrackingStore::open(f.path);
            QList<std::pair<QString, MetricPoint>> pts;
            for (qint64 s = 10; s <= 1000; s += 10)
                pts.push_back(
                    {QStringLiteral("perf/gpu_hours"), {s, 1'700'000'000'000 + s, double(s) / 100}});
            for (qint64 s = 0; s <= 1000; s += 25)
                pts.push_back({QStringLiteral("eval/loss"), {s, 1'700'000'000'000 + s, 1000.0 - double(s)}});
            store->logMetrics(run, pts);
        }
        Compare c(f.path);
        c.load(f.path);
        auto *box = c.view.findChild<QComboBox *>(QStringLiteral("xAxisBox"));
        QVERIFY(box);
        const int index = box->findData(QStringLiteral("perf/gpu_hours"));
        QVERIFY2(index > 0, "the x box offers the metrics");
        c.view.setMetrics({QStringLiteral("eval/loss")});
        int before = c.view.completedQueries();
        c.selection.select({run}, nullptr);
        QVERIFY(c.settle(before));
        before = c.view.completedQueries();
        box->setCurrentIndex(index);  // what a user does
        QVERIFY(c.settle(before));
        QCOMPARE(c.view.xMetric(), QStringLiteral("perf/gpu_hours"));
        QCOMPARE(c.view.charts().front()->xAxis->label(), QStringLiteral("perf/gpu_hours"));
        const auto curve = c.view.curve(0, run);
        QCOMPARE(curve.size(), qsizetype(40));  // steps 25 .. 1000; step 0 had no GPU-hours yet
        for (const auto &[x, y] : curve)
            QVERIFY2(std::abs(x - (1000.0 - y) / 100) < 1e-9,
                     qPrintable(QStringLiteral("%1, %2").arg(x).arg(y)));
        // A zoom replots the same points (no re-query by step), y fitted to what shows.
        c.view.setXRange(2.0, 4.0);
        QTest::qWait(50);
        QCOMPARE(c.view.curve(0, run).size(), qsizetype(40));
        const QCPRange y = c.view.charts().front()->yAxis->range();
        QVERIFY2(y.lower > 500 && y.upper < 900,
                 qPrintable(QStringLiteral("%1 .. %2").arg(y.lower).arg(y.upper)));
        // Back to steps: the x box's first entry.
        before = c.view.completedQueries();
        box->setCurrentIndex(0);
        QVERIFY(c.settle(before));
        QVERIFY(c.view.xMetric().isEmpty());
        QCOMPARE(c.view.curve(0, run).size(), qsizetype(41));
        QCOMPARE(c.view.curve(0, run).front().first, 0.0);
    }

    // Issue 41: y follows the zoomed x range by default (Fit y); off, a zoom leaves y spanning the
    // whole history, also after the re-query that reads only the visible range.
    void fitYFollowsTheZoomOrNot()
    {
        Fixture f;
        const RunId run = f.runs[0];
        logSteps(f.path, run, QStringLiteral("train/rise"), 0, 999, 0);  // y = 0.001 × step
        Compare c(f.path);
        c.load(f.path);
        c.view.setMetrics({QStringLiteral("train/rise")});
        int before = c.view.completedQueries();
        c.selection.select({run}, nullptr);
        QVERIFY(c.settle(before));
        auto yRange = [&] { return c.view.charts().front()->yAxis->range(); };
        auto text = [&] {
            return qPrintable(QStringLiteral("%1 .. %2").arg(yRange().lower).arg(yRange().upper));
        };
        before = c.view.completedQueries();
        c.view.setXRange(100, 200);
        QVERIFY(c.settle(before));
        QVERIFY2(yRange().lower > 0.05 && yRange().upper < 0.25, text());
        auto *fit = c.view.findChild<QCheckBox *>(QStringLiteral("fitYBox"));
        QVERIFY(fit && fit->isChecked());
        fit->setChecked(false);
        QVERIFY2(yRange().lower < 0.01 && yRange().upper > 0.99, text());
        before = c.view.completedQueries();
        c.view.setXRange(300, 400);
        QVERIFY(c.settle(before));
        QVERIFY2(yRange().lower < 0.01 && yRange().upper > 0.99, text());
        fit->setChecked(true);
        QVERIFY2(yRange().lower > 0.25 && yRange().upper < 0.45, text());
    }
};

ORRERY_TEST_MAIN(TestCompareLive, QApplication)
#include "tst_compare_live.moc"
