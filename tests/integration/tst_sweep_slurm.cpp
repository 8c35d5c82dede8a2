// SPDX-License-Identifier: GPL-3.0-or-later
// The rendered sweep script on the fixture's real Slurm 22.05: a 2-task job array, each task two
// ranks on fake GPUs through srun, trial directories and a job name full of shell syntax. Each
// rank (a stand-in trainer) must get its trial directory byte for byte, Slurm must show the job
// name verbatim, nothing may be executed, and SIGUSR1 sent to the batch shell (what
// --signal=B:USR1@120 does before the time limit) must reach every rank through the trap.
#include "remotesupport.h"

#include "orrery/remote/connection.h"
#include "orrery/remote/sbatch.h"
#include "orrery/remote/shell.h"
#include "orrery/remote/slurm.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QDir>
#include <QFile>
#include <QThread>
#include <QUuid>

using orrery::remote::Connection;
using orrery::remote::SbatchJob;
using orrery::remote::SlurmClient;
namespace slurm = orrery::remote::slurm;

namespace {

// The trainer's stand-in: records argv (NUL-separated) per rank, says it is ready, and exits 75
// (preempted) on SIGUSR1, as orrery-train does; it ends by itself after a minute (a cancelled
// step whose ranks outlive it can drain the fixture's nodes).
const QByteArray kFakeTrainer = R"(#!/bin/bash
dir=$4
trap 'echo "$SLURM_PROCID" > "$dir/usr1.$SLURM_PROCID"; exit 75' USR1
printf '%s\0' "$@" > "$dir/args.$SLURM_PROCID"
echo ready > "$dir/ready.$SLURM_PROCID"
for i in $(seq 600); do sleep 0.1; done
exit 1
)";

bool waitForFiles(const QStringList &paths, int ms)
{
    QDeadlineTimer deadline(ms);
    while (!deadline.hasExpired()) {
        if (std::all_of(paths.begin(), paths.end(), [](const QString &p) { return QFile::exists(p); }))
            return true;
        QThread::msleep(200);
    }
    return false;
}

// Slurm lists ended jobs for a while (MinJobAge): an array is done when none of its tasks is live.
bool live(const QList<slurm::Job> &jobs)
{
    return std::any_of(jobs.begin(), jobs.end(), [](const slurm::Job &j) {
        return j.state == QLatin1String("PENDING") || j.state == QLatin1String("RUNNING") ||
            j.state == QLatin1String("COMPLETING") || j.state == QLatin1String("CONFIGURING");
    });
}

}  // namespace

class TestSweepSlurm : public QObject {
    Q_OBJECT

    orrery::test::TestCluster m_cluster;
    std::unique_ptr<Connection> m_connection;
    std::unique_ptr<SlurmClient> m_slurm;
    QString m_dir;
    QString m_jobId;

    QByteArray run(const QList<QByteArray> &argv)
    {
        const auto r = m_connection->exec(orrery::remote::commandLine(argv)).result();
        return r.out;
    }

    // The array's Slurm logs, for failure messages.
    QString logs() const
    {
        QString text;
        for (const QFileInfo &f : QDir(m_dir + QStringLiteral("/logs")).entryInfoList(QDir::Files)) {
            QFile file(f.filePath());
            if (file.open(QIODevice::ReadOnly))
                text += QStringLiteral("--- %1\n%2").arg(f.fileName(), QString::fromUtf8(file.readAll()));
        }
        return text;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(m_cluster.error().isEmpty(), qPrintable(m_cluster.error()));
        m_connection = std::make_unique<Connection>(orrery::test::clusterEndpoint(m_cluster));
        m_slurm = std::make_unique<SlurmClient>(*m_connection);
        m_dir = m_cluster.value("ORRERY_TEST_JOBS_DIR") + QStringLiteral("/tst_sweep_slurm-") +
            QUuid::createUuid().toString(QUuid::Id128);
    }

    void cleanupTestCase()
    {
        // Let the stand-in trainers end on their own first (see kFakeTrainer).
        QDeadlineTimer deadline(75'000);
        while (!m_jobId.isEmpty() && !deadline.hasExpired() && live(m_slurm->jobs({m_jobId})))
            QThread::msleep(500);
        if (!m_jobId.isEmpty()) {
            try {
                m_slurm->cancel(m_jobId);
            } catch (const orrery::remote::RemoteError &) {
                // already gone
            }
        }
        m_slurm.reset();
        m_connection.reset();
        QDir(m_dir).removeRecursively();
    }

    void hostileTrialDirsReachEveryRankAndUsr1IsForwarded()
    {
        // Relative: the script and the ranks run in the sweep dir (--chdir), where it would appear.
        const QString canary = m_dir + QStringLiteral("/pwned");
        QVERIFY(QDir().mkpath(m_dir + QStringLiteral("/logs")));
        SbatchJob job;
        job.jobName = QStringLiteral("sweep $(touch pwned) 'q' \"dq\" #x `id` -rf");
        job.sweepDir = m_dir;
        job.trialDirs = QStringList{
            m_dir + QStringLiteral("/0 $(touch pwned) 'q' \"dq\" ;|& -rf"),
            m_dir + QStringLiteral("/1\nnew line `touch pwned` \\ * ~root $HOME"),
        };
        for (const QString &d : std::as_const(job.trialDirs))
            QVERIFY(QDir().mkpath(d));
        job.maxConcurrent = 2;
        job.resources.gpusPerNode = 2;  // two ranks per trial, on the fixture's fake GPUs
        job.resources.time = QStringLiteral("00:05:00");
        // A plain trainer path (it comes from the cluster profile, not the spec): measured on this
        // Slurm 22.05, srun does not forward signals to a step whose executable path holds spaces
        // and $( ) (the ranks start with their argv intact, but SIGUSR1 never reaches them).
        job.trainer = m_dir + QStringLiteral("/fake-trainer.sh");
        QFile trainer(job.trainer);
        QVERIFY(trainer.open(QIODevice::WriteOnly));
        trainer.write(kFakeTrainer);
        trainer.close();
        QVERIFY(trainer.setPermissions(trainer.permissions() | QFileDevice::ExeOwner | QFileDevice::ExeGroup |
                                       QFileDevice::ExeOther));

        const QByteArray script = orrery::remote::renderSbatch(orrery::remote::defaultSbatchTemplate(), job);
        m_jobId = m_slurm->submit(m_dir + QStringLiteral("/array.sbatch"), script, {}).jobId;
        QVERIFY(!m_jobId.isEmpty());

        QStringList ready;
        for (const QString &d : std::as_const(job.trialDirs))
            ready << d + QStringLiteral("/ready.0") << d + QStringLiteral("/ready.1");
        QVERIFY2(waitForFiles(ready, 90'000),
                 qPrintable(QStringLiteral("the ranks did not start; logs in %1/logs; %2")
                                .arg(m_dir, m_cluster.logsHint())));

        // Slurm's own record of the name: verbatim, parsed by sbatch from the #SBATCH line.
        const QByteArray names = run({"squeue", "-h", "-o", "%j", "-j", m_jobId.toUtf8()});
        for (const QByteArray &name : names.trimmed().split('\n'))
            QCOMPARE(QString::fromUtf8(name), job.jobName);

        for (const QString &d : std::as_const(job.trialDirs)) {
            for (const char *rank : {"0", "1"}) {
                QFile f(d + QStringLiteral("/args.") + QLatin1String(rank));
                QVERIFY(f.open(QIODevice::ReadOnly));
                const QList<QByteArray> expected{
                    "--config", d.toUtf8() + "/trial.yaml", "--run-dir", d.toUtf8(), "--resume", "auto", ""};
                QCOMPARE(f.readAll().split('\0'), expected);
            }
        }

        // What --signal=B:USR1@120 does at the time limit: SIGUSR1 to the batch shell only.
        run({"scancel", "--batch", "--signal=USR1", m_jobId.toUtf8()});
        QStringList usr1;
        for (const QString &d : std::as_const(job.trialDirs))
            usr1 << d + QStringLiteral("/usr1.0") << d + QStringLiteral("/usr1.1");
        QVERIFY2(waitForFiles(usr1, 45'000),
                 qPrintable(QStringLiteral("SIGUSR1 did not reach every rank:\n") + logs()));

        QDeadlineTimer deadline(60'000);
        QList<slurm::Job> jobs;
        while (live(jobs = m_slurm->jobs({m_jobId})) && !deadline.hasExpired())
            QThread::msleep(200);
        QVERIFY(!live(jobs));
        QVERIFY(!QFile::exists(canary));
        // The batch script returned the trainer's status (75: preempted) for each task.
        for (int task = 0; task < 2; ++task)
            QVERIFY(QFile::exists(m_dir + QStringLiteral("/logs/%1_%2.out").arg(m_jobId).arg(task)));
    }
};

ORRERY_TEST_MAIN(TestSweepSlurm, QCoreApplication)
#include "tst_sweep_slurm.moc"
