// SPDX-License-Identifier: GPL-3.0-or-later
// remote::ProfileStore: round trip, file modes, names, and refusing secrets and bad files.
#include "testsupport.h"

#include "orrery/remote/profile.h"

#include <QCoreApplication>
#include <QFile>
#include <QJsonDocument>
#include <QTemporaryDir>

using orrery::remote::ClusterProfile;
using orrery::remote::ProfileError;
using orrery::remote::ProfileStore;

class TestProfiles : public QObject {
    Q_OBJECT

    static ClusterProfile sample(const QString &name)
    {
        ClusterProfile p;
        p.name = name;
        p.host = QStringLiteral("login.example.org");
        p.port = 2222;
        p.user = QStringLiteral("ada");
        p.identityFile = QStringLiteral("/home/ada/.ssh/id_ed25519");
        p.proxyJump = QStringLiteral("ada@bastion.example.org");
        p.remoteRoot = QStringLiteral("/scratch/ada/orrery");
        p.partition = QStringLiteral("gpu");
        p.account = QStringLiteral("proj-42");
        p.setup = {QStringLiteral("module load cuda"), QStringLiteral("source ~/venv/bin/activate")};
        p.trainerPath = QStringLiteral("/opt/orrery/bin/orrery-train");
        return p;
    }

private Q_SLOTS:
    void roundTripWithOwnerOnlyPermissions()
    {
        QTemporaryDir dir;
        ProfileStore store(dir.filePath(QStringLiteral("clusters")));
        store.save(sample(QStringLiteral("juwels")));
        store.save(sample(QStringLiteral("alps")));
        const auto loaded = store.find(QStringLiteral("juwels"));
        QVERIFY(loaded);
        QCOMPARE(loaded->toJson(), sample(QStringLiteral("juwels")).toJson());
        QCOMPARE(loaded->endpoint().proxyJump, QStringLiteral("ada@bastion.example.org"));
        // 0x0FFF: the user, group and other bits, i.e. mode 0600 and 0700.
        QCOMPARE(QFile::permissions(store.pathOf(QStringLiteral("juwels"))) & 0x0FFF,
                 QFile::ReadUser | QFile::WriteUser);
        QCOMPARE(QFile::permissions(store.directory()) & 0x0FFF,
                 QFile::ReadUser | QFile::WriteUser | QFile::ExeUser);
        const auto all = store.list();
        QCOMPARE(all.size(), 2);
        QCOMPARE(all[0].name, QStringLiteral("alps"));  // sorted
        QVERIFY(store.remove(QStringLiteral("alps")));
        QVERIFY(!store.remove(QStringLiteral("alps")));
        QVERIFY(!store.find(QStringLiteral("alps")));
    }

    // One broken file (hand-edited, emptied by a crash or a full disk) does not hide the other
    // profiles: a face lists them and says what is wrong with it.
    void aBrokenFileDoesNotHideTheOthers()
    {
        QTemporaryDir dir;
        ProfileStore store(dir.filePath(QStringLiteral("clusters")));
        store.save(sample(QStringLiteral("juwels")));
        store.save(sample(QStringLiteral("alps")));
        QFile empty(store.pathOf(QStringLiteral("bianca")));
        QVERIFY(empty.open(QIODevice::WriteOnly));
        empty.close();
        QFile secret(store.pathOf(QStringLiteral("daint")));
        QVERIFY(secret.open(QIODevice::WriteOnly));
        secret.write(R"({"host":"h","password":"hunter2"})");
        secret.close();
        QStringList problems;
        const QList<ClusterProfile> all = store.list(&problems);
        QCOMPARE(all.size(), 2);
        QCOMPARE(all[0].name, QStringLiteral("alps"));
        QCOMPARE(all[1].name, QStringLiteral("juwels"));
        QCOMPARE(problems.size(), 2);
        QVERIFY2(problems[0].contains(empty.fileName()) && problems[0].contains(QLatin1String("not a JSON")),
                 qPrintable(problems[0]));
        QVERIFY2(problems[1].contains(secret.fileName()) && !problems[1].contains(QLatin1String("hunter2")),
                 qPrintable(problems[1]));
        QVERIFY_THROWS_EXCEPTION(ProfileError, store.list());  // asked for all or nothing
        QVERIFY(empty.exists() && secret.exists());  // nothing lost
    }

    void names_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<bool>("valid");
        QTest::newRow("plain") << QStringLiteral("juwels-booster") << true;
        QTest::newRow("dots") << QStringLiteral("a.b_c") << true;
        QTest::newRow("option") << QStringLiteral("-rf") << false;
        QTest::newRow("hidden") << QStringLiteral(".x") << false;
        QTest::newRow("path") << QStringLiteral("../x") << false;
        QTest::newRow("space") << QStringLiteral("a b") << false;
        QTest::newRow("empty") << QString() << false;
    }
    void names()
    {
        QFETCH(QString, name);
        QFETCH(bool, valid);
        QCOMPARE(ProfileStore::isValidName(name), valid);
        if (!valid) {
            QTemporaryDir dir;
            ProfileStore store(dir.path());
            QVERIFY_THROWS_EXCEPTION(ProfileError, store.save(sample(name)));
        }
    }

    void badFilesAreClearErrors_data()
    {
        QTest::addColumn<QByteArray>("content");
        QTest::addColumn<QString>("mentions");
        QTest::newRow("password") << QByteArray(R"({"host":"h","password":"hunter2"})")
                                  << QStringLiteral("never hold secrets");
        QTest::newRow("not-json") << QByteArray("host: h\n") << QStringLiteral("not a JSON object");
        QTest::newRow("no-host") << QByteArray(R"({"user":"u"})") << QStringLiteral("'host' is missing");
        QTest::newRow("port") << QByteArray(R"({"host":"h","port":"22"})") << QStringLiteral("'port'");
        QTest::newRow("setup") << QByteArray(R"({"host":"h","setup":"module load x"})")
                               << QStringLiteral("'setup'");
        QTest::newRow("trainer") << QByteArray(R"({"host":"h","trainer":{"mode":"pip"}})")
                                 << QStringLiteral("trainer mode");
        QTest::newRow("version") << QByteArray(R"({"host":"h","version":9})") << QStringLiteral("version 9");
    }
    void badFilesAreClearErrors()
    {
        QFETCH(QByteArray, content);
        QFETCH(QString, mentions);
        QTemporaryDir dir;
        ProfileStore store(dir.path());
        QFile f(store.pathOf(QStringLiteral("broken")));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(content);
        f.close();
        try {
            store.find(QStringLiteral("broken"));
            QFAIL("a broken profile was accepted");
        } catch (const ProfileError &e) {
            QVERIFY2(e.message().contains(mentions), qPrintable(e.message()));
            QVERIFY2(e.message().contains(f.fileName()), qPrintable(e.message()));  // names the file
        }
        QVERIFY(f.exists());  // nothing lost
    }
};

ORRERY_TEST_MAIN(TestProfiles, QCoreApplication)
#include "tst_profiles.moc"
