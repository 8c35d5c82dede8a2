// SPDX-License-Identifier: GPL-3.0-or-later
// remote::shellQuote / commandLine: pinned outputs, and every hostile string passed through a
// real /bin/sh comes back as exactly one argument, byte for byte, with nothing executed.
#include "testsupport.h"

#include "orrery/remote/shell.h"

#include <QCoreApplication>
#include <QFile>
#include <QProcess>
#include <QTemporaryFile>

using orrery::remote::commandLine;
using orrery::remote::shellQuote;

class TestShell : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void quote_data()
    {
        QTest::addColumn<QByteArray>("input");
        QTest::addColumn<QByteArray>("expected");
        QTest::newRow("plain") << QByteArray("abc") << QByteArray("'abc'");
        QTest::newRow("empty") << QByteArray() << QByteArray("''");
        QTest::newRow("single-quote") << QByteArray("it's") << QByteArray("'it'\\''s'");
        QTest::newRow("dollar-paren") << QByteArray("$(x)") << QByteArray("'$(x)'");
        QTest::newRow("newline") << QByteArray("a\nb") << QByteArray("'a\nb'");
    }
    void quote()
    {
        QFETCH(QByteArray, input);
        QFETCH(QByteArray, expected);
        QCOMPARE(shellQuote(input), expected);
    }

    void nulByteIsRefused()
    {
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, shellQuote(QByteArray("a\0b", 3)));
    }

    void joinsArguments()
    {
        QCOMPARE(commandLine(QStringList{QStringLiteral("sbatch"), QStringLiteral("--wrap"),
                                         QStringLiteral("echo hi")}),
                 QByteArray("'sbatch' '--wrap' 'echo hi'"));
    }

    // The real thing: /bin/sh -c "<our line>" must print each argument back unchanged.
    void hostileStringsSurviveARealShell()
    {
        const QString canary = QStringLiteral("/tmp/orrery-pwned");
        QFile::remove(canary);
        const QList<QByteArray> hostile = orrery::test::hostileArguments();
        QList<QByteArray> argv{QByteArray("printf"), QByteArray("[%s]\\0")};
        argv += hostile;
        // Through a script file, not `sh -c`: QProcess would re-encode non-UTF-8 bytes in argv.
        QTemporaryFile script;
        QVERIFY(script.open());
        script.write(commandLine(argv) + '\n');
        script.close();
        QProcess sh;
        sh.start(QStringLiteral("/bin/sh"), {script.fileName()});
        QVERIFY(sh.waitForFinished(10'000));
        QCOMPARE(sh.exitCode(), 0);
        QList<QByteArray> got = sh.readAllStandardOutput().split('\0');
        QCOMPARE(got.takeLast(), QByteArray());  // after the last NUL
        QCOMPARE(got.size(), hostile.size());
        for (qsizetype i = 0; i < hostile.size(); ++i)
            QCOMPARE(got[i], QByteArray('[' + hostile[i] + ']'));
        QVERIFY2(!QFile::exists(canary), "a hostile argument ran a command");
    }
};

ORRERY_TEST_MAIN(TestShell, QCoreApplication)
#include "tst_shell.moc"
