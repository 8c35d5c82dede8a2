// SPDX-License-Identifier: GPL-3.0-or-later
// Sweeping a training command of the user's own (docs/sweeps.md "Any training command"): a real
// PyTorch script (tests/data/regress.py, run by the repo's .venv Python) swept over its learning
// rate through the real CLI, here and on the fixture's Slurm. Its metrics come from its standard
// output by regex (and on Slurm also from events.jsonl through the shipped Python logger, with a
// bare NaN as json.dumps writes it). Faults are real: one trial learns nothing and median early
// stopping stops it (SIGTERM: it checkpoints and exits 75), another is sent SIGTERM by the test as
// a preemption would and comes back resuming from its checkpoint. A parameter value that is shell
// syntax arrives as one argument and one environment value, and a regex that matches nothing is
// reported once per run.
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
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QThread>
#include <QUuid>

#include <cmath>
#include <csignal>
#include <optional>

using namespace orrery::core;

namespace {

const QByteArray kHostile = "a b'; $(touch pwned) `touch pwned` \"q\" $HOME *";

QString regressScript()
{
    return qEnvironmentVariable("ORRERY_SOURCE_DIR") + QStringLiteral("/tests/data/regress.py");
}
QString loggerDir()
{
    return qEnvironmentVariable("ORRERY_SOURCE_DIR") + QStringLiteral("/resources/python");
}

QByteArray readAll(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

QJsonObject given(const QString &runDir, int attempt)
{
    return QJsonDocument::fromJson(readAll(QStringLiteral("%1/given-%2.json").arg(runDir).arg(attempt)))
        .object();
}

// The hostile value arrived as one argument and one environment variable, and the script ran in
// `cwd`.
void verifyGiven(const QString &runDir, const QString &cwd)
{
    const QJsonObject g = given(runDir, 0);
    const QStringList argv = g.value(QStringLiteral("argv")).toVariant().toStringList();
    QCOMPARE(argv.value(argv.indexOf(QStringLiteral("--tag")) + 1).toUtf8(), kHostile);
    QCOMPARE(g.value(QStringLiteral("env"))
                 .toObject()
                 .value(QStringLiteral("ORRERY_PARAM_TAG"))
                 .toString()
                 .toUtf8(),
             kHostile);
    QCOMPARE(g.value(QStringLiteral("cwd")).toString(), cwd);
}

// The losses the script printed, by step (its last attempt's line for a step wins).
QMap<qint64, double> printedLosses(const QByteArray &out)
{
    QMap<qint64, double> losses;
    static const QRegularExpression re(QStringLiteral("^step=(\\d+) loss=(\\S+)$"));
    for (const QByteArray &line : out.split('\n')) {
        const auto m = re.match(QString::fromUtf8(line));
        if (m.hasMatch())
            losses.insert(m.captured(1).toLongLong(), m.captured(2).toDouble());
    }
    return losses;
}

}  // namespace

class TestSweepCommand : public QObject {
    Q_OBJECT

    orrery::test::TestCluster m_cluster;
    orrery::test::CliUser m_user;
    using Result = orrery::test::CliUser::Result;
    Result orrery(const QStringList &args, int timeoutMs = 120'000) { return m_user.run(args, timeoutMs); }

    QString writeSpec(const QString &name, const QByteArray &yaml) { return m_user.writeFile(name, yaml); }

    // Follows the sweep to its end (CliUser::watchSweep); `during` every 100 ms.
    QString watchToTheEnd(int sweep, const std::function<void()> &during = {})
    {
        return m_user.watchSweep(sweep, 240'000, during);
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

    void localSweepStopsEarlyResumesAndParsesTheOutput()
    {
        // The script sits beside the spec, named relatively, as a user's train.py does: the
        // command runs in the spec's directory.
        QVERIFY(QFile::copy(regressScript(), m_user.filePath(QStringLiteral("regress.py"))));
        const QString spec = writeSpec(
            QStringLiteral("local.yaml"),
            "name: \"cmd 'q' $(touch pwned)\"\n"
            "experiment: command-local\n"
            "command: [" +
                orrery::test::yamlQuoted(orrery::test::venvPython()) +
                ", regress.py, --lr, \"{{lr}}\", --out, \"{{run_dir}}\", --tag, \"{{tag}}\", --steps, "
                "\"120\", "
                "--step-seconds, \"0.05\"]\n"
                "method: grid\n"
                "metric: {name: train/loss, goal: minimize}\n"
                "metrics:\n"
                "  - {name: train/loss, regex: 'loss=([-+.0-9eE]+|nan|inf)', step_regex: 'step=(\\d+)'}\n"
                "  - {name: train/acc, regex: 'acc=([0-9.]+)'}\n"
                "early_terminate: {type: median, min_step: 20, min_trials: 1}\n"
                "parameters:\n"
                "  lr: {values: [0.2, 0.0]}\n"
                "  seed: {values: [1, 2]}\n"
                "  tag: {value: " +
                orrery::test::yamlQuoted(QString::fromUtf8(kHostile)) +
                "}\n"
                "max_concurrent: 2\n"
                "retries: 0\n");

        // The plan shows each trial's command, the hostile value quoted as one word.
        const Result plan = orrery({QStringLiteral("sweep"), QStringLiteral("plan"), spec});
        QVERIFY2(plan.code == 0, qPrintable(plan.err));
        QVERIFY2(plan.out.contains(QStringLiteral("3: %1 regress.py --lr 0 --out '<sweep dir>/3' --tag ")
                                       .arg(orrery::test::venvPython())),
                 qPrintable(plan.out));
        QVERIFY2(plan.out.contains(QStringLiteral("'a b'\\''; $(touch pwned)")), qPrintable(plan.out));

        const Result submit =
            orrery({QStringLiteral("sweep"), QStringLiteral("submit"), spec, QStringLiteral("--json")});
        QVERIFY2(submit.code == 0, qPrintable(submit.err));
        const int sweep =
            QJsonDocument::fromJson(submit.out.toUtf8()).object().value(QStringLiteral("id")).toInt();
        QVERIFY(sweep > 0);

        // The script is deterministic, so trials 0 and 1 (lr 0.2) learn alike and trials 2 and 3
        // (lr 0) not at all: each bad one, started when a slot frees, is behind a good one that
        // shows it worse than the median. Trial 1 is sent SIGTERM past its first checkpoint, as a
        // preemption does.
        QString runDir1;
        bool preempted = false;
        std::optional<RunStatus> runWhileRunning;  // trial 1's run, once the tree says running
        const QString out = watchToTheEnd(sweep, [&] {
            if (preempted)
                return;
            if (runDir1.isEmpty() || !runWhileRunning) {
                auto store = TrackingStore::open(m_user.db(), TrackingStore::Mode::ReadOnly);
                for (const Trial &t : store->trials(sweep))
                    if (t.index == 1 && t.attempt == 0) {
                        runDir1 = t.runDir;
                        if (t.trialState() == TrialState::Running && !runWhileRunning)
                            if (const auto run = store->run(t.runId))
                                runWhileRunning = run->status;
                    }
                if (runDir1.isEmpty() || !runWhileRunning)
                    return;
            }
            const QMap<qint64, double> printed =
                printedLosses(readAll(runDir1 + QStringLiteral("/stdout.log")));
            if (printed.isEmpty() || printed.lastKey() < 12)
                return;
            for (const qint64 pid : orrery::test::pidsWithCommandLine(
                     orrery::test::venvPython(), QByteArray("--out") + '\0' + runDir1.toUtf8() + '\0'))
                preempted = ::kill(pid_t(pid), SIGTERM) == 0 || preempted;
        });
        QVERIFY2(preempted, qPrintable(out));
        // A command's run is RUNNING in the Runs table while its trial runs (it printed metrics
        // Orrery parses, but never an event that says so): it stayed SCHEDULED.
        QVERIFY(runWhileRunning);
        QCOMPARE(orrery::core::toString(*runWhileRunning), QStringLiteral("RUNNING"));
        QVERIFY2(!out.contains(QStringLiteral("timed out")), qPrintable(out));

        auto store = TrackingStore::open(m_user.db(), TrackingStore::Mode::ReadOnly);
        const auto sw = store->sweep(sweep);
        QVERIFY(sw);
        QCOMPARE(sw->state, QStringLiteral("finished"));
        QMap<int, QList<Trial>> attempts;
        for (const Trial &t : store->trials(sweep))
            attempts[t.index] << t;
        QCOMPARE(attempts.size(), 4);
        QCOMPARE(attempts[0].size(), 1);
        QCOMPARE(attempts[0].back().state, QStringLiteral("completed"));
        // Preempted by the test (exit 75, no exit.json: the exit status says so), then resumed.
        QCOMPARE(attempts[1].size(), 2);
        QCOMPARE(attempts[1].front().state, QStringLiteral("preempted"));
        QCOMPARE(attempts[1].back().state, QStringLiteral("completed"));
        QCOMPARE(given(attempts[1].back().runDir, 1)
                     .value(QStringLiteral("env"))
                     .toObject()
                     .value(QStringLiteral("ORRERY_RESUME")),
                 QJsonValue(QStringLiteral("1")));
        QVERIFY(
            readAll(attempts[1].back().runDir + QStringLiteral("/stdout.log")).contains("resumed at step"));
        // lr 0 learns nothing: median early stopping stopped both.
        for (const int bad : {2, 3}) {
            QVERIFY2(attempts[bad].back().state == QStringLiteral("stopped"), qPrintable(out.right(1500)));
            QVERIFY2(attempts[bad].back().exitReason.contains(QStringLiteral("median")),
                     qPrintable(attempts[bad].back().exitReason));
        }

        for (const auto &trialAttempts : attempts) {
            const Trial &t = trialAttempts.back();
            // The stored series is what the script printed, step for step.
            const QMap<qint64, double> printed =
                printedLosses(readAll(t.runDir + QStringLiteral("/stdout.log")));
            const std::vector<MetricPoint> stored = store->allPoints(t.runId, QStringLiteral("train/loss"));
            QCOMPARE(qsizetype(stored.size()), printed.size());
            for (const MetricPoint &p : stored)
                QCOMPARE(p.value, printed.value(p.step, std::nan("")));
            // The hostile value arrived as one argument and one variable; it ran in its own
            // directory, made from the spec's (docs/sweeps.md "Each trial in its own directory").
            verifyGiven(t.runDir,
                        QFileInfo(QDir(t.runDir).filePath(QStringLiteral("work"))).canonicalFilePath());
            if (QTest::currentTestFailed())
                return;
            // The params are the run's, as the spec typed them.
            const RunDetails details = store->details(t.runId);
            QCOMPARE(details.params.value(QStringLiteral("tag")).toUtf8(), kHostile);
            // A regex that matched nothing: said once per run, as a tag and one line of the watcher.
            QVERIFY2(details.tags.value(QStringLiteral("orrery.warning.metrics"))
                         .contains(QStringLiteral("train/acc")),
                     qPrintable(details.tags.value(QStringLiteral("orrery.warning.metrics"))));
        }
        QCOMPARE(out.count(QStringLiteral("no line of the output matched train/acc")), 4);
        QVERIFY(!QFile::exists(m_user.filePath(QStringLiteral("pwned"))));
    }

    void slurmSweepReadsOutputAndEvents()
    {
        const QString root = m_cluster.value("ORRERY_TEST_JOBS_DIR") + QStringLiteral("/tst_sweep_command-") +
            QUuid::createUuid().toString(QUuid::Id128) + QStringLiteral("/root 'q' $(touch pwned)");
        const Result add =
            orrery(orrery::test::fixtureClusterAdd(m_cluster, QStringLiteral("fixture"), root));
        QVERIFY2(add.code == 0, qPrintable(add.err));
        // `env` sets the logger's path without a shell; the workdir is absolute (a cluster has no
        // spec directory).
        const QString spec = writeSpec(
            QStringLiteral("slurm.yaml"),
            "name: \"slurm cmd $(touch pwned)\"\n"
            "experiment: command-slurm\n"
            "command: [env, " +
                orrery::test::yamlQuoted(QStringLiteral("PYTHONPATH=") + loggerDir()) + ", " +
                orrery::test::yamlQuoted(orrery::test::venvPython()) + ", " +
                orrery::test::yamlQuoted(regressScript()) +
                ", --lr, \"{{lr}}\", --out, \"{{run_dir}}\", --tag, \"{{tag}}\", --steps, \"25\", "
                "--step-seconds, \"0.02\", --events]\n"
                "workdir: " +
                orrery::test::yamlQuoted(QDir::tempPath()) +
                "\n"
                "# /tmp is only somewhere to start (the script and its outputs are absolute paths):\n"
                "code: {snapshot: false}\n"
                "method: grid\n"
                "metric: {name: train/loss, goal: minimize}\n"
                "metrics:\n"
                "  - {name: train/loss, regex: 'loss=([-+.0-9eE]+)', step_regex: 'step=(\\d+)'}\n"
                "parameters:\n"
                "  lr: {values: [0.3, 0.1]}\n"
                "  tag: {value: " +
                orrery::test::yamlQuoted(QString::fromUtf8(kHostile)) +
                "}\n"
                "resources: {cpus_per_task: 1, gpus_per_node: 2, time: \"00:10:00\"}\n"
                "max_concurrent: 2\n");
        const Result submit =
            orrery({QStringLiteral("sweep"), QStringLiteral("submit"), spec, QStringLiteral("--cluster"),
                    QStringLiteral("fixture"), QStringLiteral("--json")});
        QVERIFY2(submit.code == 0, qPrintable(submit.err + submit.out));
        const int sweep =
            QJsonDocument::fromJson(submit.out.toUtf8()).object().value(QStringLiteral("id")).toInt();
        const QString out = watchToTheEnd(sweep);

        auto store = TrackingStore::open(m_user.db(), TrackingStore::Mode::ReadOnly);
        QCOMPARE(store->sweep(sweep)->state, QStringLiteral("finished"));
        const QList<Trial> trials = store->trials(sweep);
        QCOMPARE(trials.size(), 2);
        for (const Trial &t : trials) {
            QVERIFY2(t.state == QStringLiteral("completed"),
                     qPrintable(t.state + QLatin1Char(' ') + t.exitReason + out));
            // From the output by regex, and from events.jsonl through the Python logger.
            const std::vector<MetricPoint> loss = store->allPoints(t.runId, QStringLiteral("train/loss"));
            const std::vector<MetricPoint> events = store->allPoints(t.runId, QStringLiteral("events/loss"));
            QCOMPARE(loss.size(), std::size_t(25));
            QCOMPARE(events.size(), std::size_t(25));
            QCOMPARE(loss.back().step, qint64(24));
            QVERIFY(std::abs(loss.back().value - events.back().value) < 1e-6);  // printed with 6 decimals
            // json.dumps' bare NaN and Infinity, read as numbers.
            QVERIFY(std::isnan(store->allPoints(t.runId, QStringLiteral("probe/nan")).at(0).value));
            QVERIFY(std::isinf(store->allPoints(t.runId, QStringLiteral("probe/inf")).at(0).value));
            verifyGiven(t.runDir, QDir::tempPath());
            if (QTest::currentTestFailed())
                return;
            // Goodput from the logger's phase timings: training and the checkpoints it marked, the
            // parts adding up to the wall time.
            const Result goodput = orrery({QStringLiteral("runs"), QStringLiteral("goodput"),
                                           QString::number(t.runId), QStringLiteral("--json")});
            QVERIFY2(goodput.code == 0, qPrintable(goodput.err));
            const QJsonObject g = QJsonDocument::fromJson(goodput.out.toUtf8()).object();
            QVERIFY2(g.value(QStringLiteral("training_s")).toDouble() > 0, qPrintable(goodput.out));
            QVERIFY2(g.value(QStringLiteral("checkpoint_s")).toDouble() > 0, qPrintable(goodput.out));
            double parts = 0;
            for (const char *key : {"queue_s", "startup_s", "training_s", "checkpoint_s", "eval_s",
                                    "sample_s", "lost_s", "rest_s"})
                parts += g.value(QLatin1String(key)).toDouble();
            const double wall = g.value(QStringLiteral("wall_s")).toDouble();
            QVERIFY2(wall > 0 && std::abs(parts - wall) <= 0.01 * wall, qPrintable(goodput.out));
        }
        QVERIFY(!QFile::exists(QDir::temp().filePath(QStringLiteral("pwned"))));

        // GPU-hours count what Slurm allocated: each attempt held 2 (fake) GPUs and 2 CPUs (a task
        // per GPU) for as long as it ran; the sweep's usage is the sum over them.
        double elapsedHours = 0;
        for (const Trial &t : trials) {
            QCOMPARE(t.gpus, 2);
            QCOMPARE(t.cpus, 2);
            QVERIFY2(t.startedMs > 0 && t.endedMs > t.startedMs, qPrintable(t.task));
            elapsedHours += double(t.endedMs - t.startedMs) / 3.6e6;
        }
        const Result status = orrery({QStringLiteral("sweep"), QStringLiteral("status"),
                                      QString::number(sweep), QStringLiteral("--json")});
        QVERIFY2(status.code == 0, qPrintable(status.err));
        const QJsonObject usage =
            QJsonDocument::fromJson(status.out.toUtf8()).object().value(QStringLiteral("usage")).toObject();
        QVERIFY2(std::abs(usage.value(QStringLiteral("gpu_hours")).toDouble() - 2 * elapsedHours) < 1e-6,
                 qPrintable(status.out));
        QVERIFY(std::abs(usage.value(QStringLiteral("cpu_hours")).toDouble() - 2 * elapsedHours) < 1e-6);
        QCOMPARE(usage.value(QStringLiteral("attempts")).toInt(), 2);
    }
};

ORRERY_TEST_MAIN(TestSweepCommand, QCoreApplication)
#include "tst_sweep_command.moc"
