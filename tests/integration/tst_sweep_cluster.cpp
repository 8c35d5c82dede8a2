// SPDX-License-Identifier: GPL-3.0-or-later
// A sweep on the fixture's real Slurm through real SSH, as a user drives it: `orrery cluster add`,
// `orrery sweep submit --cluster` (one job array, %2, two ranks per trial through srun), then
// `orrery sweep watch` following it while the test causes faults for real: one trial's ranks are
// SIGKILLed (no exit.json: the runner resubmits it and it resumes from its checkpoint), another
// gets Slurm's pre-timeout signal in its ranks (as `--signal=USR1@120` delivers it: it
// checkpoints, exits 75 and is resubmitted), the watcher is interrupted (detach) and a second one picks the
// sweep up, and median early stopping stops the trials whose learning rate is 1e-7. Names are shell syntax
// throughout. Then the sweep's goodput: the lost work is the steps the killed trial redid.
#include "remotesupport.h"

#include "orrery/core/store.h"
#include "orrery/remote/connection.h"
#include "orrery/remote/shell.h"

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
#include <QUuid>

#include <cmath>
#include <csignal>

using namespace orrery::core;

// Long enough to be caught running past the first checkpoint (step 10) and past median early
// stopping's min_step: 135 steps to go, several seconds with two trials of two ranks each on the
// machine's two cores (a 2-rank micro step is slower than micro.yaml's 40 ms alone).
constexpr qint64 kSteps = 150;
constexpr qint64 kFaultStep = 50;  // trials 0 and 1 are killed and preempted after this step

class TestSweepCluster : public QObject {
    Q_OBJECT

    orrery::test::TestCluster m_cluster;
    orrery::test::CliUser m_user;
    QString m_root;

    using Result = orrery::test::CliUser::Result;
    Result orrery(const QStringList &args, int timeoutMs = 120'000) { return m_user.run(args, timeoutMs); }
    QString db() const { return m_user.db(); }

    // `sweep watch` ticking every 0.5 to 1 s: its default pace backs off to 15 s while nothing
    // changes, longer than a whole micro trial, and early stopping must see the bad trials run.
    static QStringList watchArgs(int sweep)
    {
        return {QStringLiteral("sweep"), QStringLiteral("watch"), QString::number(sweep),
                QStringLiteral("--pace"), QStringLiteral("0.5,1")};
    }

    std::unique_ptr<QProcess> startWatch(int sweep)
    {
        auto p = std::make_unique<QProcess>();
        m_user.start(*p, watchArgs(sweep));
        return p;
    }

    // The trainer processes whose command line holds `needle` (the fixture's nodes are this
    // machine; srun's own command line holds it too, and is left alone).
    static QList<qint64> pidsWith(const QByteArray &needle)
    {
        return orrery::test::pidsWithCommandLine(qEnvironmentVariable("ORRERY_TRAINER"), needle);
    }

    static QMap<int, QList<Trial>> attempts(TrackingStore &store, SweepId id)
    {
        QMap<int, QList<Trial>> out;
        for (const Trial &t : store.trials(id))
            out[t.index] << t;
        return out;
    }

    static qint64 lastStep(TrackingStore &store, RunId run)
    {
        qint64 step = -1;
        for (const LatestMetric &m : store.details(run).metrics)
            step = std::max<qint64>(step, m.last.step);
        return step;
    }

    // The steps a run's second trainer process redid, read from its events.jsonl alone: the step
    // of the checkpoint it resumed from (its `start` event) against the last step the first
    // process logged (ARCHITECTURE.md's events; docs/sweeps.md "Goodput").
    static qint64 stepsRedone(const QString &runDir)
    {
        QFile f(runDir + QStringLiteral("/events.jsonl"));
        if (!f.open(QIODevice::ReadOnly))
            return -1;
        int starts = 0;
        qint64 reached = 0;
        while (!f.atEnd()) {
            const QJsonObject e = QJsonDocument::fromJson(f.readLine()).object();
            const QString kind = e.value(QLatin1String("kind")).toString();
            if (kind == QLatin1String("start") && ++starts == 2) {
                const QString from =
                    e.value(QLatin1String("run")).toObject().value(QLatin1String("resumed_from")).toString();
                bool ok = false;
                const qint64 resumed = from.mid(5, from.size() - 10).toLongLong(&ok);  // step-N.ckpt
                return ok ? std::max<qint64>(0, reached - resumed) : -1;
            }
            if (kind == QLatin1String("metrics"))
                reached = std::max<qint64>(reached, e.value(QLatin1String("step")).toInteger());
        }
        return -1;
    }

    // The check of goodput on this sweep: every run's parts add up to its wall time
    // within 1%, that wall is its attempts' (submitted → ended, from the store), and the lost
    // work is the steps redone after the kill (none after the preemption: the trainer
    // checkpointed where it stopped), at the retry's own time per step.
    void checkGoodput(TrackingStore &store, int sweep)
    {
        const Result r = orrery({QStringLiteral("runs"), QStringLiteral("goodput"), QStringLiteral("--sweep"),
                                 QString::number(sweep), QStringLiteral("--json")});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const QJsonObject total = QJsonDocument::fromJson(r.out.toUtf8()).object();
        const QJsonArray runs = total.value(QLatin1String("runs")).toArray();
        QCOMPARE(runs.size(), 4);
        auto partsAddUp = [](const QJsonObject &o) {
            double sum = 0;
            for (const char *k : {"queue_s", "startup_s", "training_s", "checkpoint_s", "eval_s", "sample_s",
                                  "lost_s", "hung_s", "rest_s"})
                sum += o.value(QLatin1String(k)).toDouble();
            const double wall = o.value(QLatin1String("wall_s")).toDouble();
            return wall > 0 && std::abs(sum - wall) <= 0.01 * wall &&
                o.value(QLatin1String("overrun_s")).toDouble() == 0;
        };
        // What a failure prints: per trial and attempt, the parts in seconds.
        QString brief;
        for (const QJsonValue &v : runs)
            for (const QJsonValue &at : v[QLatin1String("attempts")].toArray()) {
                const QJsonObject o = at.toObject();
                brief += QStringLiteral("trial %1 attempt %2 %3:")
                             .arg(v[QLatin1String("trial")].toInt())
                             .arg(o[QLatin1String("attempt")].toInt())
                             .arg(o[QLatin1String("state")].toString());
                for (const char *k : {"wall_s", "queue_s", "startup_s", "training_s", "checkpoint_s",
                                      "eval_s", "sample_s", "lost_s", "lost_steps", "rest_s", "overrun_s",
                                      "resume_step", "last_step", "trained_steps", "processes"})
                    brief +=
                        QStringLiteral(" %1=%2").arg(QLatin1String(k)).arg(o[QLatin1String(k)].toDouble());
                brief += QLatin1Char('\n');
            }
        if (!partsAddUp(total))  // in full, a line each (a failure message is cut short)
            for (const QString &line : brief.split(QLatin1Char('\n')))
                qInfo("%s", qPrintable(line));
        QVERIFY2(partsAddUp(total), qPrintable(brief));
        const auto a = attempts(store, sweep);
        for (const QJsonValue &v : runs) {
            const QJsonObject run = v.toObject();
            const int index = run.value(QLatin1String("trial")).toInt();
            QVERIFY2(partsAddUp(run), qPrintable(brief));
            double wall = 0;
            for (const Trial &t : a[index])
                wall += double(t.endedMs - t.submittedMs) / 1000.0;
            QVERIFY2(std::abs(run.value(QLatin1String("wall_s")).toDouble() - wall) <= 0.01 * wall,
                     qPrintable(QString::number(wall) + QLatin1Char('\n') + brief));
            QVERIFY2(run.value(QLatin1String("training_s")).toDouble() > 0, qPrintable(brief));
            const QJsonArray attempts = run.value(QLatin1String("attempts")).toArray();
            QCOMPARE(attempts.size(), a[index].size());
            if (index > 1) {  // stopped early: checkpointed where they stopped, nothing lost
                QCOMPARE(run.value(QLatin1String("lost_steps")).toInteger(), 0);
                continue;
            }
            const qint64 redone = stepsRedone(a[index][0].runDir);
            QVERIFY2(redone >= 0, qPrintable(a[index][0].runDir));
            if (index == 1)
                QCOMPARE(redone, 0);
            QCOMPARE(attempts[0].toObject().value(QLatin1String("lost_steps")).toInteger(), 0);
            const QJsonObject retry = attempts[1].toObject();
            QVERIFY2(retry.value(QLatin1String("lost_steps")).toInteger() == redone,
                     qPrintable(QStringLiteral("%1 steps redone\n").arg(redone) + brief));
            QCOMPARE(run.value(QLatin1String("lost_steps")).toInteger(), redone);
            const double perStep = (retry.value(QLatin1String("training_s")).toDouble() +
                                    retry.value(QLatin1String("lost_s")).toDouble()) /
                retry.value(QLatin1String("trained_steps")).toDouble();
            QVERIFY2(std::abs(retry.value(QLatin1String("lost_s")).toDouble() - double(redone) * perStep) <
                         1e-3,
                     qPrintable(brief));
            QVERIFY2(redone == 0 || retry.value(QLatin1String("lost_s")).toDouble() > 0, qPrintable(brief));
        }
        qInfo("%s", qPrintable(brief));
        qInfo("goodput of the sweep: %.1f%% (%s s wall; trial 0 redid %lld steps after its kill)",
              100.0 * total.value(QLatin1String("goodput")).toDouble(),
              qPrintable(QString::number(total.value(QLatin1String("wall_s")).toDouble(), 'f', 1)),
              qlonglong(stepsRedone(a[0][0].runDir)));
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(m_cluster.error().isEmpty(), qPrintable(m_cluster.error()));
        QVERIFY(m_user.isValid());
        if (qEnvironmentVariableIsEmpty("ORRERY_TRAINER") || qEnvironmentVariableIsEmpty("ORRERY_CLI"))
            QFAIL("ORRERY_TRAINER and ORRERY_CLI must name the built binaries (CTest sets them)");
        m_root = m_cluster.value("ORRERY_TEST_JOBS_DIR") + QStringLiteral("/tst_sweep_cluster-") +
            QUuid::createUuid().toString(QUuid::Id128) + QStringLiteral("/root 'q' $(touch pwned)");
        // The fixture's node names do not resolve (both are this machine): 2-node trials meet at
        // 127.0.0.1 (a real cluster uses the first host of SLURM_JOB_NODELIST).
        const Result add =
            orrery(orrery::test::fixtureClusterAdd(m_cluster, QStringLiteral("fixture"), m_root) +
                   QStringList{QStringLiteral("--setup"), QStringLiteral("export MASTER_ADDR=127.0.0.1"),
                               QStringLiteral("--trainer-path"), qEnvironmentVariable("ORRERY_TRAINER")});
        QVERIFY2(add.code == 0, qPrintable(add.err));
    }

    void sweepWithFaultsDetachAndEarlyStop()
    {
        // The micro workload (tests/data/micro.yaml): a step in milliseconds, checkpoints every 10.
        // It learns too little in 150 steps for its loss (one batch of 2) to tell lr 3e-3 from
        // 1e-7 above the noise, so the median rule judges the logged learning rate (maximize):
        // what is tested here is the rule acting on a cluster, not the learning. Its verdicts
        // are then certain: the 1e-7 trials stop, the others (the resumed ones too) never do.
        const QString base = orrery::test::microConfigPath();
        const QString spec = m_user.filePath(QStringLiteral("e2e.yaml"));
        {
            QFile f(spec);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("name: \"e2e 'q' $(touch pwned) -rf\"\n"
                    "experiment: cluster-e2e\n"
                    "trainer: {config: " +
                    base.toUtf8() +
                    "}\n"
                    "method: grid\n"
                    "metric: {name: train/lr, goal: maximize}\n"
                    "parameters:\n"
                    "  optim.lr: {values: [3e-3, 1e-7]}\n"
                    "  seed: {values: [1, 2]}\n"
                    "  train.steps: {value: " +
                    QByteArray::number(kSteps) +
                    "}\n"
                    "early_terminate: {type: median, min_step: 2, min_trials: 2}\n"
                    "resources: {nodes: 2, cpus_per_task: 1, mem: 500M, time: \"00:10:00\"}\n"
                    "max_concurrent: 2\n"
                    "retries: 1\n");
        }
        const Result dry =
            orrery({QStringLiteral("sweep"), QStringLiteral("submit"), spec, QStringLiteral("--cluster"),
                    QStringLiteral("fixture"), QStringLiteral("--dry-run")});
        QVERIFY2(dry.code == 0, qPrintable(dry.err));
        QVERIFY2(dry.out.contains(QLatin1String("#SBATCH --nodes=2")), qPrintable(dry.out));

        const Result submitted =
            orrery({QStringLiteral("sweep"), QStringLiteral("submit"), spec, QStringLiteral("--cluster"),
                    QStringLiteral("fixture"), QStringLiteral("--json")});
        QVERIFY2(submitted.code == 0, qPrintable(submitted.out + submitted.err));
        const int id =
            QJsonDocument::fromJson(submitted.out.toUtf8()).object().value(QLatin1String("id")).toInt();
        QVERIFY(id > 0);

        auto store = TrackingStore::open(db(), TrackingStore::Mode::ReadOnly);
        const auto sw = store->sweep(id);
        QVERIFY(sw && sw->cluster == QLatin1String("fixture"));
        QVERIFY(!sw->arrayJobId.isEmpty());

        // Follow; while it does, trials 0 and 1 run (two ranks each) and their metrics arrive.
        // They run to step 50 before the faults: the median rule compares a trial at step s only
        // with trials that got to s, so trials 2 and 3 meet them over 50 steps (2 s at least),
        // more than a tick of the follower.
        auto watch = startWatch(id);
        QDeadlineTimer deadline(150'000);
        bool ready = false, metricsWhileRunning = false;
        while (!ready && !deadline.hasExpired()) {
            QThread::msleep(500);
            const auto a = attempts(*store, id);
            ready = true;
            for (int i : {0, 1}) {
                const Trial &t = a.value(i).constLast();
                const qint64 step = lastStep(*store, t.runId);
                metricsWhileRunning |= t.state == QLatin1String("running") && step > 0;
                ready &= t.state == QLatin1String("running") && step >= kFaultStep &&
                    QFileInfo::exists(t.runDir + QStringLiteral("/checkpoints/latest"));
            }
        }
        QVERIFY2(
            ready,
            qPrintable(QString::fromUtf8(watch->readAllStandardOutput() + watch->readAllStandardError()) +
                       m_cluster.logsHint()));
        QVERIFY(metricsWhileRunning);
        const auto first = attempts(*store, id);
        QCOMPARE(store->details(first[0].front().runId).tags.value(QStringLiteral("orrery.world_size")),
                 QStringLiteral("2"));

        // Faults: trial 0's ranks are killed outright; trial 1 gets the pre-timeout signal.
        const QList<qint64> ranks =
            pidsWith(QByteArray("--run-dir", 10) + first[0].front().runDir.toUtf8() + QByteArray(1, '\0'));
        QCOMPARE(ranks.size(), 2);
        for (const qint64 pid : ranks)
            QCOMPARE(::kill(pid_t(pid), SIGKILL), 0);
        // The pre-timeout signal as slurmstepd delivers it (`--signal=USR1@120`): to every rank.
        const QList<qint64> ranks1 =
            pidsWith(QByteArray("--run-dir", 10) + first[1].front().runDir.toUtf8() + QByteArray(1, '\0'));
        QCOMPARE(ranks1.size(), 2);
        for (const qint64 pid : ranks1)
            QCOMPARE(::kill(pid_t(pid), SIGUSR1), 0);

        // Detach: the watcher goes (Ctrl-C), the trials do not; a second watcher picks it up and
        // meets the faults above.
        ::kill(pid_t(watch->processId()), SIGINT);
        QVERIFY(watch->waitForFinished(30'000));
        QCOMPARE(watch->exitCode(), 0);
        QVERIFY(watch->readAllStandardError().contains("detached"));
        const Result second = orrery(watchArgs(id), 200'000);
        qInfo("%s", qPrintable(second.out));  // the whole follow (a failure message is cut short)
        QVERIFY2(second.code == 0, qPrintable(second.out + second.err + m_cluster.logsHint()));
        QVERIFY2(second.out.contains(QLatin1String("sample video: ")), qPrintable(second.out));

        const auto a = attempts(*store, id);
        // Trial 0: killed (no exit.json) → resubmitted → resumed → completed.
        QCOMPARE(a[0].size(), 2);
        QCOMPARE(a[0][0].state, QStringLiteral("failed"));
        QCOMPARE(a[0][1].state, QStringLiteral("completed"));
        QVERIFY(a[0][1].slurmJobId != a[0][0].slurmJobId);  // a new job, not the array
        // Trial 1: preempted (exit 75 from the signal) → resubmitted → resumed → completed.
        QCOMPARE(a[1].size(), 2);
        QCOMPARE(a[1][0].state, QStringLiteral("preempted"));
        QVERIFY2(a[1][0].exitReason.contains(QLatin1String("SIGUSR1")), qPrintable(a[1][0].exitReason));
        QCOMPARE(a[1][1].state, QStringLiteral("completed"));
        for (int i : {0, 1}) {
            const RunDetails d = store->details(a[i][0].runId);
            QVERIFY2(d.tags.value(QStringLiteral("orrery.resumed_from")).startsWith(QLatin1String("step-")),
                     qPrintable(d.tags.value(QStringLiteral("orrery.resumed_from"))));
            QCOMPARE(lastStep(*store, a[i][0].runId), kSteps);
        }
        // Trials 2 and 3 (a learning rate of 1e-7) are worse than the median: stopped, not retried.
        for (int i : {2, 3}) {
            QCOMPARE(a[i].size(), 1);
            QCOMPARE(a[i][0].state, QStringLiteral("stopped"));
            QVERIFY(lastStep(*store, a[i][0].runId) < kSteps);
        }
        QCOMPARE(store->sweep(id)->state, QStringLiteral("finished"));
        checkGoodput(*store, id);
        if (QTest::currentTestFailed())
            return;

        const Result logs = orrery(
            {QStringLiteral("sweep"), QStringLiteral("logs"), QString::number(id), QStringLiteral("0")});
        QVERIFY2(logs.code == 0, qPrintable(logs.err));
        QVERIFY2(logs.out.contains(QLatin1String(".out <==")), qPrintable(logs.out));

        // Nothing of the names ran in a shell, and the nodes are fit for the next test.
        QDirIterator canaries(m_cluster.value("ORRERY_TEST_CLUSTER_DIR"), {QStringLiteral("pwned")},
                              QDir::Files, QDirIterator::Subdirectories);
        QVERIFY2(!canaries.hasNext(), qPrintable(canaries.hasNext() ? canaries.next() : QString()));
        orrery::remote::Connection ssh(orrery::test::clusterEndpoint(m_cluster));
        const auto nodes =
            ssh.exec(orrery::remote::commandLine(QList<QByteArray>{"sinfo", "-h", "-N", "-o", "%N %t"}))
                .result();
        QVERIFY2(!nodes.out.contains("drain") && !nodes.out.contains("down"), nodes.out.constData());
    }
};

ORRERY_TEST_MAIN(TestSweepCluster, QCoreApplication)
#include "tst_sweep_cluster.moc"
