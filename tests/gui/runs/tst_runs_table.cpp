// SPDX-License-Identifier: GPL-3.0-or-later
// The Runs tab over a real store, offscreen: columns are what varies within what is shown (the
// sweeps' swept params first), not what happened since the window opened; the run's name, status
// and sweep metric stay pinned while the table scrolls sideways; the column chooser groups by
// prefix, searches and toggles; choices survive a restart (per database), Compare's metrics too; Group by
// captions each group; the baseline run leads whatever the sort; a running run has a duration; a sweep with a
// failed trial is not green; the tree's highlight follows a selection made elsewhere; a bad
// filter is said inline; an empty database says what to do.
#include "testsupport.h"
#include "workbenchsupport.h"

#include "columnchooser.h"
#include "compareview.h"
#include "detailsview.h"
#include "mainwindow.h"
#include "runselection.h"
#include "runspage.h"
#include "runstablemodel.h"
#include "runstableview.h"
#include "snapshot.h"
#include "sweeptreemodel.h"

#include "orrery/core/paths.h"
#include "orrery/core/store.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QComboBox>
#include <QDateTime>
#include <QDockWidget>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTreeView>

using namespace orrery::core;
using namespace orrery::gui;
using namespace orrery::test;

namespace {

// The visible param columns of the window's table, in their visual order.
QStringList shownParams(MainWindow &w)
{
    QTableView *view = w.runsPage()->view();
    QHeaderView *header = view->horizontalHeader();
    QStringList out;
    for (int v = 0; v < header->count(); ++v) {
        const int c = header->logicalIndex(v);
        const QString key = w.runsModel()->columnKey(c);
        if (!view->isColumnHidden(c) && key.startsWith(QLatin1String("param:")))
            out.push_back(key.mid(6));
    }
    return out;
}

// A window on `path`, shown on the Runs tab (snapshot() waits for what it shows).
using Window = orrery::test::ShownWindow;

}  // namespace

class TestRunsTable : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // One day the table had the lr sweep's two columns, after a command sweep arrived 56: the
    // columns are a function of what is shown, the same for a window opened before or after.
    void columnsAreWhatVariesWithinWhatIsShown()
    {
        Fixture f;
        Window before(f.path);
        QVERIFY(before.snapshot());
        QCOMPARE(shownParams(before.w), (QStringList{QStringLiteral("optim.lr"), QStringLiteral("seed")}));
        {
            auto store = TrackingStore::open(f.path);
            addCommandSweep(*store, f.dir.filePath(QStringLiteral("runs")));
        }
        before.w.refresh();
        QVERIFY(before.snapshot());
        const QStringList expected{QStringLiteral("optim.lr"), QStringLiteral("seed"),
                                   QStringLiteral("train.lr"), QStringLiteral("train.batch")};
        QCOMPARE(shownParams(before.w), expected);  // the leading sweep's first, constants out
        Window after(f.path);
        QVERIFY(after.snapshot());
        QCOMPARE(shownParams(after.w), expected);

        // Pinned: the run, its status, the leading sweep's metric; Experiment and co. on demand.
        RunsTableModel *model = after.w.runsModel();
        QCOMPARE(model->headerData(RunsTableModel::SweepMetricColumn, Qt::Horizontal).toString(),
                 QStringLiteral("loss"));
        QVERIFY(!after.w.runsPage()->view()->isColumnHidden(RunsTableModel::SweepMetricColumn));
        QVERIFY(after.w.runsPage()->view()->isColumnHidden(RunsTableModel::ExperimentColumn));
        const int trainLoss = model->metricColumn(QStringLiteral("train/loss"));
        QVERIFY(!after.w.runsPage()->view()->isColumnHidden(trainLoss));
        // A header too narrow for its name elides in the middle; the tooltip has it whole.
        QCOMPARE(model->headerData(trainLoss, Qt::Horizontal, Qt::ToolTipRole).toString(),
                 QStringLiteral("train/loss"));
        QCOMPARE(after.w.runsPage()->view()->horizontalHeader()->textElideMode(), Qt::ElideMiddle);
        // Drawn, too: Qt's header clipped a label a little wider than its section at both ends
        // ("im.warmup_ste") and, with rows selected, elided for the regular font but drew bold.
        // An elided label keeps a text-free margin at the section's left, selected or not.
        after.w.resize(1700, 900);  // the table wide enough for the column, whatever the docks
        QHeaderView *header = after.w.runsPage()->view()->horizontalHeader();
        const int textWidth = header->fontMetrics().horizontalAdvance(QStringLiteral("train/loss"));
        for (const bool selected : {false, true})
            for (const int width : {textWidth - 8, textWidth + 2, 40}) {
                if (selected)
                    after.w.runsPage()->view()->selectAll();
                header->resizeSection(trainLoss, width);
                after.w.runsPage()->view()->scrollTo(model->index(0, trainLoss));
                QApplication::processEvents();
                const QImage drawn = header->grab().toImage();
                const int left = header->sectionViewportPosition(trainLoss);
                QVERIFY2(
                    left > 0 && left + width <= drawn.width(),
                    qPrintable(QStringLiteral("the section is at %1 of %2 px").arg(left).arg(drawn.width())));
                int dark = 0;
                for (int x = left + 1; x <= left + 2; ++x)
                    for (int y = 3; y < drawn.height() - 3; ++y)
                        dark += qGray(drawn.pixel(x, y)) < 110;
                QVERIFY2(dark == 0,
                         qPrintable(QStringLiteral("%1 px wide%2: %3 text pixels at its left edge")
                                        .arg(width)
                                        .arg(selected ? QStringLiteral(", rows selected") : QString())
                                        .arg(dark)));
            }
        // The metric column holds the run's value of the sweep's metric.
        const int row = model->rowOfRun(f.runs[4]);
        QVERIFY(row >= 0);
        QCOMPARE(
            model->index(row, RunsTableModel::SweepMetricColumn).data(RunsTableModel::SortRole).toDouble(),
            model->findRun(f.runs[4])->metric(QStringLiteral("loss"))->last.value);
    }

    void runNameStaysPinnedWhileScrollingSideways()
    {
        Fixture f;
        {
            auto store = TrackingStore::open(f.path);
            addCommandSweep(*store, f.dir.filePath(QStringLiteral("runs")));
        }
        Window win(f.path);
        QVERIFY(win.snapshot());
        win.w.runsPage()->columnChooser()->setShown(QStringLiteral("param:cfg.k00"), true);
        for (int k = 0; k < 50; ++k)
            win.w.runsPage()->columnChooser()->setShown(
                QStringLiteral("param:cfg.k%1").arg(k, 2, 10, QLatin1Char('0')), true);
        auto *view = qobject_cast<RunsTableView *>(win.w.runsPage()->view());
        QVERIFY(view);
        QScrollBar *sideways = view->horizontalScrollBar();
        QTRY_VERIFY(sideways->maximum() > 0);
        sideways->setValue(sideways->maximum());
        QVERIFY(view->columnViewportPosition(RunsTableModel::RunColumn) < 0);  // the table moved
        QTableView *pinned = view->pinnedView();
        QVERIFY(pinned->isVisible());
        QCOMPARE(pinned->columnViewportPosition(RunsTableModel::RunColumn), 0);  // the name did not
        QVERIFY(!pinned->isColumnHidden(RunsTableModel::SweepMetricColumn));
        QVERIFY(pinned->isColumnHidden(RunsTableModel::FixedColumns));
        QCOMPARE(pinned->width(), view->pinnedWidth() + 1);
        QCOMPARE(pinned->columnWidth(RunsTableModel::RunColumn),
                 view->columnWidth(RunsTableModel::RunColumn));
        // Its rows line up with the table's, scrolled down too.
        view->verticalScrollBar()->setValue(view->verticalScrollBar()->maximum());
        for (int row : {0, 10, 20})
            QCOMPARE(pinned->rowViewportPosition(row), view->rowViewportPosition(row));
        // A click on a pinned name selects that run everywhere (it once selected the one cell:
        // no whole row, so the window's selection went empty).
        view->verticalScrollBar()->setValue(0);
        const int row = win.w.runsModel()->rowOfRun(f.runs[3]);
        QVERIFY(row >= 0);
        const QRect cell = pinned->visualRect(win.w.runsModel()->index(row, RunsTableModel::RunColumn));
        QTest::mouseClick(pinned->viewport(), Qt::LeftButton, {}, cell.center());
        QTRY_COMPARE(win.w.selection()->runs(), QList<RunId>{f.runs[3]});
        QCOMPARE(win.w.selection()->current(), f.runs[3]);
    }

    void columnChooserGroupsByPrefixSearchesAndToggles()
    {
        Fixture f;
        {
            auto store = TrackingStore::open(f.path);
            addCommandSweep(*store, f.dir.filePath(QStringLiteral("runs")));
        }
        Window win(f.path);
        QVERIFY(win.snapshot());
        ColumnChooser *chooser = win.w.runsPage()->columnChooser();
        QAbstractItemModelTester tester(chooser->model(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(chooser->groupOf(QStringLiteral("param:cfg.k07")));
        QCOMPARE(chooser->groupOf(QStringLiteral("param:cfg.k07"))->text(), QStringLiteral("cfg. (50)"));
        QCOMPARE(chooser->groupOf(QStringLiteral("param:optim.lr"))->text(), QStringLiteral("optim. (1)"));
        QCOMPARE(chooser->groupOf(QStringLiteral("metric:train/loss"))->text(), QStringLiteral("train/ (1)"));
        QVERIFY(chooser->isShown(QStringLiteral("param:optim.lr")));
        QVERIFY(!chooser->isShown(QStringLiteral("param:cfg.k07")));
        // The search keeps what matches in sight.
        chooser->setSearch(QStringLiteral("k07"));
        QStandardItem *cfg = chooser->groupOf(QStringLiteral("param:cfg.k07"));
        QStandardItem *optim = chooser->groupOf(QStringLiteral("param:optim.lr"));
        QVERIFY(!chooser->tree()->isRowHidden(cfg->row(), cfg->parent()->index()));
        QVERIFY(chooser->tree()->isRowHidden(optim->row(), optim->parent()->index()));
        QVERIFY(chooser->tree()->isRowHidden(0, cfg->index()));  // cfg.k00
        QVERIFY(!chooser->tree()->isRowHidden(7, cfg->index()));  // cfg.k07
        chooser->setSearch({});
        // Checking a group shows its 50 columns.
        cfg->setCheckState(Qt::Checked);
        QCOMPARE(shownParams(win.w).size(), 4 + 50);
        QVERIFY(!win.w.runsPage()->view()->isColumnHidden(
            win.w.runsModel()->paramColumn(QStringLiteral("cfg.k49"))));
        chooser->setShown(QStringLiteral("param:cfg.k49"), false);
        QCOMPARE(cfg->checkState(), Qt::PartiallyChecked);
        QVERIFY(win.w.runsPage()->view()->isColumnHidden(
            win.w.runsModel()->paramColumn(QStringLiteral("cfg.k49"))));
    }

    // Choices are saved per database and restored by a new window; another database keeps its own.
    void columnChoicesSurviveARestart()
    {
        Fixture f, other;
        {
            Window first(f.path);
            QVERIFY(first.snapshot());
            first.w.runsPage()->columnChooser()->setShown(QStringLiteral("param:model.width"), true);
            first.w.runsPage()->columnChooser()->setShown(QStringLiteral("param:seed"), false);
            first.w.runsPage()->columnChooser()->setShown(QStringLiteral("duration"), true);
            QCOMPARE(shownParams(first.w),
                     (QStringList{QStringLiteral("optim.lr"), QStringLiteral("model.width")}));
            QVERIFY(first.w.close());
        }
        Window again(f.path);
        QVERIFY(again.snapshot());
        QCOMPARE(shownParams(again.w),
                 (QStringList{QStringLiteral("optim.lr"), QStringLiteral("model.width")}));
        QVERIFY(!again.w.runsPage()->view()->isColumnHidden(RunsTableModel::DurationColumn));
        QVERIFY(again.w.runsPage()->columnChooser()->isShown(QStringLiteral("param:model.width")));
        Window elsewhere(other.path);
        QVERIFY(elsewhere.snapshot());
        QCOMPARE(shownParams(elsewhere.w), (QStringList{QStringLiteral("optim.lr"), QStringLiteral("seed")}));
    }

    // Compare's metrics, chosen in the menu or by a search, are kept per database the same way.
    void compareMetricsSurviveARestart()
    {
        Fixture f, other, third;
        {
            Window first(f.path);
            QVERIFY(first.snapshot());
            first.w.compareView()->setMetricFilter(QStringLiteral("/^eval/"));
            Window second(other.path);
            QVERIFY(second.snapshot());
            second.w.compareView()->setMetrics({QStringLiteral("loss")});
        }
        Window again(f.path);
        QVERIFY(again.snapshot());
        QCOMPARE(again.w.compareView()->metricFilter(), QStringLiteral("/^eval/"));
        Window otherAgain(other.path);
        QVERIFY(otherAgain.snapshot());
        QCOMPARE(otherAgain.w.compareView()->metricChoice().chosen, QStringList{QStringLiteral("loss")});
        QCOMPARE(otherAgain.w.compareView()->metrics(), QStringList{QStringLiteral("loss")});
        Window fresh(third.path);  // nothing saved: the default metrics
        QVERIFY(fresh.snapshot());
        QVERIFY(fresh.w.compareView()->metricFilter().isEmpty());
        QVERIFY(fresh.w.compareView()->metricChoice().chosen.isEmpty());
    }

    void groupByCaptionsEachGroupWithItsCount()
    {
        Fixture f;
        const Snapshot s = snapshotOf(f.path);
        RunsTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setSweeps(s.index());
        model.setRuns(s.runs, s.paramKeys, s.metricKeys);
        model.setGroupBy(QStringLiteral("seed"));
        QStringList captions;
        for (int r = 0; r < model.rowCount(); ++r) {
            const QString caption = model.headerData(r, Qt::Vertical).toString();
            QCOMPARE(model.index(r, 0).data(RunsTableModel::GroupCaptionRole).toString(), caption);
            if (!caption.isEmpty())
                captions.push_back(QStringLiteral("%1:%2").arg(r).arg(caption));
        }
        QCOMPARE(captions,
                 (QStringList{QStringLiteral("0:seed = 0 · 7 runs"), QStringLiteral("7:seed = 1 · 7 runs"),
                              QStringLiteral("14:seed = 2 · 7 runs")}));
        // The window shows the captions beside the rows when grouping.
        Window win(f.path);
        QVERIFY(win.snapshot());
        QVERIFY(!win.w.runsPage()->view()->verticalHeader()->isVisible());
        auto *group = win.w.findChild<QComboBox *>(QStringLiteral("groupBox"));
        QVERIFY(group);
        group->setCurrentIndex(group->findText(QStringLiteral("seed")));
        QVERIFY(win.w.runsPage()->view()->verticalHeader()->isVisible());
        QCOMPARE(win.w.runsModel()->headerData(0, Qt::Vertical).toString(),
                 QStringLiteral("seed = 0 · 7 runs"));
    }

    void baselineLeadsWhateverTheSort()
    {
        Fixture f;
        {
            auto store = TrackingStore::open(f.path);
            store->setTags(f.runs[10], {{QLatin1String(kBaselineTag), QStringLiteral("true")}});
        }
        const Snapshot s = snapshotOf(f.path);
        RunsTableModel model;
        model.setSweeps(s.index());
        model.setRuns(s.runs, s.paramKeys, s.metricKeys);
        QCOMPARE(model.runAt(0)->run.id, f.runs[10]);
        QVERIFY(model.index(0, RunsTableModel::RunColumn).data().toString().startsWith(QStringLiteral("★ ")));
        QVERIFY(!model.index(1, RunsTableModel::RunColumn).data().toString().startsWith(QStringLiteral("★")));
        for (int column : {int(RunsTableModel::RunColumn), int(RunsTableModel::SweepMetricColumn),
                           model.paramColumn(QStringLiteral("optim.lr"))})
            for (Qt::SortOrder order : {Qt::AscendingOrder, Qt::DescendingOrder}) {
                model.sort(column, order);
                QCOMPARE(model.runAt(0)->run.id, f.runs[10]);
            }
        model.sort(RunsTableModel::SweepMetricColumn, Qt::AscendingOrder);  // the others still sorted
        for (int r = 2; r < model.rowCount(); ++r)
            QVERIFY(
                model.index(r - 1, RunsTableModel::SweepMetricColumn)
                    .data(RunsTableModel::SortRole)
                    .toDouble() <=
                model.index(r, RunsTableModel::SweepMetricColumn).data(RunsTableModel::SortRole).toDouble());
    }

    void runningRunShowsItsDuration()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("running.sqlite"));
        RunId running = 0, finished = 0;
        {
            auto store = TrackingStore::open(path);
            const ExperimentId e = store->ensureExperiment(QStringLiteral("e"));
            const qint64 now = QDateTime::currentMSecsSinceEpoch();
            running = store->createRun(e, QStringLiteral("live"), now - 65'000);
            finished = store->createRun(e, QStringLiteral("done"), now - 200'000);
            store->endRun(finished, RunStatus::Finished, now - 80'000);
        }
        const Snapshot s = snapshotOf(path);
        RunsTableModel model;
        model.setRuns(s.runs, s.paramKeys, s.metricKeys);
        const QModelIndex live = model.index(model.rowOfRun(running), RunsTableModel::DurationColumn);
        const double ms = live.data(RunsTableModel::SortRole).toDouble();
        QVERIFY2(ms >= 65'000 && ms < 125'000, qPrintable(QString::number(ms)));
        QVERIFY(live.data().toString().startsWith(QStringLiteral("1:")));
        QCOMPARE(model.index(model.rowOfRun(finished), RunsTableModel::DurationColumn).data().toString(),
                 QStringLiteral("2:00"));
    }

    void sweepWithAFailedTrialIsNotGreen()
    {
        Fixture f;
        CommandSweep cmd;
        {
            auto store = TrackingStore::open(f.path);
            cmd = addCommandSweep(*store, f.dir.filePath(QStringLiteral("runs")));
        }
        SweepTreeModel model;
        model.setSnapshot(snapshotOf(f.path));
        const QModelIndex state = model.sweepIndex(cmd.sweep).siblingAtColumn(SweepTreeModel::StateColumn);
        QVERIFY2(state.data().toString().contains(QStringLiteral("failed")),
                 qPrintable(state.data().toString()));
        const auto icon = state.data(Qt::DecorationRole).value<QIcon>();
        QVERIFY(icon.cacheKey() != SweepTreeModel::phaseIcon(Phase::Done).cacheKey());
        const QModelIndex good = model.sweepIndex(f.sweep).siblingAtColumn(SweepTreeModel::StateColumn);
        QCOMPARE(good.data(Qt::DecorationRole).value<QIcon>().cacheKey(),
                 SweepTreeModel::phaseIcon(Phase::Done).cacheKey());
    }

    // On a 1,500 px screen the docks split what the centre leaves in proportion, and the tree's
    // best value was cut off (a failed sweep's state is long), as were Details' stderr lines: the
    // window's least width was Compare's, whatever the tab. On the Runs tab both docks now open
    // at their widths; the tree as wide as its names, states and best values.
    void theTreeShowsItsBestValueOnA1500pxScreen()
    {
        Fixture f;
        {
            auto store = TrackingStore::open(f.path);
            addCommandSweep(*store, f.dir.filePath(QStringLiteral("runs")));
        }
        // A first start: no layout saved by another test's window (a saved one wins).
        QSettings(orrery::core::guiSettingsPath(), QSettings::IniFormat).remove(QStringLiteral("window"));
        MainWindow w(f.path);
        QSignalSpy shown(&w, &MainWindow::snapshotShown);
        w.setFollowing(false);
        w.resize(1500, 900);
        w.show();
        QVERIFY(shown.wait(10'000));
        QApplication::processEvents();
        QTreeView *tree = w.sweepTree();
        QVERIFY(tree->width() >= 370);
        QVERIFY2(w.detailsView()->width() >= 320, qPrintable(QString::number(w.detailsView()->width())));
        const QHeaderView *header = tree->header();
        const int bestEnd = header->sectionViewportPosition(SweepTreeModel::BestColumn) +
            header->sectionSize(SweepTreeModel::BestColumn);
        QVERIFY2(bestEnd <= tree->viewport()->width(),
                 qPrintable(QStringLiteral("the Best column ends at %1 px of %2")
                                .arg(bestEnd)
                                .arg(tree->viewport()->width())));
    }

    void treeHighlightFollowsASelectionMadeElsewhere()
    {
        Fixture f;
        Window win(f.path);
        QVERIFY(win.snapshot());
        QTreeView *tree = win.w.sweepTree();
        const QModelIndex sweep = win.w.treeModel()->sweepIndex(f.sweep);
        tree->selectionModel()->select(sweep,
                                       QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        QCOMPARE(win.w.selection()->runs().size(), f.runs.size());
        // The table (or brushing, or --select) picks one run: the tree shows that trial only.
        win.w.selection()->select({f.runs[3]}, win.w.runsPage()->view());
        QModelIndexList rows = tree->selectionModel()->selectedRows();
        QCOMPARE(rows.size(), 1);
        QCOMPARE(rows[0].data(SweepTreeModel::IdRole).toLongLong(), f.runs[3]);
        QCOMPARE(win.w.selection()->runs(), QList<RunId>{f.runs[3]});  // the tree did not answer back
        // Every run of the sweep: the sweep's row.
        win.w.selection()->select(f.runs, nullptr);
        rows = tree->selectionModel()->selectedRows();
        QCOMPARE(rows.size(), 1);
        QCOMPARE(rows[0], sweep);
        // Nothing selected: no highlight left over.
        win.w.selection()->select({}, nullptr);
        QVERIFY(tree->selectionModel()->selectedRows().isEmpty());
    }

    void badFilterIsSaidInlineAndKeepsTheRuns()
    {
        Fixture f;
        Window win(f.path);
        QVERIFY(win.snapshot());
        win.w.runsPage()->setFilter(QStringLiteral("params.optim.lr >== banana"));
        QVERIFY2(win.w.runsPage()->filterError().contains(QStringLiteral("params.optim.lr >== banana")),
                 qPrintable(win.w.runsPage()->filterError()));
        QVERIFY(!win.shown.wait(700));  // no read: the table keeps its runs
        QCOMPARE(win.w.runsModel()->totalRuns(), f.runs.size());
        win.w.runsPage()->setFilter(QStringLiteral("params.optim.lr >= 1e-3 and metrics.loss < 100"));
        QVERIFY(win.snapshot());
        QVERIFY(win.w.runsPage()->filterError().isEmpty());
        QCOMPARE(win.w.runsModel()->totalRuns(), 9);  // 1e-3, 3e-3, 1e-2 x 3 seeds
    }

    void emptyDatabaseSaysWhatToDo()
    {
        QTemporaryDir dir;
        Window win(dir.filePath(QStringLiteral("empty.sqlite")));
        QVERIFY(win.snapshot());
        auto *empty = win.w.findChild<QLabel *>(QStringLiteral("runsEmpty"));
        QVERIFY(empty);
        QVERIFY(empty->isVisible());
        QVERIFY(!win.w.runsPage()->view()->isVisible());
        for (const char *hint : {"Ctrl+L", "orrery sweep submit FILE", "Import run directories"})
            QVERIFY2(empty->text().contains(QLatin1String(hint)), hint);
        // A run arrives: the table takes its place.
        {
            auto store = TrackingStore::open(dir.filePath(QStringLiteral("empty.sqlite")));
            store->createRun(store->ensureExperiment(QStringLiteral("e")), QStringLiteral("r"));
        }
        win.w.refresh();
        QVERIFY(win.snapshot());
        QVERIFY(!empty->isVisible());
        QVERIFY(win.w.runsPage()->view()->isVisible());
    }
    // Issue 41: the optional Progress (step / train.steps), GPU-h and Goodput columns, sortable;
    // goodput is read only when asked (its column shown) and is `runs goodput`'s number.
    void progressGpuHoursAndGoodputColumns()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("columns.sqlite"));
        RunId running = 0, done = 0, loose = 0;
        SweepId sweepId = 0;
        const qint64 now = QDateTime::currentMSecsSinceEpoch();
        {
            auto store = TrackingStore::open(path);
            const ExperimentId e = store->ensureExperiment(QStringLiteral("e"));
            Sweep sw;
            sw.name = QStringLiteral("cols");
            sw.experimentId = e;
            sw.method = QStringLiteral("grid");
            sw.state = QStringLiteral("running");
            sw.trialCount = 2;
            sweepId = store->createSweep(sw);
            running = store->createRun(e, QStringLiteral("running"), now - 3'600'000);
            done = store->createRun(e, QStringLiteral("done"), now - 7'200'000);
            loose = store->createRun(e, QStringLiteral("no-sweep"), now - 1000);
            store->logMetrics(running, {{QStringLiteral("loss"), {50, now, 0.5}}});
            store->logMetrics(done, {{QStringLiteral("loss"), {100, now - 3'600'000, 0.2}}});
            store->ingestEvents(
                done, QStringLiteral("events.jsonl"), 0,
                QStringLiteral(
                    "{\"v\":1,\"t\":%1,\"kind\":\"phases\",\"step\":100,\"values\":"
                    "{\"process_start\":%2,\"checkpoint_step\":100,\"startup_s\":60,\"train_s\":1800,"
                    "\"eval_s\":900,\"sample_s\":300}}\n")
                    .arg((now - 3'600'000) / 1000)
                    .arg((now - 7'200'000) / 1000)
                    .toUtf8());
            for (const auto &[index, run] : {std::pair{0, running}, std::pair{1, done}}) {
                Trial t;
                t.sweepId = sweepId;
                t.index = index;
                t.runId = run;
                t.config = QStringLiteral("train:\n  steps: 100\n");
                t.setState(run == done ? TrialState::Completed : TrialState::Running);
                t.submittedMs = now - (run == done ? 7'200'000 : 3'600'000);
                t.startedMs = t.submittedMs;
                t.endedMs = run == done ? now - 3'600'000 : 0;
                t.gpus = run == done ? 1 : 2;
                store->addTrial(t);
            }
        }
        auto store = TrackingStore::open(path, TrackingStore::Mode::ReadOnly);
        RunsTableModel model;
        Snapshot s = readSnapshot(*store, {});
        model.setSweeps(s.index());
        model.setRuns(s.runs, s.paramKeys, s.metricKeys);
        auto cell = [&](RunId run, int column, int role = Qt::DisplayRole) {
            return model.index(model.rowOfRun(run), column).data(role);
        };
        QCOMPARE(cell(running, RunsTableModel::ProgressColumn).toString(), QStringLiteral("50/100 (50%)"));
        QCOMPARE(cell(done, RunsTableModel::ProgressColumn).toString(), QStringLiteral("100/100 (100%)"));
        QCOMPARE(cell(loose, RunsTableModel::ProgressColumn).toString(), QString());
        QCOMPARE(cell(done, RunsTableModel::GpuHoursColumn).toString(), orrery::core::formatHours(1.0));
        const double runningHours =
            cell(running, RunsTableModel::GpuHoursColumn, RunsTableModel::SortRole).toDouble();
        QVERIFY2(runningHours >= 2.0 && runningHours < 2.1, qPrintable(QString::number(runningHours)));
        QVERIFY(cell(done, RunsTableModel::GoodputColumn).toString().isEmpty());  // not asked for
        model.sort(RunsTableModel::ProgressColumn, Qt::DescendingOrder);
        QCOMPARE(model.runAt(0)->run.id, done);
        QCOMPARE(model.runAt(model.rowCount() - 1)->run.id, loose);  // missing values last
        model.sort(RunsTableModel::GpuHoursColumn, Qt::DescendingOrder);
        QCOMPARE(model.runAt(0)->run.id, running);

        // Asked for: what `runs goodput` says (core::sweepGoodput), as a percentage.
        s = readSnapshot(*store, {}, nullptr, {}, true);
        model.setSweeps(s.index());
        model.setRuns(s.runs, s.paramKeys, s.metricKeys);
        double expected = -1;
        QString seen;
        QCOMPARE(store->runPhases(done).size(), 1);
        for (const auto &g : orrery::core::sweepGoodput(*store, sweepId).runs) {
            seen += QStringLiteral("run %1: train %2 s of %3 s; ")
                        .arg(g.run)
                        .arg(g.total.trainingS)
                        .arg(g.total.wallS);
            if (g.run == done)
                expected = g.total.goodput();
        }
        QVERIFY2(expected > 0 && expected < 1, qPrintable(seen));
        QCOMPARE(cell(done, RunsTableModel::GoodputColumn, RunsTableModel::SortRole).toDouble(), expected);
        QCOMPARE(cell(done, RunsTableModel::GoodputColumn).toString(),
                 QStringLiteral("%1%").arg(100 * expected, 0, 'f', 0));
        QCOMPARE(model.columnOfKey(QStringLiteral("goodput")), int(RunsTableModel::GoodputColumn));
        store.reset();

        // The window reads goodput only while its column is shown: not at a first open (the
        // column is hidden by default; reading it for every run cost an open of 100,000 runs
        // 170 ms), and from the first snapshot on once chosen, also after a restart.
        auto goodputCell = [](Window &win, RunId run) {
            RunsTableModel *m = win.w.runsModel();
            return m->index(m->rowOfRun(run), RunsTableModel::GoodputColumn).data(Qt::DisplayRole).toString();
        };
        {
            Window first(path);
            QVERIFY(first.snapshot());
            QVERIFY(first.w.runsPage()->view()->isColumnHidden(RunsTableModel::GoodputColumn));
            QVERIFY(goodputCell(first, done).isEmpty());
            first.w.runsPage()->columnChooser()->setShown(QStringLiteral("goodput"), true);
            QVERIFY(QTest::qWaitFor([&] { return !goodputCell(first, done).isEmpty(); }, 10'000));
            QVERIFY(first.w.close());
        }
        Window again(path);
        QVERIFY(again.snapshot());
        QCOMPARE(goodputCell(again, done), QStringLiteral("%1%").arg(100 * expected, 0, 'f', 0));
    }
    // Issue 41: the tree dock reopens as wide as it was closed (not QTreeView's own 256 px) and
    // the sweeps expanded at close are expanded again; a narrow Details dock cuts names in the
    // middle, so eval/loss_a and eval/loss_b stay apart.
    void layoutComesBackAsItWasLeft()
    {
        Fixture f;
        const QStringList names{QStringLiteral("eval/loss_component_a"),
                                QStringLiteral("eval/loss_component_b")};
        {
            auto store = TrackingStore::open(f.path);
            for (const QString &n : names)
                store->logMetrics(f.runs[0], {{n, {1, 1000, 0.5}}});
        }
        int closedWidth = 0;
        {
            Window before(f.path);
            before.w.resize(1600, 900);
            QVERIFY(before.snapshot());
            auto *tree = before.w.findChild<QDockWidget *>(QStringLiteral("treeDock"));
            before.w.resizeDocks({tree}, {430}, Qt::Horizontal);
            QTRY_VERIFY(std::abs(tree->width() - 430) <= 8);
            closedWidth = tree->width();
            const QModelIndex sweep = before.w.treeModel()->sweepIndex(f.sweep);
            before.w.sweepTree()->expand(sweep);
            QVERIFY(before.w.sweepTree()->isExpanded(sweep));
            before.w.close();
        }
        Window after(f.path);
        after.w.resize(1600, 900);
        QVERIFY(after.snapshot());
        auto *tree = after.w.findChild<QDockWidget *>(QStringLiteral("treeDock"));
        QTRY_VERIFY2(std::abs(tree->width() - closedWidth) <= 8,
                     qPrintable(QStringLiteral("%1 vs %2").arg(tree->width()).arg(closedWidth)));
        QVERIFY(after.w.sweepTree()->isExpanded(after.w.treeModel()->sweepIndex(f.sweep)));
        QCOMPARE(after.w.detailsView()->textElideMode(), Qt::ElideMiddle);
    }
};

ORRERY_TEST_MAIN(TestRunsTable, QApplication)
#include "tst_runs_table.moc"
