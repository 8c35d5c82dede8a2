// SPDX-License-Identifier: GPL-3.0-or-later
// `orrery sweep report` (issue 41): one self-contained HTML page of a sweep — its table, charts,
// parallel coordinates, importance, the best runs' sample videos embedded — written from a real
// store by the CLI and opened in a real headless browser (Debian's chromium-headless-shell,
// scripts/setup): the charts are drawn, every video plays, nothing is fetched from elsewhere and
// the page logs no error.
#include "testsupport.h"

#include "orrery/core/store.h"
#include "orrery/core/sweepreport.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QUrl>

using namespace orrery::core;

namespace {

struct ReportFixture {
    QTemporaryDir dir;
    QString db;
    SweepId sweep = 0;
    QList<RunId> runs;

    ReportFixture()
    {
        db = dir.filePath(QStringLiteral("orrery.sqlite"));
        auto store = TrackingStore::open(db);
        const ExperimentId exp = store->ensureExperiment(QStringLiteral("shapes <video>"));
        Sweep s;
        s.name = QStringLiteral("lr-sweep");
        s.experimentId = exp;
        s.method = QStringLiteral("grid");
        s.state = QStringLiteral("finished");
        s.metricName = QStringLiteral("eval/loss");
        s.metricGoal = Goal::Minimize;
        s.spec = QStringLiteral("name: lr-sweep\nmethod: grid\nmetric: {name: eval/loss, goal: minimize}\n"
                                "parameters:\n  optim.lr: {values: [0.0001, 0.0003, 0.001, 0.003, 0.01]}\n");
        s.trialCount = 5;
        s.rootDir = dir.filePath(QStringLiteral("sweep"));
        sweep = store->createSweep(s);
        const double lrs[] = {1e-4, 3e-4, 1e-3, 3e-3, 1e-2};
        for (int i = 0; i < 5; ++i) {
            const QString runDir = dir.filePath(QStringLiteral("sweep/%1").arg(i));
            QDir().mkpath(runDir + QStringLiteral("/samples"));
            const RunId r =
                store->createRun(exp, QStringLiteral("lr%1").arg(i), 1'700'000'000'000 + i, runDir);
            store->logParams(r,
                             {{QStringLiteral("optim.lr"), QString::number(lrs[i])},
                              {QStringLiteral("model.width"), QStringLiteral("64")}});
            QList<std::pair<QString, MetricPoint>> pts;
            for (qint64 step = 0; step < 50; ++step) {
                pts.push_back({QStringLiteral("train/loss"),
                               {step, 1'700'000'000'000 + step * 1000, 1.0 / double(step + 1 + i)}});
                if (step % 10 == 9)
                    pts.push_back({QStringLiteral("eval/loss"),
                                   {step, 1'700'000'000'000 + step * 1000, 0.5 + 0.1 * i - step * 0.001}});
            }
            store->logMetrics(r, pts);
            // A real H.264 clip as its sample at step 49.
            const QString video = runDir + QStringLiteral("/samples/step-49.mp4");
            QFile::copy(orrery::test::sourceFile(QStringLiteral("tests/data/clip.mp4")), video);
            Artifact a;
            a.path = QStringLiteral("samples/step-49.mp4");
            a.kind = QStringLiteral("video");
            a.step = 49;
            a.remotePath = video;
            a.size = QFileInfo(video).size();
            store->addArtifact(r, a);
            store->endRun(r, RunStatus::Finished, 1'700'000'100'000);
            Trial t;
            t.sweepId = sweep;
            t.index = i;
            t.runId = r;
            t.setState(TrialState::Completed);
            t.params = QStringLiteral("{\"optim.lr\": %1, \"model.width\": 64}").arg(lrs[i]);
            t.runDir = runDir;
            t.startedMs = 1'700'000'000'000;
            t.endedMs = 1'700'000'100'000;
            t.gpus = 1;
            store->addTrial(t);
            runs.append(r);
        }
    }
};

QString browser()
{
    for (const char *name : {"chromium-headless-shell", "chromium"})
        if (const QString found = QStandardPaths::findExecutable(QString::fromLatin1(name)); !found.isEmpty())
            return found;
    return {};
}

}  // namespace

class TestSweepReport : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void reportIsOneSelfContainedPage()
    {
        ReportFixture f;
        const QString page = f.dir.filePath(QStringLiteral("report.html"));
        const auto r = orrery::test::runProcess(qEnvironmentVariable("ORRERY_CLI"),
                                                {QStringLiteral("--db"), f.db, QStringLiteral("sweep"),
                                                 QStringLiteral("report"), QStringLiteral("lr-sweep"),
                                                 QStringLiteral("-o"), page});
        QVERIFY2(r.code == 0, qPrintable(r.err + r.out));
        QFile file(page);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QString html = QString::fromUtf8(file.readAll());
        // The table: a row per trial, the swept param as a column, the best first in the summary.
        QCOMPARE(html.count(QStringLiteral("<td class=\"state-completed\">")), 5);
        QVERIFY(html.contains(QStringLiteral("<th>optim.lr</th>")));
        QVERIFY(!html.contains(QStringLiteral("<th>model.width</th>")));  // the same in every trial
        QVERIFY(html.contains(QStringLiteral("0.451 — lr0")));
        // Names are data: escaped, never markup.
        QVERIFY(html.contains(QStringLiteral("shapes &lt;video&gt;")));
        QVERIFY(!html.contains(QStringLiteral("shapes <video>")));
        // Charts: the sweep's metric first, a curve per run; parallel coordinates; importance.
        const qsizetype first = html.indexOf(QStringLiteral("data-metric=\"eval/loss\""));
        QVERIFY(first > 0 && first < html.indexOf(QStringLiteral("data-metric=\"train/loss\"")));
        QCOMPARE(html.count(QStringLiteral("<path class=\"curve\"")), 10);
        QCOMPARE(html.count(QStringLiteral("<path class=\"pline\"")), 5);
        QVERIFY(html.contains(QStringLiteral("optim.lr (log)")));
        QVERIFY(html.contains(QStringLiteral("<table class=\"importance\">")));
        // The four best runs' videos (the default), embedded.
        QCOMPARE(html.count(QStringLiteral("<video ")), 4);
        QCOMPARE(html.count(QStringLiteral("src=\"data:video/mp4;base64,")), 4);
        // Nothing from elsewhere: no URL but SVG's namespace.
        QString stripped = html;
        stripped.remove(QStringLiteral("http://www.w3.org/2000/svg"));
        QVERIFY2(!stripped.contains(QStringLiteral("http://")) &&
                     !stripped.contains(QStringLiteral("https://")),
                 "the page names a URL");
        QVERIFY(!html.contains(QStringLiteral("<link")));

        // In a real browser: charts drawn, each video loaded and playable, no console message.
        const QString chromium = browser();
        if (chromium.isEmpty())
            QSKIP("no chromium-headless-shell here (scripts/setup installs it)");
        const auto shown = orrery::test::runProcess(
            chromium,
            {QStringLiteral("--no-sandbox"), QStringLiteral("--disable-gpu"),
             QStringLiteral("--enable-logging=stderr"), QStringLiteral("--v=0"),
             QStringLiteral("--virtual-time-budget=10000"),
             QStringLiteral("--user-data-dir=") + f.dir.filePath(QStringLiteral("chromium")),
             QStringLiteral("--dump-dom"), QUrl::fromLocalFile(page).toString()},
            {}, QProcessEnvironment::systemEnvironment(), 120'000);
        QCOMPARE(shown.code, 0);
        const QString dom = shown.out;
        QCOMPARE(dom.count(QStringLiteral("data-ready=\"1\"")), 4);
        QVERIFY2(!dom.contains(QStringLiteral("data-ready=\"error\"")), "a video cannot be played");
        QVERIFY2(
            dom.contains(QStringLiteral("data-charts=\"10\"")),
            qPrintable(QRegularExpression(QStringLiteral("data-charts=\"[^\"]*\"")).match(dom).captured()));
        const QStringList console = shown.err.split(QLatin1Char('\n')).filter(QStringLiteral("CONSOLE"));
        QVERIFY2(console.isEmpty(), qPrintable(console.join(QLatin1Char('\n'))));
        // A picture of the page for people to look at (CTest sets the directory).
        if (const QString shots = qEnvironmentVariable("ORRERY_TEST_SCREENSHOTS"); !shots.isEmpty())
            orrery::test::runProcess(
                chromium,
                {QStringLiteral("--no-sandbox"), QStringLiteral("--disable-gpu"),
                 QStringLiteral("--hide-scrollbars"), QStringLiteral("--window-size=1280,2600"),
                 QStringLiteral("--virtual-time-budget=5000"),
                 QStringLiteral("--user-data-dir=") + f.dir.filePath(QStringLiteral("chromium")),
                 QStringLiteral("--screenshot=") + QDir(shots).filePath(QStringLiteral("sweep-report.png")),
                 QUrl::fromLocalFile(page).toString()},
                {}, QProcessEnvironment::systemEnvironment(), 120'000);
    }

    // A sample too large to embed, or gone: the page says so and links nothing broken.
    void aSampleNotThereIsSaid()
    {
        ReportFixture f;
        auto store = TrackingStore::open(f.db, TrackingStore::Mode::ReadOnly);
        QFile::remove(f.dir.filePath(QStringLiteral("sweep/0/samples/step-49.mp4")));
        ReportOptions options;
        options.videos = 2;
        SweepReport report = readSweepReport(*store, *store->sweep(f.sweep), options);
        QCOMPARE(report.media.size(), 2);
        QCOMPARE(report.media.front().run, f.runs[0]);  // the best first
        report.media.front().why = QStringLiteral("gone");
        const QString html = QString::fromUtf8(renderSweepReport(report));
        QVERIFY(html.contains(QStringLiteral("not embedded: gone")));
        QCOMPARE(html.count(QStringLiteral("<video ")), 0);  // no bytes read here: none embedded
    }
};

ORRERY_TEST_MAIN(TestSweepReport, QCoreApplication)
#include "tst_sweepreport.moc"
