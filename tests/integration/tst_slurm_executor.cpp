// SPDX-License-Identifier: GPL-3.0-or-later
// The Slurm executor against the fixture's real Slurm 22.05 and sshd, running the real trainer:
// a 4-trial batch throttled to 2 and a 2-node batch submitted in one SSH command each (counted),
// polled from Queued/Running to Ended with never more than 2 running, their events.jsonl followed
// from offsets while they grow, exit.json and Slurm's logs at the end; a running trial cancelled
// (it checkpoints, ends, and the nodes stay usable); and all of it in a sweep directory whose name
// is shell syntax, with run directories the archive cannot hold (a newline, outside the sweep
// directory), proving by a canary file that nothing was executed.
#include "remotesupport.h"

#include "orrery/remote/connection.h"
#include "orrery/remote/slurm.h"
#include "orrery/remote/slurmexecutor.h"

#include <algorithm>

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QThread>
#include <QUuid>

using orrery::core::FileRead;
using orrery::core::LaunchBatch;
using orrery::core::TaskLaunch;
using orrery::core::TaskStatus;
using orrery::remote::Connection;
using orrery::remote::SlurmExecutor;

namespace {

// The micro workload (tests/data/micro.yaml), `steps` long, a line per step. The comment is shell
// syntax: trial.yaml must arrive byte for byte and never be run.
QByteArray trialConfig(int steps)
{
    return "# $(touch pwned) `touch pwned` 'q' \"dq\" \\\n" + orrery::test::microConfig(steps);
}

QByteArray readLocal(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

}  // namespace

class TestSlurmExecutor : public QObject {
    Q_OBJECT

    orrery::test::TestCluster m_cluster;
    std::unique_ptr<Connection> m_connection;
    std::unique_ptr<SlurmExecutor> m_executor;
    QString m_base;  // everything of this test, removed at the end
    QString m_sweepDir;
    QString m_canary;
    QStringList m_launched;

    LaunchBatch batch(int number, const QStringList &runDirs, int steps, int maxConcurrent, int nodes = 1)
    {
        LaunchBatch b;
        b.sweepName = QStringLiteral("exec $(touch pwned) 'q' -rf");
        b.sweepDir = m_sweepDir;
        b.batch = number;
        b.maxConcurrent = maxConcurrent;
        b.resources.nodes = nodes;
        b.resources.mem = QStringLiteral("1G");
        b.resources.time = QStringLiteral("00:10:00");
        for (const QString &dir : runDirs)
            b.tasks.append(TaskLaunch{dir, trialConfig(steps), {}, {}});
        return b;
    }

    QStringList launchCounted(const LaunchBatch &b)
    {
        const quint64 before = m_connection->commandCount();
        const QStringList ids = m_executor->launch(b).taskIds;
        const quint64 used = m_connection->commandCount() - before;
        if (used > 3)
            qWarning("launch used %llu commands", static_cast<unsigned long long>(used));
        m_lastLaunchCommands = used;
        m_launched += ids;
        return ids;
    }
    quint64 m_lastLaunchCommands = 0;

    QString logsOf(const QStringList &ids) const
    {
        QString text;
        for (const QString &id : ids)
            for (const QString &path : m_executor->logPaths(m_sweepDir, id, {}))
                text +=
                    QStringLiteral("--- %1\n%2\n").arg(path, QString::fromUtf8(readLocal(path).right(3000)));
        return text + m_cluster.logsHint();
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(m_cluster.error().isEmpty(), qPrintable(m_cluster.error()));
        if (qEnvironmentVariableIsEmpty("ORRERY_TRAINER"))
            QSKIP("ORRERY_TRAINER is not set: the trainer was not built");
        m_connection = std::make_unique<Connection>(orrery::test::clusterEndpoint(m_cluster));
        m_base = m_cluster.value("ORRERY_TEST_JOBS_DIR") + QStringLiteral("/tst_slurm_executor-") +
            QUuid::createUuid().toString(QUuid::Id128);
        m_sweepDir = m_base + QStringLiteral("/sweep 'q' \"dq\" $(touch pwned) `touch pwned` ;&| -rf/-12");
        // Relative names land in the job's working directory (the sweep dir) or the SSH home.
        m_canary = m_sweepDir + QStringLiteral("/pwned");
        orrery::remote::ClusterProfile profile;
        profile.name = QStringLiteral("fixture");
        profile.remoteRoot = QStringLiteral("~/orrery");
        profile.trainerPath = qEnvironmentVariable("ORRERY_TRAINER");
        // The fixture's node names do not resolve (both are this machine): the ranks of a 2-node
        // trial meet at 127.0.0.1 (a real cluster uses the first host of SLURM_JOB_NODELIST).
        // The echo shows which task's output landed in which of Slurm's log files.
        profile.setup =
            QStringList{QStringLiteral("export MASTER_ADDR=127.0.0.1"),
                        QStringLiteral("echo \"task ${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}\"")};
        m_executor = std::make_unique<SlurmExecutor>(
            profile, *m_connection, m_base + QStringLiteral("/config"));  // no override there
    }

    void cleanupTestCase()
    {
        if (m_executor && !m_launched.isEmpty()) {
            try {
                m_executor->cancel(m_launched);
            } catch (const orrery::remote::RemoteError &) {
                // already gone
            }
        }
        QVERIFY2(!QFile::exists(m_canary), "something in the sweep directory's name was executed");
        QVERIFY(!QFile::exists(m_cluster.value("ORRERY_TEST_CLUSTER_DIR") + QStringLiteral("/home/pwned")));
        m_executor.reset();
        m_connection.reset();
        QDir(m_base).removeRecursively();
    }

    void nameAndRoot()
    {
        QCOMPARE(m_executor->name(), QStringLiteral("fixture"));
        const quint64 before = m_connection->commandCount();
        QCOMPARE(m_executor->defaultRoot(),
                 m_cluster.value("ORRERY_TEST_CLUSTER_DIR") + QStringLiteral("/home/orrery"));
        QCOMPARE(m_executor->defaultRoot(),
                 m_cluster.value("ORRERY_TEST_CLUSTER_DIR") + QStringLiteral("/home/orrery"));
        QCOMPARE(m_connection->commandCount() - before, quint64(1));  // asked once, remembered
    }

    void batchesRunThrottledAndAreFollowed()
    {
        // Batch 0: four trials, two at a time. Run dirs under the sweep dir travel in the
        // archive; one with a newline (no tar name) and one elsewhere are moved into place.
        const QStringList dirs0{m_sweepDir + QStringLiteral("/0"),
                                m_sweepDir + QStringLiteral("/1 'q' $(touch pwned)"),
                                m_sweepDir + QStringLiteral("/2\nnewline"),
                                m_base + QStringLiteral("/elsewhere $(touch pwned)/3")};
        // A stale verdict of an earlier attempt: launch must remove it before queueing.
        QVERIFY(QDir().mkpath(dirs0[0]));
        QFile stale(dirs0[0] + QStringLiteral("/exit.json"));
        QVERIFY(stale.open(QIODevice::WriteOnly));
        stale.write(R"({"state":"failed","reason":"stale","step":0})");
        stale.close();

        const LaunchBatch b0 = batch(0, dirs0, 40, 2);
        const QByteArray script = m_executor->describe(b0);
        QVERIFY(script.contains("#SBATCH --array=0-3%2"));
        const QStringList ids0 = launchCounted(b0);
        QCOMPARE(m_lastLaunchCommands, quint64(1));
        QCOMPARE(ids0.size(), 4);
        QVERIFY(ids0[0].endsWith(QLatin1String("_0")) && ids0[3].endsWith(QLatin1String("_3")));
        // Issue 42: the same launch sent again (its reply lost with the connection, or the
        // follower killed before it recorded the ids) answers the job Slurm already has and
        // queues no second array.
        QCOMPARE(m_executor->launch(b0).taskIds, ids0);
        QCOMPARE(readLocal(m_sweepDir + QStringLiteral("/batch-0.jobid")).trimmed(),
                 ids0[0].section(QLatin1Char('_'), 0, 0).toUtf8());
        // Batch 1: one trial of two ranks on the two nodes (rendezvous through srun's environment).
        const QString twoNodeDir = m_sweepDir + QStringLiteral("/4");
        const QStringList ids1 = launchCounted(batch(1, {twoNodeDir}, 4, 1, 2));
        QCOMPARE(m_lastLaunchCommands, quint64(1));
        for (const QString &d : dirs0)
            QCOMPARE(readLocal(d + QStringLiteral("/trial.yaml")), trialConfig(40));
        QVERIFY(!QFile::exists(dirs0[0] + QStringLiteral("/exit.json")) ||
                !readLocal(dirs0[0] + QStringLiteral("/exit.json")).contains("stale"));
        QVERIFY(QFile::exists(m_sweepDir + QStringLiteral("/batch-0.sbatch")));

        // Poll (one command per tick) and follow events.jsonl of every trial from its offset.
        const QStringList all = ids0 + ids1;
        const QStringList runDirs = dirs0 + QStringList{twoNodeDir};
        QList<qint64> offsets(all.size(), 0);
        QList<QByteArray> followed(all.size());
        QList<int> chunks(all.size(), 0);
        int maxRunning0 = 0;
        bool sawWaitingOrRunning = false;
        QDeadlineTimer deadline(150'000);
        QHash<QString, TaskStatus> statuses;
        for (;;) {
            const quint64 before = m_connection->commandCount();
            statuses = m_executor->poll(all);
            // One squeue; a second (squeue --start, Slurm's expected starts) only while some task
            // waits in the queue (docs/sweeps.md "Why is it pending?").
            const bool queued = std::any_of(statuses.cbegin(), statuses.cend(), [](const TaskStatus &s) {
                return s.state == TaskStatus::State::Queued;
            });
            QCOMPARE(m_connection->commandCount() - before, quint64(queued ? 2 : 1));
            QCOMPARE(statuses.size(), all.size());
            int running0 = 0;
            for (const QString &id : ids0)
                running0 += statuses[id].state == TaskStatus::State::Running;
            maxRunning0 = std::max(maxRunning0, running0);
            for (const TaskStatus &s : std::as_const(statuses))
                sawWaitingOrRunning |=
                    s.state == TaskStatus::State::Queued || s.state == TaskStatus::State::Running;

            QList<FileRead> reads;
            for (qsizetype i = 0; i < all.size(); ++i)
                reads.append(FileRead{runDirs[i] + QStringLiteral("/events.jsonl"), offsets[i], 4 << 20});
            const quint64 beforeRead = m_connection->commandCount();
            const auto got = m_executor->readFiles(reads);
            QCOMPARE(m_connection->commandCount() - beforeRead, quint64(1));
            QCOMPARE(got.size(), reads.size());
            for (qsizetype i = 0; i < got.size(); ++i) {
                if (!got[i].data.isEmpty())
                    ++chunks[i];
                followed[i] += got[i].data;
                offsets[i] += got[i].data.size();
                QVERIFY(!got[i].exists || got[i].size >= offsets[i]);
            }

            const bool done = std::all_of(statuses.begin(), statuses.end(), [](const TaskStatus &s) {
                return s.state == TaskStatus::State::Ended;
            });
            if (done)
                break;
            QVERIFY2(!deadline.hasExpired(), qPrintable(logsOf(all)));
            QThread::msleep(300);
        }
        QVERIFY(m_executor->hasPerl().value_or(false));
        QVERIFY(sawWaitingOrRunning);
        QVERIFY2(maxRunning0 <= 2, qPrintable(QStringLiteral("%1 ran at once").arg(maxRunning0)));
        for (const QString &id : all)
            QVERIFY2(statuses[id].detail.startsWith(QLatin1String("COMPLETED")),
                     qPrintable(id + QStringLiteral(": ") + statuses[id].detail + logsOf({id})));

        // The last bytes and the verdicts, in one read.
        QList<FileRead> reads;
        for (qsizetype i = 0; i < all.size(); ++i) {
            reads.append(FileRead{runDirs[i] + QStringLiteral("/events.jsonl"), offsets[i], 4 << 20});
            reads.append(FileRead{runDirs[i] + QStringLiteral("/exit.json"), 0, 4 << 20});
        }
        const auto last = m_executor->readFiles(reads);
        for (qsizetype i = 0; i < all.size(); ++i) {
            followed[i] += last[2 * i].data;
            const QByteArray events = readLocal(runDirs[i] + QStringLiteral("/events.jsonl"));
            QCOMPARE(followed[i], events);  // the chunks add up to the file, byte for byte
            QVERIFY(last[2 * i + 1].exists);
            QCOMPARE(QJsonDocument::fromJson(last[2 * i + 1].data)[QLatin1String("state")].toString(),
                     QStringLiteral("completed"));
            // Slurm's own logs of the task, where logPaths says.
            const QStringList logs = m_executor->logPaths(m_sweepDir, all[i], runDirs[i]);
            QCOMPARE(logs.size(), 2);
            for (const QString &log : logs)
                QVERIFY2(QFile::exists(log), qPrintable(log));
            QVERIFY2(readLocal(logs[0]).contains(QByteArray("task " + all[i].toUtf8() + '\n')),
                     qPrintable(logsOf({all[i]})));
        }
        // The per-file SFTP reader (clusters without perl) answers the same.
        m_executor->setUsePerl(false);
        const auto viaSftp = m_executor->readFiles(reads);
        m_executor->setUsePerl(true);
        QCOMPARE(viaSftp.size(), last.size());
        for (qsizetype i = 0; i < last.size(); ++i) {
            QCOMPARE(viaSftp[i].exists, last[i].exists);
            QCOMPARE(viaSftp[i].size, last[i].size);
            QCOMPARE(viaSftp[i].data, last[i].data);
        }
        // A tick that caught the trainers mid-run (the 40 steps log a line each) read in pieces.
        QVERIFY(std::any_of(chunks.begin(), chunks.end(), [](int n) { return n > 1; }));
        const QJsonObject start = QJsonDocument::fromJson(followed.back().left(followed.back().indexOf('\n')))
                                      .object()[QLatin1String("run")]
                                      .toObject();
        QCOMPARE(start[QLatin1String("world_size")].toInt(), 2);
        QVERIFY(!QFile::exists(m_canary));
    }

    void cancellingARunningTaskEndsItAndKeepsNodesUsable()
    {
        const QString dir = m_sweepDir + QStringLiteral("/cancel me");
        const QStringList ids = launchCounted(batch(2, {dir}, 100'000, 1));
        QCOMPARE(ids.size(), 1);
        // Wait until the trainer logs steps, then cancel it.
        QDeadlineTimer deadline(120'000);
        while (!readLocal(dir + QStringLiteral("/events.jsonl")).contains("\"metrics\"")) {
            QVERIFY2(!deadline.hasExpired(), qPrintable(logsOf(ids)));
            QThread::msleep(300);
        }
        QCOMPARE(m_executor->poll(ids)[ids[0]].state, TaskStatus::State::Running);
        m_executor->cancel(ids);
        m_executor->cancel(ids);  // twice: harmless
        deadline.setRemainingTime(60'000);
        TaskStatus status;
        while ((status = m_executor->poll(ids)[ids[0]]).state != TaskStatus::State::Ended) {
            QVERIFY2(!deadline.hasExpired(), qPrintable(status.detail + logsOf(ids)));
            QThread::msleep(300);
        }
        // The trainer saw SIGTERM, checkpointed and said so.
        const QJsonObject exit =
            QJsonDocument::fromJson(readLocal(dir + QStringLiteral("/exit.json"))).object();
        QCOMPARE(exit[QLatin1String("state")].toString(), QStringLiteral("preempted"));
        QVERIFY2(exit[QLatin1String("reason")].toString().contains(QLatin1String("SIGTERM")),
                 QJsonDocument(exit).toJson().constData());
        QVERIFY(QFile::exists(dir + QStringLiteral("/checkpoints/latest")));
        // No node drained or down: cancelling left the cluster usable.
        orrery::remote::SlurmClient slurm(*m_connection);
        for (const auto &node : slurm.clusterInfo().nodes)
            QVERIFY2(!node.state.contains(QLatin1String("drain")) &&
                         !node.state.contains(QLatin1String("down")),
                     qPrintable(node.name + QStringLiteral(": ") + node.state));
        // Cancelling ended and unknown tasks is not an error.
        m_executor->cancel(ids + QStringList{QStringLiteral("999999_0")});
        // A task Slurm does not know, on a cluster without accounting: Unknown (the runner then
        // reads exit.json).
        const TaskStatus forgotten =
            m_executor->poll({QStringLiteral("999999_0")}).value(QStringLiteral("999999_0"));
        QCOMPARE(forgotten.state, TaskStatus::State::Unknown);
    }

    void refusedValuesSendNothing()
    {
        // sbatch's #SBATCH parser cannot carry a newline or a backslash in --chdir, Slurm expands
        // '%': such a sweep dir is refused before anything reaches the cluster.
        const quint64 before = m_connection->commandCount();
        for (const QString &bad : {QStringLiteral("/new\nline"), QStringLiteral("/back\\slash"),
                                   QStringLiteral("/per%cent"), QStringLiteral("relative/dir")}) {
            LaunchBatch b = batch(7, {m_sweepDir + QStringLiteral("/7")}, 1, 1);
            b.sweepDir = m_base + bad;
            if (bad.startsWith(QLatin1String("relative")))
                b.sweepDir = bad;
            QVERIFY_THROWS_EXCEPTION(std::runtime_error, m_executor->launch(b));
        }
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, m_executor->launch(batch(7, {}, 1, 1)));  // no trials
        QVERIFY_THROWS_EXCEPTION(
            std::runtime_error,
            m_executor->launch(batch(7, {m_sweepDir + QStringLiteral("/nul") + QChar(0)}, 1, 1)));
        QVERIFY_THROWS_EXCEPTION(
            std::runtime_error,
            m_executor->readFiles({FileRead{QStringLiteral("relative/events.jsonl"), 0, 10}}));
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, m_executor->poll({QStringLiteral("1; rm -rf ~")}));
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, m_executor->cancel({QStringLiteral("1_[0-3]")}));
        QCOMPARE(m_connection->commandCount(), before);
        QVERIFY(!QFile::exists(m_base + QStringLiteral("/new\nline")));
    }
};

ORRERY_TEST_MAIN(TestSlurmExecutor, QCoreApplication)
#include "tst_slurm_executor.moc"
