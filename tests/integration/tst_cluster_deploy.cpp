// SPDX-License-Identifier: GPL-3.0-or-later
// `orrery cluster deploy` on the fixture's real Slurm through real SSH, as a user meets it: a
// profile with no trainer path whose setup lines activate the repository's .venv (the cluster's
// own PyTorch); the first sweep submit uploads the bundled source and builds it there (said on
// the terminal) and the sweep runs that binary; a second deploy is a cache hit; a broken setup line
// fails with its own output shown; a build in a Slurm job reports its failure the same way and is
// cancelled (scancel) by Ctrl-C. The deployed trainer is built as a cluster with nothing but CMake,
// a compiler and a pip PyTorch would build it: the bundled yaml-cpp and nlohmann-json, no CUDA
// toolkit (the CPU path of a CUDA wheel), no FFmpeg (samples are Y4M), no Qt; tst_trainer_y4m
// then runs that binary.
#include "remotesupport.h"

#include "orrery/core/store.h"

#include <QDeadlineTimer>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QThread>
#include <QUuid>

#include <csignal>

using namespace orrery::core;

class TestClusterDeploy : public QObject {
    Q_OBJECT

    orrery::test::TestCluster m_cluster;
    orrery::test::CliUser m_user;
    QString m_root;
    QString m_trainer;  // the deployed orrery-train, once built

    using Result = orrery::test::CliUser::Result;
    Result orrery(const QStringList &args, int timeoutMs = 120'000) { return m_user.run(args, timeoutMs); }

    // A profile of the fixture with these setup lines; no trainer path.
    void addProfile(const QString &name, const QStringList &setup, bool inJob = false)
    {
        QStringList args = orrery::test::fixtureClusterAdd(m_cluster, name, m_root, QStringLiteral("debug"));
        for (const QString &line : setup)
            args << QStringLiteral("--setup") << line;
        if (inJob)
            args << QStringLiteral("--build-on") << QStringLiteral("job");
        const Result add = orrery(args);
        QVERIFY2(add.code == 0, qPrintable(add.err));
    }

    // The deploy directories under the remote root (one per source hash and setup lines).
    QStringList deployDirs() const
    {
        return QDir(m_root + QStringLiteral("/trainer")).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    }

    static QString readFile(const QString &path)
    {
        QFile f(path);
        return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
    }

    static QJsonObject json(const QString &text) { return QJsonDocument::fromJson(text.toUtf8()).object(); }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(m_cluster.error().isEmpty(), qPrintable(m_cluster.error()));
        QVERIFY(m_user.isValid());
        if (qEnvironmentVariableIsEmpty("ORRERY_CLI"))
            QFAIL("ORRERY_CLI must name the built orrery (CTest sets it)");
        // A space in the path: it reaches CMake and make quoted.
        m_root = m_cluster.value("ORRERY_TEST_JOBS_DIR") + QStringLiteral("/tst_cluster_deploy-") +
            QUuid::createUuid().toString(QUuid::Id128) + QStringLiteral("/remote root");
        const QString venv = orrery::test::sourceFile(QStringLiteral(".venv/bin/activate"));
        QVERIFY2(QFileInfo::exists(venv),
                 "the repository's .venv (scripts/setup) is the cluster's PyTorch here");
        addProfile(QStringLiteral("fixture"),
                   {QStringLiteral("source ") + venv,
                    // As a cluster with only pip PyTorch, CMake and a compiler builds it.
                    // No build type (-O0) and warnings as errors: it proves the build, and -O0
                    // compiles in 126 s instead of Release's 156 s on the 2-core machine.
                    QStringLiteral("export ORRERY_DEPLOY_CMAKE_ARGS='-DORRERY_TRAINER_BUNDLED_DEPS=ON "
                                   "-DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON -DORRERY_TRAINER_FFMPEG=OFF "
                                   "-DCMAKE_BUILD_TYPE= -DORRERY_WERROR=ON'"),
                    QStringLiteral("export MASTER_ADDR=127.0.0.1")});
    }

    void submitDeploysFirstAndTheSweepRunsThatTrainer()
    {
        const Result before = orrery({QStringLiteral("cluster"), QStringLiteral("test"),
                                      QStringLiteral("fixture"), QStringLiteral("--json")});
        QVERIFY2(before.code == 0, qPrintable(before.out + before.err));
        QCOMPARE(json(before.out).value(QLatin1String("trainer_ready")).toBool(), false);
        const QString expected = json(before.out).value(QLatin1String("trainer")).toString();
        QVERIFY2(expected.startsWith(m_root + QStringLiteral("/trainer/")), qPrintable(expected));

        // The dry run names the trainer the sweep will run, and builds nothing.
        const QString spec = m_user.filePath(QStringLiteral("deploy.yaml"));
        {
            QFile f(spec);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("name: deployed\nexperiment: deploy\ntrainer: {config: " +
                    orrery::test::microConfigPath().toUtf8() +
                    "}\nmethod: grid\nmetric: {name: train/loss, goal: minimize}\n"
                    "parameters:\n  train.steps: {value: 12}\n"
                    "resources: {nodes: 1, cpus_per_task: 1, mem: 500M, time: \"00:10:00\"}\n");
        }
        const Result dry =
            orrery({QStringLiteral("sweep"), QStringLiteral("submit"), spec, QStringLiteral("--cluster"),
                    QStringLiteral("fixture"), QStringLiteral("--dry-run")});
        QVERIFY2(dry.code == 0, qPrintable(dry.err));
        QVERIFY2(dry.out.contains(QLatin1String("bin/orrery-train")), qPrintable(dry.out));
        QVERIFY(deployDirs().isEmpty());

        // Submit: the trainer is deployed first (on the terminal), then the sweep runs it.
        const Result submitted =
            orrery({QStringLiteral("sweep"), QStringLiteral("submit"), spec, QStringLiteral("--cluster"),
                    QStringLiteral("fixture"), QStringLiteral("--watch")},
                   700'000);
        QVERIFY2(submitted.code == 0, qPrintable(submitted.out + submitted.err + m_cluster.logsHint()));
        QVERIFY2(submitted.err.contains(QLatin1String("deploy fixture: configure")),
                 qPrintable(submitted.err));
        QVERIFY2(submitted.err.contains(QLatin1String("deploy fixture: build")), qPrintable(submitted.err));
        QVERIFY2(submitted.out.contains(QLatin1String("1 completed")), qPrintable(submitted.out));
        m_trainer = expected;
        QVERIFY(QFileInfo(m_trainer).isExecutable());

        // The job array ran the deployed binary.
        QStringList scripts;
        QDirIterator it(m_root, {QStringLiteral("*.sbatch")}, QDir::Files, QDirIterator::Subdirectories);
        while (it.hasNext())
            scripts << it.next();
        QCOMPARE(scripts.size(), 1);
        const QString script = readFile(scripts.front());
        QVERIFY2(script.contains(QStringLiteral("srun '%1'").arg(m_trainer)), qPrintable(script));

        // Built as a bare cluster would: no CUDA toolkit, no FFmpeg, its own yaml-cpp.
        QProcess version;
        version.start(m_trainer, {QStringLiteral("--version")});
        QVERIFY(version.waitForFinished(60'000));
        const QString v = QString::fromUtf8(version.readAllStandardOutput());
        QVERIFY2(v.contains(QLatin1String("LibTorch 2.11")) && v.contains(QLatin1String("Y4M")),
                 qPrintable(v));
        const QString cache =
            readFile(QFileInfo(m_trainer).dir().filePath(QStringLiteral("../build/CMakeCache.txt")));
        QVERIFY2(cache.contains(QLatin1String("ORRERY_TRAINER_BUNDLED_DEPS:BOOL=ON")),
                 "not the bundled deps");
        QVERIFY2(!cache.contains(QLatin1String("Qt6_DIR:PATH=/")),
                 "the trainer's build found Qt; it must not use it");

        // This is the suite's build of the trainer as a bare cluster has it: tst_trainer_y4m runs
        // it (CTest fixture trainer_standalone). A copy: the fixture's directory goes when it does.
        if (const QString copy = qEnvironmentVariable("ORRERY_DEPLOYED_TRAINER_COPY"); !copy.isEmpty()) {
            QVERIFY(QDir().mkpath(QFileInfo(copy).path()));
            QFile::remove(copy);
            QVERIFY(QFile::copy(m_trainer, copy));
        }
    }

    void secondDeployIsACacheHit()
    {
        QVERIFY2(!m_trainer.isEmpty(), "needs the deploy of the test before");
        const QString log = QFileInfo(m_trainer).dir().filePath(QStringLiteral("../build.log"));
        const QDateTime built = QFileInfo(log).lastModified();
        const Result again = orrery({QStringLiteral("cluster"), QStringLiteral("deploy"),
                                     QStringLiteral("fixture"), QStringLiteral("--json")});
        QVERIFY2(again.code == 0, qPrintable(again.out + again.err));
        const QJsonObject r = json(again.out);
        QCOMPARE(r.value(QLatin1String("cached")).toBool(), true);
        QCOMPARE(r.value(QLatin1String("trainer")).toString(), m_trainer);
        QVERIFY2(r.value(QLatin1String("seconds")).toDouble() < 30, "a cache hit is one command");
        QCOMPARE(QFileInfo(log).lastModified(), built);  // nothing was rebuilt
        QCOMPARE(deployDirs().size(), 1);
        const Result plain =
            orrery({QStringLiteral("cluster"), QStringLiteral("deploy"), QStringLiteral("fixture")});
        QVERIFY2(plain.out.contains(QLatin1String("up to date")), qPrintable(plain.out));

        const Result test =
            orrery({QStringLiteral("cluster"), QStringLiteral("test"), QStringLiteral("fixture")});
        QVERIFY2(test.code == 0, qPrintable(test.err));
        QVERIFY2(test.out.contains(QStringLiteral("deployed: %1").arg(m_trainer)), qPrintable(test.out));
    }

    void doctorChecksTheClusterAsAJobSeesIt()
    {
        QVERIFY2(!m_trainer.isEmpty(), "needs the deploy of the test before");
        const Result r = orrery({QStringLiteral("doctor"), QStringLiteral("--cluster"),
                                 QStringLiteral("fixture"), QStringLiteral("--json")},
                                300'000);
        const QJsonObject o = json(r.out);
        QVERIFY2(r.code == 0 && o.value(QLatin1String("ok")).toBool(), qPrintable(r.out + r.err));
        QMap<QString, QJsonObject> checks;
        for (const QJsonValue &c : o.value(QLatin1String("checks")).toArray())
            checks.insert(c.toObject().value(QLatin1String("name")).toString(), c.toObject());
        auto status = [&](const char *name) {
            return checks.value(QLatin1String(name)).value(QLatin1String("status")).toString();
        };
        auto detail = [&](const char *name) {
            return checks.value(QLatin1String(name)).value(QLatin1String("detail")).toString();
        };
        for (const char *name :
             {"ssh", "slurm commands", "partition", "gpus", "remote root", "setup lines", "job: pytorch"})
            QVERIFY2(status(name) == QLatin1String("ok"),
                     qPrintable(QString::fromLatin1(name) + QStringLiteral(": ") + detail(name)));
        QVERIFY2(detail("gpus").startsWith(QLatin1String("8 GPUs")), qPrintable(detail("gpus")));
        // Asked for in a job: the torch of the setup lines' venv, found on the compute node.
        QVERIFY2(detail("job: pytorch").contains(QLatin1String("torch 2.11")) &&
                     detail("job: pytorch").contains(QLatin1String(".venv")),
                 qPrintable(detail("job: pytorch")));
        // The fixture's GPUs are device files, not GPUs: CUDA is a warning with its fix, not a pass.
        QCOMPARE(status("job: cuda"), QStringLiteral("warn"));
        // The deployed trainer ran in the job; built without the CUDA toolkit, on a GPU partition.
        QVERIFY2(detail("trainer").contains(m_trainer) &&
                     detail("trainer").contains(QLatin1String("LibTorch 2.11")),
                 qPrintable(detail("trainer")));
        QCOMPARE(status("trainer"), QStringLiteral("warn"));

        // A host whose key is not known stops at SSH, with the way to record it.
        QTemporaryDir keys;
        QFile empty(keys.filePath(QStringLiteral("known_hosts")));
        QVERIFY(empty.open(QIODevice::WriteOnly));
        empty.close();
        QVERIFY(orrery(orrery::test::fixtureClusterAdd(m_cluster, QStringLiteral("stranger"), m_root) +
                       QStringList{QStringLiteral("--known-hosts"), empty.fileName()})
                    .code == 0);
        const Result stranger =
            orrery({QStringLiteral("doctor"), QStringLiteral("--cluster"), QStringLiteral("stranger")});
        QCOMPARE(stranger.code, 1);
        QVERIFY2(stranger.out.contains(QLatin1String("--accept-new-host-key")), qPrintable(stranger.out));
        QVERIFY2(!stranger.out.contains(QLatin1String("slurm commands")), qPrintable(stranger.out));
        QCOMPARE(QFileInfo(empty.fileName()).size(), 0);  // nothing was trusted
    }

    void brokenSetupLineFailsWithItsOutput()
    {
        addProfile(
            QStringLiteral("broken"),
            {QStringLiteral("echo 'before the broken line'"), QStringLiteral("no-such-module-load x")});
        const Result r =
            orrery({QStringLiteral("cluster"), QStringLiteral("deploy"), QStringLiteral("broken")});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains(QLatin1String("failed in setup")), qPrintable(r.err));
        QVERIFY2(r.err.contains(QLatin1String("before the broken line")), qPrintable(r.err));
        QVERIFY2(r.err.contains(QLatin1String("no-such-module-load: command not found")), qPrintable(r.err));
        QVERIFY2(r.err.contains(QLatin1String("hint: a setup line")), qPrintable(r.err));
        QVERIFY2(r.err.contains(QLatin1String("orrery cluster test broken")), qPrintable(r.err));
        // doctor names the same line.
        const Result doctor = orrery(
            {QStringLiteral("doctor"), QStringLiteral("--cluster"), QStringLiteral("broken")}, 300'000);
        QCOMPARE(doctor.code, 1);
        QVERIFY2(doctor.out.contains(QRegularExpression(QStringLiteral("FAIL +setup lines +exit 127"))),
                 qPrintable(doctor.out));
    }

    void buildInAJobFailsTheSameWayAndCtrlCCancelsIt()
    {
        // A build job whose setup line fails: the log comes back from the compute node.
        addProfile(QStringLiteral("injob"),
                   {QStringLiteral("echo \"on $(hostname) as job $SLURM_JOB_ID\""), QStringLiteral("false")},
                   true);
        const Result failed =
            orrery({QStringLiteral("cluster"), QStringLiteral("deploy"), QStringLiteral("injob")});
        QCOMPARE(failed.code, 1);
        QVERIFY2(failed.err.contains(QLatin1String(" as job ")) &&
                     failed.err.contains(QLatin1String("failed in setup")),
                 qPrintable(failed.err));
        QVERIFY2(!failed.err.contains(QLatin1String("as job \n")), "the build did not run inside a job");

        // A build job that takes long is cancelled by Ctrl-C: scancel, exit 130.
        addProfile(QStringLiteral("slow"), {QStringLiteral("sleep 300")}, true);
        QProcess deploy;
        m_user.start(deploy, {QStringLiteral("cluster"), QStringLiteral("deploy"), QStringLiteral("slow")});
        QVERIFY(deploy.waitForStarted());
        QString seen;
        QDeadlineTimer running(90'000);
        while (!seen.contains(QLatin1String("deploy slow: setup")) && !running.hasExpired()) {
            deploy.waitForReadyRead(500);
            seen += QString::fromUtf8(deploy.readAllStandardError());
        }
        QVERIFY2(seen.contains(QLatin1String("deploy slow: setup")), qPrintable(seen + m_cluster.logsHint()));
        QString jobId;
        for (const QString &dir : deployDirs()) {
            const QString pid =
                readFile(m_root + QStringLiteral("/trainer/") + dir + QStringLiteral("/build.pid"));
            if (readFile(m_root + QStringLiteral("/trainer/") + dir + QStringLiteral("/build.sh"))
                    .contains(QLatin1String("sleep 300")))
                jobId = pid.trimmed().section(QLatin1Char(':'), 1);
        }
        QVERIFY2(!jobId.isEmpty(), "the slow build has no job id");
        ::kill(static_cast<pid_t>(deploy.processId()), SIGINT);
        QVERIFY(deploy.waitForFinished(60'000));
        QCOMPARE(deploy.exitCode(), 130);
        QVERIFY(QString::fromUtf8(deploy.readAllStandardError()).contains(QLatin1String("cancelled")));
        QDeadlineTimer gone(60'000);
        QString state = QStringLiteral("?");
        while (!gone.hasExpired()) {
            QProcess squeue;
            QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
            e.insert(QStringLiteral("SLURM_CONF"), m_cluster.value("SLURM_CONF"));
            squeue.setProcessEnvironment(e);
            squeue.start(QStringLiteral("squeue"),
                         {QStringLiteral("-h"), QStringLiteral("-j"), jobId, QStringLiteral("-t"),
                          QStringLiteral("PD,R,CG")});
            squeue.waitForFinished();
            state = QString::fromUtf8(squeue.readAllStandardOutput()).trimmed();
            if (state.isEmpty())
                break;
            QThread::msleep(500);
        }
        QVERIFY2(state.isEmpty(),
                 qPrintable(QStringLiteral("build job %1 still queued: %2").arg(jobId, state)));
    }
};

QTEST_GUILESS_MAIN(TestClusterDeploy)
#include "tst_cluster_deploy.moc"
