// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

// Databases for the workbench's GUI tests, written through the real TrackingStore API (so what a
// view reads is what Orrery writes), and a Compare view wired as the window wires it.
//
// Fixture: experiment "shapes", grid sweep "lr-sweep" over optim.lr (7 values, log) x seed (3),
//   model.width constant; 21 finished runs of 100 steps of `loss` (lossAt), names lr<i>-s<seed>.
// addCommandSweep: a finished command sweep with many constant params and one failed trial, the
//   database a day of real use ends with (the params of unrelated runs must not flood a view).

#include "compareview.h"
#include "mainwindow.h"
#include "runselection.h"
#include "runstablemodel.h"
#include "snapshot.h"
#include "storereader.h"

#include "orrery/core/store.h"

#include <QDir>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

namespace orrery::test {

using namespace orrery::core;
using namespace orrery::gui;

constexpr double kLrs[] = {1e-5, 3e-5, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2};
constexpr int kSeeds = 3;

// A value per (lr index, seed, step) the tests recompute independently.
inline double lossAt(int lr, int seed, qint64 step)
{
    return 2.0 / (1.0 + 0.01 * double(step) * (lr + 1)) + 0.05 * seed + 0.01 * std::sin(double(step));
}

struct Fixture {
    QTemporaryDir dir;
    QString path;
    QList<RunId> runs;  // lr-major, then seed
    SweepId sweep = 0;

    Fixture()
    {
        path = dir.filePath(QStringLiteral("workbench.sqlite"));
        auto store = TrackingStore::open(path);
        const ExperimentId e = store->ensureExperiment(QStringLiteral("shapes"));
        Sweep s;
        s.name = QStringLiteral("lr-sweep");
        s.experimentId = e;
        s.method = QStringLiteral("grid");
        s.metricName = QStringLiteral("loss");
        s.metricGoal = orrery::core::Goal::Minimize;
        s.state = QStringLiteral("finished");
        s.trialCount = int(std::size(kLrs)) * kSeeds;
        s.spec =
            QStringLiteral("name: lr-sweep\nmethod: grid\nmetric: {name: loss, goal: minimize}\n"
                           "parameters:\n  optim.lr: {values: [1e-5, 3e-5, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2]}\n"
                           "  seed: {values: [0, 1, 2]}\n  model.width: {value: 64}\n");
        sweep = store->createSweep(s);
        int index = 0;
        for (int lr = 0; lr < int(std::size(kLrs)); ++lr)
            for (int seed = 0; seed < kSeeds; ++seed) {
                const RunId r = store->createRun(e, QStringLiteral("lr%1-s%2").arg(lr).arg(seed),
                                                 1'700'000'000'000 + index);
                store->logParams(r,
                                 {{QStringLiteral("optim.lr"), QString::number(kLrs[lr])},
                                  {QStringLiteral("seed"), QString::number(seed)},
                                  {QStringLiteral("model.width"), QStringLiteral("64")}});
                QList<std::pair<QString, MetricPoint>> pts;
                for (qint64 step = 0; step < 100; ++step)
                    pts.push_back({QStringLiteral("loss"),
                                   {step, 1'700'000'000'000 + step * 1000, lossAt(lr, seed, step)}});
                store->logMetrics(r, pts);
                store->endRun(r, RunStatus::Finished);
                Trial t;
                t.sweepId = sweep;
                t.params = QStringLiteral(R"({"optim.lr": %1, "seed": %2, "model.width": 64})")
                               .arg(kLrs[lr])
                               .arg(seed);
                t.index = index++;
                t.runId = r;
                t.setState(TrialState::Completed);
                if (index == 6)  // runs[5]: its health check failed on one of two nodes
                    t.health = QStringLiteral(
                        R"j({"node1":{"pass":true,"device":"cpu","matmul_gflops":12.5,"duration_ms":800},)j"
                        R"j("node2":{"pass":false,"reason":"cpu: matmul result off by 0.5","device":"cpu"}})j");
                store->addTrial(t);
                runs.push_back(r);
            }
    }
};

inline Snapshot snapshotOf(const QString &path, const RunQuery &q = {})
{
    auto store = TrackingStore::open(path);
    return readSnapshot(*store, q);
}

// A view over the fixture's store with the three shared parts the window would give it.
struct Compare {
    StoreReader reader;
    RunSelection selection;
    RunsTableModel runs;
    CompareView view{&reader, &selection, &runs};

    explicit Compare(const QString &path)
    {
        QSignalSpy opened(&reader, &StoreReader::opened);
        reader.open(path);
        opened.wait(10'000);
        const Snapshot s = snapshotOf(path);
        runs.setRuns(s.runs, s.paramKeys, s.metricKeys);
        view.resize(1000, 800);
        view.show();
        view.setMetricKeys(s.metricKeys);
    }
    // The window's part of a refresh (MainWindow::showSnapshot): the runs model gets a new
    // snapshot, its sweeps first, and the view the snapshot's metric keys.
    void load(const QString &path)
    {
        const Snapshot s = snapshotOf(path);
        runs.setSweeps(s.index());
        runs.setRuns(s.runs, s.paramKeys, s.metricKeys);
        view.setMetricKeys(s.metricKeys);
    }
    // Waits for the re-query (any) that follows an action.
    bool settle(int before)
    {
        return QTest::qWaitFor([&] { return view.completedQueries() > before; }, 10'000) &&
            (QTest::qWait(50), true);  // a query already queued behind it lands too
    }
};

// A finished command sweep "cmd-sweep" in experiment `experiment` (created if needed): `trials`
// trials swept over train.lr (log values) and train.batch, each run also logging `constants`
// constant params (cfg.k00 ...) and `train/loss` for 50 steps; trial `failed` (-1: none) failed
// with "exit 3" and a stderr.log in its run dir ending in a Python traceback. Run dirs are made
// under `root`.
struct CommandSweep {
    SweepId sweep = 0;
    QList<RunId> runs;  // by trial index
};
inline CommandSweep addCommandSweep(TrackingStore &store, const QString &root, int trials = 4,
                                    int constants = 50, int failed = 1,
                                    const QString &experiment = QStringLiteral("cmd"))
{
    static constexpr double kCmdLrs[] = {1e-4, 1e-3, 1e-2};
    const ExperimentId e = store.ensureExperiment(experiment);
    Sweep s;
    s.name = QStringLiteral("cmd-sweep");
    s.experimentId = e;
    s.method = QStringLiteral("grid");
    s.metricName = QStringLiteral("train/loss");
    s.metricGoal = Goal::Minimize;
    s.state = QStringLiteral("finished");
    s.trialCount = trials;
    s.spec = QStringLiteral("name: cmd-sweep\nmethod: grid\ncommand: [python3, train.py]\n"
                            "metric: {name: train/loss, goal: minimize}\nparameters:\n"
                            "  train.lr: {values: [1e-4, 1e-3, 1e-2]}\n  train.batch: {values: [8, 16]}\n");
    CommandSweep out;
    out.sweep = store.createSweep(s);
    for (int i = 0; i < trials; ++i) {
        const double lr = kCmdLrs[i % 3];
        const int batch = i % 2 ? 16 : 8;
        const QString runDir = QDir(root).filePath(QStringLiteral("cmd/%1").arg(i));
        QDir().mkpath(runDir);
        const RunId r =
            store.createRun(e, QStringLiteral("cmd-%1").arg(i), 1'710'000'000'000 + i * 1000, runDir);
        QList<std::pair<QString, QString>> params = {{QStringLiteral("train.lr"), QString::number(lr)},
                                                     {QStringLiteral("train.batch"), QString::number(batch)}};
        for (int k = 0; k < constants; ++k)
            params.push_back({QStringLiteral("cfg.k%1").arg(k, 2, 10, QLatin1Char('0')), QString::number(k)});
        store.logParams(r, params);
        QList<std::pair<QString, MetricPoint>> pts;
        const int steps = i == failed ? 20 : 50;
        for (qint64 step = 0; step < steps; ++step)
            pts.push_back(
                {QStringLiteral("train/loss"),
                 {step, 1'710'000'000'000 + i * 1000 + step * 500, 1.0 / (1.0 + 0.05 * step * (i + 1))}});
        store.logMetrics(r, pts);
        Trial t;
        t.sweepId = out.sweep;
        t.index = i;
        t.runId = r;
        t.runDir = runDir;
        t.params = QStringLiteral(R"({"train.lr": %1, "train.batch": %2})").arg(lr).arg(batch);
        t.submittedMs = 1'710'000'000'000 + i * 1000;
        t.startedMs = t.submittedMs + 100;
        t.endedMs = t.submittedMs + 30'000;
        t.nodes = QStringLiteral("localhost");
        if (i == failed) {
            t.setState(TrialState::Failed);
            t.exitReason = QStringLiteral("exit 3");
            QFile err(QDir(runDir).filePath(QStringLiteral("stderr.log")));
            if (err.open(QIODevice::WriteOnly))
                err.write("Traceback (most recent call last):\n  File \"train.py\", line 12, in <module>\n"
                          "    main()\nValueError: batch 16 does not divide the dataset\n");
            store.endRun(r, RunStatus::Failed, t.endedMs);
        } else {
            t.setState(TrialState::Completed);
            store.endRun(r, RunStatus::Finished, t.endedMs);
        }
        store.addTrial(t);
        out.runs.push_back(r);
    }
    return out;
}

// The whole window on a database, shown, not following (the tests write the store themselves);
// snapshot() waits for the next snapshot it shows.
struct ShownWindow {
    gui::MainWindow w;
    QSignalSpy shown{&w, &gui::MainWindow::snapshotShown};
    explicit ShownWindow(const QString &path) : w(path)
    {
        w.setFollowing(false);
        w.tabs()->setCurrentIndex(gui::MainWindow::RunsTab);
        w.resize(1200, 700);
        w.show();
    }
    bool snapshot() { return shown.wait(10'000); }
};

}  // namespace orrery::test
