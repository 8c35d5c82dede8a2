// SPDX-License-Identifier: GPL-3.0-or-later
// Scripts that log through MLflow, followed as they are (docs/sweeps.md "MLflow calls, captured"
// and "Each trial in its own directory"), through the real CLI with the real accelerate and
// MLflow from PyPI:
// - the stage-1 shape of the walkthrough Orrery grew from (tests/data/mlflow_stage1: accelerate's
//   MLflow tracker with project_dir ./mlruns, its YAML config swept as a config-file sweep,
//   ./exp_output checkpoints, validation GIFs through a TemporaryDirectory), two trials at once and
//   a third after the script was broken on disk, here and on the fixture's Slurm: train_loss at
//   the script's own steps for every trial, the GIFs as samples at their steps, each trial's
//   mlflow.db and exp_output in its own directory and equal to what Orrery stored, no RANK seen,
//   and the third trial run on the code as submitted;
// - an HF Trainer script with `--report_to mlflow` (tests/data/hf_trainer_mlflow.py), two trials at
//   once: transformers' MLflowCallback's steps, evaluation and params in the store;
// - the other fluent calls (params, tags, text, a figure, log_image by key and step) and
//   Lightning's MLFlowLogger (tests/data/mlflow_calls.py);
// - `orrery runs ingest` of MLflow's own stores (mlflow.db and an mlruns file store) written by
//   real MLflow: every point equal to MLflow's read-back (MlflowClient.get_metric_history).
#include "remotesupport.h"

#include "orrery/core/mlflowstore.h"
#include "orrery/core/store.h"

#include <QCoreApplication>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QUuid>

#include <cmath>

using namespace orrery::core;

namespace {

QByteArray readAll(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

bool copyTree(const QString &from, const QString &to)
{
    QDirIterator it(from, QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString file = it.next();
        const QString target = QDir(to).filePath(QDir(from).relativeFilePath(file));
        if (!QDir().mkpath(QFileInfo(target).absolutePath()) || !QFile::copy(file, target))
            return false;
    }
    return true;
}

// Runs `script` with the venv's Python; its standard output.
QByteArray python(const QString &script, const QStringList &args, const QString &cwd)
{
    QProcess p;
    p.setWorkingDirectory(cwd);
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("MLFLOW_ALLOW_FILE_STORE"), QStringLiteral("true"));
    p.setProcessEnvironment(env);
    p.start(orrery::test::venvPython(), QStringList{QStringLiteral("-c"), script} + args);
    if (!p.waitForFinished(180'000) || p.exitCode() != 0) {
        qWarning("%s", p.readAllStandardError().right(3000).constData());
        return {};
    }
    return p.readAllStandardOutput();
}

// MLflow's own read-back of a store: {run id: {key: [[step, value, timestamp], ...]}}.
const char kReadBack[] = R"PY(
import json, math, sys
from mlflow.tracking import MlflowClient
c = MlflowClient(tracking_uri=sys.argv[1])
out = {}
for e in c.search_experiments():
    for r in c.search_runs([e.experiment_id]):
        out[r.info.run_id] = {k: [[m.step, m.value if math.isfinite(m.value) else str(m.value), m.timestamp]
                                  for m in c.get_metric_history(r.info.run_id, k)]
                              for k in r.data.metrics}
print(json.dumps(out))
)PY";

}  // namespace

class TestSweepMlflow : public QObject {
    Q_OBJECT

    orrery::test::TestCluster m_cluster;
    orrery::test::CliUser m_user;
    using Result = orrery::test::CliUser::Result;
    Result orrery(const QStringList &args, int timeoutMs = 180'000) { return m_user.run(args, timeoutMs); }

    // The project as a user has it: a git clone of the script with its config.
    QString project(const QString &name)
    {
        const QString dir = m_user.filePath(name);
        if (!copyTree(orrery::test::sourceFile(QStringLiteral("tests/data/mlflow_stage1")), dir))
            return {};
        QProcess git;
        git.setWorkingDirectory(dir);
        for (const QStringList &args :
             {QStringList{QStringLiteral("init"), QStringLiteral("-q")},
              QStringList{QStringLiteral("add"), QStringLiteral(".")},
              QStringList{QStringLiteral("-c"), QStringLiteral("user.email=t@example.org"),
                          QStringLiteral("-c"), QStringLiteral("user.name=t"), QStringLiteral("commit"),
                          QStringLiteral("-q"), QStringLiteral("-m"), QStringLiteral("stage 1")}}) {
            git.start(QStringLiteral("git"), args);
            if (!git.waitForFinished(30'000) || git.exitCode() != 0)
                return {};
        }
        return dir;
    }

    // A config-file sweep of the stage-1 script under `accelerate launch`: three learning rates,
    // two at once; after the submission the script on disk is broken (a later trial that ran it
    // would fail). Returns the sweep id.
    int stage1Sweep(const QString &dir, bool onCluster)
    {
        const QString spec = dir + QStringLiteral("/sweep.yaml");
        QFile f(spec);
        if (!f.open(QIODevice::WriteOnly))
            return 0;
        f.write("name: stage1-lr\n"
                "experiment: animate-stage1\n"
                "config_file: configs/train/stage1.yaml\n"
                "command: [" +
                orrery::test::yamlQuoted(orrery::test::sourceFile(QStringLiteral(".venv/bin/accelerate"))) +
                ", launch, --cpu, --num_processes, \"1\", --num_machines, \"1\", --mixed_precision, \"no\", "
                "--dynamo_backend, \"no\", train_stage_1.py, --config, \"{{config}}\"]\n" +
                (onCluster ? "workdir: " + orrery::test::yamlQuoted(dir) + "\n" : QByteArray()) +
                "method: grid\n"
                "metric: {name: train_loss, goal: minimize}\n"
                "parameters:\n"
                "  solver:\n"
                "    parameters:\n"
                "      learning_rate: {values: [1.0e-3, 3.0e-3, 1.0e-2]}\n"
                "max_concurrent: 2\n"
                "resources: {cpus_per_task: 1, time: \"00:10:00\"}\n");
        f.close();
        QString problem;
        const int sweep =
            m_user.submitSweep(spec, onCluster ? QStringLiteral("fixture") : QString(), &problem);
        if (sweep < 0) {
            QTest::qFail(qPrintable(problem), __FILE__, __LINE__);
            return 0;
        }
        // Edited during the sweep: trials started from here on must still run the code as submitted.
        QFile script(dir + QStringLiteral("/train_stage_1.py"));
        if (!script.open(QIODevice::WriteOnly | QIODevice::Truncate))
            return 0;
        script.write("raise SystemExit('edited after submission: a trial ran the new code')\n");
        script.close();
        const QString watched = m_user.watchSweep(sweep, 400'000);
        if (watched.startsWith(QLatin1String("(watch timed out)")))
            qWarning("%s", qPrintable(watched));
        return sweep;
    }

    void verifyStage1(int sweep)
    {
        auto store = TrackingStore::open(m_user.db(), TrackingStore::Mode::ReadOnly);
        const QList<Trial> trials = store->trials(sweep);
        QCOMPARE(trials.size(), 3);
        QSet<QString> dbs;
        for (const Trial &t : trials) {
            QVERIFY2(
                t.state == QStringLiteral("completed"),
                qPrintable(t.state + QLatin1Char(' ') + t.detail + QLatin1Char('\n') +
                           QString::fromUtf8(
                               readAll(QDir(t.runDir).filePath(QStringLiteral("stderr.log"))).right(3000))));
            // train_loss at the script's global steps, 1..30.
            const std::vector<MetricPoint> points = store->allPoints(t.runId, QStringLiteral("train_loss"));
            QCOMPARE(points.size(), std::size_t(30));
            QCOMPARE(points.front().step, 1);
            QCOMPARE(points.back().step, 30);
            // The validation GIFs, copied before the TemporaryDirectory went, at steps 10, 20, 30.
            QList<qint64> steps;
            for (const Artifact &a : store->samples(t.runId, QStringLiteral("video"))) {
                QVERIFY2(readAll(QDir(t.runDir).filePath(a.path)).startsWith("GIF8"), qPrintable(a.path));
                steps << a.step;
            }
            QCOMPARE(steps, (QList<qint64>{10, 20, 30}));
            // Its own directory: MLflow's database and the checkpoints, none in the project.
            const QString work = QDir(t.runDir).filePath(QStringLiteral("work"));
            QVERIFY(QFileInfo::exists(work + QStringLiteral("/mlflow.db")));
            QVERIFY(QFileInfo::exists(work + QStringLiteral("/exp_output/stage1/checkpoint-30")));
            dbs.insert(QFileInfo(work + QStringLiteral("/mlflow.db")).canonicalFilePath());
            // MLflow's own record of the run holds the same points Orrery stored.
            const MlflowStore own = readMlflowStore(work + QStringLiteral("/mlflow.db"));
            QCOMPARE(own.runs.size(), 1);
            QCOMPARE(own.runs[0].status, QStringLiteral("FINISHED"));
            QCOMPARE(qsizetype(own.runs[0].metrics.size()), qsizetype(points.size()));
            for (qsizetype i = 0; i < own.runs[0].metrics.size(); ++i) {
                QCOMPARE(own.runs[0].metrics[i].step, points[std::size_t(i)].step);
                QCOMPARE(float(own.runs[0].metrics[i].value), float(points[std::size_t(i)].value));
            }
            // The code it ran: the commit, recorded as MLflow records it.
            const RunDetails d = store->details(t.runId);
            QCOMPARE(d.tags.value(QStringLiteral("mlflow.source.git.commit")).size(), 40);
            // sweep.yaml, written after the commit, is untracked: the tree was not clean.
            QCOMPARE(d.tags.value(QStringLiteral("orrery.code.git_dirty")), QStringLiteral("true"));
        }
        QCOMPARE(dbs.size(), 3);
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_user.isValid());
        if (qEnvironmentVariableIsEmpty("ORRERY_CLI") || qEnvironmentVariableIsEmpty("ORRERY_SOURCE_DIR"))
            QFAIL("ORRERY_CLI and ORRERY_SOURCE_DIR must be set (CTest sets them)");
        QVERIFY2(
            python(QStringLiteral("import accelerate, mlflow, PIL, yaml; print('ok')"), {}, m_user.home())
                    .trimmed() == "ok",
            "the .venv lacks accelerate or mlflow: scripts/setup installs them");
    }

    void localStage1WithAccelerateAndMlflow()
    {
        const QString dir = project(QStringLiteral("animate-local"));
        QVERIFY(!dir.isEmpty());
        const int sweep = stage1Sweep(dir, false);
        QVERIFY(sweep > 0);
        verifyStage1(sweep);
        QVERIFY(!QFileInfo::exists(dir + QStringLiteral("/mlflow.db")));
        QVERIFY(!QFileInfo::exists(dir + QStringLiteral("/exp_output")));
    }

    // CTest runs this function alone as tst_sweep_mlflow.cluster, which holds the cluster fixture;
    // tst_sweep_mlflow runs the rest without it, beside other tests (CMake: CLUSTER_FUNCTIONS).
    void slurmStage1WithAccelerateAndMlflow()
    {
        ORRERY_SKIP_WITHOUT_CLUSTER(m_cluster);
        const QString root = m_cluster.value("ORRERY_TEST_JOBS_DIR") + QStringLiteral("/tst_sweep_mlflow-") +
            QUuid::createUuid().toString(QUuid::Id128);
        const Result add =
            orrery(orrery::test::fixtureClusterAdd(m_cluster, QStringLiteral("fixture"), root));
        QVERIFY2(add.code == 0, qPrintable(add.err));
        const QString dir = project(QStringLiteral("animate-slurm"));
        QVERIFY(!dir.isEmpty());
        const int sweep = stage1Sweep(dir, true);
        QVERIFY(sweep > 0);
        verifyStage1(sweep);
    }

    // An HF Trainer script with report_to mlflow (transformers' MLflowCallback on accelerate's
    // PartialState), two trials at once: its logging steps, its evaluation, its TrainingArguments as
    // params, each trial's checkpoints and mlflow.db its own; a set LOCAL_RANK would have made
    // PartialState initialise a process group.
    void localHfTrainerReportsToMlflow()
    {
        const QString dir = m_user.filePath(QStringLiteral("hf-project"));
        QVERIFY(QDir().mkpath(dir));
        QVERIFY(QFile::copy(orrery::test::sourceFile(QStringLiteral("tests/data/hf_trainer_mlflow.py")),
                            dir + QStringLiteral("/train.py")));
        QFile f(dir + QStringLiteral("/sweep.yaml"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("name: hf-lr\ncommand: [" + orrery::test::yamlQuoted(orrery::test::venvPython()) +
                ", train.py, --output_dir, out, --report_to, mlflow, --max_steps, \"10\", --logging_steps, "
                "\"2\", "
                "--save_steps, \"5\", --per_device_train_batch_size, \"4\", --use_cpu, \"true\", "
                "--learning_rate, "
                "\"{{lr}}\"]\n"
                "method: grid\nmetric: {name: eval_loss, goal: minimize}\n"
                "parameters:\n  lr: {values: [0.001, 0.003]}\nmax_concurrent: 2\n");
        f.close();
        const Result submit = orrery(
            {QStringLiteral("sweep"), QStringLiteral("submit"), f.fileName(), QStringLiteral("--watch")},
            400'000);
        QVERIFY2(submit.code == 0, qPrintable(submit.out.right(3000) + submit.err.right(3000)));
        auto store = TrackingStore::open(m_user.db(), TrackingStore::Mode::ReadOnly);
        const QList<Sweep> sweeps = store->sweeps();
        const QList<Trial> trials = store->trials(sweeps.back().id);
        QCOMPARE(trials.size(), 2);
        for (const Trial &t : trials) {
            QVERIFY2(t.state == QStringLiteral("completed"),
                     qPrintable(QString::fromUtf8(
                         readAll(QDir(t.runDir).filePath(QStringLiteral("stderr.log"))).right(3000))));
            QList<qint64> steps;
            for (const MetricPoint &p : store->allPoints(t.runId, QStringLiteral("loss")))
                steps << p.step;
            QCOMPARE(steps, (QList<qint64>{2, 4, 6, 8, 10}));
            QCOMPARE(store->allPoints(t.runId, QStringLiteral("eval_loss")).size(), std::size_t(1));
            QCOMPARE(store->allPoints(t.runId, QStringLiteral("eval_loss")).front().step, 10);
            const RunDetails d = store->details(t.runId);
            QCOMPARE(d.params.value(QStringLiteral("learning_rate")).toDouble(),
                     d.params.value(QStringLiteral("lr")).toDouble());
            QVERIFY(d.run.status == RunStatus::Finished);
            const QString work = QDir(t.runDir).filePath(QStringLiteral("work"));
            QVERIFY(QFileInfo::exists(work + QStringLiteral("/mlflow.db")));
            QVERIFY(QFileInfo::exists(work + QStringLiteral("/out/checkpoint-10")));
        }
        QVERIFY(!QFileInfo::exists(dir + QStringLiteral("/out")));
    }

    // The fluent calls beside the metrics (params, tags, text, a matplotlib figure, log_image with
    // a key and step, which MLflow writes from its own thread) and Lightning's MLFlowLogger (its own
    // MlflowClient, log_batch): tests/data/mlflow_calls.py, one trial each, at once.
    void localMlflowCallsAndLightningsLogger()
    {
        const QString dir = m_user.filePath(QStringLiteral("calls-project"));
        QVERIFY(QDir().mkpath(dir));
        QVERIFY(QFile::copy(orrery::test::sourceFile(QStringLiteral("tests/data/mlflow_calls.py")),
                            dir + QStringLiteral("/calls.py")));
        QFile f(dir + QStringLiteral("/sweep.yaml"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("name: calls\ncommand: [" + orrery::test::yamlQuoted(orrery::test::venvPython()) +
                ", calls.py, \"{{mode}}\"]\nmethod: grid\n"
                "parameters:\n  mode: {values: [fluent, lightning]}\nmax_concurrent: 2\n");
        f.close();
        const Result submit = orrery(
            {QStringLiteral("sweep"), QStringLiteral("submit"), f.fileName(), QStringLiteral("--watch")},
            300'000);
        QVERIFY2(submit.code == 0, qPrintable(submit.out.right(3000) + submit.err.right(3000)));
        auto store = TrackingStore::open(m_user.db(), TrackingStore::Mode::ReadOnly);
        const QList<Trial> trials = store->trials(store->sweeps().back().id);
        QCOMPARE(trials.size(), 2);
        const auto steps = [&](RunId run, const QString &key) {
            QList<qint64> out;
            for (const MetricPoint &p : store->allPoints(run, key))
                out << p.step;
            return out;
        };
        // fluent
        const RunDetails d = store->details(trials[0].runId);
        QCOMPARE(trials[0].state, QStringLiteral("completed"));
        QCOMPARE(steps(trials[0].runId, QStringLiteral("loss")), (QList<qint64>{0, 1, 2, 3, 4}));
        QCOMPARE(d.params.value(QStringLiteral("width")), QStringLiteral("64"));
        QCOMPARE(d.tags.value(QStringLiteral("team")), QStringLiteral("video"));
        QMap<QString, qint64> images;
        bool text = false;
        for (const Artifact &a : d.artifacts) {
            QVERIFY2(QFileInfo(QDir(trials[0].runDir).filePath(a.path)).size() > 0, qPrintable(a.path));
            if (a.kind == QStringLiteral("image"))
                images.insert(QFileInfo(a.path).fileName().section(QLatin1Char('+'), 0, 0), a.step);
            text = text || a.path == QStringLiteral("mlflow/notes/readme.txt");
        }
        QCOMPARE(images.value(QStringLiteral("sample")), 3);  // log_image(key=, step=3)
        QCOMPARE(images.value(QStringLiteral("curve.png")), 4);  // log_figure: the last step logged
        QCOMPARE(images.value(QStringLiteral("first.png")), 4);
        QVERIFY(text);
        // pred.png saved again after it was logged: each logged copy keeps what it was then.
        QVERIFY(readAll(QDir(trials[0].runDir).filePath(QStringLiteral("mlflow/epochs/pred.png")))
                    .endsWith("epoch 0"));
        QVERIFY(readAll(QDir(trials[0].runDir).filePath(QStringLiteral("mlflow/epochs/pred-1.png")))
                    .endsWith("epoch 1"));
        // Lightning's MLFlowLogger
        QCOMPARE(trials[1].state, QStringLiteral("completed"));
        QCOMPARE(steps(trials[1].runId, QStringLiteral("train_loss")), (QList<qint64>{0, 1, 2, 3}));
    }

    // `runs ingest` of MLflow's own stores: each point equal to MLflow's read-back.
    void ingestOfAnMlflowStoreEqualsMlflowsReadBack_data()
    {
        QTest::addColumn<QString>("uri");
        QTest::addColumn<QString>("ingested");
        QTest::newRow("sqlite (MLflow 3's default)")
            << QStringLiteral("sqlite:///mlflow.db") << QStringLiteral("mlflow.db");
        QTest::newRow("file store") << QStringLiteral("file:./mlruns") << QStringLiteral("mlruns");
    }
    void ingestOfAnMlflowStoreEqualsMlflowsReadBack()
    {
        QFETCH(QString, uri);
        QFETCH(QString, ingested);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        // Steps given and not, several values at one step, NaN and inf, two runs, a failed one.
        const QByteArray made = python(QStringLiteral(R"PY(
import math, sys, mlflow
mlflow.set_tracking_uri(sys.argv[1])
mlflow.set_experiment("ingest-me")
for lr, status in ((0.1, "FINISHED"), (0.01, "FAILED")):
    with mlflow.start_run(run_name=f"lr-{lr}") as run:
        mlflow.log_params({"lr": lr, "depth": 3})
        mlflow.set_tag("team", "video")
        for s in range(50):
            mlflow.log_metric("train/loss", 1.0 / (s + 1) * lr, step=s * 10)
        mlflow.log_metrics({"eval/psnr": 31.5, "odd": float("nan")}, step=490)
        mlflow.log_metric("big", float("inf"), step=3)
        mlflow.log_metric("nostep", 2.0)
        if status == "FAILED":
            mlflow.end_run(status)
print("ok")
)PY"),
                                       {uri}, dir.path());
        QCOMPARE(made.trimmed(), QByteArray("ok"));
        const QJsonObject readBack =
            QJsonDocument::fromJson(python(QString::fromLatin1(kReadBack), {uri}, dir.path())).object();
        QCOMPARE(readBack.size(), 2);
        const Result r = orrery({QStringLiteral("runs"), QStringLiteral("ingest"), dir.filePath(ingested)});
        QVERIFY2(r.code == 0, qPrintable(r.err + r.out));
        QVERIFY2(r.out.contains(QStringLiteral("2 MLflow runs (2 new)")), qPrintable(r.out));
        const Result again =
            orrery({QStringLiteral("runs"), QStringLiteral("ingest"), dir.filePath(ingested)});
        QVERIFY2(again.out.contains(QStringLiteral("2 MLflow runs (0 new)")), qPrintable(again.out));
        auto store = TrackingStore::open(m_user.db(), TrackingStore::Mode::ReadOnly);
        for (auto it = readBack.begin(); it != readBack.end(); ++it) {
            std::optional<RunId> run;
            for (const RunRow &row : store->queryRuns({}))
                if (store->details(row.run.id).tags.value(QStringLiteral("orrery.mlflow.run_id")) == it.key())
                    run = row.run.id;
            QVERIFY2(run, qPrintable(it.key()));
            const QJsonObject metrics = it.value().toObject();
            for (auto m = metrics.begin(); m != metrics.end(); ++m) {
                const std::vector<MetricPoint> got = store->allPoints(*run, m.key());
                const QJsonArray want = m.value().toArray();
                QCOMPARE(qsizetype(got.size()), want.size());  // one point per step in both here
                for (qsizetype i = 0; i < want.size(); ++i) {
                    const QJsonArray w = want[i].toArray();
                    QCOMPARE(got[std::size_t(i)].step, w[0].toInteger());
                    if (w[1].toString() == QStringLiteral("nan"))
                        QVERIFY(std::isnan(got[std::size_t(i)].value));
                    else if (w[1].isString())
                        QCOMPARE(got[std::size_t(i)].value, w[1].toString().toDouble());
                    else
                        QCOMPARE(got[std::size_t(i)].value, w[1].toDouble());
                    QCOMPARE(got[std::size_t(i)].timeMs, w[2].toInteger());
                }
            }
            const RunDetails d = store->details(*run);
            QCOMPARE(d.params.value(QStringLiteral("depth")), QStringLiteral("3"));
            QCOMPARE(d.tags.value(QStringLiteral("team")), QStringLiteral("video"));
        }
    }
};

ORRERY_TEST_MAIN(TestSweepMlflow, QCoreApplication)
#include "tst_sweep_mlflow.moc"
