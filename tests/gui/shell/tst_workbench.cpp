// SPDX-License-Identifier: GPL-3.0-or-later
// The workbench over a real store, offscreen: the models obey the QAbstractItemModel contract,
// a chart holds exactly the store's history, a one-step spike survives every zoom (each zoom
// re-queries the store), brushing the parallel coordinates selects exactly the runs inside the
// brush, group bands are the mean and std of the seeds, the filter box and a read-only or
// corrupt database behave.
#include "monitorstore.h"
#include "testsupport.h"
#include "workbenchsupport.h"

#include "compareview.h"
#include "detailsview.h"
#include "mainwindow.h"
#include "parallelcoordinates.h"
#include "qcp.h"
#include "runselection.h"
#include "runspage.h"
#include "runstablemodel.h"
#include "snapshot.h"
#include "storereader.h"
#include "sweeptreemodel.h"

#include "orrery/core/format.h"
#include "orrery/core/store.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QLabel>
#include <QProcess>
#include <QSignalSpy>
#include <QStandardItemModel>
#include <QTemporaryDir>
#include <QThread>

#include <cmath>

using namespace orrery::core;
using namespace orrery::gui;

using namespace orrery::test;

class TestWorkbench : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void runsTableModelContract()
    {
        Fixture f;
        const Snapshot s = snapshotOf(f.path);
        RunsTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setRuns(s.runs, s.paramKeys, s.metricKeys);
        QCOMPARE(model.rowCount(), f.runs.size());
        const int lr = model.paramColumn(QStringLiteral("optim.lr"));
        const int loss = model.metricColumn(QStringLiteral("loss"));
        QVERIFY(lr >= 0 && loss >= 0);
        model.sort(lr, Qt::DescendingOrder);
        QCOMPARE(model.index(0, lr).data(RunsTableModel::SortRole).toDouble(), 1e-2);  // numbers, not text
        model.sort(loss, Qt::AscendingOrder);
        for (int r = 1; r < model.rowCount(); ++r)
            QVERIFY(model.index(r - 1, loss).data(RunsTableModel::SortRole).toDouble() <=
                    model.index(r, loss).data(RunsTableModel::SortRole).toDouble());
        model.setGroupBy(QStringLiteral("seed"));
        for (int r = 1; r < model.rowCount(); ++r)
            QVERIFY(model.index(r - 1, model.paramColumn(QStringLiteral("seed"))).data().toInt() <=
                    model.index(r, model.paramColumn(QStringLiteral("seed"))).data().toInt());
        // A live refresh of the same runs changes values in place, without a reset.
        QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        model.setRuns(s.runs, s.paramKeys, s.metricKeys);
        QCOMPARE(resets.size(), 0);
        QCOMPARE(changed.size(), 1);
    }

    void runsTableFetchesOnDemand()
    {
        QList<RunRow> rows;
        for (int i = 0; i < 5000; ++i) {
            RunRow r;
            r.run.id = i + 1;
            r.run.name = QStringLiteral("run%1").arg(i);
            r.params.insert(QStringLiteral("x"), QString::number(i % 7));
            rows.push_back(r);
        }
        RunsTableModel model;
        model.setRuns(rows, {QStringLiteral("x")}, {});
        QCOMPARE(model.rowCount(), RunsTableModel::kFetchBatch);
        QCOMPARE(model.totalRuns(), 5000);
        QVERIFY(model.canFetchMore({}));
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        while (model.canFetchMore({}))
            model.fetchMore({});
        QCOMPARE(model.rowCount(), 5000);
        QVERIFY(model.findRun(4321));
    }

    void treeModelContractAndInPlaceUpdate()
    {
        Fixture f;
        SweepTreeModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setSnapshot(snapshotOf(f.path));
        QCOMPARE(model.rowCount(), 1);  // one experiment
        const QModelIndex sweep = model.sweepIndex(f.sweep);
        QVERIFY(sweep.isValid());
        model.fetchMore(sweep);  // trial rows are made when the sweep is expanded
        QCOMPARE(model.rowCount(sweep), f.runs.size());
        QCOMPARE(model.runsOf(sweep).size(), f.runs.size());
        // The same best as `orrery sweep best`: the best run's latest value.
        {
            auto store = TrackingStore::open(f.path);
            const auto best = store->bestRun(f.sweep);
            QVERIFY(best);
            QCOMPARE(sweep.siblingAtColumn(SweepTreeModel::BestColumn).data().toString(),
                     QStringLiteral("loss ") +
                         formatNumber(best->metric(QStringLiteral("loss"))->last.value, 4));
        }
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        model.setSnapshot(snapshotOf(f.path));  // the same snapshot again: nothing added
        QCOMPARE(inserted.size(), 0);
        QCOMPARE(QPersistentModelIndex(sweep).isValid(), true);
    }

    void chartHoldsTheStoresHistory()
    {
        Fixture f;
        Compare c(f.path);
        const int before = c.view.completedQueries();
        c.view.setMetrics({QStringLiteral("loss")});
        c.selection.select({f.runs[4], f.runs[9]}, nullptr);
        QVERIFY(c.settle(before));
        auto store = TrackingStore::open(f.path);
        for (RunId run : {f.runs[4], f.runs[9]}) {
            const auto h = store->history(run, QStringLiteral("loss"));
            const auto curve = c.view.curve(0, run);
            QCOMPARE(curve.size(), qsizetype(h.points.size()));
            for (qsizetype i = 0; i < curve.size(); ++i) {
                QCOMPARE(curve[i].first, double(h.points[std::size_t(i)].step));
                QCOMPARE(curve[i].second, h.points[std::size_t(i)].value);
            }
        }
        QVERIFY(c.view.curve(0, f.runs[0]).isEmpty());  // not selected, not drawn
    }

    void spikeSurvivesEveryZoom()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("spike.sqlite"));
        constexpr qint64 kPoints = 300'000, kSpike = 123'457;
        RunId run = 0;
        {
            auto store = TrackingStore::open(path);
            run = store->createRun(store->ensureExperiment(QStringLiteral("e")), QStringLiteral("spiky"));
            QList<std::pair<QString, MetricPoint>> pts;
            for (qint64 s = 0; s < kPoints; ++s)
                pts.push_back(
                    {QStringLiteral("loss"), {s, s, s == kSpike ? 100.0 : 1.0 + 0.1 * std::sin(s * 0.001)}});
            store->logMetrics(run, pts);
        }
        Compare c(path);
        int before = c.view.completedQueries();
        c.view.setMetrics({QStringLiteral("loss")});
        c.selection.select({run}, nullptr);
        QVERIFY(c.settle(before));
        auto hasSpike = [&] {
            const auto curve = c.view.curve(0, run);
            return std::any_of(curve.begin(), curve.end(), [](const auto &p) { return p.second == 100.0; });
        };
        QVERIFY(hasSpike());
        QVERIFY(c.view.curve(0, run).size() < 5000);  // downsampled to the chart's width
        // Zoom in around the spike, a decade at a time, down to 20 steps: re-queried each time.
        for (double half : {75'000.0, 7'500.0, 750.0, 75.0, 10.0}) {
            before = c.view.completedQueries();
            c.view.setXRange(kSpike - half * 0.3, kSpike + half * 1.7);
            QVERIFY(c.settle(before));
            QVERIFY2(hasSpike(), qPrintable(QStringLiteral("no spike at ±%1 steps").arg(half)));
        }
        // At 20 steps the chart holds the raw points of the range (and its 5% margins).
        const auto raw = c.view.curve(0, run);
        QVERIFY(raw.size() >= 20 && raw.size() < 40);
        for (qsizetype i = 1; i < raw.size(); ++i)
            QCOMPARE(raw[i].first - raw[i - 1].first, 1.0);
    }

    void brushingSelectsExactlyTheRunsInside()
    {
        Fixture f;
        Compare c(f.path);
        c.view.setMetrics({QStringLiteral("loss")});
        ParallelCoordinates *pc = c.view.parallelCoordinates();
        pc->resize(800, 300);
        QCOMPARE(pc->axes().axes.size(), 3);  // optim.lr, seed (they differ), loss; not model.width
        QCOMPARE(pc->axes().axes[0].label, QStringLiteral("optim.lr"));
        QCOMPARE(pc->axes().axes[0].kind, ParallelAxes::Axis::Kind::Log);
        // Brush lr's axis from 0.25 to 0.55 of its height: on a log axis from 1e-5 to 1e-2 that
        // is 10^(-5 + 3·0.25) .. 10^(-5 + 3·0.55).
        const double lo = std::pow(10.0, -5 + 3 * 0.25), hi = std::pow(10.0, -5 + 3 * 0.55);
        QList<RunId> expected;
        for (int lr = 0; lr < int(std::size(kLrs)); ++lr)
            for (int seed = 0; seed < kSeeds; ++seed)
                if (kLrs[lr] >= lo && kLrs[lr] <= hi)
                    expected.push_back(f.runs[lr * kSeeds + seed]);
        QCOMPARE(expected.size(), 2 * kSeeds);  // 1e-4 and 3e-4
        QSignalSpy brushed(pc, &ParallelCoordinates::brushed);
        const int x = pc->axisX(0);
        QTest::mousePress(pc, Qt::LeftButton, {}, QPoint(x, pc->positionY(0.55)));
        QTest::mouseMove(pc, QPoint(x, pc->positionY(0.4)));
        QTest::mouseRelease(pc, Qt::LeftButton, {}, QPoint(x, pc->positionY(0.25)));
        QCOMPARE(brushed.size(), 1);
        QList<RunId> got = c.selection.runs();  // the shared selection, as every view sees it
        std::sort(got.begin(), got.end());
        std::sort(expected.begin(), expected.end());
        QCOMPARE(got, expected);
        // The diff table lists the selected runs and only the params that differ among them.
        QCOMPARE(c.view.diffModel()->rowCount(), expected.size());
        QStringList header;
        for (int col = 0; col < c.view.diffModel()->columnCount(); ++col)
            header.push_back(c.view.diffModel()->headerData(col, Qt::Horizontal).toString());
        QCOMPARE(header,
                 (QStringList{QStringLiteral("Run"), QStringLiteral("optim.lr"), QStringLiteral("seed"),
                              QStringLiteral("loss")}));
        // A click on the axis clears its brush.
        QTest::mouseClick(pc, Qt::LeftButton, {}, QPoint(x, pc->positionY(0.5)));
        QVERIFY(pc->brushes().isEmpty());
    }

    void groupBandsAreMeanAndStdOfTheSeeds()
    {
        Fixture f;
        Compare c(f.path);
        int before = c.view.completedQueries();
        c.view.setMetrics({QStringLiteral("loss")});
        c.selection.select(f.runs, nullptr);
        QVERIFY(c.settle(before));
        c.view.setGroupBy(QStringLiteral("optim.lr"));
        for (int lr = 0; lr < int(std::size(kLrs)); ++lr) {
            const QString group = QString::number(kLrs[lr]);
            const auto mean = c.view.band(0, group, 0), low = c.view.band(0, group, 1),
                       high = c.view.band(0, group, 2);
            QVERIFY2(mean.size() >= 90, qPrintable(group));  // ~one bin per step (bins narrower than a step)
            QCOMPARE(low.size(), mean.size());
            for (qsizetype i = 0; i < mean.size(); ++i) {
                const qint64 step = std::lround(mean[i].first);
                QVERIFY(std::abs(mean[i].first - double(step)) < 0.5);
                double sum = 0, sumSq = 0;
                for (int seed = 0; seed < kSeeds; ++seed) {
                    const double v = lossAt(lr, seed, step);
                    sum += v;
                    sumSq += v * v;
                }
                const double m = sum / kSeeds, sd = std::sqrt(sumSq / kSeeds - m * m);
                QVERIFY2(std::abs(mean[i].second - m) < 1e-9,
                         qPrintable(QStringLiteral("%1 at %2").arg(group).arg(step)));
                QVERIFY(std::abs(low[i].second - (m - sd)) < 1e-9);
                QVERIFY(std::abs(high[i].second - (m + sd)) < 1e-9);
            }
        }
    }

    void exportWritesPngSvgAndPdf()
    {
        Fixture f;
        Compare c(f.path);
        const int before = c.view.completedQueries();
        c.view.setMetrics({QStringLiteral("loss"), QStringLiteral("eval/loss")});
        c.selection.select(f.runs.mid(0, 3), nullptr);
        QVERIFY(c.settle(before));
        QTemporaryDir out;
        for (const char *suffix : {"png", "svg", "pdf"}) {
            const QString file = out.filePath(QStringLiteral("charts.") + QLatin1String(suffix));
            QString error;
            QVERIFY2(c.view.exportCharts(file, &error), qPrintable(error));
            QVERIFY(QFileInfo(file).size() > 1000);
        }
        // The panels as the grid lays them out: the exported picture is the grid's extent (at
        // twice the pixels), side by side where the grid puts them side by side.
        QImage png(out.filePath(QStringLiteral("charts.png")));
        QVERIFY(!png.isNull());
        QRect grid;
        for (QCustomPlot *plot : c.view.charts())
            grid |= QRect(plot->mapTo(plot->parentWidget(), QPoint(0, 0)), plot->size());
        QCOMPARE(png.size(), grid.size() * 2);
    }

    void windowFiltersAndShowsErrorsInline()
    {
        Fixture f;
        ShownWindow shownWindow(f.path);
        QVERIFY(shownWindow.snapshot());
        MainWindow &window = shownWindow.w;
        QSignalSpy &shown = shownWindow.shown;
        QCOMPARE(window.runsModel()->totalRuns(), f.runs.size());
        window.runsPage()->setFilter(QStringLiteral("params.optim.lr >= 1e-3 and params.seed = 0"));
        QVERIFY(shown.wait(10'000));
        QCOMPARE(window.runsModel()->totalRuns(), 3);  // 1e-3, 3e-3, 1e-2 with seed 0
        QVERIFY(window.runsPage()->filterError().isEmpty());
        window.runsPage()->setFilter(QStringLiteral("lr >= 1e-3"));
        QVERIFY(window.runsPage()->filterError().contains(QStringLiteral("lr >= 1e-3")));
        QCOMPARE(window.runsModel()->totalRuns(), 3);  // the last good filter's runs stay

        // Selecting a sweep in the tree selects its runs everywhere; the details show the first.
        window.selection()->select({f.runs[5]}, nullptr);
        QTRY_COMPARE(window.detailsView()->run(), f.runs[5]);
        QTRY_VERIFY(window.detailsView()->topLevelItemCount() > 3);
        // Its attempt's health check, a line per node (docs/sweeps.md "Health check").
        const QList<QTreeWidgetItem *> health = window.detailsView()->findItems(
            QStringLiteral("health check"), Qt::MatchExactly | Qt::MatchRecursive, 0);
        QCOMPARE(health.size(), 1);
        QCOMPARE(health[0]->text(1), QStringLiteral("failed on 1 of 2 node(s)"));
        QCOMPARE(health[0]->childCount(), 2);
        QCOMPARE(health[0]->child(1)->text(0), QStringLiteral("node2"));
        QCOMPARE(health[0]->child(1)->text(1), QStringLiteral("failed: cpu: matmul result off by 0.5"));
        QCOMPARE(health[0]->child(0)->text(1), QStringLiteral("passed · matmul 12.5 GFLOP/s · 800 ms"));
    }

    // A sweep submitted by the CLI and left alone (nobody watches): the window's follower ingests
    // its metrics and ends its trials, and the tree and the table show it live.
    void windowFollowsASweepNobodyElseWatches()
    {
        ORRERY_SKIP_WITHOUT_TRAINER();
        QTemporaryDir dir;
        const QString db = dir.filePath(QStringLiteral("live.sqlite"));
        const QString spec = dir.filePath(QStringLiteral("live.yaml"));
        QFile f(spec);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QStringLiteral(
                    "name: gui-live\nexperiment: live\ntrainer: {config: %1}\nmethod: grid\n"
                    "metric: {name: train/loss, goal: minimize}\nparameters:\n"
                    "  optim.lr: {values: [1e-3, 3e-3]}\n  train.steps: {value: 20}\nmax_concurrent: 2\n")
                    .arg(orrery::test::microConfigPath())
                    .toUtf8());
        f.close();
        QProcess submit;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("ORRERY_DB"), db);
        submit.setProcessEnvironment(env);
        submit.start(qEnvironmentVariable("ORRERY_CLI"),
                     {QStringLiteral("sweep"), QStringLiteral("submit"), spec});
        QVERIFY(submit.waitForFinished(60'000));
        QVERIFY2(submit.exitCode() == 0, submit.readAllStandardError().constData());

        MainWindow window(db);  // follows by default
        QSignalSpy shown(&window, &MainWindow::snapshotShown);
        window.show();
        QVERIFY(shown.wait(10'000));
        QModelIndex sweep;
        QTRY_VERIFY_WITH_TIMEOUT((sweep = window.treeModel()->sweepIndex(1)).isValid(), 10'000);
        // Both trials end because this window followed them, and their runs have metrics.
        QTRY_VERIFY_WITH_TIMEOUT(sweep.siblingAtColumn(SweepTreeModel::StateColumn)
                                     .data()
                                     .toString()
                                     .startsWith(QStringLiteral("finished · 2/2")),
                                 60'000);
        QCOMPARE(window.runsModel()->totalRuns(), 2);
        for (int r = 0; r < 2; ++r)
            QVERIFY(window.runsModel()->runAt(r)->metric(QStringLiteral("train/loss")));
    }

    // An active sweep's row says how long it has left once two snapshots saw its steps move (the
    // tracker sweep watch and the monitor use), and says steps done in its tooltip; the tracker
    // goes when the sweep ends.
    void sweepTreeShowsTheEtaOfAnActiveSweep()
    {
        QTemporaryDir dir;
        auto store = orrery::core::TrackingStore::open(dir.filePath(QStringLiteral("eta.sqlite")));
        const orrery::test::ActiveSweep active = orrery::test::writeActiveSweep(*store);
        ProgressTrackers trackers;
        Snapshot s = readSnapshot(*store, {}, &trackers);
        QVERIFY(s.sweeps.front().progress && !s.sweeps.front().progress->etaMs);
        QThread::msleep(20);
        store->logMetrics(active.run, {{QStringLiteral("train/loss"), {40, 2000, 0.4}}});
        s = readSnapshot(*store, {}, &trackers);
        QVERIFY(s.sweeps.front().progress && s.sweeps.front().progress->etaMs);
        SweepTreeModel model;
        model.setSnapshot(s);
        const QModelIndex sweep = model.sweepIndex(active.sweep);
        const QString state = sweep.siblingAtColumn(SweepTreeModel::StateColumn).data().toString();
        QVERIFY2(state.startsWith(QStringLiteral("running · 0/1 · ETA ")), qPrintable(state));
        QVERIFY(sweep.data(Qt::ToolTipRole).toString().contains(QLatin1String("steps 40/200 (20%)")));
        // Ended: no ETA, and its tracker is dropped.
        store->setSweepState(active.sweep, QStringLiteral("finished"));
        s = readSnapshot(*store, {}, &trackers);
        QVERIFY(!s.sweeps.front().progress);
        QVERIFY(trackers.isEmpty());
        model.setSnapshot(s);
        QVERIFY(!model.sweepIndex(active.sweep)
                     .siblingAtColumn(SweepTreeModel::StateColumn)
                     .data()
                     .toString()
                     .contains(QLatin1String("ETA")));
    }

    void newerDatabaseOpensReadOnlyWithABanner()
    {
        Fixture f;
        QProcess sqlite;
        sqlite.start(QStringLiteral("sqlite3"), {f.path, QStringLiteral("PRAGMA user_version = 999;")});
        QVERIFY(sqlite.waitForFinished(10'000));
        QCOMPARE(sqlite.exitCode(), 0);
        MainWindow window(f.path);
        QSignalSpy shown(&window, &MainWindow::snapshotShown);
        window.show();
        QVERIFY(shown.wait(10'000));
        auto *banner = window.findChild<QLabel *>(QStringLiteral("banner"));
        QVERIFY(banner && banner->isVisible());
        QVERIFY(banner->text().contains(QStringLiteral("newer")));
        QCOMPARE(window.runsModel()->totalRuns(), f.runs.size());  // still readable
    }

    void corruptDatabaseIsAClearError()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("corrupt.sqlite"));
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(QByteArray(8192, 'x'));
        file.close();
        MainWindow window(path);
        QSignalSpy failed(&window, &MainWindow::databaseFailed);
        QVERIFY(failed.wait(10'000));
        QVERIFY(!failed.first().first().toString().isEmpty());
        QCOMPARE(QFileInfo(path).size(), 8192);  // never overwritten
    }
};

ORRERY_TEST_MAIN(TestWorkbench, QApplication)
#include "tst_workbench.moc"
