// SPDX-License-Identifier: GPL-3.0-or-later
// Submit planning (core/sweepplan.h, remote previewSbatch): a spec file read into its plan, the
// trials and their resolved configs, where they go, the preview's table and JSON, the errors a
// spec or its base config can have, and that the sbatch preview is byte for byte the script the
// SlurmExecutor submits for the same batch (one renderer, not a copy of it).
#include "sweepsupport.h"
#include "testsupport.h"

#include "orrery/core/sweepplan.h"
#include "orrery/remote/connection.h"
#include "orrery/remote/slurmexecutor.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonObject>
#include <QSet>
#include <QTemporaryDir>
#include <QThread>

#include <algorithm>
#include <utility>

using namespace orrery::core;
namespace remote = orrery::remote;

class TestSweepPlan : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    std::optional<TrainerSchema> m_schema;

    QString write(const QString &name, const QByteArray &text)
    {
        const QString path = m_dir.filePath(name);
        QDir().mkpath(QFileInfo(path).path());
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly))
            qFatal("cannot write %s", qPrintable(path));
        f.write(text);
        return path;
    }

    // A grid on the end-to-end tests' workload: 2 x 2 trials, micro.yaml as the base.
    QString microSpec()
    {
        return write(QStringLiteral("micro-grid.yaml"),
                     "name: micro-grid\nexperiment: shapes\nmethod: grid\n"
                     "metric: {name: train/loss, goal: minimize}\n"
                     "trainer: {config: " +
                         orrery::test::microConfigPath().toUtf8() +
                         "}\n"
                         "parameters:\n"
                         "  optim.lr: {values: [1e-3, 3e-3]}\n"
                         "  model.temporal_layers: {values: [1, 2]}\n"
                         "  train.steps: {value: 20}\n"
                         "max_concurrent: 3\nretries: 1\n"
                         "resources: {nodes: 1, gpus_per_node: 2, time: \"00:30:00\"}\n");
    }

    static remote::ClusterProfile profile()
    {
        remote::ClusterProfile p;
        p.name = QStringLiteral("hpc");
        p.host = QStringLiteral("login.example.org");
        p.remoteRoot = QStringLiteral("/scratch/ada/orrery runs");
        p.partition = QStringLiteral("booster");
        p.account = QStringLiteral("vidgen");
        p.setup = QStringList{QStringLiteral("module load CUDA")};
        p.trainerPath = QStringLiteral("/opt/orrery/bin/orrery-train");
        return p;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_schema = orrery::test::trainerSchema();
    }

    void microGridPlansItsTrials()
    {
        const QString file = microSpec();
        const PlanLoad load = loadSubmitPlan(file, *m_schema);
        QVERIFY(load.specErrors.isEmpty());
        QVERIFY2(load.readError.isEmpty() && load.configError.isEmpty(),
                 qPrintable(load.readError + load.configError));
        QVERIFY(load.plan);
        const SubmitPlan &plan = *load.plan;
        QCOMPARE(plan.spec.name, QStringLiteral("micro-grid"));
        QCOMPARE(plan.spec.trainerConfig, orrery::test::microConfigPath());
        QFile spec(file), base(orrery::test::microConfigPath());
        QVERIFY(spec.open(QIODevice::ReadOnly) && base.open(QIODevice::ReadOnly));
        QCOMPARE(plan.specYaml, spec.readAll());
        QCOMPARE(plan.baseConfig, base.readAll());

        QCOMPARE(load.trials.size(), 4);
        QSet<QString> seen;
        for (qsizetype i = 0; i < load.trials.size(); ++i) {
            const PlannedTrial &t = load.trials[i];
            QCOMPARE(t.index, int(i));
            QCOMPARE(t.params.size(), 3);  // in the spec's order
            QCOMPARE(t.params[0].first, QStringLiteral("optim.lr"));
            QCOMPARE(t.params[1].first, QStringLiteral("model.temporal_layers"));
            QCOMPARE(t.params[2], (std::pair<QString, QVariant>{QStringLiteral("train.steps"), qint64(20)}));
            seen.insert(formatParamValue(t.params[0].second) + QLatin1Char('/') +
                        formatParamValue(t.params[1].second));
            // The resolved config: micro.yaml with the trial's values put in.
            QVERIFY(t.config.contains("channels: 8"));
            QVERIFY(t.config.contains("steps: 20"));
            const QByteArray layers = "temporal_layers: " + formatParamValue(t.params[1].second).toUtf8();
            QVERIFY(t.config.contains(layers));
        }
        QCOMPARE(seen.size(), 4);  // every combination once
        const QList<PlannedTrial> again = planTrials(plan);  // the same plan, again
        QCOMPARE(again.size(), load.trials.size());
        for (qsizetype i = 0; i < again.size(); ++i)
            QCOMPARE(again[i].config, load.trials[i].config);
    }

    void previewIsTheTableAndTheJson()
    {
        const PlanLoad load = loadSubmitPlan(microSpec(), *m_schema);
        QVERIFY(load.plan);
        const PlanPreview preview = previewPlan(*load.plan, load.trials);
        QVERIFY2(preview.summary.startsWith(
                     QStringLiteral("sweep micro-grid (experiment shapes): method grid, 4 of 4 combinations, "
                                    "max_concurrent 3, retries 1\nmetric: train/loss (minimize)\n")),
                 qPrintable(preview.summary));
        QVERIFY(preview.summary.contains(QStringLiteral("base config: ") + orrery::test::microConfigPath()));
        QVERIFY(preview.summary.endsWith(QStringLiteral("fixed: train.steps=20\n")));
        QCOMPARE(preview.columns,
                 (QStringList{QStringLiteral("trial"), QStringLiteral("optim.lr"),
                              QStringLiteral("model.temporal_layers")}));
        QCOMPARE(preview.rows.size(), 4);
        for (qsizetype i = 0; i < preview.rows.size(); ++i) {
            const PlannedTrial &t = load.trials[i];
            QCOMPARE(preview.rows[i],
                     (QStringList{QString::number(i), QString::number(t.params[0].second.toDouble(), 'g', 6),
                                  formatParamValue(t.params[1].second)}));
        }

        const QJsonObject json = planJson(*load.plan, load.trials);
        QCOMPARE(json.value(QLatin1String("name")).toString(), QStringLiteral("micro-grid"));
        QCOMPARE(json.value(QLatin1String("method")).toString(), QStringLiteral("grid"));
        QCOMPARE(json.value(QLatin1String("max_concurrent")).toInt(), 3);
        QCOMPARE(json.value(QLatin1String("metric")).toObject().value(QLatin1String("goal")).toString(),
                 QStringLiteral("minimize"));
        const QJsonArray trials = json.value(QLatin1String("trials")).toArray();
        QCOMPARE(trials.size(), 4);
        const QJsonObject params = trials[1].toObject().value(QLatin1String("params")).toObject();
        QCOMPARE(params, paramsJson(load.trials[1].params));
        QVERIFY(params.value(QLatin1String("train.steps")).isDouble());  // typed, not text
        QCOMPARE(params.value(QLatin1String("train.steps")).toInteger(), 20);
    }

    void exampleSpecPlansEveryCombination()
    {
        const PlanLoad load = loadSubmitPlan(
            orrery::test::sourceFile(QStringLiteral("resources/sweeps/tiny-lr.yaml")), *m_schema);
        QVERIFY(load.plan);
        QCOMPARE(load.trials.size(), 6);
        QVERIFY(load.plan->baseConfig.isEmpty());  // the trainer's defaults
        const PlanPreview preview = previewPlan(*load.plan, load.trials);
        QVERIFY(preview.summary.contains(QStringLiteral("method grid, 6 of 6 combinations")));
        QVERIFY(preview.summary.contains(QStringLiteral("base config: (the trainer's defaults)")));
        QCOMPARE(preview.columns.size(), 3);
    }

    void errorsSayWhatIsWrong()
    {
        // The spec's own: every problem, FILE:LINE.
        const QString bad = write(QStringLiteral("bad.yaml"),
                                  "name: bad\nmethod: grid\nparameters:\n  optim.lrr: {values: [1]}\n");
        PlanLoad load = loadSubmitPlan(bad, *m_schema);
        QVERIFY(!load.plan);
        QCOMPARE(load.specErrors.size(), 1);
        QCOMPARE(load.specErrors[0].line, 4);

        // A spec that is not there is the spec's error too (what `sweep plan` has always said).
        load = loadSubmitPlan(m_dir.filePath(QStringLiteral("missing.yaml")), *m_schema);
        QVERIFY(!load.plan);
        QCOMPARE(load.specErrors.size(), 1);

        // A base config that is not a mapping: the base's file and line.
        const QString list = write(QStringLiteral("list.yaml"), "- 1\n- 2\n");
        const QString spec = write(QStringLiteral("listbase.yaml"),
                                   "name: l\nmethod: grid\ntrainer: {config: list.yaml}\nparameters:\n"
                                   "  optim.lr: {values: [1e-3]}\n");
        load = loadSubmitPlan(spec, *m_schema);
        QVERIFY(!load.plan);
        QVERIFY(load.specErrors.isEmpty());
        QVERIFY2(load.configError.contains(list), qPrintable(load.configError));
        QVERIFY(load.trials.isEmpty());

        // An unreadable base config.
        QFile::setPermissions(list, QFileDevice::Permissions());
        if (QFile f(list); !f.open(QIODevice::ReadOnly)) {  // root reads it anyway
            load = loadSubmitPlan(spec, *m_schema);
            QVERIFY(!load.plan);
            QVERIFY2(load.readError.startsWith(list + QStringLiteral(": cannot read the base config")),
                     qPrintable(load.readError));
        }
        QFile::setPermissions(list, QFileDevice::ReadOwner | QFileDevice::WriteOwner);
    }

    void trialsGoUnderTheExperimentInTheSweepDirectory()
    {
        const QDateTime when(QDate(2026, 11, 22), QTime(10, 11, 12), Qt::UTC);
        QCOMPARE(sweepDirectoryName(QStringLiteral("lr/sweep 1"), when),
                 QStringLiteral("lr_sweep 1-20261122-101112"));
        QCOMPARE(sweepDirectory(QStringLiteral("/scratch/runs"), QStringLiteral("../shapes"),
                                QStringLiteral("s-1")),
                 QStringLiteral("/scratch/runs/_._shapes/s-1"));
        QCOMPARE(sweepDirectory(QStringLiteral("~/orrery"), QStringLiteral("shapes"), QStringLiteral("s-1")),
                 QStringLiteral("~/orrery/shapes/s-1"));  // only the cluster resolves "~"

        const PlanLoad load = loadSubmitPlan(microSpec(), *m_schema);
        QVERIFY(load.plan);
        const LaunchBatch batch = firstBatch(*load.plan, load.trials, QStringLiteral("/scratch/shapes/s-1"));
        QCOMPARE(batch.sweepName, QStringLiteral("micro-grid"));
        QCOMPARE(batch.sweepDir, QStringLiteral("/scratch/shapes/s-1"));
        QCOMPARE(batch.batch, 0);
        QCOMPARE(batch.maxConcurrent, 3);
        QCOMPARE(batch.resources.gpusPerNode, 2);
        QCOMPARE(batch.tasks.size(), 4);
        for (qsizetype i = 0; i < batch.tasks.size(); ++i) {
            QCOMPARE(batch.tasks[i].runDir, QStringLiteral("/scratch/shapes/s-1/%1").arg(i));
            QCOMPARE(batch.tasks[i].config, load.trials[i].config);
        }
    }

    // The preview is what the executor would submit: SlurmExecutor::describe (what launch() sends)
    // for the batch the runner builds, byte for byte, with the default template and with a
    // cluster's own. Nothing connects: the executor renders without the cluster.
    void sbatchPreviewIsWhatTheExecutorSubmits()
    {
        const PlanLoad load = loadSubmitPlan(microSpec(), *m_schema);
        QVERIFY(load.plan);
        const remote::ClusterProfile p = profile();
        const QString configDir = m_dir.filePath(QStringLiteral("config"));
        const QString dirName =
            sweepDirectoryName(load.plan->spec.name, QDateTime(QDate(2026, 11, 22), QTime(10, 0), Qt::UTC));
        remote::Connection connection(p.endpoint());
        remote::SlurmExecutor executor(p, connection, configDir);

        for (const bool override : {false, true}) {
            if (override)
                write(QStringLiteral("config/clusters/hpc.sbatch"),
                      "#!/bin/bash\n#SBATCH --qos=big\n#SBATCH --job-name={{job_name}}\nd=({{trial_dirs}})\n"
                      "{{trainer}}\n");
            const QByteArray preview = remote::previewSbatch(p, configDir, *load.plan, load.trials, dirName);
            const LaunchBatch batch = firstBatch(
                *load.plan, load.trials, sweepDirectory(p.remoteRoot, load.plan->spec.experiment, dirName));
            QCOMPARE(preview, executor.describe(batch));
            QCOMPARE(preview.contains("#SBATCH --qos=big\n"), override);
            QVERIFY(preview.contains("'/scratch/ada/orrery runs/shapes/micro-grid-20261122-100000/3'"));
            QVERIFY(preview.contains("#SBATCH --job-name='micro-grid'\n"));
            if (!override) {
                QVERIFY(preview.contains("#SBATCH --array=0-3%3\n"));
                QVERIFY(preview.contains("#SBATCH --partition='booster'\n"));
                QVERIFY(preview.contains("#SBATCH --account='vidgen'\n"));
                QVERIFY(preview.contains("#SBATCH --gres=gpu:2\n"));
                QVERIFY(preview.contains("module load CUDA\n"));
            }
        }
        QCOMPARE(connection.commandCount(), quint64(0));
        QCOMPARE(connection.connectCount(), 0);
    }

    // A value the script cannot carry is refused by the preview as by the executor.
    void previewRefusesWhatTheExecutorRefuses()
    {
        const PlanLoad load = loadSubmitPlan(microSpec(), *m_schema);
        QVERIFY(load.plan);
        remote::ClusterProfile p = profile();
        p.partition = QStringLiteral("gpu\nevil");
        QVERIFY_THROWS_EXCEPTION(remote::SbatchError,
                                 remote::previewSbatch(p, m_dir.filePath(QStringLiteral("none")), *load.plan,
                                                       load.trials, QStringLiteral("<sweep-id>")));
    }

    // The trainer's checks run as many at once as there are cores, not one process per trial: a
    // submit checks up to kTrainerChecked trials, and each check loads LibTorch and builds the
    // model (0.5 GB for the tiny configs, 4 GB for dit-large). The trainer here is a stand-in
    // script (a real process, as the checks are) that notes when it starts and ends, and refuses
    // a config that says so, naming the file as orrery-train does.
    void trainerChecksRunNoMoreAtOnceThanTheCores()
    {
        const QString log = m_dir.filePath(QStringLiteral("checks.log"));
        const QString trainer =
            write(QStringLiteral("check-trainer.sh"),
                  "#!/bin/sh\n"
                  "echo \"$(date +%s%N) 1\" >> '" +
                      log.toUtf8() +
                      "'\n"
                      "sleep 0.3\n"
                      "echo \"$(date +%s%N) -1\" >> '" +
                      log.toUtf8() +
                      "'\n"
                      "if grep -q refuse \"$3\"; then echo \"orrery-train: $3: refused\" >&2; exit 2; fi\n");
        QFile(trainer).setPermissions(QFileDevice::ReadOwner | QFileDevice::ExeOwner);
        const int cores = std::max(1, QThread::idealThreadCount());
        QList<QByteArray> configs;
        for (int i = 0; i < 3 * cores + 1; ++i)
            configs << (i % 3 == 1 ? QByteArray("refuse: true\n") : QByteArray("ok: true\n"));

        const QStringList verdicts = checkTrialConfigs(trainer, configs);
        QCOMPARE(verdicts.size(), configs.size());
        for (qsizetype i = 0; i < configs.size(); ++i)
            QCOMPARE(verdicts[i], i % 3 == 1 ? QStringLiteral("trial.yaml: refused") : QString());
        QFile f(log);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QList<std::pair<qint64, int>> events;
        for (const QByteArray &line : f.readAll().split('\n'))
            if (const QList<QByteArray> parts = line.split(' '); parts.size() == 2)
                events.append({parts[0].toLongLong(), parts[1].toInt()});
        QCOMPARE(events.size(), 2 * configs.size());
        std::sort(events.begin(), events.end());
        int running = 0, most = 0;
        for (const auto &[when, change] : events)
            most = std::max(most, running += change);
        QVERIFY2(most <= cores,
                 qPrintable(QStringLiteral("%1 checks at once on %2 cores").arg(most).arg(cores)));
    }
};

ORRERY_TEST_MAIN(TestSweepPlan, QCoreApplication)
#include "tst_sweepplan.moc"
