// SPDX-License-Identifier: GPL-3.0-or-later
// `orrery-train --health-check` (docs/sweeps.md "Health check") on CPU: two real processes as two
// nodes (SLURMD_NODENAME tells them apart on one machine) meeting over Gloo, each checking its
// CPU and writing its verdict; the all-reduce between them; the test hook that fails a named node
// (a broken GPU cannot be caused on purpose here); a real limit that fails; bad arguments; the
// memory the memory test needs beside its buffer.
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

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

extern char **environ;

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

// A one-node check of `memoryMb` on CPU, started without Qt so that wait4() gives this child's own
// peak resident memory (KB), or -1 when it did not run or failed.
long peakRssKb(const QString &runDir, int memoryMb)
{
    const QByteArray exe = trainer().toLocal8Bit(), dir = runDir.toLocal8Bit(),
                     mem = "cpu_memory_mb=" + QByteArray::number(memoryMb);
    char *argv[] = {const_cast<char *>(exe.constData()),
                    const_cast<char *>("--health-check"),
                    const_cast<char *>("--run-dir"),
                    const_cast<char *>(dir.constData()),
                    const_cast<char *>("--set"),
                    const_cast<char *>(mem.constData()),
                    nullptr};
    posix_spawn_file_actions_t quiet;
    posix_spawn_file_actions_init(&quiet);
    posix_spawn_file_actions_addopen(&quiet, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, argv[0], &quiet, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&quiet);
    if (rc != 0)
        return -1;
    int status = 0;
    rusage usage{};
    if (wait4(pid, &status, 0, &usage) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return -1;
    return usage.ru_maxrss;
}

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

    void theMemoryTestNeedsLittleBesideItsBuffer()
    {
        // Found on an H200: comparing the whole buffer at once made a byte per word and an int64
        // copy of those, 2.25x the buffer beside it (it asked for 111 GiB with 70 GB free). Compared
        // in slices, 448 MB more buffer costs about 448 MB more memory; the whole-buffer compare
        // cost ~1.2 GB more.
        qputenv("OMP_NUM_THREADS", "1");
        qputenv("SLURMD_NODENAME", "solo");
        QTemporaryDir a, b;
        const long small = peakRssKb(a.path(), 64), large = peakRssKb(b.path(), 512);
        QVERIFY2(small > 0 && large > 0, "the health check did not run");
        const double grewMb = double(large - small) / 1024.0, bufferMb = (512 - 64) * 1e6 / 1048576.0;
        QVERIFY2(
            grewMb < 1.4 * bufferMb,
            qPrintable(
                QStringLiteral("peak RSS grew by %1 MB for %2 MB more buffer").arg(grewMb).arg(bufferMb)));
        QVERIFY(
            readJson(b.filePath(QStringLiteral("health/solo.json")))[QLatin1String("pass")].toBool(false));
        qunsetenv("SLURMD_NODENAME");
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
