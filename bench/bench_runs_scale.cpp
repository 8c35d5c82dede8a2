// SPDX-License-Identifier: GPL-3.0-or-later
//
// The Runs table at scale (issue 31; bench/RESULTS.md "The desktop workbench"), offscreen, in one
// go, over a database of 100,000 runs: 10 sweeps x 10,000 trials, heterogeneous params (each
// sweep 5 swept and 5 constant params of its own, plus the shared optim.lr and seed), 3 metrics:
//   1. window constructed → the first snapshot in the Runs table, painted (MainWindow with the
//      real store reader thread), median of 3 opens; the target is < 1 s;
//   2. a column change through the column chooser's API (show, then hide a param column), timed
//      to the repaint of the table, median and worst of 40; the target is < 100 ms.
// Usage: bench_runs_scale [--dir DIR] [--sweeps 10] [--trials 10000]
#include "columnchooser.h"
#include "guibench.h"
#include "mainwindow.h"
#include "runspage.h"
#include "runstablemodel.h"
#include "snapshot.h"
#include "sweeptreemodel.h"

#include "orrery/core/paths.h"
#include "orrery/core/store.h"
#include "orrery/core/sweepoverview.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QSettings>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>
#include <QTreeView>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <thread>
#include <vector>

using namespace orrery::core;
using namespace orrery::bench;
using namespace orrery::gui;

namespace {

QString makeDb(const QString &dir, int sweeps, int trials)
{
    const QString path = QDir(dir).filePath(QStringLiteral("runs-%1x%2.sqlite").arg(sweeps).arg(trials));
    if (QFile::exists(path)) {
        // A database written by an older build: migrated once here (the window's reader opens
        // it read-only, and a read-only open refuses an old schema).
        QElapsedTimer t;
        t.start();
        TrackingStore::open(path).reset();
        std::printf("# database opened read-write in %.0f ms (a migration included)\n", msSince(t));
        return path;
    }
    auto store = TrackingStore::open(path);
    const ExperimentId e = store->ensureExperiment(QStringLiteral("scale"));
    std::mt19937 rng(1);
    std::uniform_real_distribution<> unit(0, 1);
    for (int k = 0; k < sweeps; ++k) {
        const QString own = QStringLiteral("s%1").arg(k);
        Sweep s;
        s.name = QStringLiteral("sweep-%1").arg(k);
        s.experimentId = e;
        s.method = QStringLiteral("random");
        s.metricName = QStringLiteral("eval/loss");
        s.metricGoal = Goal::Minimize;
        s.state = QStringLiteral("finished");
        s.trialCount = trials;
        QString spec =
            QStringLiteral("name: %1\nmethod: random\nmetric: {name: eval/loss, goal: minimize}\n"
                           "parameters:\n  optim.lr: {distribution: log_uniform_values, min: 1e-5, "
                           "max: 1e-2}\n  seed: {values: [0, 1, 2, 3, 4]}\n")
                .arg(s.name);
        for (int p = 0; p < 5; ++p)
            spec +=
                QStringLiteral("  %1.p%2: {values: [1, 2, 3, 4]}\n  %1.c%2: {value: 7}\n").arg(own).arg(p);
        s.spec = spec;
        const SweepId sweep = store->createSweep(s);
        store->writeTransaction([&] {
            for (int i = 0; i < trials; ++i) {
                const RunId r = store->createRun(e, QStringLiteral("%1-%2").arg(s.name).arg(i),
                                                 1'700'000'000'000 + (k * trials + i) * 1000LL);
                QList<std::pair<QString, QString>> params{
                    {QStringLiteral("optim.lr"), QString::number(std::pow(10.0, -5 + 3 * unit(rng)))},
                    {QStringLiteral("seed"), QString::number(i % 5)}};
                for (int p = 0; p < 5; ++p) {
                    params.push_back(
                        {QStringLiteral("%1.p%2").arg(own).arg(p), QString::number(1 + (i + p) % 4)});
                    params.push_back({QStringLiteral("%1.c%2").arg(own).arg(p), QStringLiteral("7")});
                }
                store->logParams(r, params);
                QList<std::pair<QString, MetricPoint>> pts;
                for (const char *key : {"train/loss", "eval/loss", "perf/step_ms"})
                    pts.push_back({QLatin1String(key), {100, 1'700'000'000'000, unit(rng)}});
                store->logMetrics(r, pts);
                store->endRun(r, RunStatus::Finished);
                Trial t;
                t.sweepId = sweep;
                t.index = i;
                t.runId = r;
                t.params = QStringLiteral("{}");
                t.setState(TrialState::Completed);
                store->addTrial(t);
            }
        });
        std::printf("# sweep %d of %d written\n", k + 1, sweeps);
        std::fflush(stdout);
    }
    return path;
}

}  // namespace

int main(int argc, char **argv)
{
    qputenv("QT_QPA_PLATFORM", "offscreen");
    // The column choices the bench makes are saved as the window saves them: in a test config
    // directory, not the user's.
    QStandardPaths::setTestModeEnabled(true);
    QApplication app(argc, argv);
    orrery::core::applyApplicationIdentity();
    // Every open starts from the default columns, not from an earlier run's choices.
    QSettings(guiSettingsPath(), QSettings::IniFormat).remove(QStringLiteral("runsColumns"));
    QCommandLineParser p;
    const QCommandLineOption dirOpt(QStringLiteral("dir"), QStringLiteral("work directory"),
                                    QStringLiteral("DIR"),
                                    QDir::temp().filePath(QStringLiteral("orrery-bench-runs-scale")));
    const QCommandLineOption sweepsOpt(QStringLiteral("sweeps"), QStringLiteral("sweeps"),
                                       QStringLiteral("N"), QStringLiteral("10"));
    const QCommandLineOption trialsOpt(QStringLiteral("trials"), QStringLiteral("trials per sweep"),
                                       QStringLiteral("N"), QStringLiteral("10000"));
    p.addHelpOption();
    p.addOptions({dirOpt, sweepsOpt, trialsOpt});
    p.process(app);
    const QString dir = p.value(dirOpt);
    QDir().mkpath(dir);
    const int sweeps = p.value(sweepsOpt).toInt(), trials = p.value(trialsOpt).toInt();
    const int runs = sweeps * trials;
    std::printf("# bench_runs_scale: %d cores, offscreen, work dir %s\n",
                int(std::thread::hardware_concurrency()), qPrintable(dir));
    QElapsedTimer make;
    make.start();
    const QString path = makeDb(dir, sweeps, trials);
    std::printf("# %d runs (%d sweeps x %d) ready in %.1f s\n", runs, sweeps, trials, msSince(make) / 1000);

    // --- 0. where a snapshot's read goes (what the store reader thread does before the table) --
    {
        auto store = TrackingStore::open(path, TrackingStore::Mode::ReadOnly);
        QElapsedTimer t;
        t.start();
        const QList<Sweep> all = store->sweeps();
        for (const Sweep &sweep : all) {
            OverviewOptions options;
            options.bestVideo = false;
            const SweepOverview o = readSweepOverview(*store, sweep, options);
            (void)sweptParams(o.sweep, o.attempts);
        }
        const double overviews = msSince(t);
        // One sweep's overview in its parts: what it reads (every attempt; each trial's latest
        // metrics; the best run).
        t.restart();
        (void)store->trials(all.front().id);
        const double attempts = msSince(t);
        t.restart();
        (void)store->trialSummaries(all.front().id);
        const double summaries = msSince(t);
        t.restart();
        (void)store->bestRun(all.front().id);
        const double best = msSince(t);
        std::printf("# one sweep's overview reads: its attempts %.0f ms, trial summaries %.0f ms, "
                    "best run %.0f ms\n",
                    attempts, summaries, best);
        t.restart();
        RunQuery q;
        q.params = store->paramKeys();
        const double keys = msSince(t);
        t.restart();
        const QList<RunRow> rows = store->queryRuns(q);
        const double query = msSince(t);
        t.restart();
        const Snapshot whole = readSnapshot(*store, {});
        std::printf("# snapshot read: %.0f ms in all; %d sweep overviews %.0f ms, param keys %.0f ms, "
                    "queryRuns of %d runs with %d params %.0f ms\n",
                    msSince(t), int(all.size()), overviews, keys, int(rows.size()), int(q.params.size()),
                    query);
    }

    // --- 1. open → the Runs table shown -------------------------------------------------------
    std::vector<double> opens;
    for (int i = 0; i < 3; ++i) {
        QElapsedTimer t;
        t.start();
        MainWindow w(path);
        const double constructed = msSince(t);
        w.setFollowing(false);
        w.tabs()->setCurrentIndex(MainWindow::RunsTab);
        bool shown = false;
        QObject::connect(&w, &MainWindow::snapshotShown, &w, [&shown] { shown = true; });
        w.show();
        if (!waitFor([&] { return shown; }, 120'000)) {
            std::fprintf(stderr, "the table never showed\n");
            return 1;
        }
        w.runsPage()->view()->viewport()->repaint();  // the first rows painted
        opens.push_back(msSince(t));
        std::printf("# open %d: window constructed in %.0f ms, table shown at %.0f ms\n", i + 1, constructed,
                    opens.back());
        if (w.runsModel()->totalRuns() != runs) {
            std::fprintf(stderr, "table has %d runs, expected %d\n", w.runsModel()->totalRuns(), runs);
            return 1;
        }
        if (i == 0) {
            int shownColumns = 0;
            for (int c = 0; c < w.runsModel()->columnCount(); ++c)
                shownColumns += !w.runsPage()->view()->isColumnHidden(c);
            std::printf("# %d columns (%d params, %d metrics), %d shown by default; leading metric %s\n",
                        w.runsModel()->columnCount(), int(w.runsModel()->paramKeys().size()),
                        int(w.runsModel()->metricKeys().size()), shownColumns,
                        qPrintable(w.runsModel()->sweepMetric()));
        }
        if (i == 1) {
            // The price of making trial rows when a sweep is opened: expanding a 10,000-trial
            // sweep, to the tree's repaint.
            QTreeView *tree = w.sweepTree();
            const QModelIndex sweep =
                w.treeModel()->sweepIndex(w.runsModel()->sweeps().sweeps.front().sweep.id);
            QElapsedTimer e;
            e.start();
            tree->expand(sweep);
            tree->viewport()->repaint();
            std::printf("# expand a sweep of %d trials (its rows made) to the repaint: %.0f ms\n",
                        w.treeModel()->rowCount(sweep), msSince(e));
        }
        if (i < 2)
            continue;

        // --- 2. a column change through the chooser ------------------------------------------
        std::vector<double> changes;
        const QStringList keys = w.runsModel()->paramKeys();
        for (int n = 0; n < 40; ++n) {
            const QString key = QStringLiteral("param:") + keys[n / 2 % keys.size()];
            const bool show = n % 2 == 0;
            QElapsedTimer c;
            c.start();
            w.runsPage()->columnChooser()->setShown(key, show);
            w.runsPage()->view()->viewport()->repaint();
            changes.push_back(msSince(c));
        }
        std::printf("column change (chooser, show/hide a param, to the repaint): median %.1f ms, "
                    "worst %.1f ms over %d\n",
                    percentile(changes, 0.5), percentile(changes, 1.0), int(changes.size()));
    }
    std::printf("open %d runs -> Runs table shown: median %.0f ms (runs: %.0f %.0f %.0f ms)\n", runs,
                percentile(opens, 0.5), opens[0], opens[1], opens[2]);
    return 0;
}
