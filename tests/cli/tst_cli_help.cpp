// SPDX-License-Identifier: GPL-3.0-or-later
// `orrery --help` against the command table the dispatcher uses: every command and verb of the
// table is in the help and reaches its own handler in the real binary (never "unknown verb"), and
// what is not in the table is refused.
#include "command_table.h"
#include "testsupport.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using orrery::cli::commandTable;

namespace {

using orrery::test::Ran;

Ran runOrrery(const QStringList &args, const QString &db)
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("HOME"), QFileInfo(db).absolutePath());
    env.insert(QStringLiteral("XDG_CONFIG_HOME"), QFileInfo(db).absolutePath() + QStringLiteral("/config"));
    return orrery::test::runProcess(qEnvironmentVariable("ORRERY_CLI"),
                                    QStringList{QStringLiteral("--db"), db} + args, {}, env);
}

}  // namespace

class TestCliHelp : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    QString db() const { return m_dir.filePath(QStringLiteral("store.sqlite")); }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(!qEnvironmentVariable("ORRERY_CLI").isEmpty(), "ORRERY_CLI must name the built orrery");
        QVERIFY(commandTable().size() >= 6);
    }

    void helpListsEveryCommandAndVerbOfTheTable()
    {
        const Ran help = runOrrery({QStringLiteral("--help")}, db());
        QCOMPARE(help.code, 0);
        int verbs = 0;
        for (const auto &c : commandTable()) {
            if (c.verbs.isEmpty())
                QVERIFY2(help.out.contains(QStringLiteral("  ") + c.name + QLatin1Char(' ')),
                         qPrintable(c.name));
            for (const auto &v : c.verbs) {
                const QString row = c.name + QLatin1Char(' ') + v.name;
                QVERIFY2(help.out.contains(row),
                         qPrintable(row + QStringLiteral(" is not in:\n") + help.out));
                ++verbs;
            }
        }
        QVERIFY(verbs >= 20);
        QVERIFY(help.out.contains(QStringLiteral("sweep submit")));  // the verb the first user missed
    }

    void everyVerbOfTheTableReachesItsHandler()
    {
        // A bogus option makes each handler refuse with its own usage error: had the dispatcher not
        // known the verb, it would say "unknown verb" instead.
        const QString bogus = QStringLiteral("--no-such-option-for-the-test");
        for (const auto &c : commandTable()) {
            QList<QStringList> calls;
            if (c.verbs.isEmpty())
                calls.append({c.name, bogus});
            for (const auto &v : c.verbs)
                calls.append({c.name, v.name, bogus});
            for (const QStringList &call : calls) {
                const Ran r = runOrrery(call, db());
                const QString what = call.join(QLatin1Char(' ')) + QStringLiteral(": ") + r.err;
                QVERIFY2(!r.err.contains(QStringLiteral("unknown verb")), qPrintable(what));
                QVERIFY2(!r.err.contains(QStringLiteral("unknown command")), qPrintable(what));
                QVERIFY2(r.code == 2 || r.code == 1, qPrintable(what));
            }
        }
    }

    void whatIsNotInTheTableIsRefused()
    {
        const Ran verb = runOrrery({QStringLiteral("sweep"), QStringLiteral("frobnicate")}, db());
        QCOMPARE(verb.code, 2);
        QVERIFY2(verb.err.contains(QStringLiteral("unknown verb 'frobnicate'")), qPrintable(verb.err));
        QVERIFY(verb.err.contains(QStringLiteral("sweep submit")));  // and says what there is
        const Ran none = runOrrery({QStringLiteral("runs")}, db());
        QCOMPARE(none.code, 2);
        QVERIFY(none.err.contains(QStringLiteral("a verb is needed")));
        const Ran command = runOrrery({QStringLiteral("frobnicate")}, db());
        QCOMPARE(command.code, 2);
        QVERIFY(command.err.contains(QStringLiteral("unknown command 'frobnicate'")));
    }

    void helpCommandEqualsCommandHelp()
    {
        for (const auto &c : commandTable()) {
            const Ran a = runOrrery({QStringLiteral("help"), c.name}, db());
            const Ran b = runOrrery({c.name, QStringLiteral("--help")}, db());
            QCOMPARE(a.code, 0);
            QCOMPARE(b.code, 0);
            QVERIFY2(!a.out.isEmpty(), qPrintable(c.name));
            QCOMPARE(a.out, b.out);
        }
        const Ran sweep = runOrrery({QStringLiteral("help"), QStringLiteral("sweep")}, db());
        QVERIFY(sweep.out.contains(QStringLiteral("submit FILE")));
    }
};

QTEST_GUILESS_MAIN(TestCliHelp)
#include "tst_cli_help.moc"
