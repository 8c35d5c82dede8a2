// SPDX-License-Identifier: GPL-3.0-or-later
// The main window, offscreen: the Environment tab fills from the same checks as `orrery doctor`,
// off the UI thread, and its model obeys the QAbstractItemModel contract.
#include "testsupport.h"

#include "compareview.h"
#include "environmentmodel.h"
#include "follower.h"
#include "mainwindow.h"

#include "orrery/core/paths.h"
#include "orrery/core/store.h"
#include "orrery/remote/diagnostics.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QFileInfo>
#include <QLineEdit>
#include <QSettings>
#include <QSignalSpy>
#include <QSlider>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QToolButton>

#include <cstdlib>

using orrery::core::Check;
using orrery::gui::EnvironmentModel;
using orrery::gui::MainWindow;

class TestMainWindow : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;  // the windows' databases, gone with the test
private Q_SLOTS:
    // The window's settings live in Orrery's config directory (core::guiSettingsPath), not in
    // QSettings' default "Unknown Organization" folder; what an earlier version left there is taken
    // over once. Qt's test mode (testsupport.h) puts both under ~/.qttest/config.
    void settingsLiveInOrrerysConfigDirectory()
    {
        QTemporaryDir config;
        orrery::core::applyApplicationIdentity();
        const QString file = orrery::core::guiSettingsPath();
        QVERIFY2(file.endsWith(QLatin1String("/orrery/orrery.conf")), qPrintable(file));
        QFile::remove(file);
        {
            QSettings former;  // where the settings went before
            QVERIFY2(former.fileName().endsWith(QLatin1String("/Unknown Organization/orrery.conf")),
                     qPrintable(former.fileName()));
            former.clear();
            former.setValue(QStringLiteral("window/tab"), int(MainWindow::CompareTab));
        }
        const QString db = config.filePath(QStringLiteral("s.sqlite"));
        {
            MainWindow window(db);
            window.setFollowing(false);
            QCOMPARE(window.tabs()->currentIndex(), int(MainWindow::CompareTab));
            window.show();
            window.tabs()->setCurrentIndex(MainWindow::VideoTab);
            QVERIFY(window.close());
        }
        QVERIFY2(QFile::exists(file), qPrintable(file));
        QCOMPARE(QSettings(file, QSettings::IniFormat).value(QStringLiteral("window/tab")).toInt(),
                 int(MainWindow::VideoTab));
        QCOMPARE(QSettings().value(QStringLiteral("window/tab")).toInt(), int(MainWindow::CompareTab));
        {
            MainWindow again(db);  // the new file wins from now on
            again.setFollowing(false);
            QCOMPARE(again.tabs()->currentIndex(), int(MainWindow::VideoTab));
        }
        QFile::remove(file);
        QSettings().clear();
    }

    void environmentModelContract()
    {
        EnvironmentModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setChecks(
            {Check{QStringLiteral("a"), Check::Status::Ok, QStringLiteral("1"), {}},
             Check{QStringLiteral("b"), Check::Status::Failed, QStringLiteral("2"), QStringLiteral("fix")}});
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(model.index(1, EnvironmentModel::StatusColumn).data().toString(), QStringLiteral("FAIL"));
        QCOMPARE(model.index(1, EnvironmentModel::DetailColumn).data().toString(), QStringLiteral("2 — fix"));
        model.setChecks({});
        QCOMPARE(model.rowCount(), 0);
    }

    // The follower's notices become desktop notifications (docs/gui.md): the window asks for one
    // per notice. CI has no notification daemon nor tray, so the request is what is checked.
    // File → Import takes an MLflow store too, through the same core::importSources and
    // importMlflowRuns as `orrery runs ingest` (whose points tst_sweep_mlflow compares with real
    // MLflow's read-back): here an mlruns file store in MLflow's layout, written by hand.
    void importTakesAnMlflowStore()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const auto write = [&](const QString &name, const QByteArray &text) {
            const QString path = dir.filePath(name);
            QDir().mkpath(QFileInfo(path).absolutePath());
            QFile f(path);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(text);
        };
        write(QStringLiteral("mlruns/3/meta.yaml"),
              "experiment_id: '3'\nname: animate\nlifecycle_stage: active\n");
        write(QStringLiteral("mlruns/3/abc123/meta.yaml"),
              "run_uuid: abc123\nrun_name: stage1\nstatus: 3\nstart_time: 1700000000000\n"
              "end_time: 1700000100000\nlifecycle_stage: active\n");
        write(QStringLiteral("mlruns/3/abc123/metrics/train_loss"),
              "1700000001000 0.9 1\n1700000002000 0.7 2\n1700000003000 0.5 3\n");
        write(QStringLiteral("mlruns/3/abc123/params/lr"), "0.001");
        const QString db = dir.filePath(QStringLiteral("orrery.sqlite"));
        MainWindow window(db);
        window.setFollowing(false);
        QSignalSpy done(&window, &MainWindow::importFinished);
        window.importRunDirectories(dir.path(), QStringLiteral("Default"));
        QVERIFY(done.wait(20'000));
        QCOMPARE(done[0][0].toInt(), 1);
        QCOMPARE(done[0][1].toInt(), 3);
        auto store = orrery::core::TrackingStore::open(db, orrery::core::TrackingStore::Mode::ReadOnly);
        const auto run = store->findRun(QStringLiteral("stage1"));
        QVERIFY(run);
        QCOMPARE(store->allPoints(run->id, QStringLiteral("train_loss")).size(), std::size_t(3));
        QCOMPARE(store->details(run->id).params.value(QStringLiteral("lr")), QStringLiteral("0.001"));
    }

    void noticesBecomeDesktopNotifications()
    {
        MainWindow window(m_tmp.filePath(QStringLiteral("window-n.sqlite")));
        window.setFollowing(false);
        QSignalSpy asked(&window, &MainWindow::desktopNotification);
        auto *follower = window.findChild<orrery::gui::Follower *>();
        QVERIFY(follower);
        orrery::gui::FollowSummary s;
        orrery::core::Notice hung;
        hung.kind = orrery::core::Notice::Kind::TrialHung;
        hung.sweep = QStringLiteral("tiny-lr");
        hung.trial = 3;
        hung.message = QStringLiteral("trial 3 hung: no progress for 12m00s (hang_timeout 10m00s)");
        orrery::core::Notice ended = hung;
        ended.kind = orrery::core::Notice::Kind::SweepEnded;
        ended.trial.reset();
        ended.message = QStringLiteral("tiny-lr finished: 4 completed");
        s.notices = {hung, ended};
        Q_EMIT follower->ticked(s);
        QCOMPARE(asked.size(), 2);
        QCOMPARE(asked[0][0].toString(), QStringLiteral("Orrery: tiny-lr"));
        QCOMPARE(asked[0][1].toString(), hung.message);
        QCOMPARE(asked[1][1].toString(), ended.message);
        Q_EMIT follower->ticked(orrery::gui::FollowSummary{});  // a tick without notices asks nothing
        QCOMPARE(asked.size(), 2);
    }

    // The window fits a 1,366 px laptop screen with both docks open, on every tab: the docks'
    // minimums are small (they open wider), the Video tab's file actions are one menu. It was
    // 1,632 px at least, wider than the 1,500 px screen it was tried on.
    void theWindowFitsALaptopScreenOnEveryTab()
    {
        MainWindow window(m_tmp.filePath(QStringLiteral("window-w.sqlite")));
        window.setFollowing(false);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        for (int tab = 0; tab < window.tabs()->count(); ++tab) {
            window.tabs()->setCurrentIndex(tab);
            QCoreApplication::processEvents();
            const int least = window.minimumSizeHint().width();
            QVERIFY2(least <= 1366,
                     qPrintable(QStringLiteral("%1 tab: the window is at least %2 px wide")
                                    .arg(window.tabs()->tabText(tab))
                                    .arg(least)));
        }
        // At that width Compare's bar keeps every control usable: the smoothing slider was
        // squeezed to a 15 px handle.
        window.resize(1366, 768);
        window.tabs()->setCurrentIndex(MainWindow::CompareTab);
        QCoreApplication::processEvents();
        auto *smoothing = window.findChild<QSlider *>(QStringLiteral("smoothSlider"));
        QVERIFY(smoothing);
        QVERIFY2(smoothing->width() >= 80, qPrintable(QString::number(smoothing->width())));
    }

    // In a 1,400 px window with both docks open, Video needs more room than Runs and squeezes the
    // docks (Compare does not); back on Runs they have their widths again (they stayed squeezed).
    void theDocksKeepTheirWidthsAcrossTabs()
    {
        MainWindow window(m_tmp.filePath(QStringLiteral("window-d.sqlite")));
        QSignalSpy shown(&window, &MainWindow::snapshotShown);
        window.setFollowing(false);
        window.resize(1400, 900);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(shown.wait(30'000));  // the docks' opening widths are set then
        auto *tree = window.findChild<QDockWidget *>(QStringLiteral("treeDock"));
        auto *details = window.findChild<QDockWidget *>(QStringLiteral("detailsDock"));
        QVERIFY(tree && details);
        window.resizeDocks({tree, details}, {420, 330}, Qt::Horizontal);
        QTRY_VERIFY2(std::abs(tree->width() - 420) <= 4, qPrintable(QString::number(tree->width())));
        const int treeWidth = tree->width(), detailsWidth = details->width();

        // Compare's bar of controls takes a second row instead (it made the window 1,327 px wide
        // at least, and squeezed the docks to their minimums here).
        window.tabs()->setCurrentIndex(MainWindow::CompareTab);
        auto *search = window.findChild<QLineEdit *>(QStringLiteral("metricSearch"));
        auto *group = window.findChild<QComboBox *>(QStringLiteral("compareGroupBox"));
        auto *exportButton = window.findChild<QToolButton *>(QStringLiteral("exportButton"));
        QVERIFY(search && group && exportButton);
        const auto top = [&window](const QWidget *w) { return w->mapTo(&window, QPoint(0, 0)).y(); };
        QTRY_VERIFY2(top(group) > top(search) + search->height() / 2,
                     qPrintable(QStringLiteral("%1 vs %2").arg(top(group)).arg(top(search))));
        QCOMPARE(tree->width(), treeWidth);
        QCOMPARE(details->width(), detailsWidth);
        const QRect view = window.compareView()->rect();
        QVERIFY(view.contains(
            QRect(exportButton->mapTo(window.compareView(), QPoint(0, 0)), exportButton->size())));
        QVERIFY(window.findChild<QSlider *>(QStringLiteral("smoothSlider"))->width() >= 80);

        window.tabs()->setCurrentIndex(MainWindow::VideoTab);
        QTRY_VERIFY2(tree->width() + details->width() < treeWidth + detailsWidth - 50,
                     qPrintable(QStringLiteral("%1 + %2").arg(tree->width()).arg(details->width())));
        window.tabs()->setCurrentIndex(MainWindow::RunsTab);
        QTRY_COMPARE(tree->width(), treeWidth);
        QTRY_COMPARE(details->width(), detailsWidth);

        window.resize(2400, 900);  // room for Compare's bar on one row
        window.tabs()->setCurrentIndex(MainWindow::CompareTab);
        QTRY_VERIFY2(std::abs(top(group) - top(search)) < search->height() / 2,
                     qPrintable(QStringLiteral("%1 vs %2").arg(top(group)).arg(top(search))));
    }

    void environmentTabShowsTheDoctorChecks()
    {
        MainWindow window(m_tmp.filePath(QStringLiteral("window.sqlite")));
        // Not yet asked for: the window is made, its first snapshot is not shown.
        QVERIFY2(!window.statusBar()->currentMessage().contains(QLatin1String("environment")),
                 qPrintable(window.statusBar()->currentMessage()));
        QSignalSpy refreshed(&window, &MainWindow::environmentRefreshed);
        QSignalSpy shown(&window, &MainWindow::snapshotShown);
        window.setFollowing(false);
        window.tabs()->setCurrentIndex(MainWindow::EnvironmentTab);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        // The checks start orrery-train (LibTorch loads in a few seconds) on a pool thread, and
        // only once the first snapshot is shown: they would take a core from its read.
        QVERIFY(refreshed.wait(60'000));
        QCOMPARE(shown.size(), 1);
        const QList<Check> expected = orrery::remote::environmentChecks();
        EnvironmentModel *model = window.environmentModel();
        QCOMPARE(model->rowCount(), expected.size());
        for (int row = 0; row < model->rowCount(); ++row)
            QCOMPARE(model->index(row, EnvironmentModel::NameColumn).data().toString(), expected[row].name);
        auto *view = window.findChild<QTableView *>(QStringLiteral("environmentView"));
        QVERIFY(view);
        QVERIFY(view->isVisible());

        // A screenshot for people to look at (CTest sets the directory; kept with the build).
        const QString shots = qEnvironmentVariable("ORRERY_TEST_SCREENSHOTS");
        if (!shots.isEmpty()) {
            QDir().mkpath(shots);
            QVERIFY(window.grab().save(QDir(shots).filePath(QStringLiteral("mainwindow-environment.png"))));
        }
    }
};

ORRERY_TEST_MAIN(TestMainWindow, QApplication)
#include "tst_mainwindow.moc"
