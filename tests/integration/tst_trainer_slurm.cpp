// SPDX-License-Identifier: GPL-3.0-or-later
// orrery-train under a real Slurm (the fixture's two nodes): `srun -N 2 -n 2` gives each task its
// SLURM_PROCID/SLURM_NTASKS/SLURM_JOB_NODELIST, and the ranks must find each other through them.
#include "testsupport.h"

#include <QCoreApplication>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QProcessEnvironment>
#include <QTemporaryDir>

class TestTrainerSlurm : public QObject {
    Q_OBJECT
    orrery::test::TestCluster m_cluster;
    QTemporaryDir m_dir;

private Q_SLOTS:
    void initTestCase() { QVERIFY2(m_cluster.error().isEmpty(), qPrintable(m_cluster.error())); }

    // Two ranks, one per node, through `srun -N 2 -n 2` with `env` added; then --fold-faults, as
    // the sbatch script runs it after srun. Returns srun's exit status.
    int srunTwoRanks(const QString &run, const QStringList &env, const QStringList &sets, QByteArray *err)
    {
        QProcess p;
        QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
        e.insert(QStringLiteral("SLURM_CONF"), m_cluster.value("SLURM_CONF"));
        p.setProcessEnvironment(e);
        // The fixture's node names do not resolve (both nodes are this machine), so the master
        // address is given; on a real cluster the first host of SLURM_JOB_NODELIST is used.
        QStringList args{QStringLiteral("-N"),
                         QStringLiteral("2"),
                         QStringLiteral("-n"),
                         QStringLiteral("2"),
                         QStringLiteral("--mem=1G"),
                         QStringLiteral("--export=ALL,MASTER_ADDR=127.0.0.1") +
                             (env.isEmpty() ? QString() : QLatin1Char(',') + env.join(QLatin1Char(','))),
                         qEnvironmentVariable("ORRERY_TRAINER"),
                         QStringLiteral("--config"),
                         orrery::test::microConfigPath(),
                         QStringLiteral("--run-dir"),
                         run};
        for (const QString &s : sets)
            args << QStringLiteral("--set") << s;
        p.start(QStringLiteral("srun"), args);
        if (!p.waitForFinished(200'000))
            p.kill();
        p.waitForFinished();
        *err = p.readAllStandardError();
        const int status = p.exitCode();
        QProcess::execute(qEnvironmentVariable("ORRERY_TRAINER"),
                          {QStringLiteral("--fold-faults"), QStringLiteral("--run-dir"), run});
        return status;
    }

    static QJsonObject exitOf(const QString &run)
    {
        QFile f(run + QStringLiteral("/exit.json"));
        return f.open(QIODevice::ReadOnly) ? QJsonDocument::fromJson(f.readAll()).object() : QJsonObject();
    }

    // The rank on node2 aborts (a real SIGABRT): exit.json names node2, whether rank 0 (on node1)
    // lived to write it (its allreduce failing, its peer gone) or srun ended it first.
    void aRankAbortingOnNode2IsNamed()
    {
        const QString run = m_dir.filePath(QStringLiteral("abort"));
        QByteArray err;
        const int status =
            srunTwoRanks(run, {QStringLiteral("ORRERY_TRAIN_FAULT=abort:node=node2:step=2")},
                         {QStringLiteral("train.steps=6"), QStringLiteral("dist.timeout_s=20")}, &err);
        QVERIFY2(status != 0, err.constData());
        const QJsonObject exit = exitOf(run);
        QVERIFY2(exit[QLatin1String("node")].toString() == QLatin1String("node2"),
                 QJsonDocument(exit).toJson().constData());
        QCOMPARE(exit[QLatin1String("state")].toString(), QStringLiteral("failed"));
        QCOMPARE(exit[QLatin1String("cause")].toString(), QStringLiteral("crash"));
        QCOMPARE(exit[QLatin1String("rank")].toInt(), 1);
        QCOMPARE(exit[QLatin1String("step")].toInt(), 2);
    }

    // The rank on node2 stalls past dist.timeout_s: rank 0's collective on node1 times out, and the
    // verdict names the rank it waited for, on node2 (cause hang: the roll call says where it ran).
    void aStalledRankIsNamedWithItsNode()
    {
        const QString run = m_dir.filePath(QStringLiteral("stall"));
        QByteArray err;
        const int status =
            srunTwoRanks(run, {QStringLiteral("ORRERY_TRAIN_FAULT=stall:node=node2:step=2")},
                         {QStringLiteral("train.steps=6"), QStringLiteral("dist.timeout_s=3")}, &err);
        QVERIFY2(status != 0, err.constData());
        const QJsonObject exit = exitOf(run);
        QVERIFY2(exit[QLatin1String("node")].toString() == QLatin1String("node2"),
                 QJsonDocument(exit).toJson().constData());
        QCOMPARE(exit[QLatin1String("cause")].toString(), QStringLiteral("hang"));
        QCOMPARE(exit[QLatin1String("rank")].toInt(), 1);
    }

    void twoNodesRendezvousThroughSlurm()
    {
        const QString run = m_dir.filePath(QStringLiteral("srun"));
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("SLURM_CONF"), m_cluster.value("SLURM_CONF"));
        p.setProcessEnvironment(env);
        // The fixture's node names do not resolve (both nodes are this machine), so the master
        // address is given; on a real cluster the first host of SLURM_JOB_NODELIST is used.
        p.start(QStringLiteral("srun"),
                {QStringLiteral("-N"), QStringLiteral("2"), QStringLiteral("-n"), QStringLiteral("2"),
                 QStringLiteral("--mem=1G"), QStringLiteral("--export=ALL,MASTER_ADDR=127.0.0.1"),
                 qEnvironmentVariable("ORRERY_TRAINER"), QStringLiteral("--config"),
                 orrery::test::microConfigPath(), QStringLiteral("--run-dir"), run, QStringLiteral("--set"),
                 QStringLiteral("train.log_every=1"), QStringLiteral("--stop-at-step"), QStringLiteral("2")});
        QVERIFY(p.waitForFinished(240'000));
        const QByteArray err = p.readAllStandardError();
        QVERIFY2(p.exitCode() == 75, err.constData());  // preempted on purpose, by --stop-at-step
        QFile events(run + QStringLiteral("/events.jsonl"));
        QVERIFY(events.open(QIODevice::ReadOnly));
        const QJsonObject start =
            QJsonDocument::fromJson(events.readLine()).object()[QLatin1String("run")].toObject();
        QCOMPARE(start[QLatin1String("rendezvous")].toString(), QStringLiteral("slurm"));
        QCOMPARE(start[QLatin1String("world_size")].toInt(), 2);
        QCOMPARE(start[QLatin1String("nodes")].toString(), QStringLiteral("2"));
        QFile exit(run + QStringLiteral("/exit.json"));
        QVERIFY(exit.open(QIODevice::ReadOnly));
        QCOMPARE(QJsonDocument::fromJson(exit.readAll())[QLatin1String("step")].toInt(), 2);
    }
};

ORRERY_TEST_MAIN(TestTrainerSlurm, QCoreApplication)
#include "tst_trainer_slurm.moc"
