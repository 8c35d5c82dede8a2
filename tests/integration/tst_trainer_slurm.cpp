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
