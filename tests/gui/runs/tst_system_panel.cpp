// SPDX-License-Identifier: GPL-3.0-or-later
// The System dock (issue 31, triage): a run's CPU, memory and GPU use over time from the `system`
// events of its events.jsonl, ingested by the real TrackingStore as the follower ingests them,
// read through the window's StoreReader; an empty state for a run without them; and in the window
// a "System" dock tabified with Details that follows the current run.
#include "testsupport.h"

#include "mainwindow.h"
#include "runselection.h"
#include "storereader.h"
#include "systempanel.h"

#include "orrery/core/store.h"

#include <QApplication>
#include <QDir>
#include <QDockWidget>
#include <QSignalSpy>
#include <QTemporaryDir>

#include "qcp.h"

using namespace orrery::core;
using orrery::gui::MainWindow;
using orrery::gui::StoreReader;
using orrery::gui::SystemPanel;

namespace {

constexpr double kStart = 1'790'000'000.0;  // unix s of the first event

// What orrery-train rank 0 writes (docs/trainer.md "System metrics"): a start, metrics every few
// steps and, between them, `system` events without a step — 2 nodes' processes and 2 GPUs.
QByteArray trainerEvents(int samples)
{
    QByteArray out = QStringLiteral("{\"v\":1,\"t\":%1,\"kind\":\"start\",\"params\":{\"optim.lr\":0.001}}\n")
                         .arg(kStart, 0, 'f', 3)
                         .toUtf8();
    for (int i = 0; i < samples; ++i) {
        const double t = kStart + 15.0 * (i + 1);
        out += QStringLiteral(
                   "{\"v\":1,\"t\":%1,\"kind\":\"metrics\",\"step\":%2,\"values\":{\"train/loss\":%3}}\n")
                   .arg(t - 1, 0, 'f', 3)
                   .arg(10 * (i + 1))
                   .arg(1.0 / (i + 1))
                   .toUtf8();
        out += QStringLiteral(
                   "{\"v\":1,\"t\":%1,\"kind\":\"system\",\"values\":{"
                   "\"node0/cpu_pct\":%2,\"node0/rss_gb\":%3,\"node1/cpu_pct\":%4,\"node1/rss_gb\":2.0,"
                   "\"gpu0/util\":%5,\"gpu0/mem_gb\":30.5,\"gpu0/power_w\":%6,"
                   "\"gpu1/util\":88,\"gpu1/mem_gb\":31.5,\"gpu1/power_w\":290}}\n")
                   .arg(t, 0, 'f', 3)
                   .arg(150 + i)
                   .arg(2.5 + 0.1 * i)
                   .arg(140 + i)
                   .arg(90 - i)
                   .arg(300 + i)
                   .toUtf8();
    }
    return out;
}

struct Store {
    QTemporaryDir dir;
    QString path;
    RunId withSystem = 0, without = 0;

    Store()
    {
        path = dir.filePath(QStringLiteral("system.sqlite"));
        auto store = TrackingStore::open(path);
        const ExperimentId e = store->ensureExperiment(QStringLiteral("shapes"));
        withSystem = store->createRun(e, QStringLiteral("trainer-run"), qint64(kStart * 1000));
        const QByteArray events = trainerEvents(4);
        const IngestResult r = store->ingestEvents(withSystem, QStringLiteral("events.jsonl"), 0, events);
        if (!r.applied || r.malformed)
            qFatal("the fixture's events did not ingest");
        // A command sweep's run: metrics, never a system event.
        without = store->createRun(e, QStringLiteral("script-run"), qint64(kStart * 1000));
        store->logMetrics(without, {{QStringLiteral("loss"), {1, qint64(kStart * 1000), 0.5}}});
    }
};

QCustomPlot *chart(const SystemPanel &panel, const char *figure)
{
    return panel.findChild<QCustomPlot *>(QStringLiteral("systemChart_%1").arg(QLatin1String(figure)));
}

}  // namespace

class TestSystemPanel : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void keysAreFiledUnderTheirFigure()
    {
        QCOMPARE(SystemPanel::figureOf(QStringLiteral("node0/cpu_pct")), QStringLiteral("cpu"));
        QCOMPARE(SystemPanel::figureOf(QStringLiteral("node12/rss_gb")), QStringLiteral("memory"));
        QCOMPARE(SystemPanel::figureOf(QStringLiteral("gpu3/util")), QStringLiteral("gpu_util"));
        QCOMPARE(SystemPanel::figureOf(QStringLiteral("gpu0/mem_gb")), QStringLiteral("gpu_mem"));
        QCOMPARE(SystemPanel::figureOf(QStringLiteral("gpu0/power_w")), QStringLiteral("gpu_power"));
        QCOMPARE(SystemPanel::figureOf(QStringLiteral("perf/gpu_mem_gb")), QString());
        QCOMPARE(SystemPanel::figureOf(QStringLiteral("train/loss")), QString());
    }

    void aRunsSystemEventsOverTime()
    {
        Store store;
        StoreReader reader;
        QSignalSpy opened(&reader, &StoreReader::opened);
        reader.open(store.path, TrackingStore::Mode::ReadOnly);
        QVERIFY(opened.wait(10'000));
        SystemPanel panel(&reader);
        panel.resize(400, 900);
        panel.show();
        QVERIFY(panel.emptyText().contains(QLatin1String("Select a run")));

        QSignalSpy shown(&panel, &SystemPanel::shown);
        panel.showRun(store.withSystem);
        QVERIFY(shown.wait(10'000));
        QCOMPARE(panel.emptyText(), QString());
        QCOMPARE(panel.chartTitles(),
                 (QStringList{QStringLiteral("CPU (% of one core)"), QStringLiteral("Memory (GB resident)"),
                              QStringLiteral("GPU utilisation (%)"), QStringLiteral("GPU memory (GB used)"),
                              QStringLiteral("GPU power (W)")}));
        QCOMPARE(panel.linesOf(QStringLiteral("CPU (% of one core)")),
                 (QStringList{QStringLiteral("node0"), QStringLiteral("node1")}));
        QCOMPARE(panel.linesOf(QStringLiteral("GPU power (W)")),
                 (QStringList{QStringLiteral("gpu0"), QStringLiteral("gpu1")}));

        // The values as written, at minutes since the first sample (one every 15 s).
        QCustomPlot *cpu = chart(panel, "cpu");
        QVERIFY(cpu);
        QCOMPARE(cpu->graphCount(), 2);
        const auto data = cpu->graph(0)->data();
        QCOMPARE(data->size(), 4);
        for (int i = 0; i < 4; ++i) {
            QCOMPARE(data->at(i)->value, 150.0 + i);
            QVERIFY(qAbs(data->at(i)->key - 0.25 * i) < 1e-6);
        }
        QCustomPlot *power = chart(panel, "gpu_power");
        QVERIFY(power);
        QCOMPARE(power->graph(0)->data()->at(3)->value, 303.0);
        // The newest sample is inside the axis, not on its edge.
        QVERIFY(power->xAxis->range().upper > 0.75);

        // A run with no system events says so instead of empty charts.
        panel.showRun(store.without);
        QVERIFY(shown.wait(10'000));
        QVERIFY(panel.chartTitles().isEmpty());
        QVERIFY2(panel.emptyText().startsWith(QLatin1String("This run has no system metrics")),
                 qPrintable(panel.emptyText()));
    }

    // In the window: a "System" dock beside Details, following the current run.
    void theWindowsDockFollowsTheCurrentRun()
    {
        Store store;
        MainWindow window(store.path);
        window.setFollowing(false);
        QSignalSpy snapshot(&window, &MainWindow::snapshotShown);
        window.show();
        QVERIFY(snapshot.wait(20'000));
        auto *dock = window.findChild<QDockWidget *>(QStringLiteral("systemDock"));
        auto *details = window.findChild<QDockWidget *>(QStringLiteral("detailsDock"));
        QVERIFY(dock && details);
        QCOMPARE(dock->windowTitle(), QStringLiteral("System"));
        QVERIFY(window.tabifiedDockWidgets(details).contains(dock));
        SystemPanel *panel = window.systemPanel();
        QCOMPARE(dock->widget(), panel);

        // Behind Details it reads nothing; raised, it reads the current run.
        details->raise();
        QSignalSpy shown(panel, &SystemPanel::shown);
        window.selection()->select({store.withSystem}, nullptr, store.withSystem);
        QTest::qWait(200);
        QVERIFY(panel->chartTitles().isEmpty());
        dock->raise();
        QTRY_VERIFY_WITH_TIMEOUT(panel->run() == store.withSystem && panel->chartTitles().size() == 5,
                                 10'000);
        // A screenshot for people to look at (CTest sets the directory; kept with the build).
        if (const QString shots = qEnvironmentVariable("ORRERY_TEST_SCREENSHOTS"); !shots.isEmpty()) {
            QDir().mkpath(shots);
            QVERIFY(window.grab().save(QDir(shots).filePath(QStringLiteral("mainwindow-system-dock.png"))));
        }
        window.selection()->select({store.without}, nullptr, store.without);
        QTRY_VERIFY_WITH_TIMEOUT(panel->run() == store.without && !panel->emptyText().isEmpty(), 10'000);
        QVERIFY(window.close());
    }
};

ORRERY_TEST_MAIN(TestSystemPanel, QApplication)
#include "tst_system_panel.moc"
