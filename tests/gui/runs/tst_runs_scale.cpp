// SPDX-License-Identifier: GPL-3.0-or-later
// The sweep tree at scale, over a real store, offscreen: a sweep's trial rows are made when it is
// expanded (100,000 trials were 500,000 items built on every open), while its own row's counts,
// state and best come from its overview; once made they update in place; a selection made
// elsewhere still highlights its trials; the window opens with every sweep's rows unmade.
#include "testsupport.h"
#include "workbenchsupport.h"

#include "mainwindow.h"
#include "runselection.h"
#include "snapshot.h"
#include "sweeptreemodel.h"

#include "orrery/core/format.h"
#include "orrery/core/store.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTreeView>

using namespace orrery::test;

namespace {

QString cell(const QModelIndex &i, int column)
{
    return i.siblingAtColumn(column).data().toString();
}

}  // namespace

class TestRunsScale : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void trialRowsAreMadeWhenASweepIsExpanded()
    {
        Fixture f;
        {
            // The contract, fetching included (the tester fetches every parent it walks).
            SweepTreeModel tested;
            QAbstractItemModelTester tester(&tested, QAbstractItemModelTester::FailureReportingMode::QtTest);
            tested.setSnapshot(snapshotOf(f.path));
            QCOMPARE(tested.rowCount(tested.sweepIndex(f.sweep)), f.runs.size());
            tested.setSnapshot(snapshotOf(f.path));
        }
        SweepTreeModel model;
        model.setSnapshot(snapshotOf(f.path));
        const QModelIndex sweep = model.sweepIndex(f.sweep);
        QVERIFY(sweep.isValid());
        // Not made yet, but the view draws an expander and the sweep's row says it all.
        QCOMPARE(model.rowCount(sweep), 0);
        QVERIFY(model.hasChildren(sweep));
        QVERIFY(model.canFetchMore(sweep));
        QCOMPARE(model.runsOf(sweep).size(), f.runs.size());
        QVERIFY2(cell(sweep, SweepTreeModel::StateColumn).contains(QLatin1String("21/21")),
                 qPrintable(cell(sweep, SweepTreeModel::StateColumn)));
        auto store = TrackingStore::open(f.path);
        QCOMPARE(cell(sweep, SweepTreeModel::BestColumn),
                 QStringLiteral("loss ") +
                     formatNumber(store->bestRun(f.sweep)->metric(QStringLiteral("loss"))->last.value, 4));
        // An experiment's and a trial's rows are no sweep's: nothing to fetch there.
        QVERIFY(!model.canFetchMore(sweep.parent()));
        QVERIFY(!model.canFetchMore({}));

        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        model.fetchMore(sweep);
        QVERIFY(!inserted.isEmpty());
        QCOMPARE(model.rowCount(sweep), f.runs.size());
        QVERIFY(!model.canFetchMore(sweep));
        const QModelIndex trial3 = model.index(3, SweepTreeModel::NameColumn, sweep);
        QCOMPARE(trial3.data(SweepTreeModel::IdRole).toLongLong(), f.runs[3]);
        QCOMPARE(trial3.data(SweepTreeModel::KindRole).toInt(), int(SweepTreeModel::TrialItem));
        QCOMPARE(cell(trial3, SweepTreeModel::StepColumn), QStringLiteral("99"));
        QVERIFY(!model.hasChildren(trial3));

        // Live: a trial logs another step; its made row changes in place, nothing is added.
        const QPersistentModelIndex kept(trial3);
        store->logMetrics(f.runs[3], {{QStringLiteral("loss"), {150, 1'700'000'200'000, 0.001}}});
        inserted.clear();
        model.setSnapshot(snapshotOf(f.path));
        QCOMPARE(inserted.size(), 0);
        QVERIFY(kept.isValid());
        QCOMPARE(cell(kept, SweepTreeModel::StepColumn), QStringLiteral("150"));
        QCOMPARE(cell(sweep, SweepTreeModel::BestColumn), QStringLiteral("loss ") + formatNumber(0.001, 4));
    }

    // An unexpanded sweep's row follows the snapshot too (its best), without making trial rows.
    void anUnexpandedSweepUpdatesWithoutItsRows()
    {
        Fixture f;
        SweepTreeModel model;
        model.setSnapshot(snapshotOf(f.path));
        TrackingStore::open(f.path)->logMetrics(f.runs[0],
                                                {{QStringLiteral("loss"), {150, 1'700'000'200'000, 0.002}}});
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        model.setSnapshot(snapshotOf(f.path));
        QCOMPARE(inserted.size(), 0);
        const QModelIndex sweep = model.sweepIndex(f.sweep);
        QCOMPARE(model.rowCount(sweep), 0);
        QCOMPARE(cell(sweep, SweepTreeModel::BestColumn), QStringLiteral("loss ") + formatNumber(0.002, 4));
    }

    // The window opens with the sweeps collapsed and their rows unmade; expanding one makes them,
    // and a run chosen in the table highlights its trial in a sweep never expanded.
    void windowMakesRowsOnExpandAndForAHighlight()
    {
        Fixture f;
        {
            auto store = TrackingStore::open(f.path);
            addCommandSweep(*store, f.dir.filePath(QStringLiteral("cmd")));
        }
        MainWindow w(f.path);
        QSignalSpy shown(&w, &MainWindow::snapshotShown);
        w.setFollowing(false);
        w.tabs()->setCurrentIndex(MainWindow::RunsTab);
        w.resize(1200, 700);
        w.show();
        QVERIFY(shown.wait(10'000));
        SweepTreeModel *model = w.treeModel();
        const QModelIndex lr = model->sweepIndex(f.sweep);
        QVERIFY(lr.isValid());
        QCOMPARE(model->rowCount(lr), 0);
        w.sweepTree()->expand(lr);
        QCOMPARE(model->rowCount(lr), f.runs.size());

        QModelIndex cmd;
        for (int e = 0; e < model->rowCount() && !cmd.isValid(); ++e)
            for (int s = 0; s < model->rowCount(model->index(e, 0)); ++s)
                if (const QModelIndex i = model->index(s, 0, model->index(e, 0)); i != lr)
                    cmd = i;
        QVERIFY(cmd.isValid());
        QCOMPARE(model->rowCount(cmd), 0);
        const QList<RunId> cmdRuns = model->runsOf(cmd);
        QVERIFY(cmdRuns.size() > 1);
        w.selection()->select({cmdRuns[1]}, nullptr);
        const QModelIndexList rows = w.sweepTree()->selectionModel()->selectedRows();
        QCOMPARE(rows.size(), 1);
        QCOMPARE(rows[0].data(SweepTreeModel::IdRole).toLongLong(), cmdRuns[1]);
        QCOMPARE(rows[0].parent(), cmd);
    }
};

ORRERY_TEST_MAIN(TestRunsScale, QApplication)
#include "tst_runs_scale.moc"
