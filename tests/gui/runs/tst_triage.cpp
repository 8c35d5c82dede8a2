// SPDX-License-Identifier: GPL-3.0-or-later
// Triage and run housekeeping in the window (issue 31): the details dock of a failed command
// trial (the stderr traceback of its failed attempt, each attempt's reason and node, metrics and
// the swept params first, the 50 constant params grouped and collapsed), the log window of a
// failed attempt (stderr first, an attempt chooser, an empty file said so with where the
// progress is), and the run menu's writes through the window's StoreWriter (baseline star,
// archive and Show archived, delete) — on a real store written through the TrackingStore API.
#include "testsupport.h"
#include "workbenchsupport.h"

#include "chartlegend.h"
#include "compareview.h"
#include "detailsview.h"
#include "logview.h"
#include "logwindows.h"
#include "mainwindow.h"
#include "runhousekeeping.h"
#include "runselection.h"
#include "runspage.h"
#include "runstablemodel.h"
#include "runstableview.h"
#include "sweepmenu.h"
#include "sweeptreemodel.h"

#include "orrery/core/store.h"

#include <QAction>
#include <QApplication>
#include <QFile>
#include <QFileInfo>
#include <QInputDialog>
#include <QLabel>
#include <QMenu>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTimer>
#include <QTreeView>
#include <QTreeWidget>

#include <functional>

using namespace orrery::core;
using namespace orrery::gui;
using namespace orrery::test;

namespace {

// addCommandSweep's database, its failed trial (1) given a second failed attempt on another node.
struct Triage {
    QTemporaryDir dir;
    QString path;
    CommandSweep sweep;
    RunId failedRun = 0;

    Triage()
    {
        path = dir.filePath(QStringLiteral("triage.sqlite"));
        auto store = TrackingStore::open(path);
        sweep = addCommandSweep(*store, dir.filePath(QStringLiteral("runs")));
        failedRun = sweep.runs[1];
        Trial again = store->attemptsOfRun(failedRun).front();
        again.id = 0;
        again.attempt = 1;
        again.exitReason = QStringLiteral("exit 3");
        again.nodes = QStringLiteral("node7");
        again.detail = QStringLiteral("FAILED");
        store->addTrial(again);
        Trial first = store->attemptsOfRun(failedRun).front();
        first.exitReason = QStringLiteral("OUT_OF_MEMORY");
        store->updateTrial(first);
    }
    QString runDir() const { return dir.filePath(QStringLiteral("runs/cmd/1")); }
};

QTreeWidgetItem *section(QTreeWidget *view, const QString &role)
{
    for (int i = 0; i < view->topLevelItemCount(); ++i)
        if (view->topLevelItem(i)->data(0, Qt::UserRole).toString() == role)
            return view->topLevelItem(i);
    return nullptr;
}

int indexOf(QTreeWidget *view, const QString &startsWith)
{
    for (int i = 0; i < view->topLevelItemCount(); ++i)
        if (view->topLevelItem(i)->text(0).startsWith(startsWith))
            return i;
    return -1;
}

// A screenshot for people to look at (CTest sets the directory; kept with the build).
void screenshot(QWidget *w, const char *name)
{
    const QString shots = qEnvironmentVariable("ORRERY_TEST_SCREENSHOTS");
    if (shots.isEmpty())
        return;
    QDir().mkpath(shots);
    w->grab().save(QDir(shots).filePath(QString::fromLatin1(name)));
}

QStringList childTexts(QTreeWidgetItem *item, int column)
{
    QStringList texts;
    for (int i = 0; item && i < item->childCount(); ++i)
        texts << item->child(i)->text(column);
    return texts;
}

}  // namespace

class TestTriage : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void detailsOfAFailedTrialShowItsStderrAndAttempts()
    {
        Triage t;
        StoreReader reader;
        QSignalSpy opened(&reader, &StoreReader::opened);
        reader.open(t.path);
        QVERIFY(opened.wait(10'000));
        DetailsView view(&reader);
        view.resize(340, 700);  // the dock's default width
        view.show();
        QSignalSpy shown(&view, &DetailsView::shown);
        view.showRun(t.failedRun);
        QVERIFY(shown.wait(10'000));

        // The traceback's last lines, from the failed attempt's stderr.log, right under the run.
        QTreeWidgetItem *stderrItem = section(&view, QStringLiteral("stderr"));
        QVERIFY(stderrItem);
        QCOMPARE(view.indexOfTopLevelItem(stderrItem), 1);
        QVERIFY(stderrItem->text(0).contains(QLatin1String("attempt 1")));
        // First the line that says why, whole (wrapped at the dock's width, never cut), then the lines.
        QTreeWidgetItem *errorItem = stderrItem->child(0);
        QCOMPARE(errorItem->data(0, Qt::UserRole).toString(), QStringLiteral("error"));
        auto *errorLabel = qobject_cast<QLabel *>(view.itemWidget(errorItem, 0));
        QVERIFY(errorLabel);
        QCOMPARE(errorLabel->text(), QStringLiteral("ValueError: batch 16 does not divide the dataset"));
        QVERIFY(errorLabel->wordWrap());
        QVERIFY2(view.visualItemRect(errorItem).height() >= errorLabel->heightForWidth(errorLabel->width()),
                 qPrintable(QStringLiteral("%1 < %2")
                                .arg(view.visualItemRect(errorItem).height())
                                .arg(errorLabel->heightForWidth(errorLabel->width()))));
        QStringList lines = childTexts(stderrItem, 0);
        lines.removeFirst();
        QVERIFY2(lines.contains(QStringLiteral("ValueError: batch 16 does not divide the dataset")),
                 qPrintable(lines.join(QLatin1Char('\n'))));
        QVERIFY(lines.front().startsWith(QLatin1String("Traceback")));
        QCOMPARE(stderrItem->child(1)->toolTip(0), lines.front());  // the line itself, not the path
        // The status says why, not only FAILED.
        QVERIFY(view.findItems(QStringLiteral("FAILED · exit 3"), Qt::MatchExactly | Qt::MatchRecursive, 1)
                    .size() == 1);

        // Each attempt apart: its state, exit reason and node.
        QTreeWidgetItem *attempts = section(&view, QStringLiteral("attempts"));
        QVERIFY(attempts);
        QCOMPARE(attempts->childCount(), 2);
        QCOMPARE(attempts->child(0)->text(1), QStringLiteral("failed: OUT_OF_MEMORY · on localhost"));
        QCOMPARE(attempts->child(1)->text(1), QStringLiteral("failed: exit 3 · on node7"));
        QVERIFY(
            childTexts(attempts->child(1), 1).contains(QStringLiteral("FAILED")));  // the executor's detail

        // Metrics, then the swept params (marked, in spec order), before the other 50 params,
        // which are grouped by prefix and collapsed.
        const int metrics = indexOf(&view, QStringLiteral("Latest metrics"));
        QTreeWidgetItem *swept = section(&view, QStringLiteral("swept"));
        QTreeWidgetItem *params = section(&view, QStringLiteral("params"));
        QVERIFY(metrics > 0 && swept && params);
        QVERIFY(metrics < view.indexOfTopLevelItem(swept));
        QVERIFY(view.indexOfTopLevelItem(swept) < view.indexOfTopLevelItem(params));
        QCOMPARE(childTexts(swept, 0),
                 (QStringList{QStringLiteral("train.lr \u25c6"), QStringLiteral("train.batch \u25c6")}));
        QCOMPARE(childTexts(swept, 1), (QStringList{QStringLiteral("0.001"), QStringLiteral("16")}));
        QVERIFY(view.topLevelItem(metrics)->child(0)->text(0).startsWith(QLatin1String("train/loss")));
        QCOMPARE(params->childCount(), 1);  // cfg.* (50)
        QCOMPARE(params->child(0)->text(0), QStringLiteral("cfg.* (50)"));
        QVERIFY(!params->child(0)->isExpanded());
        // Values readable at the default width: the field column leaves the value at least half.
        QVERIFY2(view.columnWidth(0) <= view.viewport()->width() / 2,
                 qPrintable(QString::number(view.columnWidth(0))));

        screenshot(&view, "triage-details-failed.png");

        // Double-click on the stderr block asks for the attempt's log window.
        QSignalSpy logs(&view, &DetailsView::logsRequested);
        QTreeWidgetItem *open = stderrItem->child(stderrItem->childCount() - 1);
        Q_EMIT view.itemDoubleClicked(open, 0);
        QCOMPARE(logs.size(), 1);
        QCOMPARE(logs.front().at(0).toLongLong(), t.sweep.sweep);
        QCOMPARE(logs.front().at(1).toInt(), 1);
        QCOMPARE(logs.front().at(2).toInt(), 1);
    }

    void logsOfAFailedAttemptOpenOnStderrWithEachAttemptApart()
    {
        Triage t;
        // The bundled trainer's way: stdout exists and is empty.
        QFile out(QDir(t.runDir()).filePath(QStringLiteral("stdout.log")));
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.close();
        MainWindow window(t.path);
        window.setFollowing(false);
        QSignalSpy shown(&window, &MainWindow::snapshotShown);
        QVERIFY(shown.wait(10'000));
        QSignalSpy opened(&window, &MainWindow::logsOpened);
        QSignalSpy failed(&window, &MainWindow::logsFailed);
        window.logWindows()->openTrialLogs(t.sweep.sweep, 1);
        QTRY_VERIFY_WITH_TIMEOUT(!opened.isEmpty() || !failed.isEmpty(), 10'000);
        QVERIFY2(failed.isEmpty(),
                 qPrintable(failed.isEmpty() ? QString() : failed.front().at(0).toString()));
        auto *logs = opened.front().at(0).value<LogView *>();
        QVERIFY(logs);
        QCOMPARE(logs->fileCount(), 2);
        QCOMPARE(logs->file(1).label, QStringLiteral("stderr"));
        QCOMPARE(logs->currentFile(), 1);  // the error is in stderr
        QTRY_VERIFY_WITH_TIMEOUT(logs->text(1).contains(QLatin1String("ValueError")), 10'000);
        // The empty stdout says so, and where the progress is.
        QTRY_VERIFY_WITH_TIMEOUT(logs->text(0).contains(QLatin1String("(empty")), 10'000);
        QVERIFY2(logs->text(0).contains(QLatin1String("events.jsonl")) &&
                     logs->text(0).contains(QLatin1String("Compare")),
                 qPrintable(logs->text(0)));
        screenshot(logs, "triage-logs-stderr.png");
        logs->setCurrentFile(0);
        screenshot(logs, "triage-logs-empty-stdout.png");
        // Two attempts, apart: the latest chosen.
        QCOMPARE(logs->attemptLabels().size(), 2);
        QCOMPARE(logs->currentAttempt(), 1);
        QVERIFY2(logs->attemptLabels().at(0).contains(QLatin1String("OUT_OF_MEMORY")),
                 qPrintable(logs->attemptLabels().join(QLatin1Char('|'))));
        QVERIFY(logs->attemptLabels().at(1).contains(QLatin1String("node7")));
        // Choosing the other attempt reloads the view for it.
        QSignalSpy updated(logs, &LogView::updated);
        Q_EMIT logs->attemptChosen(0);
        QTRY_VERIFY_WITH_TIMEOUT(logs->windowTitle().contains(QLatin1String("attempt 0")), 10'000);
        QCOMPARE(logs->currentAttempt(), 0);
        QTRY_VERIFY_WITH_TIMEOUT(logs->text(1).contains(QLatin1String("ValueError")), 10'000);
        logs->close();
    }

    void runMenuStarsArchivesAndDeletes()
    {
        Fixture f;
        ShownWindow shownWindow(f.path);
        QVERIFY(shownWindow.snapshot());
        MainWindow &window = shownWindow.w;
        QSignalSpy &shown = shownWindow.shown;
        QSignalSpy edited(&window, &MainWindow::runsEdited);
        auto action = [&](const QList<RunId> &runs, const char *name) {
            QMenu *menu = window.housekeeping()->runMenu(runs, &window);
            QAction *a = menu->findChild<QAction *>(QString::fromLatin1(name));
            return std::make_pair(std::unique_ptr<QMenu>(menu), a);
        };
        // Does `act`, then waits for its write (no error) and the refresh it asks for.
        auto settle = [&](const std::function<void()> &act) {
            const qsizetype edits = edited.size(), shows = shown.size();
            act();
            return QTest::qWaitFor([&] { return edited.size() > edits; }, 10'000) &&
                edited.back().at(0).toString().isEmpty() &&
                QTest::qWaitFor([&] { return shown.size() > shows; }, 10'000);
        };

        // Star: the baseline of its experiment, one at a time.
        auto [m1, star] = action({f.runs[3]}, "baseline");
        QVERIFY(star && star->isEnabled());
        QVERIFY(star->text().contains(QLatin1String("Star")));
        // (A structured binding is captured by copy: clang 14, the presets' compiler, captures none
        // by reference.)
        QVERIFY(settle([a = star] { a->trigger(); }));
        QVERIFY(window.runsModel()->findRun(f.runs[3])->isBaseline());
        auto [m2, star2] = action({f.runs[4]}, "baseline");
        QVERIFY(settle([a = star2] { a->trigger(); }));
        QVERIFY(!window.runsModel()->findRun(f.runs[3])->isBaseline());
        QVERIFY(window.runsModel()->findRun(f.runs[4])->isBaseline());
        auto [m3, unstar] = action({f.runs[4]}, "baseline");
        QCOMPARE(unstar->text(), QStringLiteral("Unstar baseline"));

        // Archive two: gone from the table until Show archived.
        auto [m4, archive] = action({f.runs[0], f.runs[1]}, "archive");
        QCOMPARE(archive->text(), QStringLiteral("Archive 2 run(s)"));
        QVERIFY(settle([a = archive] { a->trigger(); }));
        QCOMPARE(window.runsModel()->totalRuns(), f.runs.size() - 2);
        QVERIFY(!window.runsModel()->findRun(f.runs[0]));
        // The tree too (issue 41): the trial says so and its sweep no longer stands for the run;
        // the experiment counts the runs left.
        const QModelIndex sweep = window.treeModel()->sweepIndex(f.sweep);
        window.sweepTree()->expand(sweep);
        QTRY_VERIFY(window.treeModel()->rowCount(sweep) > 0);
        const QString archivedState =
            window.treeModel()->index(0, SweepTreeModel::StateColumn, sweep).data().toString();
        QVERIFY2(archivedState.endsWith(QStringLiteral("· archived")), qPrintable(archivedState));
        QVERIFY(window.treeModel()->runsOf(window.treeModel()->index(0, 0, sweep)).isEmpty());
        QCOMPARE(window.treeModel()->runsOf(sweep).size(), f.runs.size() - 2);
        QCOMPARE(sweep.parent().siblingAtColumn(SweepTreeModel::StateColumn).data().toString(),
                 QStringLiteral("%1 run(s)").arg(f.runs.size() - 2));
        window.runsPage()->showArchivedAction()->setChecked(true);
        QVERIFY(shown.wait(10'000));
        QCOMPARE(window.runsModel()->totalRuns(), f.runs.size());
        QCOMPARE(window.treeModel()->runsOf(sweep).size(), f.runs.size());
        QVERIFY(window.runsModel()->findRun(f.runs[0])->run.archived);
        auto [m5, unarchive] = action({f.runs[0]}, "archive");
        QCOMPARE(unarchive->text(), QStringLiteral("Unarchive 1 run(s)"));

        // Delete (the menu asks first; the write is the window's): gone from the store and table,
        // and from the selection.
        window.selection()->select({f.runs[2], f.runs[5]}, nullptr);
        QVERIFY(settle([&] { window.housekeeping()->deleteRuns({f.runs[2]}); }));
        QVERIFY(!window.runsModel()->findRun(f.runs[2]));
        QVERIFY(!TrackingStore::open(f.path)->run(f.runs[2]));
        QCOMPARE(window.selection()->runs(), QList<RunId>{f.runs[5]});

        // Rename and note land in the store through the same writer.
        QVERIFY(settle([&] { window.housekeeping()->renameRun(f.runs[6], QStringLiteral("best-so-far")); }));
        QCOMPARE(window.runsModel()->findRun(f.runs[6])->run.name, QStringLiteral("best-so-far"));
        QVERIFY(
            settle([&] { window.housekeeping()->setRunNote(f.runs[6], QStringLiteral("try 2x batch")); }));
        QCOMPARE(TrackingStore::open(f.path)->details(f.runs[6]).tags.value(QLatin1String(kNoteTag)),
                 QStringLiteral("try 2x batch"));
    }
    // Issue 41: a trial's run deleted while its sweep is shown and the trial selected. The tree
    // keeps one row per trial (the deleted one says so and stands for no run), the sweep's runs
    // and Compare's legend lose it, no error is said; a run deleted by another process while
    // selected is a refresh, not "the database cannot be read", and no timer says anything again.
    void deletingAShownTrialsRunKeepsTheTreeTrue()
    {
        Fixture f;
        ShownWindow shownWindow(f.path);
        QVERIFY(shownWindow.snapshot());
        MainWindow &window = shownWindow.w;
        QSignalSpy &shown = shownWindow.shown;
        QSignalSpy failed(&window, &MainWindow::databaseFailed);
        QSignalSpy stale(&window, &MainWindow::staleRead);
        QSignalSpy edited(&window, &MainWindow::runsEdited);
        SweepTreeModel *tree = window.treeModel();
        const QModelIndex sweep = tree->sweepIndex(f.sweep);
        QVERIFY(sweep.isValid());
        window.sweepTree()->expand(sweep);
        QTRY_COMPARE(tree->rowCount(sweep), f.runs.size());
        auto trialRows = [&] {
            QStringList names;
            for (int r = 0; r < tree->rowCount(sweep); ++r)
                names << tree->index(r, 0, sweep).data().toString();
            return names;
        };
        const QStringList before = trialRows();
        // The sweep shown in Compare (its runs selected through the tree), then trial 0 alone.
        window.sweepTree()->selectionModel()->select(
            sweep, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        QTRY_COMPARE(window.compareView()->legend()->entries().size(), f.runs.size());
        const QModelIndex trial0 = tree->index(0, 0, sweep);
        QCOMPARE(trial0.data(SweepTreeModel::IdRole).toLongLong(), f.runs[0]);
        window.sweepTree()->selectionModel()->select(
            trial0, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        QCOMPARE(window.selection()->runs(), QList<RunId>{f.runs[0]});

        const qsizetype shows = shown.size();
        window.housekeeping()->deleteRuns({f.runs[0]});
        QVERIFY(QTest::qWaitFor([&] { return !edited.isEmpty(); }, 10'000));
        QCOMPARE(edited.back().at(0).toString(), QString());
        QVERIFY(QTest::qWaitFor([&] { return shown.size() > shows; }, 10'000));
        QCOMPARE(trialRows(), before);  // trial 0, 1, … once each: no stale row, no new "trial 0"
        const QModelIndex deleted = tree->index(0, 0, sweep);
        QCOMPARE(deleted.data(SweepTreeModel::IdRole).toLongLong(), 0);
        QVERIFY(tree->runsOf(deleted).isEmpty());
        QVERIFY2(deleted.siblingAtColumn(SweepTreeModel::StateColumn)
                     .data()
                     .toString()
                     .contains(QLatin1String("run deleted")),
                 qPrintable(deleted.siblingAtColumn(SweepTreeModel::StateColumn).data().toString()));
        const QList<RunId> sweepRuns = tree->runsOf(sweep);
        QCOMPARE(sweepRuns.size(), f.runs.size() - 1);
        QVERIFY(!sweepRuns.contains(0) && !sweepRuns.contains(f.runs[0]));
        QVERIFY(window.selection()->runs().isEmpty());

        // Clicking the trial whose run is gone selects nothing and says nothing.
        window.sweepTree()->selectionModel()->select(
            deleted, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        QVERIFY(window.selection()->runs().isEmpty());
        // The sweep again: Compare's legend has its 20 runs, no "0".
        window.sweepTree()->selectionModel()->select(
            sweep, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        QTRY_COMPARE(window.compareView()->legend()->entries().size(), f.runs.size() - 1);
        for (const ChartLegend::Entry &e : window.compareView()->legend()->entries())
            QVERIFY2(e.run != 0 && e.run != f.runs[0], qPrintable(e.name));

        // Another process deletes the selected run: the next read of it is a refresh that drops
        // it from the selection; then refreshes (the window's 10 s poll) say nothing more.
        window.sweepTree()->selectionModel()->select(
            tree->index(1, 0, sweep), QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        QCOMPARE(window.selection()->runs(), QList<RunId>{f.runs[1]});
        TrackingStore::open(f.path)->deleteRuns({f.runs[1]});
        window.detailsView()->showRun(f.runs[1]);  // what a click or a poll's refresh does
        QTRY_VERIFY_WITH_TIMEOUT(window.selection()->runs().isEmpty(), 10'000);
        QVERIFY(!stale.isEmpty());
        for (int i = 0; i < 3; ++i) {
            const qsizetype n = shown.size();
            window.refresh();
            QVERIFY(QTest::qWaitFor([&] { return shown.size() > n; }, 10'000));
        }
        QCOMPARE(trialRows(), before);
        QVERIFY2(failed.isEmpty(),
                 qPrintable(failed.isEmpty() ? QString() : failed.front().at(0).toString()));

        // After a restart: the same tree, the sweep's legend without the deleted runs.
        ShownWindow again(f.path);
        QVERIFY(again.snapshot());
        const QModelIndex sweep2 = again.w.treeModel()->sweepIndex(f.sweep);
        QCOMPARE(again.w.treeModel()->runsOf(sweep2).size(), f.runs.size() - 2);
        again.w.sweepTree()->selectionModel()->select(
            sweep2, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        QTRY_COMPARE(again.w.compareView()->legend()->entries().size(), f.runs.size() - 2);
    }
    // Issue 41: after the window's clean exit the main file alone holds the session's writes
    // (its reader closes before its writer, whose close checkpoints the WAL): no -wal is left.
    void closingTheWindowLeavesTheMainFileWhole()
    {
        Fixture f;
        {
            ShownWindow shownWindow(f.path);
            QVERIFY(shownWindow.snapshot());
            QSignalSpy edited(&shownWindow.w, &MainWindow::runsEdited);
            shownWindow.w.housekeeping()->renameRun(f.runs[2], QStringLiteral("kept-in-main"));
            QVERIFY(edited.wait(10'000));
            QCOMPARE(edited.back().at(0).toString(), QString());
            QVERIFY(QFileInfo::exists(f.path + QStringLiteral("-wal")));
        }
        QVERIFY(!QFileInfo::exists(f.path + QStringLiteral("-wal")));
        QVERIFY(!QFileInfo::exists(f.path + QStringLiteral("-shm")));
        QTemporaryDir elsewhere;
        const QString copy = elsewhere.filePath(QStringLiteral("copy.sqlite"));
        QVERIFY(QFile::copy(f.path, copy));
        QCOMPARE(TrackingStore::open(copy, TrackingStore::Mode::ReadOnly)->run(f.runs[2])->name,
                 QStringLiteral("kept-in-main"));
    }
    // Issue 41: right-click on a pinned column (name, status, the sweep's metric) opens the same
    // run menu as on a param cell, for the run of that row.
    void pinnedColumnsHaveTheRunMenu()
    {
        Fixture f;
        ShownWindow shownWindow(f.path);
        QVERIFY(shownWindow.snapshot());
        MainWindow &window = shownWindow.w;
        auto *view = qobject_cast<RunsTableView *>(window.runsPage()->view());
        QVERIFY(view);
        QTableView *pinned = view->pinnedView();
        QVERIFY(pinned->isVisible());
        const QModelIndex name = pinned->model()->index(2, 0);
        const RunId run = name.data(RunsTableModel::RunIdRole).toLongLong();
        QVERIFY(run);
        const QPoint at = pinned->visualRect(name).center();
        QVERIFY(pinned->viewport()->rect().contains(at));
        QVERIFY(window.findChildren<QMenu *>(QStringLiteral("runMenu")).isEmpty());
        Q_EMIT pinned->customContextMenuRequested(at);
        const QList<QMenu *> menus = window.findChildren<QMenu *>(QStringLiteral("runMenu"));
        QCOMPARE(menus.size(), 1);
        QTRY_VERIFY(menus.front()->isVisible());
        QCOMPARE(menus.front()->property("runs").value<QList<RunId>>(), QList<RunId>{run});
        QVERIFY(menus.front()->findChild<QAction *>(QStringLiteral("rename")));
        menus.front()->close();
    }
    // Issue 41: the Tags dialog opens with the run's tags (its own to edit, the system's named);
    // a deleted line removes that tag, an edited one changes it.
    void tagsDialogShowsAndEditsTheRunsTags()
    {
        Fixture f;
        TrackingStore::open(f.path)->setTags(f.runs[4],
                                             {{QStringLiteral("team"), QStringLiteral("video")},
                                              {QStringLiteral("gpu"), QStringLiteral("h200")}});
        ShownWindow shownWindow(f.path);
        QVERIFY(shownWindow.snapshot());
        MainWindow &window = shownWindow.w;
        QSignalSpy edited(&window, &MainWindow::runsEdited);
        std::unique_ptr<QMenu> menu(window.housekeeping()->runMenu({f.runs[4]}, &window));
        QString shown;
        // The dialog is modal (exec): answered from the event loop it runs, once it is there.
        QTimer answer;
        answer.setInterval(20);
        connect(&answer, &QTimer::timeout, &window, [&] {
            auto *dialog = window.findChild<QInputDialog *>(QStringLiteral("tagsDialog"));
            if (!dialog || !dialog->isVisible())
                return;
            answer.stop();
            shown = dialog->textValue();
            dialog->setTextValue(QStringLiteral("team=audio\n"));
            dialog->accept();
        });
        answer.start();
        menu->findChild<QAction *>(QStringLiteral("tags"))->trigger();
        QVERIFY(edited.wait(10'000));
        QCOMPARE(shown, QStringLiteral("gpu=h200\nteam=video\n"));
        QCOMPARE(edited.back().at(0).toString(), QString());
        const auto tags = TrackingStore::open(f.path)->details(f.runs[4]).tags;
        QCOMPARE(tags.value(QStringLiteral("team")), QStringLiteral("audio"));
        QVERIFY(!tags.contains(QStringLiteral("gpu")));
    }
    // Issue 41: File → Export sweep report writes the page `orrery sweep report` writes (one
    // operation, two faces): the same bytes but for the time it was written.
    void exportReportIsTheCliReport()
    {
        Fixture f;
        ShownWindow shownWindow(f.path);
        QVERIFY(shownWindow.snapshot());
        QSignalSpy exported(&shownWindow.w, &MainWindow::reportExported);
        const QString gui = f.dir.filePath(QStringLiteral("gui.html")),
                      cli = f.dir.filePath(QStringLiteral("cli.html"));
        shownWindow.w.sweepMenu()->exportReport(f.sweep, gui);
        QVERIFY(exported.wait(30'000));
        QCOMPARE(exported.front().at(1).toString(), QString());
        const orrery::test::Ran r = orrery::test::runProcess(
            qEnvironmentVariable("ORRERY_CLI"),
            {QStringLiteral("--db"), f.path, QStringLiteral("sweep"), QStringLiteral("report"),
             QString::number(f.sweep), QStringLiteral("-o"), cli});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        auto read = [](const QString &path) {
            QFile file(path);
            file.open(QIODevice::ReadOnly);
            static const QRegularExpression written(QStringLiteral("written [0-9T:Z-]+"));
            return QString::fromUtf8(file.readAll()).replace(written, QStringLiteral("written …"));
        };
        const QString page = read(gui);
        QCOMPARE(page, read(cli));
        QCOMPARE(page.count(QStringLiteral("<td class=\"state-completed\">")), f.runs.size());
        QVERIFY(page.contains(QStringLiteral("<svg class=\"chart\" data-metric=\"loss\"")));
    }
};

ORRERY_TEST_MAIN(TestTriage, QApplication)
#include "tst_triage.moc"
