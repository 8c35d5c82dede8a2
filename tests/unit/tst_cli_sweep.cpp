// SPDX-License-Identifier: GPL-3.0-or-later
// `orrery sweep plan` as a user runs it: the real CLI and the real trainer's schema, exit codes,
// file:line errors on stderr, the trials as a table and as JSON, and with --cluster the rendered
// sbatch script of a real cluster profile, checked by bash -n.
#include "testsupport.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
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
        QCOMPARE(QString::fromUtf8(r.err),
                 spec +
                     QStringLiteral(":3: unknown trainer key 'optim.lrr' (did you mean 'optim.lr'?); "
                                    "`orrery-train --print-schema` lists them all\n"));
    }

    // Each key is valid alone; the trainer's cross-key rule (channels a multiple of 8) refuses one trial.
    void trainerRefusesAResolvedConfig()
    {
        const QString spec =
            write("cross.yaml", "method: grid\nparameters:\n  model.channels: {values: [16, 12]}\n");
        const Result r = run({QStringLiteral("sweep"), QStringLiteral("plan"), spec});
        QCOMPARE(r.code, 2);
        QCOMPARE(QString::fromUtf8(r.err),
                 spec +
                     QStringLiteral(": trial 1: the trainer refuses its config: model.channels must be a "
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
};

ORRERY_TEST_MAIN(TestCliSweep, QCoreApplication)
#include "tst_cli_sweep.moc"
