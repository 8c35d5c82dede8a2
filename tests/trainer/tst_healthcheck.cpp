// SPDX-License-Identifier: GPL-3.0-or-later
// `orrery-train --health-check` (docs/sweeps.md "Health check") on CPU: two real processes as two
// nodes (SLURMD_NODENAME tells them apart on one machine) meeting over Gloo, each checking its
// CPU and writing its verdict; the all-reduce between them; the test hook that fails a named node
// (a broken GPU cannot be caused on purpose here); a real limit that fails; bad arguments.
#include "testsupport.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QProcessEnvironment>
#include <QTcpServer>
#include <QTemporaryDir>

namespace {

QString trainer()
{
    return qEnvironmentVariable("ORRERY_TRAINER");
}

QJsonObject readJson(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QJsonDocument::fromJson(f.readAll()).object();
}

int freePort()
{
    QTcpServer s;
    s.listen(QHostAddress::LocalHost, 0);
    return s.serverPort();
}

struct Node {
    QString name;
    int code = -1;
    QByteArray err;
};

// `nodes` processes of --health-check on one run dir, one per "node", as srun starts them.
QList<Node> runCheck(const QString &runDir, const QStringList &nodes, const QStringList &extra = {},
                     const QString &failNodes = {})
{
    const int port = freePort();
    QList<QProcess *> procs;
    for (int rank = 0; rank < nodes.size(); ++rank) {
        auto *p = new QProcess;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("SLURMD_NODENAME"), nodes[rank]);
        env.insert(QStringLiteral("OMP_NUM_THREADS"), QStringLiteral("1"));
        if (nodes.size() > 1) {
            env.insert(QStringLiteral("RANK"), QString::number(rank));
            env.insert(QStringLiteral("LOCAL_RANK"), QStringLiteral("0"));
            env.insert(QStringLiteral("WORLD_SIZE"), QString::number(nodes.size()));
            env.insert(QStringLiteral("MASTER_ADDR"), QStringLiteral("127.0.0.1"));
            env.insert(QStringLiteral("MASTER_PORT"), QString::number(port));
        }
        if (!failNodes.isEmpty())
            env.insert(QStringLiteral("ORRERY_HEALTH_CHECK_FAIL"), failNodes);
        p->setProcessEnvironment(env);
        p->start(trainer(),
                 QStringList{QStringLiteral("--health-check"), QStringLiteral("--run-dir"), runDir,
                             QStringLiteral("--set"), QStringLiteral("cpu_memory_mb=32")} +
                     extra);
        procs << p;
    }
    QList<Node> out;
    for (int i = 0; i < procs.size(); ++i) {
        procs[i]->waitForFinished(120'000);
        out.append({nodes[i], procs[i]->exitStatus() == QProcess::NormalExit ? procs[i]->exitCode() : -1,
                    procs[i]->readAllStandardError()});
        delete procs[i];
    }
    return out;
}

}  // namespace

class TestHealthCheck : public QObject {
    Q_OBJECT

private slots:
    void initTestCase()
    {
        ORRERY_SKIP_WITHOUT_TRAINER();
        QVERIFY2(QFileInfo(trainer()).isExecutable(), "ORRERY_TRAINER must name orrery-train");
    }

    void twoNodesPassAndEachWritesItsFigures()
    {
        QTemporaryDir dir;
        const QList<Node> nodes = runCheck(dir.path(), {QStringLiteral("nodeA"), QStringLiteral("nodeB")});
        for (const Node &n : nodes)
            QVERIFY2(n.code == 0, qPrintable(n.name + QStringLiteral(": ") + QString::fromUtf8(n.err)));
        for (const QString &name : {QStringLiteral("nodeA"), QStringLiteral("nodeB")}) {
            const QJsonObject h = readJson(dir.filePath(QStringLiteral("health/%1.json").arg(name)));
            QCOMPARE(h[QLatin1String("node")].toString(), name);
            QCOMPARE(h[QLatin1String("pass")].toBool(false), true);
            QCOMPARE(h[QLatin1String("device")].toString(), QStringLiteral("cpu"));
            QVERIFY(h[QLatin1String("matmul_gflops")].toDouble() > 0);
            QVERIFY(h[QLatin1String("memory_gbps")].toDouble() > 0);
            QVERIFY(h[QLatin1String("duration_ms")].toDouble() > 0);
            // The all-reduce spanned both processes, over Gloo; busbw = algbw * 2(n-1)/n = algbw at n = 2.
            const QJsonObject ar = h[QLatin1String("allreduce")].toObject();
            QCOMPARE(ar[QLatin1String("backend")].toString(), QStringLiteral("gloo"));
            QCOMPARE(ar[QLatin1String("nodes")].toInt(), 2);
            QVERIFY(h[QLatin1String("busbw_gbps")].toDouble() > 0);
            QCOMPARE(h[QLatin1String("busbw_gbps")].toDouble(), ar[QLatin1String("algbw_gbps")].toDouble());
            QCOMPARE(h[QLatin1String("ecc")].toString(), QStringLiteral("not applicable (CPU)"));
        }
        // The first rank gathered both verdicts into the file the runner reads.
        const QJsonObject all = readJson(dir.filePath(QStringLiteral("health.json")));
        QCOMPARE(all.keys(), (QStringList{QStringLiteral("nodeA"), QStringLiteral("nodeB")}));
        QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("exit.json"))));
    }

    void theNamedNodeFailsAndWritesTheAttemptsVerdict()
    {
        QTemporaryDir dir;
        const QList<Node> nodes = runCheck(dir.path(), {QStringLiteral("nodeA"), QStringLiteral("nodeB")}, {},
                                           QStringLiteral("nodeB"));
        QCOMPARE(nodes[0].code, 0);
        QCOMPARE(nodes[1].code, 1);
        const QJsonObject b = readJson(dir.filePath(QStringLiteral("health/nodeB.json")));
        QCOMPARE(b[QLatin1String("pass")].toBool(true), false);
        QVERIFY2(b[QLatin1String("reason")].toString().contains(QLatin1String("ORRERY_HEALTH_CHECK_FAIL")),
                 qPrintable(b[QLatin1String("reason")].toString()));
        // Its figures were still measured.
        QVERIFY(b[QLatin1String("matmul_gflops")].toDouble() > 0);
        const QJsonObject exit = readJson(dir.filePath(QStringLiteral("exit.json")));
        QCOMPARE(exit[QLatin1String("state")].toString(), QStringLiteral("failed"));
        QCOMPARE(exit[QLatin1String("node")].toString(), QStringLiteral("nodeB"));
        QCOMPARE(exit[QLatin1String("cause")].toString(), QStringLiteral("health"));
        QVERIFY(exit[QLatin1String("reason")].toString().startsWith(
            QLatin1String("health check failed on nodeB: ")));
        const QJsonObject all = readJson(dir.filePath(QStringLiteral("health.json")));
        QCOMPARE(all[QLatin1String("nodeA")].toObject()[QLatin1String("pass")].toBool(false), true);
        QCOMPARE(all[QLatin1String("nodeB")].toObject()[QLatin1String("pass")].toBool(true), false);
    }

    void aRealLimitFailsTheNode()
    {
        // One node (no all-reduce): a matmul floor no CPU reaches fails the check for real.
        QTemporaryDir dir;
        const QList<Node> nodes =
            runCheck(dir.path(), {QStringLiteral("solo")},
                     {QStringLiteral("--set"), QStringLiteral("min_matmul_gflops=1e9")});
        QCOMPARE(nodes[0].code, 1);
        const QJsonObject h = readJson(dir.filePath(QStringLiteral("health/solo.json")));
        QVERIFY2(h[QLatin1String("reason")].toString().contains(QLatin1String("below the")),
                 qPrintable(h[QLatin1String("reason")].toString()));
        QVERIFY(h[QLatin1String("busbw_gbps")].isNull());
        QCOMPARE(readJson(dir.filePath(QStringLiteral("exit.json")))[QLatin1String("node")].toString(),
                 QStringLiteral("solo"));
    }

    void anUnknownThresholdIsAUsageError()
    {
        QTemporaryDir dir;
        const QList<Node> nodes = runCheck(dir.path(), {QStringLiteral("solo")},
                                           {QStringLiteral("--set"), QStringLiteral("min_speed=3")});
        QCOMPARE(nodes[0].code, 2);
        QVERIFY2(nodes[0].err.contains("unknown setting 'min_speed'"), nodes[0].err.constData());
        QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("exit.json"))));
    }
};

ORRERY_TEST_MAIN(TestHealthCheck, QCoreApplication)
#include "tst_healthcheck.moc"
