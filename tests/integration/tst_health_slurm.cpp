// SPDX-License-Identifier: GPL-3.0-or-later
// The deep health check on the fixture's two-node Slurm (docs/sweeps.md "Health check"): a
// two-node trial of a command runs `orrery-train --health-check` on both nodes before its
// program, through the real sbatch template, srun and the CLI's runner. With node2 made bad
// (ORRERY_HEALTH_CHECK_FAIL in the cluster's setup lines: a test hook, as a broken GPU cannot be
// caused on purpose here) the attempt fails before the program starts, exit.json names node2
// with cause "health", and the attempt keeps both nodes' verdicts; without it the trial runs.
#include "remotesupport.h"

#include "orrery/core/healthreport.h"
#include "orrery/core/store.h"
#include "orrery/core/sweeprules.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QUuid>

using namespace orrery::core;

class TestHealthSlurm : public QObject {
    Q_OBJECT

    orrery::test::TestCluster m_cluster;
    orrery::test::CliUser m_user;
    using Result = orrery::test::CliUser::Result;
    Result orrery(const QStringList &args, int timeoutMs = 120'000) { return m_user.run(args, timeoutMs); }

    // A cluster profile on the fixture that runs the trainer built here, with these setup lines.
    void addCluster(const QString &name, const QStringList &setup)
    {
        const QString root = m_cluster.value("ORRERY_TEST_JOBS_DIR") + QStringLiteral("/tst_health_slurm-") +
            QUuid::createUuid().toString(QUuid::Id128);
        QStringList args = orrery::test::fixtureClusterAdd(m_cluster, name, root);
        args << QStringLiteral("--trainer-path") << qEnvironmentVariable("ORRERY_TRAINER");
        for (const QString &line : setup)
            args << QStringLiteral("--setup") << line;
        const Result add = orrery(args);
        QVERIFY2(add.code == 0, qPrintable(add.err));
    }

    // One two-node trial of a command that only marks that it ran; the check opted in.
    int submit(const QString &cluster)
    {
        const QString path = m_user.writeFile(cluster + QStringLiteral(".yaml"),
                                              "name: health\n"
                                              "experiment: health-slurm\n"
                                              "command: [touch, \"{{run_dir}}/program-ran\"]\n"
                                              "method: grid\n"
                                              "parameters:\n"
                                              "  x: {value: 1}\n"
                                              "resources: {nodes: 2, cpus_per_task: 1, time: \"00:05:00\"}\n"
                                              "health_check: {cpu_memory_mb: 16, timeout_s: 60}\n");
        QString problem;
        const int id = m_user.submitSweep(path, cluster, &problem);
        if (id < 0)
            qWarning("%s", qPrintable(problem));
        return id;
    }

    QString watchToTheEnd(int sweep) { return m_user.watchSweep(sweep, 150'000); }

    // One one-node trial of the bundled trainer (the micro workload, 4 steps).
    int submitTrainer(const QString &cluster, int retries)
    {
        const QString path = m_user.writeFile(cluster + QStringLiteral(".yaml"),
                                              "name: rank-fault\n"
                                              "experiment: health-slurm\n"
                                              "trainer: {config: " +
                                                  orrery::test::microConfigPath().toUtf8() +
                                                  "}\n"
                                                  "method: grid\n"
                                                  "parameters:\n"
                                                  "  train.steps: {value: 4}\n"
                                                  "resources: {nodes: 1, cpus_per_task: 1, mem: 500M, time: "
                                                  "\"00:05:00\"}\n"
                                                  "retries: " +
                                                  QByteArray::number(retries) + "\n");
        QString problem;
        const int id = m_user.submitSweep(path, cluster, &problem);
        if (id < 0)
            qWarning("%s", qPrintable(problem));
        return id;
    }  // A cluster `name` whose first attempt gets ORRERY_TRAIN_FAULT=`fault`, a one-node trainer
    // trial on it with `retries`, followed to its end: its attempts (and the CLI's output, `out`).
    QList<Trial> attemptsWithFaultOnce(const QString &name, const QString &fault, int retries, QString *out)
    {
        addCluster(name, {onceOnly(fault)});
        const int sweep = submitTrainer(name, retries);
        if (sweep <= 0)
            return {};
        *out = watchToTheEnd(sweep);
        return TrackingStore::open(m_user.db(), TrackingStore::Mode::ReadOnly)->trials(sweep);
    }

    // A setup line that sets ORRERY_TRAIN_FAULT=`fault` for the cluster's first attempt only (a
    // directory made once: mkdir is atomic).
    QString onceOnly(const QString &fault)
    {
        const QString marker = m_cluster.value("ORRERY_TEST_JOBS_DIR") + QStringLiteral("/fault-once-") +
            QUuid::createUuid().toString(QUuid::Id128);
        return QStringLiteral("if mkdir '%1' 2>/dev/null; then export ORRERY_TRAIN_FAULT=%2; fi")
            .arg(marker, fault);
    }

private Q_SLOTS:
    void initTestCase()
    {
        ORRERY_SKIP_WITHOUT_TRAINER();
        QVERIFY2(m_cluster.error().isEmpty(), qPrintable(m_cluster.error()));
        QVERIFY(m_user.isValid());
    }

    void aBadNodeFailsTheAttemptBeforeTheProgram()
    {
        addCluster(QStringLiteral("bad-node2"), {QStringLiteral("export ORRERY_HEALTH_CHECK_FAIL=node2")});
        const int sweep = submit(QStringLiteral("bad-node2"));
        QVERIFY(sweep > 0);
        const QString out = watchToTheEnd(sweep);
        auto store = TrackingStore::open(m_user.db(), TrackingStore::Mode::ReadOnly);
        const QList<Trial> trials = store->trials(sweep);
        // The trial needs both nodes of the partition, so node2 cannot be kept out: each retry
        // fails its health check again, none uses up `retries` (0 here), and after kMaxNodeFaults
        // node faults the next counts as the trial's own failure (docs/sweeps.md "Bad nodes kept
        // out"). Every attempt says why.
        QCOMPARE(trials.size(), kMaxNodeFaults + 1);
        for (const Trial &a : trials) {
            QVERIFY2(a.state == QStringLiteral("failed"),
                     qPrintable(a.state + QLatin1Char(' ') + a.exitReason + out));
            QVERIFY2(a.exitReason.contains(QLatin1String("health check failed on node2")),
                     qPrintable(a.exitReason));
        }
        const QList<SuspectNode> suspects = store->suspectNodes(QStringLiteral("bad-node2"));
        QCOMPARE(suspects.size(), 1);
        QCOMPARE(suspects.front().node, QStringLiteral("node2"));
        QCOMPARE(suspects.front().source, QStringLiteral("health"));
        const Trial &t = trials.back();
        // The program never started.
        QVERIFY(!QFile::exists(QDir(t.runDir).filePath(QStringLiteral("program-ran"))));
        QFile exitFile(QDir(t.runDir).filePath(QStringLiteral("exit.json")));
        QVERIFY(exitFile.open(QIODevice::ReadOnly));
        const QJsonObject exit = QJsonDocument::fromJson(exitFile.readAll()).object();
        QCOMPARE(exit.value(QStringLiteral("node")).toString(), QStringLiteral("node2"));
        QCOMPARE(exit.value(QStringLiteral("cause")).toString(), QStringLiteral("health"));
        // Both nodes' verdicts, with their figures, are the attempt's.
        const QList<HealthNodeLine> nodes = healthNodes(t.health);
        QCOMPARE(nodes.size(), 2);
        QCOMPARE(nodes[0].node, QStringLiteral("node1"));
        QVERIFY(nodes[0].pass);
        QCOMPARE(nodes[1].node, QStringLiteral("node2"));
        QVERIFY(!nodes[1].pass);
        QVERIFY2(nodes[0].figures.contains(QLatin1String("all-reduce")), qPrintable(nodes[0].figures));
        // `runs show` says it, a line per node.
        const Result show =
            orrery({QStringLiteral("runs"), QStringLiteral("show"), QString::number(t.runId)});
        QVERIFY2(show.out.contains(QLatin1String("node2  failed")), qPrintable(show.out));
        QVERIFY2(show.out.contains(QLatin1String("node1  passed")), qPrintable(show.out));
    }

    // A rank of the bundled trainer meets a device error (injected: an uncorrectable ECC error
    // cannot be caused here): exit.json names its rank, node and cause, the runner blames that
    // node, and the retry (no `retries` used) runs elsewhere.
    void aRanksDeviceFaultKeepsItsNodeOut()
    {
        QString out;
        const QList<Trial> attempts =
            attemptsWithFaultOnce(QStringLiteral("device-once"), QStringLiteral("cuda:step=2"), 0, &out);
        QCOMPARE(attempts.size(), 2);
        const QString bad = attempts[0].nodes;
        QVERIFY2(bad == QLatin1String("node1") || bad == QLatin1String("node2"), qPrintable(bad + out));
        QVERIFY2(attempts[0].exitReason.startsWith(
                     QStringLiteral("node fault on %1 (device): rank 0 on %1: CUDA error: uncorrectable ECC")
                         .arg(bad)),
                 qPrintable(attempts[0].exitReason));
        QFile exitFile(QDir(attempts[0].runDir).filePath(QStringLiteral("exit.json")));
        if (exitFile.open(QIODevice::ReadOnly)) {  // the retry may share the run dir and replace it
            const QJsonObject exit = QJsonDocument::fromJson(exitFile.readAll()).object();
            if (exit.value(QStringLiteral("state")).toString() == QLatin1String("failed")) {
                QCOMPARE(exit.value(QStringLiteral("cause")).toString(), QStringLiteral("cuda"));
                QCOMPARE(exit.value(QStringLiteral("node")).toString(), bad);
            }
        }
        QVERIFY2(attempts[1].state == QLatin1String("completed"), qPrintable(attempts[1].exitReason + out));
        QVERIFY2(!attempts[1].nodes.isEmpty() && attempts[1].nodes != bad, qPrintable(attempts[1].nodes));
        auto store = TrackingStore::open(m_user.db(), TrackingStore::Mode::ReadOnly);
        const QList<SuspectNode> suspects = store->suspectNodes(QStringLiteral("device-once"));
        QCOMPARE(suspects.size(), 1);
        QCOMPARE(suspects.front().node, bad);
    }

    // The only rank aborts (a real SIGABRT): it writes no exit.json; the batch script's
    // --fold-faults makes one from the rank's own record. Not a node fault: an ordinary retry.
    void aCrashedRankIsNamedByTheBatchScript()
    {
        QString out;
        const QList<Trial> attempts =
            attemptsWithFaultOnce(QStringLiteral("crash-once"), QStringLiteral("abort:step=2"), 1, &out);
        QCOMPARE(attempts.size(), 2);
        QCOMPARE(attempts[0].state, QStringLiteral("failed"));
        QVERIFY2(attempts[0].exitReason.contains(
                     QStringLiteral("rank 0 on %1: SIGABRT (aborted)").arg(attempts[0].nodes)),
                 qPrintable(attempts[0].exitReason + out));
        QVERIFY(!attempts[0].exitReason.startsWith(QLatin1String("node fault")));
        QVERIFY2(attempts[1].state == QLatin1String("completed"), qPrintable(attempts[1].exitReason + out));
        QVERIFY(TrackingStore::open(m_user.db(), TrackingStore::Mode::ReadOnly)
                    ->suspectNodes(QStringLiteral("crash-once"))
                    .isEmpty());
    }

    void healthyNodesRunTheProgram()
    {
        addCluster(QStringLiteral("healthy"), {});
        const int sweep = submit(QStringLiteral("healthy"));
        QVERIFY(sweep > 0);
        const QString out = watchToTheEnd(sweep);
        auto store = TrackingStore::open(m_user.db(), TrackingStore::Mode::ReadOnly);
        const Trial t = store->trials(sweep).front();
        QVERIFY2(t.state == QStringLiteral("completed"),
                 qPrintable(t.state + QLatin1Char(' ') + t.exitReason + out));
        QVERIFY(QFile::exists(QDir(t.runDir).filePath(QStringLiteral("program-ran"))));
        const QList<HealthNodeLine> nodes = healthNodes(t.health);
        QCOMPARE(nodes.size(), 2);
        QVERIFY(nodes[0].pass && nodes[1].pass);
    }
};

ORRERY_TEST_MAIN(TestHealthSlurm, QCoreApplication)
#include "tst_health_slurm.moc"
