// SPDX-License-Identifier: GPL-3.0-or-later
// A sweep on the fixture's real Slurm through real SSH, as a user drives it: `orrery cluster add`,
// `orrery sweep submit --cluster` (one job array, %2, two ranks per trial through srun), then
// `orrery sweep watch` following it while the test causes faults for real: one trial's ranks are
// SIGKILLed (no exit.json: the runner resubmits it and it resumes from its checkpoint), another
// gets Slurm's pre-timeout signal in its ranks (as `--signal=USR1@120` delivers it: it
// checkpoints, exits 75 and is resubmitted), the watcher is interrupted (detach) and a second one picks the
// sweep up, and median early stopping cancels the trials that learn nothing. Names are shell syntax
// throughout.
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

#include <csignal>

using namespace orrery::core;

// Long enough to be caught running past the first checkpoint (step 10) and past median early
// stopping's min_step: 135 steps to go, several seconds with two trials of two ranks each on the
// machine's two cores (a 2-rank micro step is slower than micro.yaml's 40 ms alone).
constexpr qint64 kSteps = 150;

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

    // The pids of the trainer processes whose command line holds `needle` (the fixture's nodes
    // are this machine; srun's own command line holds it too, and is left alone).
    static QList<qint64> pidsWith(const QByteArray &needle)
    {
        QList<qint64> pids;
        QDirIterator it(QStringLiteral("/proc"), QDir::Dirs | QDir::NoDotAndDotDot);
        while (it.hasNext()) {
            const QString dir = it.next();
            bool ok = false;
            const qint64 pid = QFileInfo(dir).fileName().toLongLong(&ok);
            if (!ok)
                continue;
            QFile cmdline(dir + QStringLiteral("/cmdline"));
            if (!cmdline.open(QIODevice::ReadOnly))
                continue;
            const QByteArray line = cmdline.readAll();
            if (line.contains(needle) &&
                line.startsWith(qEnvironmentVariable("ORRERY_TRAINER").toUtf8().append('\0')))
                pids << pid;
        }
        return pids;
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
                    "metric: {name: train/loss, goal: minimize}\n"
                    "parameters:\n"
                    "  optim.lr: {values: [3e-3, 1e-7]}\n"
                    "  seed: {values: [1, 2]}\n"
                    "  train.steps: {value: " +
                    QByteArray::number(kSteps) +
                    "}\n"
                    "early_terminate: {type: median, min_step: 5, min_trials: 2}\n"
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
                ready &= t.state == QLatin1String("running") && step >= 12 &&
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
