// SPDX-License-Identifier: GPL-3.0-or-later
// Bad nodes kept out (docs/sweeps.md "Bad nodes kept out"), on the fixture's real Slurm through the
// real CLI: an attempt whose health check failed on its node (exit.json cause "health") makes the
// node suspect, and the retry, which uses no `retries`, is submitted with --exclude of it (read
// back from Slurm's own ExcNodeList); a node taken down mid-trial (`scontrol update state=down`)
// is found when Slurm requeues the task, listed as suspect, and the trial resumes on the other
// node from its checkpoint; suspects never exclude a partition's last node; and
// `orrery cluster nodes` lists, adds and clears them.
//
// The programs are small bash commands of the user's own that checkpoint by themselves (a step
// counter in the run dir), so no trainer build is needed. The health check's failure is written
// by the command itself, standing in for the deep health check (`health_check:`), in exactly the
// exit.json the health check writes.
#include "remotesupport.h"

#include "orrery/core/store.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QThread>

using namespace orrery::core;

namespace {

QByteArray readAll(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

}  // namespace

class TestBadNodes : public QObject {
    Q_OBJECT

    orrery::test::TestCluster m_cluster;
    orrery::test::CliUser m_user;
    QString m_root;
    using Result = orrery::test::CliUser::Result;
    Result orrery(const QStringList &args, int timeoutMs = 120'000) { return m_user.run(args, timeoutMs); }

    // Slurm's own command on the fixture (this machine is its login node).
    QString slurm(const QStringList &argv)
    {
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("SLURM_CONF"), m_cluster.value("SLURM_CONF"));
        p.setProcessEnvironment(env);
        p.start(argv.front(), argv.mid(1));
        p.waitForFinished(30'000);
        return QString::fromUtf8(p.readAllStandardOutput() + p.readAllStandardError());
    }
    QString jobField(const QString &jobId, const QString &key)
    {
        const QString out = slurm({QStringLiteral("scontrol"), QStringLiteral("show"), QStringLiteral("job"),
                                   QStringLiteral("-o"), jobId});
        const QRegularExpression re(QStringLiteral("(?:^|\\s)%1=(\\S*)").arg(key));
        return re.match(out).captured(1);
    }

    QString writeSpec(const QString &name, const QByteArray &yaml) { return m_user.writeFile(name, yaml); }

    int submit(const QString &spec)
    {
        QString problem;
        const int id = m_user.submitSweep(spec, QStringLiteral("fixture"), &problem);
        if (id < 0)
            qWarning("%s", qPrintable(problem));
        return id;
    }

    // Follows the sweep to its end (CliUser::watchSweep); `during` every 100 ms.
    QString watchToTheEnd(int sweep, const std::function<void()> &during = {})
    {
        return m_user.watchSweep(sweep, 150'000, during);
    }

    QJsonArray suspects()
    {
        const Result r =
            orrery({QStringLiteral("cluster"), QStringLiteral("nodes"), QStringLiteral("fixture"),
                    QStringLiteral("--suspect"), QStringLiteral("--json")});
        return QJsonDocument::fromJson(r.out.toUtf8()).object().value(QStringLiteral("suspect")).toArray();
    }

    // The sweep spec of a command: `script` (one line: the YAML quoting folds newlines) run by
    // bash with the run dir as $1.
    QByteArray commandSpec(const char *name, const QByteArray &script, int nodes = 1)
    {
        return QByteArray("name: ") + name +
            "\n"
            "experiment: bad-nodes\n"
            "command: [bash, -c, " +
            orrery::test::yamlQuoted(QString::fromUtf8(script)) +
            ", orrery-task, \"{{run_dir}}\"]\n"
            "method: grid\n"
            "parameters:\n"
            "  x: {values: [1]}\n"
            "resources: {nodes: " +
            QByteArray::number(nodes) +
            ", cpus_per_task: 1, time: \"00:05:00\"}\n"
            "retries: 0\n";
    }

private Q_SLOTS:
    void initTestCase()
    {
        const QString blocker = orrery::test::clusterTestBlocker(m_cluster, m_user);
        QVERIFY2(blocker.isEmpty(), qPrintable(blocker));
        QString problem;
        m_root = orrery::test::addFixtureCluster(m_user, m_cluster, QStringLiteral("fixture"),
                                                 QStringLiteral("tst_bad_nodes"), &problem);
        QVERIFY2(!m_root.isEmpty(), qPrintable(problem));
    }

    void cleanup()
    {
        // Whatever a test did to the nodes, the next one (and the rest of the suite) finds them up.
        for (const QString &node : m_cluster.value("ORRERY_TEST_SLURM_NODES").split(QLatin1Char(',')))
            slurm({QStringLiteral("scontrol"), QStringLiteral("update"), QStringLiteral("nodename=") + node,
                   QStringLiteral("state=resume")});
        orrery({QStringLiteral("cluster"), QStringLiteral("nodes"), QStringLiteral("fixture"),
                QStringLiteral("--clear-all")});
    }

    // The health check failed on the node the attempt ran on: that node becomes suspect, and the
    // retry (retries: 0, so it cannot be an ordinary retry) runs with --exclude of it, elsewhere.
    void healthFailureExcludesTheNodeFromTheRetry()
    {
        // Stands in for the deep health check: the first attempt writes the health check's verdict
        // for its own node, as the health check does, and fails; the next one succeeds.
        const QByteArray script =
            "if [[ -e $1/health-failed ]]; then echo \"ran on $SLURMD_NODENAME\"; exit 0; fi; "
            "echo \"$SLURMD_NODENAME\" > \"$1/health-failed\"; "
            "printf '{\"state\":\"failed\",\"reason\":\"health check failed on %s: matmul mismatch\","
            "\"node\":\"%s\",\"cause\":\"health\",\"t\":%d}\\n' \"$SLURMD_NODENAME\" \"$SLURMD_NODENAME\" "
            "\"$(date +%s)\" > \"$1/exit.json\"; "
            "exit 1";
        const int sweep = submit(writeSpec(QStringLiteral("health.yaml"), commandSpec("health", script)));
        QVERIFY(sweep > 0);
        const QString out = watchToTheEnd(sweep);

        auto store = TrackingStore::open(m_user.db(), TrackingStore::Mode::ReadOnly);
        QCOMPARE(store->sweep(sweep)->state, QStringLiteral("finished"));
        const QList<Trial> attempts = store->trials(sweep);
        QCOMPARE(attempts.size(), 2);
        const QString bad =
            QString::fromUtf8(readAll(attempts[0].runDir + QStringLiteral("/health-failed"))).trimmed();
        QVERIFY2(bad == QLatin1String("node1") || bad == QLatin1String("node2"), qPrintable(bad + out));
        QCOMPARE(attempts[0].nodes, bad);
        QCOMPARE(attempts[0].state, QStringLiteral("failed"));
        QVERIFY2(attempts[0].exitReason.startsWith(QStringLiteral("node fault on %1 (health)").arg(bad)),
                 qPrintable(attempts[0].exitReason));
        QCOMPARE(attempts[1].state, QStringLiteral("completed"));
        QVERIFY2(!attempts[1].nodes.isEmpty() && attempts[1].nodes != bad,
                 qPrintable(attempts[1].nodes + out));
        // Slurm itself was told to keep the node out of the retry.
        QCOMPARE(jobField(attempts[1].task, QStringLiteral("ExcNodeList")), bad);
        QCOMPARE(jobField(attempts[0].task, QStringLiteral("ExcNodeList")), QStringLiteral("(null)"));
        QVERIFY2(out.contains(QStringLiteral("node %1 of fixture marked suspect (health)").arg(bad)),
                 qPrintable(out));

        // The suspect list through the CLI, with reason, source and expiry.
        const QJsonArray list = suspects();
        QCOMPARE(list.size(), 1);
        const QJsonObject s = list[0].toObject();
        QCOMPARE(s.value(QStringLiteral("node")).toString(), bad);
        QCOMPARE(s.value(QStringLiteral("source")).toString(), QStringLiteral("health"));
        QVERIFY(s.value(QStringLiteral("reason")).toString().contains(QStringLiteral("matmul mismatch")));
        QCOMPARE(s.value(QStringLiteral("expires_in")).toString(), QStringLiteral("24 h"));
    }

    // A node taken down mid-trial: Slurm requeues the task (--requeue); the runner finds the node
    // down and lists it as suspect; the task runs again on the other node, resuming from its
    // checkpoint, as the same attempt (retries: 0 untouched).
    void nodeDownMidTrialResumesElsewhere()
    {
        // Checkpoints by itself: the step count in the run dir; each start is logged with its node.
        const QByteArray script = "n=$(cat \"$1/ckpt\" 2>/dev/null || echo 0); "
                                  "echo \"start=$n node=$SLURMD_NODENAME\" >> \"$1/starts\"; "
                                  "while (( n < 30 )); do n=$((n + 1)); echo $n > \"$1/ckpt\"; "
                                  "echo step=$n; sleep 0.2; done";
        const int sweep = submit(writeSpec(QStringLiteral("down.yaml"), commandSpec("down", script)));
        QVERIFY(sweep > 0);
        QString downed, task;
        bool released = false;
        const QString out = watchToTheEnd(sweep, [&] {
            auto store = TrackingStore::open(m_user.db(), TrackingStore::Mode::ReadOnly);
            const QList<Trial> ts = store->trials(sweep);
            if (ts.isEmpty())
                return;
            const Trial &t = ts.front();
            if (downed.isEmpty() && !t.nodes.isEmpty() &&
                readAll(t.runDir + QStringLiteral("/ckpt")).trimmed().toInt() >= 3) {
                downed = t.nodes;
                task = t.task;
                slurm({QStringLiteral("scontrol"), QStringLiteral("update"),
                       QStringLiteral("nodename=") + downed, QStringLiteral("state=down"),
                       QStringLiteral("reason=orrery-test")});
                // The fixture's nodes are all this machine and its slurmd lives on, so with
                // ReturnToService=2 a DOWN node is back within milliseconds; drained, it stays out,
                // as a site's health daemon or an admin would leave a failed node.
                slurm({QStringLiteral("scontrol"), QStringLiteral("update"),
                       QStringLiteral("nodename=") + downed, QStringLiteral("state=drain"),
                       QStringLiteral("reason=orrery-test")});
            }
            // Slurm holds a requeued job for two minutes (BeginTime) before it may start again;
            // the test lets it start at once, so the suite stays short. Only the wait is cut.
            if (!downed.isEmpty() && !released && t.detail.contains(QLatin1String("BeginTime"))) {
                slurm({QStringLiteral("scontrol"), QStringLiteral("update"), QStringLiteral("jobid=") + task,
                       QStringLiteral("StartTime=now")});
                released = true;
            }
        });
        QVERIFY2(!downed.isEmpty(), qPrintable(out));
        auto store = TrackingStore::open(m_user.db(), TrackingStore::Mode::ReadOnly);
        const QList<Trial> attempts = store->trials(sweep);
        QCOMPARE(attempts.size(), 1);  // no retry used: Slurm requeued the same task
        QVERIFY2(attempts[0].state == QLatin1String("completed"), qPrintable(attempts[0].exitReason + out));
        QVERIFY2(attempts[0].nodes != downed && !attempts[0].nodes.isEmpty(), qPrintable(attempts[0].nodes));
        // Resumed from its checkpoint: the second start did not begin at 0, on the other node.
        const QStringList starts = QString::fromUtf8(readAll(attempts[0].runDir + QStringLiteral("/starts")))
                                       .split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QCOMPARE(starts.size(), 2);
        QCOMPARE(starts[0], QStringLiteral("start=0 node=") + downed);
        QVERIFY2(!starts[1].startsWith(QLatin1String("start=0 ")) && starts[1].endsWith(attempts[0].nodes),
                 qPrintable(starts.join(QLatin1Char('|'))));
        QCOMPARE(readAll(attempts[0].runDir + QStringLiteral("/ckpt")).trimmed(), QByteArray("30"));
        const QJsonArray list = suspects();
        QCOMPARE(list.size(), 1);
        QCOMPARE(list[0].toObject().value(QStringLiteral("node")).toString(), downed);
        QCOMPARE(list[0].toObject().value(QStringLiteral("source")).toString(), QStringLiteral("node-fail"));
        QVERIFY2(out.contains(QStringLiteral("requeued by the scheduler from ") + downed), qPrintable(out));
    }

    // Every node of the partition suspect: a one-node trial still gets one (the newest suspect is
    // kept out, the oldest let in, and the trial's detail says so); a two-node trial excludes none.
    void neverExcludesTheLastNodes()
    {
        for (const char *node : {"node1", "node2"}) {
            const Result r =
                orrery({QStringLiteral("cluster"), QStringLiteral("nodes"), QStringLiteral("fixture"),
                        QStringLiteral("--add"), QString::fromLatin1(node), QStringLiteral("--reason"),
                        QStringLiteral("fan failure")});
            QVERIFY2(r.code == 0, qPrintable(r.err));
            QThread::msleep(20);  // node1 the older
        }
        const int one = submit(writeSpec(QStringLiteral("fit1.yaml"), commandSpec("fit1", "true")));
        QVERIFY(one > 0);
        auto store = TrackingStore::open(m_user.db(), TrackingStore::Mode::ReadOnly);
        Trial t = store->trials(one).front();
        QVERIFY2(t.detail.contains(QStringLiteral("suspect nodes kept out: node2")) &&
                     t.detail.contains(QStringLiteral("suspect node node1 not excluded")) &&
                     t.detail.contains(QStringLiteral("too few")),
                 qPrintable(t.detail));
        QCOMPARE(jobField(t.task, QStringLiteral("ExcNodeList")), QStringLiteral("node2"));
        const int two = submit(writeSpec(QStringLiteral("fit2.yaml"), commandSpec("fit2", "true", 2)));
        QVERIFY(two > 0);
        t = store->trials(two).front();
        QCOMPARE(jobField(t.task, QStringLiteral("ExcNodeList")), QStringLiteral("(null)"));
        QVERIFY2(t.detail.contains(QStringLiteral("suspect nodes node1, node2 not excluded")),
                 qPrintable(t.detail));
        watchToTheEnd(one);
        watchToTheEnd(two);
        QCOMPARE(store->trials(one).front().state, QStringLiteral("completed"));
        QCOMPARE(store->trials(two).front().state, QStringLiteral("completed"));
    }

    // `orrery cluster nodes`: the node table from sinfo with the suspects marked; --add needs a
    // reason and a real node name; --clear of a node that is not suspect says so.
    void clusterNodesCommand()
    {
        Result r = orrery({QStringLiteral("cluster"), QStringLiteral("nodes"), QStringLiteral("fixture"),
                           QStringLiteral("--add"), QStringLiteral("node2"), QStringLiteral("--reason"),
                           QStringLiteral("ECC errors in dmesg")});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains(QLatin1String("node2")) && r.out.contains(QLatin1String("ECC errors")),
                 qPrintable(r.out));
        r = orrery({QStringLiteral("cluster"), QStringLiteral("nodes"), QStringLiteral("fixture")});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const QStringList lines = r.out.split(QLatin1Char('\n'));
        bool node1 = false, node2 = false;
        for (const QString &line : lines) {
            if (line.startsWith(QLatin1String("node1"))) {
                node1 = true;
                QVERIFY2(!line.contains(QLatin1String("suspect")), qPrintable(line));
            }
            if (line.startsWith(QLatin1String("node2"))) {
                node2 = true;
                QVERIFY2(line.contains(QLatin1String("suspect (user): ECC errors in dmesg")) &&
                             line.contains(QLatin1String("gpu")),
                         qPrintable(line));
            }
        }
        QVERIFY2(node1 && node2, qPrintable(r.out));
        r = orrery({QStringLiteral("cluster"), QStringLiteral("nodes"), QStringLiteral("fixture"),
                    QStringLiteral("--json")});
        const QJsonArray nodes =
            QJsonDocument::fromJson(r.out.toUtf8()).object().value(QStringLiteral("nodes")).toArray();
        QCOMPARE(nodes.size(), 2);
        QCOMPARE(
            nodes[1].toObject().value(QStringLiteral("suspect")).toObject().value(QStringLiteral("expires")),
            QJsonValue());  // the user's own: never
        QCOMPARE(nodes[0].toObject().value(QStringLiteral("gpus")).toInt(),
                 m_cluster.value("ORRERY_TEST_SLURM_GPUS_PER_NODE").toInt());

        r = orrery({QStringLiteral("cluster"), QStringLiteral("nodes"), QStringLiteral("fixture"),
                    QStringLiteral("--add"), QStringLiteral("node3")});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains(QLatin1String("--reason")), qPrintable(r.err));
        r = orrery({QStringLiteral("cluster"), QStringLiteral("nodes"), QStringLiteral("fixture"),
                    QStringLiteral("--add"), QStringLiteral("node1;reboot"), QStringLiteral("--reason"),
                    QStringLiteral("x")});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains(QLatin1String("is not a node name")), qPrintable(r.err));
        r = orrery({QStringLiteral("cluster"), QStringLiteral("nodes"), QStringLiteral("fixture"),
                    QStringLiteral("--clear"), QStringLiteral("node1")});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains(QLatin1String("node1 is not a suspect node of fixture")), qPrintable(r.err));
        r = orrery({QStringLiteral("cluster"), QStringLiteral("nodes"), QStringLiteral("fixture"),
                    QStringLiteral("--clear"), QStringLiteral("node2")});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY(suspects().isEmpty());
        r = orrery({QStringLiteral("cluster"), QStringLiteral("nodes"), QStringLiteral("nowhere"),
                    QStringLiteral("--suspect")});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains(QLatin1String("no cluster 'nowhere'")), qPrintable(r.err));
    }
};

ORRERY_TEST_MAIN(TestBadNodes, QCoreApplication)
#include "tst_bad_nodes.moc"
