// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

// A tracking store with two sweeps, for the monitor's tests (model and tmux): written through
// the real TrackingStore API, so what the monitor reads is what Orrery writes.
//
// "lr-sweep" (running, local, eval/loss minimize), trials by their latest attempt:
//   0 completed  optim.lr=0.001   eval/loss falls 1.0 → 0.1234 over 40 steps (the best run)
//   1 completed  optim.lr=0.0003  ends at 0.25
//   2 running    optim.lr=0.0001  attempt 0 failed, attempt 1 running, at 0.5 (step 10)
//   3 pending    optim.lr=0.003   (no run yet)
//   4 failed     optim.lr=0.01    ends at nan
//   → done/running/queued/failed 2/1/1/1 of 5, best 0.1234
// "old-sweep" (completed, on cluster "fixture", eval/acc maximize): one trial, acc 0.75.
// Each trial carries its params (Trial::params, as the runner stores them from the plan); the
// runs carry the same as logged params (what the trainer's start event gives).

#include "orrery/core/store.h"

#include <QString>

namespace orrery::test {

struct MonitorStore {
    core::SweepId lrSweep = 0;
    core::SweepId oldSweep = 0;
};

// One attempt of a trial as the monitor tests need it.
inline core::Trial trial(core::SweepId sweep, int index, int attempt, core::RunId run, const QString &state,
                         const QString &reason, const QString &lr = {})
{
    core::Trial t;
    t.sweepId = sweep;
    t.index = index;
    t.attempt = attempt;
    t.runId = run;
    t.state = state;
    t.exitReason = reason;
    if (!lr.isEmpty())
        t.params = QStringLiteral("{\"optim.lr\": %1, \"seed\": 7}").arg(lr);
    return t;
}

// An active sweep of two trials of `steps` steps (train.steps), the first running and at step 20
// of train/loss, the second not submitted yet: what progress and ETAs are computed from.
struct ActiveSweep {
    core::SweepId sweep = 0;
    core::RunId run = 0;  // trial 0's
};
inline ActiveSweep writeActiveSweep(core::TrackingStore &store, int steps = 100)
{
    const core::ExperimentId e = store.ensureExperiment(QStringLiteral("e"));
    const QString config = QStringLiteral("train:\n  steps: %1\n").arg(steps);
    core::Sweep sw;
    sw.name = QStringLiteral("steps-sweep");
    sw.experimentId = e;
    sw.method = QStringLiteral("grid");
    sw.metricName = QStringLiteral("train/loss");
    sw.metricGoal = orrery::core::Goal::Minimize;
    sw.state = QStringLiteral("running");
    sw.trialCount = 2;
    sw.baseConfig = config;
    ActiveSweep a;
    a.sweep = store.createSweep(sw);
    a.run = store.createRun(e, QStringLiteral("t0"));
    store.logMetrics(a.run, {{QStringLiteral("train/loss"), {20, 1000, 0.5}}});
    core::Trial t =
        trial(a.sweep, 0, 0, a.run, QStringLiteral("running"), QString(), QStringLiteral("0.001"));
    t.config = config;
    store.addTrial(t);
    return a;
}

inline MonitorStore writeMonitorStore(const QString &path)
{
    using namespace orrery::core;
    auto store = TrackingStore::open(path);
    MonitorStore ids;
    const ExperimentId e = store->ensureExperiment(QStringLiteral("moving-shapes"));

    auto sweep = [&](const char *name, const char *metric, const char *goal, const char *cluster,
                     const char *state) {
        Sweep sw;
        sw.name = QString::fromLatin1(name);
        sw.experimentId = e;
        sw.method = QStringLiteral("grid");
        sw.metricName = QString::fromLatin1(metric);
        sw.metricGoal =
            orrery::core::goalFromText(QString::fromLatin1(goal)).value_or(orrery::core::Goal::Minimize);
        sw.cluster = QString::fromLatin1(cluster);
        sw.state = QString::fromLatin1(state);
        return store->createSweep(sw);
    };
    ids.oldSweep = sweep("old-sweep", "eval/acc", "maximize", "fixture", "completed");
    const RunId oldRun = store->createRun(e, QStringLiteral("old-0"));
    store->logMetrics(oldRun, {{QStringLiteral("eval/acc"), {5, 1000, 0.75}}});
    store->addTrial(trial(ids.oldSweep, 0, 0, oldRun, QStringLiteral("completed"), QString()));

    ids.lrSweep = sweep("lr-sweep", "eval/loss", "minimize", "", "running");

    auto run = [&](int index, const QString &lr) {
        const RunId r = store->createRun(e, QStringLiteral("lr-%1").arg(index));
        store->logParams(r,
                         {{QStringLiteral("optim.lr"), lr}, {QStringLiteral("seed"), QStringLiteral("7")}});
        return r;
    };
    const RunId r0 = run(0, QStringLiteral("0.001"));
    QList<std::pair<QString, MetricPoint>> points;
    for (int step = 1; step <= 40; ++step)
        points.append(
            {QStringLiteral("eval/loss"), {step, 1000 + step, 1.0 - (1.0 - 0.1234) * (step / 40.0)}});
    store->logMetrics(r0, points);
    store->addTrial(
        trial(ids.lrSweep, 0, 0, r0, QStringLiteral("completed"), QString(), QStringLiteral("0.001")));

    const RunId r1 = run(1, QStringLiteral("0.0003"));
    store->logMetrics(
        r1, {{QStringLiteral("eval/loss"), {1, 1000, 0.8}}, {QStringLiteral("eval/loss"), {20, 1020, 0.25}}});
    store->addTrial(
        trial(ids.lrSweep, 1, 0, r1, QStringLiteral("completed"), QString(), QStringLiteral("0.0003")));

    const RunId r2 = run(2, QStringLiteral("0.0001"));
    store->logMetrics(r2, {{QStringLiteral("eval/loss"), {10, 1010, 0.5}}});
    store->addTrial(trial(ids.lrSweep, 2, 0, r2, QStringLiteral("failed"), QStringLiteral("NODE_FAIL"),
                          QStringLiteral("0.0001")));
    store->addTrial(
        trial(ids.lrSweep, 2, 1, r2, QStringLiteral("running"), QString(), QStringLiteral("0.0001")));

    store->addTrial(
        trial(ids.lrSweep, 3, 0, 0, QStringLiteral("pending"), QString(), QStringLiteral("0.003")));

    const RunId r4 = run(4, QStringLiteral("0.01"));
    store->logMetrics(r4,
                      {{QStringLiteral("eval/loss"), {3, 1003, std::numeric_limits<double>::quiet_NaN()}}});
    store->addTrial(trial(ids.lrSweep, 4, 0, r4, QStringLiteral("failed"), QStringLiteral("exit 1"),
                          QStringLiteral("0.01")));
    return ids;
}

}  // namespace orrery::test
