// SPDX-License-Identifier: GPL-3.0-or-later
// `orrery sweep plan` as a user runs it: the real CLI and the real trainer's schema, exit codes,
// file:line errors on stderr, the trials as a table and as JSON, and with --cluster the rendered
// sbatch script of a real cluster profile, checked by bash -n.
#include "testsupport.h"

#include "orrery/core/store.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>

namespace {

struct Result {
    int code = -1;
    QByteArray out, err;
};

}  // namespace

class TestCliSweep : public QObject {
    Q_OBJECT
    QTemporaryDir m_home;

    Result run(const QStringList &args)
    {
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("HOME"), m_home.path());
        env.insert(QStringLiteral("XDG_CONFIG_HOME"), m_home.filePath(QStringLiteral("config")));
        p.setProcessEnvironment(env);
        p.start(qEnvironmentVariable("ORRERY_CLI"), args);
        p.waitForFinished(60'000);
        return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(),
                p.readAllStandardError()};
    }

    QString write(const char *name, const QByteArray &text)
    {
        const QString path = m_home.filePath(QString::fromLatin1(name));
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly))
            qFatal("cannot write %s", qPrintable(path));
        f.write(text);
        return path;
    }

    static QString example(const char *name)
    {
        return orrery::test::sourceFile(QStringLiteral("resources/sweeps/") + QLatin1String(name));
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(!qEnvironmentVariable("ORRERY_CLI").isEmpty(), "ORRERY_CLI (the orrery binary) is not set");
        QVERIFY(m_home.isValid());
    }

    // On a machine without orrery-train (the CLI copied alone, no ORRERY_TRAINER, nothing on
    // PATH): a sweep of the user's own command runs to the end on this machine; the bundled
    // trainer's sweep is refused before anything is recorded, saying what is missing (an installed
    // package, which ships the trainer's keys, is refused at submit: tests/package/deb_test.sh).
    void aCommandSweepNeedsNoTrainerHere()
    {
        QTemporaryDir bin, home;
        const QString cli = bin.filePath(QStringLiteral("orrery"));
        QVERIFY(QFile::copy(qEnvironmentVariable("ORRERY_CLI"), cli));
        QVERIFY(QFile::setPermissions(cli, QFile::permissions(cli) | QFile::ExeOwner));
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.remove(QStringLiteral("ORRERY_TRAINER"));
        env.remove(QStringLiteral("ORRERY_CLI"));
        env.insert(QStringLiteral("PATH"), QStringLiteral("/usr/bin:/bin"));
        env.insert(QStringLiteral("HOME"), home.path());
        env.insert(QStringLiteral("XDG_CONFIG_HOME"), home.filePath(QStringLiteral("config")));
        env.insert(QStringLiteral("XDG_DATA_HOME"), home.filePath(QStringLiteral("data")));
        const QString db = home.filePath(QStringLiteral("orrery.sqlite"));
        auto orrery = [&](const QStringList &args) {
            return orrery::test::runProcess(cli, QStringList{QStringLiteral("--db"), db} + args, {}, env,
                                            120'000);
        };
        const QString spec = write("own.yaml",
                                   "name: own\nexperiment: own\nmethod: grid\n"
                                   "command: [sh, -c, 'echo loss=$0', '{{x}}']\n"
                                   "metric: {name: loss, goal: minimize}\n"
                                   "metrics:\n  - {name: loss, regex: 'loss=([0-9.]+)'}\n"
                                   "parameters:\n  x: {values: [1, 2]}\n");
        // Submitted and watched to its end: empty, or what went wrong.
        auto watchedProblem = [&](const QString &specPath) -> QString {
            const auto r = orrery(
                {QStringLiteral("sweep"), QStringLiteral("submit"), specPath, QStringLiteral("--watch")});
            const bool done =
                r.out.contains(QStringLiteral("2 completed")) || r.out.contains(QStringLiteral("2/2"));
            return r.code == 0 && done ? QString() : r.err + r.out;
        };
        QString problem = watchedProblem(spec);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        // Launched again (the window's "Launch again"): a new sweep of the spec as it was
        // submitted, even with the file changed since; followed to its end too.
        write("own.yaml",
              "name: own\nmethod: grid\ncommand: [sh, -c, 'exit 3']\nparameters:\n  x: {values: [9]}\n");
        const auto again = orrery({QStringLiteral("sweep"), QStringLiteral("relaunch"), QStringLiteral("own"),
                                   QStringLiteral("--watch")});
        QVERIFY2(again.code == 0 && again.out.contains(QStringLiteral("2 trial(s) submitted")),
                 qPrintable(again.err + again.out));
        const auto list = orrery({QStringLiteral("sweep"), QStringLiteral("list")});
        QCOMPARE(list.out.count(QStringLiteral("own")), 2);
        const auto missing =
            orrery({QStringLiteral("sweep"), QStringLiteral("relaunch"), QStringLiteral("nope")});
        QCOMPARE(missing.code, 1);  // as `sweep status` of no such sweep
        QVERIFY2(missing.err.contains(QStringLiteral("no sweep 'nope'")), qPrintable(missing.err));
        // A W&B sweep file with a `program` and no `command` (W&B's default command runs it with
        // `python`, here a stand-in for python3 on PATH): followed to its end as well.
        QTemporaryDir tools;
        const QString python = tools.filePath(QStringLiteral("python"));
        QFile wrapper(python);
        QVERIFY(wrapper.open(QIODevice::WriteOnly));
        // Debian's (scripts/setup installs it), on the PATH the CLI gets here.
        const QString python3 = QStandardPaths::findExecutable(
            QStringLiteral("python3"), {QStringLiteral("/usr/bin"), QStringLiteral("/bin")});
        QVERIFY2(!python3.isEmpty(), "no python3 in /usr/bin or /bin");
        wrapper.write("#!/bin/sh\nexec '" + python3.toUtf8() + "' \"$@\"\n");
        wrapper.close();
        QVERIFY(QFile::setPermissions(python, QFile::permissions(python) | QFile::ExeOwner));
        env.insert(QStringLiteral("PATH"), tools.path() + QStringLiteral(":/usr/bin:/bin"));
        write("own.py",
              "import sys\nx = [a.split('=', 1)[1] for a in sys.argv[1:] if a.startswith('--x=')][0]\n"
              "print(f'loss={x}')\n");
        const QString wandb = write("wandb-program.yaml",
                                    "program: own.py\nname: wandb-program\nmethod: grid\n"
                                    "metric: {name: loss, goal: minimize}\n"
                                    "metrics:\n  - {name: loss, regex: 'loss=([0-9.]+)'}\n"
                                    "parameters:\n  x: {values: [3, 4]}\n");
        problem = watchedProblem(wandb);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        const auto bundled =
            orrery({QStringLiteral("sweep"), QStringLiteral("submit"), example("tiny-lr.yaml")});
        QCOMPARE(bundled.code, 1);
        QVERIFY2(bundled.err.contains(QStringLiteral("orrery-train was not found")), qPrintable(bundled.err));
        QVERIFY(!orrery({QStringLiteral("sweep"), QStringLiteral("list")})
                     .out.contains(QStringLiteral("tiny-lr")));
    }

    void gridPlanIsATable()
    {
        const Result r = run({QStringLiteral("sweep"), QStringLiteral("plan"), example("tiny-lr.yaml")});
        QVERIFY2(r.code == 0, r.err.constData());
        const QString out = QString::fromUtf8(r.out);
        QVERIFY(out.contains(QStringLiteral("method grid, 6 of 6 combinations")));
        QVERIFY(out.contains(QStringLiteral("trial  optim.lr  model.temporal_layers\n")));
        QVERIFY(out.contains(QStringLiteral("\n5      0.001     2\n")));
    }

    void planAsJson()
    {
        const Result r = run({QStringLiteral("sweep"), QStringLiteral("plan"), example("gpu-bayes.yaml"),
                              QStringLiteral("--json")});
        QVERIFY2(r.code == 0, r.err.constData());
        const QJsonObject o = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(o.value(QLatin1String("method")).toString(), QStringLiteral("bayes"));
        const QJsonArray trials = o.value(QLatin1String("trials")).toArray();
        QCOMPARE(trials.size(), 4);  // max_concurrent
        for (const QJsonValue &t : trials) {
            const QJsonObject p = t.toObject().value(QLatin1String("params")).toObject();
            const double lr = p.value(QLatin1String("optim.lr")).toDouble();
            QVERIFY(lr >= 1e-5 && lr <= 3e-3);
            QCOMPARE(p.value(QLatin1String("train.batch_size")).toInt() % 8, 0);
            QCOMPARE(p.value(QLatin1String("train.precision")).toString(), QStringLiteral("bf16"));
        }
        // Reproducible: the same file gives the same trials.
        QCOMPARE(run({QStringLiteral("sweep"), QStringLiteral("plan"), example("gpu-bayes.yaml"),
                      QStringLiteral("--json")})
                     .out,
                 r.out);
    }

    void specErrorsNameFileAndLineAndExit2()
    {
        const QString spec = write("bad.yaml", "method: grid\nparameters:\n  optim.lrr: {values: [1e-4]}\n");
        const Result r = run({QStringLiteral("sweep"), QStringLiteral("plan"), spec});
        QCOMPARE(r.code, 2);
        QVERIFY(r.out.isEmpty());
        QCOMPARE(
            QString::fromUtf8(r.err),
            spec +
                QStringLiteral(":3: unknown trainer key 'optim.lrr' (did you mean 'optim.lr'?); "
                               "`orrery-train --print-schema` lists them all (a sweep of your own script "
                               "names it: `program: train.py`)\n"));
    }

    // Each key is valid alone; the trainer's cross-key rule (channels a multiple of 8) refuses one trial.
    void trainerRefusesAResolvedConfig()
    {
        ORRERY_SKIP_WITHOUT_TRAINER();
        const QString spec =
            write("cross.yaml", "method: grid\nparameters:\n  model.channels: {values: [16, 12]}\n");
        const Result r = run({QStringLiteral("sweep"), QStringLiteral("plan"), spec});
        QCOMPARE(r.code, 2);
        QCOMPARE(QString::fromUtf8(r.err),
                 spec +
                     QStringLiteral(":3: trial 1: the trainer refuses its config: model.channels must be a "
                                    "multiple of 8 (GroupNorm groups)\n"));
    }

    void usageErrors()
    {
        QCOMPARE(run({QStringLiteral("sweep")}).code, 2);
        QCOMPARE(run({QStringLiteral("sweep"), QStringLiteral("plan")}).code, 2);
        QCOMPARE(run({QStringLiteral("sweep"), QStringLiteral("plan"), example("tiny-lr.yaml"),
                      QStringLiteral("--nope")})
                     .code,
                 2);
        QCOMPARE(run({QStringLiteral("sweep"), QStringLiteral("plan"),
                      m_home.filePath(QStringLiteral("missing.yaml"))})
                     .code,
                 2);
        const Result r = run({QStringLiteral("sweep"), QStringLiteral("plan"), example("tiny-lr.yaml"),
                              QStringLiteral("--cluster"), QStringLiteral("nosuch")});
        QCOMPARE(r.code, 1);
        QVERIFY(r.err.contains("no cluster profile 'nosuch'"));
    }

    // The following verbs: a sweep that does not exist, a bad spec that submits nothing, usage.
    void followVerbsErrors()
    {
        const QString db = m_home.filePath(QStringLiteral("verbs.sqlite"));
        const auto cli = [&](QStringList args) {
            return run(QStringList{QStringLiteral("--db"), db} + args);
        };
        const Result status =
            cli({QStringLiteral("sweep"), QStringLiteral("status"), QStringLiteral("nosuch")});
        QCOMPARE(status.code, 1);
        QVERIFY(status.err.contains("no sweep 'nosuch'"));
        QCOMPARE(cli({QStringLiteral("sweep"), QStringLiteral("status")}).code, 2);
        QCOMPARE(cli({QStringLiteral("sweep"), QStringLiteral("logs"), QStringLiteral("s")}).code, 2);
        QCOMPARE(
            cli({QStringLiteral("sweep"), QStringLiteral("logs"), QStringLiteral("s"), QStringLiteral("x")})
                .code,
            2);
        QCOMPARE(cli({QStringLiteral("sweep"), QStringLiteral("watch"), QStringLiteral("s"),
                      QStringLiteral("--nope")})
                     .code,
                 2);
        QCOMPARE(cli({QStringLiteral("sweep"), QStringLiteral("frobnicate")}).code, 2);

        const QString bad =
            write("bad-submit.yaml", "method: grid\nparameters:\n  optim.lrr: {values: [1e-4]}\n");
        const Result submit = cli({QStringLiteral("sweep"), QStringLiteral("submit"), bad});
        QCOMPARE(submit.code, 2);
        QVERIFY(submit.err.contains(":3: unknown trainer key 'optim.lrr'"));
        const Result list = cli({QStringLiteral("sweep"), QStringLiteral("list"), QStringLiteral("--json")});
        QCOMPARE(list.code, 0);
        QCOMPARE(QJsonDocument::fromJson(list.out).array().size(), 0);  // nothing was submitted

        // A dry run prints the local command lines and submits nothing either.
        const Result dry = cli({QStringLiteral("sweep"), QStringLiteral("submit"), example("tiny-lr.yaml"),
                                QStringLiteral("--dry-run")});
        QCOMPARE(dry.code, 0);
        QCOMPARE(dry.out.count("--config "), 6);
        QCOMPARE(QJsonDocument::fromJson(
                     cli({QStringLiteral("sweep"), QStringLiteral("list"), QStringLiteral("--json")}).out)
                     .array()
                     .size(),
                 0);
    }

    // A hostile sweep name and setup line in a real profile: the script is valid bash, the name
    // is quoted on its #SBATCH line.
    void clusterPlanRendersTheSbatchScript()
    {
        const Result add = run({QStringLiteral("cluster"), QStringLiteral("add"), QStringLiteral("hpc"),
                                QStringLiteral("--host"), QStringLiteral("login.example.org"),
                                QStringLiteral("--remote-root"), QStringLiteral("/scratch/ada/orrery runs"),
                                QStringLiteral("--partition"), QStringLiteral("booster"),
                                QStringLiteral("--setup"), QStringLiteral("module load CUDA")});
        QVERIFY2(add.code == 0, add.err.constData());
        const QString spec = write("hostile.yaml",
                                   "name: \"it's $(touch pwned) `id`\"\nmethod: grid\nparameters:\n"
                                   "  optim.lr: {values: [1e-4, 1e-3]}\nmax_concurrent: 1\n"
                                   "resources: {gpus_per_node: 2, time: \"01:00:00\"}\n");
        const Result r = run({QStringLiteral("sweep"), QStringLiteral("plan"), spec,
                              QStringLiteral("--cluster"), QStringLiteral("hpc")});
        QVERIFY2(r.code == 0, r.err.constData());
        const qsizetype at = r.out.indexOf("#!/bin/bash\n");
        QVERIFY(at > 0);
        const QByteArray script = r.out.mid(at);
        QVERIFY(script.contains("#SBATCH --job-name='it'\\''s $(touch pwned) `id`'\n"));
        QVERIFY(script.contains("#SBATCH --array=0-1%1\n"));
        QVERIFY(script.contains("#SBATCH --gres=gpu:2\n"));
        QVERIFY(script.contains("#SBATCH --partition='booster'\n"));
        QVERIFY(script.contains("module load CUDA\n"));
        QVERIFY(script.contains("'/scratch/ada/orrery runs/Default/<sweep-id>/1'"));
        const QString path = write("plan.sbatch", script);
        QProcess bash;
        bash.start(QStringLiteral("/bin/bash"), {QStringLiteral("-n"), path});
        QVERIFY(bash.waitForFinished(30'000));
        QCOMPARE(bash.exitCode(), 0);

        // A cluster's own template wins.
        QVERIFY(QDir().mkpath(m_home.filePath(QStringLiteral("config/orrery/clusters"))));
        write("config/orrery/clusters/hpc.sbatch",
              "#!/bin/bash\n#SBATCH --qos=big\nd=({{trial_dirs}})\n{{trainer}}\n");
        const Result o = run({QStringLiteral("sweep"), QStringLiteral("plan"), spec,
                              QStringLiteral("--cluster"), QStringLiteral("hpc")});
        QVERIFY2(o.code == 0, o.err.constData());
        QVERIFY(o.out.contains("#SBATCH --qos=big\n"));
    }

    // GPU-hours and cost (docs/sweeps.md): the worst case `submit --dry-run` prints before it
    // connects to anything, and the usage `sweep list|status` and `runs show|list --json` show for
    // attempts with known spans, priced by the cluster profile.
    void gpuHoursAndCost()
    {
        const Result add =
            run({QStringLiteral("cluster"), QStringLiteral("add"), QStringLiteral("priced"),
                 QStringLiteral("--host"), QStringLiteral("login.invalid"), QStringLiteral("--remote-root"),
                 QStringLiteral("/scratch/x"), QStringLiteral("--gpu-hour-price"), QStringLiteral("2.5"),
                 QStringLiteral("--currency"), QStringLiteral("EUR")});
        QVERIFY2(add.code == 0, add.err.constData());
        for (const QStringList &bad : {QStringList{QStringLiteral("--gpu-hour-price"), QStringLiteral("-1")},
                                       QStringList{QStringLiteral("--gpu-hour-price"), QStringLiteral("nan")},
                                       QStringList{QStringLiteral("--gpu-hour-price"), QStringLiteral("1"),
                                                   QStringLiteral("--currency"), QStringLiteral("E U R")},
                                       QStringList{QStringLiteral("--currency"), QStringLiteral("EUR")}}) {
            const Result r =
                run(QStringList{QStringLiteral("cluster"), QStringLiteral("add"), QStringLiteral("x"),
                                QStringLiteral("--host"), QStringLiteral("h")} +
                    bad);
            QCOMPARE(r.code, 2);
            QVERIFY2(r.err.contains("--gpu-hour-price") || r.err.contains("--currency"), r.err.constData());
        }

        const QString spec =
            write("budget.yaml",
                  "name: budget\nmethod: grid\nparameters:\n  optim.lr: {values: [1e-4, 1e-3, 1e-2]}\n"
                  "resources: {nodes: 2, gpus_per_node: 4, time: \"02:00:00\"}\n"
                  "budget: {gpu_hours: 40}\n");
        const QString db = m_home.filePath(QStringLiteral("usage.sqlite"));
        Result r = run({QStringLiteral("--db"), db, QStringLiteral("sweep"), QStringLiteral("submit"), spec,
                        QStringLiteral("--cluster"), QStringLiteral("priced"), QStringLiteral("--dry-run")});
        // A dry run connects to nothing (login.invalid does not resolve): the cluster's script
        // comes from its profile alone.
        QVERIFY2(r.code == 0, r.err.constData());
        QVERIFY2(r.out.contains("#SBATCH"), r.out.constData());
        QVERIFY2(r.out.contains("worst case: 3 trials × 2h00m × 8 GPUs = 48 GPU-hours (120.00 EUR at 2.50 "
                                "EUR/GPU-hour)\n"),
                 r.out.constData());
        QVERIFY2(r.out.contains("budget: 40 GPU-hours (100.00 EUR)"), r.out.constData());
        QVERIFY2(r.out.contains("first batch: 2 of 3 trials"), r.out.constData());
        // The same for scripts, here (no price): one JSON document, nothing else on stdout.
        r = run({QStringLiteral("--db"), db, QStringLiteral("sweep"), QStringLiteral("submit"), spec,
                 QStringLiteral("--dry-run"), QStringLiteral("--json")});
        QVERIFY2(r.code == 0, r.err.constData());
        const QJsonObject dry = QJsonDocument::fromJson(r.out).object();
        QVERIFY2(dry.value(QStringLiteral("dry_run")).toBool(), r.out.constData());
        const QJsonObject worst = dry.value(QStringLiteral("worst_case")).toObject();
        QCOMPARE(worst.value(QStringLiteral("gpu_hours")).toDouble(), 48.0);
        QCOMPARE(worst.value(QStringLiteral("time_limit_s")).toDouble(), 7200.0);
        QCOMPARE(worst.value(QStringLiteral("budget_gpu_hours")).toDouble(), 40.0);
        QCOMPARE(worst.value(QStringLiteral("first_batch")).toInt(), 2);
        QVERIFY(!worst.contains(QStringLiteral("cost")));
        QCOMPARE(dry.value(QStringLiteral("trials")).toArray().size(), 3);
        QVERIFY(dry.value(QStringLiteral("launch")).toString().contains(QStringLiteral("on this machine")));
        QVERIFY(!orrery::core::TrackingStore::open(db)->findSweep(
            QStringLiteral("budget")));  // nothing submitted
        const QString unbounded = write("unbounded.yaml",
                                        "name: u\nmethod: grid\nparameters:\n  optim.lr: {values: [1e-4]}\n"
                                        "resources: {gpus_per_node: 4}\n");
        r = run({QStringLiteral("--db"), db, QStringLiteral("sweep"), QStringLiteral("submit"), unbounded,
                 QStringLiteral("--cluster"), QStringLiteral("priced"), QStringLiteral("--dry-run")});
        QVERIFY2(r.out.contains("worst case: 1 trial × 4 GPUs: no time limit (resources.time): unbounded"),
                 r.out.constData());

        // A sweep on that cluster with known attempts: trial 0 was preempted after an hour on 8
        // GPUs and 64 CPUs and completed in 30 minutes more; trial 1 never started.
        {
            auto store = orrery::core::TrackingStore::open(db);
            orrery::core::Sweep sw;
            sw.name = QStringLiteral("priced-sweep");
            sw.experimentId = store->ensureExperiment(QStringLiteral("Default"));
            sw.method = QStringLiteral("grid");
            sw.cluster = QStringLiteral("priced");
            sw.state = QStringLiteral("finished");
            sw.trialCount = 2;
            sw.id = store->createSweep(sw);
            const qint64 t0 = 1'700'000'000'000;
            const auto attempt = [&](int index, int n, qint64 started, qint64 ended, const char *state,
                                     orrery::core::RunId run) {
                orrery::core::Trial t;
                t.sweepId = sw.id;
                t.index = index;
                t.attempt = n;
                t.runId = run;
                t.state = QString::fromLatin1(state);
                t.params = QStringLiteral("{\"optim.lr\": %1}").arg(index + 1);
                t.startedMs = started;
                t.endedMs = ended;
                t.gpus = 8;
                t.cpus = 64;
                store->addTrial(t);
            };
            const orrery::core::RunId run0 =
                store->createRun(sw.experimentId, QStringLiteral("priced-sweep-0"));
            const orrery::core::RunId run1 =
                store->createRun(sw.experimentId, QStringLiteral("priced-sweep-1"));
            attempt(0, 0, t0, t0 + 3600'000, "preempted", run0);
            attempt(0, 1, t0 + 4000'000, t0 + 4000'000 + 1800'000, "completed", run0);
            attempt(1, 0, 0, t0, "failed", run1);
        }
        r = run({QStringLiteral("--db"), db, QStringLiteral("sweep"), QStringLiteral("list")});
        QCOMPARE(r.code, 0);
        QVERIFY2(QString::fromUtf8(r.out).simplified().contains(QLatin1String("GPU-h best")),
                 r.out.constData());
        // A sweep that finished with a failed trial says so (the overview's stateText).
        QVERIFY2(
            QString::fromUtf8(r.out).simplified().contains(QLatin1String("finished (1 failed) 2/2 12 -")),
            r.out.constData());
        r = run({QStringLiteral("--db"), db, QStringLiteral("sweep"), QStringLiteral("status"),
                 QStringLiteral("priced-sweep")});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.contains("usage: 12 GPU-hours, 96 CPU-hours over 2 attempts: 30.00 EUR\n"),
                 r.out.constData());
        const QString table = QString::fromUtf8(r.out).simplified();
        QVERIFY2(table.contains(QLatin1String("0 1 completed (attempt 2) - 12")), r.out.constData());
        QVERIFY2(table.contains(QLatin1String("1 2 failed - -")), r.out.constData());
        const QJsonObject o =
            QJsonDocument::fromJson(
                run({QStringLiteral("--db"), db, QStringLiteral("sweep"), QStringLiteral("status"),
                     QStringLiteral("priced-sweep"), QStringLiteral("--json")})
                    .out)
                .object();
        QCOMPARE(o[QLatin1String("usage")][QLatin1String("gpu_hours")].toDouble(), 12.0);
        QCOMPARE(o[QLatin1String("usage")][QLatin1String("cost")].toDouble(), 30.0);
        QCOMPARE(o[QLatin1String("usage")][QLatin1String("currency")].toString(), QStringLiteral("EUR"));
        QCOMPARE(o[QLatin1String("trials")][0][QLatin1String("usage")][QLatin1String("cpu_hours")].toDouble(),
                 96.0);
        QCOMPARE(o[QLatin1String("trials")][1][QLatin1String("usage")][QLatin1String("attempts")].toInt(), 0);

        r = run({QStringLiteral("--db"), db, QStringLiteral("runs"), QStringLiteral("show"),
                 QStringLiteral("priced-sweep-0")});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.contains("usage 12 GPU-hours, 96 CPU-hours over 2 attempts: 30.00 EUR\n"),
                 r.out.constData());
        const QJsonArray runs =
            QJsonDocument::fromJson(run({QStringLiteral("--db"), db, QStringLiteral("runs"),
                                         QStringLiteral("list"), QStringLiteral("--json")})
                                        .out)
                .array();
        QCOMPARE(runs.size(), 2);
        for (const QJsonValue v : runs) {
            const QJsonObject u = v[QLatin1String("usage")].toObject();
            const bool first = v[QLatin1String("name")].toString() == QLatin1String("priced-sweep-0");
            QCOMPARE(u[QLatin1String("gpu_hours")].toDouble(), first ? 12.0 : 0.0);
            QCOMPARE(u[QLatin1String("elapsed_s")].toDouble(), first ? 5400.0 : 0.0);
        }
    }
    // W&B's own sweep files (tests/data/wandb-sweeps, README there: where each came from),
    // unchanged: accepted (random and bayes without run_cap with W&B's --count), W&B's service
    // keys reported as ignored, Launch-job files refused with the reason; the first trial's
    // command byte for byte as W&B's agent builds it (the expected words were printed by
    // wandb 0.31.0's create_sweep_command_args over yaml.safe_load of the same file).
    void wandbSweepFilesAsTheyAre_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("count");
        QTest::addColumn<int>("code");
        QTest::addColumn<QStringList>("firstCommand");  // empty: not pinned
        QTest::addColumn<QString>("stderrHas");
        const auto row = [](const char *file, int count, int code, const QStringList &command = {},
                            const char *err = "") {
            QTest::newRow(file) << QString::fromLatin1(file) << count << code << command
                                << QString::fromUtf8(err);
        };
        const QString env = QStringLiteral("/usr/bin/env"), python = QStringLiteral("python");
        row("sweeps-sweep-grid.yaml", 0, 0,
            {env, python, QStringLiteral("train.py"), QStringLiteral("--epochs=5"),
             QStringLiteral("--variance=5"), QStringLiteral("--sleep=0.5"), QStringLiteral("--base=10"),
             QStringLiteral("--increment=0.1"), QStringLiteral("--direction=-1")},
            ":7: warning: `project` is W&B's");
        row("sweeps-sweep-bayes.yaml", 4, 0);
        row("sweeps-sweep-local-bayes.yaml", 4, 0, {}, ":13: warning: `controller` is W&B's");
        row("sweeps-sweep-local-hyperband.yaml", 0, 0);
        row("sweeps-sweep-nested-cli.yaml", 0, 0,
            {env, python, QStringLiteral("train-nested-cli.py"), QStringLiteral("--batch_size=32"),
             QStringLiteral("--optimizer={'lr': 0.001, 'nadam': {'beta': 0.9}}")});
        row("sweeps-sweep-launch-jobs.yaml", 4, 0, {}, "warning: `job` is W&B's");
        row("examples-pyg-pointnet-sweep_config.yaml", 4, 0);
        row("examples-fastai1-simpsons-sweep.yaml", 4, 0);
        row("examples-keras-sweep-bayes-hyperband.yaml", 4, 0);
        row("examples-keras-sweep-grid-hyperband.yaml", 0, 0,
            {env, python, QStringLiteral("train.py"), QStringLiteral("--dropout=0.15"),
             QStringLiteral("--hidden_layer_size=96"), QStringLiteral("--layer_1_size=10"),
             QStringLiteral("--layer_2_size=24"), QStringLiteral("--learn_rate=0.001"),
             QStringLiteral("--decay=1e-5"), QStringLiteral("--momentum=0.8"),
             QStringLiteral("--epochs=27")});
        row("examples-keras-sweep-random-hyperband.yaml", 4, 0);
        row("examples-llama-cpp-sweep.yaml", 4, 0);
        row("examples-minimal-hydra-wandb_sweep.yaml", 4, 0);
        row("examples-pytorch-sweep-grid-hyperband.yaml", 0, 0);
        row("examples-sweep-bool.yaml", 0, 0,
            {env, python, QStringLiteral("train-bool.py"), QStringLiteral("--optimizer=sgd"),
             QStringLiteral("--flag1=False"), QStringLiteral("--flag2=False")});
        row("examples-sweep-cross-validation.yaml", 4, 0);
        row("wandb-docs-keys.yaml", 0, 0, {}, ":8: warning: `project` is W&B's");
        // Refusals: without --count, and W&B Launch jobs.
        row("examples-keras-sweep-random-hyperband.yaml", 0, 2, {},
            ":2: a random sweep needs run_cap, or `--count N`");
        row("examples-launch_sweep_config.yaml", 0, 2, {},
            ":7: `job` is a W&B Launch job, which Orrery cannot run");
        row("examples-optuna_config_basic.yaml", 0, 2, {}, ":4: `job` is a W&B Launch job");
    }
    void wandbSweepFilesAsTheyAre()
    {
        QFETCH(QString, file);
        QFETCH(int, count);
        QFETCH(int, code);
        QFETCH(QStringList, firstCommand);
        QFETCH(QString, stderrHas);
        QStringList args{QStringLiteral("sweep"), QStringLiteral("plan"), QStringLiteral("--json"),
                         orrery::test::sourceFile(QStringLiteral("tests/data/wandb-sweeps/") + file)};
        if (count > 0)
            args << QStringLiteral("--count") << QString::number(count);
        const Result r = run(args);
        QVERIFY2(r.code == code, r.err.constData());
        QVERIFY2(QString::fromUtf8(r.err).contains(stderrHas), r.err.constData());
        if (code != 0)
            return;
        const QJsonObject plan = QJsonDocument::fromJson(r.out).object();
        const QJsonArray trials = plan[QLatin1String("trials")].toArray();
        QVERIFY(!trials.isEmpty());
        if (count > 0)
            QCOMPARE(plan[QLatin1String("run_cap")].toInt(), count);
        if (!firstCommand.isEmpty()) {
            QStringList words;
            for (const QJsonValue w : trials[0][QLatin1String("command")].toArray())
                words << w.toString();
            QCOMPARE(words, firstCommand);
        }
    }

    // The docs-keys file's command: ${args_json_file} names the trial's args.json, and
    // ${args_no_boolean_flags} as W&B (a true flag alone; lists, 1e-4 as text, nested dicts).
    void wandbMacrosInThePlan()
    {
        const Result r =
            run({QStringLiteral("sweep"), QStringLiteral("plan"), QStringLiteral("--json"),
                 orrery::test::sourceFile(QStringLiteral("tests/data/wandb-sweeps/wandb-docs-keys.yaml"))});
        QVERIFY2(r.code == 0, r.err.constData());
        const QJsonArray words = QJsonDocument::fromJson(r.out)
                                     .object()[QLatin1String("trials")]
                                     .toArray()[0][QLatin1String("command")]
                                     .toArray();
        QStringList w;
        for (const QJsonValue v : words)
            w << v.toString();
        QCOMPARE(
            w.mid(0, 5),
            (QStringList{QStringLiteral("/usr/bin/env"), QStringLiteral("python"), QStringLiteral("train.py"),
                         QStringLiteral("--config"), QStringLiteral("<sweep dir>/0/args.json")}));
        QVERIFY2(w[5].startsWith(QLatin1String("--learning_rate=")), qPrintable(w.join(QLatin1Char(' '))));
        QVERIFY2(w[6].startsWith(QLatin1String("--dropout=0.")), qPrintable(w[6]));
        QCOMPARE(w.mid(7),
                 (QStringList{QStringLiteral("--use_amp"), QStringLiteral("--sizes=[64, 128]"),
                              QStringLiteral("--decay=1e-4"),
                              QStringLiteral("--optimizer={'name': 'adam', 'momentum': 0.9}")}));
        QVERIFY(r.err.contains("wandb-docs-keys.yaml:7: warning: `description` is W&B's"));
    }
};

ORRERY_TEST_MAIN(TestCliSweep, QCoreApplication)
#include "tst_cli_sweep.moc"
