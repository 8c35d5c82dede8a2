// SPDX-License-Identifier: GPL-3.0-or-later
// A command sweep whose script logs only through TensorBoard (tests/data/tb_train.py, the real
// torch.utils.tensorboard writer from the repo's .venv) and writes sample files: through the real
// CLI, its scalars reach the store from the event files the runner discovers under the run dir
// (`tensorboard: {dir: tb}`), the sweep's metric drives median early stopping as any other, its
// add_video becomes a video sample, and `artifacts:` rules pick up the files it writes; here and
// on the fixture's Slurm (tests/fixture/localcluster.py).
#include "remotesupport.h"

#include "orrery/core/store.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QUuid>
#include <QtTest>

#include <cmath>

using namespace orrery::core;

class TestSweepTensorBoard : public QObject {
    Q_OBJECT

    orrery::test::CliUser m_user;
    using Result = orrery::test::CliUser::Result;

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_user.isValid());
        if (qEnvironmentVariableIsEmpty("ORRERY_CLI") || qEnvironmentVariableIsEmpty("ORRERY_SOURCE_DIR"))
            QFAIL("ORRERY_CLI and ORRERY_SOURCE_DIR must be set (CTest sets them)");
        QVERIFY2(QFileInfo(orrery::test::venvPython()).isExecutable(),
                 qPrintable(orrery::test::venvPython() +
                            QStringLiteral(" is missing: scripts/setup makes the .venv")));
    }

    void localSweepReadsTensorBoardAndStopsEarly()
    {
        const QString spec = m_user.filePath(QStringLiteral("tb.yaml"));
        QFile f(spec);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("name: tb-only\n"
                "experiment: tensorboard\n"
                "command: [" +
                orrery::test::yamlQuoted(orrery::test::venvPython()) + ", " +
                orrery::test::yamlQuoted(qEnvironmentVariable("ORRERY_SOURCE_DIR") +
                                         QStringLiteral("/tests/data/tb_train.py")) +
                ", --lr, \"{{lr}}\", --out, \"{{run_dir}}\", --steps, \"80\", --step-seconds, \"0.05\"]\n"
                "method: grid\n"
                "metric: {name: train/loss, goal: minimize}\n"
                "tensorboard: {dir: tb}\n"
                "artifacts:\n"
                "  - {glob: \"samples/*.mp4\", step_regex: 'step_(\\d+)'}\n"
                "early_terminate: {type: median, min_step: 20, min_trials: 1}\n"
                "parameters:\n"
                "  lr: {values: [0.1, 0.0]}\n"
                "max_concurrent: 1\n"
                "retries: 0\n");
        f.close();
        const Result submit =
            m_user.run({QStringLiteral("sweep"), QStringLiteral("submit"), spec, QStringLiteral("--json")});
        QVERIFY2(submit.code == 0, qPrintable(submit.err));
        const int sweep =
            QJsonDocument::fromJson(submit.out.toUtf8()).object().value(QStringLiteral("id")).toInt();
        QVERIFY(sweep > 0);
        const Result watch =
            m_user.run({QStringLiteral("sweep"), QStringLiteral("watch"), QString::number(sweep),
                        QStringLiteral("--pace"), QStringLiteral("0.25,0.5")},
                       240'000);
        QVERIFY2(watch.code == 0 || watch.code == 1, qPrintable(watch.out + watch.err));

        auto store = TrackingStore::open(m_user.db(), TrackingStore::Mode::ReadOnly);
        QMap<int, Trial> byIndex;
        for (const Trial &t : store->trials(sweep))
            byIndex.insert(t.index, t);
        QCOMPARE(byIndex.size(), 2);
        // The good trial ran to its end; every one of its 80 points came from the event file.
        QCOMPARE(byIndex[0].state, QStringLiteral("completed"));
        const std::vector<MetricPoint> good =
            store->allPoints(byIndex[0].runId, QStringLiteral("train/loss"));
        QCOMPARE(good.size(), size_t(80));
        QCOMPARE(float(good[5].value), float(std::pow(0.9, 5)));
        QVERIFY(good[5].timeMs > 1'600'000'000'000);
        // The one that learns nothing was stopped by the median rule on TensorBoard's numbers.
        QVERIFY2(byIndex[1].state == QStringLiteral("stopped"), qPrintable(byIndex[1].state + watch.out));
        const std::vector<MetricPoint> bad = store->allPoints(byIndex[1].runId, QStringLiteral("train/loss"));
        QVERIFY(bad.size() >= 20 && bad.size() < 80);

        // add_video: a GIF sample the Video tab plays, written to the cache; the sample files by rule.
        const QList<Artifact> videos = store->samples(byIndex[0].runId, QStringLiteral("video"));
        QStringList paths;
        for (const Artifact &a : videos)
            paths << a.path;
        QVERIFY2(paths.contains(QStringLiteral("tensorboard/sample_video/step-10.gif")),
                 qPrintable(paths.join(u' ')));
        for (const Artifact &a : videos)
            if (a.path.endsWith(QLatin1String(".gif"))) {
                QFile gif(a.localPath);
                QVERIFY(gif.open(QIODevice::ReadOnly));
                QVERIFY(gif.read(4) == "GIF8");
            }
        for (const char *p : {"samples/step_0.mp4", "samples/step_40.mp4", "samples/step_70.mp4"})
            QVERIFY2(paths.contains(QString::fromUtf8(p)), qPrintable(paths.join(u' ')));
        const std::optional<Artifact> near = store->sampleNear(byIndex[0].runId, 41);
        QVERIFY(near);
        QCOMPARE(near->step, 40);
        QCOMPARE(near->remotePath, QDir(byIndex[0].runDir).filePath(QStringLiteral("samples/step_40.mp4")));
        QVERIFY(
            !store->details(byIndex[0].runId).tags.contains(QStringLiteral("orrery.warning.tensorboard")));
    }

    // The same on the fixture's Slurm: the event file and the samples are found by the listing in
    // the follower's one remote read per tick, the GIF's bytes come back in that read.
    void slurmSweepReadsTensorBoard()
    {
        orrery::test::TestCluster cluster;
        QVERIFY2(cluster.error().isEmpty(), qPrintable(cluster.error()));
        const QString root = cluster.value("ORRERY_TEST_JOBS_DIR") +
            QStringLiteral("/tst_sweep_tensorboard-") + QUuid::createUuid().toString(QUuid::Id128);
        const Result add =
            m_user.run(orrery::test::fixtureClusterAdd(cluster, QStringLiteral("fixture"), root));
        QVERIFY2(add.code == 0, qPrintable(add.err));
        const QString spec = m_user.filePath(QStringLiteral("slurm.yaml"));
        QFile f(spec);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("name: tb-slurm\n"
                "experiment: tensorboard-slurm\n"
                "command: [" +
                orrery::test::yamlQuoted(orrery::test::venvPython()) + ", " +
                orrery::test::yamlQuoted(qEnvironmentVariable("ORRERY_SOURCE_DIR") +
                                         QStringLiteral("/tests/data/tb_train.py")) +
                ", --lr, \"{{lr}}\", --out, \"{{run_dir}}\", --steps, \"30\", --step-seconds, \"0.02\"]\n"
                "workdir: " +
                orrery::test::yamlQuoted(QDir::tempPath()) +
                "\n"
                "# /tmp is only somewhere to start (the script and its outputs are absolute paths):\n"
                "code: {snapshot: false}\n"
                "method: grid\n"
                "metric: {name: train/loss, goal: minimize}\n"
                "artifacts:\n"
                "  - {glob: \"samples/*.mp4\", step_regex: 'step_(\\d+)'}\n"
                "parameters:\n"
                "  lr: {values: [0.1, 0.2]}\n"
                "resources: {cpus_per_task: 1, gpus_per_node: 1, time: \"00:10:00\"}\n"
                "max_concurrent: 2\n");
        f.close();
        const Result submit =
            m_user.run({QStringLiteral("sweep"), QStringLiteral("submit"), spec, QStringLiteral("--cluster"),
                        QStringLiteral("fixture"), QStringLiteral("--json")});
        QVERIFY2(submit.code == 0, qPrintable(submit.err + submit.out));
        const int sweep =
            QJsonDocument::fromJson(submit.out.toUtf8()).object().value(QStringLiteral("id")).toInt();
        const Result watch =
            m_user.run({QStringLiteral("sweep"), QStringLiteral("watch"), QString::number(sweep),
                        QStringLiteral("--pace"), QStringLiteral("0.25,0.5")},
                       240'000);
        auto store = TrackingStore::open(m_user.db(), TrackingStore::Mode::ReadOnly);
        QCOMPARE(store->sweep(sweep)->state, QStringLiteral("finished"));
        const QList<Trial> trials = store->trials(sweep);
        QCOMPARE(trials.size(), 2);
        for (const Trial &t : trials) {
            QVERIFY2(t.state == QStringLiteral("completed"), qPrintable(t.state + watch.out));
            const std::vector<MetricPoint> loss = store->allPoints(t.runId, QStringLiteral("train/loss"));
            QCOMPARE(loss.size(), size_t(30));
            QStringList paths;
            for (const Artifact &a : store->samples(t.runId, QStringLiteral("video")))
                paths << a.path;
            QVERIFY2(paths.contains(QStringLiteral("tensorboard/sample_video/step-10.gif")) &&
                         paths.contains(QStringLiteral("samples/step_20.mp4")),
                     qPrintable(paths.join(u' ')));
            const std::optional<Artifact> sample = store->sampleNear(t.runId, 20);
            QVERIFY(sample);
            QVERIFY2(sample->remotePath.startsWith(root), qPrintable(sample->remotePath));
        }
    }
};

ORRERY_TEST_MAIN(TestSweepTensorBoard, QCoreApplication)
#include "tst_sweep_tensorboard.moc"
