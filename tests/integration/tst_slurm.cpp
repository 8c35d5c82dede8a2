// SPDX-License-Identifier: GPL-3.0-or-later
// remote::SlurmClient against the fixture's real Slurm 22.05 (two nodes with four fake GPUs each,
// no accounting): arrays with a %2 throttle seen in squeue, throttle changes, cancelling one task
// and a whole array, node and partition listing, Slurm's own error text, polling 200 jobs in one
// command, and hostile job names.
#include "remotesupport.h"

#include "orrery/remote/slurm.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QDir>
#include <QFile>
#include <QRegularExpression>
#include <QThread>
#include <QUuid>

using namespace std::chrono_literals;
using orrery::remote::Connection;
using orrery::remote::Endpoint;
using orrery::remote::RemoteError;
using orrery::remote::SlurmClient;
using orrery::remote::SubmitOptions;
namespace slurm = orrery::remote::slurm;

class TestSlurm : public QObject {
    Q_OBJECT

    orrery::test::TestCluster m_cluster;
    std::unique_ptr<Connection> m_connection;
    std::unique_ptr<SlurmClient> m_slurm;
    QString m_dir;
    QStringList m_submitted;  // cancelled at the end, whatever happened

    QString submit(const QByteArray &body, SubmitOptions options)
    {
        const QString script =
            m_dir + QStringLiteral("/%1.sh").arg(QUuid::createUuid().toString(QUuid::Id128));
        if (options.output.isEmpty())
            options.output = m_dir + QStringLiteral("/%A_%a.out");
        const slurm::Submitted s = m_slurm->submit(script, "#!/bin/sh\n" + body + '\n', options);
        m_submitted.append(s.jobId);
        return s.jobId;
    }

    // Polls until `done(jobs)` or the deadline; returns the last jobs seen.
    template<typename Done>
    QList<slurm::Job> waitFor(const QStringList &ids, Done done, int ms = 30'000)
    {
        QDeadlineTimer deadline(ms);
        QList<slurm::Job> jobs;
        do {
            jobs = m_slurm->jobs(ids);
            if (done(jobs))
                return jobs;
            QThread::msleep(200);
        } while (!deadline.hasExpired());
        return jobs;
    }

    static int count(const QList<slurm::Job> &jobs, const char *state)
    {
        return static_cast<int>(std::count_if(
            jobs.begin(), jobs.end(), [&](const slurm::Job &j) { return j.state == QLatin1String(state); }));
    }

    static QString describe(const QList<slurm::Job> &jobs)
    {
        QStringList parts;
        for (const slurm::Job &j : jobs)
            parts.append(j.jobId + QLatin1Char(':') + j.state + QLatin1Char('/') + j.reason);
        return parts.join(QLatin1Char(' '));
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(m_cluster.error().isEmpty(), qPrintable(m_cluster.error()));
        const Endpoint e = orrery::test::clusterEndpoint(m_cluster);
        m_connection = std::make_unique<Connection>(e);
        m_slurm = std::make_unique<SlurmClient>(*m_connection);
        m_dir = m_cluster.value("ORRERY_TEST_JOBS_DIR") + QStringLiteral("/tst_slurm-") +
            QUuid::createUuid().toString(QUuid::Id128);
    }

    void cleanupTestCase()
    {
        for (const QString &id : std::as_const(m_submitted)) {
            try {
                m_slurm->cancel(id);
            } catch (const RemoteError &) {
                // already gone
            }
        }
        m_slurm.reset();
        m_connection.reset();
        QDir(m_dir).removeRecursively();
    }

    void versionNodesAndPartitions()
    {
        QVERIFY(
            QRegularExpression(QStringLiteral("^\\d+\\.\\d+\\.\\d+$")).match(m_slurm->version()).hasMatch());
        const slurm::ClusterInfo info = m_slurm->clusterInfo();
        const QStringList nodes = m_cluster.value("ORRERY_TEST_SLURM_NODES").split(QLatin1Char(','));
        const int gpus = m_cluster.value("ORRERY_TEST_SLURM_GPUS_PER_NODE").toInt();
        QCOMPARE(info.nodes.size(), nodes.size());
        for (const slurm::Node &n : info.nodes) {
            QVERIFY(nodes.contains(n.name));
            QCOMPARE(n.gpusTotal, gpus);
            QVERIFY(n.cpusTotal > 0);
            QVERIFY(n.memoryMb > 0);
        }
        QCOMPARE(info.partitions.size(), 2);
        QCOMPARE(info.partitions[0].name, QStringLiteral("gpu"));
        QVERIFY(info.partitions[0].isDefault);
        QCOMPARE(info.partitions[0].nodes.size(), nodes.size());
        QCOMPARE(info.partitions[0].gpusTotal, gpus * nodes.size());
        QCOMPARE(info.partitions[1].name, QStringLiteral("debug"));
        QCOMPARE(info.partitions[1].timeLimit, QStringLiteral("30:00"));

        const slurm::Record node = m_slurm->showNode(nodes.first());
        QCOMPARE(node.value(QStringLiteral("NodeName")), nodes.first());
        QCOMPARE(slurm::gpuCount(node.value(QStringLiteral("Gres"))), gpus);
        QVERIFY_THROWS_EXCEPTION(RemoteError, m_slurm->showNode(QStringLiteral("--all")));
    }

    void arrayThrottleIsObservedChangedAndCancelled()
    {
        SubmitOptions options;
        options.jobName = QStringLiteral("orrery-throttle");
        options.array = QStringLiteral("0-5");
        options.throttle = 2;
        // exec: each task is one process. The fixture's proctrack/linuxproc signals the tree under
        // the task's shell; a cancel that lands while the shell is forking `sleep` kills the shell
        // and misses the child, which runs on after its job ended (seen once in CI: the throttled
        // array's next task had just started when the array was cancelled).
        const QString id = submit("exec sleep 120", options);
        // Two tasks run; the others wait on the throttle (JobArrayTaskLimit), though CPUs are free.
        QList<slurm::Job> jobs =
            waitFor({id}, [](const QList<slurm::Job> &j) { return count(j, "RUNNING") == 2; });
        QVERIFY2(count(jobs, "RUNNING") == 2, qPrintable(describe(jobs)));
        QCOMPARE(jobs.size(), 6);
        for (const slurm::Job &j : jobs) {
            QCOMPARE(j.arrayJobId, id);
            if (j.state == QLatin1String("PENDING"))
                QCOMPARE(j.reason, QStringLiteral("JobArrayTaskLimit"));
        }
        QCOMPARE(m_slurm->showJob(id + QStringLiteral("_0")).value(QStringLiteral("ArrayTaskThrottle")),
                 QStringLiteral("2"));

        m_slurm->setArrayThrottle(id, 3);
        jobs = waitFor({id}, [](const QList<slurm::Job> &j) { return count(j, "RUNNING") == 3; });
        QVERIFY2(count(jobs, "RUNNING") == 3, qPrintable(describe(jobs)));

        // One running task: it ends CANCELLED, the rest go on (a freed slot starts the next).
        QString task;
        for (const slurm::Job &j : std::as_const(jobs))
            if (j.state == QLatin1String("RUNNING") && task.isEmpty())
                task = j.jobId;
        m_slurm->cancel(task);
        jobs = waitFor({task}, [](const QList<slurm::Job> &j) { return count(j, "CANCELLED") == 1; });
        QVERIFY2(jobs.size() == 1 && jobs.front().state == QLatin1String("CANCELLED"),
                 qPrintable(describe(jobs)));
        jobs = waitFor({id}, [](const QList<slurm::Job> &j) { return count(j, "RUNNING") == 3; });
        QVERIFY2(count(jobs, "CANCELLED") == 1 && count(jobs, "RUNNING") == 3, qPrintable(describe(jobs)));
        // ...then the whole array.
        m_slurm->cancel(id);
        jobs = waitFor({id}, [](const QList<slurm::Job> &j) { return count(j, "CANCELLED") == j.size(); });
        QVERIFY2(count(jobs, "CANCELLED") == 6, qPrintable(describe(jobs)));
    }

    void pollingTwoHundredJobsIsOneCommand()
    {
        SubmitOptions options;
        options.jobName = QStringLiteral("orrery-poll");
        options.array = QStringLiteral("0-199");
        options.extra = QStringList{QStringLiteral("--hold")};  // they only need to exist
        const QString id = submit("true", options);
        QStringList ids;
        for (int i = 0; i < 200; ++i)
            ids.append(QStringLiteral("%1_%2").arg(id).arg(i));
        const quint64 before = m_connection->commandCount();
        const QList<slurm::Job> jobs = m_slurm->jobs(ids);
        QCOMPARE(m_connection->commandCount() - before, quint64(1));
        QCOMPARE(jobs.size(), 200);
        QCOMPARE(count(jobs, "PENDING"), 200);
        m_slurm->cancel(id);
    }

    void slurmRefusalsCarrySlurmsText()
    {
        SubmitOptions options;
        options.partition = QStringLiteral("no-such-partition");
        try {
            submit("true", options);
            QFAIL("sbatch accepted an unknown partition");
        } catch (const RemoteError &e) {
            QCOMPARE(e.kind(), RemoteError::Kind::Slurm);
            QVERIFY2(e.message().contains(QLatin1String("invalid partition"), Qt::CaseInsensitive),
                     qPrintable(e.message()));
        }
        // A job Slurm has forgotten (or never had) is simply absent from a poll.
        QCOMPARE(m_slurm->jobs({QStringLiteral("987654")}).size(), 0);
        QVERIFY_THROWS_EXCEPTION(RemoteError, m_slurm->cancel(QStringLiteral("-u root")));
        QVERIFY_THROWS_EXCEPTION(RemoteError, m_slurm->jobs({QStringLiteral("1,2")}));
    }

    void withoutAccountingSacctIsAskedOnce()
    {
        QVERIFY(!m_slurm->hasAccounting());
        const quint64 before = m_connection->commandCount();
        QVERIFY(!m_slurm->accounting({QStringLiteral("1")}));
        QVERIFY(!m_slurm->hasAccounting());
        QCOMPARE(m_connection->commandCount(), before);  // remembered: no second sacct
    }

    void hostileJobNamesAndPathsNeverRun()
    {
        const QString canary = QStringLiteral("/tmp/orrery-pwned");
        QFile::remove(canary);
        SubmitOptions options;
        options.extra = QStringList{QStringLiteral("--hold")};
        int accepted = 0;
        for (const QByteArray &hostile : orrery::test::hostileArguments()) {
            options.jobName = QString::fromUtf8(hostile);
            options.output = m_dir + QStringLiteral("/") +
                QString::fromUtf8(hostile).replace(QLatin1Char('/'), QLatin1Char('_'));
            try {
                const QString id = submit("true", options);
                ++accepted;
                // The name reached Slurm as one value, byte for byte.
                if (!hostile.isEmpty() && !hostile.contains('\n') &&
                    QString::fromUtf8(hostile).toUtf8() == hostile)
                    QCOMPARE(m_slurm->showJob(id).value(QStringLiteral("JobName")).toUtf8(),
                             hostile.trimmed());
                m_slurm->cancel(id);
            } catch (const RemoteError &e) {
                // Slurm may refuse a name; it must say so, not run it.
                QCOMPARE(e.kind(), RemoteError::Kind::Slurm);
            }
        }
        QVERIFY(accepted > 15);
        // As a partition or an account: Slurm refuses them all, with its own words.
        options.jobName.clear();
        options.output.clear();
        for (const QByteArray &hostile : orrery::test::hostileArguments()) {
            if (hostile.isEmpty())
                continue;
            options.partition = QString::fromUtf8(hostile);
            QVERIFY_THROWS_EXCEPTION(RemoteError, submit("true", options));
        }
        QVERIFY2(!QFile::exists(canary), "a hostile job name ran a command");
    }
};

ORRERY_TEST_MAIN(TestSlurm, QCoreApplication)
#include "tst_slurm.moc"
