// SPDX-License-Identifier: GPL-3.0-or-later
// Array limits and pending reasons (docs/sweeps.md "Array limits", "Why is it pending?") on a
// fixture Slurm of its own, started with `MaxArraySize=10` (the `cluster_limits` fixture in
// tests/CMakeLists.txt): the executor reads the limit, an array over it is refused by sbatch and
// held (never fails the sweep), a 25-trial sweep runs in chunks of at most 10 with every trial
// run once, a trial over the `debug` partition's MaxTime is said never to start, and a trial
// waiting behind a job that holds both nodes gets Slurm's expected start.
#include "remotesupport.h"

#include "orrery/core/store.h"
#include "orrery/remote/connection.h"
#include "orrery/remote/shell.h"
#include "orrery/remote/slurmexecutor.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDeadlineTimer>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSet>
#include <QThread>

#include <csignal>

using namespace orrery::core;
using orrery::remote::Connection;
using orrery::remote::SlurmExecutor;

// The fixture's MaxArraySize (tests/CMakeLists.txt, cluster_limits.up) and a sweep that needs three
// arrays under it.
constexpr int kMaxArraySize = 10;
constexpr int kTrials = 25;

class TestSweepLimits : public QObject {
    Q_OBJECT

    orrery::test::TestCluster m_cluster;
    orrery::test::CliUser m_user;
    using Result = orrery::test::CliUser::Result;
    QString m_root;

    Result orrery(const QStringList &args, int timeoutMs = 120'000) { return m_user.run(args, timeoutMs); }

    QString writeSpec(const QString &name, const QByteArray &yaml) { return m_user.writeFile(name, yaml); }

    int submit(const QString &spec)
    {
        QString problem;
        const int id = m_user.submitSweep(spec, QStringLiteral("fixture"), &problem);
        if (id < 0) {
            QTest::qFail(qPrintable(problem), __FILE__, __LINE__);
            return 0;
        }
        return id;
    }

    QJsonObject status(int sweep)
    {
        const Result r = orrery({QStringLiteral("sweep"), QStringLiteral("status"), QString::number(sweep),
                                 QStringLiteral("--json")});
        return QJsonDocument::fromJson(r.out.toUtf8()).object();
    }

    // Runs `sweep watch` until `done` says so (or the deadline); returns what it printed.
    QString watchUntil(int sweep, int ms, const std::function<bool()> &done)
    {
        QProcess p;
        m_user.start(p,
                     {QStringLiteral("sweep"), QStringLiteral("watch"), QString::number(sweep),
                      QStringLiteral("--pace"), QStringLiteral("0.25,0.5")});
        p.waitForStarted();
        QDeadlineTimer deadline(ms);
        while (!deadline.hasExpired() && p.state() == QProcess::Running && !done())
            p.waitForFinished(500);
        if (p.state() == QProcess::Running) {
            // Ctrl-C: the watch detaches and gives its lease back, so a cancel need not wait for
            // the lease to expire.
            ::kill(pid_t(p.processId()), SIGINT);
            if (!p.waitForFinished(20'000)) {
                p.kill();
                p.waitForFinished();
            }
        }
        return QString::fromUtf8(p.readAllStandardOutput() + p.readAllStandardError());
    }

    QByteArray slurm(const QString &command)
    {
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("SLURM_CONF"), m_cluster.value("SLURM_CONF"));
        p.setProcessEnvironment(env);
        p.start(QStringLiteral("/bin/sh"), {QStringLiteral("-c"), command});
        p.waitForFinished(60'000);
        return p.readAllStandardOutput() + p.readAllStandardError();
    }

private Q_SLOTS:
    void initTestCase()
    {
        const QString blocker = orrery::test::clusterTestBlocker(m_cluster, m_user);
        QVERIFY2(blocker.isEmpty(), qPrintable(blocker));
        QString problem;
        m_root = orrery::test::addFixtureCluster(m_user, m_cluster, QStringLiteral("fixture"),
                                                 QStringLiteral("tst_sweep_limits"), &problem);
        QVERIFY2(!m_root.isEmpty(), qPrintable(problem));
    }

    // The executor reads the fixture's limits in one command, and an array over MaxArraySize is
    // refused by the real sbatch as a limit (Launched::held: held and tried again), not as an error.
    void executorReadsLimitsAndHoldsARefusedArray()
    {
        Connection connection(orrery::test::clusterEndpoint(m_cluster));
        orrery::remote::ClusterProfile profile;
        profile.name = QStringLiteral("fixture");
        profile.remoteRoot = m_root;
        profile.partition = QStringLiteral("gpu");
        SlurmExecutor executor(profile, connection, m_user.filePath(QStringLiteral("config")));
        const SubmitLimits limits = executor.submitLimits();
        QCOMPARE(limits.maxArraySize, kMaxArraySize);
        QCOMPARE(limits.maxJobCount, 10000);  // Slurm's default
        const auto commands = connection.commandCount();
        QCOMPARE(executor.submitLimits(), limits);  // remembered
        QCOMPARE(connection.commandCount(), commands);

        // One array task at a time, never the whole array: a bare job id is refused before any
        // command runs.
        try {
            executor.cancel({QStringLiteral("1")});
            QFAIL("cancel took a whole array's id");
        } catch (const orrery::remote::RemoteError &e) {
            QVERIFY2(e.message().contains(QLatin1String("whole job array")), qPrintable(e.message()));
        }
        QCOMPARE(connection.commandCount(), commands);

        LaunchBatch batch;
        batch.sweepName = QStringLiteral("too-big");
        batch.sweepDir = m_root + QStringLiteral("/too-big");
        batch.resources.cpusPerTask = 1;
        for (int i = 0; i <= kMaxArraySize; ++i)  // the last index is not below MaxArraySize
            batch.tasks.append({QStringLiteral("%1/%2").arg(batch.sweepDir).arg(i), "x: 1\n", {}, {}});
        const Launched held = executor.launch(batch);
        QVERIFY2(held.taskIds.isEmpty(), qPrintable(held.taskIds.join(QLatin1Char(' '))));
        QVERIFY2(held.held.contains(QLatin1String("MaxArraySize")), qPrintable(held.held));
        QVERIFY2(held.held.contains(QLatin1String("Invalid job array specification")), qPrintable(held.held));
    }

    // 25 trials of `true` against MaxArraySize 10: chunks of at most 10 launched as room frees,
    // each trial run exactly once, the sweep finished.
    void sweepLargerThanMaxArraySizeRunsInChunks()
    {
        QByteArray values;
        for (int i = 0; i < kTrials; ++i)
            values += (i ? ", " : "") + QByteArray::number(i);
        const QString spec =
            writeSpec(QStringLiteral("chunks.yaml"),
                      "name: chunks\n"
                      "command: [\"true\", \"{{i}}\"]\n"
                      "method: grid\n"
                      "parameters:\n  i: {values: [" +
                          values +
                          "]}\n"
                          "max_concurrent: 200\n"
                          "resources: {nodes: 1, cpus_per_task: 1, mem: 64M, time: \"00:05:00\"}\n");
        const int sweep = submit(spec);
        QVERIFY(sweep);
        auto store = TrackingStore::open(m_user.db(), TrackingStore::Mode::ReadOnly);
        {
            // The first chunk only: the rest recorded pending, with why.
            const QList<Trial> first = store->trials(sweep);
            QCOMPARE(first.size(), kTrials);
            int queued = 0, pending = 0;
            for (const Trial &t : first) {
                queued += t.trialState() == TrialState::Queued ? 1 : 0;
                if (t.trialState() == TrialState::Pending) {
                    ++pending;
                    QVERIFY2(t.detail.contains(QLatin1String("MaxArraySize 10")), qPrintable(t.detail));
                    QVERIFY(t.task.isEmpty());
                }
            }
            QCOMPARE(queued, kMaxArraySize);
            QCOMPARE(pending, kTrials - kMaxArraySize);
            const Result shown =
                orrery({QStringLiteral("sweep"), QStringLiteral("status"), QString::number(sweep)});
            QVERIFY2(
                shown.out.contains(QLatin1String("15 not submitted yet: waiting for room under the cluster's "
                                                 "MaxArraySize 10")),
                qPrintable(shown.out));
        }
        const QString watched = watchUntil(sweep, 170'000, [] { return false; });
        const auto sw = store->sweep(sweep);
        QVERIFY(sw);
        QVERIFY2(sw->state == QLatin1String("finished"),
                 qPrintable(sw->state + QLatin1Char(' ') + sw->message + watched.right(3000)));
        const QList<Trial> attempts = store->trials(sweep);
        QCOMPARE(attempts.size(), kTrials);  // one attempt each: nothing ran twice
        QSet<int> indexes;
        QHash<QString, int> perArray;
        for (const Trial &t : attempts) {
            QVERIFY2(t.trialState() == TrialState::Completed,
                     qPrintable(QStringLiteral("trial %1: %2 %3").arg(t.index).arg(t.state, t.exitReason)));
            QCOMPARE(t.attempt, 0);
            indexes.insert(t.index);
            ++perArray[t.slurmJobId];
            QVERIFY2(t.slurmTaskId.toInt() < kMaxArraySize, qPrintable(t.task));
        }
        QCOMPARE(indexes.size(), kTrials);
        QVERIFY2(perArray.size() >= 3, qPrintable(QStringList(perArray.keys()).join(QLatin1Char(' '))));
        for (auto it = perArray.cbegin(); it != perArray.cend(); ++it)
            QVERIFY2(it.value() <= kMaxArraySize, qPrintable(it.key()));
    }

    // A trial over the `debug` partition's MaxTime (30 min) pends with PartitionTimeLimit: the
    // status says it never starts, and why.
    void partitionTimeLimitNeverStarts()
    {
        const QString spec =
            writeSpec(QStringLiteral("too-long.yaml"),
                      "name: too-long\n"
                      "command: [\"true\"]\n"
                      "method: grid\n"
                      "parameters:\n  i: {value: 1}\n"
                      "resources: {nodes: 1, cpus_per_task: 1, partition: debug, time: \"01:00:00\"}\n");
        const int sweep = submit(spec);
        QVERIFY(sweep);
        QString note;
        const QString watched = watchUntil(sweep, 60'000, [&] {
            const QJsonArray trials = status(sweep).value(QStringLiteral("trials")).toArray();
            note =
                trials.isEmpty() ? QString() : trials[0].toObject().value(QStringLiteral("note")).toString();
            return note.contains(QLatin1String("PartitionTimeLimit"));
        });
        QVERIFY2(note.contains(QLatin1String("PartitionTimeLimit")), qPrintable(note + watched));
        const Result shown =
            orrery({QStringLiteral("sweep"), QStringLiteral("status"), QString::number(sweep)});
        QVERIFY2(shown.out.contains(
                     QStringLiteral("waiting: 1 never starts: PartitionTimeLimit — the time limit is "
                                    "above the partition's maximum")),
                 qPrintable(shown.out));
        const Result cancel =
            orrery({QStringLiteral("sweep"), QStringLiteral("cancel"), QString::number(sweep)});
        QVERIFY2(cancel.code == 0, qPrintable(cancel.err));
    }

    // Behind a job that holds both nodes, a trial pends on Resources with Slurm's expected start
    // (squeue --start), stored and shown.
    void expectedStartWhilePendingOnResources()
    {
        const QByteArray blocker =
            slurm(QStringLiteral("sbatch --parsable -N2 --exclusive -t 5 -o /dev/null --wrap 'sleep 300'"))
                .trimmed();
        QVERIFY2(!blocker.isEmpty() && blocker.toInt() > 0, blocker.constData());
        const QString spec = writeSpec(QStringLiteral("waits.yaml"),
                                       "name: waits\n"
                                       "command: [\"true\"]\n"
                                       "method: grid\n"
                                       "parameters:\n  i: {value: 1}\n"
                                       "resources: {nodes: 1, cpus_per_task: 1, time: \"00:05:00\"}\n");
        const int sweep = submit(spec);
        QJsonObject trial;
        const QString watched = watchUntil(sweep, 90'000, [&] {
            const QJsonArray trials = status(sweep).value(QStringLiteral("trials")).toArray();
            trial = trials.isEmpty() ? QJsonObject() : trials[0].toObject();
            return trial.contains(QStringLiteral("expected_start_ms")) &&
                trial.value(QStringLiteral("note")).toString().contains(QLatin1String("(Resources)"));
        });
        slurm(QStringLiteral("scancel ") + QString::fromUtf8(blocker));
        const qint64 start = qint64(trial.value(QStringLiteral("expected_start_ms")).toDouble());
        const qint64 now = QDateTime::currentMSecsSinceEpoch();
        // Slurm plans it after the blocker's 5-minute limit, give or take its scheduling rounds.
        QVERIFY2(start > now && start < now + 30 * 60'000,
                 qPrintable(QString::number(start - now) + QString::fromUtf8(QJsonDocument(trial).toJson()) +
                            watched));
        const QString note = trial.value(QStringLiteral("note")).toString();
        QVERIFY2(note.contains(QLatin1String("(Resources), expected start in ~")), qPrintable(note));
        const Result cancel =
            orrery({QStringLiteral("sweep"), QStringLiteral("cancel"), QString::number(sweep)});
        QVERIFY2(cancel.code == 0, qPrintable(cancel.err));
    }
};

ORRERY_TEST_MAIN(TestSweepLimits, QCoreApplication)
#include "tst_sweep_limits.moc"
