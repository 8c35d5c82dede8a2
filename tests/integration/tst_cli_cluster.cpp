// SPDX-License-Identifier: GPL-3.0-or-later
// `orrery cluster ...` as a user runs it, against the fixture: profiles in a throwaway config
// directory, host-key decisions, the full `cluster test` report, and exit codes.
#include "remotesupport.h"

#include <QCoreApplication>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

class TestCliCluster : public QObject {
    Q_OBJECT

    orrery::test::TestCluster m_cluster;
    QTemporaryDir m_home;

    struct Run {
        int code = -1;
        QString out;
        QString err;
    };

    Run orrery(const QStringList &args)
    {
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("HOME"), m_home.path());
        env.insert(QStringLiteral("XDG_CONFIG_HOME"), m_home.filePath(QStringLiteral("config")));
        env.remove(QStringLiteral("SSH_AUTH_SOCK"));
        p.setProcessEnvironment(env);
        p.start(qEnvironmentVariable("ORRERY_CLI"), args);
        p.closeWriteChannel();  // no terminal: nothing may prompt
        if (!p.waitForFinished(120'000))
            return {};
        return {p.exitCode(), QString::fromUtf8(p.readAllStandardOutput()),
                QString::fromUtf8(p.readAllStandardError())};
    }

    QStringList addArgs(const QString &name, const QString &knownHosts) const
    {
        return orrery::test::fixtureClusterAdd(
                   m_cluster, name, m_cluster.value("ORRERY_TEST_JOBS_DIR") + QStringLiteral("/cli root")) +
            QStringList{QStringLiteral("--known-hosts"), knownHosts,
                        QStringLiteral("--setup"),       QStringLiteral("echo setup says hello"),
                        QStringLiteral("--setup"),       QStringLiteral("echo \"$((6 * 7))\" >&2")};
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(m_cluster.error().isEmpty(), qPrintable(m_cluster.error()));
        QVERIFY2(!qEnvironmentVariable("ORRERY_CLI").isEmpty(), "ORRERY_CLI (the orrery binary) is not set");
    }

    void unknownHostIsRefusedUntilAccepted()
    {
        const QString knownHosts = m_home.filePath(QStringLiteral("known_hosts"));
        Run r = orrery(addArgs(QStringLiteral("fixture"), knownHosts));
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const QString file = m_home.filePath(QStringLiteral("config/orrery/clusters/fixture.json"));
        QCOMPARE(QFile::permissions(file) & 0x0FFF, QFile::ReadUser | QFile::WriteUser);  // 0600
        QFile profile(file);
        QVERIFY(profile.open(QIODevice::ReadOnly));
        QVERIFY(profile.readAll().contains("\"identity_file\""));

        r = orrery({QStringLiteral("cluster"), QStringLiteral("test"), QStringLiteral("fixture")});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains(QLatin1String("unknown host key SHA256:")), qPrintable(r.err));
        QVERIFY2(r.err.contains(QLatin1String("--accept-new-host-key")), qPrintable(r.err));
        QVERIFY(!QFile::exists(knownHosts) || QFile(knownHosts).size() == 0);

        r = orrery({QStringLiteral("cluster"), QStringLiteral("test"), QStringLiteral("fixture"),
                    QStringLiteral("--json"), QStringLiteral("--accept-new-host-key")});
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        const QJsonObject report = QJsonDocument::fromJson(r.out.toUtf8()).object();
        QCOMPARE(report.value(QStringLiteral("ok")).toBool(), true);
        QVERIFY(report.value(QStringLiteral("slurm_version")).toString().startsWith(QLatin1String("2")));
        QCOMPARE(report.value(QStringLiteral("accounting")).toBool(true), false);
        QCOMPARE(report.value(QStringLiteral("remote_root_writable")).toBool(), true);
        const QJsonArray nodes = report.value(QStringLiteral("nodes")).toArray();
        QCOMPARE(nodes.size(), m_cluster.value("ORRERY_TEST_SLURM_NODES").split(QLatin1Char(',')).size());
        const QJsonObject gpu = report.value(QStringLiteral("partitions")).toArray().first().toObject();
        QCOMPARE(gpu.value(QStringLiteral("name")).toString(), QStringLiteral("gpu"));
        QCOMPARE(gpu.value(QStringLiteral("gpus")).toInt(),
                 nodes.size() * m_cluster.value("ORRERY_TEST_SLURM_GPUS_PER_NODE").toInt());
        const QJsonObject setup = report.value(QStringLiteral("setup")).toObject();
        QCOMPARE(setup.value(QStringLiteral("stdout")).toString(), QStringLiteral("setup says hello\n"));
        QCOMPARE(setup.value(QStringLiteral("stderr")).toString(), QStringLiteral("42\n"));
        QVERIFY(QFile(knownHosts).size() > 0);

        // Recorded: the human report, no flag needed any more.
        r = orrery({QStringLiteral("cluster"), QStringLiteral("test"), QStringLiteral("fixture")});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains(QLatin1String("PARTITION")) && r.out.contains(QLatin1String("gpu*")),
                 qPrintable(r.out));
        QVERIFY(r.out.contains(QLatin1String("setup says hello")));
    }

    void changedHostKeyIsRefusedWithBothFingerprints()
    {
        QVERIFY(
            orrery(addArgs(QStringLiteral("impostor"), m_cluster.value("ORRERY_TEST_SSH_KNOWN_HOSTS_WRONG")))
                .code == 0);
        const Run r = orrery({QStringLiteral("cluster"), QStringLiteral("test"), QStringLiteral("impostor"),
                              QStringLiteral("--accept-new-host-key")});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains(QLatin1String("HOST KEY CHANGED")), qPrintable(r.err));
        QCOMPARE(r.err.count(QLatin1String("SHA256:")), 2);
    }

    void unwritableRemoteRootFails()
    {
        QStringList args =
            addArgs(QStringLiteral("readonly"), m_cluster.value("ORRERY_TEST_SSH_KNOWN_HOSTS"));
        args[args.indexOf(QStringLiteral("--remote-root")) + 1] = QStringLiteral("/proc/orrery-cannot-write");
        QVERIFY(orrery(args).code == 0);
        const Run r = orrery({QStringLiteral("cluster"), QStringLiteral("test"), QStringLiteral("readonly"),
                              QStringLiteral("--json")});
        QCOMPARE(r.code, 1);
        const QJsonObject report = QJsonDocument::fromJson(r.out.toUtf8()).object();
        QCOMPARE(report.value(QStringLiteral("remote_root_writable")).toBool(true), false);
        QVERIFY(r.err.contains(QLatin1String("/proc/orrery-cannot-write")));
    }

    void listShowRemoveAndExitCodes()
    {
        Run r = orrery(addArgs(QStringLiteral("fixture"), QStringLiteral("/dev/null")));
        QCOMPARE(r.code, 1);  // exists; --force replaces
        QVERIFY(r.err.contains(QLatin1String("--force")));
        r = orrery({QStringLiteral("cluster"), QStringLiteral("list"), QStringLiteral("--json")});
        QCOMPARE(r.code, 0);
        QStringList names;
        for (const QJsonValue &c :
             QJsonDocument::fromJson(r.out.toUtf8()).object().value(QStringLiteral("clusters")).toArray())
            names.append(c.toObject().value(QStringLiteral("name")).toString());
        QCOMPARE(
            names,
            (QStringList{QStringLiteral("fixture"), QStringLiteral("impostor"), QStringLiteral("readonly")}));
        // A broken profile file (emptied by a crash) is named on stderr with exit status 1; it
        // does not hide the others (the whole list failed with it).
        QDirIterator found(m_home.path(), {QStringLiteral("fixture.json")}, QDir::Files,
                           QDirIterator::Subdirectories);
        QVERIFY(found.hasNext());
        const QString broken = QFileInfo(found.next()).dir().filePath(QStringLiteral("broken.json"));
        QVERIFY(QFile(broken).open(QIODevice::WriteOnly));
        for (const bool json : {true, false}) {
            QStringList list{QStringLiteral("cluster"), QStringLiteral("list")};
            if (json)
                list << QStringLiteral("--json");
            r = orrery(list);
            QCOMPARE(r.code, 1);
            QVERIFY2(r.err.contains(broken) && r.err.contains(QLatin1String("not a JSON object")),
                     qPrintable(r.err));
            for (const char *name : {"fixture", "impostor", "readonly"})
                QVERIFY2(r.out.contains(QLatin1String(name)), qPrintable(r.out));
            if (json)
                QVERIFY(QJsonDocument::fromJson(r.out.toUtf8())
                            .object()
                            .value(QStringLiteral("problems"))
                            .toArray()
                            .first()
                            .toString()
                            .contains(broken));
        }
        QVERIFY(QFile::exists(broken));  // nothing is removed for the user
        QVERIFY(QFile::remove(broken));
        r = orrery({QStringLiteral("cluster"), QStringLiteral("show"), QStringLiteral("fixture"),
                    QStringLiteral("--json")});
        QCOMPARE(QJsonDocument::fromJson(r.out.toUtf8()).object().value(QStringLiteral("port")).toInt(),
                 m_cluster.value("ORRERY_TEST_SSH_PORT").toInt());
        QCOMPARE(
            orrery({QStringLiteral("cluster"), QStringLiteral("remove"), QStringLiteral("impostor")}).code,
            0);
        QCOMPARE(
            orrery({QStringLiteral("cluster"), QStringLiteral("remove"), QStringLiteral("impostor")}).code,
            1);
        QCOMPARE(orrery({QStringLiteral("cluster"), QStringLiteral("show"), QStringLiteral("nope")}).code, 1);
        QCOMPARE(orrery({QStringLiteral("cluster"), QStringLiteral("frobnicate")}).code, 2);
        QCOMPARE(orrery({QStringLiteral("cluster"), QStringLiteral("add"), QStringLiteral("x")}).code,
                 2);  // no --host
        QCOMPARE(orrery({QStringLiteral("cluster"), QStringLiteral("add"), QStringLiteral("-rf"),
                         QStringLiteral("--host"), QStringLiteral("h")})
                     .code,
                 2);
        QCOMPARE(orrery({QStringLiteral("cluster"), QStringLiteral("add"), QStringLiteral("../evil"),
                         QStringLiteral("--host"), QStringLiteral("h")})
                     .code,
                 1);
        QCOMPARE(orrery({QStringLiteral("cluster"), QStringLiteral("add"), QStringLiteral("p"),
                         QStringLiteral("--host"), QStringLiteral("h"), QStringLiteral("--port"),
                         QStringLiteral("0")})
                     .code,
                 2);
    }
};

ORRERY_TEST_MAIN(TestCliCluster, QCoreApplication)
#include "tst_cli_cluster.moc"
