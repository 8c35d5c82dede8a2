// SPDX-License-Identifier: GPL-3.0-or-later
//
// The workbench's figures (issue 12; bench/RESULTS.md "The desktop workbench"), offscreen, on
// this machine, in one go:
//   1. open a database of N runs (10,000) → the Runs table shows them (MainWindow, the real
//      store reader thread), median of 3 opens;
//   2. 20 runs × 1M points each in the Compare view: 200 pan/zoom steps, each timed from the
//      range change to the replot that shows the re-queried data; against the same steps
//      replotting the already fetched points without a re-query (what W&B and MLflow do);
//   3. the UI thread's longest stall while 100 runs are live: a writer thread stores 10 points
//      per run every 100 ms (what the follower's ingest does), the window refreshes once a
//      second (as it does after a follower tick with points) with 20 of those runs charted;
//      an event-loop probe (a 5 ms timer) measures how late the UI thread gets to it;
//   4. live latency: a writer thread stores 10 steps of each of the 100 live runs once a second
//      (as the follower ingests an active sweep: a tick a second) and then tells the window, as a
//      follower tick with points does (MainWindow::refreshSoon); each point is timed from its
//      commit to the replot of the followed Compare chart that shows it.
// Usage: bench_gui [--dir DIR] [--runs 10000] [--curves 20] [--points 1000000] [--steps 200]
//                  [--live 100] [--live-seconds 20] [--latency-seconds 30]
#include "compareview.h"
#include "guibench.h"
#include "mainwindow.h"
#include "runselection.h"
#include "runstablemodel.h"
#include "snapshot.h"
#include "storereader.h"

#include "orrery/core/store.h"

#include "qcp.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QSignalSpy>
#include <QTimer>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <deque>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

using namespace orrery::core;
using namespace orrery::bench;
using namespace orrery::gui;

namespace {

QString makeRunsDb(const QString &dir, int runs)
{
    const QString path = QDir(dir).filePath(QStringLiteral("runs-%1.sqlite").arg(runs));
    if (QFile::exists(path))
        return path;
    auto store = TrackingStore::open(path);
    const ExperimentId e = store->ensureExperiment(QStringLiteral("bench"));
    std::mt19937 rng(1);
    store->writeTransaction([&] {
        for (int i = 0; i < runs; ++i) {
            const RunId r =
                store->createRun(e, QStringLiteral("run-%1").arg(i), 1'700'000'000'000 + i * 1000);
            store->logParams(
                r,
                {{QStringLiteral("optim.lr"), QString::number(std::pow(10.0, -5 + 3.0 * (i % 97) / 97))},
                 {QStringLiteral("seed"), QString::number(i % 5)},
                 {QStringLiteral("model.channels"), QString::number(32 << (i % 3))},
                 {QStringLiteral("model.depth"), QString::number(2 + i % 4)},
                 {QStringLiteral("train.batch_size"), QString::number(8 << (i % 2))},
                 {QStringLiteral("data.frames"), QStringLiteral("16")}});
            QList<std::pair<QString, MetricPoint>> pts;
            for (qint64 s = 0; s < 20; ++s)
                for (const char *k : {"train/loss", "eval/loss", "eval/presence", "lr"})
                    pts.push_back({QLatin1String(k),
                                   {s * 50, 1'700'000'000'000 + s * 1000,
                                    std::uniform_real_distribution<>(0, 1)(rng)}});
            store->logMetrics(r, pts);
            store->endRun(r, RunStatus::Finished);
        }
    });
    return path;
}

// A fresh database of `live` running runs (lr and seed params; with `firstPoint`, a train/loss
// point at step 0 each), as the live parts' writer thread then feeds.
QString makeLiveDb(const QString &dir, const QString &name, int live, bool firstPoint, QList<RunId> *ids)
{
    const QString path = QDir(dir).filePath(name);
    for (const char *suffix : {"", "-wal", "-shm"})
        QFile::remove(path + QLatin1String(suffix));
    auto store = TrackingStore::open(path);
    const ExperimentId e = store->ensureExperiment(QStringLiteral("live"));
    for (int i = 0; i < live; ++i) {
        const RunId r = store->createRun(e, QStringLiteral("live-%1").arg(i));
        store->logParams(r,
                         {{QStringLiteral("optim.lr"), QString::number(1e-4 * (1 + i % 10))},
                          {QStringLiteral("seed"), QString::number(i / 10)}});
        if (firstPoint)
            store->logMetrics(
                r, {{QStringLiteral("train/loss"), {0, QDateTime::currentMSecsSinceEpoch(), 1.0}}});
        ids->push_back(r);
    }
    return path;
}

// One tick of the live runs: 10 more train/loss steps each from `step`, in one transaction.
void writeLiveSteps(TrackingStore &store, const QList<RunId> &ids, qint64 step)
{
    store.writeTransaction([&] {
        for (RunId r : ids) {
            QList<std::pair<QString, MetricPoint>> pts;
            for (int k = 0; k < 10; ++k)
                pts.push_back(
                    {QStringLiteral("train/loss"),
                     {step + k, QDateTime::currentMSecsSinceEpoch(), 1.0 / (1 + 0.001 * double(step + k))}});
            store.logMetrics(r, pts);
        }
    });
}

QString makeCurvesDb(const QString &dir, int curves, qint64 points, QList<RunId> *ids)
{
    const QString path = QDir(dir).filePath(QStringLiteral("curves-%1x%2.sqlite").arg(curves).arg(points));
    const bool exists = QFile::exists(path);
    auto store = TrackingStore::open(path);
    const ExperimentId e = store->ensureExperiment(QStringLiteral("curves"));
    if (exists) {
        for (const RunRow &r : store->queryRuns({}))
            ids->push_back(r.run.id);
        std::sort(ids->begin(), ids->end());
        return path;
    }
    std::mt19937 rng(2);
    std::normal_distribution<> noise(0, 0.02);
    for (int c = 0; c < curves; ++c) {
        const RunId r = store->createRun(e, QStringLiteral("curve-%1").arg(c), 1'700'000'000'000);
        ids->push_back(r);
        for (qint64 from = 0; from < points; from += 100'000) {
            QList<std::pair<QString, MetricPoint>> pts;
            for (qint64 s = from; s < std::min(points, from + 100'000); ++s) {
                double v = 2.0 / (1.0 + 1e-5 * double(s) * (c + 1)) + noise(rng);
                if (s % 99'991 == 7 * c)
                    v += 5;  // a one-step spike now and then
                pts.push_back({QStringLiteral("train/loss"), {s, 1'700'000'000'000 + s * 100, v}});
            }
            store->logMetrics(r, pts);
        }
    }
    return path;
}

}  // namespace

int main(int argc, char **argv)
{
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    QCommandLineParser p;
    const QCommandLineOption dirOpt(QStringLiteral("dir"), QStringLiteral("work directory"),
                                    QStringLiteral("DIR"),
                                    QDir::temp().filePath(QStringLiteral("orrery-bench-gui")));
    const QCommandLineOption runsOpt(QStringLiteral("runs"), QStringLiteral("runs in the table"),
                                     QStringLiteral("N"), QStringLiteral("10000"));
    const QCommandLineOption curvesOpt(QStringLiteral("curves"), QStringLiteral("curves charted"),
                                       QStringLiteral("N"), QStringLiteral("20"));
    const QCommandLineOption pointsOpt(QStringLiteral("points"), QStringLiteral("points per curve"),
                                       QStringLiteral("N"), QStringLiteral("1000000"));
    const QCommandLineOption stepsOpt(QStringLiteral("steps"), QStringLiteral("pan/zoom steps"),
                                      QStringLiteral("N"), QStringLiteral("200"));
    const QCommandLineOption liveOpt(QStringLiteral("live"), QStringLiteral("live runs"), QStringLiteral("N"),
                                     QStringLiteral("100"));
    const QCommandLineOption liveSecondsOpt(QStringLiteral("live-seconds"), QStringLiteral("how long"),
                                            QStringLiteral("S"), QStringLiteral("20"));
    const QCommandLineOption latencySecondsOpt(QStringLiteral("latency-seconds"),
                                               QStringLiteral("how long the live latency runs"),
                                               QStringLiteral("S"), QStringLiteral("30"));
    const QCommandLineOption onlyOpt(QStringLiteral("only"),
                                     QStringLiteral("run only these parts (e.g. 2,4)"),
                                     QStringLiteral("LIST"), QStringLiteral("1,2,3,4"));
    p.addOptions({dirOpt, runsOpt, curvesOpt, pointsOpt, stepsOpt, liveOpt, liveSecondsOpt, latencySecondsOpt,
                  onlyOpt});
    p.process(app);
    const QString dir = p.value(dirOpt);
    QDir().mkpath(dir);
    std::printf("# bench_gui: %d cores, offscreen, work dir %s\n", int(std::thread::hardware_concurrency()),
                qPrintable(dir));

    const QStringList only = p.value(onlyOpt).split(QLatin1Char(','));
    auto part = [&only](int n) { return only.contains(QString::number(n)); };

    // --- 1. open a database of N runs ------------------------------------------------------
    if (part(1)) {
        const int runs = p.value(runsOpt).toInt();
        QElapsedTimer make;
        make.start();
        const QString path = makeRunsDb(dir, runs);
        std::printf("# %d runs ready in %.1f s\n", runs, msSince(make) / 1000);
        std::vector<double> opens;
        for (int i = 0; i < 3; ++i) {
            QElapsedTimer t;
            t.start();
            MainWindow w(path);
            w.setFollowing(false);
            QSignalSpy shown(&w, &MainWindow::snapshotShown);
            w.show();
            if (!waitFor([&] { return !shown.isEmpty(); })) {
                std::fprintf(stderr, "the table never showed\n");
                return 1;
            }
            QCoreApplication::processEvents();  // the paint of the first rows
            opens.push_back(msSince(t));
            if (w.runsModel()->totalRuns() != runs) {
                std::fprintf(stderr, "table has %d runs, expected %d\n", w.runsModel()->totalRuns(), runs);
                return 1;
            }
        }
        std::printf("open %d runs -> table shown: median %.0f ms (runs: %.0f %.0f %.0f ms)\n", runs,
                    percentile(opens, 0.5), opens[0], opens[1], opens[2]);
    }

    // --- 2. pan/zoom over 20 x 1M points ------------------------------------------------------
    if (part(2)) {
        const int curves = p.value(curvesOpt).toInt();
        const qint64 points = p.value(pointsOpt).toLongLong();
        QList<RunId> ids;
        QElapsedTimer make;
        make.start();
        const QString path = makeCurvesDb(dir, curves, points, &ids);
        std::printf("# %d curves x %lld points ready in %.1f s\n", curves, points, msSince(make) / 1000);
        for (const bool requery : {true, false}) {
            StoreReader reader;
            QSignalSpy opened(&reader, &StoreReader::opened);
            reader.open(path);
            waitFor([&] { return !opened.isEmpty(); });
            RunSelection selection;
            RunsTableModel runs;
            {
                auto store = TrackingStore::open(path);
                const Snapshot s = readSnapshot(*store, {});
                runs.setRuns(s.runs, s.paramKeys, s.metricKeys);
            }
            CompareView view(&reader, &selection, &runs);
            view.resize(1400, 700);
            view.show();
            view.setMetricKeys({QStringLiteral("train/loss")});
            int before = view.completedQueries();
            QElapsedTimer first;
            first.start();
            selection.select(ids, nullptr);
            waitFor([&] { return view.completedQueries() > before; });
            const double firstMs = msSince(first);
            view.setRequeryOnZoom(requery);
            QCustomPlot *plot = view.charts().front();
            plot->replot(QCustomPlot::rpImmediateRefresh);
            double lo = 0, hi = double(points);
            std::vector<double> frames;
            std::mt19937 rng(3);
            const int steps = p.value(stepsOpt).toInt();
            int replots = 0;
            QObject::connect(plot, &QCustomPlot::afterReplot, [&replots] { ++replots; });
            QElapsedTimer pace;  // the steps come at 30 a second, as a steady wheel or drag does
            pace.start();
            for (int i = 0; i < steps; ++i) {
                // Zoom in 2x toward a random point for 8 steps, pan for 4, zoom back out for 8.
                const double span = hi - lo;
                const int phase = i % 20;
                if (phase < 8) {
                    const double at = lo + span * std::uniform_real_distribution<>(0.2, 0.8)(rng);
                    lo = at - span / 4;
                    hi = at + span / 4;
                } else if (phase < 12) {
                    lo += span * 0.1;
                    hi += span * 0.1;
                } else {
                    lo -= span / 2;
                    hi += span / 2;
                }
                lo = std::max(0.0, lo);
                hi = std::min(double(points), std::max(hi, lo + 10));
                waitFor([&] { return pace.nsecsElapsed() >= qint64(i) * 33'333'333; });
                before = view.completedQueries();
                const int replotsBefore = replots;
                QElapsedTimer t;
                t.start();
                double resultAt = -1;
                auto conn = QObject::connect(&view, &CompareView::queried, [&] {
                    if (resultAt < 0)
                        resultAt = msSince(t);
                });
                view.setXRange(lo, hi);
                if (!requery)
                    plot->replot(QCustomPlot::rpQueuedReplot);  // what a pan without re-query does
                // The frame ends when the chart has been repainted with this step's data.
                if (!waitFor([&] {
                        return (!requery || view.completedQueries() > before) && replots > replotsBefore;
                    })) {
                    std::fprintf(stderr, "a frame never came\n");
                    return 1;
                }
                QObject::disconnect(conn);
                frames.push_back(msSince(t));
                if (getenv("BENCH_DEBUG"))
                    std::fprintf(
                        stderr,
                        "frame %d (span %.0f): result at %.1f, replot done %.1f, start lateness %.1f\n", i,
                        hi - lo, resultAt, msSince(t), pace.nsecsElapsed() / 1e6 - i * 33.333 - msSince(t));
            }
            std::printf(
                "%s: first full query of %d curves %.0f ms; %d pan/zoom frames: p50 %.1f ms, p95 %.1f ms, "
                "max %.1f ms\n",
                requery ? "re-query per zoom (Orrery)" : "replot fetched points only (baseline)", curves,
                firstMs, steps, percentile(frames, 0.5), percentile(frames, 0.95), percentile(frames, 1.0));
        }
    }

    // --- 3. the UI thread while 100 runs are live ----------------------------------------------
    if (part(3)) {
        const int live = p.value(liveOpt).toInt();
        QList<RunId> ids;
        const QString path = makeLiveDb(dir, QStringLiteral("live.sqlite"), live, false, &ids);
        std::atomic<bool> stop{false};
        std::atomic<qint64> written{0};
        std::thread writer([&] {
            auto store = TrackingStore::open(path);
            qint64 step = 0;
            while (!stop.load()) {
                writeLiveSteps(*store, ids, step);
                step += 10;
                written += qint64(ids.size()) * 10;
                std::this_thread::sleep_for(std::chrono::milliseconds(100));
            }
        });
        MainWindow w(path);
        w.setFollowing(false);
        w.show();
        QSignalSpy shown(&w, &MainWindow::snapshotShown);
        waitFor([&] { return !shown.isEmpty(); });
        w.tabs()->setCurrentIndex(MainWindow::CompareTab);
        w.selection()->select(ids.mid(0, 20), nullptr);
        QTimer tick;  // what a follower tick with new points triggers
        QObject::connect(&tick, &QTimer::timeout, &w, &MainWindow::refresh);
        tick.start(1000);
        std::vector<double> lateness;
        QElapsedTimer clock;
        clock.start();
        double last = msSince(clock);
        QTimer probe;
        probe.setTimerType(Qt::PreciseTimer);
        double warmupMax = 0;  // the first 2 s: the Compare tab shown and drawn for the first time
        QObject::connect(&probe, &QTimer::timeout, [&] {
            const double now = msSince(clock);
            const double late = std::max(0.0, now - last - 5.0);

            if (now < 2000)
                warmupMax = std::max(warmupMax, late);
            else
                lateness.push_back(late);
            last = now;
        });
        probe.start(5);
        const int seconds = p.value(liveSecondsOpt).toInt();
        waitFor([&] { return clock.elapsed() > seconds * 1000; }, seconds * 1000 + 10'000);
        probe.stop();
        tick.stop();
        stop = true;
        writer.join();
        std::printf(
            "%d live runs (%lld points stored in %d s, 20 charted, a refresh a second): UI thread stall "
            "p99 %.1f ms, max %.1f ms over %zu probes after the first 2 s (in those, the Compare tab's first "
            "show and draw: max %.1f ms); %d snapshots shown\n",
            live, written.load(), seconds, percentile(lateness, 0.99), percentile(lateness, 1.0),
            lateness.size(), warmupMax, int(shown.size()));
    }

    // --- 4. live latency: a point stored -> painted on a followed chart ----------------------------
    if (part(4)) {
        const int live = p.value(liveOpt).toInt();
        QList<RunId> ids;
        const QString path = makeLiveDb(dir, QStringLiteral("latency.sqlite"), live, true, &ids);
        MainWindow w(path);
        w.setFollowing(false);  // the writer below stands in for the follower
        w.show();
        QSignalSpy shown(&w, &MainWindow::snapshotShown);
        waitFor([&] { return !shown.isEmpty(); });
        w.tabs()->setCurrentIndex(MainWindow::CompareTab);
        CompareView *view = w.compareView();
        const RunId watched = ids.front();
        w.selection()->select(ids.mid(0, 20), nullptr);
        waitFor([&] { return !view->charts().isEmpty() && !view->curve(0, watched).isEmpty(); });
        QElapsedTimer clock;
        clock.start();
        std::mutex mutex;
        std::deque<std::pair<qint64, double>> pending;  // (last step stored, ms at its commit)
        std::vector<double> latencies;
        QObject::connect(view->charts().front(), &QCustomPlot::afterReplot, view, [&] {
            const auto curve = view->curve(0, watched);
            if (curve.isEmpty() || !view->following())
                return;
            const double shownStep = curve.last().first, now = msSince(clock);
            const std::lock_guard lock(mutex);
            while (!pending.empty() && double(pending.front().first) <= shownStep) {
                latencies.push_back(now - pending.front().second);
                pending.pop_front();
            }
        });
        std::atomic<bool> stop{false};
        std::thread writer([&] {
            auto store = TrackingStore::open(path);
            std::mt19937 rng(4);
            qint64 step = 1;
            while (!stop.load()) {
                // A tick a second (the follower's pace while a sweep is active), not in step
                // with the window's timers.
                std::this_thread::sleep_for(
                    std::chrono::milliseconds(std::uniform_int_distribution<>(800, 1200)(rng)));
                writeLiveSteps(*store, ids, step);
                {
                    const std::lock_guard lock(mutex);
                    pending.push_back({step + 9, msSince(clock)});
                }
                step += 10;
                QMetaObject::invokeMethod(&w, &MainWindow::refreshSoon, Qt::QueuedConnection);
            }
        });
        const int seconds = p.value(latencySecondsOpt).toInt();
        waitFor([&] { return clock.elapsed() > seconds * 1000; }, seconds * 1000 + 10'000);
        stop = true;
        writer.join();
        waitFor(
            [&] {
                return !w.compareView()->following() || [&] {
                    const std::lock_guard lock(mutex);
                    return pending.empty();
                }();
            },
            5000);
        if (latencies.empty()) {
            std::fprintf(stderr, "no point was ever painted\n");
            return 1;
        }
        std::printf(
            "live latency, %d live runs (20 charted, followed), a store write + refreshSoon() a second: "
            "point stored -> painted p50 %.0f ms, p95 %.0f ms, max %.0f ms over %zu ticks\n",
            live, percentile(latencies, 0.5), percentile(latencies, 0.95), percentile(latencies, 1.0),
            latencies.size());
    }
    return 0;
}
