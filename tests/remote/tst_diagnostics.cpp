// SPDX-License-Identifier: GPL-3.0-or-later
// The environment checks behind `orrery doctor`, against the real SQLite, filesystem and trainer.
#include "testsupport.h"

#include "orrery/core/diagnostics.h"
#include "orrery/core/paths.h"
#include "orrery/remote/diagnostics.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>

using orrery::core::Check;

namespace {

Check find(const QList<Check> &checks, const QString &name)
{
    for (const Check &c : checks)
        if (c.name == name)
            return c;
    return {};
}

}  // namespace

class TestDiagnostics : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void init() { qunsetenv("ORRERY_DB"); }

    void databasePathFollowsEnvironment()
    {
        qputenv("ORRERY_DB", "/some/where/x.sqlite");
        QCOMPARE(orrery::core::defaultDatabasePath(), QStringLiteral("/some/where/x.sqlite"));
        qunsetenv("ORRERY_DB");
        QVERIFY(orrery::core::defaultDatabasePath().endsWith(QStringLiteral("/orrery.sqlite")));
    }

    void sqliteCheckPassesInAWritableDirectory()
    {
        QTemporaryDir dir;
        qputenv("ORRERY_DB", dir.filePath(QStringLiteral("db/orrery.sqlite")).toUtf8());
        const Check sqlite = find(orrery::core::coreChecks(), QStringLiteral("SQLite"));
        QCOMPARE(sqlite.status, Check::Status::Ok);
        QVERIFY2(sqlite.detail.startsWith(QStringLiteral("3.")), qPrintable(sqlite.detail));
        // The probe database is cleaned up; the directory is left for the store.
        QCOMPARE(QDir(dir.filePath(QStringLiteral("db"))).entryList(QDir::Files | QDir::Hidden).size(), 0);
    }

    void sqliteCheckFailsWhereNothingCanBeWritten()
    {
        // /proc refuses new files even to root: a real unwritable filesystem.
        qputenv("ORRERY_DB", "/proc/orrery/orrery.sqlite");
        const QList<Check> checks = orrery::core::coreChecks();
        const Check sqlite = find(checks, QStringLiteral("SQLite"));
        QCOMPARE(sqlite.status, Check::Status::Failed);
        QVERIFY(!sqlite.hint.isEmpty());
        QVERIFY(!orrery::core::allPassed(checks));
    }

    void trainerIsFoundAndReportsLibTorch()
    {
        ORRERY_SKIP_WITHOUT_TRAINER();
        // CTest points ORRERY_TRAINER at the freshly built orrery-train.
        QVERIFY2(!qEnvironmentVariableIsEmpty("ORRERY_TRAINER"), "run through ctest");
        const Check trainer = find(orrery::core::coreChecks(), QStringLiteral("trainer"));
        QVERIFY2(trainer.status != Check::Status::Failed, qPrintable(trainer.detail));
        QVERIFY2(trainer.detail.contains(QStringLiteral("LibTorch 2.11")), qPrintable(trainer.detail));
    }

    // The local executor's supervisor is the `orrery` CLI whichever face launches a sweep: the
    // environment names it, else the one beside the running program, else PATH — never the
    // running program itself (a GUI launching `orrery-gui sweep supervise` would fail).
    void cliIsFoundLikeTheTrainer()
    {
        const QByteArray saved = qgetenv("ORRERY_CLI");
        QVERIFY2(!saved.isEmpty(), "run through ctest");
        QCOMPARE(orrery::core::cliExecutable(), QString::fromLocal8Bit(saved));
        QTemporaryDir dir;
        const QString beside = dir.filePath(QStringLiteral("orrery"));
        QVERIFY(QFile::copy(QString::fromLocal8Bit(saved), beside));
        qunsetenv("ORRERY_CLI");
        const QString savedPath = qEnvironmentVariable("PATH");
        qputenv("PATH", dir.path().toLocal8Bit());
        const QString found = orrery::core::cliExecutable();
        qputenv("PATH", savedPath.toLocal8Bit());
        qputenv("ORRERY_CLI", saved);
        // The build tree puts test programs beside `orrery`; an install has it on PATH.
        const QFileInfo besideThis(
            QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("orrery")));
        QCOMPARE(found, besideThis.isExecutable() ? besideThis.absoluteFilePath() : beside);
        QVERIFY(found != QCoreApplication::applicationFilePath());
    }

    void namedTrainerThatCannotRunFails()
    {
        const QByteArray saved = qgetenv("ORRERY_TRAINER");
        qputenv("ORRERY_TRAINER", "/nonexistent/orrery-train");
        const Check trainer = find(orrery::core::coreChecks(), QStringLiteral("trainer"));
        qputenv("ORRERY_TRAINER", saved);
        QCOMPARE(trainer.status, Check::Status::Failed);
        QVERIFY(trainer.detail.contains(QStringLiteral("/nonexistent/orrery-train")));
    }

    void remoteAddsLibssh()
    {
        const Check libssh = find(orrery::remote::environmentChecks(), QStringLiteral("libssh"));
        QCOMPARE(libssh.status, Check::Status::Ok);
        QVERIFY2(libssh.detail.startsWith(QStringLiteral("0.1")), qPrintable(libssh.detail));
    }
};

ORRERY_TEST_MAIN(TestDiagnostics, QCoreApplication)
#include "tst_diagnostics.moc"
