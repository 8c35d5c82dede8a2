// SPDX-License-Identifier: GPL-3.0-or-later
// Sweeps on the embedded default, end to end: the real `orrery` CLI and its detached local
// supervisor, the real trainer on CPU (the micro workload of tests/data/micro.yaml: a step in
// milliseconds), a real SQLite store. Faults are caused for real: a trial's process is SIGKILLed
// (as the OOM killer would), another gets SIGUSR1 (as Slurm's pre-timeout signal), a trial has a
// config that fails on every attempt. Every wait is for a state, bounded by a generous deadline;
// none assumes how fast this machine is.
#include "sweeptest.h"
#include "testsupport.h"

#include "orrery/core/healthreport.h"
#include "orrery/core/localexecutor.h"
#include "orrery/core/store.h"
#include "orrery/core/sweeprunner.h"
#include "orrery/core/usage.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QScopeGuard>
#include <QTemporaryDir>
#include <QThread>

#include <csignal>
#include <functional>

using namespace orrery::core;

namespace {

using orrery::test::cli;
using orrery::test::trainer;

struct Result {
    int code = -1;
    QString out, err;
};

// Trials the test must catch while they run (to kill, signal or stop them early) are this long:
// past their first checkpoint (step 10) or hyperband's first rung (15) they still have 135 steps
// to go, about 5 s at micro.yaml's 40 ms a step, while the runner ticks every 250 ms. A machine
// several times faster still leaves a second; a slower one only widens the window.
constexpr qint64 kLongSteps = 150;

class TestSweepLocal : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    std::optional<TrainerSchema> m_schema;

    QString db() const { return m_dir.filePath(QStringLiteral("orrery.sqlite")); }
    QString root() const { return m_dir.filePath(QStringLiteral("runs")); }

    Result run(const QStringList &args, int timeoutMs = 120'000)
    {
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("XDG_DATA_HOME"), m_dir.filePath(QStringLiteral("data")));
        env.insert(QStringLiteral("XDG_CONFIG_HOME"), m_dir.filePath(QStringLiteral("config")));
        p.setProcessEnvironment(env);
        p.start(cli(), QStringList{QStringLiteral("--db"), db()} + args);
        if (!p.waitForFinished(timeoutMs))
            p.kill();
        p.waitForFinished();
        return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1,
                QString::fromUtf8(p.readAllStandardOutput()), QString::fromUtf8(p.readAllStandardError())};
    }

    // A spec over the micro workload; `body` is the rest of the YAML.
    QString writeSpec(const QString &name, const QByteArray &body)
    {
        const QString path = m_dir.filePath(name + QStringLiteral(".yaml"));
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly))
            return {};
        f.write("trainer: {config: " + orrery::test::microConfigPath().toUtf8() + "}\n" + body);
        return path;
    }

    SubmitPlan plan(const QString &specPath)
    {
        SubmitPlan p;
        const SpecParse parsed = loadSweepSpec(specPath, *m_schema);
        if (!parsed.spec) {
            for (const SpecError &e : parsed.errors)
                qWarning("%s", qPrintable(e.toString()));
            return p;
        }
        p.spec = *parsed.spec;
        QFile spec(specPath), base(p.spec.trainerConfig);
        if (spec.open(QIODevice::ReadOnly))
            p.specYaml = spec.readAll();
        if (base.open(QIODevice::ReadOnly))
            p.baseConfig = base.readAll();
        return p;
    }

    // Ticks until `done` holds (or the sweep ends, or the time is up); returns whether it held.
    bool tickUntil(SweepRunner &runner, SweepId sweep, const std::function<bool()> &done,
                   int timeoutMs = 120'000, QStringList *events = nullptr)
    {
        QElapsedTimer timer;
        timer.start();
        while (timer.elapsed() < timeoutMs) {
            const TickReport r = runner.tick({sweep});
            for (const QString &e : r.events)
                qInfo("%s", qPrintable(e));
            for (const QString &e : r.errors)
                qWarning("%s", qPrintable(e));
            if (events)
                *events << r.events;
            if (done())
                return true;
            if (runner.isDone(sweep))
                return done();
            QThread::msleep(250);
        }
        return false;
    }

    static QMap<int, Trial> latest(TrackingStore &store, SweepId sweep)
    {
        QMap<int, Trial> out;
        for (const Trial &t : store.trials(sweep))
            out[t.index] = t;
        return out;
    }

    static qint64 taskPid(const Trial &t)
    {
        QFile f(t.task + QStringLiteral(".json"));
        if (!f.open(QIODevice::ReadOnly))
            return 0;
        return QJsonDocument::fromJson(f.readAll()).object().value(QLatin1String("pid")).toInteger();
    }

    static bool waitFor(const std::function<bool()> &done, int timeoutMs)
    {
        return orrery::test::waitFor(done, timeoutMs);
    }

    static qint64 lastStep(TrackingStore &store, RunId run)
    {
        qint64 step = -1;
        for (const LatestMetric &m : store.details(run).metrics)
            step = std::max<qint64>(step, m.last.step);
        return step;
    }

    // What a call refused with (its std::runtime_error's text), or empty when it did not.
    static QString refusal(const std::function<void()> &call)
    {
        try {
            call();
        } catch (const std::runtime_error &e) {
            return QString::fromUtf8(e.what());
        }
        return {};
    }

    // The checkpoint step the run's latest attempt resumed from (its orrery.resumed_from tag,
    // "step-N.ckpt"), or -1 when it started afresh.
    static qint64 resumedFromStep(TrackingStore &store, RunId run)
    {
        const QString from = store.details(run).tags.value(QStringLiteral("orrery.resumed_from"));
        if (!from.startsWith(QLatin1String("step-")))
            return -1;
        bool ok = false;
        const qint64 step = from.mid(5).section(QLatin1Char('.'), 0, 0).toLongLong(&ok);
        return ok ? step : -1;
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        ORRERY_REQUIRE_BUILT_PROGRAMS(m_schema);
    }

    // The README's path: submit returns at once, the trials run without anyone watching, watch
    // re-attaches and ends with the comparison and the best run's sample video. Hostile names
    // stay data all the way (directories, argv, the store).
    void submitDetachWatchThroughTheCli()
    {
        // A shell that ran this would create orrery-canary in its working directory: the test's,
        // the supervisor's or a run dir (all searched below).
        const QByteArray name = "q'uote \"dq\" $(touch orrery-canary) `touch orrery-canary` ;ls -x";
        const QByteArray hostile = QByteArray(name).replace("\"", "\\\"");  // inside YAML's double quotes
        const QString spec = writeSpec(QStringLiteral("cli"),
                                       "name: \"" + hostile +
                                           "\"\n"
                                           "experiment: \"exp " +
                                           hostile +
                                           "\"\n"
                                           "method: grid\n"
                                           "metric: {name: eval/loss, goal: minimize}\n"
                                           "parameters:\n"
                                           "  optim.lr: {values: [3e-4, 1e-3, 3e-3]}\n"
                                           "  train.steps: {value: 30}\n"
                                           "  train.log_every: {value: 5}\n"
                                           "max_concurrent: 2\n");
        const Result dry =
            run({QStringLiteral("sweep"), QStringLiteral("submit"), spec, QStringLiteral("--dry-run")});
        QVERIFY2(dry.code == 0, qPrintable(dry.err));
        QVERIFY(dry.out.contains(QLatin1String("dry run")));
        QVERIFY(dry.out.contains(QLatin1String("--resume auto")));
        QVERIFY(!QFileInfo::exists(db()) ||
                run({QStringLiteral("sweep"), QStringLiteral("list")}).out.count(QLatin1Char('\n')) <= 1);

        const Result submitted =
            run({QStringLiteral("sweep"), QStringLiteral("submit"), spec, QStringLiteral("--json")});
        QVERIFY2(submitted.code == 0, qPrintable(submitted.err));
        const QJsonObject sw = QJsonDocument::fromJson(submitted.out.toUtf8()).object();
        const int id = sw.value(QLatin1String("id")).toInt();
        QVERIFY(id > 0);
        QCOMPARE(sw.value(QLatin1String("trials")).toArray().size(), 3);
        // Detached: submit returned while every trial is still queued or running.
        for (const QJsonValue t : sw.value(QLatin1String("trials")).toArray())
            QVERIFY(t.toObject().value(QLatin1String("state")).toString() == QLatin1String("queued"));

        // Nobody follows, and the supervisor runs the trials: one of them logs steps.
        QVERIFY2(waitFor(
                     [&] {
                         auto store = TrackingStore::open(db(), TrackingStore::Mode::ReadOnly);
                         for (const Trial &t : store->trials(id)) {
                             QFile events(t.runDir + QStringLiteral("/events.jsonl"));
                             if (events.open(QIODevice::ReadOnly) && events.readAll().contains("\"metrics\""))
                                 return true;
                         }
                         return false;
                     },
                     120'000),
                 "no trial logged a step without a follower");
        // A brisk pace: the default backs off to 15 s between ticks, longer than these trials.
        const Result watched = run({QStringLiteral("sweep"), QStringLiteral("watch"), QString::number(id),
                                    QStringLiteral("--pace"), QStringLiteral("0.5,1")});
        QVERIFY2(watched.code == 0, qPrintable(watched.out + watched.err));
        QVERIFY2(watched.out.contains(QLatin1String("finished (3 completed")), qPrintable(watched.out));
        const qsizetype at = watched.out.indexOf(QLatin1String("sample video: "));
        QVERIFY2(at >= 0, qPrintable(watched.out));
        const QString video = watched.out.mid(at + 14).section(QLatin1Char('\n'), 0, 0);
        QVERIFY2(QFileInfo(video).size() > 0, qPrintable(video));

        const Result status = run({QStringLiteral("sweep"), QStringLiteral("status"), QString::number(id),
                                   QStringLiteral("--json")});
        QVERIFY2(status.code == 0, qPrintable(status.err));
        const QJsonObject st = QJsonDocument::fromJson(status.out.toUtf8()).object();
        QCOMPARE(st.value(QLatin1String("name")).toString(), QString::fromUtf8(name));
        QCOMPARE(st.value(QLatin1String("state")).toString(), QStringLiteral("finished"));
        double bestLatest = 1e300;
        for (const QJsonValue v : st.value(QLatin1String("trials")).toArray()) {
            const QJsonObject t = v.toObject();
            QCOMPARE(t.value(QLatin1String("state")).toString(), QStringLiteral("completed"));
            QCOMPARE(t.value(QLatin1String("step")).toInteger(), 30);
            QVERIFY(QFileInfo::exists(t.value(QLatin1String("run_dir")).toString() +
                                      QStringLiteral("/trial.yaml")));
            bestLatest = std::min(bestLatest, t.value(QLatin1String("latest")).toDouble());
        }
        QCOMPARE(st.value(QLatin1String("best")).toObject().value(QLatin1String("value")).toDouble(),
                 bestLatest);
        QVERIFY2(!QFileInfo::exists(QStringLiteral("orrery-canary")),
                 "a hostile name was executed by a shell");
        QDirIterator it(m_dir.path(), {QStringLiteral("orrery-canary")}, QDir::Files,
                        QDirIterator::Subdirectories);
        QVERIFY2(!it.hasNext(), "a hostile name was executed by a shell");

        // max_concurrent 2: never three runs alive at once (the runs' own start and end times).
        auto store = TrackingStore::open(db(), TrackingStore::Mode::ReadOnly);
        QList<std::pair<qint64, qint64>> spans;
        for (const Trial &t : store->trials(id)) {
            const auto r = store->run(t.runId);
            QVERIFY(r && r->endTimeMs > r->startTimeMs);
            spans.append({r->startTimeMs, r->endTimeMs});
        }
        for (const auto &s : spans) {
            int overlapping = 0;
            for (const auto &o : spans)
                overlapping += (o.first <= s.first && s.first < o.second) ? 1 : 0;
            QVERIFY2(overlapping <= 2, "more trials ran at once than max_concurrent");
        }

        const Result logs =
            run({QStringLiteral("sweep"), QStringLiteral("logs"), QString::number(id), QStringLiteral("1")});
        QVERIFY2(logs.code == 0, qPrintable(logs.err));
        QVERIFY2(logs.out.contains(QLatin1String("stderr.log")), qPrintable(logs.out));
        const Result list = run({QStringLiteral("sweep"), QStringLiteral("list")});
        QVERIFY(list.out.contains(QLatin1String("finished")));
    }

    // A trial SIGKILLed mid-run is resubmitted and resumes from its checkpoint; one that gets
    // the pre-timeout signal checkpoints, exits as preempted and comes back without using a
    // retry; metrics arrive while the trials run.
    void killedAndPreemptedTrialsResume()
    {
        const QString spec = writeSpec(QStringLiteral("faults"),
                                       "name: faults\nmethod: grid\n"
                                       "metric: {name: train/loss, goal: minimize}\n"
                                       "parameters:\n"
                                       "  optim.lr: {values: [1e-3, 2e-3]}\n"
                                       "  train.steps: {value: " +
                                           QByteArray::number(kLongSteps) +
                                           "}\n"
                                           "max_concurrent: 2\nretries: 1\n");
        const SubmitPlan p = plan(spec);
        QVERIFY(!p.specYaml.isEmpty());
        auto store = TrackingStore::open(db());
        LocalExecutor executor(trainer(), cli(), root());
        SweepRunner runner(*store, executor, *m_schema);
        const SweepId id = runner.submit(p);

        // Both running, both past a checkpoint, and their metrics in the store meanwhile.
        bool sawPointsWhileRunning = false;
        QVERIFY(tickUntil(runner, id, [&] {
            const auto t = latest(*store, id);
            bool ready = true;
            for (const Trial &x : t) {
                const qint64 step = lastStep(*store, x.runId);
                sawPointsWhileRunning |= x.state == QLatin1String("running") && step > 0;
                ready &= x.state == QLatin1String("running") && step >= 12 &&
                    QFileInfo::exists(x.runDir + QStringLiteral("/checkpoints/latest"));
            }
            return ready;
        }));
        QVERIFY(sawPointsWhileRunning);
        const auto before = latest(*store, id);
        const qint64 killed = taskPid(before[0]), preempted = taskPid(before[1]);
        QVERIFY(killed > 0 && preempted > 0);
        QCOMPARE(::kill(pid_t(killed), SIGKILL), 0);
        QCOMPARE(::kill(pid_t(preempted), SIGUSR1), 0);

        QStringList events;
        QVERIFY(tickUntil(
            runner, id, [&] { return runner.isDone(id); }, 120'000, &events));
        const QList<Trial> all = store->trials(id);
        QCOMPARE(all.size(), 4);  // two attempts each
        QCOMPARE(all[0].state, QStringLiteral("failed"));
        QVERIFY2(all[0].exitReason.contains(QLatin1String("SIGKILL")), qPrintable(all[0].exitReason));
        QCOMPARE(all[1].state, QStringLiteral("completed"));
        QCOMPARE(all[2].state, QStringLiteral("preempted"));
        QCOMPARE(all[3].state, QStringLiteral("completed"));
        for (const Trial &t : all)
            QCOMPARE(t.runId, all[t.index * 2].runId);  // one run per trial, across attempts
        for (int i = 0; i < 2; ++i) {
            const RunDetails d = store->details(all[i * 2].runId);
            QVERIFY2(d.tags.value(QStringLiteral("orrery.resumed_from")).startsWith(QLatin1String("step-")),
                     qPrintable(d.tags.value(QStringLiteral("orrery.resumed_from"))));
            QCOMPARE(lastStep(*store, all[i * 2].runId), kLongSteps);
            QCOMPARE(toString(d.run.status), toString(RunStatus::Finished));
        }
        QVERIFY(events.join(QLatin1Char('\n')).contains(QLatin1String("resuming from its checkpoint")));
        QCOMPARE(store->sweep(id)->state, QStringLiteral("finished"));
    }

    // A trial that fails the same way every time is not retried forever.
    void sameFailureTwiceStopsRetrying()
    {
        const QString spec = writeSpec(QStringLiteral("broken"),
                                       "name: broken\nmethod: grid\n"
                                       "parameters:\n"
                                       "  data.kind: {value: folder}\n"
                                       "  data.path: {value: /nonexistent/videos}\n"
                                       "retries: 5\n");
        auto store = TrackingStore::open(db());
        LocalExecutor executor(trainer(), cli(), root());
        SweepRunner runner(*store, executor, *m_schema);
        const SweepId id = runner.submit(plan(spec));
        QStringList events;
        QVERIFY(tickUntil(
            runner, id, [&] { return runner.isDone(id); }, 120'000, &events));
        const QList<Trial> all = store->trials(id);
        QCOMPARE(all.size(), 2);
        QCOMPARE(all[1].state, QStringLiteral("failed"));
        QCOMPARE(all[0].exitReason, all[1].exitReason);
        QVERIFY2(events.join(QLatin1Char('\n')).contains(QLatin1String("failed the same way twice")),
                 qPrintable(events.join(QLatin1Char('\n'))));
        QCOMPARE(store->sweep(id)->state, QStringLiteral("failed"));
    }

    // Hyperband stops the trial that learns nothing; the good one runs to its end.
    // The rungs are 15 and 30 values (max_iter 60, s 2), not open-ended: the per-batch diffusion
    // loss is so noisy at this size that the best of the first 60+ values favours lr 1e-7 (0.0881
    // against 0.0941), while the best of the first 15 and 30 favours lr 3e-3 (0.231 / 0.0964
    // against 0.257 / 0.1011; the same seed gives the same losses). With open rungs (min_iter),
    // a loaded machine that let lr 1e-7 run ahead moved the decision to rung 60 and stopped the
    // good trial (a trial is judged at the highest rung it reached, as in W&B's hyperband).
    void earlyStoppingCancelsTheBadTrial()
    {
        const QString spec = writeSpec(QStringLiteral("early"),
                                       "name: early\nmethod: grid\n"
                                       "metric: {name: train/loss, goal: minimize}\n"
                                       "parameters:\n"
                                       "  optim.lr: {values: [3e-3, 1e-7]}\n"
                                       "  train.steps: {value: " +
                                           QByteArray::number(kLongSteps) +
                                           "}\n"
                                           "early_terminate: {type: hyperband, max_iter: 60, s: 2, eta: 2}\n"
                                           "max_concurrent: 2\nretries: 2\n");
        auto store = TrackingStore::open(db());
        LocalExecutor executor(trainer(), cli(), root());
        SweepRunner runner(*store, executor, *m_schema);
        const SweepId id = runner.submit(plan(spec));
        QVERIFY(tickUntil(
            runner, id, [&] { return runner.isDone(id); }, 120'000));
        const auto t = latest(*store, id);
        QCOMPARE(t[1].state, QStringLiteral("stopped"));
        QVERIFY2(t[1].exitReason.startsWith(QLatin1String("stopped early")), qPrintable(t[1].exitReason));
        QCOMPARE(t[1].attempt, 0);  // a stopped trial is not retried
        QCOMPARE(t[0].state, QStringLiteral("completed"));
        QCOMPARE(toString(store->run(t[1].runId)->status), toString(RunStatus::Killed));
        QVERIFY(lastStep(*store, t[1].runId) < kLongSteps);
    }

    // The health check (docs/sweeps.md "Health check"), on by default for the trainer, runs before
    // each trial on this one node: the runner stores its verdict with the attempt. A node made bad
    // by the check's test hook (a broken device cannot be caused here) fails the attempt before
    // the trainer starts, with the node and cause in its exit.json.
    void theHealthCheckRunsFirstAndAFailingOneStopsTheTrial()
    {
        qputenv("SLURMD_NODENAME", "local-node");
        const auto restore = qScopeGuard([] {
            qunsetenv("SLURMD_NODENAME");
            qunsetenv("ORRERY_HEALTH_CHECK_FAIL");
        });
        auto store = TrackingStore::open(db());
        LocalExecutor executor(trainer(), cli(), root());
        SweepRunner runner(*store, executor, *m_schema);
        const QString good = writeSpec(QStringLiteral("healthy"),
                                       "name: healthy\nmethod: grid\nparameters:\n  train.steps: {value: 4}\n"
                                       "health_check: {cpu_memory_mb: 16}\n");
        const SweepId ok = runner.submit(plan(good));
        QVERIFY(tickUntil(runner, ok, [&] { return runner.isDone(ok); }));
        const Trial passed = latest(*store, ok)[0];
        QCOMPARE(passed.state, QStringLiteral("completed"));
        const QList<HealthNodeLine> nodes = healthNodes(passed.health);
        QCOMPARE(nodes.size(), 1);
        QCOMPARE(nodes[0].node, QStringLiteral("local-node"));
        QVERIFY(nodes[0].pass);
        QVERIFY2(nodes[0].figures.contains(QLatin1String("GFLOP/s")), qPrintable(nodes[0].figures));

        qputenv("ORRERY_HEALTH_CHECK_FAIL", "local-node");
        const QString bad = writeSpec(QStringLiteral("bad-node"),
                                      "name: bad-node\nmethod: grid\nparameters:\n  train.steps: {value: 4}\n"
                                      "health_check: {cpu_memory_mb: 16}\nretries: 0\n");
        const SweepId id = runner.submit(plan(bad));
        QVERIFY(tickUntil(runner, id, [&] { return runner.isDone(id); }));
        const Trial failed = latest(*store, id)[0];
        QCOMPARE(failed.state, QStringLiteral("failed"));
        QVERIFY2(failed.exitReason.startsWith(QLatin1String("health check failed on local-node")),
                 qPrintable(failed.exitReason));
        QVERIFY(!healthNodes(failed.health).isEmpty());
        QVERIFY(!healthNodes(failed.health).front().pass);
        // The trainer never started: no events.
        QVERIFY(!QFile::exists(QDir(failed.runDir).filePath(QStringLiteral("events.jsonl"))));
    }

    // The user stops one running trial: it checkpoints and ends stopped, tagged as the user's
    // doing, and the sweep goes on without it. What cannot be stopped or retried is refused with
    // the reason. Retried once the sweep has ended, the stopped trial re-opens the sweep, resumes
    // from its checkpoint and completes, and the sweep ends again.
    void userStopsATrialThenRetriesIt()
    {
        const QString spec = writeSpec(QStringLiteral("userstop"),
                                       "name: userstop\nmethod: grid\n"
                                       "metric: {name: train/loss, goal: minimize}\n"
                                       "parameters:\n"
                                       "  optim.lr: {values: [1e-3, 2e-3]}\n"
                                       "  train.steps: {value: " +
                                           QByteArray::number(kLongSteps) +
                                           "}\n"
                                           "max_concurrent: 2\nretries: 2\n");
        auto store = TrackingStore::open(db());
        LocalExecutor executor(trainer(), cli(), root());
        SweepRunner runner(*store, executor, *m_schema);
        const SweepId id = runner.submit(plan(spec));
        QVERIFY(tickUntil(runner, id, [&] {
            const auto t = latest(*store, id);
            return t[0].state == QLatin1String("running") && t[1].state == QLatin1String("running") &&
                lastStep(*store, t[0].runId) >= 12 &&
                QFileInfo::exists(t[0].runDir + QStringLiteral("/checkpoints/latest"));
        }));

        QCOMPARE(
            refusal([&] { runner.retryTrial(id, 1); }),
            QStringLiteral("trial 1 is running; only a failed, stopped or cancelled trial can be retried"));
        QCOMPARE(refusal([&] { runner.stopTrial(id, 7); }), QStringLiteral("sweep userstop has no trial 7"));
        QCOMPARE(refusal([&] { runner.stopTrial(id + 1000, 0); }),
                 QStringLiteral("no sweep %1").arg(id + 1000));
        runner.stopTrial(id, 0, QStringLiteral("diverging"));
        auto t = latest(*store, id);
        QCOMPARE(t[0].state, QStringLiteral("stopping"));
        QCOMPARE(t[0].exitReason, QStringLiteral("stopped by the user: diverging"));
        QCOMPARE(store->details(t[0].runId).tags.value(QStringLiteral("orrery.stopped_early")),
                 QStringLiteral("by the user"));
        QCOMPARE(refusal([&] { runner.stopTrial(id, 0); }),
                 QStringLiteral("trial 0 is stopping; only a queued or running trial can be stopped"));

        // The next ticks settle it as stopped while the other trial runs on to its end.
        bool stoppedWhileTheOtherRan = false;
        QVERIFY(tickUntil(runner, id, [&] {
            const auto now = latest(*store, id);
            stoppedWhileTheOtherRan |=
                now[0].state == QLatin1String("stopped") && now[1].state == QLatin1String("running");
            return runner.isDone(id);
        }));
        QVERIFY(stoppedWhileTheOtherRan);
        t = latest(*store, id);
        QCOMPARE(t[0].state, QStringLiteral("stopped"));
        QCOMPARE(t[0].attempt, 0);  // not resubmitted: the trainer's "preempted" was our SIGTERM
        QCOMPARE(t[0].exitReason, QStringLiteral("stopped by the user: diverging"));
        QCOMPARE(toString(store->run(t[0].runId)->status), toString(RunStatus::Killed));
        const qint64 stoppedAt = lastStep(*store, t[0].runId);
        QVERIFY2(stoppedAt >= 12 && stoppedAt < kLongSteps, qPrintable(QString::number(stoppedAt)));
        QCOMPARE(t[1].state, QStringLiteral("completed"));
        QCOMPARE(store->sweep(id)->state, QStringLiteral("finished"));
        QCOMPARE(store->sweep(id)->message, QStringLiteral("1 completed, 1 stopped early, 0 failed"));
        QCOMPARE(refusal([&] { runner.stopTrial(id, 1); }),
                 QStringLiteral("trial 1 is completed; only a queued or running trial can be stopped"));
        QCOMPARE(
            refusal([&] { runner.retryTrial(id, 1); }),
            QStringLiteral("trial 1 is completed; only a failed, stopped or cancelled trial can be retried"));

        runner.retryTrial(id, 0);
        QCOMPARE(store->sweep(id)->state, QStringLiteral("running"));  // followers pick it up again
        t = latest(*store, id);
        QCOMPARE(t[0].attempt, 1);
        QCOMPARE(t[0].state, QStringLiteral("queued"));
        QVERIFY(t[0].userRetry);
        QVERIFY(tickUntil(runner, id, [&] { return runner.isDone(id); }));
        const QList<Trial> all = store->trials(id);
        QCOMPARE(all.size(), 3);
        QCOMPARE(all[0].state, QStringLiteral("stopped"));
        QCOMPARE(all[1].state, QStringLiteral("completed"));
        QCOMPARE(all[1].index, 0);
        QCOMPARE(all[1].runId, all[0].runId);  // one run per trial, across attempts
        QCOMPARE(all[2].state, QStringLiteral("completed"));
        const qint64 resumedFrom = resumedFromStep(*store, all[1].runId);
        QVERIFY2(resumedFrom > 0 && resumedFrom <= stoppedAt,
                 qPrintable(store->details(all[1].runId).tags.value(QStringLiteral("orrery.resumed_from"))));
        QCOMPARE(lastStep(*store, all[1].runId), kLongSteps);
        QCOMPARE(toString(store->run(all[1].runId)->status), toString(RunStatus::Finished));
        QCOMPARE(store->sweep(id)->state, QStringLiteral("finished"));
        QCOMPARE(store->sweep(id)->message, QStringLiteral("2 completed, 0 stopped early, 0 failed"));
    }

    // A trial the runner gave up on (SIGKILLed with retries: 0) is the user's to retry: the new
    // attempt resumes from the trial's checkpoint and completes, and the failed sweep re-opens
    // and ends finished.
    void userRetriesAFailedTrialFromItsCheckpoint()
    {
        const QString spec = writeSpec(QStringLiteral("userretry"),
                                       "name: userretry\nmethod: grid\n"
                                       "parameters:\n"
                                       "  train.steps: {value: " +
                                           QByteArray::number(kLongSteps) +
                                           "}\n"
                                           "retries: 0\n");
        auto store = TrackingStore::open(db());
        LocalExecutor executor(trainer(), cli(), root());
        SweepRunner runner(*store, executor, *m_schema);
        const SweepId id = runner.submit(plan(spec));
        QVERIFY(tickUntil(runner, id, [&] {
            const Trial t = latest(*store, id)[0];
            return t.state == QLatin1String("running") && lastStep(*store, t.runId) >= 12 &&
                QFileInfo::exists(t.runDir + QStringLiteral("/checkpoints/latest"));
        }));
        const qint64 pid = taskPid(latest(*store, id)[0]);
        QVERIFY(pid > 0);
        QCOMPARE(::kill(pid_t(pid), SIGKILL), 0);
        QStringList events;
        QVERIFY(tickUntil(
            runner, id, [&] { return runner.isDone(id); }, 120'000, &events));
        QVERIFY2(events.join(QLatin1Char('\n')).contains(QLatin1String("no retries")),
                 qPrintable(events.join(QLatin1Char('\n'))));
        QCOMPARE(store->sweep(id)->state, QStringLiteral("failed"));
        const qint64 killedAt = lastStep(*store, latest(*store, id)[0].runId);

        runner.retryTrial(id, 0);
        QCOMPARE(store->sweep(id)->state, QStringLiteral("running"));
        QVERIFY(tickUntil(runner, id, [&] { return runner.isDone(id); }));
        const QList<Trial> all = store->trials(id);
        QCOMPARE(all.size(), 2);
        QCOMPARE(all[0].state, QStringLiteral("failed"));
        QVERIFY2(all[0].exitReason.contains(QLatin1String("SIGKILL")), qPrintable(all[0].exitReason));
        QCOMPARE(all[1].state, QStringLiteral("completed"));
        QVERIFY(all[1].userRetry);
        const qint64 resumedFrom = resumedFromStep(*store, all[1].runId);
        QVERIFY2(resumedFrom > 0 && resumedFrom <= killedAt, qPrintable(QString::number(resumedFrom)));
        QCOMPARE(lastStep(*store, all[1].runId), kLongSteps);
        QCOMPARE(store->sweep(id)->state, QStringLiteral("finished"));
    }

    // A user's retry neither uses up nor is charged to the runner's budget: after the runner gave
    // up on a trial that fails every time (retries: 1, two attempts), a user's retry gets the
    // budget afresh — its own attempt plus one automatic retry — and the sweep ends failed again.
    void aUserRetryStartsTheRetryBudgetAfresh()
    {
        const QString spec = writeSpec(QStringLiteral("budget"),
                                       "name: budget\nmethod: grid\n"
                                       "parameters:\n"
                                       "  data.kind: {value: folder}\n"
                                       "  data.path: {value: /nonexistent/videos}\n"
                                       "retries: 1\n");
        auto store = TrackingStore::open(db());
        LocalExecutor executor(trainer(), cli(), root());
        SweepRunner runner(*store, executor, *m_schema);
        const SweepId id = runner.submit(plan(spec));
        QVERIFY(tickUntil(runner, id, [&] { return runner.isDone(id); }));
        QCOMPARE(store->trials(id).size(), 2);
        QCOMPARE(store->sweep(id)->state, QStringLiteral("failed"));

        runner.retryTrial(id, 0);
        QStringList events;
        QVERIFY(tickUntil(
            runner, id, [&] { return runner.isDone(id); }, 120'000, &events));
        const QList<Trial> all = store->trials(id);
        QCOMPARE(all.size(), 4);
        for (const Trial &a : all)
            QCOMPARE(a.state, QStringLiteral("failed"));
        QVERIFY(!all[0].userRetry && !all[1].userRetry && all[2].userRetry && !all[3].userRetry);
        const QString said = events.join(QLatin1Char('\n'));
        QVERIFY2(said.contains(QLatin1String("resubmitted (attempt 4)")), qPrintable(said));
        QVERIFY2(said.contains(QLatin1String("failed 2 times")), qPrintable(said));
        QCOMPARE(store->sweep(id)->state, QStringLiteral("failed"));
    }

    // `orrery sweep stop` and `sweep retry` as a user types them: usage errors exit 2, refusals 1
    // with the runner's reason, a stop waits until the trial has stopped, a retry's attempt runs
    // to its end under `sweep watch`.
    void stopAndRetryThroughTheCli()
    {
        // max_concurrent 1: trial 1 waits in the queue while trial 0 runs. It is short, so that
        // it and trial 0's retry (each batch has its own supervisor and threads) share the cores
        // only briefly.
        const QString spec = writeSpec(QStringLiteral("clistop"),
                                       "name: clistop\nmethod: grid\n"
                                       "parameters:\n"
                                       "  train.steps: {values: [" +
                                           QByteArray::number(kLongSteps) +
                                           ", 20]}\n"
                                           "max_concurrent: 1\n");
        const Result submitted =
            run({QStringLiteral("sweep"), QStringLiteral("submit"), spec, QStringLiteral("--json")});
        QVERIFY2(submitted.code == 0, qPrintable(submitted.err));
        const QString id = QString::number(
            QJsonDocument::fromJson(submitted.out.toUtf8()).object().value(QLatin1String("id")).toInt());
        auto store = TrackingStore::open(db(), TrackingStore::Mode::ReadOnly);
        QVERIFY(waitFor(
            [&] {
                const Trial t = latest(*store, id.toLongLong())[0];
                return taskPid(t) > 0 && QFileInfo::exists(t.runDir + QStringLiteral("/checkpoints/latest"));
            },
            120'000));
        const QString sweep = QStringLiteral("sweep"), stop = QStringLiteral("stop"),
                      retry = QStringLiteral("retry");

        for (const QStringList &usage :
             {QStringList{sweep, stop, id}, QStringList{sweep, stop, id, QStringLiteral("x")},
              QStringList{sweep, stop, id, QStringLiteral("0"), QStringLiteral("--reason")},
              QStringList{sweep, retry, id, QStringLiteral("0"), QStringLiteral("1")}}) {
            const Result r = run(usage);
            QVERIFY2(r.code == 2, qPrintable(usage.join(QLatin1Char(' ')) + QStringLiteral(": ") + r.err));
        }
        const Result queued = run({sweep, retry, id, QStringLiteral("1")});
        QCOMPARE(queued.code, 1);
        QVERIFY2(queued.err.contains(QLatin1String(
                     "trial 1 is queued; only a failed, stopped or cancelled trial can be retried")),
                 qPrintable(queued.err));

        const Result stopped = run({sweep, stop, id, QStringLiteral("0"), QStringLiteral("--reason"),
                                    QStringLiteral("from the 'cli' $(x)")});
        QVERIFY2(stopped.code == 0, qPrintable(stopped.out + stopped.err));
        QVERIFY2(stopped.out.startsWith(QStringLiteral("stopping trial 0 of sweep %1 (clistop)").arg(id)),
                 qPrintable(stopped.out));
        Trial t0 = latest(*store, id.toLongLong())[0];
        QCOMPARE(t0.state, QStringLiteral("stopped"));  // the stop waited for it
        QCOMPARE(t0.exitReason, QStringLiteral("stopped by the user: from the 'cli' $(x)"));
        const Result again = run({sweep, stop, id, QStringLiteral("0")});
        QCOMPARE(again.code, 1);
        QVERIFY2(again.err.contains(
                     QLatin1String("trial 0 is stopped; only a queued or running trial can be stopped")),
                 qPrintable(again.err));

        const Result retried = run({sweep, retry, id, QStringLiteral("0")});
        QVERIFY2(retried.code == 0, qPrintable(retried.out + retried.err));
        QVERIFY2(retried.out.contains(QLatin1String("attempt 2")), qPrintable(retried.out));
        QCOMPARE(retried.out.count(QLatin1Char('\n')), 1);
        const Result watched =
            run({sweep, QStringLiteral("watch"), id, QStringLiteral("--pace"), QStringLiteral("0.5,1")});
        QVERIFY2(watched.code == 0, qPrintable(watched.out + watched.err));
        QVERIFY2(watched.out.contains(QLatin1String("finished (2 completed")), qPrintable(watched.out));
        const QList<Trial> all = store->trials(id.toLongLong());
        QCOMPARE(all.size(), 3);
        QCOMPARE(all[0].state, QStringLiteral("stopped"));
        QCOMPARE(all[1].state, QStringLiteral("completed"));
        QVERIFY(all[1].userRetry);
        QCOMPARE(all[2].state, QStringLiteral("completed"));
    }

    // Bayes: trials are suggested as earlier ones finish, up to run_cap.
    void bayesSuggestsAsTrialsFinish()
    {
        const QString spec =
            writeSpec(QStringLiteral("bayes"),
                      "name: bayes\nmethod: bayes\nrun_cap: 3\n"
                      "metric: {name: train/loss, goal: minimize}\n"
                      "parameters:\n"
                      "  optim.lr: {distribution: log_uniform_values, min: 1e-4, max: 1e-2}\n"
                      "  train.steps: {value: 10}\n"
                      "  train.log_every: {value: 5}\n"
                      "max_concurrent: 1\n");
        auto store = TrackingStore::open(db());
        LocalExecutor executor(trainer(), cli(), root());
        SweepRunner runner(*store, executor, *m_schema);
        const SweepId id = runner.submit(plan(spec));
        QCOMPARE(store->trials(id).size(), 1);
        QVERIFY(tickUntil(
            runner, id, [&] { return runner.isDone(id); }, 120'000));
        const auto t = latest(*store, id);
        QCOMPARE(t.size(), 3);
        QSet<QString> lrs;
        for (const Trial &x : t) {
            QCOMPARE(x.state, QStringLiteral("completed"));
            lrs.insert(x.params);
        }
        QCOMPARE(lrs.size(), 3);
        QCOMPARE(store->sweep(id)->state, QStringLiteral("finished"));
    }

    // budget: {gpu_hours: N} (docs/sweeps.md "GPU-hours and cost"). Each trial may use its time
    // limit (60 s) × 1 GPU; a trial of 20 micro steps runs 1-3 s here (16 s under a loaded build
    // machine), LibTorch's start alone 0.5 s.
    // Room for two trials and half a second: the first batch is two, the third is launched once
    // they have ended under their limit. Room for one and half a second: after the first trial
    // ran (more than half a second), the next could exceed the budget: the sweep stops there,
    // saying why, with what it used within the budget.
    void aBudgetHoldsBackAndThenStopsLaunches()
    {
        const auto body = [](const QByteArray &name, double budgetSeconds) -> QByteArray {
            return "name: " + name +
                "\nmethod: grid\n"
                "parameters:\n"
                "  optim.lr: {values: [1e-3, 2e-3, 3e-3]}\n"
                "  train.steps: {value: 20}\n"
                "resources: {gpus_per_node: 1, time: \"1:00\"}\n"
                "max_concurrent: 3\n"
                "budget: {gpu_hours: " +
                QByteArray::number(budgetSeconds / 3600.0, 'g', 8) + "}\n";
        };
        auto store = TrackingStore::open(db());
        LocalExecutor executor(trainer(), cli(), root());
        SweepRunner runner(*store, executor, *m_schema);

        const SweepId held =
            runner.submit(plan(writeSpec(QStringLiteral("budget-held"), body("budget-held", 120.5))));
        QCOMPARE(store->trials(held).size(), 2);  // the first batch: what fits
        QStringList events;
        QVERIFY(tickUntil(
            runner, held, [&] { return runner.isDone(held); }, 120'000, &events));
        QVERIFY2(events.join(QLatin1Char('\n')).contains(QLatin1String("launched trial 2 within the budget")),
                 qPrintable(events.join(QLatin1Char('\n'))));
        QCOMPARE(latest(*store, held).size(), 3);
        QCOMPARE(store->sweep(held)->state, QStringLiteral("finished"));
        QVERIFY2(!store->sweep(held)->message.contains(QLatin1String("budget")),
                 qPrintable(store->sweep(held)->message));

        const SweepId stop =
            runner.submit(plan(writeSpec(QStringLiteral("budget-stop"), body("budget-stop", 60.5))));
        QCOMPARE(store->trials(stop).size(), 1);
        events.clear();
        QVERIFY(tickUntil(
            runner, stop, [&] { return runner.isDone(stop); }, 120'000, &events));
        const QList<Trial> ran = store->trials(stop);
        QCOMPARE(ran.size(), 1);  // never launched: trials 1 and 2
        QCOMPARE(ran[0].state, QStringLiteral("completed"));
        QCOMPARE(ran[0].gpus, 1);
        const Usage used = usageOf(ran, QDateTime::currentMSecsSinceEpoch());
        QVERIFY2(used.gpuHours > 0.5 / 3600 && used.gpuHours < 60.0 / 3600,
                 qPrintable(QString::number(used.gpuHours * 3600)));
        const Sweep sw = *store->sweep(stop);
        QCOMPARE(sw.state, QStringLiteral("finished"));
        QVERIFY2(sw.message.startsWith(QLatin1String("stopped by its budget: ")) &&
                     sw.message.contains(QLatin1String("of the budget's 0.0168 GPU-hours used")) &&
                     sw.message.contains(QLatin1String("2 of 3 trials not launched; 1 completed")),
                 qPrintable(sw.message));
        QVERIFY(events.join(QLatin1Char('\n')).contains(QLatin1String("stopped by its budget")));
    }

    // Cancel: every trial ends, no trainer process is left, the sweep says cancelled.
    void cancelEndsEveryTrial()
    {
        const QString spec = writeSpec(QStringLiteral("cancel"),
                                       "name: cancelme\nmethod: grid\n"
                                       "parameters:\n"
                                       "  optim.lr: {values: [1e-3, 2e-3, 3e-3]}\n"
                                       "  train.steps: {value: 100000}\n"
                                       "max_concurrent: 2\n");
        const Result submitted =
            run({QStringLiteral("sweep"), QStringLiteral("submit"), spec, QStringLiteral("--json")});
        QVERIFY2(submitted.code == 0, qPrintable(submitted.err));
        const int id =
            QJsonDocument::fromJson(submitted.out.toUtf8()).object().value(QLatin1String("id")).toInt();
        auto store = TrackingStore::open(db(), TrackingStore::Mode::ReadOnly);
        QList<qint64> pids;
        QElapsedTimer timer;
        timer.start();
        while (pids.size() < 2 && timer.elapsed() < 60'000) {
            pids.clear();
            for (const Trial &t : store->trials(id))
                if (const qint64 pid = taskPid(t); pid > 0)
                    pids << pid;
            QThread::msleep(200);
        }
        QCOMPARE(pids.size(), 2);
        const Result cancelled =
            run({QStringLiteral("sweep"), QStringLiteral("cancel"), QString::number(id)});
        QVERIFY2(cancelled.code == 0, qPrintable(cancelled.out + cancelled.err));
        QCOMPARE(store->sweep(id)->state, QStringLiteral("cancelled"));
        for (const Trial &t : store->trials(id))
            QCOMPARE(t.state, QStringLiteral("cancelled"));
        for (const qint64 pid : pids)
            QVERIFY2(::kill(pid_t(pid), 0) != 0, "a trainer outlived the cancel");
    }
};

}  // namespace

int main(int argc, char **argv)
{
    orrery::test::prepareTestProcess();
    QCoreApplication app(argc, argv);
    TestSweepLocal test;
    return QTest::qExec(&test, argc, argv);
}

#include "tst_sweep_local.moc"
