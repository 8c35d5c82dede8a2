// SPDX-License-Identifier: GPL-3.0-or-later
// The pure parts of `orrery cluster deploy`: what the shipped source is and how it hashes, the
// build script around the profile's setup lines, progress and hints read from real build logs.
// tst_cluster_deploy runs the whole deploy on the fixture's cluster.
#include "testsupport.h"

#include "orrery/remote/deploy.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace orrery::remote;

class TestDeploy : public QObject {
    Q_OBJECT

    static bool copyTree(const QString &from, const QString &to)
    {
        return QProcess::execute(QStringLiteral("cp"), {QStringLiteral("-a"), from, to}) == 0;
    }

private Q_SLOTS:
    void sourceHoldsTheTrainerAndItsThirdParty()
    {
        const TrainerSource s = TrainerSource::read(orrery::test::sourceFile(QString()));
        QStringList paths;
        for (const TarFile &f : s.files)
            paths << QString::fromUtf8(f.path);
        QVERIFY(paths.contains(QStringLiteral("trainer/CMakeLists.txt")));
        QVERIFY(paths.contains(QStringLiteral("trainer/src/build_info.cpp")));  // not a build dir
        QVERIFY(paths.contains(QStringLiteral("trainer/third_party/yaml-cpp/src/parser.cpp")));
        QVERIFY(paths.contains(QStringLiteral("trainer/third_party/nlohmann/json.hpp")));
        QVERIFY(paths.contains(QStringLiteral("cmake/OrreryVersion.cmake")));
        for (const QString &p : std::as_const(paths)) {
            QVERIFY2(!p.startsWith(QLatin1String("app/")) && !p.startsWith(QLatin1String("core/")),
                     qPrintable(p));
            QVERIFY2(!p.contains(QLatin1String("/.")), qPrintable(p));  // no dot files
        }
        QVERIFY(std::is_sorted(paths.cbegin(), paths.cend()));
        QCOMPARE(s.hash.size(), 64);
    }

    void hashFollowsTheContentNotThePlace()
    {
        QTemporaryDir a, b;
        const QString root = orrery::test::sourceFile(QString());
        for (const QTemporaryDir *d : {&a, &b})
            for (const char *top : {"trainer", "cmake"})
                QVERIFY(copyTree(QDir(root).filePath(QLatin1String(top)), d->path()));
        // Build directories and dot files do not count.
        QVERIFY(QDir(b.path()).mkpath(QStringLiteral("trainer/build-x")));
        QFile junk(b.filePath(QStringLiteral("trainer/build-x/CMakeCache.txt")));
        QVERIFY(junk.open(QIODevice::WriteOnly) && junk.write("x") == 1);
        junk.close();
        QFile dot(b.filePath(QStringLiteral("trainer/.swp")));
        QVERIFY(dot.open(QIODevice::WriteOnly) && dot.write("x") == 1);
        dot.close();
        const TrainerSource sa = TrainerSource::read(a.path()), sb = TrainerSource::read(b.path());
        QCOMPARE(sb.files.size(), sa.files.size());
        QCOMPARE(sb.hash, sa.hash);
        // One byte of one source file is another trainer.
        QFile f(b.filePath(QStringLiteral("trainer/src/main.cpp")));
        QVERIFY(f.open(QIODevice::Append) && f.write("\n") == 1);
        f.close();
        QVERIFY(TrainerSource::read(b.path()).hash != sa.hash);
    }

    void directoryKeysOnSourceAndSetupLines()
    {
        const TrainerSource s = TrainerSource::read(orrery::test::sourceFile(QString()));
        ClusterProfile p;
        p.name = QStringLiteral("c");
        QVERIFY(deployDirectory(p, s).isEmpty());  // no remote root: nowhere to deploy
        p.remoteRoot = QStringLiteral("/scratch/me/orrery");
        const QString dir = deployDirectory(p, s);
        QVERIFY2(dir.startsWith(QLatin1String("/scratch/me/orrery/trainer/")), qPrintable(dir));
        QCOMPARE(dir.section(QLatin1Char('/'), -1).size(), 16);
        QCOMPARE(deployedTrainerPath(p, s), dir + QStringLiteral("/bin/orrery-train"));
        p.setup = {QStringLiteral("module load cuda/12")};
        QVERIFY(deployDirectory(p, s) != dir);  // another environment is another build
        // A named trainer wins; else the deployed one.
        QCOMPARE(sweepTrainerPath(p), deployedTrainerPath(p, s));
        p.trainerPath = QStringLiteral("/opt/orrery-train");
        QCOMPARE(sweepTrainerPath(p), p.trainerPath);
    }

    void buildScriptChecksEachSetupLineAndQuotesTheRest()
    {
        ClusterProfile p;
        p.name = QStringLiteral("c'$(x)");
        p.setup = {QStringLiteral("module load gcc"), QStringLiteral("echo 'a b'")};
        const QByteArray s = deployBuildScript(p, QStringLiteral("/r/it's here"));
        QVERIFY(s.startsWith("#!/bin/bash\n"));
        QVERIFY2(s.contains("orrery_dir=${1:-'/r/it'\\''s here'}\ncd -- \"$orrery_dir\" || exit 1\n"),
                 s.constData());
        QVERIFY(s.contains("\nmodule load gcc\n"));  // setup lines are shell, as written
        QVERIFY(s.contains("\necho 'a b'\n"));
        QCOMPARE(s.count("orrery_failed \"line 1 exited"), 1);
        QCOMPARE(s.count("orrery_failed \"line 2 exited"), 1);
        // Back in the directory after the setup lines (one may cd), then the build by its path.
        QVERIFY(
            s.endsWith("source \"$orrery_dir/deploy.sh\" build || orrery_failed \"cannot run deploy.sh\"\n"));
        // bash reads it: the script is well-formed whatever the names hold.
        QTemporaryDir d;
        QFile f(d.filePath(QStringLiteral("build.sh")));
        QVERIFY(f.open(QIODevice::WriteOnly) && f.write(s) == s.size());
        f.close();
        QCOMPARE(QProcess::execute(QStringLiteral("bash"), {QStringLiteral("-n"), f.fileName()}), 0);
    }

    void progressFromMakeAndNinjaLogs()
    {
        QCOMPARE(deployProgressFromLog({}).phase, QString());
        const DeployProgress make = deployProgressFromLog("orrery-deploy: phase setup\n"
                                                          "orrery-deploy: phase configure\n"
                                                          "-- Configuring done\n"
                                                          "orrery-deploy: phase build\n"
                                                          "[  3%] Building CXX object x.o\n"
                                                          "[ 45%] Building CXX object src/model.cpp.o\n");
        QCOMPARE(make.phase, QStringLiteral("build"));
        QCOMPARE(make.percent, 45);
        QCOMPARE(make.lastLine, QStringLiteral("[ 45%] Building CXX object src/model.cpp.o"));
        const DeployProgress ninja = deployProgressFromLog("orrery-deploy: phase build\n"
                                                           "[3/40] Building CXX object a.o\n"
                                                           "[10/40] Building CXX object b.o\n");
        QCOMPARE(ninja.percent, 25);
        // A percentage printed before the build phase (CMake's configure) is not the compile's.
        QCOMPARE(deployProgressFromLog("orrery-deploy: phase configure\n[ 50%] x\n").percent, -1);
        QCOMPARE(deployProgressFromLog("orrery-deploy: phase install\n").percent, 100);
    }

    void hintsNameTheFix()
    {
        QVERIFY(deployHint(QStringLiteral("setup"), "x").contains(QLatin1String("setup line")));
        QVERIFY(deployHint(QStringLiteral("torch"),
                           "orrery-deploy: failed in torch: /usr/bin/python3 cannot "
                           "import torch\n")
                    .contains(QLatin1String("activate")));
        QVERIFY(deployHint(QStringLiteral("torch"), "orrery-deploy: failed in torch: no cmake on PATH")
                    .contains(QLatin1String("pip install cmake")));
        QVERIFY(deployHint(QStringLiteral("configure"), "No CMAKE_CXX_COMPILER could be found.")
                    .contains(QLatin1String("module load gcc")));
        QVERIFY(
            deployHint(QStringLiteral("build"), "c++: fatal error: Killed signal terminated program cc1plus")
                .contains(QLatin1String("ORRERY_DEPLOY_JOBS")));
        QVERIFY(deployHint(QStringLiteral("build"), "all fine").isEmpty());
        // libstdc++'s macros in a compile error are not a runtime mismatch.
        QVERIFY(!deployHint(QStringLiteral("build"), "error: ... _GLIBCXX_USE_CXX11_ABI ...")
                     .contains(QLatin1String("runtime")));
        QVERIFY(
            deployHint(QStringLiteral("install"),
                       "/lib64/libstdc++.so.6: version `GLIBCXX_3.4.30' not found (required by orrery-train)")
                .contains(QLatin1String("runtime")));
    }

    void describeCarriesTailAndHint()
    {
        const DeployError e(QStringLiteral("failed"), QStringLiteral("build"),
                            QStringLiteral("line 1\nline 2"), QStringLiteral("do this"));
        const QString d = e.describe();
        QVERIFY(d.startsWith(QLatin1String("failed\n")));
        QVERIFY(d.contains(QLatin1String("line 1\nline 2")));
        QVERIFY(d.endsWith(QLatin1String("hint: do this")));
    }
};

QTEST_GUILESS_MAIN(TestDeploy)
#include "tst_deploy.moc"
