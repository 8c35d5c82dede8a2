// SPDX-License-Identifier: GPL-3.0-or-later
// remote::SweepOperations, the one implementation of every sweep operation the CLI, the window and
// the monitor call: a preview that connects to nothing, submit, and cancel / stop / retry with
// the one settle policy, on this machine's real executor (child processes supervised by the real
// `orrery sweep supervise`) and a real SQLite store. The sweeps run a command (`sleep`), so no
// trainer is needed.
#include "sweepsupport.h"
#include "testsupport.h"

#include "orrery/core/localexecutor.h"
#include "orrery/core/store.h"
#include "orrery/remote/sweepoperations.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

using namespace orrery;
using remote::OperationError;
using remote::SweepOperations;

class TestSweepOperations : public QObject {
    Q_OBJECT
    QTemporaryDir m_home;
    std::optional<core::TrainerSchema> m_schema;
    int m_specs = 0;

    // A grid of `trials` trials, each a `sleep` of `seconds`.
    remote::CheckedSpec spec(int trials, int seconds = 60)
    {
        QStringList values;
        for (int i = 0; i < trials; ++i)
            values << QString::number(i);
        const QString path = m_home.filePath(QStringLiteral("spec%1.yaml").arg(++m_specs));
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly))
            qFatal("cannot write %s", qPrintable(path));
        f.write(QStringLiteral("name: ops%1\nexperiment: ops\nmethod: grid\n"
                               "command: [sh, -c, 'sleep %2', '{{x}}']\n"
                               "parameters:\n  x: {values: [%3]}\n"
                               "resources: {time: \"00:10:00\", gpus_per_node: 1}\n")
                    .arg(m_specs)
                    .arg(seconds)
                    .arg(values.join(QStringLiteral(", ")))
                    .toUtf8());
        f.close();
        return SweepOperations::checkSpecFile(path, *m_schema, false);
    }

    SweepOperations::Options options(remote::Settle settle = remote::Settle::Wait)
    {
        SweepOperations::Options o;
        o.schema = m_schema;
        o.settle = settle;
        return o;
    }

    std::unique_ptr<core::TrackingStore> store()
    {
        return core::TrackingStore::open(m_home.filePath(QStringLiteral("ops.sqlite")));
    }

    static core::Trial latest(core::TrackingStore &store, core::SweepId sweep, int trial)
    {
        const auto t = core::latestAttempt(store.trials(sweep), trial);
        if (!t)
            qFatal("no trial %d", trial);
        return *t;
    }

    // Waits (following) until trial 0 runs: an action on a running task is what the faces do
    // most. (This machine runs as many trials at once as its executor's slots allow: the others
    // wait queued.)
    static bool trialZeroRuns(SweepOperations &ops, core::SweepId sweep, int)
    {
        for (int i = 0; i < 100; ++i) {
            ops.tick(sweep);
            if (latest(ops.store(), sweep, 0).trialState() == core::TrialState::Running)
                return true;
            QThread::msleep(100);
        }
        return false;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(!qEnvironmentVariable("ORRERY_CLI").isEmpty(), "ORRERY_CLI (the orrery binary) is not set");
        QVERIFY(m_home.isValid());
        // Run directories and profiles go to the temporary home.
        qputenv("HOME", m_home.path().toUtf8());
        qputenv("XDG_DATA_HOME", m_home.filePath(QStringLiteral("data")).toUtf8());
        qputenv("XDG_CONFIG_HOME", m_home.filePath(QStringLiteral("config")).toUtf8());
        m_schema = orrery::test::trainerSchema();
    }

    void previewConnectsToNothing()
    {
        const remote::CheckedSpec s = spec(3);
        QVERIFY(s.ok());
        const remote::SweepPreview local = SweepOperations::preview(s, {});
        QVERIFY2(local.launchProblem.isEmpty(), qPrintable(local.launchProblem));
        QVERIFY2(local.launch.contains("sleep 60"), local.launch.constData());
        QCOMPARE(local.plan.rows.size(), 3);
        // The worst case every face shows: 3 trials × 10 minutes × 1 GPU.
        QCOMPARE(local.worst.trials, 3);
        QVERIFY2(local.worstCaseText().contains(QStringLiteral("= 0.5 GPU-hours")),
                 qPrintable(local.worstCaseText()));
        const QJsonObject json = local.toJson(s);
        QCOMPARE(
            json.value(QStringLiteral("worst_case")).toObject().value(QStringLiteral("gpu_hours")).toDouble(),
            0.5);
        // A cluster without a profile: said, not thrown, and nothing connected.
        const remote::SweepPreview missing = SweepOperations::preview(s, QStringLiteral("nowhere"));
        QVERIFY2(missing.launchProblem.contains(QStringLiteral("no cluster profile 'nowhere'")),
                 qPrintable(missing.launchProblem));
        QCOMPARE(missing.plan.rows.size(), 3);
    }

    void aSpecWithProblemsIsRefusedAsInvalid()
    {
        const QString path = m_home.filePath(QStringLiteral("bad.yaml"));
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("name: bad\nmethod: grid\nparameters:\n  optim.lr: {values: [banana]}\n");
        f.close();
        const remote::CheckedSpec s = SweepOperations::checkSpecFile(path, *m_schema, false);
        QVERIFY(!s.ok());
        QVERIFY(s.problemIsUsage());
        QVERIFY(!s.problems().isEmpty());
        QCOMPARE(s.problems().front().line, 4);
        auto db = store();
        SweepOperations ops(*db, options());
        try {
            ops.submit(s, {});
            QFAIL("a spec with problems was submitted");
        } catch (const OperationError &e) {
            QCOMPARE(e.kind(), OperationError::Kind::Invalid);
            QVERIFY2(e.message().contains(QStringLiteral("bad.yaml:4")), qPrintable(e.message()));
        }
        QVERIFY(db->sweeps().isEmpty() || !db->findSweep(QStringLiteral("bad")));
    }

    // W&B's --count through the one operations layer: a random spec without run_cap is refused
    // saying so, accepted with a count, which the stored spec then holds as its run_cap; W&B's
    // service keys come back as warnings, not problems.
    void countBoundsARandomSpecAndWarningsAreNotProblems()
    {
        const QByteArray yaml = "name: counted\nproject: p\nprogram: train.py\nmethod: random\n"
                                "parameters:\n  lr: {min: 0.1, max: 1.0}\n";
        const QString path = m_home.filePath(QStringLiteral("counted.yaml"));
        const remote::CheckedSpec open = SweepOperations::checkSpecText(yaml, path, *m_schema, false);
        QVERIFY(!open.ok());
        QVERIFY(open.problemLines().join(QLatin1Char('\n')).contains(QLatin1String("--count N")));
        const remote::CheckedSpec counted = SweepOperations::checkSpecText(yaml, path, *m_schema, false, 3);
        QVERIFY2(counted.ok(), qPrintable(counted.problemLines().join(QLatin1Char('\n'))));
        QCOMPARE(counted.trials().size(), 3);
        QCOMPARE(counted.plan().spec.runCap, 3);
        QVERIFY(counted.plan().specYaml.endsWith("run_cap: 3\n"));
        QCOMPARE(counted.warnings().size(), 1);
        QCOMPARE(counted.warnings().front().line, 2);
        QVERIFY(counted.problems().isEmpty());
    }

    void cancelledSubmitSubmitsNothing()
    {
        auto db = store();
        SweepOperations ops(*db, options());
        remote::OperationProgress progress;
        progress.cancelled = [] { return true; };
        const int before = int(db->sweeps().size());
        try {
            ops.submit(spec(1), {}, progress);
            QFAIL("a cancelled submit went on");
        } catch (const OperationError &e) {
            QCOMPARE(e.kind(), OperationError::Kind::Cancelled);
        }
        QCOMPARE(int(db->sweeps().size()), before);
    }

    void cancelWaitsUntilTheTrialsHaveEnded()
    {
        auto db = store();
        SweepOperations ops(*db, options(remote::Settle::Wait));
        QStringList said;
        remote::OperationProgress progress;
        progress.say = [&said](const QString &line) { said << line; };
        const core::SweepId id = ops.submit(spec(2), {}, progress);
        QVERIFY2(said.contains(QStringLiteral("Submitting on this machine…")), qPrintable(said.join(u'\n')));
        QVERIFY(trialZeroRuns(ops, id, 2));
        said.clear();
        const remote::ActionOutcome o = ops.cancel(id, progress);
        QVERIFY2(o.settled, qPrintable(o.message));
        QVERIFY2(said.value(0).startsWith(QStringLiteral("cancelling sweep ops")),
                 qPrintable(said.join(u'\n')));
        // Settled means recorded: the store says so without another follower.
        QCOMPARE(ops.sweep(id).sweepState(), core::SweepState::Cancelled);
        for (int i = 0; i < 2; ++i)
            QCOMPARE(latest(*db, id, i).trialState(), core::TrialState::Cancelled);
        // The overview every face renders: two stopped trials, nothing running.
        const core::SweepOverview overview = ops.overview(ops.sweep(id));
        QCOMPARE(overview.counts.stopped, 2);
        QCOMPARE(overview.counts.running, 0);
        QVERIFY(overview.usage.attempts >= 1);  // trial 1 may have been cancelled while queued
    }

    void stopRetryAndLogsOfOneTrial()
    {
        auto db = store();
        SweepOperations ops(*db, options(remote::Settle::Wait));
        const core::SweepId id = ops.submit(spec(2), {});
        QVERIFY(trialZeroRuns(ops, id, 2));
        const remote::ActionOutcome stopped = ops.stopTrial(id, 0, QStringLiteral("a test"));
        QVERIFY2(stopped.settled, qPrintable(stopped.message));
        QCOMPARE(latest(*db, id, 0).trialState(), core::TrialState::Stopped);
        QVERIFY(latest(*db, id, 1).isActive());  // the sweep goes on
        // Stopping it again is the user's mistake, said as such.
        try {
            ops.stopTrial(id, 0, {});
            QFAIL("a stopped trial was stopped again");
        } catch (const OperationError &e) {
            QCOMPARE(e.kind(), OperationError::Kind::Invalid);
        }
        const remote::ActionOutcome retried = ops.retryTrial(id, 0);
        // Counted from 1 for people: the second attempt.
        QVERIFY2(retried.message.contains(QStringLiteral("attempt 2")), qPrintable(retried.message));
        QCOMPARE(latest(*db, id, 0).attempt, 1);
        QVERIFY(latest(*db, id, 0).isActive());
        // The logs of its latest attempt, and of the first one by number.
        const remote::TrialLogs logs = ops.logs(id, 0);
        QCOMPARE(logs.attempt.attempt, 1);
        QVERIFY2(logs.title.endsWith(QStringLiteral("trial 0 · attempt 1")), qPrintable(logs.title));
        QVERIFY(!logs.paths.isEmpty());
        QCOMPARE(ops.logs(id, 0, 0).attempt.attempt, 0);
        try {
            ops.logs(id, 7);
            QFAIL("logs of a trial that does not exist");
        } catch (const OperationError &e) {
            QCOMPARE(e.kind(), OperationError::Kind::Invalid);
            QVERIFY2(e.message().contains(QStringLiteral("no trial 7")), qPrintable(e.message()));
        }
        const remote::ActionOutcome cancelled = ops.cancel(id);
        QVERIFY2(cancelled.settled, qPrintable(cancelled.message));
    }

    // A cancel that lands while the supervisor is starting the task (the retried attempt above,
    // cancelled at once) must end it: the supervisor re-reads the cancel mark after it records
    // the task as running, and the task cannot swallow a SIGTERM sent before it drops the
    // supervisor's handler. Cancelled at varying moments of the start, many times.
    void aTaskCancelledAsItStartsEnds()
    {
        core::LocalExecutor executor(QString(), qEnvironmentVariable("ORRERY_CLI"),
                                     m_home.filePath(QStringLiteral("race")));
        for (int round = 0; round < 24; ++round) {
            core::LaunchBatch batch;
            batch.sweepName = QStringLiteral("race");
            batch.sweepDir = m_home.filePath(QStringLiteral("race/sweep"));
            batch.batch = round;
            core::TaskLaunch task;
            task.runDir = m_home.filePath(QStringLiteral("race/run%1").arg(round));
            task.command.argv = {QStringLiteral("sleep"), QStringLiteral("60")};
            task.command.localWorkdir = m_home.path();
            batch.tasks = {task};
            const QStringList ids = executor.launch(batch).taskIds;
            QThread::usleep((round % 8) * 2000);  // 0 to 14 ms into the supervisor's start
            executor.cancel(ids);
            core::TaskStatus st;
            for (int i = 0; i < 100; ++i) {
                st = executor.poll(ids).value(ids.front());
                if (st.state == core::TaskStatus::State::Ended)
                    break;
                QThread::msleep(100);
            }
            QVERIFY2(
                st.state == core::TaskStatus::State::Ended,
                qPrintable(QStringLiteral("round %1: the cancelled task still %2 after 10 s (%3)")
                               .arg(round)
                               .arg(st.state == core::TaskStatus::State::Running ? QStringLiteral("runs")
                                                                                 : QStringLiteral("waits"))
                               .arg(st.detail)));
        }
    }

    void aFollowingFaceSettlesItselfAndCancelNeedsNoTrainer()
    {
        auto db = store();
        core::SweepId id = 0;
        {
            SweepOperations submitter(*db, options());
            id = submitter.submit(spec(1), {});
            QVERIFY(trialZeroRuns(submitter, id, 1));
        }
        // The window and the monitor follow every sweep: the action returns at once and their
        // follower records the end. Nor does a cancel need a trainer to ask (a laptop that only
        // watches): no schema here, and none to be found.
        const QByteArray trainer = qgetenv("ORRERY_TRAINER");
        qputenv("ORRERY_TRAINER", m_home.filePath(QStringLiteral("no-trainer-here")).toUtf8());
        SweepOperations::Options o;
        o.settle = remote::Settle::Return;
        SweepOperations ops(*db, o);
        const remote::ActionOutcome cancelled = ops.cancel(id);
        qputenv("ORRERY_TRAINER", trainer);
        QVERIFY2(cancelled.message.startsWith(QStringLiteral("cancelling sweep")),
                 qPrintable(cancelled.message));
        QCOMPARE(ops.sweep(id).sweepState(), core::SweepState::Cancelling);
        SweepOperations follower(*db, options());
        for (int i = 0; i < 100 && follower.sweep(id).sweepState() != core::SweepState::Cancelled; ++i) {
            follower.followActive();
            QThread::msleep(100);
        }
        QCOMPARE(follower.sweep(id).sweepState(), core::SweepState::Cancelled);
    }

    void unknownSweepsAreInvalid()
    {
        auto db = store();
        SweepOperations ops(*db, options());
        try {
            ops.sweep(QStringLiteral("no-such-sweep"));
            QFAIL("found a sweep that does not exist");
        } catch (const OperationError &e) {
            QCOMPARE(e.kind(), OperationError::Kind::Invalid);
            QVERIFY2(e.message().contains(QStringLiteral("no sweep 'no-such-sweep'")),
                     qPrintable(e.message()));
        }
    }
};

ORRERY_TEST_MAIN(TestSweepOperations, QCoreApplication)
#include "tst_sweepoperations.moc"
