// SPDX-License-Identifier: GPL-3.0-or-later
// Users' own training code as it is (docs/sweeps.md "Launchers" and "W&B calls, captured"),
// through the real CLI:
// - a real torch.distributed job (tests/data/dist_check.py, gloo on CPU, init_method env://) on
//   the fixture's two Slurm nodes: `launch: per_gpu`, one srun task per (fake) GPU, each a rank;
//   and `launch: per_node`, one task per node running the real torchrun --nproc_per_node 2 with
//   {{nnodes}}, {{node_rank}}, {{master_addr}}, {{master_port}}; the world size, every rank and an
//   all-reduce checked from what each rank wrote; the same two layouts on the local executor;
// - a script written for W&B only (tests/data/wandb_train.py) with the real `wandb` package,
//   offline and disabled, never a network: its metrics reach the store at W&B's own steps (compared
//   with the history rows in W&B's offline run file), its video and image as artifacts, and W&B's
//   offline run is there and whole.
#include "remotesupport.h"

#include "orrery/core/store.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QThread>
#include <QUuid>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

using namespace orrery::core;

namespace {

QJsonObject readJson(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? QJsonDocument::fromJson(f.readAll()).object() : QJsonObject();
}

}  // namespace

class TestSweepLaunch : public QObject {
    Q_OBJECT

    orrery::test::TestCluster m_cluster;
    orrery::test::CliUser m_user;
    using Result = orrery::test::CliUser::Result;
    Result orrery(const QStringList &args, int timeoutMs = 120'000) { return m_user.run(args, timeoutMs); }
    bool m_clusterAdded = false;

    QString writeSpec(const QString &name, const QByteArray &yaml)
    {
        const QString path = m_user.filePath(name);
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly))
            return {};
        f.write(yaml);
        return path;
    }

    // Submits the spec (here, or on the fixture), follows it to its end; returns the sweep's id,
    // or 0 after a failed check.
    int runSweep(const QString &spec, bool onCluster, QString *watched)
    {
        QStringList args{QStringLiteral("sweep"), QStringLiteral("submit"), spec, QStringLiteral("--json")};
        if (onCluster)
            args << QStringLiteral("--cluster") << QStringLiteral("fixture");
        const Result submit = orrery(args);
        if (submit.code != 0) {
            QTest::qFail(qPrintable(submit.err + submit.out), __FILE__, __LINE__);
            return 0;
        }
        const int sweep =
            QJsonDocument::fromJson(submit.out.toUtf8()).object().value(QStringLiteral("id")).toInt();
        QProcess p;
        m_user.start(p,
                     {QStringLiteral("sweep"), QStringLiteral("watch"), QString::number(sweep),
                      QStringLiteral("--pace"), QStringLiteral("0.25,0.5")});
        if (!p.waitForFinished(240'000)) {
            p.kill();
            p.waitForFinished();
        }
        *watched = QString::fromUtf8(p.readAllStandardOutput() + p.readAllStandardError());
        return sweep;
    }

    void addCluster()
    {
        if (m_clusterAdded)
            return;
        const QString root = m_cluster.value("ORRERY_TEST_JOBS_DIR") + QStringLiteral("/tst_sweep_launch-") +
            QUuid::createUuid().toString(QUuid::Id128);
        const Result add =
            orrery(orrery::test::fixtureClusterAdd(m_cluster, QStringLiteral("fixture"), root));
        QVERIFY2(add.code == 0, qPrintable(add.err));
        m_clusterAdded = true;
    }

    // One trial of dist_check.py under `launch` with `nodes` × `gpus` (GPUs are fake on the
    // fixture, and absent here): every rank joined one group of `world` and summed 1..world.
    void distributedSweep(bool onCluster, const QByteArray &launch, int nodes, int world)
    {
        if (onCluster) {
            addCluster();
            if (QTest::currentTestFailed())
                return;
        }
        const QString out =
            m_user.filePath(QStringLiteral("dist-%1").arg(QUuid::createUuid().toString(QUuid::Id128)));
        QByteArray command;
        if (launch == "per_node")
            command = "[" +
                orrery::test::yamlQuoted(orrery::test::sourceFile(QStringLiteral(".venv/bin/torchrun"))) +
                ", --nnodes, \"{{nnodes}}\", --nproc_per_node, \"{{gpus_per_node}}\", --node_rank, "
                "\"{{node_rank}}\", --master_addr, \"{{master_addr}}\", --master_port, "
                "\"{{master_port}}\", " +
                orrery::test::yamlQuoted(
                          orrery::test::sourceFile(QStringLiteral("tests/data/dist_check.py"))) +
                ", " + orrery::test::yamlQuoted(out) + ", \"node={{node_rank}}/{{nnodes}}\"]";
        else
            command = "[" + orrery::test::yamlQuoted(orrery::test::venvPython()) + ", " +
                orrery::test::yamlQuoted(
                          orrery::test::sourceFile(QStringLiteral("tests/data/dist_check.py"))) +
                ", " + orrery::test::yamlQuoted(out) +
                ", \"node={{node_rank}}/{{nnodes}}\", \"{{master_addr}}:{{master_port}}\"]";
        const QString spec = writeSpec(
            QStringLiteral("dist-%1-%2.yaml")
                .arg(onCluster ? QStringLiteral("slurm") : QStringLiteral("local"),
                     QString::fromUtf8(launch)),
            "name: dist-" + launch +
                "\n"
                "command: " +
                command +
                "\n"
                "launch: " +
                launch +
                "\n"
                "workdir: " +
                orrery::test::yamlQuoted(QDir::tempPath()) +
                "\n"
                "# /tmp is only somewhere to start (the script and its outputs are absolute paths):\n"
                "code: {snapshot: false}\n"
                "method: grid\n"
                "parameters:\n  tag: {value: x}\n"
                "resources: {nodes: " +
                QByteArray::number(nodes) + ", gpus_per_node: 2, cpus_per_task: 1, time: \"00:10:00\"}\n");
        QString watched;
        const int sweep = runSweep(spec, onCluster, &watched);
        if (!sweep)
            return;
        auto store = TrackingStore::open(m_user.db(), TrackingStore::Mode::ReadOnly);
        const QList<Trial> trials = store->trials(sweep);
        QCOMPARE(trials.size(), 1);
        QFile verdict(QDir(trials[0].runDir).filePath(QStringLiteral("exit.json")));
        const QByteArray verdictText =
            verdict.open(QIODevice::ReadOnly) ? verdict.readAll() : QByteArray("(none)");
        QVERIFY2(trials[0].state == QStringLiteral("completed"),
                 qPrintable(trials[0].state + QLatin1Char(' ') + trials[0].exitReason + QLatin1Char('\n') +
                            watched + QStringLiteral("\nexit.json in ") + trials[0].runDir +
                            QStringLiteral(": ") + QString::fromUtf8(verdictText)));
        std::set<int> ranks, nodeRanks, ports;
        for (int r = 0; r < world; ++r) {
            const QJsonObject seen = readJson(QStringLiteral("%1/rank-%2.json").arg(out).arg(r));
            QVERIFY2(!seen.isEmpty(),
                     qPrintable(QStringLiteral("rank %1 wrote nothing; %2").arg(r).arg(watched)));
            QCOMPARE(seen.value(QStringLiteral("rank")).toInt(), r);
            QCOMPARE(seen.value(QStringLiteral("world_size")).toInt(), world);
            QCOMPARE(seen.value(QStringLiteral("sum")).toDouble(), double(world * (world + 1) / 2));
            QCOMPARE(seen.value(QStringLiteral("env_WORLD_SIZE")).toString(), QString::number(world));
            QCOMPARE(seen.value(QStringLiteral("env_NNODES")).toString(), QString::number(nodes));
            const int localRank = seen.value(QStringLiteral("env_LOCAL_RANK")).toString().toInt();
            QVERIFY(localRank == 0 || localRank == 1);
            ranks.insert(r);
            // The node's own words: torchrun's workers inherit NODE_RANK from their node's task
            // (per_node); per_gpu's ranks 0-1 sit on the first node, 2-3 on the second.
            const int node = seen.value(QStringLiteral("env_NODE_RANK")).toString().toInt();
            nodeRanks.insert(node);
            QCOMPARE(node, r / 2);
            const QStringList words = seen.value(QStringLiteral("words")).toVariant().toStringList();
            QVERIFY(!words.isEmpty());
            QCOMPARE(words[0], QStringLiteral("node=%1/%2").arg(node).arg(nodes));
            if (onCluster)  // each task on its Slurm node: the fixture's NODE_RANK is Slurm's node id
                QCOMPARE(seen.value(QStringLiteral("slurm_nodeid")).toString(), QString::number(node));
            if (launch == "per_node") {
                QCOMPARE(seen.value(QStringLiteral("env_GROUP_RANK")).toString(), QString::number(node));
                QCOMPARE(seen.value(QStringLiteral("env_LOCAL_WORLD_SIZE")).toString(), QStringLiteral("2"));
            } else {
                QCOMPARE(words.value(1),
                         seen.value(QStringLiteral("env_MASTER_ADDR")).toString() + QLatin1Char(':') +
                             seen.value(QStringLiteral("env_MASTER_PORT")).toString());
            }
            ports.insert(seen.value(QStringLiteral("env_MASTER_PORT")).toString().toInt());
        }
        QCOMPARE(int(ranks.size()), world);
        QCOMPARE(int(nodeRanks.size()), nodes);
        QCOMPARE(int(ports.size()), 1);  // one rendezvous
        if (onCluster && launch == "per_gpu") {
            // The rule: 10000 + the job id mod 20000, one up per listener found.
            const int jobId = trials[0].task.section(QLatin1Char('_'), 0, 0).toInt();
            QVERIFY2(*ports.begin() >= 10000 + jobId % 20000 && *ports.begin() < 10010 + jobId % 20000,
                     qPrintable(trials[0].task));
        }
    }

    // The W&B script, W&B in `mode`; returns the trial's run dir and fills `runId`.
    QString wandbSweep(const QByteArray &mode, qint64 *runId, int *sweepOut)
    {
        const QString wandbDir = m_user.filePath(QStringLiteral("wandb-") + QString::fromUtf8(mode));
        QDir().mkpath(wandbDir);
        const QString spec = writeSpec(
            QStringLiteral("wandb-%1.yaml").arg(QString::fromUtf8(mode)),
            "name: wandb-" + mode +
                "\n"
                "command: [env, WANDB_MODE=" +
                mode + ", WANDB_SILENT=true, WANDB_DISABLE_GIT=true, \"WANDB_API_KEY=\", " +
                orrery::test::yamlQuoted(QStringLiteral("WANDB_DIR=") + wandbDir) + ", " +
                orrery::test::yamlQuoted(orrery::test::venvPython()) + ", " +
                orrery::test::yamlQuoted(
                    orrery::test::sourceFile(QStringLiteral("tests/data/wandb_train.py"))) +
                ", --lr, \"{{lr}}\", --video, " +
                orrery::test::yamlQuoted(orrery::test::sourceFile(QStringLiteral("tests/data/clip.mp4"))) +
                "]\n"
                "method: grid\n"
                "parameters:\n  lr: {value: 0.1}\n");
        QString watched;
        const int sweep = runSweep(spec, false, &watched);
        if (!sweep)
            return {};
        *sweepOut = sweep;
        auto store = TrackingStore::open(m_user.db(), TrackingStore::Mode::ReadOnly);
        const QList<Trial> trials = store->trials(sweep);
        if (trials.size() != 1 || trials[0].state != QStringLiteral("completed")) {
            QFile err(trials.isEmpty() ? QString()
                                       : QDir(trials[0].runDir).filePath(QStringLiteral("stderr.log")));
            const QByteArray said = err.open(QIODevice::ReadOnly) ? err.readAll().right(3000) : QByteArray();
            QTest::qFail(qPrintable(QStringLiteral("the W&B script did not complete: %1\n%2")
                                        .arg(watched, QString::fromUtf8(said))),
                         __FILE__, __LINE__);
            return {};
        }
        *runId = trials[0].runId;
        return trials[0].runDir;
    }

    // What the store holds for the W&B script's run: the metrics at W&B's steps, the media.
    void verifyCaptured(qint64 runId, const QString &runDir)
    {
        auto store = TrackingStore::open(m_user.db(), TrackingStore::Mode::ReadOnly);
        const auto steps = [&](const QString &key) {
            QList<qint64> out;
            for (const MetricPoint &p : store->allPoints(runId, key))
                out << p.step;
            return out;
        };
        QCOMPARE(steps(QStringLiteral("train/loss")), (QList<qint64>{0, 1, 2, 3, 4, 5, 6}));
        QCOMPARE(steps(QStringLiteral("opt/lr")), (QList<qint64>{0, 1, 2, 3, 4, 5}));  // a nested dict
        QCOMPARE(steps(QStringLiteral("eval/acc")), (QList<qint64>{6, 20}));  // commit=False; step=
        QCOMPARE(steps(QStringLiteral("eval/f1")), (QList<qint64>{20}));
        QCOMPARE(steps(QStringLiteral("scalar")), (QList<qint64>{20}));  // a numpy float32
        QCOMPARE(steps(QStringLiteral("stale")), QList<qint64>{});  // W&B dropped it: step went back
        QCOMPARE(steps(QStringLiteral("best/acc")), (QList<qint64>{30}));  // the summary
        QCOMPARE(store->allPoints(runId, QStringLiteral("train/loss")).front().value, 0.9);
        QVERIFY(std::abs(store->allPoints(runId, QStringLiteral("train/loss")).back().value -
                         0.9 * 0.9 * 0.9 * 0.9 * 0.9 * 0.9 / 2) < 1e-12);
        const RunDetails d = store->details(runId);
        QCOMPARE(d.params.value(QStringLiteral("batch_size")), QStringLiteral("16"));  // config.update
        QVERIFY2(d.params.contains(QStringLiteral("model.depth")) ||
                     d.params.contains(QStringLiteral("model/depth")),
                 qPrintable(d.params.keys().join(QLatin1Char(' '))));
        bool video = false, image = false;
        for (const Artifact &a : d.artifacts) {
            QVERIFY2(QFileInfo(QDir(runDir).filePath(a.path)).size() > 0, qPrintable(a.path));
            video = video ||
                (a.kind == QStringLiteral("video") && a.step == 21 && a.path.endsWith(QLatin1String(".mp4")));
            image = image ||
                (a.kind == QStringLiteral("image") && a.step == 30 && a.path.endsWith(QLatin1String(".png")));
        }
        QVERIFY2(video && image, qPrintable(QString::number(d.artifacts.size())));
        // The video is the file W&B was given, byte for byte.
        QFile given(orrery::test::sourceFile(QStringLiteral("tests/data/clip.mp4")));
        QVERIFY(given.open(QIODevice::ReadOnly));
        bool same = false;
        for (const Artifact &a : d.artifacts) {
            QFile f(QDir(runDir).filePath(a.path));
            if (a.kind == QStringLiteral("video") && f.open(QIODevice::ReadOnly))
                same = f.readAll() == given.readAll();
        }
        QVERIFY(same);
        // The values W&B's history holds and Orrery cannot chart are said once, not errors.
        const QString warning = d.tags.value(QStringLiteral("orrery.warning"));
        bool warned = false;
        for (auto it = d.tags.cbegin(); it != d.tags.cend(); ++it)
            warned = warned || it.value().contains(QLatin1String("wandb.Table"));
        QVERIFY2(warned, qPrintable(d.tags.keys().join(QLatin1Char(' ')) + warning));
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(m_cluster.error().isEmpty(), qPrintable(m_cluster.error()));
        QVERIFY(m_user.isValid());
        if (qEnvironmentVariableIsEmpty("ORRERY_CLI") || qEnvironmentVariableIsEmpty("ORRERY_SOURCE_DIR"))
            QFAIL("ORRERY_CLI and ORRERY_SOURCE_DIR must be set (CTest sets them)");
        QVERIFY2(QFileInfo(orrery::test::venvPython()).isExecutable(),
                 qPrintable(orrery::test::venvPython() +
                            QStringLiteral(" is missing: scripts/setup makes the .venv with torch")));
    }

    void localPerGpuRanksJoinOneGroup() { distributedSweep(false, "per_gpu", 2, 4); }
    void localPerNodeTorchrunOnEachNode() { distributedSweep(false, "per_node", 2, 4); }
    void slurmPerGpuTasksJoinOneGroupAcrossTwoNodes() { distributedSweep(true, "per_gpu", 2, 4); }
    void slurmPerNodeTorchrunOnTwoNodes() { distributedSweep(true, "per_node", 2, 4); }

    // A cancel reaches every process of a local multi-process trial (the group's SIGTERM), and the
    // trial ends as its processes do: here each checkpoints and asks to come back (exit 75).
    void localCancelReachesEveryProcess()
    {
        const QString out = m_user.filePath(QStringLiteral("cancel-ranks"));
        QVERIFY(QDir().mkpath(out));
        const QString script = m_user.filePath(QStringLiteral("wait_for_term.py"));
        QFile f(script);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("import os, signal, sys, time\n"
                "out = sys.argv[1]\n"
                "def term(*_):\n"
                "    open(os.path.join(out, 'term-' + os.environ['RANK']), 'w').close()\n"
                "    sys.exit(75)\n"
                "signal.signal(signal.SIGTERM, term)\n"
                "open(os.path.join(out, 'started-' + os.environ['RANK']), 'w').close()\n"
                "time.sleep(120)\n");
        f.close();
        const QString spec = writeSpec(
            QStringLiteral("cancel.yaml"),
            "name: cancel-ranks\ncommand: [" + orrery::test::yamlQuoted(orrery::test::venvPython()) + ", " +
                orrery::test::yamlQuoted(script) + ", " + orrery::test::yamlQuoted(out) +
                "]\nmethod: grid\nparameters:\n  a: {value: 1}\n"
                "resources: {nodes: 1, gpus_per_node: 3}\n");
        const Result submit =
            orrery({QStringLiteral("sweep"), QStringLiteral("submit"), spec, QStringLiteral("--json")});
        QVERIFY2(submit.code == 0, qPrintable(submit.err + submit.out));
        const int sweep =
            QJsonDocument::fromJson(submit.out.toUtf8()).object().value(QStringLiteral("id")).toInt();
        QDeadlineTimer started(60'000);
        while (QDir(out).entryList({QStringLiteral("started-*")}, QDir::Files).size() < 3 &&
               !started.hasExpired())
            QThread::msleep(100);
        QCOMPARE(QDir(out).entryList({QStringLiteral("started-*")}, QDir::Files).size(), 3);
        const Result cancel =
            orrery({QStringLiteral("sweep"), QStringLiteral("cancel"), QString::number(sweep)});
        QVERIFY2(cancel.code == 0, qPrintable(cancel.err + cancel.out));
        QDeadlineTimer ended(60'000);
        while (QDir(out).entryList({QStringLiteral("term-*")}, QDir::Files).size() < 3 && !ended.hasExpired())
            QThread::msleep(100);
        QCOMPARE(QDir(out).entryList({QStringLiteral("term-*")}, QDir::Files),
                 (QStringList{QStringLiteral("term-0"), QStringLiteral("term-1"), QStringLiteral("term-2")}));
    }

    void wandbOfflineIsCapturedAndKeepsItsOwnRun()
    {
        qint64 runId = 0;
        int sweep = 0;
        const QString runDir = wandbSweep("offline", &runId, &sweep);
        if (runDir.isEmpty())
            return;
        verifyCaptured(runId, runDir);
        if (QTest::currentTestFailed())
            return;
        // W&B's own offline run: there, whole (its history rows at the same steps as Orrery's,
        // its copy of the video), ready for `wandb sync`.
        QDirIterator it(m_user.filePath(QStringLiteral("wandb-offline/wandb")),
                        {QStringLiteral("run-*.wandb")}, QDir::Files, QDirIterator::Subdirectories);
        QVERIFY(it.hasNext());
        const QString runFile = it.next();
        QVERIFY(QFileInfo(runFile).size() > 0);
        QDirIterator videos(QFileInfo(runFile).dir().filePath(QStringLiteral("files/media/videos")),
                            {QStringLiteral("*_21_*.mp4")}, QDir::Files, QDirIterator::Subdirectories);
        QVERIFY(videos.hasNext());
        QProcess history;
        history.start(orrery::test::venvPython(),
                      {orrery::test::sourceFile(QStringLiteral("tests/data/wandb_history.py")), runFile});
        QVERIFY(history.waitForFinished(60'000));
        QCOMPARE(history.exitCode(), 0);
        auto store = TrackingStore::open(m_user.db(), TrackingStore::Mode::ReadOnly);
        int rows = 0;
        for (const QByteArray &line : history.readAllStandardOutput().split('\n')) {
            const QJsonObject row = QJsonDocument::fromJson(line).object();
            if (row.isEmpty())
                continue;
            ++rows;
            const qint64 step = row.value(QStringLiteral("_step")).toInteger();
            // A media or table value is flattened into W&B's row as NAME/_type, NAME/size, ...:
            // those are W&B's description of the object, not values the script logged.
            QStringList objects;
            for (auto kv = row.begin(); kv != row.end(); ++kv)
                if (kv.key().endsWith(QLatin1String("/_type")))
                    objects << kv.key().chopped(int(qstrlen("_type")));
            for (auto kv = row.begin(); kv != row.end(); ++kv) {
                if (kv.key().startsWith(QLatin1Char('_')) || !kv.value().isDouble() ||
                    std::any_of(objects.cbegin(), objects.cend(),
                                [&](const QString &o) { return kv.key().startsWith(o); }))
                    continue;
                bool found = false;
                for (const MetricPoint &p : store->allPoints(runId, kv.key()))
                    found = found || (p.step == step && std::abs(p.value - kv.value().toDouble()) < 1e-9);
                QVERIFY2(
                    found,
                    qPrintable(
                        QStringLiteral("W&B's %1 at step %2 is not in the store").arg(kv.key()).arg(step)));
            }
        }
        QCOMPARE(rows, 10);  // steps 0-6, 20, 21, 30
    }

    void wandbDisabledIsCapturedToo()
    {
        qint64 runId = 0;
        int sweep = 0;
        const QString runDir = wandbSweep("disabled", &runId, &sweep);
        if (runDir.isEmpty())
            return;
        verifyCaptured(runId, runDir);
        // W&B wrote nothing of its own.
        QDirIterator it(m_user.filePath(QStringLiteral("wandb-disabled")), {QStringLiteral("*.wandb")},
                        QDir::Files, QDirIterator::Subdirectories);
        QVERIFY(!it.hasNext());
    }
};

ORRERY_TEST_MAIN(TestSweepLaunch, QCoreApplication)
#include "tst_sweep_launch.moc"
