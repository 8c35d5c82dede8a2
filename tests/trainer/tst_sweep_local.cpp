// SPDX-License-Identifier: GPL-3.0-or-later
// Sweeps on the embedded default, end to end: the real `orrery` CLI and its detached local
// supervisor, the real trainer on CPU (the micro workload of tests/data/micro.yaml: a step in
// milliseconds), a real SQLite store. Faults are caused for real: a trial's process is SIGKILLed
// (as the OOM killer would), another gets SIGUSR1 (as Slurm's pre-timeout signal), a trial has a
// config that fails on every attempt. Every wait is for a state, bounded by a generous deadline;
// none assumes how fast this machine is.
#include "sweeptest.h"
#include "testsupport.h"

#include "orrery/core/localexecutor.h"
#include "orrery/core/store.h"
#include "orrery/core/sweeprunner.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
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
                                           "early_terminate: {type: hyperband, min_iter: 15, eta: 2}\n"
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
